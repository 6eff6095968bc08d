"""The content stage's bounded word counter (``corpus.WordCounter``): a Misra-Gries summary
whose ranking of the corpus words stays exact, checked against ``collections.Counter``."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyarrow as pa
import pytest

from spamflow_content.corpus import WordCounter
from spamflow_content.text import STOP_WORDS


def _corpus(seed: int, pages: int = 300, vocabulary: int = 5000) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(vocabulary)] + ["the", "of", "and", "é", "z", "ß"]
    return [[vocab[int(j) % len(vocab)] for j in rng.zipf(1.3, size=int(rng.integers(5, 300)))] for _ in range(pages)]


def _batches(pages: list[list[str]], size: int = 7) -> list[pa.Array]:
    return [pa.array([w for p in pages[i:i + size] for w in p], pa.string()) for i in range(0, len(pages), size)]


def _expected(pages: list[list[str]], k: int) -> list[str]:
    counts = Counter(w for p in pages for w in p if w not in STOP_WORDS)
    return sorted(counts, key=lambda w: (-counts[w], w))[:k]


@pytest.mark.parametrize("capacity", [None, 1 << 21, 400, 60])
@pytest.mark.parametrize("k", [1, 10, 50])
def test_top_words_are_exact_whatever_the_capacity(capacity, k):
    """Small capacities cut words from the summary; the ranking is recounted and stays exact."""
    pages = _corpus(5)
    batches = _batches(pages)
    counter = WordCounter(capacity)
    for batch in batches:
        counter.add(batch)
    recounts = []

    def again():
        recounts.append(1)
        return iter(batches)

    summary = counter.counts()
    assert counter.top(k, again=again) == _expected(pages, k)
    if capacity is not None and capacity < 1000:
        assert counter.error > 0  # the corpus has ~2,000 distinct words: it was cut
        n, since = np.asarray(summary["n"]), np.asarray(summary["since"])
        kth = np.sort(n)[-k] if len(n) >= k else 0
        candidate = n + counter.error >= kth
        # a second pass only when the k-th count is no bound or a candidate's count is not exact
        assert recounts == ([1] if counter.error >= kth or since[candidate].any() else [])
    else:
        assert counter.error == 0 and recounts == []  # nothing cut: no second pass


def test_the_summary_keeps_the_misra_gries_bounds():
    """Every kept count is within [true - error, true]; a word not kept has at most ``error``
    occurrences; ``error`` is at most the occurrences / (capacity + 1); the summary holds at
    most ``capacity`` words once merged."""
    pages = _corpus(8, pages=500)
    capacity = 100
    counter = WordCounter(capacity)
    for batch in _batches(pages, size=3):
        counter.add(batch)
    truth = Counter(w for p in pages for w in p if w not in STOP_WORDS)
    kept = dict(zip(counter.counts()["word"].to_pylist(), counter.counts()["n"].to_pylist()))
    assert 0 < len(kept) <= capacity
    assert 0 < counter.error <= sum(truth.values()) / (capacity + 1)
    since = dict(zip(counter.counts()["word"].to_pylist(), counter.counts()["since"].to_pylist()))
    for word, n in truth.items():
        if word in kept:
            assert n - counter.error <= kept[word] <= n
            # held since the summary's error was `since`: it lost exactly error - since since then
            assert kept[word] + counter.error - since[word] <= n <= kept[word] + counter.error
            if since[word] == 0:
                assert n == kept[word] + counter.error
        else:
            assert n <= counter.error
    assert not set(kept) & STOP_WORDS
    assert 0 in since.values() and max(since.values()) > 0  # both kinds of key are checked


def test_a_cut_summary_needs_the_pages_again():
    counter = WordCounter(capacity=5)
    for batch in _batches(_corpus(2)):
        counter.add(batch)
    with pytest.raises(ValueError, match="give again"):
        counter.top(3)


def test_capacity_below_k_falls_back_to_counting_everything():
    """The k-th kept count is then no bound (fewer than k words kept): every word is recounted."""
    pages = _corpus(3)
    batches = _batches(pages)
    counter = WordCounter(capacity=20)
    for batch in batches:
        counter.add(batch)
    assert counter.top(40, again=lambda: iter(batches)) == _expected(pages, 40)


@pytest.mark.parametrize("late", [False, True])
def test_words_held_since_the_first_pages_need_no_recount(late):
    """Frequent words seen from the first pages are held through every cut, so their counts
    are exact and the ranking needs no second pass; a frequent word that first appears after
    the summary was cut (``late``) may have lost occurrences before it entered, so its
    candidates are recounted.  Both rank exactly."""
    rng = np.random.default_rng(5)
    frequent = [f"top{i}" for i in range(5)]
    pages = [frequent + [f"rare{rng.integers(10**6)}" for _ in range(40)] for _ in range(200)]
    if late:
        pages += [["latecomer"] * 400] + [[f"rare{rng.integers(10**6)}" for _ in range(40)] for _ in range(10)]
    batches = _batches(pages, size=20)
    counter = WordCounter(capacity=300)
    for batch in batches:
        counter.add(batch)
    recounts = []

    def again():
        recounts.append(1)
        return iter(batches)

    assert counter.top(5, again=again) == _expected(pages, 5)
    assert counter.error > 0 and recounts == ([1] if late else [])


@pytest.mark.parametrize("capacity", [5000, 50])
def test_the_stage_gives_the_same_outputs_when_its_counter_is_cut(tmp_path, monkeypatch, capacity):
    """The stage with a small counter against the default one (nothing cut): the same corpus
    words, page measures and host features.  5,000 words: the 1,000 words' candidates are
    recounted; 50: fewer than 1,000 kept, every word is recounted."""
    from collections import Counter as Counts

    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    from spamflow_content import detector
    from spamflow_content.corpus import CorpusStats
    from spamflow_content.params import ContentParams

    from content_pages import page_row, write_pages

    pages = _corpus(13, pages=600, vocabulary=20000)  # 7,577 distinct words
    rows = [page_row(f"http://h{i % 9}.example/p{i}", p) for i, p in enumerate(pages)]
    dataset = ds.dataset(write_pages(rows, tmp_path / "p"), format="parquet")
    made: list[WordCounter] = []

    def small_counter() -> WordCounter:
        made.append(WordCounter(capacity))
        return made[-1]

    outputs = {}
    for name in ("default", "cut"):
        if name == "cut":
            monkeypatch.setattr(detector, "WordCounter", small_counter)
        out = tmp_path / name
        out.mkdir()
        detector.featurise(dataset, out, ContentParams(), None, Counts())
        outputs[name] = (CorpusStats.load(out / "corpus_stats.json"), pq.read_table(out / "pages.parquet"),
                         pq.read_table(out / "hosts.parquet"))
    (stats, page_table, host_table), (cut_stats, cut_pages, cut_hosts) = outputs["default"], outputs["cut"]
    kept = np.asarray(made[0].counts()["n"])
    kth = np.sort(kept)[-1000] if len(kept) >= 1000 else 0
    assert made[0].error > 0 and (made[0].error < kth) == (capacity == 5000)  # the path the docstring says
    assert cut_stats.corpus_words == stats.corpus_words == _expected(pages, 1000)
    assert cut_pages.equals(page_table) and cut_hosts.equals(host_table)


def test_heaviest_over_parts_keeps_the_whole_tables_top_words():
    """The MapReduce driver reads the job's word counts (each word once, its whole count) in
    parts and keeps only ``heaviest`` of what it has read: the top words, ties by word, are
    those of the whole table."""
    from spamflow_content.corpus import heaviest, top_words

    rng = np.random.default_rng(21)
    words = [f"w{i}" for i in range(3000)] + sorted(STOP_WORDS)[:20]
    n = rng.zipf(1.5, size=len(words))
    whole = pa.table({"word": pa.array(words, pa.string()), "n": pa.array(n.astype(np.int64))})
    order = rng.permutation(len(words))
    for k in (1, 25, 400):
        kept = whole.slice(0, 0)
        for start in range(0, len(words), 128):
            part = whole.take(pa.array(order[start:start + 128]))
            kept = heaviest(pa.concat_tables([kept, part]), k)
        assert kept.num_rows < len(words) / 2
        assert top_words(kept, k) == top_words(whole, k) == [
            w for w, _ in sorted(((w, c) for w, c in zip(words, n.tolist()) if w not in STOP_WORDS),
                                 key=lambda wc: (-wc[1], wc[0]))[:k]]
