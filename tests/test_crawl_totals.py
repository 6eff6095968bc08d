"""A resumed crawl reports the whole crawl: its counts are rebuilt from the journal and the
WARC files (spamflow.crawl.totals), checked on a hand-written journal and on a crawl whose
last records a kill cut short, against the same crawl never interrupted."""

from __future__ import annotations

import json
import shutil

from warcio.archiveiterator import ArchiveIterator

from spamflow.crawl.crawler import crawl
from spamflow.crawl.journal import Journal
from spamflow.crawl.loopback import LoopbackWeb, Reply
from spamflow.crawl.settings import CrawlSettings
from spamflow.crawl.totals import totals_so_far

from crawl_check import read_errors

HOSTS = {"t1.test": "127.0.44.1", "t2.test": "127.0.44.2"}
SESSION = {"seconds", "front_max", "resume_bytes_cut", "resumed_pages", "resumed_pending", "urls_seen_before"}


def test_totals_from_a_hand_written_journal(tmp_path):
    journal = Journal(tmp_path)
    journal.tally(None, {"urls_out_of_scope": 1})  # offering the seeds
    journal.tally("http://a/1", {"pages": 1, "body_bytes": 100, "urls_filtered": 5})  # cut by a kill...
    journal.tally("http://a/2", {"pages": 1, "body_bytes": 7, "status_2xx": 1})
    journal.tally("http://a/1", {"pages": 1, "body_bytes": 90, "urls_filtered": 5})  # ...and fetched again
    journal.tally("http://a/3", {"pages": 1, "body_bytes": 1000})  # its record never completed
    journal.error({"url": "http://a/x", "kind": "timeout", "reason": "slow", "date": "d1", "depth": 2})
    journal.error({"url": "http://a/p", "kind": "parse", "reason": "bad", "date": "d1"})
    journal.error({"url": "http://a/p", "kind": "parse", "reason": "bad", "date": "d2"})  # the same, again
    journal.robots("http://a", 200, "", {"robots_requests": 2, "robots_parsed": 1})
    journal.close()
    so_far = totals_so_far(Journal(tmp_path), stored={"http://a/1", "http://a/2"})
    # by hand: pages 1+1, bytes 90+7 (a/1 its last tally, a/3 none), the seeds, two distinct errors (one a request)
    assert dict(so_far.counts) == {"urls_out_of_scope": 1, "pages": 2, "body_bytes": 97, "urls_filtered": 5,
                                   "status_2xx": 1, "errors_timeout": 1, "requests": 1, "errors_parse": 1,
                                   "robots_requests": 2, "robots_parsed": 1}
    assert so_far.seeds_tallied and len(so_far.error_keys) == 2


def _site(host: str, path: str) -> Reply:
    if path == "/robots.txt":
        return Reply(body=b"User-agent: *\nDisallow: /private\n", headers={"Content-Type": "text/plain"})
    if path == "/gone":
        return Reply(status=404, body=b"<html>gone</html>")
    if path == "/moved":
        return Reply(status=301, headers={"Location": f"http://{host}/3"})
    i = int(path.strip("/") or 0)
    links = [f"/{i + 1}"] if i < 6 else ["/gone", "/moved", "/private", "mailto:x@y.z", "http://t2.test/"]
    return Reply(body=(f"<html><p>{host} {i}</p>" + "".join(f'<a href="{u}">x</a>' for u in links)
                       + '<a href="/skip.pdf">pdf</a></html>').encode())


def _settings(web: LoopbackWeb) -> CrawlSettings:
    return CrawlSettings.model_validate({
        "snapshot": "t", "seeds": ["http://t1.test/"], "scope": "any", "resolve": web.pins, "host_delay": 0.0,
        "ip_delay": 0.0, "concurrency": 4, "filter": "not PathEndsWithOneOf(.pdf)"})


def test_a_crawl_cut_short_by_a_kill_and_resumed_counts_like_one_never_killed(tmp_path):
    with LoopbackWeb(_site, HOSTS) as web:
        whole = crawl(_settings(web), tmp_path / "whole")
        cut = tmp_path / "cut"
        shutil.copytree(tmp_path / "whole", cut)
        # a kill while writing: the file ends inside the third-last page's response record
        warc = sorted((cut / "warc").glob("*.warc.gz"))[-1]
        with open(warc, "rb") as fh:
            it = ArchiveIterator(fh)
            offsets = [(it.get_record_offset(), r.rec_headers.get_header("WARC-Target-URI")) for r in it
                       if r.rec_type == "response"]
        start, _ = [o for o in offsets if not o[1].endswith("/robots.txt")][-3]
        with open(warc, "r+b") as fh:
            fh.truncate(start + 30)
        hits = len(web.log)
        resumed = crawl(_settings(web), cut)
    assert len(web.log) - hits >= 3  # the cut pages were fetched again
    assert whole.counts["pages"] == 18 and whole.counts["urls_filtered"] > 0 and whole.counts["errors_robots_disallowed"]
    assert resumed.counts["resumed_pages"] < whole.counts["pages"]
    assert {k: v for k, v in resumed.counts.items() if k not in SESSION and v} == \
        {k: v for k, v in whole.counts.items() if k not in SESSION and v}
    errors = [json.dumps({k: v for k, v in e.items() if k != "date"}, sort_keys=True) for e in read_errors(cut)]
    assert len(errors) == len(set(errors)) == sum(v for k, v in whole.counts.items() if k.startswith("errors_"))
