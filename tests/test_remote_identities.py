"""Planning many remote inputs (``spamflow.inputs.remote_identities``): the objects of an
``s3://`` folder come from one listing of it (moto's real S3 server on 127.0.0.1), with the
same identity as a ``HeadObject`` of each; HTTP files are asked about several at a time (a
real ``http.server`` on 127.0.0.1 that only answers once two requests are in flight).
One request after another, a Common Crawl paths file (~90,000 files) took an hour to plan."""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from spamflow import inputs, storage
from spamflow.inputs import RemoteInputError, remote_identities, remote_identity

pytest.importorskip("s3fs", reason="s3fs reads s3:// inputs")


def test_an_s3_folder_is_listed_once_and_gives_each_objects_head_identity(s3, monkeypatch):
    client, env = s3
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    urls = []
    for i in range(5):
        client.put_object(Bucket="crawl", Key=f"seg/warc/f{i}.warc.gz", Body=b"x" * (10 + i))
        urls.append(f"s3://crawl/seg/warc/f{i}.warc.gz")
    client.put_object(Bucket="crawl", Key="other/alone.warc.gz", Body=b"alone")
    urls += ["s3://crawl/other/alone.warc.gz", "s3://crawl/seg/warc/missing.warc.gz"]

    heads = [remote_identity(url) if "missing" not in url else None for url in urls]  # one HeadObject each

    asked: list[str] = []
    real = inputs.remote_identity
    monkeypatch.setattr(storage, "remote_identity", lambda url: asked.append(url) or real(url))
    got = remote_identities(list(reversed(urls)))[::-1]

    assert got[:6] == heads[:6]
    assert [g["bytes"] for g in got[:5]] == [10, 11, 12, 13, 14]
    assert isinstance(got[6], RemoteInputError) and "missing.warc.gz" in str(got[6])
    # the five of seg/warc/ came from its listing: only the lone file and the missing one
    # (absent from the listing) were asked about on their own
    assert sorted(asked) == ["s3://crawl/other/alone.warc.gz", "s3://crawl/seg/warc/missing.warc.gz"]


class _PairedHead(SimpleHTTPRequestHandler):
    """Answers a HEAD only once another HEAD is in flight (or, failing that, after 10 s with
    a 503): a client asking one file after another gets errors."""

    barrier: threading.Barrier

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            self.send_error(503, "asked alone")
            return
        super().do_HEAD()

    def log_message(self, *args: object) -> None:
        pass


def test_http_files_are_asked_about_several_at_a_time(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    for i in range(6):
        (root / f"f{i}.warc.gz").write_bytes(b"y" * (100 + i))
    handler = type("Handler", (_PairedHead,), {"barrier": threading.Barrier(2, timeout=10)})
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        got = remote_identities([f"{base}/f{i}.warc.gz" for i in range(6)])
    finally:
        server.shutdown()
        server.server_close()
    assert [g["bytes"] if isinstance(g, dict) else g for g in got] == [100, 101, 102, 103, 104, 105]
