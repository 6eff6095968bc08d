"""Stop words, stemming and query-term lists: the few language resources the content
features need, each from a maintained library or a shipped file with provenance.

* stop words: scikit-learn's ``ENGLISH_STOP_WORDS`` (the Glasgow IR group list, BSD), standing
  in for the Onix list the paper cites, whose licence is not stated;
* stemming: Porter's algorithm as the paper says, from PyStemmer (Snowball's C stemmers);
* query terms: one term per line, most popular first (``data/query_terms.txt`` by default,
  see ``data/PROVENANCE.md``).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from importlib import resources
from pathlib import Path

import pyarrow as pa
import Stemmer


def _english_stop_words() -> frozenset[str]:
    """scikit-learn's ``ENGLISH_STOP_WORDS``, read from its own module file without importing
    the ``sklearn`` package (~1 s, paid again in each task process of a MapReduce job); the
    package import when that file is not there as a plain file (a zipped install) or holds no
    such list."""
    spec = importlib.util.find_spec("sklearn")
    origin = Path(spec.origin).parent / "feature_extraction" / "_stop_words.py" if spec and spec.origin else None
    if origin is not None and origin.is_file():
        for node in ast.parse(origin.read_text(encoding="utf-8")).body:  # ENGLISH_STOP_WORDS = frozenset([...])
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.value.args
                    and [getattr(t, "id", None) for t in node.targets] == ["ENGLISH_STOP_WORDS"]):
                return frozenset(ast.literal_eval(node.value.args[0]))
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS
    return frozenset(ENGLISH_STOP_WORDS)


STOP_WORDS: frozenset[str] = _english_stop_words()

STOP_WORDS_ARRAY = pa.array(sorted(STOP_WORDS), pa.string())
"""The stop words as an Arrow array, the value set of ``pc.is_in`` filters."""
DEFAULT_QUERY_TERMS = "data/query_terms.txt"


@functools.cache
def _porter() -> Stemmer.Stemmer:
    """PyStemmer's Porter stemmer without its cache (``maxCacheSize=0``).  Callers stem each
    batch's distinct words once, so the cache (10,000 words by default) mostly missed, and
    keeping it trimmed cost more than stemming: 4.15 against 0.73 CPU s for 60 batches of
    ~49,000 distinct words (``bench_scale.py``'s 10^5 web); at 10^6 pages stemming was the
    stage's largest part (690 of 1,480 CPU s).  The stems are the same."""
    return Stemmer.Stemmer("porter", 0)


def stem_words(words: list[str]) -> list[str]:
    """Porter stems of ``words``, in order.

    >>> stem_words(["running", "ponies", "casinos"])
    ['run', 'poni', 'casino']
    """
    return list(_porter().stemWords(words))


def load_query_terms(path: str | None) -> list[str]:
    """Query terms, most popular first, stop words and repeats dropped (they are never
    counted in a page's precision denominator, so they could only add noise).

    ``path`` None means the list shipped with the plugin.  Lines are lower-cased and stripped;
    blank lines and lines starting with ``#`` are ignored; a term with a space is kept whole
    and so never matches a single word (the measures compare words).
    """
    if path is None:
        text = resources.files("spamflow_content").joinpath(DEFAULT_QUERY_TERMS).read_text(encoding="utf-8")
        source = f"spamflow_content/{DEFAULT_QUERY_TERMS}"
    else:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"detectors.content.query_terms: cannot read {path}: {exc}") from exc
        source = path
    terms: list[str] = []
    seen: set[str] = set()
    for line in text.splitlines():
        term = line.strip().lower()
        if not term or term.startswith("#") or term in STOP_WORDS or term in seen:
            continue
        seen.add(term)
        terms.append(term)
    if not terms:
        raise ValueError(f"detectors.content.query_terms: {source} has no terms "
                         "(one term per line, most popular first)")
    return terms
