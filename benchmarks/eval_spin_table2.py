"""DSpin's Table II on real text: similarity of spun pairs and of negatives, and what the
spin detector's thresholds catch.

Run from the repository root (needs ``../shared/data``; about 4 minutes)::

    .venv/bin/python benchmarks/eval_spin_table2.py
    .venv/bin/python benchmarks/eval_spin_table2.py --articles 10 --copies 3

1. **Base texts**: the first ``--articles`` PAN13 source documents of 300-900 words.
2. **Spinning** (``benchmarks/spinning.py``, not the detector): each text ``--copies`` times
   at each TBS frequency (every 4th word, 3rd, every other, all) with a Moby-derived spinner
   dictionary.  Spun pairs: (original, copy) and (copy, copy) of one text and one frequency.
3. **Negatives**: *unrelated* (pairs of different originals); *same topic* (Clough-Stevenson
   answers written independently, ``non``, to the same question, and each against its
   Wikipedia source); *partial reuse* (PAN13 suspicious documents against the source
   documents they copy passages from, 100 pairs; Clough-Stevenson ``heavy`` and ``light``
   revisions against their source).
4. **Detection** with a *different* dictionary (MyThes, WordNet-derived) and, as the paper's
   control experiment, with the spinning dictionary itself.  For each group: mean 4-gram
   shingle Jaccard (the paper's baseline), mean immutable Jaccard, mean mutable-verifier
   overlap, and the share of pairs flagged as spun for several (immutable, verifier)
   thresholds, a sweep of the verifier at t = 0.6 among them: recall for spun pairs,
   false-positive rate for negatives.
"""

from __future__ import annotations

import argparse
import csv
import io
import random
import sys
import tarfile
import tempfile
import time
from itertools import combinations
from pathlib import Path
from statistics import mean

sys.path.insert(0, str(Path(__file__).parent))

from spinning import moby_spin_dictionary, mythes_dictionary_lines, spin_words, spinner_lines  # noqa: E402

from spamflow.words import words  # noqa: E402
from spamflow_spin.dictionary import SynonymDictionary, load_dictionary  # noqa: E402
from spamflow_spin.partition import Partition, partition  # noqa: E402
from spamflow_spin.similarity import jaccard, shingle_jaccard  # noqa: E402
from spamflow_spin.verifier import mutable_overlap  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
RATES = {"4th": 4, "3rd": 3, "other": 2, "all": 1}
SETTINGS = ((0.5, 0.7), (0.6, 0.7), (0.6, 0.6), (0.6, 0.55), (0.6, 0.5), (0.6, 0.45), (0.6, 0.4), (0.6, 0.0),
            (0.7, 0.5))
"""(immutable threshold, verifier threshold) pairs reported: a sweep of the verifier at the
default immutable threshold, and its neighbours; verifier 0 = immutables alone."""


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


def pan13(n_articles: int, n_reuse: int) -> tuple[list[list[str]], list[tuple[list[str], list[str]]]]:
    """Base texts (source documents) and (suspicious, source) partial-reuse pairs."""
    with tarfile.open(DATA / "pan13-text-alignment-no-obfuscation-subset" / "pan13-02-subset.tar.gz") as tar:
        files = {m.name.split("/", 1)[1]: m for m in tar.getmembers() if m.isfile()}

        def read(name: str) -> list[str]:
            fh = tar.extractfile(files[name])
            assert fh is not None
            return words(_decode(fh.read()))

        bases = []
        for name in sorted(n for n in files if n.startswith("src/")):
            text = read(name)
            if 300 <= len(text) <= 900:
                bases.append(text)
            if len(bases) == n_articles:
                break
        pairs_fh = tar.extractfile(files["pairs_02_no_obfuscation.txt"])
        assert pairs_fh is not None
        listed = [line.split() for line in pairs_fh.read().decode().splitlines() if line.strip()][:n_reuse]
        reuse = [(read(f"susp/{s}"), read(f"src/{r}")) for s, r in listed]
    return bases, reuse


def clough() -> dict[str, list[tuple[list[str], list[str]]]]:
    """Same-topic independent pairs and revision pairs of the Clough-Stevenson corpus."""
    folder = DATA / "clough-stevenson-plagiarism-corpus"
    rows = list(csv.DictReader(io.StringIO((folder / "file_list.csv").read_text())))
    with tarfile.open(folder / "corpus-20090418.tar.gz") as tar:
        texts = {}
        for m in tar.getmembers():
            fh = tar.extractfile(m) if m.isfile() and m.name.endswith(".txt") else None
            if fh is not None:
                texts[m.name.rsplit("/", 1)[1]] = words(_decode(fh.read()))
    out: dict[str, list[tuple[list[str], list[str]]]] = {"same topic": [], "heavy revision": [],
                                                          "light revision": []}
    for task in "abcde":
        source = texts[f"orig_task{task}.txt"]
        non = [texts[r["File"]] for r in rows if r["Task"] == task and r["Category"] == "non"]
        out["same topic"] += list(combinations(non, 2)) + [(t, source) for t in non]
        for category in ("heavy", "light"):
            out[f"{category} revision"] += [(texts[r["File"]], source) for r in rows
                                             if r["Task"] == task and r["Category"] == category]
    return out


def scores(pairs: list[tuple[list[str], list[str]]], d: SynonymDictionary) -> list[tuple[float, float, float]]:
    """(shingle Jaccard, immutable Jaccard, mutable overlap) per pair."""
    cache: dict[int, Partition] = {}

    def part(text: list[str]) -> Partition:
        if id(text) not in cache:
            cache[id(text)] = partition(text, d)
        return cache[id(text)]

    out = []
    for a, b in pairs:
        pa, pb = part(a), part(b)
        out.append((shingle_jaccard(a, b, 4), jaccard(set(pa.immutables), set(pb.immutables)),
                    mutable_overlap(pa.mutables, pb.mutables, d)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--articles", type=int, default=20)
    ap.add_argument("--copies", type=int, default=5)
    ap.add_argument("--reuse-pairs", type=int, default=100)
    a = ap.parse_args()
    if not DATA.exists():
        sys.exit(f"needs {DATA} (the shared real-data folder beside the repo); it is absent here")
    t0 = time.time()
    bases, reuse = pan13(a.articles, a.reuse_pairs)
    negatives = {"unrelated": list(combinations(bases, 2)), **clough(), "partial reuse (PAN13)": reuse}
    vocabulary = {w for text in bases for w in text}
    spinner = moby_spin_dictionary(DATA / "moby-thesaurus" / "mthesaur_words.txt.gz", vocabulary)
    rng = random.Random(0)
    spun: dict[str, list[tuple[list[str], list[str]]]] = {}
    for rate, every in RATES.items():
        spun[rate] = []
        for text in bases:
            group = [text] + [spin_words(text, spinner, every, rng) for _ in range(a.copies)]
            spun[rate] += list(combinations(group, 2))
    with tempfile.TemporaryDirectory() as tmp:
        same_path = Path(tmp) / "spinner.txt"
        same_path.write_text("\n".join(spinner_lines(spinner)) + "\n", encoding="utf-8")
        mythes_path = Path(tmp) / "mythes.txt"
        mythes_path.write_text("\n".join(mythes_dictionary_lines(DATA / "mythes-en-us" / "th_en_US_v2.dat.gz"))
                               + "\n", encoding="utf-8")
        dictionaries = {"different dictionary (MyThes)": load_dictionary([mythes_path]),
                        "same dictionary (the spinner's)": load_dictionary([same_path])}
    print(f"{len(bases)} PAN13 source texts ({mean(map(len, bases)):.0f} words on average), {a.copies} copies per "
          f"frequency; spinner dictionary: {len(spinner)} heads (Moby)")
    for name, d in dictionaries.items():
        print(f"\n## Detection with the {name}: {len(d.heads)} heads, {len(d)} entries\n")
        groups = {**{f"spun, every {r}": p for r, p in spun.items()}, **negatives}
        results = {g: scores(p, d) for g, p in groups.items()}
        print("Mean similarity (Table II), and the range of the immutable Jaccard:\n")
        print("| pairs | n | shingles (4-gram) | immutables | mutables | immutables min-max | mutables min-max |")
        print("| --- " * 7 + "|")
        for g, rs in results.items():
            print(f"| {g} | {len(rs)} | {mean(r[0] for r in rs):.1%} | {mean(r[1] for r in rs):.1%} | "
                  f"{mean(r[2] for r in rs):.1%} | {min(r[1] for r in rs):.0%}-{max(r[1] for r in rs):.0%} | "
                  f"{min(r[2] for r in rs):.0%}-{max(r[2] for r in rs):.0%} |")
        print("\nShare of pairs flagged as spun (immutable Jaccard >= t and verifier >= v): recall for the "
              "spun rows, false-positive rate for the others:\n")
        print("| pairs | " + " | ".join(f"t={t} v={v}" for t, v in SETTINGS) + " |")
        print("| --- " * (1 + len(SETTINGS)) + "|")
        for g, rs in results.items():
            flagged = [sum(ij >= t and mo >= v for _, ij, mo in rs) / len(rs) for t, v in SETTINGS]
            print(f"| {g} | " + " | ".join(f"{f:.1%}" for f in flagged) + " |")
    print(f"\n{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
