"""The crawler against real HTTP servers on distinct 127.x.y.z addresses (spamflow.crawl.loopback).

Politeness is measured from the server's own arrival timestamps; every WARC file is read
back with warcio and its digests recomputed (tests/crawl_check.py)."""

from __future__ import annotations

import gzip
import random
import shutil
import ssl
import subprocess
import time
from collections import Counter, defaultdict

import pytest

from spamflow.crawl.crawler import crawl
from spamflow.crawl.loopback import Hit, LoopbackWeb, Reply
from spamflow.crawl.settings import CrawlSettings

from crawl_check import read_crawl, read_errors

TEXT = {"Content-Type": "text/plain"}


def page(*links: str, text: str = "") -> Reply:
    body = "<html><body><p>" + (text or " ".join(links)) + "</p>" + "".join(f'<a href="{u}">x</a>' for u in links)
    return Reply(body=(body + "</body></html>").encode())


def settings(web: LoopbackWeb, seeds: list[str], **kw) -> CrawlSettings:
    base = dict(seeds=seeds, resolve=web.pins, host_delay=0.0, ip_delay=0.0, connect_timeout=2.0,
                read_timeout=2.0, fetch_timeout=3.0, concurrency=8)
    return CrawlSettings.model_validate(base | kw)


def gaps(hits: list[Hit], key) -> dict[str, float]:
    """Smallest time between consecutive request arrivals per ``key(hit)``."""
    times: dict[str, list[float]] = defaultdict(list)
    for h in hits:
        times[key(h)].append(h.time)
    return {k: min(b - a for a, b in zip(sorted(v), sorted(v)[1:])) for k, v in times.items() if len(v) > 1}


def chain_site(host: str, path: str, n: int = 6, others: tuple[str, ...] = ()) -> Reply:
    if path == "/robots.txt":
        return Reply(status=404, body=b"", headers=TEXT)
    i = int(path.strip("/") or 0)
    links = [f"/{i + 1}"] if i + 1 < n else []
    return page(*links, *(f"http://{o}/" for o in others), text=f"{host} page {i}")


def test_politeness_per_host_and_per_ip_from_server_timestamps(tmp_path):
    # a.test and b.test share 127.0.21.1; c.test is alone on 127.0.21.2
    hosts = {"a.test": "127.0.21.1", "b.test": "127.0.21.1", "c.test": "127.0.21.2"}
    with LoopbackWeb(lambda h, p: chain_site(h, p, 6, tuple(hosts)), hosts) as web:
        summary = crawl(settings(web, ["http://a.test/"], scope="any", host_delay=0.12, ip_delay=0.05), tmp_path)
    pages = [h for h in web.log if h.path != "/robots.txt"]
    assert Counter(h.host for h in pages) == {"a.test": 6, "b.test": 6, "c.test": 6}
    everything = web.log  # robots.txt requests count for politeness too
    assert min(gaps(everything, lambda h: h.host).values()) >= 0.12
    assert min(gaps(everything, lambda h: h.ip).values()) >= 0.05
    # the crawl is concurrent across IPs: c.test is fetched while a/b are waiting
    first_c, last_ab = min(h.time for h in pages if h.host == "c.test"), max(h.time for h in pages if h.host != "c.test")
    assert first_c < last_ab
    stored = read_crawl(tmp_path)
    assert sorted(s.url for s in stored if not s.url.endswith("robots.txt")) == sorted(
        f"http://{h}/{i}" if i else f"http://{h}/" for h in hosts for i in range(6))
    assert {s.ip for s in stored if "c.test" in s.url} == {"127.0.21.2"}
    assert summary.counts["pages"] == 18 and summary.counts["ips"] == 2 and summary.counts["hosts"] == 3


def test_robots_disallow_crawl_delay_and_rfc9309_errors(tmp_path):
    hosts = {"ok.test": "127.0.22.1", "down.test": "127.0.22.2", "gone.test": "127.0.22.3",
             "moved.test": "127.0.22.4", "rules.test": "127.0.22.5"}
    robots = {"ok.test": Reply(body=b"User-agent: *\nDisallow: /secret\nCrawl-delay: 0.2\n", headers=TEXT),
              "down.test": Reply(status=503, body=b"busy", headers=TEXT),
              "gone.test": Reply(status=404, body=b"", headers=TEXT),
              # redirected to another host (RFC 9309: follow, even across authorities), served gzipped
              "moved.test": Reply(status=301, headers={"Location": "http://rules.test/shared-robots.txt"})}

    def handler(host: str, path: str) -> Reply:
        if path == "/shared-robots.txt":
            return Reply(body=gzip.compress(b"User-agent: *\nDisallow: /a\n"),
                         headers={"Content-Type": "text/plain", "Content-Encoding": "gzip"})
        if path == "/robots.txt":
            return robots[host]
        if path == "/":
            return page("/a", "/secret/b", "/c", text=f"home of {host}")
        return page(text=f"{host} {path}")

    with LoopbackWeb(handler, hosts) as web:
        summary = crawl(settings(web, [f"http://{h}/" for h in hosts if h != "rules.test"], scope="hosts"), tmp_path)
    fetched = {(h.host, h.path) for h in web.log}
    # 2xx robots: /secret is never requested, and Crawl-delay 0.2 spaces the host's requests
    assert ("ok.test", "/secret/b") not in fetched and ("ok.test", "/a") in fetched
    assert gaps(web.log, lambda h: h.host)["ok.test"] >= 0.2
    # 5xx robots: complete disallow, only robots.txt was asked for
    assert {p for h, p in fetched if h == "down.test"} == {"/robots.txt"}
    # 4xx robots: everything allowed
    assert {p for h, p in fetched if h == "gone.test"} == {"/robots.txt", "/", "/a", "/secret/b", "/c"}
    # a redirected robots.txt: the target's rules apply to the redirecting host
    assert {p for h, p in fetched if h == "moved.test"} == {"/robots.txt", "/", "/secret/b", "/c"}
    assert ("rules.test", "/shared-robots.txt") in fetched and ("rules.test", "/") not in fetched
    errors = read_errors(tmp_path)
    assert {(e["url"], e["kind"]) for e in errors} == {
        ("http://ok.test/secret/b", "robots_disallowed"), ("http://down.test/", "robots_disallowed"),
        ("http://moved.test/a", "robots_disallowed")}
    assert summary.counts["robots_parsed"] == 2 and summary.counts["robots_unreachable"] == 1
    assert summary.counts["robots_unavailable"] == 1
    assert len([s for s in read_crawl(tmp_path) if "robots" in s.url]) == 5


def test_redirects_loops_errors_timeouts_and_invalid_bytes(tmp_path):
    hosts = {"r.test": "127.0.23.1"}

    def handler(host: str, path: str) -> Reply:
        routes = {
            "/": page("/loop-a", "/chain/0", "/missing", "/broken", "/slow", "/latin", text="home"),
            "/loop-a": Reply(status=302, headers={"Location": "/loop-b"}),
            "/loop-b": Reply(status=301, headers={"Location": "http://r.test/loop-a"}),
            "/missing": Reply(status=404, body=b"<html>not here</html>"),
            "/broken": Reply(status=500, body=b"oops", headers=TEXT),
            "/slow": Reply(delay=5.0, body=b"late"),
            # not valid UTF-8 (and declared so): the link must still be followed
            "/latin": Reply(body=b'<html><p>caf\xe9 \xff\xfe\x80 na\xefve</p><a href="/after-latin">\xe9</a></html>'),
            "/after-latin": page(text="reached"),
        }
        if path.startswith("/chain/"):
            return Reply(status=302, headers={"Location": f"/chain/{int(path.split('/')[2]) + 1}"})
        return routes.get(path, Reply(status=404, body=b"no")) if path != "/robots.txt" else Reply(status=404)

    with LoopbackWeb(handler, hosts) as web:
        summary = crawl(settings(web, ["http://r.test/", "http://nothing.invalid/", "http://nothing.invalid/2"],
                                 scope="any", max_redirects=3, fetch_timeout=0.5), tmp_path)
    hits = Counter(h.path for h in web.log)
    assert hits["/loop-a"] == 1 and hits["/loop-b"] == 1  # the sieve ends the loop
    assert [p for p in hits if p.startswith("/chain/")] == ["/chain/0", "/chain/1", "/chain/2", "/chain/3"]
    assert hits["/after-latin"] == 1
    stored = {s.url: s for s in read_crawl(tmp_path)}
    assert stored["http://r.test/missing"].status == 404 and stored["http://r.test/broken"].status == 500
    assert stored["http://r.test/loop-a"].status == 302 and stored["http://r.test/loop-a"].headers["location"] == "/loop-b"
    assert stored["http://r.test/latin"].body.startswith(b"<html><p>caf\xe9")
    errors = {e["url"]: e for e in read_errors(tmp_path)}
    assert errors["http://r.test/slow"]["kind"] == "timeout"
    assert errors["http://nothing.invalid/"]["kind"] == errors["http://nothing.invalid/2"]["kind"] == "dns"
    assert errors["http://r.test/chain/4"]["kind"] == "too_many_redirects"
    assert "http://r.test/slow" not in stored
    assert summary.counts["errors_timeout"] == 1 and summary.counts["status_5xx"] == 1


def test_slow_drip_and_a_50_mb_body_are_cut_and_marked(tmp_path):
    hosts = {"big.test": "127.0.24.1", "drip.test": "127.0.24.2"}

    def handler(host: str, path: str) -> Reply:
        if path == "/robots.txt":
            return Reply(status=404)
        if host == "big.test":
            return Reply(size=50_000_000, headers={"Content-Type": "application/octet-stream"})
        return Reply(body=b"<html>" + b"d" * 1000 + b"</html>", drip=0.05)

    started = time.monotonic()
    with LoopbackWeb(handler, hosts) as web:
        summary = crawl(settings(web, ["http://big.test/", "http://drip.test/"], max_body_bytes=200_000,
                                 fetch_timeout=0.6), tmp_path)
    assert time.monotonic() - started < 10
    stored = {s.url: s for s in read_crawl(tmp_path)}
    big, drip = stored["http://big.test/"], stored["http://drip.test/"]
    assert len(big.body) == 200_000 and big.truncated == "length" and big.headers["content-length"] == "50000000"
    assert drip.truncated == "time" and 0 < len(drip.body) < 1006 and drip.body.startswith(b"<html>ddd")
    assert summary.counts["truncated_length"] == 1 and summary.counts["truncated_time"] == 1


def test_spider_trap_is_bounded_by_filters_and_caps(tmp_path):
    # /x/ links to "x/" (relative), which grows forever: /x/x/x/...; /cal/N links to /cal/N+1 forever
    hosts = {"trap.test": "127.0.25.1"}

    def handler(host: str, path: str) -> Reply:
        if path == "/robots.txt":
            return Reply(status=404)
        if path.startswith("/cal/"):
            return page(f"/cal/{int(path.split('/')[2]) + 1}", text=f"day {path}")
        return page("x/", "a/b/", "/cal/0", text=f"dir {path}")

    with LoopbackWeb(handler, hosts) as web:
        summary = crawl(settings(web, ["http://trap.test/"], max_pages_per_host=40, max_depth=1000,
                                 filter="DuplicateSegmentsLessThan(3) and NoMoreSlashesThan(8)"), tmp_path)
    paths = [h.path for h in web.log if h.path != "/robots.txt"]
    assert len(paths) == len(set(paths)) == 40  # the per-host cap ends the calendar
    assert "/x/x/" in paths and "/x/x/x/" not in paths  # three repeats of one segment: filtered
    assert "/a/b/a/b/" in paths and "/a/b/a/b/a/b/" not in paths  # (a/b) three times: filtered
    assert summary.counts["urls_filtered"] > 0 and summary.counts["urls_over_host_cap"] > 0


def test_max_pages_and_depth(tmp_path):
    hosts = {"d.test": "127.0.26.1"}
    with LoopbackWeb(lambda h, p: chain_site(h, p, 50), hosts) as web:
        crawl(settings(web, ["http://d.test/"], max_depth=3), tmp_path / "depth")
        crawl(settings(web, ["http://d.test/"], max_pages=5), tmp_path / "pages")
    assert sorted(s.url for s in read_crawl(tmp_path / "depth") if "robots" not in s.url) == [
        "http://d.test/", "http://d.test/1", "http://d.test/2", "http://d.test/3"]
    assert len([s for s in read_crawl(tmp_path / "pages") if "robots" not in s.url]) == 5


def test_warc_rotation_keeps_every_record(tmp_path):
    hosts = {"w.test": "127.0.27.1"}

    def handler(host: str, path: str) -> Reply:
        if path == "/robots.txt":
            return Reply(status=404)
        i = int(path.strip("/") or 0)
        body = f"<html><p>{i}</p>{'<a href=/' + str(i + 1) + '>n</a>' if i < 29 else ''}".encode() + random.Random(i).randbytes(100_000)
        return Reply(body=body)

    with LoopbackWeb(handler, hosts) as web:
        crawl(settings(web, ["http://w.test/"], warc_max_bytes=1_000_000, max_depth=100), tmp_path)
    files = sorted((tmp_path / "warc").glob("*.warc.gz"))
    assert len(files) >= 2 and files[0].name == "crawl-00001.warc.gz"
    assert len([s for s in read_crawl(tmp_path) if "robots" not in s.url]) == 30


def test_near_duplicates_are_stored_but_not_followed_and_counted(tmp_path):
    # /a and /b differ only in attributes (session ids in links, a class): one signature
    hosts = {"dup.test": "127.0.28.1"}
    twin = '<html><body class="{c}"><p>The  same\n text.</p><a href="{href}">more</a></body></html>'

    def handler(host: str, path: str) -> Reply:
        routes = {"/": page("/a", "/b", text="home"),
                  "/a": Reply(body=twin.format(c="x", href="/from-a?sid=1").encode()),
                  "/b": Reply(body=twin.format(c="y", href="/from-b?sid=2").encode()),
                  "/from-a?sid=1": page(text="reached from a")}
        return routes.get(path, Reply(status=404, headers=TEXT))

    with LoopbackWeb(handler, hosts) as web:
        summary = crawl(settings(web, ["http://dup.test/"]), tmp_path / "on")
        crawl(settings(web, ["http://dup.test/"], near_duplicates=False), tmp_path / "off")
    on = {s.url for s in read_crawl(tmp_path / "on")}
    assert {"http://dup.test/a", "http://dup.test/b", "http://dup.test/from-a?sid=1"} <= on
    assert "http://dup.test/from-b?sid=2" not in on and summary.counts["near_duplicates"] == 1
    assert "http://dup.test/from-b?sid=2" in {s.url for s in read_crawl(tmp_path / "off")}


def test_scope_domains_and_seed_file(tmp_path):
    hosts = {"www.shop.test": "127.0.29.1", "blog.shop.test": "127.0.29.1", "other.test": "127.0.29.2"}

    def handler(host: str, path: str) -> Reply:
        if path == "/robots.txt":
            return Reply(status=404, headers=TEXT)
        return page("http://blog.shop.test/", "http://other.test/", text=f"{host}{path}")

    (tmp_path / "seeds.txt").write_text("# the shop\nhttp://www.shop.test/\n\n")
    with LoopbackWeb(handler, hosts) as web:
        s = CrawlSettings.model_validate(dict(seed_file="seeds.txt", scope="domains", resolve=web.pins,
                                              host_delay=0.0, ip_delay=0.0))
        summary = crawl(s, tmp_path / "out", base_dir=tmp_path)
    assert {h.host for h in web.log} == {"www.shop.test", "blog.shop.test"}  # same registered domain only
    assert summary.counts["urls_out_of_scope"] >= 1


def test_refused_connections_are_logged(tmp_path):
    # nothing listens on 127.0.30.1:9: robots.txt is unreachable, so (RFC 9309) nothing is fetched;
    # without robots the page itself fails with a connect error
    pins = {"closed.test": "127.0.30.1:9"}
    base = dict(seeds=["http://closed.test/"], resolve=pins, host_delay=0.0, ip_delay=0.0, connect_timeout=2.0)
    summary = crawl(CrawlSettings.model_validate(base), tmp_path / "robots")
    assert summary.counts["robots_unreachable"] == 1
    assert [e["kind"] for e in read_errors(tmp_path / "robots")] == ["robots_disallowed"]
    summary = crawl(CrawlSettings.model_validate(base | {"robots": False}), tmp_path / "plain")
    assert [(e["url"], e["kind"]) for e in read_errors(tmp_path / "plain")] == [("http://closed.test/", "connect")]
    assert summary.counts.get("pages", 0) == 0 and not list((tmp_path / "plain" / "warc").glob("*.warc.gz"))


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a self-signed certificate")
def test_https_with_a_self_signed_certificate(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=tls.test",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    def handler(host: str, path: str) -> Reply:
        return Reply(status=404, headers=TEXT) if path == "/robots.txt" else page("/next", text=f"tls {path}")

    with LoopbackWeb(handler, {"tls.test": "127.0.43.1"}, ssl_context=context) as web:
        strict = crawl(settings(web, ["https://tls.test/"]), tmp_path / "strict")
        lax = crawl(settings(web, ["https://tls.test/"], verify_tls=False), tmp_path / "lax")
    # verified: the certificate is refused, so robots.txt is unreachable and nothing is fetched (RFC 9309)
    assert strict.counts["robots_unreachable"] == 1 and strict.counts["pages"] == 0
    assert sorted(s.url for s in read_crawl(tmp_path / "lax")) == [
        "https://tls.test/", "https://tls.test/next", "https://tls.test/robots.txt"]
    assert lax.counts["pages"] == 2


def test_a_gzip_bomb_page_and_robots_txt_inflate_only_to_the_body_limit(tmp_path):
    hosts = {"bomb.test": "127.0.25.1"}
    padding = b"<!--" + b"a" * (32 << 20) + b"-->"  # 32 MiB from ~32 KB of gzip

    def handler(host: str, path: str) -> Reply:
        zipped = {"Content-Encoding": "gzip"}
        if path == "/robots.txt":
            return Reply(body=gzip.compress(b"User-agent: *\nDisallow: /no\n" + padding), headers=TEXT | zipped)
        if path == "/":
            return Reply(body=gzip.compress(b'<html><body><a href="/next">n</a><a href="/no">x</a>' + padding),
                         headers={"Content-Type": "text/html"} | zipped)
        return page(text="next page")

    with LoopbackWeb(handler, hosts) as web:
        summary = crawl(settings(web, ["http://bomb.test/"], max_body_bytes=200_000), tmp_path)
    stored = {s.url for s in read_crawl(tmp_path)}
    assert "http://bomb.test/next" in stored and "http://bomb.test/no" not in stored  # both read up to the limit
    assert summary.counts["truncated_inflated"] == 2
