"""What `spamflow run` prints must be true and complete: every bad-record count of a stage
appears on its summary line, and progress bars follow docs/config.md (off when stderr is
not a terminal, on with --progress, off with --no-progress)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from spamflow.console import counts_text
from spamflow.crawl.loopback import LoopbackWeb, Reply
from spamflow.progress import progress_bar, progress_on

from warc_factory import Resp, html, write_warc

HOSTS = {"bar.test": "127.0.43.1"}


def _handler(host: str, path: str) -> Reply:
    if path == "/robots.txt":
        return Reply(status=404, headers={"Content-Type": "text/plain"})
    i = int(path.strip("/") or 0)
    nxt = f'<a href="/{i + 1}">next</a>' if i < 4 else ""
    return Reply(body=f"<html><title>{host} {i}</title><p>page {i}</p>{nxt}</html>".encode())


def _spamflow(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The CLI in a subprocess whose stdout and stderr are pipes (not terminals)."""
    return subprocess.run([sys.executable, "-m", "spamflow_workflows", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_counts_text_keeps_every_bad_count_and_says_what_it_left_out():
    counts = {f"c{i}": i for i in range(8)} | {"bad_cut_short": 1} | {"c8": 8, "bad_unreadable": 0}
    assert counts_text(counts, shown=6) == ("c0=0, c1=1, c2=2, c3=3, c4=4, c5=5, bad_cut_short=1, bad_unreadable=0"
                                            " (+3 more in run.json)")
    assert counts_text({"a": 1, "bad_x": 2}, shown=6) == "a=1, bad_x=2"


def test_run_summary_prints_every_bad_count_of_run_json(tmp_path):
    # seven ordinary counts come first (records, records_*, pages, skipped_non_html), then the
    # last record is cut short: bad_cut_short is parse's 8th count (the console used to show 6)
    write_warc(tmp_path / "a.warc.gz", [
        Resp("http://x.example.com/0", html("t", "<p>x</p>")),
        Resp("http://x.example.com/logo.png", b"\x89PNG....", content_type="image/png"),
        Resp("http://x.example.com/get", b"GET /get HTTP/1.1\r\nHost: x.example.com\r\n\r\n",
             content_type="application/http; msgtype=request", kind="request"),
        Resp("http://x.example.com/file", b"data", content_type="text/plain", kind="resource"),
        *[Resp(f"http://x.example.com/{i}", html("t", "<p>x</p>")) for i in range(1, 4)]])
    data = (tmp_path / "a.warc.gz").read_bytes()
    (tmp_path / "a.warc.gz").write_bytes(data[:-25])
    (tmp_path / "c.yaml").write_text("workdir: out\ninput: {warc: ['*.warc.gz']}\n")
    out = _spamflow("run", "-c", "c.yaml", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    stages = json.loads((tmp_path / "out" / "run.json").read_text())["stages"]
    lines = {line.split()[0]: line for line in out.stdout.splitlines() if line.startswith("  ")}
    assert list(stages["parse"]["counts"]).index("bad_cut_short") >= 6
    for name, stage in stages.items():
        bad = {k: v for k, v in stage["counts"].items() if k.startswith("bad_")}
        for key, value in bad.items():
            assert f"{key}={value}" in lines[name], (name, key, lines[name])
    assert "bad_cut_short=1" in lines["parse"]


def _crawl_config(tmp_path: Path, web: LoopbackWeb) -> Path:
    config = tmp_path / "crawl.yaml"
    config.write_text(yaml.safe_dump({"workdir": "work", "input": {"crawl": {
        "snapshot": "bars", "seeds": ["http://bar.test/"], "resolve": web.pins, "host_delay": 0.0,
        "ip_delay": 0.0}}}))
    return config


@pytest.mark.slow
def test_no_bars_when_stderr_is_not_a_terminal_and_bars_with_progress(tmp_path):
    """A real run (crawl -> ingest -> parse): its stderr is a pipe, so by default no stage
    draws a bar; --progress draws the crawl and parse bars anyway; --no-progress none."""
    with LoopbackWeb(_handler, HOSTS) as web:
        config = _crawl_config(tmp_path, web)
        default = _spamflow("run", "-c", str(config), "--workdir", "default", cwd=tmp_path)
        forced = _spamflow("run", "-c", str(config), "--workdir", "forced", "--progress", cwd=tmp_path)
        off = _spamflow("crawl", "-c", str(config), "--out", "crawl-off", "--no-progress", cwd=tmp_path)
    assert default.returncode == 0 and forced.returncode == 0 and off.returncode == 0, (default.stderr, forced.stderr)
    for quiet in (default, off):
        assert "crawl bars" not in quiet.stderr and "parse:" not in quiet.stderr and "\r" not in quiet.stderr
    assert "crawl bars" in forced.stderr and "parse:" in forced.stderr  # tqdm's "desc: ..." lines


def test_progress_bar_draws_on_a_terminal_only_unless_told(tmp_path):
    """On a real pseudo-terminal the default draws; on a file it does not; True and False win."""
    leader, follower = os.openpty()
    try:
        with open(follower, "w", closefd=False) as tty, open(tmp_path / "log", "w+") as log:
            assert progress_on(None, tty) and not progress_on(None, log)
            assert progress_on(True, log) and not progress_on(False, tty)
            for stream, setting in ((tty, None), (log, None), (log, True), (tty, False)):
                with progress_bar(range(3), setting=setting, desc=f"d-{setting}", file=stream) as bar:
                    list(bar)
                stream.flush()
            drawn = os.read(leader, 65536).decode()
            log.seek(0)
            logged = log.read()
    finally:
        os.close(leader)
        os.close(follower)
    assert "d-None" in drawn and "d-False" not in drawn
    assert "d-True" in logged and "d-None" not in logged


@pytest.mark.slow
def test_each_stage_prints_a_line_as_it_starts_and_ends_when_no_bar_is_drawn(tmp_path):
    """Issue 39 item 6: with stderr a pipe (a log), a run printed nothing until it ended.  Now
    the run says how many stages it will run, and each stage says when it starts and when it
    ends, with its seconds and first counts, as run.json has them; --no-progress is silent."""
    write_warc(tmp_path / "a.warc.gz", [Resp(f"http://x{i % 2}.example.com/{i}", html("t", f"<p>x {i}</p>"))
                                        for i in range(4)])
    (tmp_path / "c.yaml").write_text("workdir: out\ninput: {warc: ['*.warc.gz']}\ndetectors: {obvious: {}}\n")
    out = _spamflow("run", "-c", "c.yaml", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    stages = json.loads((tmp_path / "out" / "run.json").read_text())["stages"]
    lines = [line for line in out.stderr.splitlines() if line.startswith("spamflow: ")]
    assert lines[0] == f"spamflow: {len(stages)} stage(s) to run, 0 done before (cached)", out.stderr
    for name, stage in stages.items():
        started = lines.index(f"spamflow: stage {name} started")
        done = [i for i, line in enumerate(lines) if line.startswith(f"spamflow: stage {name} done in ")]
        assert len(done) == 1 and done[0] > started, out.stderr
        line = lines[done[0]]
        seconds = float(line.split(" done in ")[1].split(" s")[0])
        assert abs(seconds - stage["seconds"]) <= 0.5 + 0.1 * stage["seconds"], (line, stage["seconds"])
        first = list(stage["counts"].items())[:2]
        assert line.endswith(": " + counts_text(stage["counts"], 4)) and all(f"{k}={v}" in line for k, v in first)
        for up in stage["requires"]:  # a stage starts after what it reads has ended
            assert started > lines.index(next(x for x in lines if x.startswith(f"spamflow: stage {up} done")))
    again = _spamflow("run", "-c", "c.yaml", cwd=tmp_path)
    assert [line for line in again.stderr.splitlines() if line.startswith("spamflow: ")] == [
        f"spamflow: 0 stage(s) to run, {len(stages)} done before (cached)"], again.stderr
    quiet = _spamflow("run", "-c", "c.yaml", "--workdir", "quiet", "--no-progress", cwd=tmp_path)
    assert quiet.returncode == 0 and "spamflow: " not in quiet.stderr, quiet.stderr
