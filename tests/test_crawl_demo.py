"""`spamflow demo` crawls: the demo web is served on loopback (one address per simulated IP)
and crawled, each snapshot, from every host's home page.  The crawl must find exactly the
planted pages (labels/pages.tsv), from the right addresses, politely; and reading the
generated WARCs directly (`--no-crawl`) must give the same page table and detector results."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from warcio.archiveiterator import ArchiveIterator

# the identity of a capture, not its content: a crawl writes its own records, at its own times
IDENTITY = ("doc_id", "record_id", "fetch_time", "warc_file", "warc_offset")


def test_demo_crawl_finds_every_planted_page_politely(demo_once):
    stages = demo_once["manifest"]["stages"]
    assert list(stages)[:4] == ["demo", "crawl", "ingest", "parse"]
    web = Path(stages["demo"]["outputs"]["labels"]).parent
    planted = [tuple(line.split("\t")[:2]) for line in (web / "labels" / "pages.tsv").read_text().splitlines()[1:]]
    truth = json.loads((web / "truth.json").read_text())
    revisits = {(snapshot, url) for snapshot, urls in truth["revisits"].items() for url in urls}
    assert len(revisits) == 8 and revisits <= set(planted)  # fetched whole by the crawler, pages all the same
    pages = ds.dataset(stages["parse"]["outputs"]["pages"]).to_table(columns=["snapshot", "url", "ip"]).to_pylist()
    assert sorted((p["snapshot"], p["url"]) for p in pages) == sorted(planted)
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
    assert len(starts) > 50
    for key, dates in starts.items():
        dates.sort()
        smallest = min(((b - a).total_seconds() for a, b in zip(dates, dates[1:])), default=1.0)
        assert smallest >= (0.02 if key.startswith("host") else 0.005), key
    errors = [json.loads(line) for f in Path(stages["crawl"]["outputs"]["errors"]).glob("*.jsonl")
              for line in f.read_text().splitlines()]
    assert errors == []
    assert stages["parse"]["counts"].get("records_revisit", 0) == 0  # a crawler sends no conditional requests


def _rows(path: str | Path, drop: tuple[str, ...] = ()) -> list[dict]:
    table = ds.dataset(path).to_table() if Path(path).is_dir() else pq.read_table(path)
    rows = [{k: v for k, v in row.items() if k not in drop} for row in table.to_pylist()]
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def _close(a: object, b: object) -> bool:
    """Equal, floats up to summation order (the two tables list pages in different orders)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(a) and math.isnan(b))
    return a == b


@pytest.mark.slow
def test_no_crawl_reads_the_generated_warcs_with_the_same_results(demo_once, demo_no_crawl_once):
    direct = demo_no_crawl_once["manifest"]["stages"]
    crawled = demo_once["manifest"]["stages"]
    assert "crawl" not in direct and list(direct) == [s for s in crawled if s != "crawl"]
    assert direct["parse"]["counts"]["revisit_pages"] == 8  # the generator's revisits, resolved by parse
    # the page tables agree, apart from the identity of each capture
    assert _rows(direct["parse"]["outputs"]["pages"], IDENTITY) == _rows(crawled["parse"]["outputs"]["pages"], IDENTITY)
    # host features agree (floats up to summation order), except where a detector breaks ties by
    # doc_id: content's HMG block is the max-in-links page's (ties: the smaller doc_id), quilt's
    # greedy cover picks the smaller doc_id, HSS clusters depend on page order
    for stage, output in (("obvious", "hosts"), ("links", "hosts"), ("links", "temporal"), ("spin", "hosts"),
                          ("content", "hosts")):
        hmg = tuple(f"HMG_{i}" for i in range(25, 49))
        a, b = _rows(direct[stage]["outputs"][output], hmg), _rows(crawled[stage]["outputs"][output], hmg)
        key = lambda r: (r.get("snapshot"), r.get("host"))  # noqa: E731
        a, b = sorted(a, key=key), sorted(b, key=key)
        assert len(a) == len(b) and all(set(x) == set(y) and all(_close(x[k], y[k]) for k in x)
                                        for x, y in zip(a, b)), (stage, output)
    # quilt breaks ties between sources by doc_id, which differ: every planted quilt is found,
    # with its planted sources, on both paths, and no honest page is quilted on either
    truth = json.loads(Path(crawled["demo"]["outputs"]["truth"]).read_text())["quilts"]
    planted = {(snap, url): {p["source"] for p in q["passages"]} for snap, qs in truth.items() for url, q in qs.items()}
    kinds = {}
    for line in (Path(crawled["demo"]["outputs"]["labels"]) / "pages.tsv").read_text().splitlines()[1:]:
        snapshot, url, _label, kind = line.split("\t")
        kinds[(snapshot, url)] = kind
    for stages in (direct, crawled):
        found = {(q["snapshot"], q["url"]): {s["url"] for s in q["sources"]}
                 for q in map(json.loads, open(stages["quilt"]["outputs"]["quilts"]))}
        assert {key: found.get(key) for key in planted} == planted
        assert not [key for key in found if kinds[key] == "honest"]
