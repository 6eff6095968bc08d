"""The quilt detector: its MapReduce jobs against a brute-force reference of Najork's
Section 2/3 definitions, on random corpora, on the inline and local runners."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from spamflow_quilt.copies import WINDOW_PAGES, CopyWindow
from spamflow_quilt.cover import greedy_cover, greedy_cover_arrays
from spamflow_quilt.detector import combiner_pays, find_quilts
from spamflow_quilt.mr_gram_df import MRGramDocumentFrequency
from spamflow_quilt.params import QuiltParams
from spamflow_quilt.shingle import add_page, batch_gram_hashes, gram_hashes, shingle_line

from quilt_reference import grams, reference_quilts


def random_corpus(seed: int, n: int = 40) -> list[dict]:
    """Pages built from a few stock passages (so grams repeat), with exact duplicates,
    empty and short pages, a phrase in more than m pages, and pages without an IP."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(25)]
    passages = [[rng.choice(vocab) for _ in range(rng.randint(6, 14))] for _ in range(12)]
    common = ["the", "same", "words", "on", "every", "page", "here"]
    pages = []
    for i in range(n):
        kind = rng.random()
        if kind < 0.08:
            words = []
        elif kind < 0.15:
            words = [rng.choice(vocab) for _ in range(rng.randint(1, 3))]
        elif kind < 0.25 and pages:
            words = list(rng.choice(pages)["words"])  # an exact duplicate
        else:
            words = []
            for _ in range(rng.randint(1, 5)):
                words += rng.choice(passages) if rng.random() < 0.7 else [rng.choice(vocab) for _ in range(5)]
            if rng.random() < 0.6:
                words += common
        doc_id = rng.randrange(1, 2**62)
        pages.append({"doc_id": doc_id, "url": f"http://h{i % 7}.d{i % 5}.example/{i}", "words": words,
                      "domain": f"d{i % 5}.example", "ip": None if i % 9 == 0 else f"127.0.0.{i % 4}",
                      "links": []})
    return pages


def _shingles(pages: list[dict], k: int, path: Path, window: int | None = WINDOW_PAGES) -> Path:
    """The shingle file write_shingles writes: copies collapsed within windows of ``window``
    pages (the default: all of them), or, with ``window=None``, one line per page."""
    with open(path, "wb") as fh:
        if window is None:
            for i, p in enumerate(pages):
                fh.write(shingle_line(i, p["doc_id"], gram_hashes(p["words"], k), p["domain"], p["ip"]) + b"\n")
            return path
        lines = CopyWindow(fh, path.with_name(path.name + ".scratch"), window_pages=window)
        for p in pages:
            add_page(lines, p["doc_id"], gram_hashes(p["words"], k), p["domain"], p["ip"])
        lines.close()
    return path


def _mr(pages, tmp_path, runner="inline", buckets=None, flush_rows=None, window=WINDOW_PAGES, combiner=None,
        one_job=True, **params):
    """find_quilts' quilts: the three jobs as one job's steps (the stage's), or (``one_job=False``)
    three jobs (a parameter sweep's)."""
    qp = QuiltParams(**params)
    work = tmp_path / (f"work-{runner}-{buckets}-{flush_rows}-{window}-{one_job}-"
                       f"{abs(hash(json.dumps(params, sort_keys=True)))}")
    work.mkdir()
    found = find_quilts(_shingles(pages, qp.k, work / "shingles.tsv", window), work, qp, runner,
                        buckets=buckets, flush_rows=flush_rows, combiner=combiner, one_job=one_job)
    return [{"doc_id": d, "n_grams": c["n_grams"], "n_patch_grams": c["n_patch_grams"],
             "sources": [tuple(s) for s in c["sources"]]} for d, c in found]


def _ref(pages, **params):
    qp = QuiltParams(**params)
    return [{"doc_id": q["doc_id"], "n_grams": q["n_grams"], "n_patch_grams": q["n_patch_grams"],
             "sources": [(s["doc_id"], s["grams"]) for s in q["sources"]]}
            for q in reference_quilts(pages, qp.k, qp.m, qp.c, qp.theta, qp.foreign, qp.phi)]


PARAMS = [
    {"k": 3, "m": 5, "c": 2, "theta": 0.5},
    {"k": 2, "m": 8, "c": 3, "theta": 0.3},
    {"k": 4, "m": 3, "c": 1, "theta": 0.0},
    {"k": 3, "m": 50, "c": 2, "theta": 0.8},
    {"k": 3, "m": 6, "c": 2, "theta": 0.4, "phi": 0.2},
]


@pytest.mark.parametrize("foreign", ["none", "domain", "ip"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mapreduce_equals_the_brute_force_reference_inline(tmp_path, seed, foreign):
    pages = random_corpus(seed)
    found_any = 0
    for params in PARAMS:
        expected = _ref(pages, foreign=foreign, **params)
        assert _mr(pages, tmp_path, foreign=foreign, **params) == expected, params
        assert _mr(pages, tmp_path, foreign=foreign, one_job=False, **params) == expected, params
        found_any += len(expected)
    assert found_any > 0  # the corpora do contain quilts


@pytest.mark.slow
def test_mapreduce_equals_the_reference_on_the_local_runner(tmp_path):
    """Across task processes and a real sort, with foreign: ip (the field no other local-runner
    test reads); foreign: domain on the local runner is in test_mr_keyed_sort and
    test_mr_compact, and every mode against the reference in the inline test above."""
    pages = random_corpus(7, n=30)
    params = {"k": 3, "m": 5, "c": 2, "theta": 0.4, "foreign": "ip"}
    expected = _ref(pages, **params)
    assert expected
    assert _mr(pages, tmp_path, runner="local", **params) == expected


@pytest.mark.parametrize(("buckets", "flush_rows"), [(1, None), (2, 3), (5, 1), (64, 7)])
def test_result_does_not_depend_on_how_records_are_batched(tmp_path, buckets, flush_rows):
    """Buckets and mapper flushes only batch rows into records: one bucket, a flush after
    every page, and more buckets than grams all give the reference's answer."""
    pages = random_corpus(4)
    for foreign in ("none", "ip"):
        params = {"k": 3, "m": 6, "c": 2, "theta": 0.4, "foreign": foreign}
        expected = _ref(pages, **params)
        assert expected
        for one_job in (True, False):
            assert _mr(pages, tmp_path, buckets=buckets, flush_rows=flush_rows, combiner=bool(flush_rows),
                       one_job=one_job, **params) == expected


def test_job_a_runs_its_combiner_only_on_a_cluster():
    """The batching test above runs job (a) with its combiner (flushes of 1-7 rows) and
    without it (one flush per task); both give the reference's answer there.  Here: which
    of the two the driver picks (on the inline and local runners never, whatever the input's
    size: the combiner only re-sorts and re-writes a local shuffle), and that --no-combiner
    removes the combiner from the step."""
    for runner in ("inline", "local"):
        assert not combiner_pays(runner)
    for runner in ("hadoop", "emr", "spark"):
        assert combiner_pays(runner)
    with_combiner = MRGramDocumentFrequency(["--m", "5"]).steps()[0]
    without = MRGramDocumentFrequency(["--m", "5", "--no-combiner"]).steps()[0]
    assert with_combiner.has_explicit_combiner and not without.has_explicit_combiner


def test_batch_shingling_equals_gram_hashes_page_by_page():
    """The vectorised shingler hashes the same bytes as the plain definition, for pages with
    non-ASCII words, no words, fewer than k words, repeated grams, and null word lists."""
    rng = random.Random(5)
    vocab = ["a", "bé", "ß", "日本", "x", "yy", "zzz", "ünï", "a"]
    for _ in range(300):
        pages = [None if rng.random() < 0.1 else [rng.choice(vocab) for _ in range(rng.randint(0, 12))]
                 for _ in range(rng.randint(0, 8))]
        k = rng.randint(1, 4)
        array = pa.array(pages, pa.list_(pa.string()))
        if len(array) > 2:  # a slice, as Arrow hands out record batches
            array, pages = array.slice(1), pages[1:]
        got, offsets = batch_gram_hashes(array, k)
        assert len(offsets) == len(pages) + 1
        for i, words in enumerate(pages):
            assert got[offsets[i]:offsets[i + 1]].tolist() == gram_hashes(words or [], k)


def _pages_of_lines(path: Path) -> tuple[list[bytes], dict[int, tuple[bytes, int, int]]]:
    """The ordinals of a shingle file's lines, and each page as its line holds it:
    doc -> (packed grams, domain id, IP id), copies included."""
    from spamflow_quilt.packed import unpack
    from spamflow_quilt.servers import server_id

    ordinals, pages = [], {}
    for line in path.read_bytes().splitlines():
        ordinal, doc, domain, ip, grams, *copies = line.split(b"\t")
        ordinals.append(ordinal)
        assert int(doc) not in pages
        pages[int(doc)] = (grams, server_id(domain.decode()), server_id(ip.decode()))
        for field in copies:
            for copy, domain_id, ip_id in zip(*(column.tolist() for column in unpack(field))):
                assert copy not in pages
                pages[copy] = (grams, domain_id, ip_id)
    return ordinals, pages


def test_shingle_file_holds_every_page_of_the_snapshot_once_with_any_number_of_workers(tmp_path):
    """write_shingles over a folder of Parquet parts with several row groups: every page of
    one snapshot once, with its grams from the plain definition and its servers, the copies
    of a gram set listed on one line (per worker), distinct ordinals, whatever the number of
    worker processes."""
    import pyarrow.parquet as pq
    from spamflow_quilt.servers import server_id
    from spamflow_quilt.shingle import write_shingles

    pages = random_corpus(3, n=60)
    folder = tmp_path / "pages"
    folder.mkdir()
    for part in range(2):
        chunk = pages[part * 30:(part + 1) * 30]
        pq.write_table(pa.table({"doc_id": pa.array([p["doc_id"] for p in chunk], pa.int64()),
                                 "words": pa.array([p["words"] for p in chunk], pa.list_(pa.string())),
                                 "domain": [p["domain"] for p in chunk], "ip": [p["ip"] for p in chunk],
                                 "snapshot": ["s1" if i % 3 else "s2" for i in range(len(chunk))]}),
                       folder / f"part-{part}.parquet", row_group_size=7)
    snapshot_pages = [p for part in range(2) for i, p in enumerate(pages[part * 30:(part + 1) * 30]) if i % 3]
    expected = {p["doc_id"]: (shingle_line(0, p["doc_id"], gram_hashes(p["words"], 3), p["domain"], p["ip"])
                              .split(b"\t")[4], server_id(p["domain"] or "-"), server_id(p["ip"] or "-"))
                for p in snapshot_pages}
    gram_sets = {grams for grams, _, _ in expected.values() if not grams.startswith(b"0:")}
    copies = sum(1 for grams, _, _ in expected.values() if not grams.startswith(b"0:")) - len(gram_sets)
    assert copies >= 2  # the corpus has exact duplicates in the snapshot
    for workers in (1, 2, 3):
        out = tmp_path / f"shingles-{workers}.tsv"
        counts = write_shingles(folder, out, 3, snapshot="s1", workers=workers)
        ordinals, got = _pages_of_lines(out)
        assert got == expected
        assert len(set(ordinals)) == len(ordinals)
        assert counts["pages"] == len(snapshot_pages)
        assert counts["grams"] == sum(len(gram_hashes(p["words"], 3)) for p in snapshot_pages)
        assert counts["copies"] == len(snapshot_pages) - len(ordinals) <= copies
        if workers == 1:  # one process, one window: one line per non-empty gram set
            assert counts["copies"] == copies
        assert not list(tmp_path.glob("*.part*")) and not list(tmp_path.glob("*.scratch"))


def test_hand_worked_quilt():
    # page 1 is stitched from pages 2, 3 and 4 (k=2); page 5 shares one gram with page 2
    pages = [
        {"doc_id": 1, "url": "u1", "words": "a b c d e f".split(), "domain": "q.example", "ip": "1", "links": [{"url": "u3"}]},
        {"doc_id": 2, "url": "u2", "words": "x a b y".split(), "domain": "s.example", "ip": "2", "links": []},
        {"doc_id": 3, "url": "u3", "words": "c d z".split(), "domain": "t.example", "ip": "3", "links": []},
        {"doc_id": 4, "url": "u4", "words": "e f q".split(), "domain": "q.example", "ip": "4", "links": []},
        {"doc_id": 5, "url": "u5", "words": "x a".split(), "domain": "r.example", "ip": "5", "links": []},
    ]
    # grams(1) = ab bc cd de ef; patch grams (df 2): ab (1,2), cd (1,3), ef (1,4); patchfrac 3/5
    (q,) = reference_quilts(pages, k=2, m=3, c=3, theta=0.6)
    assert (q["doc_id"], q["patchfrac"], q["n_patch_grams"]) == (1, 0.6, 3)
    assert q["sources"] == [{"doc_id": 2, "url": "u2", "grams": 1}, {"doc_id": 3, "url": "u3", "grams": 1},
                            {"doc_id": 4, "url": "u4", "grams": 1}]
    assert q["linked_source_fraction"] == pytest.approx(1 / 3)
    assert reference_quilts(pages, k=2, m=3, c=3, theta=0.61) == []  # patchfrac below θ
    assert reference_quilts(pages, k=2, m=3, c=3, theta=0.6, foreign="domain") == []  # 4 is on q.example


def test_greedy_cover_follows_the_paper_on_a_known_case():
    # doc 10 covers {1,2,3}, doc 11 covers {3,4}, doc 12 covers {4}: greedy takes 10 (3 grams) then 11 (1 new)
    pairs = [(10, 1), (10, 2), (10, 3), (11, 3), (11, 4), (12, 4)]
    assert greedy_cover(pairs) == [(10, 3), (11, 1)]


def test_array_greedy_cover_equals_the_set_version():
    rng = random.Random(9)
    for _ in range(500):
        pairs = [(rng.randrange(1, 12), rng.randrange(30)) for _ in range(rng.randint(0, 60))]
        sources = np.array([d for d, _ in pairs], np.uint64)
        grams = np.array([g for _, g in pairs], np.uint64)
        assert greedy_cover_arrays(sources, grams) == greedy_cover(pairs), pairs


def _exact_min_cover(page_grams: set, candidates: dict[int, set]) -> int:
    """Size of a truly minimal source set (brute force; tiny inputs only)."""
    needed = {g for g in page_grams if any(g in s for s in candidates.values())}
    for size in range(len(candidates) + 1):
        for combo in itertools.combinations(candidates, size):
            if needed <= set().union(*(candidates[d] for d in combo)):
                return size
    raise AssertionError("unreachable")


def _exact_quilted(pages, k, m, c, theta) -> set[int]:
    gram_sets = {p["doc_id"]: grams(p["words"], k) for p in pages}
    df: dict = {}
    for gs in gram_sets.values():
        for g in gs:
            df[g] = df.get(g, 0) + 1
    quilted = set()
    for d, gs in gram_sets.items():
        patch = {g for g in gs if 1 < df[g] <= m}
        if not gs or len(patch) / len(gs) < theta:
            continue
        cands = {d2: patch & g2 for d2, g2 in gram_sets.items() if d2 != d and patch & g2}
        if _exact_min_cover(patch, cands) >= c:
            quilted.add(d)
    return quilted


@pytest.mark.parametrize("seed", range(6))
def test_theorems_1_to_3_monotonicity(seed):
    pages = random_corpus(100 + seed, n=14)
    k = 3

    def greedy(m, c, theta):
        return {q["doc_id"] for q in reference_quilts(pages, k, m, c, theta)}

    # Theorems 1 and 2 hold for the greedy sources as for the exact ones
    for m, c in ((4, 2), (6, 1)):
        by_theta = [greedy(m, c, t) for t in (0.0, 0.25, 0.5, 0.75, 1.0)]
        assert all(a >= b for a, b in zip(by_theta, by_theta[1:]))
    for m, theta in ((4, 0.3), (6, 0.5)):
        by_c = [greedy(m, c, theta) for c in (1, 2, 3, 4)]
        assert all(a >= b for a, b in zip(by_c, by_c[1:]))
    # Theorem 3 is a property of the minimal cover; the paper notes greedy need not keep it
    by_m = [_exact_quilted(pages, k, m, 2, 0.3) for m in (2, 3, 4, 6, 10)]
    assert all(a <= b for a, b in zip(by_m, by_m[1:]))


def test_attribution_compares_urls_as_parse_normalises_them():
    from spamflow_quilt.detector import normal_url

    assert normal_url("HTTP://Example.COM") == "http://example.com/"
    assert normal_url("http://example.com/a/./b#x") == "http://example.com/a/b"


@pytest.mark.parametrize("seed", range(5))
def test_combining_popular_grams_keeps_every_patch_decision(seed):
    """Job (a)'s combiner may drop pages of a gram seen in more than m pages; the patch-gram
    decision (1 < df <= m) over any split of the rows into tasks must not change."""
    from spamflow_quilt.mr_gram_df import POPULAR, collapse_popular

    rng = np.random.default_rng(seed)
    m = 4
    grams = rng.integers(0, 30, 400).astype(np.uint64)
    docs = rng.integers(1, 2**62, 400).astype(np.uint64)
    truth = {g: len(set(docs[grams == g].tolist())) for g in set(grams.tolist())}
    tasks = np.array_split(rng.permutation(400), 3)  # three map tasks, each combined on its own
    parts = [collapse_popular(grams[t], docs[t], m) for t in tasks]
    merged = collapse_popular(np.concatenate([g for g, _ in parts]), np.concatenate([d for _, d in parts]), m)
    for g, df in truth.items():
        rows = merged[1][merged[0] == g]
        if df > m:
            assert rows.tolist() == [int(POPULAR)]
        else:
            assert sorted(rows.tolist()) == sorted(set(docs[grams == g].tolist()))


@pytest.mark.parametrize("line, message", [
    (b"not a shingle line", r"job \(a\) reads shingle lines only, got b'not a shingle line'"),
    (b"4294967295\t7\ta.example\t-\t1:u8:0100000000000000", "page ordinal out of range in shingle line b'4294967295"),
    (b"5\t7\ta.example\t-\t1:u8:0100000000000000\t1:u8:01000000", r"bad copies field \(doc, domain id, ip id\) "
     r"in shingle line b'5\\t7\\ta.example"),
])
def test_jobs_refuse_input_they_cannot_read_naming_the_line(tmp_path, line, message):
    """A bad shingle line stops job (a) with an error that quotes it; job (b) refuses
    anything but job (a)'s output; shingle_line refuses an ordinal it cannot number."""
    from spamflow_quilt.mr_gram_df import MRGramDocumentFrequency
    from spamflow_quilt.mr_patch_fraction import MRPatchFraction

    from spamflow.errors import SpamflowError
    from spamflow.mr import run_job

    bad = tmp_path / "bad.tsv"
    bad.write_bytes(_shingles(random_corpus(1, n=5), 3, tmp_path / "ok.tsv").read_bytes() + line + b"\n")
    with pytest.raises(SpamflowError, match=message):
        run_job(MRGramDocumentFrequency, [bad], tmp_path / "out.tsv", runner="inline", args=["--m", "5"])
    with pytest.raises(SpamflowError, match="job \\(b\\) reads job \\(a\\)'s output"):
        run_job(MRPatchFraction, [bad], tmp_path / "out-b.tsv", runner="inline", args=["--m", "5", "--theta", "0.5"])
    with pytest.raises(ValueError, match="out of range"):
        shingle_line(2**32 - 1, 7, [1], None, None)
