"""`spamflow judge` on the demo run: one item at a time over HTTP on 127.0.0.1 only; every label
is on disk when the answer comes back, so SIGKILL loses nothing; host labels in the CSV form
`spamflow train` reads (host,label)."""

from __future__ import annotations

import csv
import json
import signal
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from spamflow.report.labels import LabelStore

from judge_server import start_judge


def _get(url: str) -> object:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def _post(url: str, key: str, label: str) -> int:
    request = urllib.request.Request(url + "api/label", data=json.dumps({"key": key, "label": label}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
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
        quilt = next(i["key"] for i in items if i["kind"] == "quilt")
        assert _post(url, hosts[0], "spam") == 200
        assert _post(url, hosts[1], "nonspam") == 200
        assert _post(url, quilt, "spam") == 200
        assert _post(url, hosts[0], "maybe") == 400
        assert _post(url, "host:not-in-this-run.example", "spam") == 400
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
