"""No false alarms from the mundane (issue 35, item 4): a spin campaign spans at least
``min_domains`` registered domains, error pages (HTTP 4xx/5xx, soft 404s) and boilerplate-only
pages never form or join one, and promoted sites are linked from copies on other registered
domains; on a hand-built page table with exact expectations, on both engines, and on the real
sample WARCs of ../shared/data (skipped when absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_spin import DEMO_DICTIONARY

from spamflow.detector import RunSettings, StageContext, StageOutputs
from spamflow.domains import registered_domain
from spamflow_spin.detector import SpinDetector
from spamflow_spin.mundane import Rules
from spamflow_spin.params import SpinParams

from conftest import ingest_and_parse, shared_data

LINKS = pa.list_(pa.struct([("url", pa.string()), ("anchor", pa.string())]))
SCHEMA = pa.schema([("doc_id", pa.int64()), ("url", pa.string()), ("host", pa.string()), ("domain", pa.string()),
                    ("snapshot", pa.string()), ("status", pa.int32()), ("title", pa.string()),
                    ("words", pa.list_(pa.string())), ("links", LINKS)])

ARTICLE = [f"spam{i}" for i in range(50)] + ["big", "fast", "house"]  # 53 words, 3 of them mutable
SPUN = [f"spam{i}" for i in range(50)] + ["large", "quick", "home"]
OTHER = [f"honest{i}" for i in range(60)]
NOT_FOUND = ["sorry", "the", "page", "you", "asked", "for", "was", "not", "found"] + [f"nav{i}" for i in range(31)]
SOFT_TITLE = ["sorry", "the", "page"] + [f"menu{i}" for i in range(31)]  # tiny; its title says "404"
TINY = ["your", "name", "your", "email", "subject", "message", "send"]


def _page(doc: int, url: str, words: list[str], *, status: int = 200, title: str = "A page",
          links: tuple[str, ...] = ()) -> dict:
    host = url.split("/")[2]
    return {"doc_id": doc, "url": url, "host": host, "domain": registered_domain(host), "snapshot": "2026-01",
            "status": status, "title": title, "words": words + ["shop"] * len(links),
            "links": [{"url": f"http://{target}/", "anchor": "shop"} for target in links]}


PAGES = [
    # the campaign: one article on three registered domains (x.com twice), one copy spun
    _page(1, "http://www.x.com/a", ARTICLE, links=("money.com", "partner.net")),
    _page(2, "http://blog.x.com/a", ARTICLE, links=("money.com", "partner.net", "www.x.com")),
    _page(3, "http://y.org/a", ARTICLE, links=("money.com", "www.y.org")),
    _page(4, "http://z.net/a", SPUN, links=("money.com",)),
    # a copy of it served as a 404, and one as a 503: error pages never join
    _page(5, "http://w.info/gone", ARTICLE, status=404, links=("money.com",)),
    _page(6, "http://v.info/busy", ARTICLE, status=503),
    # one site's duplicate pages (www. and shop. of one registered domain): not a campaign
    _page(7, "http://www.a.com/about", OTHER, title="About us"),
    _page(8, "http://shop.a.com/about", OTHER, title="About us", links=("ckan.org",)),
    # soft 404s on two domains (status 200, a tiny page saying "not found"), and one by its title
    _page(9, "http://b.com/missing", NOT_FOUND, title="Oops"),
    _page(10, "http://c.com/missing", NOT_FOUND, title="Oops"),
    _page(11, "http://d.com/x", SOFT_TITLE, title="Error 404 (Not Found)!!1"),
    _page(12, "http://e.com/x", SOFT_TITLE, title="Error 404 (Not Found)!!1"),
    # boilerplate only (7 article words) on two domains
    _page(13, "http://f.com/contact", TINY, title="Contact"),
    _page(14, "http://g.com/contact", TINY, title="Contact"),
    # an unrelated page
    _page(15, "http://h.com/", [f"h{i}" for i in range(40)]),
]


def _table(folder: Path, pages: list[dict] = PAGES) -> Path:
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(pages, schema=SCHEMA), folder / "part-00000.parquet")
    return folder


def _dictionary(tmp_path: Path) -> str:
    path = tmp_path / "dict.txt"
    path.write_text("big|large\nfast|quick\nhouse|home\n")
    return str(path)


def _run(pages: Path, outdir: Path, params: dict) -> tuple[dict, dict]:
    outdir.mkdir(parents=True)
    parse = StageOutputs("parse", pages.parent, {"pages": pages}, {})
    result = SpinDetector().run(StageContext(SpinParams.model_validate(params), {"parse": parse}, outdir,
                                             RunSettings(runner="inline", progress=False)))
    out = {name: [json.loads(line) for line in (outdir / result.outputs[name]).read_text().splitlines()]
           for name in ("pairs", "campaigns", "dropped_clusters", "excluded_pages")}
    out["hosts"] = pq.read_table(outdir / result.outputs["hosts"]).to_pylist()
    return out, result.counts


def test_soft_404_and_boilerplate_rules_hand_worked():
    rules = Rules.of(min_article_words=30)
    assert rules.reason(404, "Anything", ARTICLE) == "http_error"
    assert rules.reason(500, "Anything", ARTICLE) == "http_error"
    assert rules.reason(399, "Anything", ARTICLE) is None
    assert rules.reason(200, "Oops", NOT_FOUND) == "soft_404"  # its text says "not found"
    assert rules.reason(200, "Page Not Found!", ARTICLE) == "soft_404"  # its title does (53 words: tiny)
    assert rules.reason(301, "Server error", ARTICLE) == "soft_404"
    assert rules.reason(None, "The requested URL could not be found", ARTICLE) == "soft_404"
    assert rules.reason(200, "Page Not Found!", ["w"] * 101) is None  # over 100 article words: an article
    assert rules.reason(200, "Errors and terrors", ARTICLE) is None  # whole words only
    assert rules.reason(200, "A page", ARTICLE[:29]) == "boilerplate"
    assert rules.reason(200, "A page", ARTICLE[:30]) is None
    paper = Rules.of(exclude_error_pages=False, min_article_words=0)
    assert paper.reason(404, "Page not found", NOT_FOUND) is None and paper.reason(200, "", TINY) is None


@pytest.mark.parametrize("engine", ["memory", "mapreduce"])
def test_hand_built_campaign_drops_one_domain_clusters_and_error_pages(tmp_path, engine):
    pages = _table(tmp_path / "pages")
    params = {"dictionary": [_dictionary(tmp_path)], "engine": engine}
    out, counts = _run(pages, tmp_path / "out", params)
    # DSpin's pairs are unchanged by the rules: every copy pairs with every other
    pairs = {(p["doc_a"], p["doc_b"], p["kind"]) for p in out["pairs"]}
    assert {(1, 2, "duplicate"), (1, 3, "duplicate"), (1, 5, "duplicate"), (1, 6, "duplicate"),
            (7, 8, "duplicate"), (9, 10, "duplicate"), (11, 12, "duplicate"), (13, 14, "duplicate")} <= pairs
    assert {(a, b) for a, b, kind in pairs if kind == "spun"} == {(1, 4)}  # the article's representative
    # one campaign: the article's copies on x.com, y.org and z.net, not the 404 and 503 copies
    [campaign] = out["campaigns"]
    assert campaign["campaign"] == "2026-01/1"
    assert [p["doc_id"] for p in campaign["pages"]] == [1, 2, 3, 4]
    assert (campaign["articles"], campaign["spun_articles"], campaign["hosts"], campaign["domains"]) == (4, 2, 4, 3)
    # promoted: money.com (4 of 4 copies, three domains); not partner.net (2 of 4, from x.com's copies
    # only), nor www.x.com and www.y.org (linked from their own registered domain)
    assert campaign["promoted_sites"] == [{"host": "money.com", "pages": 4}]
    # the one-domain cluster is dropped and listed
    [dropped] = out["dropped_clusters"]
    assert dropped["cluster"] == "2026-01/dropped/1" and [p["doc_id"] for p in dropped["pages"]] == [7, 8]
    assert dropped["domains"] == 1 and "fewer than min_domains = 2" in dropped["reason"]
    assert {(e["doc_id"], e["reason"]) for e in out["excluded_pages"]} == {
        (5, "http_error"), (6, "http_error"), (9, "soft_404"), (10, "soft_404"), (11, "soft_404"),
        (12, "soft_404"), (13, "boilerplate"), (14, "boilerplate")}
    assert {k: counts[k] for k in counts if "_excluded_" in k or "dropped_few" in k or k.startswith("campaign")} == {
        "pages_excluded_http_error": 2, "pages_excluded_soft_404": 4, "pages_excluded_boilerplate": 2,
        "paired_pages_excluded_http_error": 2, "paired_pages_excluded_soft_404": 4,
        "paired_pages_excluded_boilerplate": 2, "clusters_dropped_few_domains": 1,
        "cluster_pages_dropped_few_domains": 2, "campaigns": 1, "campaign_pages": 4}
    # fired (campaign_pages > 0): exactly the hosts of the campaign's copies
    fired = {h["host"] for h in out["hosts"] if h["campaign_pages"] > 0}
    assert fired == {"www.x.com", "blog.x.com", "y.org", "z.net"}
    assert not any(h["is_promoted"] for h in out["hosts"])  # money.com is not crawled here


def test_the_papers_behaviour_is_one_setting_away(tmp_path):
    pages = _table(tmp_path / "pages")
    params = {"dictionary": [_dictionary(tmp_path)], "engine": "memory", "min_domains": 1,
              "exclude_error_pages": False, "min_article_words": 0}
    out, counts = _run(pages, tmp_path / "out", params)
    assert [[p["doc_id"] for p in c["pages"]] for c in out["campaigns"]] == [
        [1, 2, 3, 4, 5, 6], [7, 8], [9, 10], [11, 12], [13, 14]]
    assert out["dropped_clusters"] == [] and out["excluded_pages"] == []
    assert counts["clusters_dropped_few_domains"] == 0 and counts["pages_excluded_http_error"] == 0
    # min_domains 1: a site linked from one domain's copies only is promoted again
    assert [s["host"] for s in out["campaigns"][0]["promoted_sites"]] == ["money.com"]
    # and one site linking out makes a "promoted site" of an honest host (the ckan.org)
    assert out["campaigns"][1]["promoted_sites"] == [{"host": "ckan.org", "pages": 1}]


def test_engines_agree_with_excluded_pages_and_dropped_clusters(tmp_path):
    pages = _table(tmp_path / "pages")
    params = {"dictionary": [_dictionary(tmp_path)]}
    memory = _run(pages, tmp_path / "memory", {**params, "engine": "memory"})
    streamed = _run(pages, tmp_path / "mapreduce", {**params, "engine": "mapreduce"})
    assert memory[0] == streamed[0]
    engine = "engine_mapreduce_snapshots"
    assert {k: v for k, v in memory[1].items() if k != engine} == {k: v for k, v in streamed[1].items() if k != engine}


# ---------------------------------------------------------------- the real sample WARCs

HONEST = {"data.gov.uk", "example.com", "html5shiv.googlecode.com", "www.uraharajuku.st", "an.wikipedia.org",
          "tokemon.sb.statsbiblioteket.dk", "ckan.org", "okfn.org", "www.number10.gov.uk"}
"""Hosts of the samples that are not spam (the data.gov.uk crawl, the example and test pages,
Google Code's 404 page, a ClueWeb09 bag shop) and honest sites data.gov.uk links to."""


def test_real_sample_warcs_no_mundane_campaign(tmp_path):
    folder = shared_data("warc-samples")
    files = sorted(p for p in folder.iterdir() if p.name.endswith((".warc.gz", ".arc.gz")))
    rows, _, _ = ingest_and_parse(tmp_path, files)
    pages = tmp_path / "parse" / "pages"
    by_doc = {r["doc_id"]: r for r in rows}
    rules = Rules.of(min_article_words=30)
    runs = {engine: _run(pages, tmp_path / engine, {"dictionary": [DEMO_DICTIONARY], "engine": engine})
            for engine in ("memory", "mapreduce")}
    assert runs["memory"][0] == runs["mapreduce"][0]
    out, counts = runs["memory"]
    assert len(out["pairs"]) == 41  # DSpin's pairs: 39 duplicates (mostly the data.gov.uk re-crawl), 2 spun
    for c in out["campaigns"]:  # none on these samples; the rules hold for any
        assert len({registered_domain(p["host"]) for p in c["pages"]}) >= 2, c["campaign"]
        for p in c["pages"]:
            row = by_doc[p["doc_id"]]
            assert (row["status"] or 0) < 400 and rules.reason(row["status"], row["title"], row["words"]) is None
        assert not {s["host"] for s in c["promoted_sites"]} & HONEST
    assert out["campaigns"] == [] and counts["campaigns"] == 0
    # the 35 one-host clusters the issue saw: 31 dropped for one registered domain, 4 made only of
    # error pages (data.gov.uk's favicon.ico and /interact 404s, its 403 search page, Google Code's 404)
    assert counts["clusters_dropped_few_domains"] == 31
    assert all(d["domains"] == 1 for d in out["dropped_clusters"])
    excluded = {(e["url"], e["reason"]) for e in out["excluded_pages"]}
    assert {("http://data.gov.uk/favicon.ico", "http_error"), ("http://data.gov.uk/interact", "http_error"),
            ("http://html5shiv.googlecode.com/robots.txt", "http_error"),
            ("http://example.com/", "boilerplate")} <= excluded
    fired = {h["host"] for h in out["hosts"] if h["campaign_pages"] > 0}
    promoted = {h["host"] for h in out["hosts"] if h["is_promoted"]}
    assert fired == set() and promoted == set()  # docs/quality.md: no host fires for spin here


def test_report_section_says_what_was_kept_out_of_campaigns():
    from spamflow_spin.report_section import not_campaigns

    counts = {"clusters_dropped_few_domains": 31, "paired_pages_excluded_http_error": 8,
              "paired_pages_excluded_soft_404": 0, "paired_pages_excluded_boilerplate": 4}
    assert not_campaigns(counts) == (
        "<p>Not campaigns: 31 clusters of copies on one registered domain (<code>dropped_clusters</code>); "
        "paired pages kept out as error or boilerplate pages: 8 http error, 4 boilerplate "
        "(<code>excluded_pages</code>).</p>")
    assert not_campaigns({"clusters_dropped_few_domains": 1}) == (
        "<p>Not campaigns: 1 cluster of copies on one registered domain (<code>dropped_clusters</code>).</p>")
    assert not_campaigns({}) == ""  # a run from before the rules
