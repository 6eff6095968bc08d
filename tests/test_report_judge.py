"""`spamflow judge` on the demo run: one item at a time over HTTP on 127.0.0.1 only; every label
is on disk when the answer comes back, so SIGKILL loses nothing; host labels in the CSV form
`spamflow train` reads (host,label)."""

from __future__ import annotations

import csv
import http.client
import json
import re
import signal
import socket
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from spamflow.report import judge as judge_module
from spamflow.report.labels import LabelStore
from spamflow.report.sections import Evidence
from spamflow_ensemble.labels import read_labels

from judge_server import serve_in_thread, start_judge


def _get(url: str) -> object:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def _page_token_in(page: str) -> str:
    """The write token as the page's script reads it: from the page's meta tag ("" if none)."""
    found = re.search(r'<meta name="spamflow-token" content="([^"]+)" data-header="X-Spamflow-Token">', page)
    return found.group(1) if found else ""


def _page_token(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:
        return _page_token_in(r.read().decode())


def _post(url: str, key: str, label: str, token: str) -> int:
    request = urllib.request.Request(url + "api/label", data=json.dumps({"key": key, "label": label}).encode(),
                                     headers={"Content-Type": "application/json", "X-Spamflow-Token": token},
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as err:
        return err.code


def test_labels_survive_sigkill_and_are_served_again(demo_once, tmp_path):
    labels = tmp_path / "labels"
    proc, url = start_judge(demo_once["workdir"], labels, "--kinds", "host,quilt")
    try:
        items = _get(url + "api/items")
        kinds = [i["kind"] for i in items]
        assert kinds == sorted(kinds, key=["host", "quilt"].index) and {"host", "quilt"} == set(kinds)
        truth = json.loads(Path(demo_once["manifest"]["stages"]["demo"]["outputs"]["truth"]).read_text())
        assert {i["key"] for i in items if i["kind"] == "host"} == {f"host:{h}" for h in truth["hosts"]}
        hosts = [i["key"] for i in items if i["kind"] == "host"][:2]
        token = _page_token(url)
        assert token
        quilt = next(i["key"] for i in items if i["kind"] == "quilt")
        assert _post(url, hosts[0], "spam", token) == 200
        assert _post(url, hosts[1], "nonspam", token) == 200
        assert _post(url, quilt, "spam", token) == 200
        assert _post(url, hosts[0], "maybe", token) == 400
        assert _post(url, "host:not-in-this-run.example", "spam", token) == 400
        port = int(url.rsplit(":", 1)[1].strip("/"))
        with pytest.raises(OSError), socket.create_connection(("127.0.0.2", port), timeout=2):
            pass  # bound to 127.0.0.1 only
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    with open(labels / "labels.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows == sorted([{"host": hosts[0][5:], "label": "spam"}, {"host": hosts[1][5:], "label": "nonspam"}],
                          key=lambda r: r["host"])
    assert len((labels / "judgements.jsonl").read_text().splitlines()) == 3
    proc, url = start_judge(demo_once["workdir"], labels, "--kinds", "host,quilt")
    try:
        assert _get(url + "api/labels") == {hosts[0]: "spam", hosts[1]: "nonspam", quilt: "spam"}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_label_store_last_verdict_wins_and_a_cut_last_line_is_ignored(tmp_path):
    store = LabelStore(tmp_path)
    store.add("host:a.example", "spam")
    store.add("host:b.example", "unsure")
    store.add("host:a.example", "nonspam")
    store.add("cluster:3", "spam")
    assert (tmp_path / "labels.csv").read_text() == "host,label\na.example,nonspam\nb.example,unsure\n"
    with open(tmp_path / "judgements.jsonl", "a") as fh:
        fh.write('{"key": "host:c.exa')  # a crash in the middle of a write
    again = LabelStore(tmp_path)
    assert again.labels == {"host:a.example": "nonspam", "host:b.example": "unsure", "cluster:3": "spam"}
    again.add("host:c.example", "spam")  # the cut line was dropped, so the journal stays readable
    assert LabelStore(tmp_path).labels["host:c.example"] == "spam"
    with pytest.raises(ValueError, match="label must be one of"):
        store.add("host:a.example", "1")


# --- forged requests: a real server on 127.0.0.1 (make_server in a thread), real HTTP requests ---

ITEMS = [Evidence("host:a.example", "host", "a.example", "<p>evidence of a.example</p>"),
         Evidence("host:x,spam.example", "host", "x,spam.example", "<p>a host name with a comma</p>"),
         Evidence('host:"q".example', "host", '"q".example', "<p>a host name with quotes</p>"),
         Evidence("quilt:0:7", "quilt", "quilt 7", "<p>a quilt</p>")]


def _request(port: int, method: str, path: str, body: bytes | None = None, host: str | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, bytes, dict[str, str]]:
    """One request with exactly the headers given (Host too: forged ones included)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{port}")
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, response.read(), dict(response.getheaders())
    finally:
        conn.close()


def _verdict(key: str = "host:a.example", label: str = "spam") -> bytes:
    return json.dumps({"key": key, "label": label}).encode()


def _write_headers(port: int, token: str, body: bytes, **override: str) -> dict[str, str]:
    """What judge.js sends (a browser adds Origin and Content-Length), with ``override`` applied
    (a value of "" drops the header)."""
    headers = {"Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/json",
               "X-Spamflow-Token": token, "Content-Length": str(len(body))}
    headers.update({k.replace("_", "-"): v for k, v in override.items()})
    return {k: v for k, v in headers.items() if v != ""}


def _token(port: int) -> str:
    status, page, _ = _request(port, "GET", "/")
    assert status == 200
    return _page_token_in(page.decode())


def _on_disk(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture
def judge(tmp_path):
    """A judge with one legitimate host label already written: ``(port, token, labels folder)``."""
    labels = tmp_path / "labels"
    with serve_in_thread(ITEMS, labels) as (_server, port):
        token = _token(port)
        body = _verdict("host:a.example", "nonspam")
        status, answer, _ = _request(port, "POST", "/api/label", body, headers=_write_headers(port, token, body))
        assert (status, json.loads(answer)) == (200, {"ok": True, "key": "host:a.example", "label": "nonspam"})
        yield port, token, labels


def test_a_write_from_the_page_is_saved_and_the_page_cannot_be_framed(judge):
    port, token, labels = judge
    assert len(token) >= 32, "the page carries this start's token"
    assert (labels / "labels.csv").read_text() == "host,label\na.example,nonspam\n"
    body = _verdict("host:x,spam.example", "nonspam")
    # charset parameter allowed; no Origin (a client that is not a browser) still needs the token
    headers = _write_headers(port, token, body, Content_Type="application/json; charset=utf-8", Origin="")
    assert _request(port, "POST", "/api/label", body, headers=headers)[0] == 200
    assert read_labels(labels / "labels.csv").by_key == {"a.example": "nonspam", "x,spam.example": "nonspam"}
    status, _, response_headers = _request(port, "GET", "/")
    assert status == 200 and response_headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in response_headers["Content-Security-Policy"]
    assert "X-Spamflow-Token" not in response_headers  # served in the page only, never in a URL or header


FORGED_WRITES = {
    # name: (Host (None: the right one), headers to override, body (None: a good verdict), status)
    "dns rebinding host": ("evil.example:{port}", {}, None, 403),
    "host without port": ("127.0.0.1", {}, None, 403),
    "host on another port": ("127.0.0.1:1", {}, None, 403),
    "missing host": ("", {}, None, 403),
    "foreign origin": (None, {"Origin": "http://evil.example"}, None, 403),
    "null origin (sandboxed frame, file://)": (None, {"Origin": "null"}, None, 403),
    "origin on another port": (None, {"Origin": "http://127.0.0.1:1"}, None, 403),
    "text/plain (no preflight)": (None, {"Content_Type": "text/plain"}, None, 415),
    "form post": (None, {"Content_Type": "application/x-www-form-urlencoded"}, None, 415),
    "no content type": (None, {"Content_Type": ""}, None, 415),
    "no token": (None, {"X_Spamflow_Token": ""}, None, 403),
    "wrong token": (None, {"X_Spamflow_Token": "x" * 43}, None, 403),
    "no content length": (None, {"Content_Length": ""}, b"", 411),
    "bad content length": (None, {"Content_Length": "1e3"}, b"", 400),
    "oversize body": (None, {}, _verdict() + b" " * judge_module.MAX_BODY, 413),
    "oversize announced, never sent": (None, {"Content_Length": str(10**9)}, b"", 413),
    "deeply nested json": (None, {}, b'{"key": ' + b"[" * 5000 + b"]" * 5000 + b', "label": "spam"}', 400),
    "nested past the limit": (None, {}, b'{"key": "host:a.example", "label": "spam", "x": [[[[1]]]]}', 400),
    "not an object": (None, {}, b'["host:a.example", "spam"]', 400),
    "key not a string": (None, {}, b'{"key": ["host:a.example"], "label": "spam"}', 400),
    "not utf-8": (None, {}, b'{"key": "host:a.example\xff", "label": "spam"}', 400),
    "not json": (None, {}, b"key=host:a.example&label=spam", 400),
}


@pytest.mark.parametrize("name", sorted(FORGED_WRITES))
def test_a_forged_write_is_refused_and_nothing_is_written(judge, name):
    port, token, labels = judge
    host, override, body, status = FORGED_WRITES[name]
    body = _verdict() if body is None else body
    before = _on_disk(labels)
    headers = _write_headers(port, token, body, **override)
    got, answer, _ = _request(port, "POST", "/api/label", body, host=host and host.format(port=port),
                              headers=headers)
    assert got == status, answer
    assert json.loads(answer)["error"]
    assert _on_disk(labels) == before
    assert _request(port, "GET", "/api/labels")[1] == b'{"host:a.example": "nonspam"}'


def test_a_token_from_another_start_is_refused(judge, tmp_path):
    port, token, labels = judge
    with serve_in_thread(ITEMS, tmp_path / "other") as (_server, other_port):
        other = _token(other_port)
    assert other != token
    before = _on_disk(labels)
    body = _verdict()
    assert _request(port, "POST", "/api/label", body, headers=_write_headers(port, other, body))[0] == 403
    assert _on_disk(labels) == before


@pytest.mark.parametrize("path", ["/", "/api/items", "/api/labels", "/assets/judge.js"])
def test_a_foreign_host_reads_nothing(judge, path):
    port, token, _labels = judge
    status, answer, _ = _request(port, "GET", path, host=f"evil.example:{port}")
    assert status == 403
    assert b"evidence of" not in answer and token.encode() not in answer and b"nonspam" not in answer
    assert _request(port, "GET", path)[0] == 200


def test_on_port_80_the_host_and_origin_browsers_send_have_no_port(tmp_path):
    try:
        server = judge_module.make_server(ITEMS, LabelStore(tmp_path), port=80)
    except OSError as exc:
        pytest.skip(f"cannot listen on 127.0.0.1:80 here ({exc})")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        status, page, _ = _request(80, "GET", "/", host="127.0.0.1")
        assert status == 200 and _request(80, "GET", "/", host="127.0.0.1:80")[0] == 403
        body = _verdict()
        headers = _write_headers(80, _page_token_in(page.decode()), body, Origin="http://127.0.0.1")
        assert _request(80, "POST", "/api/label", body, host="127.0.0.1", headers=headers)[0] == 200
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_nesting_depth_matches_the_parsed_depth():
    def depth(value: object) -> int:  # of the parsed value: the independent count
        if isinstance(value, dict):
            return 1 + max(map(depth, value.values()), default=0)
        if isinstance(value, list):
            return 1 + max(map(depth, value), default=0)
        return 0

    for text in ['"[[["', '{"a": "]}", "b": [{"c": "\\\\"}, "\\"[{["]}', "[[], [[]], {}]", "7", '{"k": "v"}']:
        assert judge_module.nesting_depth(text) == depth(json.loads(text)), text


def test_labels_csv_with_a_comma_or_quote_in_a_host_reads_back_whole(tmp_path):
    hosts = {"x,spam.example": "nonspam", '"q".example': "spam", 'a"b,c.example': "spam", "plain.example": "unsure"}
    store = LabelStore(tmp_path)
    for host, label in hosts.items():
        store.add(f"host:{host}", label)
    with open(tmp_path / "labels.csv", newline="") as fh:
        assert {r["host"]: r["label"] for r in csv.DictReader(fh)} == hosts
    read = read_labels(tmp_path / "labels.csv")  # what spamflow train and the classifier's labels: read
    assert read.by_key == {h: v for h, v in hosts.items() if v != "unsure"}
    assert read.dropped == {"unsure": 1}


def test_labels_csv_cells_are_never_spreadsheet_formulas(tmp_path):
    """Issue 36: a host name starting with =, +, -, @ (a crawled link can say anything) is
    written with a ' before it (OWASP, CSV injection), and read back as it was."""
    hosts = {"=cmd|' /c calc'!a0.example": "spam", "+1+1.example": "spam", "-2.example": "nonspam",
             "@sum(1).example": "nonspam", "'quoted.example": "spam", "plain.example": "spam"}
    store = LabelStore(tmp_path)
    for host, label in hosts.items():
        store.add(f"host:{host}", label)
    with open(tmp_path / "labels.csv", newline="") as fh:
        cells = [r["host"] for r in csv.DictReader(fh)]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@")]
    assert "'=cmd|' /c calc'!a0.example" in cells and "'quoted.example" in cells
    assert read_labels(tmp_path / "labels.csv").by_key == hosts
