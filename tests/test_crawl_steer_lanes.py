"""Links from steered hosts weigh less in frontier priority: a URL found only on steered
hosts waits in its host's low-priority lane behind the URLs found on clean pages.

The tiny web (seed ``honest.test/``, one address per host, ``concurrency: 1``)::

    honest.test/  -> flag.test/, clean.test/
    flag.test/    -> shop.test/f1, /f2, /f3      (flag.test scored 0.9 by the earlier run)
    clean.test/   -> shop.test/c1, /c2, /f3      (clean.test scored 0.1)
    shop.test/*   pages without links            (shop.test scored 0.2)

Why all five shop.test URLs are queued before its first page is fetched, by hand from the
workbench (one worker, so one request at a time; ``host_delay`` and ``ip_delay`` 0, so a host is
ready again when its request ends, and of two ready hosts the one whose request ended first
goes first): flag.test and clean.test are found on honest.test/ in that order and each asks
for robots.txt first, flag.test's ending first, so flag.test/ is fetched before clean.test/;
shop.test, met on flag.test/, must fetch its robots.txt too, which ends after clean.test's
did, so clean.test/ comes before shop.test's first page.  The pages are fetched honest/,
flag/, clean/ and then shop.test's five: first in, first out without steering (f1 f2 f3 c1
c2: f3 is seen before when clean.test/ links it).  With steering f1, f2, f3 go to the low
lane when flag.test/ is fetched; clean.test/ then queues c1, c2 and promotes f3 (found on a
clean page too) to the normal lane: c1 c2 f3, then f1 f2 (f3's low-lane copy is skipped).
"""

from __future__ import annotations

import random
from collections import deque
from pathlib import Path

from test_crawl_steer import TEXT, page, write_run

from spamflow.crawl.crawler import crawl
from spamflow.crawl.frontier import HostQueue, SpillFile
from spamflow.crawl.journal import Journal
from spamflow.crawl.lanes import LowLaneIndex
from spamflow.crawl.loopback import LoopbackWeb, Reply
from spamflow.crawl.settings import CrawlSettings
from spamflow.crawl.workbench import VisitState

HOSTS = {"honest.test": "127.0.32.1", "flag.test": "127.0.32.2", "clean.test": "127.0.32.3",
         "shop.test": "127.0.32.4"}
SCORES = {"honest.test": 0.1, "flag.test": 0.9, "clean.test": 0.1, "shop.test": 0.2}
LINKS = {("honest.test", "/"): ["http://flag.test/", "http://clean.test/"],
         ("flag.test", "/"): [f"http://shop.test/f{i}" for i in (1, 2, 3)],
         ("clean.test", "/"): ["http://shop.test/c1", "http://shop.test/c2", "http://shop.test/f3"]}
HEAD = ["honest.test/", "flag.test/", "clean.test/"]


def site(host: str, path: str) -> Reply:
    if path == "/robots.txt":
        return Reply(status=404, body=b"", headers=TEXT)
    if host == "shop.test" or (host, path) in LINKS:
        return page(*LINKS.get((host, path), []), text=f"{host}{path}")
    return Reply(status=404, body=b"", headers=TEXT)


def crawl_order(tmp_path: Path, name: str, steer: dict | None, max_pages: int = 100) -> tuple[list[str], dict]:
    """The pages fetched, in order (robots.txt left out), and the crawl's counts."""
    with LoopbackWeb(site, HOSTS) as web:
        s = CrawlSettings.model_validate(dict(
            seeds=["http://honest.test/"], scope="any", resolve=web.pins, host_delay=0.0, ip_delay=0.0,
            concurrency=1, max_pages=max_pages, **({"steer": steer} if steer else {})))
        summary = crawl(s, tmp_path / name, base_dir=tmp_path)
    return [h.host + h.path for h in web.log if h.path != "/robots.txt"], summary.counts


STEER = {"spam_budget": 5, "subdomain_cap": 1, "link_weight": 0.5}


def test_without_steering_the_host_queue_is_first_in_first_out(tmp_path):
    order, counts = crawl_order(tmp_path, "plain", None)
    assert order == HEAD + ["shop.test/f1", "shop.test/f2", "shop.test/f3", "shop.test/c1", "shop.test/c2"]
    assert "urls_steer_low_lane" not in counts


def test_links_found_only_on_a_steered_host_wait_in_the_low_lane(tmp_path):
    steer = {"run": str(write_run(tmp_path / "earlier", SCORES)), **STEER}
    order, counts = crawl_order(tmp_path, "steered", steer)
    assert order == HEAD + ["shop.test/c1", "shop.test/c2", "shop.test/f3", "shop.test/f1", "shop.test/f2"]
    assert (counts["urls_steer_low_lane"], counts["urls_steer_promoted"], counts["pages_steer_low_lane"]) == (3, 1, 2)
    assert (counts["pages"], counts["urls_accepted"], counts["pending_at_end"]) == (8, 8, 0)


def test_when_the_page_budget_runs_out_the_links_from_spam_are_left_out(tmp_path):
    # max_pages 6: honest/, flag/, clean/ and three pages of shop.test
    order, _ = crawl_order(tmp_path, "plain", None, max_pages=6)
    assert order == HEAD + ["shop.test/f1", "shop.test/f2", "shop.test/f3"]
    steer = {"run": str(write_run(tmp_path / "earlier", SCORES)), **STEER}
    order, counts = crawl_order(tmp_path, "steered", steer, max_pages=6)
    # the three clean.test links to shop.test are fetched; f1 and f2, linked only from flag.test, are left
    assert order == HEAD + ["shop.test/c1", "shop.test/c2", "shop.test/f3"]
    assert (counts["urls_steer_low_lane"], counts["pages_steer_low_lane"], counts["pending_at_end"]) == (3, 0, 2)


def test_a_resumed_crawl_puts_each_pending_url_back_in_its_lane(tmp_path):
    steer = {"run": str(write_run(tmp_path / "earlier", SCORES)), **STEER}
    # stop after honest/, flag/ and clean/: all five shop.test URLs pending, three in the low lane
    order, counts = crawl_order(tmp_path, "resumed", steer, max_pages=3)
    assert order == HEAD and counts["pending_at_end"] == 5
    journal = Journal(tmp_path / "resumed")
    lanes = [(url, lane) for _, _, url, lane in journal.read_discovered()]
    journal.close()
    assert [u for u, lane in lanes if lane == "l"] == [f"http://shop.test/f{i}" for i in (1, 2, 3)]
    assert [u for u, lane in lanes if lane == "p"] == ["http://shop.test/f3"]
    # resumed with room for two more pages: the clean links come first, as in one crawl
    order, counts = crawl_order(tmp_path, "resumed", steer, max_pages=5)
    assert order == ["shop.test/c1", "shop.test/c2"]
    assert (counts["resumed_pending"], counts["urls_steer_low_lane"], counts["pending_at_end"]) == (5, 3, 3)
    # then f3 (promoted, so in the normal lane after the resume too), f1, f2; f3 once
    order, counts = crawl_order(tmp_path, "resumed", steer, max_pages=100)
    assert order == ["shop.test/f3", "shop.test/f1", "shop.test/f2"]
    assert (counts["pages"], counts["pages_steer_low_lane"], counts["urls_steer_promoted"]) == (8, 2, 1)
    assert (counts["urls_accepted"], counts["pending_at_end"]) == (8, 0)


def test_two_spilling_lanes_take_the_normal_one_first_and_stay_bounded(tmp_path):
    """Random appends to both lanes and pops, against two deques: a pop takes the normal
    lane's oldest entry while it has one, else the low lane's; memory stays at the heads and
    tails of the two lanes."""
    spill = SpillFile(tmp_path / "spill")
    state = VisitState("http://h.test", "h.test", 80, HostQueue(spill, head_size=4, block_size=8), delay=0.0,
                       low=HostQueue(spill, head_size=4, block_size=8))
    assert state.low is not None
    refs: tuple[deque[bytes], deque[bytes]] = (deque(), deque())
    rng = random.Random(7)
    for step in range(10_000):
        if rng.random() < 0.55 or not state.pending():
            low = rng.random() < 0.5
            (state.low if low else state.queue).append(f"/{step}".encode())
            refs[low].append(f"/{step}".encode())
        else:
            want = (refs[0].popleft(), False) if refs[0] else (refs[1].popleft(), True)
            assert state.popleft() == want
        assert state.pending() == len(refs[0]) + len(refs[1])
        assert state.queue.in_memory() <= 4 + 8 + 8 and state.low.in_memory() <= 4 + 8 + 8
    assert spill.bytes_written > 0
    spill.close()


def test_the_low_lane_index_promotes_a_waiting_url_once():
    index = LowLaneIndex()
    index.enter("http://a.test/1")
    index.enter("http://a.test/2")
    assert not index.promote("http://a.test/3")  # never in a low lane
    assert index.promote("http://a.test/1") and not index.promote("http://a.test/1")  # once
    assert index.copies() == 1
    assert not index.leave("http://a.test/1")  # its low-lane copy is skipped
    assert index.copies() == 0 and not index.promote("http://a.test/1")
    assert index.leave("http://a.test/2")  # not promoted: fetched from the low lane
    assert not index.promote("http://a.test/2")  # fetched already: nothing to promote
