"""The content stage's per-batch fast paths against the per-occurrence or per-string code they
replaced: a batch's words encoded once (``batch_words.BatchWords``), titles and anchors counted
over the column's bytes (``measures.word_counts``), trigrams sorted on one key, unique by a sort."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from spamflow.words import words as split_words
from spamflow_content import bm25
from spamflow_content.batch_words import BatchWords, unique_sorted
from spamflow_content.measures import _distinct_trigrams, word_counts
from spamflow_content.text import STOP_WORDS, stem_words

TEXTS = ["", "Hello, world!", "  lead and trail  ", "a-b_c'd", "x", "...", "Don't re-use e-mail_addresses!",
         "Ärger über 3,5 Mio. Straße", "Cafe\u0301 au lait", "हिन्दी भाषा, Cafe", "𑀅𑀲𑁄𑀓 (Brahmi)", "ÀB12cd 9",
         "tab\tnew\nline", "UPPER lower MiXeD 42"]


def _lists(seed: int, pages: int = 60) -> pa.ListArray:
    """Pages of words, a few without words (null) or empty, stop words among them."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(80)] + ["the", "and", "of", "running", "runs", "ponies", "é", "über"]
    rows: list[list[str] | None] = []
    for _ in range(pages):
        roll = rng.random()
        rows.append(None if roll < 0.05 else [] if roll < 0.1 else [rng.choice(vocab) for _ in range(rng.randrange(1, 40))])
    return pa.array(rows, pa.list_(pa.string()))


def test_word_counts_are_the_word_rule_on_every_string():
    texts = TEXTS * 3 + [None]
    expected = [len(split_words(t)) if t else 0 for t in texts]
    assert word_counts(pa.array(texts, pa.string())).tolist() == expected
    chunked = pa.chunked_array([pa.array(texts[:7], pa.string()), pa.array(texts[7:], pa.string())])
    assert word_counts(chunked).tolist() == expected
    sliced = pa.array(["skip me", *texts], pa.string()).slice(1)  # an array with an offset
    assert word_counts(sliced).tolist() == expected
    assert word_counts(pa.array([], pa.string())).tolist() == []


def test_batch_words_lookups_are_the_per_occurrence_ones():
    lists = _lists(1)
    words = BatchWords(lists)
    flat = pc.list_flatten(words.lists)
    assert words.n_pages == len(lists) and len(words) == len(flat)
    assert words.distinct.take(pa.array(words.ids)).to_pylist() == flat.to_pylist()
    assert words.parent.tolist() == pc.list_parent_indices(words.lists).to_pylist()
    assert words.stop[words.ids].tolist() == [w in STOP_WORDS for w in flat.to_pylist()]
    assert dict(zip(words.distinct.to_pylist(), words.counts().tolist())) == Counter(flat.to_pylist())
    ranked = pa.array(["w3", "runs", "the", "w70"], pa.string())
    assert words.ranks(ranked).tolist() == pc.index_in(flat, value_set=ranked).fill_null(-1).to_pylist()
    lengths = np.asarray(pc.utf8_length(words.distinct))
    by_page = [sum(len(w) for w in page or []) for page in lists.to_pylist()]
    assert words.per_page(lengths).tolist() == by_page


def test_terms_of_an_encoded_batch_are_those_of_each_occurrence():
    """``term_occurrences`` on encoded words: per non-stop occurrence, in order, its document and
    its Porter stem; the names are the distinct stems in first-occurrence order."""
    lists = _lists(2)
    doc_of_page = np.arange(len(lists)) % 7
    docs, terms, names = bm25.term_occurrences(BatchWords(lists), doc_of_page)
    expected = [(int(doc_of_page[p]), w) for p, page in enumerate(lists.to_pylist()) for w in page or []
                if w not in STOP_WORDS]
    stems = stem_words([w for _, w in expected])
    assert docs.tolist() == [d for d, _ in expected]
    assert names.take(pa.array(terms)).to_pylist() == stems
    assert names.to_pylist() == list(dict.fromkeys(stems))
    again = bm25.term_occurrences(lists, doc_of_page)  # a words column: encoded inside
    assert again[0].tolist() == docs.tolist() and again[1].tolist() == terms.tolist() and again[2].equals(names)


@pytest.mark.parametrize("seed", range(4))
def test_trigrams_on_one_key_are_the_four_key_sort(seed):
    rng = np.random.default_rng(seed)
    n = 3000
    page = np.sort(rng.integers(0, 40, n))
    a, b, c = (rng.integers(0, 6, n) for _ in range(3))  # few words: many repeated trigrams
    one_key = _distinct_trigrams(page, a, b, c, 6)
    four_keys = _distinct_trigrams(page, a, b, c, 2**21)  # (2^21)^3 = 2^63 does not fit: the lexsort path
    runs = _distinct_trigrams(page, a, b, c, 2**20)  # 2^60 a page: one key over runs of 7 pages
    assert one_key[0].tolist() == four_keys[0].tolist() and one_key[1].tolist() == four_keys[1].tolist()
    assert one_key[0].tolist() == runs[0].tolist() and one_key[1].tolist() == runs[1].tolist()
    counts = Counter(zip(page.tolist(), a.tolist(), b.tolist(), c.tolist()))
    assert list(zip(one_key[0].tolist(), one_key[1].tolist())) == [(k[0], float(counts[k])) for k in sorted(counts)]


def test_unique_sorted_is_np_unique():
    rng = np.random.default_rng(9)
    for values in (rng.integers(-50, 50, 1000), np.zeros(0, np.int64), np.array([7]), rng.integers(0, 2**40, 300)):
        assert unique_sorted(values.astype(np.int64)).tolist() == np.unique(values).tolist()


@pytest.mark.parametrize("keep", [None, "some"])
def test_words_read_dictionary_encoded_give_the_encoding_of_the_strings(tmp_path, keep):
    """``BatchWords`` of the words as the stage reads them (Parquet dictionaries, several row
    groups and files in a batch, pages filtered out or not, null and empty pages) against
    ``pc.dictionary_encode`` of the same words read as strings."""
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    from spamflow_content.detector import _batches, _words_as_read

    for part in range(3):
        lists = _lists(10 + part, pages=90)
        table = pa.table({"doc_id": pa.array(range(part * 90, part * 90 + 90), pa.int64()), "words": lists})
        pq.write_table(table, tmp_path / f"part-{part:05d}.parquet", row_group_size=25)
    plain = ds.dataset(tmp_path, format="parquet")
    read = _words_as_read(plain)
    assert pa.types.is_dictionary(read.schema.field("words").type.value_type)
    filter_ = None if keep is None else pc.field("doc_id").isin(pa.array(range(1, 270, 3), pa.int64()))
    got = list(_batches(read, ["words"], filter_, 0, "", False))
    want = list(_batches(plain, ["words"], filter_, 0, "", False))
    assert len(got) == len(want) > 0
    for a, b in zip(got, want):
        x, y = BatchWords(a["words"]), BatchWords(b["words"])
        encoded = pc.dictionary_encode(pc.list_flatten(y.lists))
        assert x.distinct.equals(encoded.dictionary) and x.ids.tolist() == encoded.indices.to_pylist()
        assert x.lists.equals(y.lists) and x.parent.tolist() == y.parent.tolist()
