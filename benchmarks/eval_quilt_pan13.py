"""Quilted pages on real text: the quilt jobs against the brute-force reference on PAN13,
in all three foreign modes, and the sources they find against PAN's known sources.
The quilt line of docs/quality.md.

Run from the repository root (~3 minutes on a busy 2-core machine, mostly the quadratic
reference; ``--no-reference`` for all 153 suspicious documents: jobs only)::

    PYTHONPATH=.:plugins .venv/bin/python benchmarks/eval_quilt_pan13.py [--suspicious 20] [--distractors 100] [--no-reference]

Corpus: ``../shared/data/pan13-text-alignment-no-obfuscation-subset`` (the script stops with
a message when it is absent): suspicious documents into which passages of 1-15 source
documents were pasted verbatim (``pairs_02_no_obfuscation.txt`` names them: the truth).
Taken: the first ``--suspicious`` suspicious documents by name, every source document they
copy from, and ``--distractors`` other source documents (the first by name), each read into
words as parse does (``spamflow.words.words``).

Servers, so that the three foreign modes give different answers: every document is on its
own registered domain, except that for every second suspicious document (0th, 2nd, ...)
its first true source sits on the suspicious document's own domain (a site quoting
itself, the paper's blog home page case); every domain shares its IP address with one other
domain, and for the other suspicious documents (1st, 3rd, ...) the first true source's
domain is that partner (one server, two domains: the paper's Hartnell College case).  So
``foreign: domain`` must drop the first kind of source and ``foreign: ip`` both.

Per parameter set and foreign mode it prints: whether the jobs' quilts equal the reference's
record by record (doc, n_grams, n_patch_grams, every source with its grams), the quilted
pages, and the (suspicious, source) pairs found against PAN's truth: recall over the true
pairs the mode allows, the share of found sources that are true ones, and what the other
sources are (other suspicious documents, sources of other suspicious documents, distractors).  Parameter sets:
Najork's pivot (5, 50, 4, 0.5), which PAN's documents (at most 41 % copied) cannot meet,
and a setting for partial reuse (5, 50, 1, 0.05) with and without phi = 0.05 (each source
must newly cover 5 % of the page's patch grams).
"""

from __future__ import annotations

import argparse
import sys
import tarfile
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "plugins"), str(REPO / "tests")]

from spamflow_quilt.detector import find_quilts  # noqa: E402
from spamflow_quilt.params import QuiltParams  # noqa: E402
from spamflow_quilt.shingle import gram_hashes, shingle_line  # noqa: E402

from spamflow.words import words  # noqa: E402

from quilt_reference import reference_quilts  # noqa: E402

PAN13 = REPO.parent / "shared" / "data" / "pan13-text-alignment-no-obfuscation-subset" / "pan13-02-subset.tar.gz"
PARAMS = [  # (label, k, m, c, theta, phi)
    ("pivot (5, 50, 4, 0.5)", 5, 50, 4, 0.5, None),
    ("partial reuse (5, 50, 1, 0.05)", 5, 50, 1, 0.05, None),
    ("partial reuse, phi 0.05", 5, 50, 1, 0.05, 0.05),
]


def read_pan13() -> tuple[dict[str, str], dict[str, str], list[tuple[str, str]]]:
    """(suspicious name -> text, source name -> text, truth pairs (suspicious, source))."""
    if not PAN13.exists():
        raise SystemExit(f"needs ../shared/data: {PAN13} is missing")
    susp, src, pairs = {}, {}, []
    with tarfile.open(PAN13) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            parts = member.name.split("/")
            data = tar.extractfile(member).read()
            if parts[-2] == "susp":
                susp[parts[-1]] = data.decode("utf-8", "replace")
            elif parts[-2] == "src":
                src[parts[-1]] = data.decode("utf-8", "replace")
            elif parts[-1] == "pairs_02_no_obfuscation.txt":
                pairs = [tuple(line.split()) for line in data.decode().splitlines() if line.strip()]
    return susp, src, pairs


def build_corpus(n_susp: int, n_distractors: int) -> tuple[list[dict], set[tuple[int, int]], set[tuple[int, int]],
                                                             set[tuple[int, int]]]:
    """Pages, and the true (suspicious doc_id, source doc_id) pairs: all of them, those on
    another domain, those on another IP."""
    susp, src, pairs = read_pan13()
    chosen = sorted(susp)[:n_susp]
    truth = {s: sorted(d for s2, d in pairs if s2 == s and d in src) for s in chosen}
    true_sources = sorted({d for ds in truth.values() for d in ds})
    others = [d for d in sorted(src) if d not in set(true_sources)][:n_distractors]
    names = chosen + true_sources + others
    doc_id = {name: i + 1 for i, name in enumerate(names)}  # ties in the cover go to the smaller id
    domain = {name: f"site{i}.example" for i, name in enumerate(names)}
    partner: dict[str, str] = {}  # domain -> the domain sharing its IP
    for i, s in enumerate(chosen):
        first = truth[s][0]
        if i % 2 == 0:
            domain[first] = domain[s]  # the source on the quilt's own domain
        else:
            partner[domain[s]], partner[domain[first]] = domain[first], domain[s]
    lone = sorted({d for d in domain.values() if d not in partner})
    for a, b in zip(lone[::2], lone[1::2]):  # the rest in pairs too
        partner[a], partner[b] = b, a
    ip_of: dict[str, str] = {}
    for d in sorted(set(domain.values())):
        if d not in ip_of:
            n = len(set(ip_of.values()))
            ip = f"10.{n // 65536}.{n // 256 % 256}.{n % 256}"
            ip_of[d] = ip
            if d in partner:
                ip_of[partner[d]] = ip
    text = {**susp, **src}
    pages = [{"doc_id": doc_id[n], "url": f"http://{domain[n]}/{n}", "words": words(text[n]),
              "domain": domain[n], "ip": ip_of[domain[n]], "links": []} for n in names]
    all_pairs = {(doc_id[s], doc_id[d]) for s, ds in truth.items() for d in ds}
    other_domain = {(a, b) for a, b in all_pairs if pages[a - 1]["domain"] != pages[b - 1]["domain"]}
    other_ip = {(a, b) for a, b in all_pairs if pages[a - 1]["ip"] != pages[b - 1]["ip"]}
    return pages, all_pairs, other_domain, other_ip


def kind_of(pages: list[dict], doc_id: int, n_susp: int, n_distractors: int) -> str:
    """Pages are suspicious documents, then true sources, then distractors, doc_id from 1."""
    if doc_id <= n_susp:
        return "suspicious"
    return "distractor" if doc_id > len(pages) - n_distractors else "source"


def jobs(pages: list[dict], qp: QuiltParams, work: Path, runner: str) -> list[dict]:
    work.mkdir(parents=True)
    shingles = work / "shingles.tsv"
    with open(shingles, "wb") as fh:
        for i, p in enumerate(pages):
            fh.write(shingle_line(i, p["doc_id"], gram_hashes(p["words"], qp.k), p["domain"], p["ip"]) + b"\n")
    found = find_quilts(shingles, work, qp, runner)
    return [{"doc_id": d, "n_grams": c["n_grams"], "n_patch_grams": c["n_patch_grams"],
             "sources": [tuple(s) for s in c["sources"]]} for d, c in found]


def reference(pages: list[dict], qp: QuiltParams) -> list[dict]:
    return [{"doc_id": q["doc_id"], "n_grams": q["n_grams"], "n_patch_grams": q["n_patch_grams"],
             "sources": [(s["doc_id"], s["grams"]) for s in q["sources"]]}
            for q in reference_quilts(pages, qp.k, qp.m, qp.c, qp.theta, qp.foreign, qp.phi)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--suspicious", type=int, default=20, help="suspicious documents taken (of 153)")
    ap.add_argument("--distractors", type=int, default=100, help="other source documents taken (of ~1,500)")
    ap.add_argument("--runner", default="inline", help="mrjob runner of the jobs: inline or local")
    ap.add_argument("--no-reference", action="store_true",
                    help="skip the brute-force reference (quadratic): source recall on more documents")
    a = ap.parse_args()
    t0 = time.time()
    pages, all_pairs, other_domain, other_ip = build_corpus(a.suspicious, a.distractors)
    n_susp = len({s for s, _ in all_pairs})
    print(f"{len(pages)} documents ({n_susp} suspicious, {len(pages) - n_susp - a.distractors} true sources, "
          f"{a.distractors} distractors), {sum(len(p['words']) for p in pages):,} words, "
          f"{len(all_pairs)} true pairs ({len(other_domain)} across domains, {len(other_ip)} across IPs); "
          f"read in {time.time() - t0:.0f} s")
    allowed = {"none": all_pairs, "domain": other_domain, "ip": other_ip}
    print(f"{'parameters':32} {'foreign':8} {'= reference':12} {'quilted':>7} {'of them susp.':>13} "
          f"{'true pairs found':>17} {'their sources true':>19} {'jobs s':>7} {'ref s':>6}")
    exact_all = True
    with tempfile.TemporaryDirectory() as tmp:
        for label, k, m, c, theta, phi in PARAMS:
            for foreign in ("none", "domain", "ip"):
                qp = QuiltParams(k=k, m=m, c=c, theta=theta, foreign=foreign, phi=phi)
                t = time.time()
                ours = jobs(pages, qp, Path(tmp) / f"{label}-{foreign}".replace(" ", "_"), a.runner)
                t_jobs = time.time() - t
                t = time.time()
                ref = None if a.no_reference else reference(pages, qp)
                t_ref = time.time() - t
                exact = ref is None or ours == ref
                exact_all &= exact
                suspicious = {s for s, _ in all_pairs}
                found = {(q["doc_id"], s) for q in ours if q["doc_id"] in suspicious for s, _ in q["sources"]}
                want = allowed[foreign]
                hit = found & want
                kinds = Counter(kind_of(pages, s, n_susp, a.distractors) for _, s in found - want)
                print(f"{label:32} {foreign:8} {('-' if ref is None else 'yes' if exact else 'NO'):12} {len(ours):7d} "
                      f"{sum(q['doc_id'] in suspicious for q in ours):13d} "
                      f"{len(hit):6d}/{len(want):4d} = {len(hit) / len(want):.2f} "
                      f"{len(hit):6d}/{len(found):5d} = {(len(hit) / len(found) if found else 0):.2f} "
                      f"{t_jobs:7.1f} {t_ref:6.1f}   {kinds['suspicious']:5d} {kinds['source']:5d} "
                      f"{kinds['distractor']:5d}")
    verdict = "not checked" if a.no_reference else "yes" if exact_all else "NO"
    print(f"jobs equal the reference in every row: {verdict} ({time.time() - t0:.0f} s)")
    if not exact_all:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
