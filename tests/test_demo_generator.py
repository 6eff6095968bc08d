"""Checks of the demo web generator against independent computation.

The WARC files are read back with warcio, HTML is parsed with selectolax, registered
domains come from publicsuffixlist, and the spin check re-implements the spinner's
segmentation from the shipped dictionary file -- none of it reuses the generator's code.
"""

from __future__ import annotations

import csv
import ipaddress
import json
import re
import time
from collections import defaultdict
from functools import lru_cache
from importlib import resources
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from publicsuffixlist import PublicSuffixList
from selectolax.lexbor import LexborHTMLParser as HTMLParser
from warcio.archiveiterator import ArchiveIterator

from spamflow.demo import DemoHost, DemoPage, SyntheticWeb, build_web, write_demo
from spamflow.words import words

SNAPS = ("2026-01", "2026-02")
PSL = PublicSuffixList()


def norm(s: str) -> str:
    return " ".join(s.split())


def visible_text(body: bytes, charset: str = "utf-8") -> str:
    tree = HTMLParser(body.decode(charset))
    for node in tree.css("script, style"):
        node.decompose()
    return norm(tree.body.text(separator=" ")) if tree.body else ""


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("demo")
    return out, write_demo(out, seed=0)


@pytest.fixture(scope="module")
def records(demo) -> dict[str, list[dict]]:
    """snapshot -> records as read back by warcio."""
    out, _ = demo
    recs: dict[str, list[dict]] = defaultdict(list)
    for snap in SNAPS:
        files = sorted((out / "warc" / snap).glob("*.warc.gz"))
        assert [f.name for f in files] == [f"demo-{snap}-0000{n}.warc.gz" for n in (1, 2)]
        for f in files:
            with open(f, "rb") as fh:
                for i, rec in enumerate(ArchiveIterator(fh)):
                    if i == 0:
                        assert rec.rec_type == "warcinfo"
                    h = rec.rec_headers
                    recs[snap].append(
                        {
                            "type": rec.rec_type,
                            "id": h.get_header("WARC-Record-ID"),
                            "url": h.get_header("WARC-Target-URI"),
                            "ip": h.get_header("WARC-IP-Address"),
                            "date": h.get_header("WARC-Date"),
                            "refers_to": h.get_header("WARC-Refers-To"),
                            "profile": h.get_header("WARC-Profile"),
                            "status": int(rec.http_headers.get_statuscode())
                            if rec.http_headers and rec.rec_type != "request"
                            else None,
                            "ctype": rec.http_headers.get_header("Content-Type") if rec.http_headers else None,
                            "clen": rec.http_headers.get_header("Content-Length") if rec.http_headers else None,
                            "body": rec.content_stream().read(),
                        }
                    )
    return recs


def html_responses(recs: list[dict]) -> list[dict]:
    return [
        r
        for r in recs
        if r["type"] == "response"
        and r["ctype"]
        and r["ctype"].split(";")[0].strip() in ("text/html", "application/xhtml+xml")
    ]


def body_of(records, snap: str, url: str) -> bytes:
    """The payload of ``url`` in ``snap``; a revisit resolves to the snapshot-1 record it refers to."""
    for r in records[snap]:
        if r["url"] == url and r["type"] == "response":
            return r["body"]
        if r["url"] == url and r["type"] == "revisit":
            return next(x["body"] for x in records[SNAPS[0]] if x["id"] == r["refers_to"])
    raise KeyError(url)


def truth_of(demo) -> dict:
    return json.loads((demo[0] / "truth.json").read_text("utf-8"))


# ------------------------------------------------------------------------------ API and determinism
def test_build_web_is_fast_pure_and_typed():
    t = time.perf_counter()
    web = build_web(0)
    assert time.perf_counter() - t < 3
    assert isinstance(web, SyntheticWeb) and set(web.snapshots) == set(SNAPS)
    assert all(isinstance(h, DemoHost) for h in web.hosts)
    again = build_web(0)
    assert web.truth == again.truth
    assert [(p.url, p.body) for p in web.snapshots[SNAPS[1]]] == [(p.url, p.body) for p in again.snapshots[SNAPS[1]]]
    json.dumps(web.truth)
    for snap, pages in web.snapshots.items():
        y, m = map(int, snap.split("-"))
        for p in pages:
            assert isinstance(p, DemoPage) and p.snapshot == snap
            assert p.fetch_time.tzinfo is not None and (p.fetch_time.year, p.fetch_time.month) == (y, m)
            assert ipaddress.ip_address(p.ip) in ipaddress.ip_network("127.0.0.0/8")
            assert p.record in ("response", "revisit")
    assert build_web(1).truth["quilts"] != web.truth["quilts"]


def test_same_seed_gives_byte_identical_files(demo, tmp_path):
    out, summary = demo
    again = write_demo(tmp_path, seed=0)
    assert again["html_responses"] == summary["html_responses"]
    rel = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert rel == sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    for p in rel:
        assert (out / p).read_bytes() == (tmp_path / p).read_bytes(), p
    for p in out.rglob("*.warc.gz"):
        assert p.read_bytes()[4:8] == b"\0\0\0\0"  # gzip mtime


# ------------------------------------------------------------------------------ WARC contents
def test_warc_records_readable_and_counts_match(demo, records):
    out, summary = demo
    with open(out / "labels" / "pages.tsv", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    for snap in SNAPS:
        html = html_responses(records[snap])
        assert len(html) == summary["html_responses"][snap]
        # pages.tsv: the HTML responses and the revisits of HTML responses (parse makes them pages)
        html_ids = {r["id"] for s in SNAPS for r in html_responses(records[s])}
        revisits = [r for r in records[snap] if r["type"] == "revisit" and r["refers_to"] in html_ids]
        assert len(html) + len(revisits) == summary["pages"][snap] == sum(r["snapshot"] == snap for r in rows)
        assert {r["url"] for r in html + revisits} == {r["url"] for r in rows if r["snapshot"] == snap}
        assert 250 <= len(html) <= 500
        reqs = [r for r in records[snap] if r["type"] == "request"]
        resps = [r for r in records[snap] if r["type"] in ("response", "revisit")]
        assert len(reqs) == len(resps)
        for r in resps:
            assert r["ip"] and r["date"].startswith(snap) and r["id"].startswith("<urn:uuid:")
            if r["type"] == "response":
                assert int(r["clen"]) == len(r["body"])
    ids = [r["id"] for s in SNAPS for r in records[s]]
    assert len(ids) == len(set(ids))


def test_real_crawl_features(demo, records):
    truth = truth_of(demo)
    s1, s2 = records[SNAPS[0]], records[SNAPS[1]]
    hosts = {urlsplit(r["url"]).hostname for r in s1 if r["type"] == "response"}
    robots = {
        urlsplit(r["url"]).hostname
        for r in s1
        if r["type"] == "response" and r["url"].endswith("/robots.txt") and r["ctype"] == "text/plain"
    }
    assert robots == hosts
    types = {r["ctype"] for r in s1 if r["type"] == "response"}
    assert {"text/css", "image/png", "application/xhtml+xml; charset=utf-8"} <= types
    png = next(r["body"] for r in s1 if r["ctype"] == "image/png")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert [r["url"] for r in s1 if r["status"] == 404] == [truth["special_pages"]["not-found"]]
    revisits = [r for r in s2 if r["type"] == "revisit"]
    assert len(revisits) >= 4
    s1_ids = {r["id"]: r for r in s1 if r["type"] == "response"}
    profiles = set()
    for r in revisits:
        assert r["refers_to"] in s1_ids and s1_ids[r["refers_to"]]["url"] == r["url"]
        profiles.add(r["profile"].rsplit("/", 1)[-1])
    assert profiles == {"server-not-modified", "identical-payload-digest"}


def test_charset_pages_decode_only_with_declared_charset(demo, records):
    sp = truth_of(demo)["special_pages"]
    by_url = {r["url"]: r for r in records[SNAPS[0]] if r["type"] == "response"}
    cp = by_url[sp["windows-1252"]]
    assert cp["ctype"] == "text/html; charset=windows-1252"
    assert b"charset" not in cp["body"].lower()
    with pytest.raises(UnicodeDecodeError):
        cp["body"].decode("utf-8")
    text = cp["body"].decode("cp1252")
    assert "Ren\u00e9e" in text and any(c in text for c in "\u201c\u201d\u2014")
    assert cp["body"].decode("latin-1") != text

    l1 = by_url[sp["iso-8859-1"]]
    assert l1["ctype"] == "text/html" and b'<meta charset="iso-8859-1">' in l1["body"]
    with pytest.raises(UnicodeDecodeError):
        l1["body"].decode("utf-8")
    assert "Zo\u00eb L\u00e9ger" in l1["body"].decode("iso-8859-1")

    bom = by_url[sp["utf-8-bom"]]
    assert bom["body"].startswith(b"\xef\xbb\xbf") and bom["ctype"].endswith("charset=utf-8")
    bom["body"][3:].decode("utf-8")


# ------------------------------------------------------------------------------ labels
def test_labels_cover_every_host_and_page(demo, records):
    out, _ = demo
    truth = truth_of(demo)
    with open(out / "labels" / "hosts.tsv", newline="") as f:
        hosts = {r["host"]: r for r in csv.DictReader(f, delimiter="\t")}
    seen = {urlsplit(r["url"]).hostname: r["ip"] for s in SNAPS for r in records[s] if r["type"] == "response"}
    assert set(seen) == set(hosts) == set(truth["hosts"])
    for h, row in hosts.items():
        assert row["ip"] == seen[h]
        assert row["label"] in ("spam", "nonspam") and row["kind"] in (
            "honest",
            "quilt",
            "linkfarm",
            "spin",
            "promoted",
        )
        assert (row["label"] == "nonspam") == (row["kind"] == "honest")
    with open(out / "labels" / "pages.tsv", newline="") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            h = hosts[urlsplit(r["url"]).hostname]
            assert (r["label"], r["kind"]) == (h["label"], h["kind"])
    honest = [h for h, r in hosts.items() if r["kind"] == "honest"]
    assert 18 <= len(honest) and len({PSL.privatesuffix(h) for h in honest}) >= 12
    assert {PSL.publicsuffix(h) for h in honest} >= {"co.uk", "org.uk", "com.au", "com", "org", "net"}


# ------------------------------------------------------------------------------ quilts (Najork)
def test_quilted_pages_copy_passages_from_four_domains(demo, records):
    truth = truth_of(demo)
    for snap in SNAPS:
        quilts = truth["quilts"][snap]
        assert len(quilts) >= 12
        for url, q in quilts.items():
            assert 4 <= len(q["passages"]) <= 8
            page_text = visible_text(body_of(records, snap, url))
            domains = set()
            for p in q["passages"]:
                assert 30 <= len(p["text"].split()) <= 80
                assert norm(p["text"]) in page_text
                assert norm(p["text"]) in visible_text(body_of(records, snap, p["source"])), (url, p["source"])
                domains.add(PSL.privatesuffix(urlsplit(p["source"]).hostname))
            assert len(domains) >= 4
            assert set(q["sources"]) == {p["source"] for p in q["passages"]}
    assert truth["quilts"][SNAPS[0]] != truth["quilts"][SNAPS[1]]


def _shingles(text: str, k: int) -> set[tuple[str, ...]]:
    w = re.findall(r"\w+", text.lower())
    return {tuple(w[i : i + k]) for i in range(len(w) - k + 1)}


def test_honest_sites_do_not_share_long_passages(demo, records):
    """A quilt passage is >= 30 words; honest sites on different domains share no 20-word run."""
    truth = truth_of(demo)
    by_domain: dict[str, set] = defaultdict(set)
    for r in html_responses(records[SNAPS[0]]):
        host = urlsplit(r["url"]).hostname
        if truth["hosts"][host]["kind"] == "honest" and r["status"] == 200:
            ctype = r["ctype"]
            cs = ctype.split("charset=")[1] if "charset=" in ctype else "iso-8859-1"
            by_domain[PSL.privatesuffix(host)] |= _shingles(visible_text(r["body"].lstrip(b"\xef\xbb\xbf"), cs), 20)
    doms = sorted(by_domain)
    for i, a in enumerate(doms):
        for b in doms[i + 1 :]:
            assert not (by_domain[a] & by_domain[b]), (a, b)


# ------------------------------------------------------------------------------ link farm (HSS)
def test_link_farm_domains_ips_and_single_template(demo, records):
    truth = truth_of(demo)
    farm_hosts = {h for h, i in truth["hosts"].items() if i["kind"] == "linkfarm"}
    ips = {r["ip"] for s in SNAPS for r in records[s] if urlsplit(r["url"]).hostname in farm_hosts}
    assert len(ips) == 3
    assert len({PSL.privatesuffix(h) for h in farm_hosts}) >= 10
    for snap in SNAPS:
        assert len(set(truth["linkfarm"]["hosts"][snap])) >= 10
    assert set(truth["linkfarm"]["hosts"][SNAPS[0]]) != set(truth["linkfarm"]["hosts"][SNAPS[1]])
    # one template: the tag skeleton (tags without attributes, text removed) is shared
    skeletons = set()
    for r in html_responses(records[SNAPS[0]]):
        if urlsplit(r["url"]).hostname in farm_hosts:
            tags = " ".join(re.findall(r"<(/?[a-zA-Z0-9!]+)", r["body"].decode())) + " "
            for pat, rep in ((r"(p /p )+", "P "), (r"(a /a )+", "A "), (r"(p A /p )+", "PA ")):
                tags = re.sub(pat, rep, tags)
            skeletons.add(tags)
    assert len(skeletons) == 1
    farm_edges = [e for e in truth["host_edges"][SNAPS[0]] if e[0] in farm_hosts]
    assert len(farm_edges) >= 6 * len(truth["linkfarm"]["hosts"][SNAPS[0]])
    assert any(e[1] == truth["promoted_host"] for e in farm_edges)
    assert truth["host_edges"][SNAPS[0]] != truth["host_edges"][SNAPS[1]]


# ------------------------------------------------------------------------------ spin (DSpin)
TOKEN = re.compile(r"[A-Za-z]+(?:['-][A-Za-z]+)*|[^\sA-Za-z]")


@lru_cache(maxsize=1)
def shipped_dictionary() -> dict[tuple[str, ...], list[tuple[str, ...]]]:
    text = resources.files("spamflow.demo").joinpath("texts/spin-dictionary.txt").read_text("utf-8")
    d = {}
    for line in text.splitlines():
        head, *syns = line.split("|")
        d[tuple(TOKEN.findall(head.lower()))] = [tuple(TOKEN.findall(s.lower())) for s in syns]
    return d


def spun_from(article: str, copy: str) -> bool:
    """Is ``copy`` the article with each longest dictionary match replaced by one of its synonyms?"""
    d = shipped_dictionary()
    longest = max(map(len, d))
    a = [t.lower() for t in TOKEN.findall(article)]
    segs = []  # (original tokens, allowed replacements or None)
    i = 0
    while i < len(a):
        for n in range(min(longest, len(a) - i), 0, -1):
            if tuple(a[i : i + n]) in d:
                segs.append((tuple(a[i : i + n]), d[tuple(a[i : i + n])]))
                i += n
                break
        else:
            segs.append(((a[i],), None))
            i += 1
    c = [t.lower() for t in TOKEN.findall(copy)]
    reach = {0}  # positions in the copy reachable after matching the first segments
    for orig, syns in segs:
        options = [orig] if syns is None else syns
        reach = {j + len(o) for j in reach for o in options if tuple(c[j : j + len(o)]) == o}
        if not reach:
            return False
    return len(c) in reach


def test_spun_copies_differ_but_come_from_article_and_dictionary(demo, records):
    truth = truth_of(demo)
    article = truth["spin"]["article"]
    assert len(article.split()) >= 250
    copies = {}
    for snap in SNAPS:
        urls = truth["spin"]["copies"][snap]
        assert len(urls) >= 15 and len({urlsplit(u).hostname for u in urls}) == len(urls)
        for url in urls:
            tree = HTMLParser(body_of(records, snap, url).decode("utf-8"))
            paras = [p.text() for p in tree.css("div[class$='-post'] p")]
            assert paras[-1].startswith("Further reading")
            links = [urlsplit(a.attributes["href"]).hostname for a in tree.css("a[href^='http']")]
            assert truth["spin"]["promoted_host"] in links
            copies[url] = "\n\n".join(paras[:-1])
    texts = list(copies.values())
    assert len(set(texts)) == len(texts)
    for url, text in copies.items():
        assert text != article
        assert spun_from(article, text), url
    assert not spun_from(article, texts[0].replace(texts[0].split()[5], "zebra", 1))
    # copies differ a lot in wording
    w = [set(t.lower().split()) for t in texts]
    assert max(len(w[0] & x) / len(w[0] | x) for x in w[1:]) < 0.8


# ------------------------------------------------------------------------------ link graph truth
def test_host_edges_match_parsed_links(demo, records):
    truth = truth_of(demo)
    for snap in SNAPS:
        edges = set()
        s1 = {x["id"]: x for x in records[SNAPS[0]]}
        for r in records[snap]:
            if r["type"] == "revisit":
                r = {**s1[r["refers_to"]], "url": r["url"]}  # same page, unchanged since snapshot 1
            if r["type"] != "response" or r["status"] != 200 or "html" not in (r["ctype"] or ""):
                continue
            body = r["body"]
            cs = r["ctype"].split("charset=")[1] if "charset=" in r["ctype"] else "iso-8859-1"
            src = urlsplit(r["url"]).hostname
            for a in HTMLParser(body.lstrip(b"\xef\xbb\xbf").decode(cs)).css("a[href]"):
                dst = urlsplit(urljoin(r["url"], a.attributes["href"])).hostname
                if dst and dst != src:
                    edges.add((src, dst))
        assert edges == {tuple(e) for e in truth["host_edges"][snap]}, snap
    honest = {h for h, i in truth["hosts"].items() if i["kind"] == "honest"}
    e1 = {tuple(e) for e in truth["host_edges"][SNAPS[0]] if e[0] in honest}
    e2 = {tuple(e) for e in truth["host_edges"][SNAPS[1]] if e[0] in honest}
    assert len(e1 & e2) >= 0.8 * len(e1)  # honest link structure is mostly stable


# ------------------------------------------------------------------------------ quilt definition (Najork, Sec. 2)
QK, QM, QC, QTHETA = 5, 50, 4, 0.5  # (k, m, c, theta) of configs/demo.yaml, foreign: domain


def _corpus(records, snap: str) -> dict[str, list[str]]:
    """URL -> words of the visible text of every HTML response of ``snap`` (the pipeline's page
    table: revisits are not pages of their snapshot)."""
    out = {}
    for r in html_responses(records[snap]):
        ctype = r["ctype"]
        cs = ctype.split("charset=")[1] if "charset=" in ctype else "iso-8859-1"
        out[r["url"]] = words(visible_text(r["body"].lstrip(b"\xef\xbb\xbf"), cs))
    return out


def _grams(ws: list[str], k: int = QK) -> set[tuple[str, ...]]:
    return {tuple(ws[i : i + k]) for i in range(len(ws) - k + 1)}


class QuiltOracle:
    """patchfrac and the greedy foreign-domain source cover, with plain sets, per the paper."""

    def __init__(self, corpus: dict[str, list[str]]):
        self.grams = {url: _grams(ws) for url, ws in corpus.items()}
        self.docs: dict[tuple[str, ...], set[str]] = defaultdict(set)
        for url, gs in self.grams.items():
            for g in gs:
                self.docs[g].add(url)
        self.domain = {url: PSL.privatesuffix(urlsplit(url).hostname) for url in corpus}

    def pgrams(self, url: str) -> set[tuple[str, ...]]:
        return {g for g in self.grams[url] if 1 < len(self.docs[g]) <= QM}

    def patchfrac(self, url: str) -> float:
        return len(self.pgrams(url)) / len(self.grams[url]) if self.grams[url] else 0.0

    def foreign_patchfrac(self, url: str) -> float:
        """Stricter: only patch grams that some page on another registered domain shares."""
        dom = self.domain[url]
        shared = {g for g in self.pgrams(url) if any(self.domain[o] != dom for o in self.docs[g])}
        return len(shared) / len(self.grams[url]) if self.grams[url] else 0.0

    def sources(self, url: str) -> list[str]:
        """C = {(d', g): d' on another domain, g a patch gram of both}; greedily take the d'
        with the most pairs left (ties: smallest URL) and drop the grams it covers."""
        dom = self.domain[url]
        cover: dict[str, set] = defaultdict(set)
        for g in self.pgrams(url):
            for other in self.docs[g]:
                if other != url and self.domain[other] != dom:
                    cover[other].add(g)
        out = []
        while cover:
            best = min(cover, key=lambda d: (-len(cover[d]), d))
            taken = cover.pop(best)
            out.append(best)
            cover = {d: gs - taken for d, gs in cover.items() if gs - taken}
        return out

    def quilted(self, url: str) -> bool:
        return self.patchfrac(url) >= QTHETA and len(self.sources(url)) >= QC


def test_quilt_definition_holds_for_planted_quilts_and_no_honest_page(demo, records):
    truth = truth_of(demo)
    for snap in SNAPS:
        oracle = QuiltOracle(_corpus(records, snap))
        quilts = truth["quilts"][snap]
        for url, q in quilts.items():
            assert oracle.quilted(url), (snap, url, oracle.patchfrac(url), oracle.sources(url))
            assert sorted(oracle.sources(url)) == q["sources"], (snap, url)
            # outside its passages (glue, titles, ads, navigation) a quilt shares no 5-gram with another domain
            copied = set().union(*(_grams(words(p["text"])) for p in q["passages"]))
            for g in oracle.grams[url] - copied:
                assert all(oracle.domain[o] == oracle.domain[url] for o in oracle.docs[g]), (snap, url, g)
        honest = [u for u in oracle.grams if truth["hosts"][urlsplit(u).hostname]["kind"] == "honest"]
        assert len(honest) > 200
        for url in honest:
            assert oracle.foreign_patchfrac(url) < QTHETA, (snap, url, oracle.foreign_patchfrac(url))
            assert not oracle.quilted(url), (snap, url, oracle.patchfrac(url), oracle.sources(url))
        # the builder's budget: a source page lends to at most 3 quilts and at most 25 % of its grams
        lent: dict[str, set] = defaultdict(set)
        users: dict[str, set] = defaultdict(set)
        for url, q in quilts.items():
            for p in q["passages"]:
                assert p["source"] in oracle.grams, (snap, p["source"])  # a page of this snapshot
                lent[p["source"]] |= _grams(words(p["text"]))
                users[p["source"]].add(url)
        for src, gs in lent.items():
            assert len(users[src]) <= 3, (snap, src)
            assert gs <= oracle.grams[src] and len(gs) <= 0.25 * len(oracle.grams[src]), (snap, src)
