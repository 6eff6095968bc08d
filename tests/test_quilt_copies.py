"""Quilts on a crawl full of copies: pages with identical gram sets are covered once per
(gram set, server) and offered once as sources, and the result stays the brute-force
reference's, page by page (every copy of a quilt is reported, as the reference does)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from spamflow_quilt.triples import unit_triples
from test_quilt import _mr, _ref


def copies_corpus(seed: int, texts: int = 14) -> list[dict]:
    """Texts built from stock passages (so they share grams), quilts stitched from other
    texts, and every text on 1-6 pages: copies on the same domain, on other domains, on
    other IPs of one domain, and pages without an IP."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(30)]
    passages = [[rng.choice(vocab) for _ in range(rng.randint(5, 9))] for _ in range(10)]
    bodies = [[w for _ in range(rng.randint(1, 3)) for w in rng.choice(passages)] + [rng.choice(vocab)]
              for _ in range(texts)]
    for _ in range(texts // 3):  # quilts: passages of 2-4 texts
        bodies.append([w for body in rng.sample(bodies[:texts], rng.randint(2, 4)) for w in body[:8]])
    pages = []
    for t, body in enumerate(bodies):
        for j in range(rng.choice([1, 1, 2, 3, 6])):
            domain = f"d{t % 4 if rng.random() < 0.4 else rng.randrange(8)}.example"
            ip = None if rng.random() < 0.1 else f"127.0.{t % 3}.{rng.randrange(3)}"
            i = len(pages)
            pages.append({"doc_id": rng.randrange(1, 2**62), "url": f"http://h{i}.{domain}/{t}-{j}",
                          "words": list(body), "domain": domain, "ip": ip, "links": []})
    rng.shuffle(pages)
    return pages


PARAMS = [
    {"k": 3, "m": 8, "c": 2, "theta": 0.5},
    {"k": 3, "m": 12, "c": 1, "theta": 0.3},  # c = 1: a page with a copy is a quilt (of one source)
    {"k": 2, "m": 6, "c": 3, "theta": 0.2},
    {"k": 3, "m": 20, "c": 2, "theta": 0.4, "phi": 0.1},
]


@pytest.mark.parametrize("foreign", ["none", "domain", "ip"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_copies_give_the_reference_quilts_and_sources(tmp_path, seed, foreign):
    pages = copies_corpus(seed)
    texts = {tuple(p["words"]) for p in pages}
    assert len(texts) < len(pages) * 0.6  # most pages have copies
    found_with_copies = 0
    for params in PARAMS:
        expected = _ref(pages, foreign=foreign, **params)
        assert _mr(pages, tmp_path, foreign=foreign, **params) == expected, params
        quilted_texts = [tuple(p["words"]) for p in pages if p["doc_id"] in {q["doc_id"] for q in expected}]
        found_with_copies += len(quilted_texts) - len(set(quilted_texts))
    assert found_with_copies > 0  # some quilts have copies, each reported


def test_every_copy_of_a_quilt_on_its_server_is_reported_with_the_smallest_eligible_sources(tmp_path):
    """Hand-worked (k = 2, m = 10, c = 2, foreign = domain): the quilt "a b c d" is on q.example
    twice (docs 1 and 2) and on r.example once (doc 9); its sources are "x a b" (docs 5 and 3, both on
    s.example) and "c d y" (doc 4 on t.example, doc 8 on q.example)."""
    def page(doc, words, domain):
        return {"doc_id": doc, "url": f"http://{domain}/{doc}", "words": words.split(), "domain": domain,
                "ip": f"127.0.0.{doc}", "links": []}

    pages = [page(1, "a b c d", "q.example"), page(2, "a b c d", "q.example"), page(5, "x a b", "s.example"),
             page(3, "x a b", "s.example"), page(4, "c d y", "t.example"), page(8, "c d y", "q.example")]
    params = {"k": 2, "m": 10, "c": 2, "theta": 0.5, "foreign": "domain"}
    for name in ("one", "two", "three"):
        (tmp_path / name).mkdir()
    expected = [{"doc_id": d, "n_grams": 3, "n_patch_grams": 3, "sources": [(3, 1), (4, 1)]} for d in (1, 2)]
    assert _ref(pages, **params) == expected  # "ab" from 3 (smaller than 5), "cd" from 4 (8 is on q.example)
    assert _mr(pages, tmp_path / "one", **params) == expected
    # a copy on another domain covers all of the quilt's patch grams: one source, no quilt
    pages.append(page(9, "a b c d", "r.example"))
    assert _ref(pages, **params) == _mr(pages, tmp_path / "two", **params) == []
    found = _mr(pages, tmp_path / "three", **{**params, "c": 1})
    assert found == _ref(pages, **{**params, "c": 1})
    assert {q["doc_id"]: q["sources"] for q in found if q["doc_id"] in (1, 2, 9)} == \
        {1: [(9, 3)], 2: [(9, 3)], 9: [(1, 3)]}


def _rows(copies: int, grams: int, servers_per_text: int):
    """One text of ``grams`` patch grams on ``copies`` pages (on ``servers_per_text`` servers)
    plus one page sharing its first gram."""
    docs = np.arange(1, copies + 1, dtype=np.uint64)
    g = np.repeat(np.arange(100, 100 + grams, dtype=np.uint64), copies)
    d = np.tile(docs, grams)
    s = d % np.uint64(servers_per_text) + np.uint64(1)
    sets = np.full(len(g), 7, np.uint64)
    other = (np.array([100], np.uint64), np.array([999], np.uint64), np.array([50], np.uint64),
             np.array([8], np.uint64))
    return (np.r_[g, other[0]], np.r_[d, other[1]], np.r_[s, other[2]], np.r_[sets, other[3]])


def test_triples_grow_with_gram_sets_not_with_the_square_of_copies():
    """A text on 10 pages (10 servers) with 40 patch grams, and a page sharing one of its
    grams.  Page pairs would be 10 x 9 per gram (+ 2 x 10 for the shared one): 3,620.  With
    c >= 2 the copied text makes no triples at all (its copies are its only source); the
    other page makes 1 (the text, named by its smallest copy).  With c = 1 each copy is a
    unit with one candidate per gram set: 10 x 40 + 10 + 1 = 411."""
    grams, docs, servers, sets = _rows(copies=10, grams=40, servers_per_text=10)
    patchy = np.ones(len(grams), bool)
    s, reps, g, src = unit_triples(grams, docs, servers=servers, sets=sets, patchy=patchy, skip_copied=True)
    assert list(zip(reps.tolist(), g.tolist(), src.tolist())) == [(999, 100, 1)]
    s, reps, g, src = unit_triples(grams, docs, servers=servers, sets=sets, patchy=patchy, skip_copied=False)
    assert len(reps) == 411
    assert sorted({(r, x) for r, gg, x in zip(reps.tolist(), g.tolist(), src.tolist()) if gg == 101}) == \
        [(1, 2)] + [(r, 1) for r in range(2, 11)]
    # copies on one server are one unit: 1 x 40 + 1 (its candidate "999") + 1 (999's)
    grams, docs, servers, sets = _rows(copies=10, grams=40, servers_per_text=1)
    s, reps, g, src = unit_triples(grams, docs, servers=servers, sets=sets, patchy=patchy, skip_copied=True)
    assert sorted(zip(reps.tolist(), src.tolist())) == [(1, 999), (999, 1)]


def test_covers_through_spill_files_equal_the_reference(tmp_path, monkeypatch):
    """With a cover reducer allowed 64 bytes of triples, every bucket spills to disk (and
    splits its partitions again); the quilts and sources are still the reference's."""
    import spamflow_quilt.mr_quilt_cover as cover_job

    monkeypatch.setattr(cover_job, "SPILL_BYTES", 64)
    pages = copies_corpus(5)
    for foreign in ("none", "domain"):
        params = {"k": 3, "m": 12, "c": 1, "theta": 0.3, "foreign": foreign}
        expected = _ref(pages, **params)
        assert expected
        assert _mr(pages, tmp_path, buckets=1, **params) == expected


def _cover_input(units: int, triples_per_unit: int, seed: int = 0):
    """Job (c) step 2's values for one bucket: ``units`` single patchy pages and their
    triples, made lazily (so the input is never in memory at once), in random order."""
    from spamflow_quilt.mr_base import tagged

    rng = np.random.default_rng(seed)
    docs = np.arange(1, units + 1, dtype=np.uint64)
    yield tagged(b"Q", docs, np.full(units, 100, np.uint64), np.full(units, 150, np.uint64), docs * 7,
                 docs, docs)
    per_record = 20_000
    for _ in range(units * triples_per_unit // per_record):
        reps = rng.integers(1, units + 1, per_record).astype(np.uint64)
        grams = rng.integers(0, 100, per_record).astype(np.uint64)
        sources = rng.integers(10**6, 10**6 + 40, per_record).astype(np.uint64)
        yield tagged(b"T", reps, grams, sources)


def test_triples_are_sent_without_their_gram_set():
    """Job (c) step 1 routes a triple by its gram set's bucket but sends only (rep, gram,
    source): the set is not needed by the cover, and it was a quarter of the job's largest
    intermediate data (docs/quilt.md, "Temporary disk").  Hand-worked: gram 5 is in unit 1
    (patchy, set 10, server 1) and unit 2 (set 20, server 2); unit 1's only source is 2."""
    from spamflow_quilt.buckets import doc_bucket
    from spamflow_quilt.mr_base import doc_key, tagged, untagged
    from spamflow_quilt.mr_quilt_cover import MRQuiltCover

    job = MRQuiltCover(["--m", "50", "--c", "1", "--buckets", "4"])
    u = np.array
    rows = tagged(b"U", u([5, 5], np.uint64), u([1, 2], np.uint64), u([1, 2], np.uint64), u([1, 0], np.uint8),
                  u([10, 20], np.uint64))
    out = list(job.triples(b"g000000", [rows]))
    assert len(out) == 1
    key, value = out[0]
    kind, columns = untagged(value)
    assert kind == b"T" and [c.tolist() for c in columns] == [[1], [5], [2]]
    assert key == doc_key(int(doc_bucket(u([10], np.uint64), 4)[0]))


@pytest.mark.slow
def test_a_cover_reducer_holds_a_bounded_share_of_its_triples(tmp_path, monkeypatch):
    """4,000,000 triples (128 MB as numbers) into one cover reducer allowed 4 MB: its peak
    allocation stays under 40 MB, and its covers equal those of an unbounded reducer."""
    import tracemalloc

    from spamflow_quilt.mr_quilt_cover import MRQuiltCover

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    args = ["--m", "50", "--c", "2"]
    bounded = MRQuiltCover([*args, "--spill-bytes", str(4 << 20)])
    tracemalloc.start()
    got = sorted(bounded.cover(b"d000000", _cover_input(2_000, 2_000)))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 40 << 20, f"peak {peak / 2**20:.0f} MiB"
    assert not list(tmp_path.iterdir())  # spill files removed
    small = MRQuiltCover([*args, "--spill-bytes", str(1 << 40)])
    assert got == sorted(small.cover(b"d000000", _cover_input(2_000, 2_000)))
    assert len(got) == 2_000 and all(len(record["sources"]) >= 2 for _, record in got)


def test_jobs_refuse_intermediates_of_older_versions_naming_the_record(tmp_path):
    """A work folder of stage version 1 (rows without the gram set) or 2 (job (b)'s rows per
    page, not per line) run by hand through the new jobs: a clear error naming the record,
    not a crash deep in a reducer."""
    from spamflow_quilt.mr_base import tagged
    from spamflow_quilt.mr_patch_fraction import MRPatchFraction
    from spamflow_quilt.mr_quilt_cover import MRQuiltCover

    from spamflow.errors import SpamflowError
    from spamflow.mr import run_job

    one = np.array([1], np.uint64)
    old_b = tmp_path / "patchy_v1.tsv"
    old_b.write_bytes(b"d000000\t" + tagged(b"R", one, one, one, one, one.astype(np.uint8)) + b"\n")
    with pytest.raises(SpamflowError, match=r"stage version 3 .*got 5 columns in a b'R' record under b'd000000'"):
        run_job(MRQuiltCover, [old_b], tmp_path / "c.tsv", runner="inline", args=["--m", "5", "--c", "2"])
    old_b.write_bytes(b"d000002\t" + tagged(b"R", one, one, one, one, one.astype(np.uint8), one) + b"\n")
    with pytest.raises(SpamflowError, match=r"stage version 3 .*got 6 columns in a b'R' record under b'd000002'.*rerun"):
        run_job(MRQuiltCover, [old_b], tmp_path / "c2.tsv", runner="inline", args=["--m", "5", "--c", "2"])
    old_a = tmp_path / "patch_grams_v1.tsv"
    old_a.write_bytes(b"d000003\t" + tagged(b"S", one, one, one, one, one) + b"\n")
    with pytest.raises(SpamflowError, match=r"S rows of 6 columns.*under b'd000003'"):
        run_job(MRPatchFraction, [old_a], tmp_path / "b.tsv", runner="inline", args=["--m", "5", "--theta", "0.5"])


def _write_pages(pages: list[dict], path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"doc_id": pa.array([p["doc_id"] for p in pages], pa.int64()),
                             "words": pa.array([p["words"] for p in pages], pa.list_(pa.string())),
                             "domain": [p["domain"] for p in pages], "ip": [p["ip"] for p in pages]}), path)
    return path


def _brute_force_df(pages: list[dict], k: int) -> dict[int, int]:
    """df of every gram hash, counting pages one by one."""
    from spamflow_quilt.shingle import gram_hashes

    df: dict[int, int] = {}
    for p in pages:
        for g in gram_hashes(p["words"], k):
            df[g] = df.get(g, 0) + 1
    return df


def _patch_grams(path) -> dict[int, int]:
    from spamflow_quilt.mr_base import untagged

    out = {}
    for line in path.read_bytes().splitlines():
        kind, columns = untagged(line.split(b"\t", 1)[1])
        if kind == b"P":
            out.update(zip(columns[0].tolist(), columns[1].tolist()))
    return out


def test_a_text_on_ten_pages_is_one_shingle_line_and_job_a_still_counts_ten_pages(tmp_path):
    """Ten copies of a 30-word text on ten domains, a page quoting 6 of its words and a page
    of its own: write_shingles writes 3 lines (the copies listed on the first copy's line),
    job (a)'s mappers emit one row per gram of a line (not of a page), and every df is the
    page count of the brute-force count (10 for the text's grams, 11 for the quoted ones)."""
    from spamflow_quilt.mr_gram_df import MRGramDocumentFrequency
    from spamflow_quilt.shingle import gram_hashes, write_shingles

    from spamflow.mr import run_job

    text = [f"w{i}" for i in range(30)]
    pages = [{"doc_id": 100 + i, "words": text, "domain": f"d{i}.example", "ip": f"127.0.0.{i}"} for i in range(10)]
    pages += [{"doc_id": 7, "words": ["x", "y", *text[3:9], "z"], "domain": "q.example", "ip": None},
              {"doc_id": 8, "words": [f"v{i}" for i in range(12)], "domain": "r.example", "ip": "127.0.1.1"}]
    shingles = tmp_path / "shingles.tsv"
    counts = write_shingles(_write_pages(pages, tmp_path / "pages.parquet"), shingles, 3)
    lines = shingles.read_bytes().splitlines()
    assert len(lines) == 3 and counts["copies"] == 9 and counts["pages"] == 12
    job = MRGramDocumentFrequency(["--m", "20", "--buckets", "4"])
    job.mapper_init()
    records = [r for line in lines for r in job.mapper(None, line)] + list(job.mapper_final())
    from spamflow_quilt.mr_base import untagged

    shuffled = sum(len(columns[0]) for kind, columns in (untagged(v) for _, v in records) if kind in (b"G", b"W"))
    assert shuffled == len(gram_hashes(text, 3)) + 7 + 10  # not 10 x 28 + 7 + 10
    out = run_job(MRGramDocumentFrequency, [shingles], tmp_path / "patch_grams.tsv", runner="inline",
                  args=["--m", "20", "--buckets", "4"])
    expected = {g: df for g, df in _brute_force_df(pages, 3).items() if 1 < df <= 20}
    assert _patch_grams(out) == expected
    assert sorted(set(expected.values())) == [10, 11]


@pytest.mark.parametrize("m", [3, 6, 40])
def test_document_frequency_counts_every_copy_whatever_the_flushes(tmp_path, m):
    """Job (a) on collapsed copies, with mapper flushes every 5 rows (so the combiner merges
    G and W rows and drops grams of more than m pages): the patch grams and their df are
    those of counting page by page."""
    from spamflow_quilt.mr_gram_df import MRGramDocumentFrequency
    from test_quilt import _shingles

    from spamflow.mr import run_job

    pages = copies_corpus(4)
    shingles = _shingles(pages, 3, tmp_path / "shingles.tsv")
    assert len(shingles.read_bytes().splitlines()) < 0.6 * len(pages)
    out = run_job(MRGramDocumentFrequency, [shingles], tmp_path / "patch_grams.tsv", runner="inline",
                  args=["--m", str(m), "--buckets", "3", "--flush-rows", "5"])
    expected = {g: df for g, df in _brute_force_df(pages, 3).items() if 1 < df <= m}
    assert expected and _patch_grams(out) == expected


@pytest.mark.parametrize("window", [None, 4])
@pytest.mark.parametrize("foreign", ["none", "domain", "ip"])
def test_copies_split_over_lines_give_the_reference_too(tmp_path, foreign, window):
    """Copies not collapsed (one line per page, as an older shingle file or another
    shingling process has them) or collapsed only within windows of 4 pages, so that one
    gram set is on several lines: still the reference's quilts and sources."""
    for seed in (1, 2):
        pages = copies_corpus(seed)
        (tmp_path / str(seed)).mkdir()
        for params in PARAMS[:2]:
            expected = _ref(pages, foreign=foreign, **params)
            assert _mr(pages, tmp_path / str(seed), window=window, foreign=foreign, **params) == expected, params


@pytest.mark.parametrize("seed", range(4))
def test_units_of_lines_give_the_triples_of_their_pages(seed):
    """line_units's rows (a line's units, the first two with c >= 2) make the same triples as
    one row per page, when each gram set's pages are spread over random lines."""
    from spamflow_quilt.triples import line_units

    rng = np.random.default_rng(seed)
    n = 300
    sets = rng.integers(1, 150, n).astype(np.uint64)  # gram sets of 1 to ~6 pages
    docs = rng.permutation(np.arange(1, n + 1)).astype(np.uint64)
    servers = rng.integers(1, 4, n).astype(np.uint64)
    lines = (sets * np.uint64(3) + rng.integers(0, 3, n).astype(np.uint64)).astype(np.uint32)  # <= 3 lines a set
    patchy = (sets % np.uint64(3) != 0).astype(np.uint8)
    grams_of_set = {s: rng.choice(60, rng.integers(1, 8), replace=False) for s in range(1, 150)}
    hit_grams, hit_lines = [], []
    for line in np.unique(lines).tolist():
        g = grams_of_set[line // 3]
        hit_grams += g.tolist()
        hit_lines += [line] * len(g)
    hit_grams, hit_lines = np.array(hit_grams, np.uint64), np.array(hit_lines, np.uint32)
    page_of = {line: np.flatnonzero(lines == line) for line in np.unique(lines).tolist()}
    at = np.concatenate([np.repeat(page_of[line], 1) for line in hit_lines.tolist()])
    per_page = np.concatenate([np.full(len(page_of[line]), g, np.uint64)
                               for g, line in zip(hit_grams.tolist(), hit_lines.tolist())])
    assert len(at) == len(per_page)
    for skip in (True, False):
        from_pages = unit_triples(per_page, docs[at], servers=servers[at], sets=sets[at],
                                  patchy=patchy[at].astype(bool), skip_copied=skip)
        g, reps, srv, pat, st = line_units(hit_grams, hit_lines, lines, docs, servers=servers, patchy=patchy,
                                           sets=sets, skip_copied=skip)
        from_lines = unit_triples(g, reps, servers=srv, sets=st, patchy=pat.astype(bool), skip_copied=skip)
        assert sorted(zip(*(c.tolist() for c in from_lines))) == sorted(zip(*(c.tolist() for c in from_pages)))
        assert len(from_pages[0]) > 0


@pytest.mark.parametrize("flush_rows", [None, 7])
def test_job_a_emits_a_page_buckets_hits_once_per_reduce_flush(tmp_path, flush_rows):
    """Job (a)'s reduce task buffers its patch-gram hits over its gram buckets: without a
    flush it emits one ``H`` record per page bucket, not one per (gram bucket, page bucket),
    a count that grows with the square of the corpus; with flushes every 7 rows, at most one
    per flush.  The hits are every (line, patch gram) of the shingle lines, each once."""
    from itertools import groupby

    from spamflow_quilt.mr_base import page_fields, untagged
    from spamflow_quilt.mr_gram_df import MRGramDocumentFrequency
    from spamflow_quilt.packed import unpack
    from test_quilt import _shingles

    pages = copies_corpus(2)
    shingles = _shingles(pages, 3, tmp_path / "shingles.tsv")
    lines = shingles.read_bytes().splitlines()
    job = MRGramDocumentFrequency(["--m", "6", "--buckets", "8", *(["--flush-rows", str(flush_rows)] if flush_rows else [])])
    job.mapper_init()
    shuffled = sorted((r for line in lines for r in job.mapper(None, line)), key=lambda r: r[0])
    shuffled += sorted(job.mapper_final(), key=lambda r: r[0])
    shuffled.sort(key=lambda r: r[0])  # stable: the local runner's sort on the key
    job.reducer_init()
    out = [r for key, group in groupby(shuffled, key=lambda r: r[0]) for r in job.reducer(key, (v for _, v in group))]
    out += list(job.reducer_final())
    hits, records = [], {}
    for key, value in out:
        kind, columns = untagged(value)
        if kind == b"H":
            hits += zip(columns[0].tolist(), columns[1].tolist())
            records[key] = records.get(key, 0) + 1
    patch = {g for g, df in _brute_force_df(pages, 3).items() if 1 < df <= 6}
    expected = sorted((int(fields[0]), g) for fields in map(page_fields, lines) for g in unpack(fields[4])[0].tolist()
                      if g in patch)
    assert patch and sorted(hits) == expected
    assert len(records) > 1
    if flush_rows is None:
        assert set(records.values()) == {1}
    else:
        flushes = len(expected) // flush_rows + 1  # a flush takes at least flush_rows rows; then the last
        assert sum(records.values()) <= flushes * len(records) and max(records.values()) > 1
