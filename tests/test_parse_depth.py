"""Issue 36 item 4: a page nested deeper than ``parse.max_depth`` is parsed up to the start
tag that goes deeper and counted ``too_deep`` (lexbor's cost grows with depth x tags: 200,000
nested ``<div>`` s ran for minutes), the same in both parse engines; ordinary pages are never cut."""

from __future__ import annotations

import json
import time

import pyarrow.dataset as ds
import pytest

from spamflow.detector import RunSettings, StageContext, StageOutputs
from spamflow.parse.html_depth import cut_offset
from spamflow.parse.warc_file import parse_warc_file
from spamflow.stages.parse import ParseParams, ParseStage

from warc_factory import Resp, html, write_warc

DEEP = 50_000  # lexbor alone: ~2.5 s for this page whole


def _deep_page(levels: int, tag: str = "div", between: str = "") -> bytes:
    return html("deep", "before the nest " + (f"<{tag}>{between}" * levels) + "inside", head="")


def test_cut_offset_cuts_at_the_start_tag_that_goes_deeper():
    page = _deep_page(1000)
    cut = cut_offset(page, 100)
    assert cut is not None and page[cut:].startswith(b"<div>")
    # html, body and 98 divs are open before it
    assert page[:cut].count(b"<div>") == 98
    # unmatched end tags close nothing: no way round the limit
    assert cut_offset(_deep_page(1000, between="</x></span>"), 100) is not None
    assert cut_offset(_deep_page(1000, tag="div/"), 100) is not None  # <div/> opens a div in HTML


@pytest.mark.parametrize("body", [
    "<p>one" * 500,                                        # <p> closes the open <p>
    "<ul>" + "<li>item <br><img src=x>" * 500 + "</ul>",   # <li> closes <li>; void elements open nothing
    "<table>" + "<tr><td>a<td>b" * 300 + "</table>",
    "<svg>" + '<path d="M0 0"/>' * 500 + "</svg>",         # self-closed in SVG
    "<script>" + "var s = '<div>';" * 500 + "</script><!--" + "<div>" * 500 + "-->",
    "<div>x</div>" * 500,
])
def test_ordinary_markup_with_many_tags_is_not_cut(body):
    assert cut_offset(html("t", body), 100) is None


def _records(tmp_path, gzip=True):
    path = tmp_path / ("deep.warc.gz" if gzip else "deep.warc")
    write_warc(path, [Resp("http://a.example/", html("fine", "<p>a normal page</p>")),
                      Resp("http://b.example/deep", _deep_page(DEEP))], gzip=gzip)
    return path


def test_a_deep_page_is_cut_counted_and_parsed_fast(tmp_path):
    path = _records(tmp_path)
    started = time.process_time()
    result = parse_warc_file(path, "s", tmp_path / "out.parquet", max_bytes=5_000_000, max_depth=2000)
    assert time.process_time() - started < 1.0  # whole, lexbor alone takes seconds
    assert result.counts["pages"] == 2 and result.counts["bad_too_deep"] == 1
    bad = result.bad_records[0]
    assert bad["kind"] == "too_deep" and "parse.max_depth=2000" in bad["reason"]
    rows = {r["url"]: r for r in ds.dataset(tmp_path / "out.parquet").to_table().to_pylist()}
    deep = rows["http://b.example/deep"]
    assert deep["truncated"] and deep["title"] == "deep" and deep["html_bytes"] < 2000 * 6 + 200
    assert not rows["http://a.example/"]["truncated"]


def test_both_engines_cut_and_count_the_same(tmp_path):
    path = _records(tmp_path, gzip=False)
    ingest = tmp_path / "ingest"
    ingest.mkdir()
    (ingest / "warcs.jsonl").write_text(json.dumps({"path": str(path), "snapshot": "s",
                                                    "bytes": path.stat().st_size}) + "\n")
    upstream = StageOutputs("ingest", ingest, {"warcs": ingest / "warcs.jsonl"}, {})
    results = {}
    for engine in ("memory", "mapreduce"):
        out = tmp_path / engine
        out.mkdir()
        results[engine] = ParseStage().run(StageContext(ParseParams(max_depth=500, engine=engine),  # type: ignore[arg-type]
                                                        {"ingest": upstream}, out, RunSettings(progress=False)))
    assert results["memory"].counts["bad_too_deep"] == 1
    assert results["memory"].counts == results["mapreduce"].counts
    assert results["memory"].bad_records == results["mapreduce"].bad_records
