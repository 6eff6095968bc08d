"""``spamflow.mr.keyed_sort``: a shuffle of few long lines sorted by moving offsets gives the
same bytes as mrjob's ``LC_ALL=C sort -t '\\t' -k 1,1 -s``, and ``run_job_lean`` and
``run_job_compact`` sort spin's and quilt's shuffles with it on the local runner (the same
results as the inline runner)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess

import pytest
from spamflow_quilt.detector import find_quilts
from spamflow_quilt.params import QuiltParams
from test_quilt import _shingles, random_corpus
from test_spin import ONE_TASK, _random_sets

import spamflow.mr.driver as driver
from spamflow.mr.keyed_sort import sort_lines_by_key
from spamflow_spin.candidates import find_candidates

GNU_SORT = shutil.which("sort")


def _random_inputs(folder, seed, files=4):
    """Files of random lines: keys from a small alphabet (ties, prefixes, the empty key, bytes
    above 0x7f), some lines without a tab, some long, an empty file, and a last line without
    its newline."""
    rng = random.Random(seed)
    paths = []
    for number in range(files):
        lines = []
        for _ in range(0 if number == 1 else rng.randrange(1, 60)):
            key = bytes(rng.choice(b"ab\xe9\x00 ") for _ in range(rng.randrange(0, 4)))
            value = bytes(rng.choice(b"xyz\t") for _ in range(rng.choice((0, 3, 50, 3000))))
            lines.append(key if rng.random() < 0.1 else key + b"\t" + value)
        data = b"\n".join(lines) + (b"\n" if lines and rng.random() < 0.7 else b"")
        path = folder / f"part-{number}"
        path.write_bytes(data)
        paths.append(path)
    return paths


def _reference(paths):
    """The order by definition: lines of the files in turn, stably by field 1."""
    lines = [line for path in paths for line in _lines(path.read_bytes())]
    return b"".join(sorted(lines, key=lambda line: line.rstrip(b"\n").split(b"\t")[0]))


def _lines(data):
    parts = data.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return [part + b"\n" for part in parts]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("chunk_bytes", [1, 7, 4096, 1 << 26])
def test_same_bytes_as_gnu_sort(tmp_path, seed, chunk_bytes):
    paths = _random_inputs(tmp_path, seed)
    out = tmp_path / "sorted"
    assert sort_lines_by_key(paths, out, chunk_bytes=chunk_bytes)
    assert out.read_bytes() == _reference(paths)
    if GNU_SORT:
        gnu = subprocess.run([GNU_SORT, "-t", "\t", "-k", "1,1", "-s", *map(str, paths)], capture_output=True,
                             check=True, env={"LC_ALL": "C", "PATH": os.environ.get("PATH", "")})
        assert out.read_bytes() == gnu.stdout


def test_declines_past_max_lines_and_writes_nothing(tmp_path):
    path = tmp_path / "in"
    path.write_bytes(b"b\t1\na\t2\nc\t3")
    out = tmp_path / "sorted"
    assert not sort_lines_by_key([path], out, max_lines=2)
    assert not out.exists()
    assert sort_lines_by_key([path], out, max_lines=3)
    assert out.read_bytes() == b"a\t2\nb\t1\nc\t3\n"


def test_copies_through_a_buffer_where_the_kernel_cannot(tmp_path, monkeypatch):
    paths = _random_inputs(tmp_path, 11)

    def unsupported(*args, **kwargs):
        raise OSError("copy_file_range not supported here")

    monkeypatch.setattr(os, "copy_file_range", unsupported)
    out = tmp_path / "sorted"
    assert sort_lines_by_key(paths, out)
    assert out.read_bytes() == _reference(paths)


PARAMS = QuiltParams(k=3, m=5, c=2, theta=0.4, foreign="domain")


@pytest.mark.slow
@pytest.mark.parametrize("max_lines", [None, 1])  # 1: every shuffle is left to GNU sort
def test_quilt_jobs_sort_by_key_on_the_local_runner(tmp_path, monkeypatch, max_lines):
    pages = random_corpus(4)
    shingles = _shingles(pages, PARAMS.k, tmp_path / "shingles.tsv")
    expected = find_quilts(shingles, tmp_path / "inline", PARAMS, "inline")
    assert expected
    results = []

    def counted(input_paths, output_path):
        kwargs = {} if max_lines is None else {"max_lines": max_lines}
        results.append(sort_lines_by_key(input_paths, output_path, **kwargs))
        return results[-1]

    monkeypatch.setattr(driver, "sort_lines_by_key", counted)
    assert find_quilts(shingles, tmp_path / "local", PARAMS, "local") == expected
    assert len(results) == 4  # job (a), job (b), job (c)'s two steps
    assert all(results) if max_lines is None else not any(results)


def test_declines_an_input_of_many_short_lines_from_its_first_bytes(tmp_path):
    """Estimated from the first SAMPLE_BYTES: past twice max_lines it is not indexed at all."""
    path = tmp_path / "in"
    path.write_bytes(b"".join(b"k%d\tv\n" % (i % 97) for i in range(5000)))
    out = tmp_path / "sorted"
    assert not sort_lines_by_key([path], out, max_lines=100)
    assert not out.exists()
    assert sort_lines_by_key([path], out, max_lines=5000)
    assert out.read_bytes() == _reference([path])


def test_spin_candidate_jobs_sort_by_key_through_run_job_lean(tmp_path, monkeypatch):
    """run_job_lean (spin's jobs) sorts by key too; the candidates are those of the inline runner."""
    docs = _random_sets(3, n_docs=60)
    lines = tmp_path / "imm.tsv"
    lines.write_text("".join(f"{d}\t{' '.join(sorted(s))}\n" for d, s in docs.items()))
    expected = find_candidates(lines, tmp_path / "inline", threshold=0.5, max_pages=1000, min_shared=1,
                               runner="inline")
    results = []

    def counted(input_paths, output_path):
        results.append(sort_lines_by_key(input_paths, output_path))
        return results[-1]

    monkeypatch.setattr(driver, "sort_lines_by_key", counted)
    found = find_candidates(lines, tmp_path / "local", threshold=0.5, max_pages=1000, min_shared=1,
                            runner="local", runner_args=ONE_TASK)
    assert found == expected and expected.pairs
    assert len(results) == 3 and all(results)  # the frequency job, the pair job's two steps
