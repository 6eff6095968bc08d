"""Kill `spamflow crawl` with SIGKILL mid-crawl, several times, and restart it on the same
directory: no page is lost, none is stored twice, and a page stored before a kill is never
requested again (the server's log says so)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from spamflow.crawl.loopback import LoopbackWeb, Reply

from crawl_check import read_crawl, read_errors

HOSTS = {"k1.test": "127.0.31.1", "k2.test": "127.0.31.2", "k3.test": "127.0.31.2"}
PAGES = 40


def handler(host: str, path: str) -> Reply:
    if path == "/robots.txt":
        return Reply(body=b"User-agent: *\nDisallow: /never\n", headers={"Content-Type": "text/plain"})
    i = int(path.strip("/") or 0)
    links = "".join(f'<a href="/{j}">{j}</a>' for j in (2 * i + 1, 2 * i + 2) if j < PAGES)
    other = "".join(f'<a href="http://{h}/{i}">{h}</a>' for h in HOSTS)
    return Reply(body=f"<html><p>{host} page {i}</p>{links}{other}<a href=/never>no</a></html>".encode())


def _run(config: Path, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "spamflow_workflows", "crawl", "-c", str(config), "--out", str(out),
                             "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.slow
def test_sigkill_and_resume_lose_nothing_and_refetch_nothing_stored(tmp_path):
    out = tmp_path / "crawl"
    snapshots: list[tuple[int, set[str]]] = []  # after each kill: server hits so far, URLs stored
    with LoopbackWeb(handler, HOSTS) as web:
        config = tmp_path / "crawl.yaml"
        config.write_text(yaml.safe_dump({"workdir": "run", "input": {"crawl": {
            "snapshot": "k", "seeds": [f"http://{h}/" for h in HOSTS], "scope": "any", "resolve": web.pins,
            "host_delay": 0.02, "ip_delay": 0.01, "max_depth": 100}}}))
        kills = 0
        for _ in range(3):
            proc = _run(config, out)
            seen = len(web.log)
            deadline = time.monotonic() + 30
            while len(web.log) < seen + 25 and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                kills += 1
            # what is stored now may never be requested again
            snapshots.append((len(web.log), {s.url for s in read_crawl_tolerant(out / "k")}))
        assert kills >= 2
        final = _run(config, out)
        stdout, stderr = final.communicate(timeout=120)
        assert final.returncode == 0, stderr.decode()
    assert b"k: " in stdout
    stored = read_crawl(out / "k")  # every record of every file reads back
    urls = Counter(s.url for s in stored)
    expected = {f"http://{h}/{i}" for h in HOSTS for i in range(PAGES)} | {f"http://{h}/" for h in HOSTS}
    pages = Counter({u: n for u, n in urls.items() if not u.endswith("/robots.txt")})
    assert set(pages) == expected and set(pages.values()) == {1}  # none lost, none stored twice
    for hits, stored_then in snapshots:
        again = {f"http://{h.host}{h.path}" for h in web.log[hits:]} & stored_then
        assert not {u for u in again if not u.endswith("/robots.txt")}
    robots = Counter(h.host for h in web.log if h.path == "/robots.txt")
    assert all(n <= 1 + kills for n in robots.values())  # journalled; asked again only if killed mid-way
    assert {e["url"] for e in read_errors(out / "k")} == {f"http://{h}/never" for h in HOSTS}
    requests = Counter(f"http://{h.host}{h.path}" for h in web.log)
    # only pages in flight at a kill may have been requested twice (at most one per IP per kill)
    assert sum(n - 1 for u, n in requests.items() if n > 1) <= kills * 2 + 3
    # the counts the last run reports are the whole crawl's: those of a crawl never killed
    resumed = json.loads((out / "k" / "summary.json").read_text())["counts"]
    with LoopbackWeb(handler, HOSTS) as web:
        config.write_text(yaml.safe_dump({"workdir": "run", "input": {"crawl": {
            "snapshot": "k", "seeds": [f"http://{h}/" for h in HOSTS], "scope": "any", "resolve": web.pins,
            "host_delay": 0.0, "ip_delay": 0.0, "max_depth": 100}}}))
        once = _run(config, tmp_path / "once")
        once_stdout, once_stderr = once.communicate(timeout=120)
        assert once.returncode == 0, once_stderr.decode()
    whole = json.loads((tmp_path / "once" / "k" / "summary.json").read_text())["counts"]
    assert whole["pages"] == len(expected) and whole["resumed_pages"] == 0
    assert _whole_crawl(resumed) == _whole_crawl(whole)
    assert stdout.split(b";")[0] == once_stdout.split(b";")[0]  # "k: 123 pages, N bytes, 3 errors, 0 pending"


def _whole_crawl(counts: dict[str, int]) -> dict[str, int]:
    """The counts that describe the crawl, not the last run (its time, what it resumed) nor
    the order of the links' discovery (seen_before: links of a page cut by a kill)."""
    session = {"seconds", "front_max", "resume_bytes_cut", "resumed_pages", "resumed_pending", "urls_seen_before"}
    return {k: v for k, v in counts.items() if k not in session and v}


def read_crawl_tolerant(directory: Path):
    """The crawl as it is right after a kill: the last file may end in a partial record, so
    read a repaired copy (the crawler repairs the original itself when it resumes)."""
    from spamflow.crawl.warc_store import complete_length

    copy = directory.parent / "snapshot-copy"
    (copy / "warc").mkdir(parents=True, exist_ok=True)
    for old in (copy / "warc").glob("*"):
        old.unlink()
    for path in (directory / "warc").glob("*.warc.gz"):
        if complete_length(path):
            (copy / "warc" / path.name).write_bytes(path.read_bytes()[:complete_length(path)])
    return read_crawl(copy)


def _run_dag(config: Path, workdir: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "spamflow_workflows", "run", "-c", str(config), "--workdir", str(workdir),
                             "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _crawl_stage_counts(workdir: Path) -> dict[str, int]:
    counts = json.loads((workdir / "run.json").read_text())["stages"]["crawl"]["counts"]
    return {k: v for k, v in counts.items() if k != "k_warc_files"}  # a resumed run opens a new WARC file


@pytest.mark.slow
def test_crawl_stage_killed_and_run_again_reports_the_counts_of_an_uninterrupted_crawl(tmp_path):
    def config_for(web: LoopbackWeb) -> Path:
        path = tmp_path / "dag.yaml"
        path.write_text(yaml.safe_dump({"workdir": "unused", "input": {"crawl": {
            "snapshot": "k", "seeds": [f"http://{h}/" for h in HOSTS], "scope": "any", "resolve": web.pins,
            "host_delay": 0.02, "ip_delay": 0.01, "max_depth": 100}}}))
        return path

    with LoopbackWeb(handler, HOSTS) as web:
        config = config_for(web)
        proc = _run_dag(config, tmp_path / "killed")
        deadline = time.monotonic() + 60
        while len(web.log) < 40 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "the crawl ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        again = _run_dag(config, tmp_path / "killed")
        out, err = again.communicate(timeout=300)
        assert again.returncode == 0, err.decode()
    with LoopbackWeb(handler, HOSTS) as web:
        once = _run_dag(config_for(web), tmp_path / "once")
        out_once, err_once = once.communicate(timeout=300)
        assert once.returncode == 0, err_once.decode()
    resumed, whole = _crawl_stage_counts(tmp_path / "killed"), _crawl_stage_counts(tmp_path / "once")
    assert whole["k_pages"] == 3 * (PAGES + 1) and whole["k_errors"] == 3  # / and /0../39 per host; /never
    assert resumed == whole
