"""The ``noise_window`` option of the hss detector against the brute-force computation of
its definition: a page is fingerprinted over its first and last W n-grams (all of them when
it has at most 2W, and always with W = 0, the paper's preprocessing and the default)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import ValidationError

from spamflow_hss.fingerprint import fingerprint, fingerprint_hashes, matched_dimensions, orderings
from spamflow_hss.fingerprint_table import fingerprint_pages, fingerprint_pages_mapreduce, read_fingerprints
from spamflow_hss.mr_fingerprint import fingerprint_line
from spamflow_hss.ngram_hash import reference_ngram_hash
from spamflow_hss.noise_window import ngram_count, window_ngram_hashes
from spamflow_hss.params import HSSParams
from spamflow_hss.probing import cluster_fingerprints

ALPHABET = list('<>="/ \n\t-.;:&#«»\u00a0')


def _noise(rng: np.random.Generator, length: int) -> str:
    return "".join(rng.choice(ALPHABET, length))


def _by_definition(noise: str, n: int, window: int) -> list[int]:
    """The hashes of the n-grams starting at j with j < W or j >= (count - W), one by one."""
    count = len(noise) - n + 1
    return [reference_ngram_hash(noise[j:j + n], n) for j in range(max(count, 0))
            if window == 0 or j < window or j >= count - window]


@pytest.mark.parametrize("length", [0, 5, 8, 2 * 50 + 8 - 2, 2 * 50 + 8 - 1, 2 * 50 + 8, 2 * 50 + 9, 400])
@pytest.mark.parametrize("window", [0, 1, 50])
def test_window_hashes_are_the_first_and_last_w_ngrams(length, window):
    # n = 8: a page has length - 7 n-grams; the lengths straddle count = 2W (length 107 for W = 50)
    noise = _noise(np.random.default_rng(length + window), length)
    got = window_ngram_hashes(noise, 8, window).tolist()
    assert sorted(got) == sorted(_by_definition(noise, 8, window))
    assert len(got) == min(max(length - 7, 0), 2 * window if window else length)
    assert ngram_count(noise, 8) == max(length - 7, 0)


def test_window_zero_is_the_paper_and_a_negative_window_is_refused():
    noise = _noise(np.random.default_rng(1), 3000)
    assert fingerprint(noise, 32, 128, 5).tolist() == fingerprint(noise, 32, 128, 5, window=0).tolist()
    assert fingerprint(noise, 32, 128, 5, window=2000).tolist() == fingerprint(noise, 32, 128, 5).tolist()  # 2969 n-grams
    with pytest.raises(ValueError, match="window"):
        window_ngram_hashes(noise, 32, -1)
    with pytest.raises(ValidationError, match="noise_window"):
        HSSParams(noise_window=-1)
    assert HSSParams().noise_window == 0


@pytest.mark.slow
def test_a_page_with_a_huge_content_block_joins_its_template_only_with_a_window():
    """Two pages of one template (5,000 noise characters before the content, 5,000 after)
    around unrelated 40,000-character content blocks.  Whole-noise n-gram sets: Jaccard
    about 10,000 / 90,000 = 0.11 (n-grams of random text over 16 characters never repeat by
    chance), below t = 35 of 128.  With W = 4,000 both pages keep template n-grams only: the
    same set, Sim_b = 1.  A third page with its own template matches neither."""
    rng = np.random.default_rng(7)
    head, tail = _noise(rng, 5000), _noise(rng, 5000)
    pages = [head + _noise(rng, 40000) + tail for _ in range(2)] + [_noise(rng, 50000)]
    n, m = 32, 128
    for window, joined in ((0, False), (4000, True)):
        sets = [set(_by_definition(p, n, window)) for p in pages]  # brute force, Python integers
        jaccard = len(sets[0] & sets[1]) / len(sets[0] | sets[1])
        fps = np.stack([fingerprint(p, n, m, 0, window) for p in pages])
        estimate = int(matched_dimensions(fps[0], fps[1])) / m
        assert abs(estimate - jaccard) <= 4 * np.sqrt(jaccard * (1 - jaccard) / m) + 2 / m
        labels = cluster_fingerprints(fps, k=1, p=20, t=35)
        assert bool(labels[0] == labels[1]) == joined and labels[2] not in (labels[0], labels[1])
    assert jaccard == 1.0


def test_fingerprint_tables_and_the_mapreduce_job_apply_the_window(tmp_path):
    rng = np.random.default_rng(11)
    noises = [_noise(rng, int(length)) for length in rng.integers(0, 900, 24)]
    pq.write_table(pa.table({
        "doc_id": pa.array(np.arange(24) * 7 + 1, pa.int64()), "snapshot": ["2026-01"] * 24,
        "url": [f"http://h{i}.example/" for i in range(24)], "host": [f"h{i}.example" for i in range(24)],
        "domain": [f"h{i}.example" for i in range(24)], "ip": [None] * 24, "noise": noises}), tmp_path / "p.parquet")
    window, n, m = 100, 32, 64
    fingerprint_pages([tmp_path / "p.parquet"], tmp_path / "local", n, m, 3, window=window)
    fingerprint_pages_mapreduce([tmp_path / "p.parquet"], tmp_path / "mr", tmp_path / "work", n, m, 3, "inline",
                                window=window)
    expected = np.stack([fingerprint_hashes(np.array(_by_definition(x, n, window), np.uint64), orderings(m, 3))
                         for x in noises])
    for folder in ("local", "mr"):
        table = pq.read_table(tmp_path / folder / "part-00000.parquet")
        assert np.array_equal(read_fingerprints(table, m), expected)
        assert table.column("ngrams").to_pylist() == [max(len(x) - n + 1, 0) for x in noises]  # every n-gram
    doc_id, value = fingerprint_line("5\t" + json.dumps(noises[0]), n, m, 3, window)
    assert value.split("\t")[1] == expected[0].astype(">u8").tobytes().hex()


def test_the_stage_passes_noise_window_to_both_fingerprinting_paths(tmp_path):
    """Four pages of one template around unrelated 40,000-character content blocks, on four
    domains, and two unrelated pages: one cluster of the four with noise_window 4000 (in
    process and with the mrjob job), none with the default."""
    from spamflow.detector import StageContext, StageOutputs
    from spamflow_hss.detector import HSSDetector

    rng = np.random.default_rng(5)
    head, tail = _noise(rng, 5000), _noise(rng, 5000)
    noises = [head + _noise(rng, 40000) + tail for _ in range(4)] + [_noise(rng, 50000) for _ in range(2)]
    hosts = [f"h{i}.example" for i in range(6)]
    (tmp_path / "pages").mkdir()
    pq.write_table(pa.table({
        "doc_id": pa.array(np.arange(6) + 100, pa.int64()), "snapshot": ["2026-01"] * 6,
        "url": [f"http://{h}/" for h in hosts], "host": hosts, "domain": hosts, "ip": [None] * 6,
        "noise": noises}), tmp_path / "pages" / "part-00000.parquet")
    parse = StageOutputs("parse", tmp_path, {"pages": tmp_path / "pages"}, {})
    paper = {"noise": "paper"}  # the noise strings here are the whole page's (no tags to keep)
    for name, params in (("default", HSSParams(**paper)), ("window", HSSParams(noise_window=4000, **paper)),
                         ("window-mr", HSSParams(noise_window=4000, mapreduce=True, **paper))):
        outdir = tmp_path / name
        outdir.mkdir()
        result = HSSDetector().run(StageContext(params, {"parse": parse}, outdir))
        clusters = [json.loads(line) for line in open(outdir / result.outputs["clusters"])]
        expected = [] if name == "default" else [[100, 101, 102, 103]]
        assert [sorted(c["members"]) for c in clusters] == expected
        assert result.counts["noise_chars"] == sum(map(len, noises))
