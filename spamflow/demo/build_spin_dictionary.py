"""Build ``texts/spin-dictionary.txt`` from Moby Thesaurus II, restricted to the campaign article.

Not run at demo time; the output is shipped.  Spinner tools use a synonym file with one
``head|syn1|syn2|...`` group per line (heads may be phrases).  Moby lists "synonyms and
related terms" and is far looser than a spinner's dictionary, so we keep only:

* heads (words or phrases) that occur in the article and are not function words
  (those stay immutable, as in real spinner dictionaries, which is what DSpin exploits);
* synonyms that are *mutual* in Moby (each lists the other), plain lower-case words or
  phrases of at most three words, ranked by how many Moby neighbours they share with the
  head (a cheap synonymy score), at most ``MAX_SYNS`` per head.

Usage: ``python -m spamflow.demo.build_spin_dictionary /work/shared/data/moby-thesaurus/mthesaur_words.txt.gz``
"""

from __future__ import annotations

import argparse
import gzip
import re
from importlib import resources
from pathlib import Path

MAX_SYNS = 5
MAX_PHRASE_WORDS = 3
SYN_RE = re.compile(r"^[a-z]+(?:[ -][a-z]+)*$")
FUNCTION_WORDS = set(
    """
a an the and or but nor so yet of to in on at by for with from into upon than as that this these
those which who whom whose what it its he him his she her they them their we us our you your i me my
be is was were been being are am had has have having do did does not no any some each every all
there here then when where while if though although because too very more most own such only also
""".split()
)


def load_moby(path: Path) -> dict[str, list[str]]:
    thes: dict[str, list[str]] = {}
    with gzip.open(path, "rt", encoding="latin-1") as f:
        for line in f:
            parts = [p.strip() for p in line.rstrip("\r\n").split(",")]
            if parts and parts[0]:
                thes.setdefault(parts[0].lower(), []).extend(p.lower() for p in parts[1:] if p)
    return thes


def article_tokens() -> list[str]:
    text = resources.files("spamflow.demo").joinpath("texts/spin-article.txt").read_text("utf-8")
    return [t.lower() for t in re.findall(r"[A-Za-z]+(?:['-][A-Za-z]+)*", text)]


def build(moby: Path) -> list[str]:
    thes = load_moby(moby)
    sets = {k: set(v) for k, v in thes.items()}
    toks = article_tokens()
    heads: set[str] = set()
    for n in range(1, MAX_PHRASE_WORDS + 1):
        for i in range(len(toks) - n + 1):
            phrase = " ".join(toks[i : i + n])
            if phrase in thes and not (n == 1 and phrase in FUNCTION_WORDS):
                heads.add(phrase)
    lines = []
    for head in sorted(heads):
        syns = spinner_synonyms(head, thes, sets)
        if syns:
            lines.append("|".join([head] + syns))
    return lines


def spinner_synonyms(head: str, thes: dict[str, list[str]], sets: dict[str, set[str]]) -> list[str]:
    """The synonyms a spinner's dictionary gets for ``head``: mutual Moby synonyms of at most
    MAX_PHRASE_WORDS words that are not function words, the MAX_SYNS sharing most Moby
    neighbours with the head first (ties alphabetical)."""
    cands = []
    for syn in dict.fromkeys(thes[head]):
        if syn == head or not SYN_RE.match(syn) or len(syn.split()) > MAX_PHRASE_WORDS:
            continue
        if syn in FUNCTION_WORDS or head not in sets.get(syn, ()):
            continue
        cands.append((-len(sets[head] & sets[syn]), syn))
    return [syn for _, syn in sorted(cands)[:MAX_SYNS]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("moby", type=Path, help="mthesaur_words.txt.gz (Moby Thesaurus II)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "texts" / "spin-dictionary.txt")
    a = ap.parse_args()
    lines = build(a.moby)
    a.out.write_text("\n".join(lines) + "\n", "utf-8")
    print(f"{len(lines)} heads written to {a.out}")


if __name__ == "__main__":
    main()
