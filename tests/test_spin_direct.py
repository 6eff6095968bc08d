"""spin's direct engine (``direct.py``: the three jobs' arithmetic in the stage's process over
integer immutable ids) gives the jobs' own results: the same candidate pairs and counts as the
two candidate jobs on the inline runner, the same Jaccard as ``similarity.jaccard``, the same
verifier overlaps, and the same stage outputs as the MapReduce engine."""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from itertools import combinations, count
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from test_spin import _brute_force, _demo_dictionary, _random_sets, _reference_pairs
from test_spin_candidate_batches import _corpus
from test_spin_mapreduce import PARAMS, _page_table, _run, _same

from spamflow.detector import RunSettings
from spamflow_spin import direct, streaming
from spamflow_spin.batch_partition import _stable_order, partition_batch
from spamflow_spin.candidates import find_candidates
from spamflow_spin.dictionary import SynonymDictionary
from spamflow_spin.direct import IdWriter, direct_candidates, read_immutables, verify_direct
from spamflow_spin.mr_verify_pairs import partition_line
from spamflow_spin.params import SpinParams, spin_engine
from spamflow_spin.partition import partition
from spamflow_spin.similarity import jaccard
from spamflow_spin.streaming import _articles_once, _articles_spooled
from spamflow_spin.verifier import mutable_overlap


def _both(lines: Path, tmp_path: Path, **options):
    """(the jobs' Candidates on the inline runner, the direct engine's)."""
    jobs = find_candidates(lines, tmp_path / "jobs", runner="inline", **options)
    scratch = tmp_path / "direct"
    scratch.mkdir(exist_ok=True)
    return jobs, direct_candidates(read_immutables(lines, scratch), scratch, **options)


@pytest.mark.parametrize("seed, t, k, max_pages", [(1, 0.5, 1, 10000), (2, 0.3, 1, 10000), (3, 0.8, 2, 10000),
                                                   (4, 1.0, 1, 10000), (5, 0.6, 3, 10000), (6, 0.5, 5, 4),
                                                   (7, 0.4, 1, 3)])
def test_direct_candidates_equal_the_jobs_on_planted_near_copies(tmp_path, seed, t, k, max_pages, monkeypatch):
    """Clusters of near-copies (random edits of a base set) and unrelated pages: the same pairs,
    shared/dropped immutables, prefix-dropped pages, pair counts and bound-pruned pairs; small
    chunks and buckets (several rank buckets, pages split across chunks) change nothing."""
    docs = _random_sets(seed, 120)
    lines = tmp_path / "imm.tsv"
    lines.write_text("".join(f"{d}\t{' '.join(sorted(s))}\n" for d, s in docs.items()))
    jobs, got = _both(lines, tmp_path, threshold=t, max_pages=max_pages, min_shared=k)
    assert got == jobs
    if not jobs.prefix_dropped:  # nothing above t lost (a prefix reaching a dropped immutable may)
        assert _brute_force(docs, t) <= set(got.pairs)
    # (_random_sets iterates sets of strings: its corpus depends on the hash seed; at t = 1.0 it may hold no pair)
    assert (jobs.pairs_counted > 0 or t == 1.0) and (max_pages > 5 or jobs.dropped > 0)
    monkeypatch.setattr(direct, "CHUNK_IDS", 17)
    monkeypatch.setattr(direct, "BUCKET_ROWS", 64)
    monkeypatch.setattr(direct, "FLUSH_PAIRS", 5)  # pair counts flushed to pair buckets part way
    scratch = tmp_path / "small"
    scratch.mkdir()
    assert direct_candidates(read_immutables(lines, scratch), scratch, threshold=t, max_pages=max_pages,
                             min_shared=k) == jobs
    assert sorted(path.name for path in scratch.iterdir()) == ["ids.u32"]  # bucket files removed
    monkeypatch.setattr(direct, "VOCABULARY_ENTRIES", 40)  # the immutables numbered in generations
    scratch = tmp_path / "generations"
    scratch.mkdir()
    pages = read_immutables(lines, scratch)
    assert direct_candidates(pages, scratch, threshold=t, max_pages=max_pages, min_shared=k) == jobs
    assert sorted(path.name for path in scratch.iterdir()) == ["ids.u32"]  # generation files removed


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_direct_candidates_equal_the_jobs_on_odd_text(tmp_path, seed):
    """Lines as the jobs read them: odd whitespace, code points whose order is not their look,
    repeated lines, empty pages (the candidate batches test's corpus)."""
    page_lines, _ = _corpus(seed)
    lines = tmp_path / "imm.tsv"
    lines.write_text("".join(line + "\n" for line in page_lines if len(set(line.partition("\t")[2].split())) ==
                             len(line.partition("\t")[2].split())))  # the jobs' input: sets
    jobs, got = _both(lines, tmp_path, threshold=0.5, max_pages=10, min_shared=1)
    assert got == jobs and jobs.pairs


def test_direct_jaccard_equals_the_definition(tmp_path, monkeypatch):
    docs = _random_sets(9, 80)
    lines = tmp_path / "imm.tsv"
    lines.write_text("".join(f"{d}\t{' '.join(sorted(s))}\n" for d, s in docs.items()))
    pages = read_immutables(lines, tmp_path)
    pairs = list(combinations(sorted(docs), 2))
    a, b = (np.array(column, np.int64) for column in zip(*pairs))
    expected = [jaccard(docs[x], docs[y]) for x, y in pairs]
    assert pages.jaccard(a, b).tolist() == expected  # floats equal, not close
    assert pages.jaccard(a, b, block=50).tolist() == expected
    monkeypatch.setattr(direct, "VOCABULARY_ENTRIES", 25)
    (tmp_path / "generations").mkdir()
    assert read_immutables(lines, tmp_path / "generations").jaccard(a, b).tolist() == expected
    with pytest.raises(ValueError, match="page 5 has no line"):
        pages.jaccard(np.array([5]), a[:1])


def test_id_writer_keeps_the_pages_asked_for(tmp_path, monkeypatch):
    """The stage's path: every article written, only the groups' representatives kept (copied a
    few ids at a time here); their Jaccard as the definition's, the others unknown."""
    monkeypatch.setattr(direct, "CHUNK_IDS", 7)
    docs = _random_sets(10, 60)
    writer = IdWriter(tmp_path / "ids.u32")
    for doc, items in docs.items():
        writer.add(doc, sorted(items))
    keep = set(sorted(docs)[::3])
    pages = writer.finish(keep=keep)
    assert pages.docs.tolist() == [doc for doc in docs if doc in keep]
    assert pages.sizes.tolist() == [len(docs[doc]) for doc in pages.docs.tolist()]
    pairs = list(combinations(sorted(keep), 2))
    a, b = (np.array(column, np.int64) for column in zip(*pairs))
    assert pages.jaccard(a, b).tolist() == [jaccard(docs[x], docs[y]) for x, y in pairs]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["ids.u32.kept"]
    pages.remove()
    assert not list(tmp_path.iterdir())
    with pytest.raises(ValueError, match="no line"):
        pages.jaccard(np.array([min(set(docs) - keep)]), a[:1])


@pytest.mark.parametrize("seed, entries, n", [(11, 1, 80), (12, 30, 300), (13, 200, 300)])
def test_generations_give_the_one_dicts_ids(tmp_path, seed, entries, n):
    """Random pages whose immutables recur across generations (a small shared vocabulary and a
    long tail): numbered in generations of ``entries`` distinct immutables, then merged, the
    pages hold the same immutable strings as with one dict, one global id per string, and the
    pages of equal sets (only those) get equal keys.  (A generation a page, ``entries`` 1, on
    fewer pages: each generation is a file to write and merge.)"""
    rng = random.Random(seed)
    common = [f"w{i}" for i in range(60)]
    pages = [(doc, rng.sample(common, rng.randint(0, 12)) + [f"t{doc}-{j}" for j in range(rng.randint(0, 4))])
             for doc in range(n)]
    pages += [(1000 + doc, list(reversed(items))) for doc, items in pages[:40]]  # the same sets, later
    writers = {}
    for name, cap in (("one", None), ("generations", entries)):
        (tmp_path / name).mkdir()
        writer = writers[name] = IdWriter(tmp_path / name / "ids.u32", vocabulary_entries=cap)
        for doc, items in pages:
            writer.add(doc, items)
        assert writer.merge() == (name == "generations")
    one, generations = writers["one"], writers["generations"]
    assert len(generations.generations) > 2 or entries == 200 and len(generations.generations) >= 2
    keys_one, keys_generations = one.set_keys(), generations.set_keys()
    expected, got = one.finish(), generations.finish()
    words = got.words.to_pylist()
    assert sorted(words) == sorted(expected.words.to_pylist()) and len(set(words)) == len(words)  # one id a string
    assert [[words[i] for i in got.ids[a:b]] for a, b in zip(got.starts[:-1], got.starts[1:])] == \
        [items for _, items in pages]
    sets = [frozenset(items) for _, items in pages]
    first = [sets.index(s) for s in sets]  # each page's first page of the same set
    assert [keys_one.index(k) for k in keys_one] == first == [keys_generations.index(k) for k in keys_generations]
    assert len(set(first)) < len(first)
    assert sorted(path.name for path in (tmp_path / "generations").iterdir()) == ["ids.u32"]


@pytest.mark.parametrize("seed", [1, 2])
def test_order_by_df_is_rank_order(seed):
    """The direct engine's order of the shared immutables, a df at a time, is the pair job's
    ``rank_order`` of (df, immutable): random dfs (many ties), strings of odd code points."""
    from spamflow_spin.direct import _order_by_df
    from spamflow_spin.mr_candidate_pairs import rank_order

    rng = np.random.default_rng(seed)
    alphabet = ["a", "b", "z", "é", "\u00ff", "\u0100", "😀", "#", "1"]
    words = sorted({"".join(rng.choice(alphabet, int(rng.integers(1, 6)))) for _ in range(3000)})
    rng.shuffle(words)
    vocabulary = pa.chunked_array([pa.array(words[:1000], pa.large_string()), pa.array(words[1000:], pa.large_string())])
    ids = np.sort(rng.choice(len(words), len(words) // 2, replace=False))
    df = rng.integers(2, 12, len(ids))
    expected = rank_order(df, pa.array([words[i] for i in ids.tolist()], pa.large_string()))
    assert np.array_equal(_order_by_df(df, ids, vocabulary), expected)


def test_verify_direct_equals_the_verifier_pair_by_pair_in_blocks(tmp_path):
    """Random partitions; every pair's overlap is ``mutable_overlap`` of the two pages' mutables
    (a's first), whether the mutables are read for all pages at once or three at a time."""
    d = _demo_dictionary()
    rng = random.Random(4)
    entries = sorted(d.neighbours)
    mutables = {doc: [rng.choice(entries) for _ in range(rng.randint(0, 12))] for doc in range(100, 140)}
    partitions = tmp_path / "partitions.tsv"
    partitions.write_text("".join(partition_line(doc, ["x", "y"], m) for doc, m in mutables.items()))
    scored = sorted((a, b, rng.random()) for a, b in combinations(mutables, 2) if rng.random() < 0.3)
    expected = [(a, b, s, mutable_overlap(mutables[a], mutables[b], d)) for a, b, s in scored]
    assert verify_direct(scored, partitions, d) == expected
    assert verify_direct(scored, partitions, d, max_pages=3) == expected
    with pytest.raises(ValueError, match="page 7 is in a pair to verify but has no partition line"):
        verify_direct([(7, 100, 1.0)], partitions, d)


def test_direct_names_a_bad_line(tmp_path):
    lines = tmp_path / "imm.tsv"
    lines.write_text("1\ta b\nnot a page line\n")
    with pytest.raises(ValueError, match=r"imm.tsv:2: not a page line"):
        read_immutables(lines, tmp_path)


@pytest.mark.parametrize("phrase_match", ["longest", "paper"])
def test_batch_partition_equals_partition_text_by_text(phrase_match):
    """Random dictionaries over a small vocabulary (one-word entries, phrases of up to five words
    whose prefixes are entries or not, a word both an entry and a phrase's start) and random
    texts over it (repeats, empty texts, phrases at a text's end, phrases inside a longer one):
    each text's line is ``partition``'s, and its ids name ``partition``'s immutables in order."""
    seen = Counter()
    for seed in range(40):
        rng = random.Random(seed)
        vocab = [f"w{i}" for i in range(rng.randint(3, 20))] + ["é", "w1#2"]  # a word that looks like a repeat
        d = SynonymDictionary()
        for _ in range(rng.randint(0, 20)):
            size = rng.choice((1, 2, 3, 5))
            d.add_group(" ".join(rng.choices(vocab[:4] if size == 1 else vocab, k=size)), [rng.choice(vocab)])
        texts = [rng.choices(vocab, k=rng.choice((0, 1, 2, rng.randint(3, 80)))) for _ in range(rng.randint(1, 40))]
        docs = [rng.randint(-10**12, 10**12) for _ in texts]
        vocabulary: defaultdict[str, int] = defaultdict(count().__next__)
        got = partition_batch(docs, texts, d, phrase_match, vocabulary.__getitem__)
        names = list(vocabulary)
        expected = [partition(text, d, phrase_match) for text in texts]
        assert got.lines == [partition_line(doc, p.immutables, p.mutables)[:-1] for doc, p in zip(docs, expected)]
        assert [[names[i] for i in got.ids[a:b]] for a, b in zip(got.starts[:-1], got.starts[1:])] \
            == [p.immutables for p in expected]
        assert got.mutables.tolist() == [len(p.mutables) for p in expected]
        assert len(vocabulary) == len({w for p in expected for w in p.immutables})  # one id per immutable
        for p in expected:
            seen["phrases"] += sum(" " in m for m in p.mutables)
            seen["repeats"] += sum("#" in w for w in p.immutables)
        seen["prefixes_not_entries"] += bool(d.prefixes - set(d.neighbours))
    assert min(seen.values()) > 20, seen


def test_batch_partition_of_no_words():
    d = _demo_dictionary()
    got = partition_batch([5, 6], [[], []], d, "longest", lambda s: 0)
    assert got.lines == ["A\t5\t\t", "A\t6\t\t"] and got.starts.tolist() == [0, 0, 0] and not len(got.ids)


def test_stable_order_equals_a_stable_argsort():
    rng = np.random.default_rng(3)
    for high in (1, 5, 1000, 1 << 40, 1 << 62):  # the last one does not pack with its index: the argsort itself
        key = rng.integers(0, high, int(rng.integers(0, 5000)))
        order, ordered = _stable_order(key)
        assert np.array_equal(order, np.argsort(key, kind="stable")) and np.array_equal(ordered, key[order])


@pytest.mark.parametrize("seed, phrase_match, entries", [(1, "longest", None), (2, "paper", None),
                                                        (3, "longest", None), (4, "longest", 60),
                                                        (5, "paper", 150)])
def test_one_pass_articles_equal_the_spooled_ones(tmp_path, seed, phrase_match, entries, monkeypatch):
    """The direct engine's single pass (no spool file; each text under its first page, relabelled
    to its smallest doc id afterwards; groups keyed by sorted ids) against the two passes the jobs
    use: the same partitions.tsv byte for byte, duplicate pairs, groups and counts, with pages in
    random order so that a text's first page is often not its representative, and with texts of
    one immutable or none among them; also with the immutables numbered in generations."""
    from test_spin import _copies_corpus

    pages = _copies_corpus(seed)
    random.Random(seed).shuffle(pages)
    first: dict[str, list[int]] = {}
    for page in pages:
        first.setdefault(" ".join(page.words), []).append(page.doc_id)
    assert any(docs[0] != min(docs) for docs in first.values())  # a text to relabel
    d, params = _demo_dictionary(), SpinParams.model_validate({**PARAMS, "phrase_match": phrase_match})
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    if seed >= 3:
        monkeypatch.setattr(streaming, "BATCH_WORDS", 50)  # texts partitioned a few at a time
    if entries is not None:
        monkeypatch.setattr(direct, "VOCABULARY_ENTRIES", entries)  # a new generation every few batches
    spooled_counts, once_counts = Counter(), Counter()
    spooled = _articles_spooled(iter(pages), d, params, tmp_path / "a", tmp_path / "a" / "p.tsv", spooled_counts)
    writer = IdWriter(tmp_path / "b" / "ids.u32")
    once = _articles_once(iter(pages), d, params, tmp_path / "b" / "p.tsv", writer, once_counts)
    assert (tmp_path / "b" / "p.tsv").read_text() == (tmp_path / "a" / "p.tsv").read_text()
    assert once[0] == spooled[0] and once[0]  # duplicate pairs, in order
    assert sorted(map(sorted, once[1].values())) == sorted(map(sorted, spooled[1].values()))
    assert once_counts == spooled_counts and once_counts["skipped_one_immutable_or_less"] > 0
    assert (len(writer.generations) > 2) == (entries is not None)
    ids = writer.finish()
    lines = (tmp_path / "a" / "p.tsv").read_text().splitlines()
    assert ids.docs.tolist() == [int(line.split("\t")[1]) for line in lines]  # relabelled as the file
    words = ids.words.to_pylist()
    assert [[words[i] for i in ids.ids[a:b]] for a, b in zip(ids.starts[:-1], ids.starts[1:])] \
        == [line.split("\t")[2].split() for line in lines]
    assert list(tmp_path.glob("*/texts.tsv")) == []


def test_equal_sets_in_two_generations_are_one_group(tmp_path, monkeypatch):
    """Two texts with the same immutable set (the same words in another order), the second
    numbered in a later generation (other ids for the same strings): one group, as the spooled
    pass finds it; a third text with one immutable more is not in it."""
    from spamflow_spin.detector import Page

    d, params = _demo_dictionary(), SpinParams.model_validate(PARAMS)
    base = ["zebra", "quartz", "violin", "harbor", "meadow", "lantern"]
    filler = [[f"f{page}x{i}" for i in range(20)] for page in range(6)]
    texts = [base, *filler[:3], list(reversed(base)), *filler[3:], base + ["copper"]]
    pages = [Page(10 + i, f"http://h{i}/", f"h{i}", f"h{i}", [], words) for i, words in enumerate(texts)]
    monkeypatch.setattr(streaming, "BATCH_WORDS", 20)  # about a page a batch
    monkeypatch.setattr(direct, "VOCABULARY_ENTRIES", 30)
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    spooled = _articles_spooled(iter(pages), d, params, tmp_path / "a", tmp_path / "a" / "p.tsv", Counter())
    local: list[np.ndarray] = []
    writer = IdWriter(tmp_path / "b" / "ids.u32")
    add_ids = writer.add_ids
    writer.add_ids = lambda docs, ids, sizes: (local.append(np.sort(ids)), add_ids(docs, ids, sizes))
    once = _articles_once(iter(pages), d, params, tmp_path / "b" / "p.tsv", writer, Counter())
    assert len(writer.generations) >= 2 and not np.array_equal(local[0], local[4])  # other ids, same strings
    groups = sorted(map(sorted, once[1].values()))
    assert [10, 14] in groups and [18] in groups
    assert groups == sorted(map(sorted, spooled[1].values()))


@pytest.mark.slow
@pytest.mark.parametrize("entries", [None, 50])
def test_direct_engine_gives_the_mapreduce_engines_outputs(tmp_path, entries, monkeypatch):
    """The stage on both engines (inline runner), two snapshots of texts spun onto 5-20 hosts,
    verbatim and edited copies and unrelated pages: the same pairs, campaigns, hosts and counts,
    and the pairs of an exhaustive comparison of every page pair; also with the immutables
    numbered in generations of 50 (against the memory engine too)."""
    _page_table(tmp_path / "pages")
    jobs = _run(tmp_path / "pages", tmp_path / "mapreduce", {**PARAMS, "engine": "mapreduce"})
    if entries is not None:
        monkeypatch.setattr(direct, "VOCABULARY_ENTRIES", entries)
        monkeypatch.setattr(streaming, "BATCH_WORDS", 200)
        _same(_run(tmp_path / "pages", tmp_path / "memory", {**PARAMS, "engine": "memory"}), jobs)
    mine = _run(tmp_path / "pages", tmp_path / "direct", {**PARAMS, "engine": "direct"})
    _same(jobs, mine)
    assert mine[1]["engine_direct_snapshots"] == 2 and "engine_mapreduce_snapshots" not in mine[1]
    d, params = _demo_dictionary(), SpinParams.model_validate(PARAMS)
    pairs = [json.loads(line) for line in mine[0]["pairs"].splitlines()]
    for part, seed in enumerate((1, 2)):
        from test_spin import _copies_corpus
        expected = [(a + 1000 * part, b + 1000 * part, k)
                    for a, b, _, _, k in _reference_pairs(_copies_corpus(seed), d, params)]
        snapshot = ("2026-01", "2026-02")[part]
        assert sorted((p["doc_a"], p["doc_b"], p["kind"]) for p in pairs if p["snapshot"] == snapshot) \
            == sorted(expected)
    counts = Counter(mine[1])
    assert counts["candidate_pairs"] > 0 and counts["same_immutable_pairs"] > 100
    assert not list((tmp_path / "direct").rglob("direct-*")) and not list((tmp_path / "direct").rglob("ids.*"))
    for snapshot in ("2026-01", "2026-02"):  # the report's campaign immutables come from this file
        name = f"work/{snapshot}/immutables.tsv"
        assert (tmp_path / "direct" / name).read_text() == (tmp_path / "mapreduce" / name).read_text()


def test_auto_picks_direct_above_the_size_on_one_machine():
    on = {runner: [spin_engine("auto", RunSettings(runner=runner), n, 100) for n in (100, 101)]
          for runner in ("inline", "local", "spark", "hadoop")}
    assert on == {"inline": ["memory", "direct"], "local": ["memory", "direct"],
                  "spark": ["mapreduce", "mapreduce"], "hadoop": ["mapreduce", "mapreduce"]}
    assert spin_engine("mapreduce", RunSettings(runner="local"), 10**6, 100) == "mapreduce"
    assert spin_engine("memory", RunSettings(runner="spark"), 10**6, 100) == "memory"
    # the default direct_max_words: the 10^6-page scale web's snapshots (2.23 x 10^8 words, measured
    # at 3.64 GB on direct) run direct, larger ones (not measured) on the jobs
    default = SpinParams.model_fields["direct_max_words"].default
    assert [spin_engine("auto", RunSettings(runner="local"), 500_000, 0, words=words, direct_max_words=default)
            for words in (223_065_858, 3 * 10**8)] == ["direct", "mapreduce"]


def test_auto_leaves_direct_above_its_words_for_the_jobs(tmp_path):
    """``engine: auto`` with ``direct_max_words``: the page table's words a page come from its
    Parquet footers (checked against the lists' lengths, two files, several row groups); a
    snapshot estimated above the bound runs the MapReduce engine, one below it direct, with the
    same results."""
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    from spamflow_spin.detector import words_per_page

    _page_table(tmp_path / "pages")
    for part in (tmp_path / "pages").glob("*.parquet"):  # several row groups a file
        pq.write_table(pq.read_table(part), part, row_group_size=7)
    words = ds.dataset(tmp_path / "pages", format="parquet").to_table(columns=["words"])["words"]
    assert words_per_page(tmp_path / "pages") == pytest.approx(pc.mean(pc.list_value_length(words)).as_py(),
                                                                rel=1e-12)
    total = pc.sum(pc.list_value_length(words)).as_py()
    below = _run(tmp_path / "pages", tmp_path / "direct", {**PARAMS, "direct_max_words": total})
    above = _run(tmp_path / "pages", tmp_path / "jobs", {**PARAMS, "direct_max_words": total // 4})
    assert below[1]["engine_direct_snapshots"] == 2 and "engine_mapreduce_snapshots" not in below[1]
    assert above[1]["engine_mapreduce_snapshots"] == 2 and "engine_direct_snapshots" not in above[1]
    _same(below, above)
