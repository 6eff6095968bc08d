"""The ids detector's extraction on real pages of ../shared/data (skipped when absent): how
many pages carry each kind of identifier (counted once, recorded in docs/ids.md), the real
doorway kit's shared GA4 id and shortlinks, and the honest publisher families that share
analytics accounts across their domains without any host firing (only networks joined by
link-borne ids fire)."""

from __future__ import annotations

import csv
import gzip
import tarfile
from collections import Counter, defaultdict

import pytest

from spamflow.domains import registered_domain
from spamflow.parse.html_text import extract
from spamflow_ids.extract import html_ids, page_ids
from spamflow_ids.networks import AFFILIATE_KINDS, assemble, group_occurrences, id_kind, page_occurrences
from spamflow_ids.params import IdsParams

from conftest import shared_data

RULES = IdsParams().rules()


def _ids(body: bytes, url: str, host: str) -> list[str]:
    text = body.decode("latin-1")
    links = [link.url for link in extract(body, url).links]
    return page_ids(links, host, registered_domain(host), RULES, html_ids(text))


def _members(path) -> list[tuple[str, bytes]]:
    """(name, bytes) of every file of a tar archive, read in archive order (an .xz stream
    cannot seek back) and returned by name."""
    with tarfile.open(path) as tar:
        return sorted((m.name.removeprefix("./"), tar.extractfile(m).read()) for m in tar if m.isfile())


def _kinds(pages: list[list[str]]) -> dict[str, int]:
    """Pages carrying at least one identifier of each kind."""
    return dict(sorted(Counter(k for ids in pages for k in {i.split(":")[0] for i in ids}).items()))


@pytest.fixture(scope="module")
def trafilatura() -> list[tuple[str, str, list[str]]]:
    """(host, url, identifiers) of every page of the trafilatura evaluation set: HTML and
    link identifiers (pages of ``hard::`` entries have no URL: their file is their site and
    only their HTML identifiers are read)."""
    folder = shared_data("html-trafilatura-eval")
    with open(folder / "index.tsv", encoding="utf-8") as fh:
        index = {(r["dir"], r["file"]): r for r in csv.DictReader(fh, delimiter="\t")}
    out = []
    for name, body in _members(folder / "trafilatura-tests-html.tar.xz"):
        row = index.get(tuple(name.split("/")[-2:]))
        if row is None:
            continue
        if row["host"]:
            out.append((row["host"], row["url"], _ids(body, row["url"], row["host"])))
        else:
            out.append((row["file"], f"file:{row['file']}", html_ids(body.decode("latin-1"))))
    return out


@pytest.fixture(scope="module")
def article_benchmark() -> list[tuple[str, str, list[str]]]:
    """(host, url, identifiers) of every page of the article-extraction benchmark."""
    folder = shared_data("html-article-extraction-benchmark")
    with open(folder / "index.tsv", encoding="utf-8") as fh:
        urls = {r["id"]: (r["url"], r["host"]) for r in csv.DictReader(fh, delimiter="\t")}
    out = []
    for name, body in _members(folder / "html.tar"):
        key = name.rsplit("/", 1)[-1].removesuffix(".html.gz")
        if key in urls:
            url, host = urls[key]
            out.append((host, url, _ids(gzip.decompress(body), url, host)))
    return out


def _assemble(pages: list[tuple[str, str, list[str]]]):
    """Host rows, networks and platform ids of ``pages`` as one snapshot (``max_domains`` 20)."""
    pairs = [p for k, (host, url, ids) in enumerate(pages)
             for p in page_occurrences("t", host, registered_domain(host), k, url, ids)]
    records = group_occurrences(pairs, max_domains=20, max_examples=1)
    host_pages: dict[tuple[str, str], tuple[str, int]] = {}
    for host, _, _ in pages:
        d, n = host_pages.get(("t", host), (registered_domain(host), 0))
        host_pages[("t", host)] = (d, n + 1)
    return (records, *assemble(records, host_pages))


@pytest.mark.slow
def test_counts_on_the_trafilatura_pages(trafilatura):
    assert len(trafilatura) == 990
    assert _kinds([ids for _, _, ids in trafilatura]) == {
        "adsense": 135, "aff": 29, "ga4": 53, "gtm": 329, "path": 3, "short": 50, "ua": 448}


def test_honest_publisher_families_share_analytics_ids_but_no_honest_host_fires(trafilatura, article_benchmark):
    """The honest sets as one crawl: their networks are media groups joined by analytics,
    tag-manager and AdSense ids only; no affiliate id, affiliate path or shortlink is on two
    registered domains, so no host fires (``affiliate_network_domains`` ≥ 2) while the
    networks stay as features (``network_domains``)."""
    records, rows, networks, platform = _assemble(trafilatura + article_benchmark)
    assert platform == []  # no identifier is on more than 20 of these pages' domains
    shared = Counter(id_kind(r["id"]) for r in records if r["domains"] >= 2)
    assert dict(shared) == {"adsense": 7, "ga4": 1, "gtm": 13, "ua": 21}
    linked = Counter(id_kind(r["id"]) for r in records if id_kind(r["id"]) in AFFILIATE_KINDS)
    assert dict(linked) == {"aff": 42, "path": 3, "short": 138}  # each on one registered domain
    domains = [n["domains"] for n in networks]
    # one publisher's sites each: not spam, but operator networks all the same (docs/ids.md, "fired")
    assert ["cnet.de", "zdnet.de"] in domains
    assert ["brigitte.de", "stern.de"] in domains
    assert ["abc13.com", "abc7news.com"] in domains
    assert max(len(d) for d in domains) <= 5
    assert len(networks) == 28 and all(id_kind(i) not in AFFILIATE_KINDS for n in networks for i in n["ids"])
    assert sum(r["network_domains"] >= 2 for r in rows) == 82  # in an analytics/AdSense network: a feature
    assert [r["host"] for r in rows if r["affiliate_network_domains"] >= 2] == []


def test_counts_on_the_readability_and_article_benchmark_pages(article_benchmark):
    folder = shared_data("html-mozilla-readability")
    found = []
    for name, body in _members(folder / "readability-test-pages.tar.xz"):
        if name.endswith("source.html"):
            found.append(_ids(body, "http://readability.test/", "readability.test"))
    assert len(found) == 130
    assert _kinds(found) == {"adsense": 11, "aff": 5, "ga4": 2, "gtm": 16, "short": 6, "ua": 32}
    assert len(article_benchmark) == 181
    assert _kinds([ids for _, _, ids in article_benchmark]) == {
        "adsense": 27, "aff": 10, "gtm": 53, "short": 17, "ua": 83}


def test_the_real_doorway_kit_carries_one_ga4_id_and_two_shortlinks():
    """Template A pages carry one GA4 id and a bit.ly link, template B a shorturl.at link. The
    pages are ~160 KB each: the HTML ids of all 800 are counted, the link ids (which need the
    parser) of every page too."""
    folder = shared_data("doorway-spam-gambling")
    with open(folder / "index.tsv", encoding="utf-8") as fh:
        template = {r["file"]: r["generator_template"] for r in csv.DictReader(fh, delimiter="\t")}
    html: dict[str, Counter[str]] = defaultdict(Counter)
    links: dict[str, Counter[str]] = defaultdict(Counter)
    parsed: Counter[str] = Counter()
    for name, body in _members(folder / "umsid16-pages.tar.xz"):
        if name not in template:
            continue
        t = template[name]
        html[t].update(html_ids(body.decode("latin-1")))
        if parsed[t] < 400:
            parsed[t] += 1
            links[t].update(_ids(body, "https://umsid16.github.io/x/", "umsid16.github.io"))
    assert {t: dict(c) for t, c in html.items()} == {"A": {"ga4:G-98463Z5N4V": 400}, "B": {}}
    assert dict(links) == {"A": {"ga4:G-98463Z5N4V": 400, "short:bit.ly/47BYzgR": 400},
                           "B": {"short:shorturl.at/cgGL7": 399}}
