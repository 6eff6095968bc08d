"""``input.warc`` naming a folder (issue 39 item 2): every WARC and ARC file inside, at any depth,
by the usual suffixes (``.warc``, ``.warc.gz``, ``.arc``, ``.arc.gz``) or, for other names, by
their first bytes; other files and hidden ones left out; ``validate`` says how many files of
which kind were found.  The same on a local folder and on an ``s3://`` prefix (moto's real S3
server on 127.0.0.1).  A glob such as ``data/*.warc.gz`` keeps meaning what it did."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from spamflow.config import load_config
from spamflow.errors import ConfigError

from conftest import ingest_and_parse
from warc_factory import Resp, html, warc_bytes

CONFIG = "workdir: {workdir}\ninput:\n  warc: [{warc}]\ndetectors:\n  obvious: {{}}\n"


def _arc(host: str) -> bytes:
    """A two-record ARC v1 file (filedesc, one HTML page), as in tests/test_archive_formats.py."""
    def record(url: str, ip: str, date: str, content_type: str, block: bytes) -> bytes:
        return f"{url} {ip} {date} {content_type} {len(block)}\n".encode() + block + b"\n"

    filedesc = b"1 0 spamflow test\nURL IP-address Archive-date Content-type Archive-length\n"
    page = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n" + html("arc", f"<p>{host} page</p>")
    return record("filedesc://t.arc", "0.0.0.0", "20050301120000", "text/plain", filedesc) + \
        record(f"http://{host}/", "10.1.2.3", "20050301120001", "text/html", page)


def _warc(host: str, gz: bool) -> bytes:
    return warc_bytes([Resp(f"http://{host}/", html("t", f"{host} words"), date="2026-01-02T00:00:00Z")], gzip=gz)[0]


FILES = {  # name -> (bytes, the kind an independent reader assigns it: suffix, else first bytes)
    "a.warc.gz": (lambda: _warc("a.example", True), "WARC (gzip)"),
    "b.warc": (lambda: _warc("b.example", False), "WARC"),
    "c.arc.gz": (lambda: gzip.compress(_arc("c.example"), mtime=0), "ARC (gzip)"),
    "d.arc": (lambda: _arc("d.example"), "ARC"),
    "sub/e.warc.gz": (lambda: _warc("e.example", True), "WARC (gzip)"),
    "renamed.bin": (lambda: _warc("f.example", True), "WARC (gzip)"),  # by content
    "old-crawl.dat": (lambda: _arc("g.example"), "ARC"),  # by content
    "notes.txt": (lambda: b"my crawl notes\n", None),
    ".hidden.warc.gz": (lambda: _warc("h.example", True), "hidden"),
}


def _fill(folder: Path) -> dict[str, str | None]:
    for name, (data, _) in FILES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data())
    return {name: kind for name, (_, kind) in FILES.items()}


def _expected(folder: str) -> list[str]:
    return sorted(f"{folder}/{name}" for name, (_, kind) in FILES.items() if kind not in (None, "hidden"))


def _config(tmp_path: Path, plugins, warc: str):
    path = tmp_path / "spamflow.yaml"
    path.write_text(CONFIG.format(workdir=tmp_path / "run", warc=warc))
    return load_config(path, plugins)


def test_a_local_folder_gives_every_warc_and_arc_inside(tmp_path, plugins):
    _fill(tmp_path / "data")
    config = _config(tmp_path, plugins, "data")
    assert config.warc_inputs() == {None: _expected(str(tmp_path / "data"))}
    assert config.input_summary() == "input.warc: 7 files: 3 WARC (gzip), 2 ARC, 1 ARC (gzip), 1 WARC"

    (tmp_path / "stages").mkdir()
    rows, ingested, _ = ingest_and_parse(tmp_path / "stages", [Path(p) for p in config.warc_inputs()[None]])
    assert ingested.counts["files"] == 7 and ingested.counts["bad_not_warc"] == 0
    assert sorted(r["host"] for r in rows) == sorted(f"{h}.example" for h in "abcdefg")


def test_a_glob_keeps_its_meaning_and_a_folder_without_archives_says_what_it_holds(tmp_path, plugins):
    _fill(tmp_path / "data")
    config = _config(tmp_path, plugins, "data/*.warc.gz")
    assert config.warc_inputs() == {None: [str(tmp_path / "data" / "a.warc.gz")]}  # not sub/, not hidden
    assert config.input_summary() == "input.warc: 1 files: 1 WARC (gzip)"
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("no crawl here\n")
    with pytest.raises(ConfigError, match=r"input.warc: folder '.*notes' holds no WARC or ARC file .*found "
                                          r"1 other \(left out\)"):
        _config(tmp_path, plugins, "notes")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"folder '.*empty' holds no WARC or ARC file .*found nothing"):
        _config(tmp_path, plugins, "empty")


def test_validate_says_how_many_files_of_which_kind(tmp_path):
    _fill(tmp_path / "data")
    (tmp_path / "spamflow.yaml").write_text(CONFIG.format(workdir="run", warc="data"))
    done = subprocess.run([sys.executable, "-m", "spamflow_workflows", "validate", "-c", "spamflow.yaml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "input.warc: 7 files: 3 WARC (gzip), 2 ARC, 1 ARC (gzip), 1 WARC\n" in done.stdout


def test_an_s3_prefix_gives_the_same_files_as_the_local_folder(tmp_path, plugins, s3, monkeypatch):
    pytest.importorskip("s3fs")
    client, env = s3
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    _fill(tmp_path / "data")
    for name, (data, _) in FILES.items():
        client.put_object(Bucket="crawl", Key=f"seg/{name}", Body=data())
    config = _config(tmp_path, plugins, "s3://crawl/seg")
    assert config.warc_inputs() == {None: _expected("s3://crawl/seg")}
    assert config.input_summary() == "input.warc: 7 files: 3 WARC (gzip), 2 ARC, 1 ARC (gzip), 1 WARC"
    assert _config(tmp_path, plugins, "s3://crawl/seg/a.warc.gz").warc_inputs() == {None: ["s3://crawl/seg/a.warc.gz"]}
