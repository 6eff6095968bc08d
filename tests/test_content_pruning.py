"""The content stage keeps only the terms BM25 may use (document frequency within
[min_df, max_df], or the saved vocabulary when scoring incrementally) in its documents × terms
matrix, on both engines, and its outputs are those of the full-vocabulary computation: the
vocabulary, the document lengths (which count every term, kept or not) and the BM25 weights
computed by hand with the formula over a corpus where most terms are rare."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.dataset as ds
import pytest
import scipy.sparse as sp

import spamflow_content.detector as detector
from spamflow.detector import RunSettings
from spamflow_content.corpus import CorpusStats
from spamflow_content.detector import featurise
from spamflow_content.params import ContentParams
from spamflow_content.text import STOP_WORDS, stem_words

from content_pages import page_row, write_pages

COMMON = ["garden", "roses", "casino", "museum", "tickets", "poker", "loans", "history"]
N_HOSTS = 12
SNAPSHOTS = ("2026-01", "2026-02")


def _texts() -> dict[tuple[str, str], list[str]]:
    """Per (snapshot, host), its pages' texts: common words on some hosts, each host with 30
    words of its own (document frequency 1: below any min_df > 1/12), and one host (h11) with
    nothing but its own words, so it has a length and no kept term."""
    texts: dict[tuple[str, str], list[str]] = {}
    for s, snapshot in enumerate(SNAPSHOTS):
        for h in range(N_HOSTS):
            host = f"h{h}.example"
            common = [] if h == 11 else [w for i, w in enumerate(COMMON) if (h + i + s) % 3 != 0]
            rare = [f"zq{h}x{i}y{s}" for i in range(30)]
            texts[(snapshot, host)] = [" ".join(common + rare[:15] + common[:2]), " ".join(rare[15:] + common[:h % 4])]
    return texts


def _dataset(folder: Path, snapshots: tuple[str, ...] = SNAPSHOTS) -> ds.Dataset:
    rows = [page_row(f"http://{host}/" + ("" if i == 0 else f"p{i}.html"), text.split(), snapshot=snapshot)
            for (snapshot, host), pages in _texts().items() if snapshot in snapshots
            for i, text in enumerate(pages)]
    return ds.dataset(write_pages(rows, folder), format="parquet")


def _bags() -> dict[tuple[str, str], Counter]:
    return {key: Counter(stem_words([w for p in pages for w in p.split() if w not in STOP_WORDS]))
            for key, pages in _texts().items()}


def _expected(min_df: float, max_df: float, size: int) -> tuple[list[str], dict[str, np.ndarray]]:
    """The vocabulary over all terms, and the BM25 matrices by the formula, by hand."""
    bags = _bags()
    hosts = sorted({h for _, h in bags})
    df = Counter(t for b in bags.values() for t in b)
    cf: Counter = Counter()
    for b in bags.values():
        cf.update(b)
    n_docs = sum(1 for b in bags.values() if b)
    vocab = sorted((t for t in df if min_df * n_docs <= df[t] <= max_df * n_docs), key=lambda t: (-cf[t], t))[:size]
    matrices = {}
    for snapshot in SNAPSHOTS:
        docs = {h: bags[(snapshot, h)] for h in hosts}
        avdl = sum(sum(b.values()) for b in docs.values()) / len(docs)
        m = np.zeros((len(hosts), len(vocab)))
        for r, h in enumerate(hosts):
            dl = sum(docs[h].values())
            for c, term in enumerate(vocab):
                tf = docs[h][term]
                n = sum(term in b for b in docs.values())
                idf = math.log((len(hosts) - n + 0.5) / (n + 0.5))
                m[r, c] = idf * 2.2 * tf / (1.2 * (0.25 + 0.75 * dl / avdl) + tf) if tf else 0.0
        matrices[snapshot] = m
    return vocab, matrices


def _run(dataset: ds.Dataset, out: Path, params: ContentParams, runner: str | None, monkeypatch,
         stats: CorpusStats | None = None):
    """One content run; returns its result and the term counts BM25 was given."""
    given = []
    write = detector._write_bm25

    def spy(term_counts, *args, **kwargs):
        given.append(term_counts)
        return write(term_counts, *args, **kwargs)

    monkeypatch.setattr(detector, "_write_bm25", spy)
    out.mkdir(parents=True)
    settings = None if runner is None else RunSettings(runner=runner, progress=False)
    result = featurise(dataset, out, params, stats, Counter(), mapreduce=settings)
    return result, given[0]


@pytest.mark.parametrize("runner", [None, "inline"])
def test_matrix_holds_only_eligible_terms_and_outputs_are_the_full_computation(runner, tmp_path, monkeypatch):
    params = ContentParams(min_df=0.25, max_df=0.75, vocabulary_size=5)
    result, counts = _run(_dataset(tmp_path / "pages"), tmp_path / "out", params, runner, monkeypatch)
    vocab, matrices = _expected(0.25, 0.75, 5)
    bags = _bags()
    n_docs = sum(1 for b in bags.values() if b)
    df = Counter(t for b in bags.values() for t in b)
    eligible = {t for t in df if 0.25 * n_docs <= df[t] <= 0.75 * n_docs}
    assert len(df) > 10 * len(eligible)  # most terms are rare ...
    assert sorted(counts.terms) == sorted(eligible)  # ... and never enter the matrix
    assert counts.tf.shape[1] == len(eligible)
    # every term counts in a document's length, kept or not (h11 has no kept term at all)
    hosts = sorted({h for _, h in bags})
    lengths = [sum(bags[(s, h)].values()) for s in SNAPSHOTS for h in hosts]
    assert counts.lengths.tolist() == lengths
    assert (tmp_path / "out" / "bm25" / "vocabulary.txt").read_text().split() == vocab
    for snapshot in SNAPSHOTS:
        got = sp.load_npz(tmp_path / "out" / result.outputs[f"bm25_{snapshot}"]).toarray()
        assert np.allclose(got, matrices[snapshot], rtol=1e-12, atol=1e-15), snapshot


@pytest.mark.parametrize("runner", [None, "inline"])
def test_incremental_keeps_the_saved_vocabulary_even_if_rare_here(runner, tmp_path, monkeypatch):
    """Statistics saved with min_df 0 have rare terms in their vocabulary; scoring the same
    corpus against them keeps exactly those terms (whatever this run's min_df) and gives the
    same weights as the run that saved them (one snapshot: scoring uses the latest IDF)."""
    dataset = _dataset(tmp_path / "pages", SNAPSHOTS[:1])
    first, _ = _run(dataset, tmp_path / "full", ContentParams(min_df=0.0, max_df=1.0, vocabulary_size=40),
                    None, monkeypatch)
    stats = CorpusStats.load(tmp_path / "full" / "corpus_stats.json")
    df = Counter(t for (snapshot, _), b in _bags().items() if snapshot == SNAPSHOTS[0] for t in b)
    assert any(df[t] == 1 for t in stats.vocabulary)
    again, counts = _run(dataset, tmp_path / "again", ContentParams(min_df=0.5), runner, monkeypatch, stats)
    assert sorted(counts.terms) == sorted(stats.vocabulary)
    for snapshot in SNAPSHOTS[:1]:
        a = sp.load_npz(tmp_path / "full" / first.outputs[f"bm25_{snapshot}"]).toarray()
        b = sp.load_npz(tmp_path / "again" / again.outputs[f"bm25_{snapshot}"]).toarray()
        assert np.allclose(a, b, rtol=1e-12, atol=1e-15), snapshot


def test_pair_counter_counts_the_given_terms_over_batches_as_a_plain_count():
    """PairCounter against a Counter of (document, term) over batches whose names (each batch's
    own distinct terms, in its own order) hold terms it was not given and a null."""
    import pyarrow as pa

    from spamflow_content.term_counts import KeptTerms, PairCounter

    rng = np.random.default_rng(7)
    given = sorted(f"t{i}" for i in range(0, 60, 2))  # the even terms only
    counter = PairCounter(given, n_docs=9)
    expected: Counter = Counter()
    lengths = np.zeros(9)
    for _ in range(5):
        names = [f"t{i}" for i in rng.permutation(60)[:25]] + [None]
        docs = rng.integers(0, 9, 400)
        terms = rng.integers(0, len(names) - 1, 400)  # never the null name
        counter.add(docs, terms, pa.array(names, pa.string()))
        np.add.at(lengths, docs, 1)
        expected.update((int(d), names[t]) for d, t in zip(docs, terms) if names[t] in given)
    counts = counter.term_counts(KeptTerms(min_df=0.0, max_df=1.0))
    got = {(int(d), counts.terms[t]): int(v) for d, t, v in zip(*sp.find(counts.tf))}
    assert got == dict(expected)
    assert counts.lengths.tolist() == lengths.tolist()  # every occurrence counts in the length


@pytest.mark.parametrize("capacity", [None, 1000, 600, 3])
def test_candidates_hold_every_eligible_term_and_few_others(capacity):
    """Candidates against document frequencies counted by brute force, on batches of pages of
    documents with Zipf-distributed terms: every term in at least ``min_df`` of the nonempty
    documents is a candidate, whatever the summary's capacity; a summary that can vouch for
    its terms (error below the threshold) leaves out every term whose summed chunk
    frequencies stay below it; one that cannot (3 terms) leaves the chunk rule alone."""
    import pyarrow as pa

    from spamflow_content import term_counts
    from spamflow_content.term_counts import Candidates

    rng = np.random.default_rng(3)
    n_docs, min_df = 40, 0.5
    pages = [(int(rng.integers(0, n_docs)), [f"t{int(j)}" for j in rng.zipf(1.4, size=int(rng.integers(1, 60)))])
             for _ in range(3000)]
    docs_of: dict[str, set[int]] = {}
    for doc, terms in pages:
        for t in terms:
            docs_of.setdefault(t, set()).add(doc)
    present = len({doc for doc, terms in pages if terms})
    eligible = {t for t, docs in docs_of.items() if len(docs) >= min_df * present}
    old_chunk = term_counts.CHUNK_PAGES
    term_counts.CHUNK_PAGES = 200  # 15 chunks of 200 pages
    try:
        candidates = Candidates(min_df, n_docs, len(pages), capacity=capacity)
        chunk_sums: Counter = Counter()
        for start in range(0, len(pages), 50):  # batches of 50 pages
            batch = pages[start:start + 50]
            names = sorted({t for _, terms in batch for t in terms})
            column = {t: i for i, t in enumerate(names)}
            docs = np.array([d for d, terms in batch for _ in terms], dtype=np.int64)
            terms = np.array([column[t] for _, ts in batch for t in ts], dtype=np.int64)
            candidates.add(len(batch), docs, terms, pa.array(names, pa.string()))
        for start in range(0, len(pages), 200):
            chunk: dict[str, set[int]] = {}
            for doc, terms in pages[start:start + 200]:
                for t in terms:
                    chunk.setdefault(t, set()).add(doc)
            chunk_sums.update({t: len(d) for t, d in chunk.items()})
        got = set(candidates.names())
    finally:
        term_counts.CHUNK_PAGES = old_chunk
    assert eligible <= got
    if capacity == 3:
        assert candidates._df_sums.error >= min_df * present
        assert len(got) > len({t for t in got if chunk_sums[t] >= min_df * present})  # the chunk rule alone
    else:
        assert candidates._df_sums.error < min_df * present
        assert got <= {t for t, n in chunk_sums.items() if n + candidates._df_sums.error >= min_df * present}
        assert len(got) < len(docs_of) / 4


def test_pair_counter_merges_many_times_as_a_plain_count(monkeypatch):
    """PairCounter folding pending batches into its sorted pairs over many merges (a merge
    every 200 pending pairs) against a Counter of (document, term): keys already held are
    added to in place, new ones inserted in order."""
    import pyarrow as pa

    from spamflow_content import term_counts
    from spamflow_content.term_counts import KeptTerms, PairCounter

    monkeypatch.setattr(term_counts, "MERGE_PAIRS", 200)
    rng = np.random.default_rng(17)
    given = [f"t{i:03d}" for i in range(300)]
    counter = PairCounter(given, n_docs=40)
    expected: Counter = Counter()
    for _ in range(60):
        names = [given[i] for i in rng.permutation(300)[:80]]
        docs = rng.integers(0, 40, 500)
        terms = rng.integers(0, len(names), 500)
        counter.add(docs, terms, pa.array(names, pa.string()))
        expected.update((int(d), names[t]) for d, t in zip(docs, terms))
    counts = counter.term_counts(KeptTerms(min_df=0.0, max_df=1.0))
    got = {(int(d), counts.terms[t]): int(v) for d, t, v in zip(*sp.find(counts.tf))}
    assert got == dict(expected)
