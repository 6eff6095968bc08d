"""The page table stays the same on real data while parse gets faster: every column of every
real WARC in ../shared/data (and of ~1,340 real HTML pages) against checksums made with the
parse before the speed work (``tests/parse_reference.py`` says how they were made)."""

from __future__ import annotations

import json

import pytest
from parse_reference import REFERENCE, corpus, digests_of, sources_present


@pytest.mark.slow
def test_page_table_is_unchanged_on_real_data(tmp_path):
    if not sources_present():
        pytest.skip("needs ../shared/data (warc-samples and the three HTML collections); absent here")
    reference = json.loads(REFERENCE.read_text())
    files = corpus(tmp_path)
    assert sorted(f.name for f in files) == sorted(reference)
    differences = []
    for warc in files:
        now, then = digests_of(warc, tmp_path), reference[warc.name]
        for key in ("rows", "counts", "bad_records", "revisits"):
            if now[key] != then[key]:
                differences.append(f"{warc.name}: {key}: {now[key]} != {then[key]}")
        differences += [f"{warc.name}: column {name} differs" for name in then["columns"]
                        if now["columns"].get(name) != then["columns"][name]]
    assert not differences, "\n".join(differences)
