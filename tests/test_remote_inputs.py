"""Remote inputs (``spamflow.inputs``): a Common Crawl paths file served by a real
``http.server`` on 127.0.0.1 and WARC files in a bucket of moto's real S3 server on
127.0.0.1, each read by a real ``spamflow run`` (obvious detector) whose page table must
equal a run on the same files read locally (all columns but ``warc_file``, the location)."""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from warc_factory import Resp, html, write_warc

moto_server = pytest.importorskip("moto.server", reason="moto[server] (test extra) runs the S3 server")
boto3 = pytest.importorskip("boto3", reason="boto3 (with moto) fills the bucket")
pytest.importorskip("s3fs", reason="s3fs reads s3:// inputs")

NAMES = ("a.warc.gz", "b.warc.gz")


NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"


def _make_warcs(folder: Path) -> list[Path]:
    """Two files; the second holds a 304 revisit (no Content-Type of its own) of a robots.txt
    in the first, which only reading the first file again tells is not a page."""
    folder.mkdir()
    robots = Resp("http://spam0.example/robots.txt", b"User-agent: *\n", content_type="text/plain")
    a = [robots] + [Resp(f"http://spam{i}.example/page", html(f"cheap pills {i}", "buy " * (20 + i) + "now"))
                    for i in range(3)]
    b = [Resp(f"http://news{i}.example/", html(f"news {i}", "a story about the weather " * 5),
              date="2026-02-03T04:05:06Z") for i in range(2)]
    b.append(Resp(robots.url, b"", status="304 Not Modified", content_type="", kind="revisit",
                  date="2026-02-03T04:05:07Z",
                  warc_headers={"WARC-Refers-To": robots.record_id, "WARC-Profile": NOT_MODIFIED}))
    write_warc(folder / NAMES[0], a)
    write_warc(folder / NAMES[1], b)
    return [folder / n for n in NAMES]


def _run(tmp: Path, name: str, warc: list[str], *, extra: str = "", env: dict[str, str] | None = None,
         strict: bool = False) -> subprocess.CompletedProcess:
    folder = tmp / name
    folder.mkdir()
    (folder / "c.yaml").write_text(f"workdir: out\ninput: {{warc: {json.dumps(warc)}{extra}}}\n"
                                   "mapreduce: {runner: inline}\nworkers: 1\ndetectors:\n  obvious: {}\n")
    cmd = [sys.executable, "-m", "spamflow_workflows", "run", "-c", "c.yaml", "--no-progress"]
    return subprocess.run(cmd + (["--strict"] if strict else []), cwd=folder, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **(env or {})})


def _stages(tmp: Path, name: str) -> dict:
    return json.loads((tmp / name / "out" / "run.json").read_text())["stages"]


def _rows(stages: dict) -> tuple[set[str], set[str]]:
    """The page rows without ``warc_file`` (as canonical JSON, order-free), and the warc_file values."""
    table = ds.dataset(stages["parse"]["outputs"]["pages"]).to_table().to_pylist()
    rows = {json.dumps({k: v for k, v in r.items() if k != "warc_file"}, sort_keys=True, default=str) for r in table}
    return rows, {r["warc_file"] for r in table}


def _no_spool_left(tmp: Path, name: str) -> None:
    left = [p for p in (tmp / name / "out").rglob("*") if "spool" in p.name or p.name in NAMES]
    assert left == [], f"spool files left behind: {left}"


@pytest.fixture
def http_root(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 functools.partial(SimpleHTTPRequestHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.slow
def test_paths_file_over_http_gives_the_local_page_table_and_counts_a_missing_file(tmp_path, http_root):
    root, base = http_root
    local = _make_warcs(root / "crawl-data")
    listed = ["crawl-data/a.warc.gz", "crawl-data/gone.warc.gz", "crawl-data/b.warc.gz"]
    (root / "warc.paths.gz").write_bytes(gzip.compress(("\n".join(listed) + "\n").encode()))

    done = _run(tmp_path, "local", [str(p) for p in local])
    assert done.returncode == 0, done.stderr
    done = _run(tmp_path, "http", [f"{base}/warc.paths.gz"], extra=f", base_url: '{base}/'")
    assert done.returncode == 0, done.stderr

    remote, local_run = _stages(tmp_path, "http"), _stages(tmp_path, "local")
    assert remote["obvious"]["complete"]
    rows, files = _rows(remote)
    assert rows == _rows(local_run)[0] and len(rows) == 5
    assert files == {f"{base}/crawl-data/{n}" for n in NAMES}
    ingest = remote["ingest"]
    assert (ingest["counts"]["files"], ingest["counts"]["bad_download"]) == (2, 1)
    [bad] = ingest["bad_records"]
    assert (bad["file"], bad["offset"], bad["kind"]) == (f"{base}/crawl-data/gone.warc.gz", 0, "download")
    _no_spool_left(tmp_path, "http")

    strict = _run(tmp_path, "strict", [f"{base}/warc.paths.gz"], extra=f", base_url: '{base}/'", strict=True)
    assert strict.returncode != 0 and f"{base}/crawl-data/gone.warc.gz" in strict.stderr


@pytest.mark.slow
def test_s3_bucket_gives_the_local_page_table(tmp_path, s3):
    client, env = s3
    local = _make_warcs(tmp_path / "files")
    for path in local:
        client.put_object(Bucket="crawl", Key=f"cc/{path.name}", Body=path.read_bytes())

    done = _run(tmp_path, "local", [str(p) for p in local])
    assert done.returncode == 0, done.stderr
    done = _run(tmp_path, "s3", [f"s3://crawl/cc/{n}" for n in NAMES], env=env)
    assert done.returncode == 0, done.stderr

    remote = _stages(tmp_path, "s3")
    rows, files = _rows(remote)
    assert rows == _rows(_stages(tmp_path, "local"))[0] and len(rows) == 5
    assert remote["parse"]["counts"]["skipped_revisit_non_html"] == 1 and remote["parse"]["bad_records"] == []
    assert files == {f"s3://crawl/cc/{n}" for n in NAMES}
    _no_spool_left(tmp_path, "s3")


def test_a_changed_s3_object_has_a_new_identity(tmp_path, s3, monkeypatch):
    """Same key, same size, new bytes: the ETag (the object's MD5 for a plain upload) changes."""
    from spamflow.inputs import remote_identity

    client, env = s3
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    client.put_object(Bucket="crawl", Key="x.warc.gz", Body=b"first")
    before = remote_identity("s3://crawl/x.warc.gz")
    client.put_object(Bucket="crawl", Key="x.warc.gz", Body=b"other")
    after = remote_identity("s3://crawl/x.warc.gz")
    assert before["bytes"] == after["bytes"] == 5
    assert before["etag"].strip('"') == hashlib.md5(b"first").hexdigest()
    assert before["etag"] != after["etag"]


def test_paths_file_lines_join_the_base_url(tmp_path):
    from spamflow.inputs import RemoteInputError, read_paths_file

    listing = tmp_path / "warc.paths"
    listing.write_text("crawl-data/a.warc.gz\n\n/crawl-data/b.warc.gz\ns3://other/c.warc.gz\n")
    assert read_paths_file(str(listing), "https://data.example.org/") == [
        "https://data.example.org/crawl-data/a.warc.gz", "https://data.example.org/crawl-data/b.warc.gz",
        "s3://other/c.warc.gz"]
    with pytest.raises(RemoteInputError, match="no input.base_url"):
        read_paths_file(str(listing), None)


def test_ingest_identity_follows_the_remote_object(tmp_path, s3, monkeypatch, plugins):
    """Planning twice over an unchanged object gives the same ingest; rewriting it in place with
    the same size (new ETag and Last-Modified) gives a new one; a local file keeps its old rule."""
    from spamflow.config import parse_config
    from spamflow.plan import plan_run

    client, env = s3
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    client.put_object(Bucket="crawl", Key="x.warc.gz", Body=b"first")
    config = parse_config("workdir: out\ninput: {warc: ['s3://crawl/x.warc.gz']}\n", plugins, path=tmp_path / "c.yaml")

    def ingest() -> tuple[str, dict]:
        stage = plan_run(config, plugins)["ingest"]
        return stage.signature, stage.params["files"][0]

    first, described = ingest()
    assert (described["path"], described["bytes"]) == ("s3://crawl/x.warc.gz", 5)
    assert described["etag"].strip('"') == hashlib.md5(b"first").hexdigest()
    assert ingest()[0] == first
    client.put_object(Bucket="crawl", Key="x.warc.gz", Body=b"other")
    assert ingest()[0] != first


def test_a_file_gone_before_parse_is_a_counted_download_error(tmp_path, http_root):
    from spamflow.errors import BadInputError
    from spamflow.stages.parse import parse_location

    _, base = http_root
    url = f"{base}/gone.warc.gz"
    result = parse_location(url, "2026-01", str(tmp_path / "part.parquet"), max_bytes=1000, strict=False)
    assert result.counts == {"bad_download": 1}
    [bad] = result.bad_records
    assert (bad["file"], bad["offset"], bad["kind"]) == (url, 0, "download")
    with pytest.raises(BadInputError, match=url):
        parse_location(url, "2026-01", str(tmp_path / "part.parquet"), max_bytes=1000, strict=True)
    assert not (tmp_path / "spool").exists() or list((tmp_path / "spool").iterdir()) == []  # no spool left
