"""The content stage looks batches up against the corpus through a ``KeyIndex`` built once:
its answers are ``pc.index_in``'s (first occurrence, -1 when absent or null), and over a
whole in-process run no batch is looked up against a corpus-sized set again (that made the
stage's cost batches × pages: ~0.4 s a batch at 10^6 pages)."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest

import spamflow_content.detector as detector
from spamflow_content.detector import featurise
from spamflow_content.key_index import KeyIndex
from spamflow_content.params import ContentParams
from spamflow_content.sampling import in_degrees

from content_pages import page_row, write_pages


def _brute(keys: list, values: list) -> list[int]:
    return [-1 if v is None or v not in keys else keys.index(v) for v in values]


@pytest.mark.parametrize("kind", ["int", "str"])
def test_positions_are_index_in_with_first_occurrence_and_minus_one(kind):
    rng = random.Random(7)
    make = (lambda i: i * 3 - 40) if kind == "int" else (lambda i: f"2026-01\thttp://h{i}.example/")
    keys = [make(rng.randrange(60)) for _ in range(80)] + [make(5), make(5)]  # duplicates
    values = [make(rng.randrange(90)) for _ in range(200)] + [None, make(5)]  # absent ones and a null
    typ = pa.int64() if kind == "int" else pa.string()
    index = KeyIndex(pa.chunked_array([pa.array(keys[:30], typ), pa.array(keys[30:], typ)]))
    got = index.positions(pa.array(values, typ))
    assert got.tolist() == _brute(keys, values)
    assert got.tolist() == pc.index_in(pa.array(values, typ), value_set=pa.array(keys, typ)).fill_null(-1).to_pylist()
    assert index.contains(pa.array(values, typ)).tolist() == [v is not None and v in keys for v in values]
    assert len(index) == len(keys)
    few = values[:9] + [None]  # fewer values than keys: strings are looked up one by one, not by pc.index_in
    assert index.positions(pa.array(few, typ)).tolist() == _brute(keys, few)


def test_in_degrees_counts_links_from_other_pages_as_by_hand():
    pages = [f"s\thttp://h{i}.example/" for i in range(6)]
    # (target, linking page): a self-link, a repeated link, a link to no page
    links = [(pages[1], 0), (pages[1], 0), (pages[1], 1), (pages[2], 5), ("s\thttp://nowhere/", 3), (pages[0], 2)]
    batches = [(pa.array([t for t, _ in links[:3]]), np.array([s for _, s in links[:3]])),
               (pa.array([t for t, _ in links[3:]]), np.array([s for _, s in links[3:]]))]
    expected = Counter(pages.index(t) for t, s in links if t in pages and pages.index(t) != s)
    assert in_degrees(KeyIndex(pa.array(pages)), batches).tolist() == [expected[i] for i in range(6)]


def _corpus(folder, hosts: int = 50, per_host: int = 50):
    words = [f"w{i}" for i in range(40)]
    rng = random.Random(3)
    rows = []
    for h in range(hosts):
        for p in range(per_host):
            url = f"http://h{h}.example/" + ("" if p == 0 else f"p{p}.html")
            links = [(f"http://h{rng.randrange(hosts)}.example/p{rng.randrange(1, per_host)}.html", "x")
                     for _ in range(3)]
            rows.append(page_row(url, rng.sample(words, 12), links=links))
    return ds.dataset(write_pages(rows, folder), format="parquet"), len(rows)


def test_a_run_never_looks_a_batch_up_against_the_whole_corpus(tmp_path, monkeypatch):
    dataset, n_pages = _corpus(tmp_path / "pages")
    sizes: list[int] = []
    for name in ("index_in", "is_in"):
        real = getattr(pc, name)

        def spy(values, *args, _real=real, **kwargs):
            value_set = kwargs.get("value_set", args[0] if args else None)
            if value_set is not None and len(values) < len(value_set):  # else hashing the set costs what
                sizes.append(len(value_set))  # hashing the values does: linear (the links gathered)
            return _real(values, *args, **kwargs)

        monkeypatch.setattr(pc, name, spy)
    monkeypatch.setattr(detector, "BATCH_ROWS", 128)  # ~20 batches a pass
    # fixed-size sets (the stop words, the 1,000 popular query terms) are fine: 2,500 pages
    # are more than twice the largest
    out = tmp_path / "out"
    out.mkdir()
    featurise(dataset, out, ContentParams(), None, Counter())
    assert sizes, "the spy saw no lookups: the test no longer watches the stage"
    assert max(sizes) < n_pages / 2, f"a batch was looked up against {max(sizes)} keys ({n_pages} pages)"
