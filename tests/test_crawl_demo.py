"""`spamflow demo --crawl`: the demo web served on loopback (one address per simulated IP)
and crawled, each snapshot, from every host's home page.  The crawl must find exactly the
planted pages (labels/pages.tsv, plus the snapshot-2 pages the generator stored as revisits,
which a crawler fetches whole), from the right addresses, politely."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import pyarrow.dataset as ds
from warcio.archiveiterator import ArchiveIterator


def test_demo_crawl_finds_every_planted_page_politely(tmp_path):
    workdir = tmp_path / "demo"
    out = subprocess.run([sys.executable, "-m", "spamflow.cli", "demo", "--crawl", "--workdir", str(workdir),
                          "--no-progress"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    stages = json.loads((workdir / "run.json").read_text())["stages"]
    assert list(stages) == ["demo", "crawl", "ingest", "parse", "obvious", "report"]
    web = Path(stages["demo"]["outputs"]["labels"]).parent
    planted = {tuple(line.split("\t")[:2]) for line in (web / "labels" / "pages.tsv").read_text().splitlines()[1:]}
    truth = json.loads((web / "truth.json").read_text())
    revisits = {(snapshot, url) for snapshot, urls in truth["revisits"].items() for url in urls}
    pages = ds.dataset(stages["parse"]["outputs"]["pages"]).to_table(columns=["snapshot", "url", "ip"]).to_pylist()
    assert {(p["snapshot"], p["url"]) for p in pages} == planted | revisits
    assert len(pages) == len(planted) + len(revisits)
    hosts = {line.split("\t")[0]: line.split("\t")[1]
             for line in (web / "labels" / "hosts.tsv").read_text().splitlines()[1:]}
    assert all(p["ip"] == hosts[p["url"].split("/")[2]] for p in pages)
    # politeness, read from the WARC request dates: per host >= 0.02 s apart, per IP >= 0.005 s
    starts: dict[str, list[datetime]] = defaultdict(list)
    for path in Path(stages["crawl"]["outputs"]["warc"]).glob("*/*.warc.gz"):
        with open(path, "rb") as fh:
            for record in ArchiveIterator(fh):
                if record.rec_type == "request":
                    date = datetime.fromisoformat(record.rec_headers.get_header("WARC-Date").replace("Z", "+00:00"))
                    url = record.rec_headers.get_header("WARC-Target-URI")
                    starts["host " + path.parent.name + url.split("/")[2]].append(date)
                    starts["ip " + path.parent.name + record.rec_headers.get_header("WARC-IP-Address")].append(date)
    for key, dates in starts.items():
        dates.sort()
        smallest = min(((b - a).total_seconds() for a, b in zip(dates, dates[1:])), default=1.0)
        assert smallest >= (0.02 if key.startswith("host") else 0.005), key
    errors = [json.loads(line) for f in Path(stages["crawl"]["outputs"]["errors"]).glob("*.jsonl")
              for line in f.read_text().splitlines()]
    assert errors == []


def test_demo_crawl_config_is_the_shipped_one():
    from spamflow.cli import demo_config_path

    root = Path(__file__).resolve().parents[1]
    assert (root / "configs" / "demo-crawl.yaml").read_text() == demo_config_path(crawl=True).read_text()
