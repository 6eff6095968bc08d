"""input.crawl in a config: validation errors, and a DAG run crawl -> ingest -> parse whose
page table has one row per HTML response the crawl stored (counted here with warcio)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml
from warcio.archiveiterator import ArchiveIterator

from spamflow.config import parse_config
from spamflow.crawl.loopback import LoopbackWeb, Reply
from spamflow.errors import ConfigError
from spamflow.plugins import get_plugins
from spamflow_workflows.cli import main

HOSTS = {"one.test": "127.0.41.1", "two.test": "127.0.41.2"}


def handler(host: str, path: str) -> Reply:
    if path == "/robots.txt":
        return Reply(status=404, headers={"Content-Type": "text/plain"})
    if path == "/logo.png":
        return Reply(body=b"\x89PNG....", headers={"Content-Type": "image/png"})
    i = int(path.strip("/") or 0)
    nxt = f'<a href="/{i + 1}">next</a>' if i < 4 else '<a href="/logo.png">logo</a>'
    return Reply(body=f"<html><title>{host} {i}</title><p>words on {host} page {i}</p>{nxt}"
                      f'<a href="http://two.test/{i}">two</a></html>'.encode())


@pytest.mark.parametrize("block, message", [
    ({"snapshot": "a"}, "give seeds"),
    ({"seeds": ["ftp://x.test/"]}, "is not an http(s) URL"),
    ({"seeds": ["http://x.test/"], "filter": "HostEndsWith(x"}, "input.crawl (crawl).filter: HostEndsWith: missing ')'"),
    ({"seeds": ["http://x.test/"], "resolve": {"x.test": "localhost"}}, "is not an IP address"),
    ({"seeds": ["http://x.test/"], "delay": 1}, "unknown key 'delay'"),
    ({"seeds": ["http://x.test/"], "seed_file": "nope.txt"}, "cannot read"),
])
def test_bad_crawl_blocks_are_config_errors(block, message, tmp_path):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_config(yaml.safe_dump({"workdir": "w", "input": {"crawl": block}}), get_plugins(),
                     path=tmp_path / "c.yaml")


def test_two_snapshots_need_distinct_names(tmp_path):
    with pytest.raises(ConfigError, match="distinct snapshot names"):
        parse_config(yaml.safe_dump({"workdir": "w", "input": {"crawl": [
            {"seeds": ["http://x.test/"]}, {"seeds": ["http://x.test/"]}]}}), get_plugins(), path=tmp_path / "c.yaml")


def test_crawl_stage_feeds_ingest_and_parse(tmp_path):
    with LoopbackWeb(handler, HOSTS) as web:
        common = {"seeds": ["http://one.test/"], "scope": "any", "resolve": web.pins, "host_delay": 0.0,
                  "ip_delay": 0.0}
        config = tmp_path / "run.yaml"
        config.write_text(yaml.safe_dump({"workdir": "work", "input": {"crawl": [
            common | {"snapshot": "2026-01"}, common | {"snapshot": "2026-02"}]}}))
        assert main(["run", "-c", str(config), "--no-progress"]) == 0
    manifest = json.loads((tmp_path / "work" / "run.json").read_text())
    stages = manifest["stages"]
    assert list(stages) == ["crawl", "ingest", "parse"]
    html: dict[str, int] = {}
    for path in sorted(Path(stages["crawl"]["outputs"]["warc"]).glob("*/*.warc.gz")):
        with open(path, "rb") as fh:
            for record in ArchiveIterator(fh):
                if record.rec_type == "response" and "text/html" in (record.http_headers.get_header("Content-Type") or ""):
                    html[path.parent.name] = html.get(path.parent.name, 0) + 1
    assert html == {"2026-01": 10, "2026-02": 10}
    pages = pq.read_table(stages["parse"]["outputs"]["pages"], columns=["snapshot", "ip"]).to_pylist()
    assert len(pages) == 20 and {p["ip"] for p in pages} == set(HOSTS.values())
    counts = stages["crawl"]["counts"]
    assert counts["2026-01_pages"] == counts["2026-02_pages"] == 12  # and a PNG on each host
    assert not list((tmp_path / "work" / "stages").glob(".crawl-*.work"))


def test_spamflow_crawl_command(tmp_path, capsys):
    (tmp_path / "warc.yaml").write_text("workdir: w\ninput:\n  demo: {}\n")
    assert main(["crawl", "-c", str(tmp_path / "warc.yaml")]) == 2
    assert "needs an input.crawl section" in capsys.readouterr().err
    with LoopbackWeb(handler, HOSTS) as web:
        config = tmp_path / "crawl.yaml"
        config.write_text(yaml.safe_dump({"workdir": "w", "input": {"crawl": {
            "snapshot": "s1", "seeds": ["http://one.test/"], "resolve": web.pins, "host_delay": 0.0, "ip_delay": 0.0}}}))
        assert main(["crawl", "-c", str(config), "--no-progress"]) == 0
        first = capsys.readouterr().out
        summary_path = tmp_path / "w" / "crawl" / "s1" / "summary.json"
        first_counts = json.loads(summary_path.read_text())["counts"]
        assert main(["crawl", "-c", str(config), "--no-progress"]) == 0  # resumes: nothing left to do
        second = capsys.readouterr().out
    assert first.startswith("s1: 6 pages") and "0 errors, 0 pending" in first
    assert second.split(";")[0] == first.split(";")[0]  # the whole crawl, not the 0 pages of this run
    summary = json.loads(summary_path.read_text())
    session = {"seconds", "front_max", "resume_bytes_cut", "resumed_pages", "resumed_pending"}
    assert {k: v for k, v in summary["counts"].items() if k not in session and v} == \
        {k: v for k, v in first_counts.items() if k not in session and v}
    assert summary["counts"]["resumed_pages"] == 6 and summary["counts"]["resumed_pending"] == 0
    assert sum(1 for h in web.log if h.path != "/robots.txt") == 6  # the second run fetched nothing


def test_the_crawl_example_config_validates():
    from spamflow.config import load_config
    from spamflow.plan import plan_run

    root = Path(__file__).resolve().parents[1]
    config = load_config(root / "configs" / "crawl-example.yaml", get_plugins())
    assert [c.snapshot for c in config.crawls()] == ["2026-03", "2026-04"]
    assert list(plan_run(config, get_plugins()))[:3] == ["crawl", "ingest", "parse"]
