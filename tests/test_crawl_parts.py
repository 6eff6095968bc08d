"""The crawler's data structures against plain references: filters (brute-force tandem
repeats), URL normalisation (RFC 3986 examples), the spilling FIFO (a deque), the workbench
(politeness and FIFO order under a simulated clock) and the WARC repair after a cut."""

from __future__ import annotations

import itertools
import random
import re
import zlib
from collections import deque

import pytest

from spamflow.crawl.filters import max_tandem_repeats, parse_filter
from spamflow.crawl.frontier import HostQueue, SpillFile
from spamflow.crawl.sieve import Sieve
from spamflow.crawl.urls import normalize
from spamflow.crawl.warc_store import Exchange, WarcStore, complete_length, repair
from spamflow.crawl.workbench import VisitState, Workbench
from spamflow.errors import ConfigError

from crawl_check import read_crawl


def brute_tandem(segs: list[str]) -> int:
    """Largest r with some block repeated r times consecutively, by trying every block."""
    best = 1 if segs else 0
    for i, k in itertools.product(range(len(segs)), range(1, len(segs) + 1)):
        block, r = segs[i:i + k], 1
        while segs[i + r * k:i + (r + 1) * k] == block:
            r += 1
        best = max(best, r)
    return best


def test_duplicate_segments_match_brute_force():
    rng = random.Random(7)
    for _ in range(3000):
        segs = [rng.choice("ab" if rng.random() < 0.5 else "abc") for _ in range(rng.randrange(0, 13))]
        assert max_tandem_repeats(segs) == brute_tandem(segs), segs


def test_filter_expressions_compose_like_the_paper(tmp_path):
    (tmp_path / "bad-hosts.txt").write_text("# spam\nevil.foo.bar\n")
    f = parse_filter("(HostEndsWith(foo.bar) and not ForbiddenHost(bad-hosts.txt)) or NoMoreSlashesThan(1)", tmp_path)
    assert f("http://www.foo.bar/a/b/c")
    assert not f("http://evil.foo.bar/a/b") and not f("http://x.evil.foo.bar/a/b")
    assert f("http://evil.foo.bar/")  # rescued by the or
    assert not f("http://other.org/a/b")
    g = parse_filter("not URLMatchesRegex('\\?.*sessionid=') and PathEndsWithOneOf(.html,/) and DuplicateSegmentsLessThan(2)")
    assert g("http://a.org/x/index.html") and not g("http://a.org/x/index.html?sessionid=3")
    assert not g("http://a.org/x.png") and not g("http://a.org/x/x/")
    urls = [f"http://h{i}.test/p" for i in range(400)]
    shares = [parse_filter(f"HostHashIs({k}/4)") for k in range(4)]
    assert all(sum(f(u) for f in shares) == 1 for u in urls)  # every host in exactly one agent's share
    assert all(60 < sum(map(f, urls)) < 140 for f in shares)
    for bad, message in [("HostHashIs(4/4)", "0 <= k < n"), ("HostEndsWith(a) and", "expected a filter"), ("Nope(3)", "unknown filter 'Nope'"),
                         ("NoMoreSlashesThan(many)", "takes an integer"), ("(True()", "expected ')'"),
                         ("ForbiddenHost(missing.txt)", "cannot read host list")]:
        with pytest.raises(ConfigError, match=re.escape(message)):
            parse_filter(bad, tmp_path, where="input.crawl.filter")


@pytest.mark.parametrize("raw, expected", [
    ("HTTP://www.Example.com/", "http://www.example.com/"),  # RFC 3986 6.2.2.1
    ("http://example.com/%7Efoo/%2fbar", "http://example.com/~foo/%2Fbar"),  # 6.2.2.1 and 6.2.2.2
    ("http://example.com/a/b/c/./../../g", "http://example.com/a/g"),  # 5.2.4
    ("http://example.com:80", "http://example.com/"),  # 6.2.3
    ("https://example.com:443/x#frag", "https://example.com/x"),
    ("http://example.com:8080/x?b=1&a=2", "http://example.com:8080/x?b=1&a=2"),  # query order kept
    ("http://bücher.example/ä b", "http://xn--bcher-kva.example/%C3%A4%20b"),
    ("javascript:void(0)", None), ("http:///nohost", None), ("ftp://example.com/", None),
])
def test_normalize(raw, expected):
    assert normalize(raw) == expected


def test_relative_links_resolve_against_the_page():
    assert normalize("../c?x", "http://h.test/a/b/page.html") == "http://h.test/a/c?x"
    assert normalize("//other.test/p", "https://h.test/") == "https://other.test/p"


def test_sieve_gives_each_url_once():
    sieve = Sieve()
    urls = [f"http://h{i % 7}.test/{i % 13}" for i in range(500)]
    assert [u for u in urls if sieve.add(u)] == list(dict.fromkeys(urls))
    assert len(sieve) == len(set(urls))


def test_sieve_matches_a_set_across_merges(monkeypatch):
    import spamflow.crawl.sieve as sieve_module

    monkeypatch.setattr(sieve_module, "MIN_RECENT", 64)  # many merges of the sorted array
    rng = random.Random(5)
    sieve, seen = Sieve(), set()
    for _ in range(30_000):
        url = f"http://h{rng.randrange(50)}.test/{rng.randrange(2000)}"
        assert sieve.add(url) == (url not in seen)
        seen.add(url)
    assert len(sieve) == len(seen) and all(u in sieve for u in list(seen)[:500])
    assert sieve._sorted.size > len(sieve._recent) and list(sieve._sorted) == sorted(sieve._sorted)


def test_spilling_queue_is_fifo_and_keeps_memory_bounded(tmp_path):
    spill = SpillFile(tmp_path / "spill")
    rng = random.Random(3)
    queues = {h: HostQueue(spill, head_size=4, block_size=8) for h in range(5)}
    refs: dict[int, deque[bytes]] = {h: deque() for h in range(5)}
    for step in range(20_000):
        h = rng.randrange(5)
        if rng.random() < 0.6 or not refs[h]:
            item = f"{step} /path/{step}".encode()
            queues[h].append(item)
            refs[h].append(item)
        else:
            assert queues[h].popleft() == refs[h].popleft()
        assert queues[h].in_memory() <= 4 + 8 + 8
        assert len(queues[h]) == len(refs[h])
    for h in queues:
        while refs[h]:
            assert queues[h].popleft() == refs[h].popleft()
    assert spill.bytes_written > 0
    spill.close()
    assert not (tmp_path / "spill").exists()


def test_workbench_keeps_both_delays_and_host_fifo_order():
    """Random hosts on random IPs, random request durations on a simulated clock: every
    request to a host starts >= host delay after the previous one ended, likewise per IP, and
    at most one request per IP is in flight."""
    rng = random.Random(11)
    bench = Workbench(ip_delay=0.3)
    states = []
    for h in range(12):
        s = VisitState(f"http://h{h}.test", f"h{h}.test", 80, HostQueue(None), delay=rng.choice([0.5, 1.0, 2.0]))
        for i in range(6):
            s.queue.append(f"/{i}".encode())
        bench.attach(s, f"127.0.0.{h % 4}")
        states.append(s)
    now, inflight, log = 0.0, [], []
    while True:
        while (s := bench.take(now)) is not None:
            assert not any(x.ip == s.ip for x, _, _ in inflight)
            inflight.append((s, now, now + rng.uniform(0.01, 0.4)))
            log.append((s.key, s.ip, now, s.queue.popleft()))
        if not inflight:
            nxt = bench.next_time()
            if nxt is None:
                break
            now = nxt
            continue
        inflight.sort(key=lambda x: x[2])
        s, _, end = inflight.pop(0)
        now = max(now, end)
        bench.release(s, end)
        log.append((s.key, s.ip, -end, None))  # negative: an end
    assert sum(1 for e in log if e[3] is not None) == 12 * 6
    last_end_host: dict[str, float] = {}
    last_end_ip: dict[str, float] = {}
    order: dict[str, list[bytes]] = {}
    delays = {s.key: s.delay for s in states}
    for key, ip, t, item in log:
        if item is None:
            last_end_host[key], last_end_ip[ip] = -t, -t
            continue
        assert t >= last_end_host.get(key, -9) + delays[key] - 1e-9
        assert t >= last_end_ip.get(ip, -9) + 0.3 - 1e-9
        order.setdefault(key, []).append(item)
    assert all(v == [f"/{i}".encode() for i in range(6)] for v in order.values())


def test_repair_cuts_a_partial_record_and_keeps_the_rest(tmp_path):
    store = WarcStore(tmp_path / "warc", "snap", 10**9)
    for i in range(5):
        store.write_exchange(Exchange(f"http://r.test/{i}", "127.0.0.1", "2026-01-01T00:00:00.000000Z",
                                      f"GET /{i} HTTP/1.1", [("Host", "r.test")], "HTTP/1.1", "200 OK",
                                      [("Content-Type", "text/html")], f"<p>{i}</p>".encode() * 50))
    store.close()
    path = store.existing()[0]
    whole = path.read_bytes()
    assert complete_length(path) == len(whole)
    path.write_bytes(whole[:-37])  # killed while writing the last record (a request)
    assert repair(path) > 0
    assert [s.url for s in read_crawl(tmp_path)] == [f"http://r.test/{i}" for i in range(4)]  # its response goes too


def test_repair_cuts_a_response_whose_request_was_never_written(tmp_path):
    """A kill between the two members of an exchange leaves a whole response and no request:
    the exchange is cut, so every stored response keeps its request."""
    store = WarcStore(tmp_path / "warc", "snap", 10**9)
    ends = []
    for i in range(3):
        store.write_exchange(Exchange(f"http://r.test/{i}", "127.0.0.1", "2026-01-01T00:00:00.000000Z",
                                      f"GET /{i} HTTP/1.1", [("Host", "r.test")], "HTTP/1.1", "200 OK",
                                      [("Content-Type", "text/html")], f"<p>{i}</p>".encode() * 50))
        ends.append(store.existing()[0].stat().st_size)
    store.close()
    path = store.existing()[0]
    whole = path.read_bytes()
    members = member_ends(whole)
    assert members[-1] == ends[-1] == len(whole) and ends[1] in members
    response_end = members[members.index(ends[1]) + 1]  # the third exchange's response, complete
    path.write_bytes(whole[:response_end])
    assert complete_length(path) == ends[1]
    assert repair(path) == response_end - ends[1]
    assert [s.url for s in read_crawl(tmp_path)] == ["http://r.test/0", "http://r.test/1"]


def member_ends(data: bytes) -> list[int]:
    """Where each gzip member of ``data`` ends, found by inflating them one by one."""
    ends, at = [], 0
    while at < len(data):
        d = zlib.decompressobj(31)
        d.decompress(data[at:])
        at = len(data) - len(d.unused_data)
        ends.append(at)
    return ends


def test_read_crawl_is_used_on_complete_files(tmp_path):
    store = WarcStore(tmp_path / "warc", "snap", 10**9)
    store.write_exchange(Exchange("http://r.test/", "127.0.0.1", "2026-01-01T00:00:00.000000Z", "GET / HTTP/1.1",
                                  [("Host", "r.test")], "HTTP/1.1", "200 OK", [], b"hello"))
    store.close()
    assert [(s.url, s.body) for s in read_crawl(tmp_path)] == [("http://r.test/", b"hello")]


def test_a_failing_fetch_task_stops_the_crawl_instead_of_hanging(tmp_path, monkeypatch):
    from spamflow.crawl.crawler import Crawler, crawl
    from spamflow.crawl.settings import CrawlSettings
    from spamflow.errors import SpamflowError

    async def broken(self, session, state):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Crawler, "_visit", broken)
    settings = CrawlSettings(seeds=["http://x.test/"], resolve={"x.test": "127.0.44.1:9"})
    with pytest.raises(SpamflowError, match="crawl crawl stopped: OSError: .*No space left on device"):
        crawl(settings, tmp_path)
