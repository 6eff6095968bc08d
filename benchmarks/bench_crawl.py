"""Crawl a loopback site with spamflow and with Scrapy, in the same run; and measure the
crawler's memory with a million discovered URLs pending.

    pip install scrapy          # only for this benchmark; spamflow does not depend on it
    python benchmarks/bench_crawl.py                        # 20,000 pages over 200 hosts
    python benchmarks/bench_crawl.py --hosts 20 --pages 100 # quick
    python benchmarks/bench_crawl.py --pending 1000000      # only the frontier memory figure

The site: ``--hosts`` hosts, each on its own loopback address (127.1.x.y), ``--pages``
pages per host of ~5 KB HTML with 10 in-host links and 2 links to other hosts, robots.txt
404.  It is served by one aiohttp process; each crawler runs in its own subprocess and we
report wall time, pages/s, CPU seconds (user+sys of that subprocess) and its peak RSS.
Both crawlers enforce one request at a time per host with zero delay (spamflow: its
workbench with host_delay = ip_delay = 0; Scrapy: CONCURRENT_REQUESTS_PER_DOMAIN = 1,
DOWNLOAD_DELAY = 0), both obey robots.txt, both run 64 requests in flight at most.
spamflow also writes every exchange to gzip WARC; Scrapy stores nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()


# --------------------------------------------------------------------------- the site
def site_pages(hosts: int, pages: int, base: dict[int, str]) -> dict[tuple[int, int], bytes]:
    rng = random.Random(1)
    words = "spam ham eggs link farm honest page crawl politeness sieve workbench frontier".split()
    out = {}
    for h in range(hosts):
        for p in range(pages):
            links = [f"/p{rng.randrange(pages)}" for _ in range(10)] + [f"/p{(p + 1) % pages}"]
            links += [f"{base[rng.randrange(hosts)]}/p{rng.randrange(pages)}" for _ in range(2)]
            text = " ".join(rng.choice(words) for _ in range(700))
            html = (f"<html><head><title>host {h} page {p}</title></head><body><h1>{h}/{p}</h1><p>{text}</p>"
                    + "".join(f'<a href="{u}">link {i}</a> ' for i, u in enumerate(links)) + "</body></html>")
            out[(h, p)] = html.encode()
    return out


def serve(hosts: int, pages: int) -> None:
    """Run the site; print {"bases": [...]} once listening; stop when stdin closes."""
    import asyncio

    from aiohttp import web

    ips = [f"127.1.{h // 250}.{h % 250 + 1}" for h in range(hosts)]

    async def main() -> None:
        body: dict[tuple[int, int], bytes] = {}
        port_of: dict[str, int] = {}

        async def handle(request: web.Request) -> web.Response:
            ip = request.transport.get_extra_info("sockname")[0] if request.transport else ""
            h = ips.index(ip) if ip in index else -1
            path = request.path
            if path.startswith("/p") and path[2:].isdigit() and (h, int(path[2:])) in body:
                return web.Response(body=body[(h, int(path[2:]))], content_type="text/html")
            if path == "/":
                return web.Response(body=body[(h, 0)], content_type="text/html")
            return web.Response(status=404, text="no", content_type="text/plain")

        index = set(ips)
        app = web.Application()
        app.router.add_get("/{tail:.*}", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        for ip in ips:
            site = web.TCPSite(runner, ip, 0, backlog=1024)
            await site.start()
            port_of[ip] = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        bases = {h: f"http://{ip}:{port_of[ip]}" for h, ip in enumerate(ips)}
        body.update(site_pages(hosts, pages, bases))
        print(json.dumps({"bases": [bases[h] for h in range(hosts)]}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        await runner.cleanup()

    asyncio.run(main())


# --------------------------------------------------------------------------- the crawlers
SCRAPY_SPIDER = r'''
import json, sys
import scrapy
from scrapy.crawler import CrawlerProcess

seeds = json.loads(sys.argv[1])
allowed = {s.split("/")[2] for s in seeds}

class Site(scrapy.Spider):
    """The tutorial idiom (css selector + response.follow), faster than a LinkExtractor."""
    name = "site"
    start_urls = seeds
    def parse(self, response):
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href)
            if url.split("/")[2] in allowed:
                yield scrapy.Request(url, callback=self.parse)

process = CrawlerProcess(settings={
    "ROBOTSTXT_OBEY": True, "CONCURRENT_REQUESTS": 64, "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
    "DOWNLOAD_DELAY": 0, "AUTOTHROTTLE_ENABLED": False, "COOKIES_ENABLED": False, "TELNETCONSOLE_ENABLED": False,
    "LOG_LEVEL": "ERROR", "DEPTH_LIMIT": 0, "RETRY_ENABLED": False, "REACTOR_THREADPOOL_MAXSIZE": 4,
})
crawler = process.create_crawler(Site)
process.crawl(crawler)
process.start()
print(json.dumps({"pages": crawler.stats.get_value("response_received_count", 0), "stats": {k: str(v) for k, v in crawler.stats.get_stats().items()}}))
'''

SPAMFLOW_CRAWL = r'''
import json, sys
from pathlib import Path
from spamflow.crawl.crawler import crawl
from spamflow.crawl.settings import CrawlSettings
seeds, out = json.loads(sys.argv[1]), Path(sys.argv[2])
s = CrawlSettings(seeds=seeds, scope="hosts", host_delay=0.0, ip_delay=0.0, concurrency=64, max_depth=1000,
                  max_pages=10**7, near_duplicates=False)
summary = crawl(s, out)
print(json.dumps({"pages": summary.counts["pages"] + summary.counts.get("robots_requests", 0),
                  "counts": summary.counts}))
'''


def measure(code: str, *args: str) -> dict:
    """Run ``code`` in a fresh interpreter; wall time, CPU and peak RSS of that child."""
    script = Path(tempfile.mkdtemp()) / "crawler.py"  # a file, not -c: Scrapy reads its callbacks' source
    script.write_text(code)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"crawler failed:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result.update(wall=wall, cpu=(after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
                  peak_mb=after.ru_maxrss / 1024)  # the largest child so far: run spamflow first
    return result


def pending_memory(n: int, per_host: int = 1000) -> dict:
    """RSS of a crawler holding ``n`` discovered URLs pending, ``per_host`` per host (nothing fetched)."""
    code = r'''
import asyncio, json, resource, sys, tempfile
from pathlib import Path
from spamflow.crawl.crawler import Crawler
from spamflow.crawl.frontier import SpillFile
from spamflow.crawl.journal import Journal
from spamflow.crawl.settings import CrawlSettings
n = int(sys.argv[1])
hosts = max(1, n // int(sys.argv[2]))
def rss(): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
async def main():
    d = Path(tempfile.mkdtemp())
    s = CrawlSettings(seeds=["http://h0.test/"], scope="any", max_pages_per_host=10**9,
                      resolve={f"h{h}.test": f"127.2.{h // 250 % 250}.{h % 250 + 1}" for h in range(hosts)})
    c = Crawler(s, d)
    c.journal, c.spill = Journal(d), SpillFile(d / "spill")
    base = rss()
    batch = []
    for i in range(n):
        c.offer(f"http://h{i % hosts}.test/section-{i % 97}/article-{i}.html?ref=front", 1, 0, batch)
        if len(batch) > 10000:
            c.journal.discovered(batch); batch.clear()
    c.journal.discovered(batch)
    pending = sum(len(st.queue) for st in c.hosts.values())
    print(json.dumps({"pending": pending, "hosts": len(c.hosts), "rss_before_mb": base, "peak_mb": rss(),
                      "spill_mb": c.spill.bytes_written / 2**20, "sieve_mb": c.sieve.nbytes() / 2**20}))
asyncio.run(main())
'''
    out = subprocess.run([sys.executable, "-c", code, str(n), str(per_host)], capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=200)
    ap.add_argument("--pages", type=int, default=100, help="pages per host")
    ap.add_argument("--pending", type=int, default=1_000_000, help="URLs for the frontier memory figure (0: skip)")
    ap.add_argument("--per-host", type=int, default=1000, help="pending URLs per host for the memory figure")
    ap.add_argument("--no-scrapy", action="store_true")
    ap.add_argument("--serve", nargs=2, type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve:
        serve(*args.serve)
        return
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs (shared)")
    if args.pages:
        server = subprocess.Popen([sys.executable, str(HERE), "--serve", str(args.hosts), str(args.pages)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert server.stdout is not None and server.stdin is not None
        seeds = json.loads(server.stdout.readline())["bases"]
        seeds = [b + "/" for b in seeds]
        print(f"site: {args.hosts} hosts x {args.pages} pages = {args.hosts * args.pages} pages on loopback")
        try:
            with tempfile.TemporaryDirectory() as tmp:
                ours = measure(SPAMFLOW_CRAWL, json.dumps(seeds), tmp)
                warc_mb = sum(p.stat().st_size for p in Path(tmp).rglob("*.warc.gz")) / 2**20
            print(f"spamflow: {ours['pages']} fetches in {ours['wall']:.1f} s = {ours['pages'] / ours['wall']:.0f} pages/s, "
                  f"CPU {ours['cpu']:.1f} s ({ours['pages'] / max(ours['cpu'], 1e-9):.0f} pages per CPU-second), "
                  f"peak RSS {ours['peak_mb']:.0f} MB, WARC {warc_mb:.1f} MB")
            if not args.no_scrapy:
                try:
                    import scrapy  # noqa: F401
                except ImportError:
                    print("scrapy: not installed (pip install scrapy) -- skipped")
                else:
                    theirs = measure(SCRAPY_SPIDER, json.dumps(seeds))
                    print(f"scrapy:   {theirs['pages']} fetches in {theirs['wall']:.1f} s = "
                          f"{theirs['pages'] / theirs['wall']:.0f} pages/s, CPU {theirs['cpu']:.1f} s "
                          f"({theirs['pages'] / max(theirs['cpu'], 1e-9):.0f} pages per CPU-second), "
                          f"peak RSS {max(theirs['peak_mb'], 0):.0f} MB (max of both children)")
                    print("   scrapy stats:", {k: v for k, v in theirs["stats"].items() if "count" in k or "filtered" in k})
                    ratio = (ours["pages"] / ours["wall"]) / (theirs["pages"] / theirs["wall"])
                    print(f"ratio spamflow/scrapy pages/s: {ratio:.2f}  (target >= 1: "
                          f"{'MET' if ratio >= 1 else 'MISSED'})")
        finally:
            server.stdin.close()
            server.wait(timeout=30)
    if args.pending:
        mem = pending_memory(args.pending, args.per_host)
        print(f"frontier: {mem['pending']} URLs pending over {mem['hosts']} hosts: peak RSS {mem['peak_mb']:.0f} MB "
              f"(after imports {mem['rss_before_mb']:.0f} MB; sieve {mem['sieve_mb']:.0f} MB), spilled {mem['spill_mb']:.0f} MB to disk "
              f"(target < 2048 MB: {'MET' if mem['peak_mb'] < 2048 else 'MISSED'})")


if __name__ == "__main__":
    main()
