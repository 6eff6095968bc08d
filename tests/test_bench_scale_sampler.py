"""benchmarks/bench_scale.py's sampler charges a sample of temporary bytes to every stage
running then; a stage's verdict against its stated bound must say when another stage's data
was in its peak (the 10^6 run printed quilt "ABOVE" its bound with spin's data in the sum)."""
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_scale import Sampler, tmp_verdict  # noqa: E402


def test_sampler_names_the_stages_beside_each_peak(tmp_path: Path) -> None:
    stages, tmp = tmp_path / "stages", tmp_path / "tmp"
    (stages / ".quilt-aaaa.tmp-1").mkdir(parents=True)
    tmp.mkdir()
    (tmp / "scratch").write_bytes(b"x" * 1000)
    sampler = Sampler(os.getpid(), stages, tmp)
    sampler.start()
    try:
        _wait_for(lambda: sampler.peak_tmp.get("quilt") == 1000)
        (stages / ".spin-bbbb.tmp-2").mkdir()
        (stages / ".spin-bbbb.tmp-2" / "part").write_bytes(b"y" * 500)
        (tmp / "more").write_bytes(b"z" * 3000)
        _wait_for(lambda: sampler.peak_tmp.get("spin") == 4500)  # scratch 4000 + its folder's 500
    finally:
        sampler.done.set()
        sampler.join()
    assert sampler.peak_tmp["quilt"] == 4000
    assert sampler.tmp_beside == {"quilt": ["spin"], "spin": ["quilt"]}


def _wait_for(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the sampler did not see the bytes"
        time.sleep(0.1)


def test_verdict_within_above_and_shared() -> None:
    mib = 2**20
    within = tmp_verdict({"peak_tmp": 90 * mib, "tmp_beside": ["spin"]}, 10 * mib, "docs/quilt.md", 10)
    assert within == "temporary data: peak 90 MiB = 9.0x the input WARC bytes (within docs/quilt.md's bound of 10x)"
    above = tmp_verdict({"peak_tmp": 135 * mib, "tmp_beside": []}, 10 * mib, "docs/quilt.md", 10)
    assert above.endswith("(ABOVE docs/quilt.md's bound of 10x)")
    shared = tmp_verdict({"peak_tmp": 135 * mib, "tmp_beside": ["spin"]}, 10 * mib, "docs/quilt.md", 10)
    assert "13.5x" in shared and "with spin running beside it" in shared and "ABOVE" not in shared
    old = tmp_verdict({"peak_tmp": 135 * mib}, 10 * mib, "docs/quilt.md", 10)  # a result saved before the key
    assert old.endswith("(ABOVE docs/quilt.md's bound of 10x)")
