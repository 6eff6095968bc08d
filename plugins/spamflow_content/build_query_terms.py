"""Rebuild ``data/query_terms.txt``, the default query-term list, from the wordfreq package.

No openly licensed web-search query log of useful size can be shipped (the paper used a
proprietary one), so the default list is the 1,000 most frequent English words of wordfreq
(Robyn Speer et al.; data CC BY-SA 4.0, from Wikipedia, subtitles, news, books, web text,
Reddit and Twitter) that are not stop words and are made of letters only.  It is a stand-in
for "popular terms": give your own query log with ``query_terms``.  wordfreq is not a
dependency of spamflow; install it to rebuild: ``pip install wordfreq==3.1.1``.

    python -m spamflow_content.build_query_terms plugins/spamflow_content/data/query_terms.txt
"""

from __future__ import annotations

import sys
from pathlib import Path

from spamflow_content.text import STOP_WORDS

SIZE = 1000


def build(size: int = SIZE) -> list[str]:
    import wordfreq

    terms = []
    for word in wordfreq.top_n_list("en", 20 * size):
        if word.isalpha() and word.isascii() and len(word) > 1 and word not in STOP_WORDS:
            terms.append(word)
            if len(terms) == size:
                break
    return terms


def main(argv: list[str]) -> int:
    import wordfreq

    out = Path(argv[0])
    header = (f"# spamflow default query terms: the {SIZE} most frequent English words of wordfreq "
              f"{getattr(wordfreq, '__version__', '3.1.1')} that are not stop words; see PROVENANCE.md. "
              "Licence: CC BY-SA 4.0.\n")
    out.write_text(header + "".join(t + "\n" for t in build()), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
