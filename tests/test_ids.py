"""The ``ids`` detector on a hand-built crawl: per-page identifiers as declared, networks equal
to networkx's connected components of the declared sharing, platform ids dropped and
counted, decoys ignored, both engines equal, and its report hooks."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pyarrow.parquet as pq
import pytest

from spamflow.detector import RunSettings, StageContext, StageOutputs
from spamflow.domains import registered_domain
from spamflow.parse.warc_file import parse_warc_file
from spamflow_ids.detector import IdsDetector
from spamflow_ids.extract import html_ids, link_ids
from spamflow_ids.networks import assemble, id_record
from spamflow_ids.params import IdsParams

from warc_factory import Resp, html, write_warc

MAX_DOMAINS = 3
SNAPSHOT = "2026-01"

# Each page: url, its HTML (head, body), and the identifiers a person reads off it.
PAGES: list[tuple[str, str, str, set[str]]] = [
    # network A: a casino operator on lapsed domains, three layouts; joined by bta (own-site /visit/ links),
    # its AdSense publisher id and a tag-manager container that chains d4.info in
    ("http://www.casino-a1.com/", "", '<a href="/visit/?bta=40211&nci=5">play</a>'
     '<ins class="adsbygoogle" data-ad-client="ca-pub-1111222233334444"></ins>',
     {"aff:bta=40211", "adsense:pub-1111222233334444"}),
    ("http://www.casino-a1.com/slots.html", "", '<a href="http://www.casino-a1.com/visit/?bta=40211">spin</a>',
     {"aff:bta=40211"}),
    ("http://blog.lapsed-b2.org/", "<script>var x = 1;</script>",
     '<a href="https://blog.lapsed-b2.org/visit/?bta=40211">bonus</a> <a href="/about">about</a>', {"aff:bta=40211"}),
    ("http://old-c3.net/", "<script async src=\"https://pagead2.googlesyndication.com/pagead/js/adsbygoogle.js"
     "?client=ca-pub-1111222233334444\"></script>", '<p>Best casinos</p>'
     '<noscript><iframe src="https://www.googletagmanager.com/ns.html?id=GTM-AB12CD"></iframe></noscript>',
     {"adsense:pub-1111222233334444", "gtm:GTM-AB12CD"}),
    ("http://d4.info/", "<script>(function(w,d,s,l,i){})(window,document,'script','dataLayer','GTM-AB12CD');"
     "</script>", "<p>Poker news</p>", {"gtm:GTM-AB12CD"}),
    # network B: one Amazon Associates tag on two domains; the same tag on a link to a non-Amazon host is no id
    ("http://e5.com/review", "", '<a href="https://www.amazon.com/dp/B0001?tag=shop0-21">buy</a>'
     '<a href="https://bit.ly/Theme9x">theme</a>', {"aff:tag=shop0-21", "short:bit.ly/Theme9x"}),
    ("http://www.f6.co.uk/best", "<script>gtag('config', 'G-ZX81QW3ER7');</script>",
     '<a href="https://www.amazon.co.uk/dp/B0002/?tag=shop0-21&th=1">buy</a>',
     {"aff:tag=shop0-21", "ga4:G-ZX81QW3ER7"}),
    ("http://g7.com/", "", '<a href="https://shop.example.org/p?tag=shop0-21">not amazon</a>'
     '<a href="https://bit.ly/Theme9x">theme</a>', {"short:bit.ly/Theme9x"}),
    # one registered domain, two hosts, one analytics account (two properties): not a network
    ("http://a.h8.com/", "<script>ga('create', 'UA-9999999-1', 'auto');</script>", "<p>a</p>", {"ua:UA-9999999"}),
    ("http://b.h8.com/", "<script>ga('create', 'UA-9999999-2', 'auto');</script>", "<p>b</p>", {"ua:UA-9999999"}),
    # the platform: a theme's shortlink on four registered domains (> MAX_DOMAINS), which would join B to g7
    ("http://i9.com/", "", '<a href="http://bit.ly/Theme9x">theme</a>', {"short:bit.ly/Theme9x"}),
    ("http://j10.com/", "", '<a href="https://www.bit.ly/Theme9x">theme</a>', {"short:bit.ly/Theme9x"}),
    # decoys: labels not ids, ids in text, too short, an affiliate path on the page's own domain
    ("http://k11.com/", "<script>var s = 'G-STRINGS';</script>",
     '<p>Flight UA-12 to G-ZX81QW3ER7 and pub-123</p><a href="/?ref=footer">x</a>'
     '<a href="http://k11.com/go/7777">own cloak</a><a href="https://partners.casino-z.com/aff/88123/">z</a>',
     {"path:partners.casino-z.com/aff/88123"}),
    ("http://l12.com/", "", '<a href="http://m13.com/?ref=footer">x</a><a href="http://m13.com/?ref=1">y</a>'
     '<a href="https://partners.casino-z.com/aff/88123/?x=1">z</a>', {"path:partners.casino-z.com/aff/88123"}),
    ("http://n14.com/", "", "<p>no ids at all</p>", set()),
]


LINK_BORNE = ("aff:", "path:", "short:")
"""The declared ids that a page's links carry (affiliate tracking ids, affiliate paths,
shortlinks), written out here rather than imported: only networks joined by these fire."""


def declared_networks(max_domains: int, prefixes: tuple[str, ...] = ("",)) -> list[list[str]]:
    """The expected networks from the declared ids alone, by networkx: hosts joined by an id
    (starting with one of ``prefixes``) on 2..max_domains registered domains; components of
    2+ hosts."""
    hosts_of: dict[str, set[str]] = {}
    for url, _, _, ids in PAGES:
        for i in (i for i in ids if i.startswith(prefixes)):
            hosts_of.setdefault(i, set()).add(url.split("/")[2])
    g = nx.Graph()
    for hosts in hosts_of.values():
        domains = {registered_domain(h) for h in hosts}
        if 2 <= len(domains) <= max_domains:
            first, *rest = sorted(hosts)
            g.add_edges_from((first, h) for h in rest)
    return sorted(sorted(c) for c in nx.connected_components(g) if len(c) > 1)


@pytest.fixture(scope="module")
def crawl(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ids-crawl")
    warc = root / "crawl.warc.gz"
    write_warc(warc, [Resp(url, html("t", body, head)) for url, head, body, _ in PAGES])
    pages = root / "parse" / "pages"
    pages.mkdir(parents=True)
    parse_warc_file(warc, SNAPSHOT, pages / "part-00000.parquet", max_bytes=5_000_000)
    return root


def run_ids(crawl: Path, out: Path, **params) -> dict:
    out.mkdir(parents=True)
    ctx = StageContext(params=IdsParams(max_domains=MAX_DOMAINS, **params),
                       inputs={"parse": StageOutputs("parse", crawl / "parse", {"pages": crawl / "parse" / "pages"},
                                                     {"max_bytes": 5_000_000})},
                       outdir=out, settings=RunSettings(progress=False))
    result = IdsDetector().run(ctx)
    read = {"counts": result.counts, "hosts": pq.read_table(out / "hosts.parquet").to_pylist()}
    for name in ("networks", "platform_ids"):
        read[name] = [json.loads(line) for line in (out / result.outputs[name]).read_text().splitlines()]
    return read


@pytest.fixture(scope="module")
def memory(crawl, tmp_path_factory) -> dict:
    return run_ids(crawl, tmp_path_factory.mktemp("ids-memory") / "out", engine="memory")


@pytest.mark.parametrize("url,head,body,expected", PAGES, ids=[p[0] for p in PAGES])
def test_each_page_gives_the_ids_a_person_reads_off_it(url, head, body, expected):
    from spamflow.parse.html_text import extract

    rules = IdsParams().rules()
    host = url.split("/")[2]
    page = extract(html("t", body, head).decode(), url)
    found = set(html_ids(html("t", body, head).decode()))
    for link in page.links:
        found.update(link_ids(link.url, host, registered_domain(host), rules))
    assert found == expected


def test_networks_are_the_connected_components_of_the_declared_sharing(memory):
    expected = declared_networks(MAX_DOMAINS)
    assert [n["hosts"] for n in memory["networks"]] == expected
    assert expected == [["blog.lapsed-b2.org", "d4.info", "old-c3.net", "www.casino-a1.com"],
                        ["e5.com", "www.f6.co.uk"], ["k11.com", "l12.com"]]
    a = memory["networks"][0]
    assert a["network"] == f"{SNAPSHOT}/1" and a["domains"] == ["casino-a1.com", "d4.info", "lapsed-b2.org",
                                                                 "old-c3.net"]
    assert a["ids"] == ["adsense:pub-1111222233334444", "aff:bta=40211", "gtm:GTM-AB12CD"]
    bta = a["evidence"]["aff:bta=40211"]["www.casino-a1.com"]
    assert bta["pages"] == 2
    assert sorted(u for _, u in bta["examples"]) == ["http://www.casino-a1.com/", "http://www.casino-a1.com/slots.html"]


def test_platform_ids_are_dropped_and_counted(memory):
    assert memory["platform_ids"] == [{"snapshot": SNAPSHOT, "id": "short:bit.ly/Theme9x", "domains": 4, "hosts": 4}]
    assert memory["counts"]["platform_ids_dropped"] == 1
    by_host = {r["host"]: r for r in memory["hosts"]}
    assert by_host["g7.com"]["platform_ids"] == 1 and by_host["g7.com"]["network_domains"] == 0


def test_host_features_and_who_fires(memory):
    by_host = {r["host"]: r for r in memory["hosts"]}
    assert len(by_host) == len({p[0].split("/")[2] for p in PAGES})
    a1 = by_host["www.casino-a1.com"]
    assert (a1["pages"], a1["ids"], a1["shared_ids"], a1["domains_sharing"], a1["network_hosts"],
            a1["network_domains"]) == (2, 2, 2, 2, 4, 4)
    assert a1["ids_per_page"] == pytest.approx(1.5)  # bta on both pages, AdSense on one
    assert by_host["old-c3.net"]["domains_sharing"] == 2  # casino-a1 (AdSense) and d4 (GTM)
    assert by_host["d4.info"]["domains_sharing"] == 1 and by_host["d4.info"]["network_domains"] == 4
    in_networks = sorted(h for h, r in by_host.items() if r["network_domains"] >= 2)
    assert in_networks == sorted(h for n in declared_networks(MAX_DOMAINS) for h in n)
    assert by_host["a.h8.com"]["ids"] == 1 and by_host["a.h8.com"]["network_domains"] == 0  # one domain: no network
    assert memory["counts"]["hosts_in_networks"] == len(in_networks) == 8


def test_only_networks_of_link_borne_ids_fire(memory):
    """A host fires when affiliate ids, affiliate paths or shortlinks join it to another
    registered domain: the bta pair of network A, the Amazon tag pair, the affiliate-path pair.
    old-c3.net and d4.info are in network A by its AdSense id and GTM container only, as
    honest media groups are: a feature (network_domains 4), not a firing."""
    by_host = {r["host"]: r for r in memory["hosts"]}
    expected = declared_networks(MAX_DOMAINS, LINK_BORNE)
    assert expected == [["blog.lapsed-b2.org", "www.casino-a1.com"], ["e5.com", "www.f6.co.uk"],
                        ["k11.com", "l12.com"]]
    fired = sorted(h for h, r in by_host.items() if r["affiliate_network_domains"] >= 2)
    assert fired == sorted(h for n in expected for h in n)
    assert {h: by_host[h]["affiliate_network_domains"] for h in fired} == dict.fromkeys(fired, 2)
    for host in ("old-c3.net", "d4.info"):
        assert (by_host[host]["network_domains"], by_host[host]["affiliate_network_domains"]) == (4, 0)
    assert memory["counts"]["hosts_fired"] == 6


def test_the_ensembles_evidence_fires_by_the_same_rule(memory):
    from spamflow_ensemble.evidence import fired_detectors

    for r in memory["hosts"]:
        row = {f"ids.{k}": float(r[k]) for k in ("network_domains", "affiliate_network_domains", "domains_sharing")}
        fired = fired_detectors(row, (SNAPSHOT, r["host"]), {})
        assert ("ids" in fired) == (r["affiliate_network_domains"] >= 2), r["host"]


def test_html_kinds_empty_reads_only_links(crawl, tmp_path):
    got = run_ids(crawl, tmp_path / "out", engine="memory", html_kinds=[])
    assert got["counts"]["warc_files_scanned"] == 0
    assert [n["hosts"] for n in got["networks"]] == [["blog.lapsed-b2.org", "www.casino-a1.com"],
                                                     ["e5.com", "www.f6.co.uk"], ["k11.com", "l12.com"]]


def test_mapreduce_engine_equals_memory_inline(crawl, memory, tmp_path):
    got = run_ids(crawl, tmp_path / "out", engine="mapreduce")
    assert got == memory


def test_records_do_not_depend_on_input_order():
    occ = [("b.x.com", "x.com", 2, "http://b.x.com/"), ("a.y.com", "y.com", 1, "http://a.y.com/"),
           ("a.y.com", "y.com", 3, "http://a.y.com/2")]
    one = id_record("s", "aff:bta=1", occ, max_domains=5, max_examples=1)
    two = id_record("s", "aff:bta=1", occ[::-1], max_domains=5, max_examples=1)
    assert one == two and list(one["hosts"]) == ["a.y.com", "b.x.com"]
    assert one["hosts"]["a.y.com"] == {"domain": "y.com", "pages": 2, "examples": [[1, "http://a.y.com/"]]}
    pages = {("s", "a.y.com"): ("y.com", 2), ("s", "b.x.com"): ("x.com", 1)}
    assert assemble([one], pages) == assemble([two], dict(reversed(list(pages.items()))))


def test_bad_pattern_is_a_config_error():
    with pytest.raises(ValueError, match="affiliate_paths"):
        IdsParams(affiliate_paths=["/aff/(unclosed"])
    with pytest.raises(ValueError, match="group"):
        IdsParams(affiliate_paths=["/aff/[0-9]+"])


def test_report_hooks_show_each_network_with_its_evidence(crawl, tmp_path):
    from spamflow_ids.report_section import (
        spamflow_report_evidence,
        spamflow_report_evidence_kinds,
        spamflow_report_host_columns,
        spamflow_report_section,
    )

    out = tmp_path / "out"
    run_ids(crawl, out, engine="memory")
    record = {"outputs": {"hosts": str(out / "hosts.parquet"), "networks": str(out / "networks.jsonl"),
                          "platform_ids": str(out / "platform_ids.jsonl")},
              "params": {"max_domains": MAX_DOMAINS},
              "counts": {"networks": 3, "hosts_in_networks": 8, "hosts_fired": 6}}
    assert spamflow_report_evidence_kinds() == {"network": "networks"}
    evidence = spamflow_report_evidence("ids", record, max_items=2)
    assert evidence.total == 3 and [e.key for e in evidence.items] == ["network:2026-01/1", "network:2026-01/2"]
    assert ("2026-01", "d4.info") in evidence.items[0].hosts
    assert "aff:bta=40211" in evidence.items[0].html and "http://www.casino-a1.com/slots.html" in evidence.items[0].html
    section = spamflow_report_section("ids", record, evidence)
    assert section.anchor == "ids" and "short:bit.ly/Theme9x" in section.html and "1 more networks" in section.html
    rule = spamflow_report_host_columns("ids").fired
    assert (rule.column, rule.above) == ("affiliate_network_domains", 1)
    assert spamflow_report_evidence("spin", record, max_items=2) is None
