"""The 24 per-page measures on hand-worked pages, against plain-Python references of the
definitions and against values released with WEBSPAM-UK2007."""

from __future__ import annotations

import math
import zlib
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from spamflow.parse.pages import PAGE_SCHEMA
from spamflow_content.corpus import WordCounter
from spamflow_content.detector import featurise
from spamflow_content.measures import MEASURES, TOP_K, PopularTerms, page_measures
from spamflow_content.params import ContentParams
from spamflow_content.text import STOP_WORDS, load_query_terms

from content_pages import page_row, write_pages

FILLER = [f"filler{i}" for i in range(1200)]


def _table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=PAGE_SCHEMA)


def _ranked(placed: dict[str, int]) -> list[str]:
    """A 1,200-term popularity list with the given words at the given ranks (0-based)."""
    ranked = list(FILLER)
    for word, rank in sorted(placed.items(), key=lambda kv: kv[1]):
        ranked.insert(rank, word)
    return ranked


def test_hand_worked_page():
    words = "cheap loans cheap loans cheap loans the best".split()
    row = page_row("http://a.example/", words, title="Cheap Loans Today!", html_bytes=200,
                   links=[("http://b.example/", "Cheap loans"), ("http://c.example/", "")])
    popular = PopularTerms(corpus=_ranked({"cheap": 0, "loans": 150}), query=_ranked({"best": 600}))
    got = {k: float(v[0]) for k, v in page_measures(_table([row]), popular).items()}
    text = b"cheap loans cheap loans cheap loans the best"
    packer = zlib.compressobj(6, zlib.DEFLATED, -15)
    # worked by hand: 8 words, 7 of them not stop words ("the"); trigrams cl c, l c l, c l c, l c l, c l the, l the best
    expected = {
        "number_of_words": 8, "words_in_title": 3, "average_word_length": 37 / 8,
        "fraction_anchor_text": 2 / 8, "fraction_visible_text": 44 / 200,
        "compression_rate": len(text) / len(packer.compress(text) + packer.flush()),
        "corpus_precision_100": 3 / 7, "corpus_precision_200": 6 / 7, "corpus_precision_500": 6 / 7,
        "corpus_precision_1000": 6 / 7,
        "corpus_recall_100": 1 / 100, "corpus_recall_200": 2 / 200, "corpus_recall_500": 2 / 500,
        "corpus_recall_1000": 2 / 1000,
        "query_precision_100": 0, "query_precision_200": 0, "query_precision_500": 0, "query_precision_1000": 1 / 7,
        "query_recall_100": 0, "query_recall_200": 0, "query_recall_500": 0, "query_recall_1000": 1 / 1000,
        "trigram_entropy": 2 * (2 / 6) * math.log(3) + 2 * (1 / 6) * math.log(6),
        "independent_trigram_likelihood": (2 * math.log(3) + 2 * math.log(6)) / 6,
    }
    assert list(got) == list(MEASURES) and len(MEASURES) == 24
    assert got == pytest.approx(expected)


def test_released_uk2007_trigram_values_are_reproduced():
    """The first WEBSPAM-UK2007 training row with repeated trigrams (a 94-word home page) has
    trigram entropy 4.431378 and independent likelihood 4.181684; both are matched exactly by
    92 trigrams of which 6 occur twice, with the likelihood normalised by the 92 trigrams."""
    block = [f"b{i}" for i in range(8)]  # repeated: its 6 inner trigrams occur twice
    words = [f"u{i}" for i in range(39)] + block + [f"v{i}" for i in range(39)] + block
    assert len(words) == 94
    got = page_measures(_table([page_row("http://a.example/", words)]), PopularTerms(["x"], ["y"]))
    assert got["trigram_entropy"][0] == pytest.approx(4.431378, abs=1e-6)
    assert got["independent_trigram_likelihood"][0] == pytest.approx(4.181684, abs=1e-6)
    # all-distinct pages give ln(words - 2) for both, as in the released rows (62 words: 4.094345)
    got = page_measures(_table([page_row("http://a.example/", [f"w{i}" for i in range(62)])]), PopularTerms(["x"], ["y"]))
    assert got["trigram_entropy"][0] == pytest.approx(4.094345, abs=1e-6)
    assert got["independent_trigram_likelihood"][0] == pytest.approx(4.094345, abs=1e-6)


def _reference(words: list[str], ranked: list[str]) -> dict[str, float]:
    """Precision and recall straight from the definitions, in plain Python."""
    content = [w for w in words if w not in STOP_WORDS]
    out = {}
    for k in TOP_K:
        top = set(ranked[:k])
        out[f"precision_{k}"] = sum(w in top for w in content) / len(content) if content else 0.0
        out[f"recall_{k}"] = len(set(words) & top) / k
    return out


def _trigram_reference(words: list[str]) -> tuple[float, float]:
    grams = Counter(zip(words, words[1:], words[2:]))
    n = len(words) - 2
    if n <= 0:
        return 0.0, 0.0
    return (-sum(c / n * math.log(c / n) for c in grams.values()),
            -sum(math.log(c / n) for c in grams.values()) / n)


def test_corpus_and_query_precision_recall_on_a_tiny_corpus():
    rng = np.random.default_rng(7)
    vocab = [f"t{i}" for i in range(1500)] + ["the", "and", "of"]
    pages = [[vocab[int(j)] for j in rng.zipf(1.3, size=int(rng.integers(0, 300))) % len(vocab)] for _ in range(40)]
    pages[3] = ["the", "and"]  # only stop words: precision 0, recall counts them if popular
    ranked_corpus = [w for w, _ in Counter(w for p in pages for w in p if w not in STOP_WORDS).most_common()]
    ranked_query = list(reversed(vocab[:1200]))
    rows = [page_row(f"http://h{i}.example/", p) for i, p in enumerate(pages)]
    got = page_measures(_table(rows), PopularTerms(ranked_corpus, ranked_query))
    for i, words in enumerate(pages):
        for name, ranked in (("corpus", ranked_corpus), ("query", ranked_query)):
            ref = _reference(words, ranked)
            for k in TOP_K:
                assert got[f"{name}_precision_{k}"][i] == pytest.approx(ref[f"precision_{k}"])
                assert got[f"{name}_recall_{k}"][i] == pytest.approx(ref[f"recall_{k}"])
        entropy, likelihood = _trigram_reference(words)
        assert got["trigram_entropy"][i] == pytest.approx(entropy)
        assert got["independent_trigram_likelihood"][i] == pytest.approx(likelihood)


def test_empty_and_null_pages_give_zeros():
    rows = [page_row("http://a.example/", [], html_bytes=0), page_row("http://b.example/", ["a", "b"])]
    rows[0]["words"] = None
    rows[0]["links"] = None
    rows[0]["title"] = None
    got = page_measures(_table(rows), PopularTerms(["a"], ["b"]))
    assert all(got[m][0] == 0 for m in MEASURES)
    assert got["number_of_words"][1] == 2 and got["trigram_entropy"][1] == 0


def test_query_terms_file(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("# popular first\nCasino\n\nthe\ncasino\nloans\n", encoding="utf-8")
    assert load_query_terms(str(path)) == ["casino", "loans"]
    shipped = load_query_terms(None)
    assert len(shipped) == 1000 and not set(shipped) & STOP_WORDS
    empty = tmp_path / "empty.txt"
    empty.write_text("the\n")
    with pytest.raises(ValueError, match="empty.txt has no terms"):
        load_query_terms(str(empty))
    with pytest.raises(ValueError, match="cannot read .*missing.txt"):
        load_query_terms(str(tmp_path / "missing.txt"))


def test_corpus_words_are_ranked_by_occurrences_without_stop_words(tmp_path):
    """The stage's corpus list (WordCounter over batches) against a Counter over all pages,
    and the stage's corpus precision/recall against the definition with that list."""
    rng = np.random.default_rng(11)
    vocab = [f"t{i}" for i in range(2500)] + ["the", "of", "and"]
    pages = [[vocab[int(j) % len(vocab)] for j in rng.zipf(1.2, size=int(rng.integers(5, 400)))] for _ in range(60)]
    counts = Counter(w for p in pages for w in p if w not in STOP_WORDS)
    expected = sorted(counts, key=lambda w: (-counts[w], w))[:1000]
    counter = WordCounter()
    for start in range(0, 60, 7):  # several batches, as the stage sees them
        counter.add(pa.array([w for p in pages[start:start + 7] for w in p], pa.string()))
    assert counter.top(1000) == expected
    rows = [page_row(f"http://h{i}.example/", p) for i, p in enumerate(pages)]
    result = featurise(ds.dataset(write_pages(rows, tmp_path / "p"), format="parquet"), tmp_path, ContentParams(),
                       None, Counter())
    got = {r["url"]: r for r in pq.read_table(tmp_path / result.outputs["pages"]).to_pylist()}
    for row, words in zip(rows, pages):
        ref = _reference(words, expected)
        for k in TOP_K:
            assert got[row["url"]][f"corpus_precision_{k}"] == pytest.approx(ref[f"precision_{k}"])
            assert got[row["url"]][f"corpus_recall_{k}"] == pytest.approx(ref[f"recall_{k}"])


def test_corpus_measures_from_the_spilled_non_stop_word_ids_are_the_definitions():
    """The in-process stage's second pass: the corpus measures from each page's non-stop word
    ids and the batch's distinct words (``BatchWords.content_ids``, ``from_ids``), added to the
    first pass's other measures, against the plain-Python definitions."""
    from spamflow_content.batch_words import BatchWords
    from spamflow_content.page_batch import MEASURED_SCHEMA, text_measured_pages, with_corpus_measures

    rng = np.random.default_rng(11)
    vocab = [f"t{i}" for i in range(1500)] + ["the", "and", "of", "is"]
    pages = [[vocab[int(j)] for j in rng.zipf(1.3, size=int(rng.integers(0, 300))) % len(vocab)] for _ in range(30)]
    pages[2] = ["the", "and", "of"]  # only stop words
    pages[5] = []
    ranked_corpus = [w for w, _ in Counter(w for p in pages for w in p if w not in STOP_WORDS).most_common()]
    rows = [page_row(f"http://h{i}.example/", p) for i, p in enumerate(pages)]
    rows[7]["words"] = None  # a page without words
    table = _table(rows)
    words = BatchWords(table["words"])
    first = text_measured_pages(table, words, ["t3", "t1"])
    again = BatchWords.from_ids(words.content_ids(), words.distinct)
    got = with_corpus_measures(first, again, ranked_corpus)
    assert got.schema.equals(MEASURED_SCHEMA)
    whole = page_measures(table, PopularTerms(ranked_corpus, ["t3", "t1"]), words)
    for name in MEASURES:
        assert got[name].to_pylist() == whole[name].tolist(), name
    for i, page in enumerate(pages):
        ref = _reference(page if rows[i]["words"] is not None else [], ranked_corpus)
        for k in TOP_K:
            assert got[f"corpus_precision_{k}"][i].as_py() == pytest.approx(ref[f"precision_{k}"])
            assert got[f"corpus_recall_{k}"][i].as_py() == pytest.approx(ref[f"recall_{k}"])
