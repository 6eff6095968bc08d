"""Real-format smoke test: ``spamflow run`` over a real Common Crawl excerpt (CC-MAIN-2020-34,
16 pages, mostly lottery, porn and gambling spam in Chinese) and a real ClueWeb09 file
(WARC/0.18, day-of-year dates, WARC-TREC-IDs, EUC-JP), with every detector that runs
without labels.  Checked against warcio's own reading of the files and titles decoded here
independently; skipped when ../shared/data is absent."""

from __future__ import annotations

import html as htmllib
import json
import re
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime

import lxml.html
import pyarrow.dataset as ds
import pytest
from warcio.archiveiterator import ArchiveIterator

from conftest import shared_data

DETECTORS = ("obvious", "quilt", "hss", "links", "content", "spin")
# the label each file declares (HTTP header first, else <meta>), as WHATWG maps it
WHATWG = {"gb2312": "gb18030", "gbk": "gb18030", "iso-8859-1": "cp1252", "windows-1251": "cp1251", "euc-jp": "euc_jp"}


def _declared_charset(content_type: str, body: bytes) -> str:
    found = re.search(r"charset=([-\w]+)", content_type, re.I) or re.search(
        r"charset=[\"']?([-\w]+)", body[:4096].decode("ascii", "replace"), re.I)
    assert found is not None, "every page of these samples declares its charset"
    label = found[1].lower()
    return WHATWG.get(label, label)


def _warcio_pages(path) -> list[dict[str, object]]:
    """Each HTML response of the file as warcio reads it, with its title decoded here."""
    pages = []
    with open(path, "rb") as fh:
        for record in ArchiveIterator(fh):
            content_type = record.http_headers.get_header("Content-Type") if record.http_headers else ""
            if record.rec_type != "response" or not content_type.lower().startswith("text/html"):
                continue
            body = record.content_stream().read()
            raw = re.search(rb"<title[^>]*>(.*?)</title>", body, re.S | re.I)
            title = " ".join(htmllib.unescape(raw[1].decode(_declared_charset(content_type, body))).split()) if raw else ""
            pages.append({"url": record.rec_headers.get_header("WARC-Target-URI"), "title": title,
                          "trec_id": record.rec_headers.get_header("WARC-TREC-ID")})
    return pages


@pytest.mark.slow
def test_spamflow_run_on_common_crawl_and_clueweb09_files(tmp_path):
    common_crawl = shared_data("warc-samples", "cc-main-2020-34-excerpt.warc.gz")
    clueweb = shared_data("warc-samples", "clueweb09-ja-quirk.warc.gz")
    (tmp_path / "c.yaml").write_text(
        f"workdir: out\ninput: {{warc: ['{common_crawl}', '{clueweb}']}}\nmapreduce: {{runner: inline}}\nworkers: 1\n"
        "detectors:\n" + "".join(f"  {d}: {{}}\n" for d in DETECTORS[:-1])
        + "  spin: {dictionary: ['package:spamflow.demo/texts/spin-dictionary.txt']}\n")
    done = subprocess.run([sys.executable, "-m", "spamflow_workflows", "run", "-c", "c.yaml", "--no-progress"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    stages = json.loads((tmp_path / "out" / "run.json").read_text())["stages"]
    assert {"ingest", "parse", *DETECTORS, "report"} <= {n for n, s in stages.items() if s.get("complete")}

    ingest = stages["ingest"]["counts"]
    assert (ingest["files"], ingest["snapshots"], ingest["bad_not_warc"]) == (2, 2, 0)
    theirs = {"2020-08": _warcio_pages(common_crawl), "2008-10": _warcio_pages(clueweb)}
    assert {k: len(v) for k, v in theirs.items()} == {"2020-08": 16, "2008-10": 29}
    parse = stages["parse"]
    assert parse["counts"]["pages"] == 45 and parse["bad_records"] == []
    assert parse["counts"]["dates_repaired_day_of_year"] == 30  # every ClueWeb09 record, warcinfo too

    rows = ds.dataset(parse["outputs"]["pages"]).to_table(
        columns=["snapshot", "url", "host", "title", "trec_id", "fetch_time"]).to_pylist()
    for snapshot, pages in theirs.items():
        ours = sorted((r for r in rows if r["snapshot"] == snapshot), key=lambda r: r["url"])
        pages = sorted(pages, key=lambda p: str(p["url"]))
        assert [(r["url"], r["trec_id"], r["title"]) for r in ours] == [(p["url"], p["trec_id"], p["title"])
                                                                      for p in pages]
    clueweb_rows = [r for r in rows if r["snapshot"] == "2008-10"]
    assert sorted(r["trec_id"] for r in clueweb_rows) == [f"clueweb09-ja0016-50-{i:05d}" for i in range(29)]
    assert {r["fetch_time"] for r in clueweb_rows} == {datetime(2008, 10, 20, 12, 21, 46, tzinfo=UTC)}
    titles = {r["host"]: r["title"] for r in rows if r["snapshot"] == "2020-08"}
    assert titles["01spb.ru"] == "О компании - Стратегия пожарной безопасности"  # windows-1251, hand-read
    assert titles["037426.cn"] == "亚洲精品无码免费视频 亚洲精品无码免费视频 含羞草视频独家共享"  # gb2312
    assert not any("\ufffd" in r["title"] for r in rows)

    report = stages["report"]["outputs"]
    index = next(p for p in map(str, report.values()) if p.endswith("index.html"))
    text = open(index, encoding="utf-8").read()
    assert '<meta charset="utf-8">' in text
    table = lxml.html.fromstring(text).get_element_by_id("host-table")
    header = [th.text_content().strip() for th in table.findall(".//thead/tr/th")]
    host_rows = [[td.text_content().strip() for td in tr.findall("td")] for tr in table.findall(".//tbody/tr")]
    at = {name: header.index(name) for name in ("snapshot", "host", "title", "fired")}
    assert Counter(r[at["snapshot"]] for r in host_rows) == {"2020-08": 15, "2008-10": 1}
    fired = [len(r[at["fired"]].split()) for r in host_rows]
    assert fired == sorted(fired, reverse=True)  # no classifier: hosts by the detectors that fired
    assert (host_rows[0][at["host"]], host_rows[0][at["fired"]]) == ("www.uraharajuku.st", "quilt")
    # not spin: its duplicate product pages are one registered domain's, no campaign (docs/fired.md)
    shown = {r[at["host"]]: r[at["title"]] for r in host_rows}
    assert shown["01spb.ru"] == titles["01spb.ru"] and shown["037426.cn"] == titles["037426.cn"]
    assert "О компании - Стратегия пожарной безопасности" in text  # as characters, not escaped
