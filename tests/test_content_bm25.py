"""BM25 host vectors against the paper's formula computed directly, the vocabulary rule
against a brute-force count, and the temporal features on hand-made snapshot vectors."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pyarrow.dataset as ds
import pydantic
import pytest
import scipy.sparse as sp

from spamflow_content import temporal
from spamflow_content.corpus import CorpusStats
from spamflow_content.detector import featurise
from spamflow_content.params import ContentParams
from spamflow_content.text import STOP_WORDS, stem_words

from conftest import assert_close
from content_pages import page_row, write_pages

HOSTS = {
    "a.example": ["the casino games are running", "casino bonus casino games"],
    "b.example": ["garden roses and garden tools", "roses grow in the garden"],
    "c.example": ["cheap loans and casino bonus", "loans loans loans"],
    "d.example": ["history of the garden city", "city history museum"],
    "e.example": ["museum tickets and city tours"],
}
SNAPSHOT2 = {  # c.example is gone, a.example changed
    "a.example": ["casino casino poker bonus"],
    "b.example": ["garden roses and garden tools", "roses grow in the garden"],
    "d.example": ["history of the garden city", "city history museum"],
    "e.example": ["museum tickets and city tours", "city tours"],
}


def _rows() -> list[dict]:
    rows = []
    for snapshot, hosts in (("2026-01", HOSTS), ("2026-02", SNAPSHOT2)):
        for host, pages in hosts.items():
            for i, text in enumerate(pages):
                rows.append(page_row(f"http://{host}/" + ("" if i == 0 else f"p{i}.html"), text.split(),
                                     snapshot=snapshot))
    return rows


def _bags(hosts: dict[str, list[str]]) -> dict[str, Counter]:
    return {h: Counter(stem_words([w for p in pages for w in p.split() if w not in STOP_WORDS]))
            for h, pages in hosts.items()}


def test_stemming_and_stop_words():
    assert stem_words(["running", "casinos", "roses"]) == ["run", "casino", "rose"]
    assert "the" in STOP_WORDS and "casino" not in STOP_WORDS


def test_stemming_runs_without_pystemmers_cache_and_gives_its_stems():
    """Each batch's distinct words are stemmed once, so PyStemmer's cache only costs time
    (5.7x the stemming on bench_scale's pages): it is off, and the stems are those of a
    stemmer with the cache, over words stemmed twice and in batches larger than the cache."""
    import random

    import Stemmer

    from spamflow_content.text import _porter

    assert _porter().maxCacheSize == 0
    rng = random.Random(11)
    letters = "abcdefghilmnoprstuy"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(2, 11))) + rng.choice(["", "ing", "ies", "s", "ed"])
             for _ in range(30_000)]
    cached = Stemmer.Stemmer("porter")  # maxCacheSize 10,000
    for batch in (words[:15_000], words[10_000:], words):
        assert stem_words(batch) == cached.stemWords(batch)


def test_bm25_matches_the_formula(tmp_path):
    params = ContentParams(min_df=0.0, max_df=1.0, vocabulary_size=10_000, k1=1.2, b=0.75)
    dataset = ds.dataset(write_pages(_rows(), tmp_path / "pages"), format="parquet")
    result = featurise(dataset, tmp_path, params, None, Counter())
    hosts = (tmp_path / "bm25" / "hosts.txt").read_text().split()
    vocab = (tmp_path / "bm25" / "vocabulary.txt").read_text().split()
    assert hosts == sorted(set(HOSTS) | set(SNAPSHOT2))
    n_hosts = len(hosts)  # N fixed over snapshots
    matrices = []
    for snapshot, docs in (("2026-01", HOSTS), ("2026-02", SNAPSHOT2)):
        bags = _bags(docs)
        avdl = sum(sum(b.values()) for b in bags.values()) / len(bags)
        got = sp.load_npz(tmp_path / result.outputs[f"bm25_{snapshot}"]).toarray()
        matrices.append(sp.csr_matrix(got))
        assert got.shape == (n_hosts, len(vocab))
        for r, host in enumerate(hosts):
            for c, term in enumerate(vocab):
                bag = bags.get(host, Counter())
                tf = bag[term]
                n = sum(term in b for b in bags.values())
                idf = math.log((n_hosts - n + 0.5) / (n + 0.5))
                dl = sum(bag.values())
                big_k = 1.2 * ((1 - 0.75) + 0.75 * dl / avdl)
                expected = idf * (1.2 + 1) * tf / (big_k + tf) if tf else 0.0
                assert got[r, c] == pytest.approx(expected), (snapshot, host, term)
    ave = sp.load_npz(tmp_path / result.outputs["temporal_ave"]).toarray()
    assert ave == pytest.approx((matrices[0].toarray() + matrices[1].toarray()) / 2)
    assert "temporal_dev_diff" not in result.outputs  # needs three snapshots
    stats = CorpusStats.load(tmp_path / "corpus_stats.json")
    assert stats.vocabulary == vocab and stats.n_hosts == n_hosts and set(stats.idf) == {"2026-01", "2026-02"}


def test_vocabulary_is_the_most_frequent_terms_within_the_df_range(tmp_path):
    params = ContentParams(min_df=0.3, max_df=0.5, vocabulary_size=3)
    dataset = ds.dataset(write_pages([r for r in _rows() if r["snapshot"] == "2026-01"], tmp_path / "p"),
                         format="parquet")
    featurise(dataset, tmp_path, params, None, Counter())
    bags = _bags(HOSTS)
    df = Counter(t for b in bags.values() for t in b)
    cf = Counter()
    for b in bags.values():
        cf.update(b)
    eligible = [t for t in df if 0.3 * 5 <= df[t] <= 0.5 * 5]
    expected = sorted(eligible, key=lambda t: (-cf[t], t))[:3]
    assert (tmp_path / "bm25" / "vocabulary.txt").read_text().split() == expected


def test_incremental_scoring_reuses_the_saved_statistics(tmp_path):
    """Featurising with the saved corpus statistics gives the same BM25 weights and popular-word
    features as the run that saved them, when the corpus is the same."""
    params = ContentParams(min_df=0.0, max_df=1.0)
    rows = [r for r in _rows() if r["snapshot"] == "2026-01"]
    dataset = ds.dataset(write_pages(rows, tmp_path / "p"), format="parquet")
    (tmp_path / "full").mkdir()
    (tmp_path / "again").mkdir()
    full = featurise(dataset, tmp_path / "full", params, None, Counter())
    stats = CorpusStats.load(tmp_path / "full" / "corpus_stats.json")
    again = featurise(dataset, tmp_path / "again", params, stats, Counter())
    a = sp.load_npz(tmp_path / "full" / full.outputs["bm25_2026-01"]).toarray()
    b = sp.load_npz(tmp_path / "again" / again.outputs["bm25_2026-01"]).toarray()
    assert a == pytest.approx(b)
    import pyarrow.parquet as pq
    assert_close(pq.read_table(tmp_path / "full" / "hosts.parquet"), pq.read_table(tmp_path / "again" / "hosts.parquet"),
                 1e-12, "hosts.parquet")


def test_bad_corpus_stats_file_is_named(tmp_path):
    path = tmp_path / "stats.json"
    path.write_text('{"format": "something else"}')
    with pytest.raises(ValueError, match="stats.json is not a spamflow-content-corpus-stats/1 file"):
        CorpusStats.load(path)


def _m(rows: list[list[float]]) -> sp.csr_matrix:
    return sp.csr_matrix(np.array(rows, dtype=float))


def test_temporal_features_two_snapshots():
    t1, t2 = _m([[1.0, 0.0, 2.0]]), _m([[3.0, 1.0, 0.0]])
    assert temporal.ave([t1, t2]).toarray() == pytest.approx(np.array([[2.0, 0.5, 1.0]]))
    assert temporal.ave_diff([t1, t2]).toarray() == pytest.approx(np.array([[2.0, 1.0, 2.0]]))
    # Dev = 1/(2-1) * ((1-2)^2 + (3-2)^2), (0-.5)^2 + (1-.5)^2, (2-1)^2 + (0-1)^2
    assert temporal.dev([t1, t2]).toarray() == pytest.approx(np.array([[2.0, 0.5, 2.0]]))
    with pytest.raises(ValueError, match="DevDiff needs at least 3 snapshots"):
        temporal.dev_diff([t1, t2])
    lam = 0.5
    assert temporal.decay([t1, t2], lam).toarray() == pytest.approx(
        lam * math.exp(lam) * t1.toarray() + lam * t2.toarray())
    assert temporal.decay([t1, t2], lam, "decaying").toarray() == pytest.approx(
        lam * math.exp(-lam) * t1.toarray() + lam * t2.toarray())


def test_temporal_features_three_snapshots():
    t = [_m([[1.0, 4.0]]), _m([[2.0, 0.0]]), _m([[4.0, 0.0]])]
    # term 0: diffs 1, 2 -> AveDiff 1.5, DevDiff 1/(3-2) * (0.25 + 0.25) = 0.5
    # term 1: diffs 4, 0 -> AveDiff 2, DevDiff (4 + 4) = 8
    assert temporal.ave_diff(t).toarray() == pytest.approx(np.array([[1.5, 2.0]]))
    assert temporal.dev_diff(t).toarray() == pytest.approx(np.array([[0.5, 8.0]]))
    # Dev term 0: mean 7/3, ((1-7/3)^2 + (2-7/3)^2 + (4-7/3)^2) / 2
    assert temporal.dev(t).toarray()[0, 0] == pytest.approx(((4 / 3) ** 2 + (1 / 3) ** 2 + (5 / 3) ** 2) / 2)
    assert temporal.ave(t).toarray() == pytest.approx(np.array([[7 / 3, 4 / 3]]))
    assert temporal.decay(t, 1.0).toarray() == pytest.approx(
        np.array([[math.exp(2) * 1 + math.exp(1) * 2 + 4, math.exp(2) * 4]]))
    assert temporal.available(3) == ["ave", "ave_diff", "dev", "dev_diff", "decay"]
    assert temporal.available(1) == ["ave", "decay"]


def test_parameters_are_checked():
    with pytest.raises(pydantic.ValidationError, match=r"min_df \(0.6\) is above max_df \(0.5\)"):
        ContentParams(min_df=0.6)
    with pytest.raises(pydantic.ValidationError, match="decay_weight"):
        ContentParams(decay_weight="linear")
    with pytest.raises(pydantic.ValidationError, match="extra"):
        ContentParams(vocab_size=5)
