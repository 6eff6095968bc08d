"""The crawl loop: dispatcher, fetchers, DNS, robots.txt and WARC output, on one asyncio loop.

The dispatcher takes the next host that politeness allows from the workbench and hands it
to one of ``concurrency`` fetch tasks; the fetch task fetches one URL of that host (or its
robots.txt first), offers the links it finds, writes the exchange to WARC and gives the
host back.  aiohttp is the HTTP client: it streams bodies (so a body is cut at
``max_body_bytes`` without reading the rest), takes a custom resolver (the ``resolve:``
pins and our DNS cache) and keeps connections alive per host.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from spamflow.crawl.filters import UrlFilter, parse_filter
from spamflow.crawl.frontier import HostQueue, SpillFile
from spamflow.crawl.journal import LOW, PROMOTED, Journal, complete_lines, drop_partial_line, stored_responses
from spamflow.crawl.lanes import LowLaneIndex
from spamflow.crawl.links import content_signature, decode_capped, extract_links, is_html
from spamflow.crawl.robots import ALLOW_ALL, ROBOTS_MAX_BYTES, ROBOTS_MAX_REDIRECTS, RobotsRules, rules_from_response
from spamflow.crawl.settings import CrawlSettings, parse_pin, read_seeds
from spamflow.crawl.sieve import Sieve
from spamflow.crawl.steer import STEER_COUNTS, Steering, load_steering
from spamflow.crawl.totals import error_key, totals_so_far
from spamflow.crawl.urls import normalize, path_query, scheme_authority
from spamflow.crawl.warc_store import Exchange, WarcStore, repair, warc_now
from spamflow.crawl.workbench import VisitState, Workbench
from spamflow.domains import registered_domain
from spamflow.errors import SpamflowError
from spamflow.progress import progress_bar

if TYPE_CHECKING:
    from tqdm import tqdm

REDIRECTS = (301, 302, 303, 307, 308)
_DROP_HEADERS = ("transfer-encoding",)  # the body is stored de-chunked


@dataclass
class CrawlSummary:
    snapshot: str
    warc_files: list[Path]
    errors: Path
    counts: dict[str, int] = field(default_factory=dict)
    steer: Path | None = None  # steer.jsonl, when input.crawl.steer is set


@dataclass
class _Fetched:
    status: int
    exchange: Exchange
    content_type: str
    location: str | None


class _Resolver(AbstractResolver):
    """aiohttp asks us for addresses: we answer from the crawler's per-host cache."""

    def __init__(self, addresses: dict[str, tuple[str, int | None]]) -> None:
        self.addresses = addresses

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[ResolveResult]:
        if host not in self.addresses:
            raise OSError(f"{host}: not resolved by the crawler")
        ip, pinned_port = self.addresses[host]
        fam = socket.AF_INET6 if ":" in ip else socket.AF_INET
        return [{"hostname": host, "host": ip, "port": pinned_port or port, "family": fam,
                 "proto": 0, "flags": socket.AI_NUMERICHOST}]

    async def close(self) -> None:
        return None


class Crawler:
    def __init__(self, settings: CrawlSettings, directory: Path, base_dir: Path = Path("."),
                 progress: bool | None = False) -> None:
        self.s = settings
        self.dir = directory
        self.base_dir = base_dir
        self.progress = progress
        self.counts: Counter[str] = Counter({k: 0 for k in ("pages", "requests", "body_bytes", "urls_accepted",
                                                            "near_duplicates", "robots_requests")})
        self.sieve = Sieve()
        self.signatures: set[int] = set()
        self.hosts: dict[str, VisitState] = {}
        self.addresses: dict[str, tuple[str, int | None]] = {}
        self.pins = {h: parse_pin(p) for h, p in settings.resolve.items()}
        self.workbench = Workbench(settings.ip_delay)
        self.wakeup = asyncio.Event()
        self.inflight = 0
        self.busy = 0  # hosts handed to fetch tasks and not yet given back
        self.failure: Exception | None = None
        self.dns_pending = 0
        self.pages = 0
        self.scope: set[str] = set()
        self.filter: UrlFilter | None = (parse_filter(settings.filter, base_dir, where="input.crawl.filter")
                                         if settings.filter else None)
        self.spill: SpillFile | None = None
        self.journal: Journal | None = None
        self.store: WarcStore | None = None
        self._robots_restored: dict[str, RobotsRules] = {}
        self._errors_logged: set[str] = set()  # error_key of the errors logged before this run
        self._dns_tasks: set[asyncio.Task[None]] = set()
        self.steering: Steering | None = (load_steering(settings.steer, base_dir, f"input.crawl ({settings.snapshot})"
                                                        ".steer") if settings.steer else None)
        self._steer_log: TextIO | None = None
        self.low_lanes: LowLaneIndex | None = LowLaneIndex() if self.steering is not None else None
        self._steer_seen: dict[str, str] = {}  # host -> its action in steer.jsonl (each host once)

    # ------------------------------------------------------------------ scope and the sieve
    def _in_scope(self, url: str) -> bool:
        if self.s.scope == "any":
            return True
        host = urlsplit(url).hostname or ""
        return (host if self.s.scope == "hosts" else registered_domain(host)) in self.scope

    def offer(self, url: str, depth: int, hops: int, batch: list[tuple[int, int, str, str]],
              low: bool = False) -> None:
        """A normalised URL found at ``depth`` after ``hops`` redirects: filter, sieve, cap, queue;
        ``low``: found on a steered host, so it goes to its host's low-priority lane (a URL
        waiting there that a clean page links to is promoted to the normal lane)."""
        if not self._in_scope(url):
            self.counts["urls_out_of_scope"] += 1
            return
        if self.filter is not None and not self.filter(url):
            self.counts["urls_filtered"] += 1
            return
        if not self.sieve.add(url):
            if not low and self.low_lanes is not None and self._promote(url, depth, hops, batch):
                return
            self.counts["urls_seen_before"] += 1
            return
        if self.steering is not None and not self._steer_allows(urlsplit(url).hostname or ""):
            return
        state = self._state(url)
        if state.accepted >= self.s.max_pages_per_host:
            self.counts["urls_over_host_cap"] += 1
            return
        budget = self.steering.budget(state.host) if self.steering is not None else None
        if budget is not None and state.accepted >= budget:
            self.counts["urls_steer_over_budget"] += 1
            return
        state.accepted += 1
        batch.append((depth, hops, url, LOW if low else ""))
        self.counts["urls_accepted"] += 1  # one per line of the journal's discovered.log
        if low:
            self.counts["urls_steer_low_lane"] += 1
        if self.addresses.get(state.host, ("?", None))[0] == "":  # its DNS lookup failed before
            self._error(url, "dns", f"{state.host}: not resolved")
            return
        self._enqueue(state, depth, hops, url, low)

    def _promote(self, url: str, depth: int, hops: int, batch: list[tuple[int, int, str, str]]) -> bool:
        """Queue ``url``, waiting in a low lane, again in the normal lane (lanes.py); False if it
        is not waiting there (fetched already, promoted already, or never low)."""
        state = self.hosts.get(scheme_authority(url))
        assert self.low_lanes is not None
        if state is None or self.addresses.get(state.host, ("?", None))[0] == "" or not self.low_lanes.promote(url):
            return False
        batch.append((depth, hops, url, PROMOTED))
        self.counts["urls_steer_promoted"] += 1
        self._enqueue(state, depth, hops, url)
        return True

    def _enqueue(self, state: VisitState, depth: int, hops: int, url: str, low: bool = False) -> None:
        entry = f"{depth} {hops} {path_query(url)}".encode("utf-8", "surrogatepass")
        if low:
            assert self.low_lanes is not None
            self.low_lanes.enter(url)
            if state.low is None:
                state.low = HostQueue(self.spill, self.s.frontier_head, self.s.frontier_block)
            state.low.append(entry)
        else:
            state.queue.append(entry)
        self.workbench.schedule(state)
        self.wakeup.set()

    def _state(self, url: str) -> VisitState:
        key = scheme_authority(url)
        state = self.hosts.get(key)
        if state is None:
            parts = urlsplit(url)
            host = parts.hostname or ""
            port = parts.port or (443 if parts.scheme == "https" else 80)
            state = VisitState(key, host, port, HostQueue(self.spill, self.s.frontier_head, self.s.frontier_block),
                               self.s.host_delay)
            self.hosts[key] = state
            if key in self._robots_restored:
                self._set_robots(state, self._robots_restored[key])
            elif not self.s.robots:
                state.robots = ALLOW_ALL
            self._locate(state)
        return state

    # ------------------------------------------------------------------ steering (steer.py)
    def _steer_allows(self, host: str) -> bool:
        """Whether a URL of ``host`` may go on (to the budget check); the first time a host
        the policy touches is met, its decision is written to steer.jsonl."""
        steering = self.steering
        assert steering is not None and self._steer_log is not None
        if host not in self._steer_seen:
            if host in steering.steered:
                action = "budget" if steering.settings.spam_budget else "skip"
            elif steering.new_subdomain_domain(host) is None:
                action = ""
            else:
                action = "new_subdomain" if steering.admit(host) else "subdomain_capped"
            self._steer_seen[host] = action
            if action:
                self._steer_log.write(json.dumps(steering.record(host, action)) + "\n")
                self._steer_log.flush()
        action = self._steer_seen[host]
        if action in ("skip", "subdomain_capped"):
            self.counts[f"urls_steer_{'skipped' if action == 'skip' else 'subdomain_capped'}"] += 1
            return False
        return True

    def _open_steer_log(self) -> None:
        """steer.jsonl, appended to; a resumed crawl reads back the hosts decided before, so
        none is written twice and the subdomain cap counts the ones admitted then."""
        if self.steering is None:
            return
        path = self.dir / "steer.jsonl"
        drop_partial_line(path)
        for line in complete_lines(path):
            row = json.loads(line)
            self._steer_seen[row["host"]] = row["action"]
            if row["action"] == "new_subdomain":
                self.steering.admitted.setdefault(row["domain"], set()).add(row["host"])
        self._steer_log = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed at the end of run())

    def _steer_counts(self) -> None:
        """Hosts per action, from steer.jsonl's decisions (so a resumed crawl counts them all)."""
        actions = Counter(a for a in self._steer_seen.values() if a)
        self.counts["hosts_steered"] = actions["budget"] + actions["skip"]
        self.counts["hosts_steer_skipped"] = actions["skip"]
        self.counts["subdomains_admitted"] = actions["new_subdomain"]
        self.counts["subdomains_capped"] = actions["subdomain_capped"]
        for key in STEER_COUNTS:
            self.counts.setdefault(key, 0)  # present, 0 or not, whenever steering is on

    # ------------------------------------------------------------------ DNS, once per host
    def _locate(self, state: VisitState) -> None:
        if state.host in self.addresses:
            if self.addresses[state.host][0]:  # "" marks a host whose lookup failed
                self.workbench.attach(state, self.addresses[state.host][0])
        elif state.host in self.pins:
            self.addresses[state.host] = self.pins[state.host]
            self.workbench.attach(state, self.pins[state.host][0])
        else:
            self.dns_pending += 1
            task = asyncio.get_running_loop().create_task(self._resolve(state))
            self._dns_tasks.add(task)
            task.add_done_callback(self._dns_tasks.discard)

    async def _resolve(self, state: VisitState) -> None:
        try:
            infos = await asyncio.get_running_loop().getaddrinfo(state.host, state.port, type=socket.SOCK_STREAM)
            ip = str(infos[0][4][0])
        except (OSError, UnicodeError, IndexError) as exc:
            self.counts["hosts_dns_failed"] += 1
            pending = []
            while state.pending():
                raw, low = state.popleft()
                url = state.key + raw.decode().split(" ", 2)[2]
                if not low or self.low_lanes is None or self.low_lanes.leave(url):  # not a promoted copy
                    pending.append(url)
            for url in pending:
                self._error(url, "dns", f"{state.host}: {exc}")
            state.robots = ALLOW_ALL
            state.entry = None
            self.addresses.setdefault(state.host, ("", None))  # marks the host as failed
        else:
            self.addresses[state.host] = (ip, None)
            self.workbench.attach(state, ip)
        finally:
            self.dns_pending -= 1
            self.wakeup.set()

    # ------------------------------------------------------------------ logging outcomes
    def _error(self, url: str, kind: str, reason: str, **extra: Any) -> None:
        record = {"url": url, "kind": kind, "reason": reason, "date": warc_now(), **extra}
        if self._errors_logged and error_key(record) in self._errors_logged:
            return  # logged and counted before a kill, by the attempt at a page fetched again
        self.counts[f"errors_{kind}"] += 1
        assert self.journal is not None
        self.journal.error(record)

    # ------------------------------------------------------------------ fetching
    async def _fetch(self, session: aiohttp.ClientSession, url: str, ip: str,
                     max_bytes: int) -> _Fetched | tuple[str, str]:
        """One GET without following redirects; a (kind, reason) pair if no response came."""
        body = bytearray()
        truncated: str | None = None
        response: aiohttp.ClientResponse | None = None
        date = warc_now()
        try:
            async with asyncio.timeout(self.s.fetch_timeout):
                async with session.get(url, allow_redirects=False) as response:
                    while chunk := await response.content.read(65536):
                        body += chunk
                        if len(body) > max_bytes:
                            del body[max_bytes:]
                            truncated = "length"
                            break
        except TimeoutError:
            if response is None:
                return ("timeout", f"no response within {self.s.fetch_timeout} s")
            truncated = "time"
        except aiohttp.ClientPayloadError as exc:
            if response is None:
                return ("payload", str(exc))
            truncated = "disconnect"
        except aiohttp.ClientConnectorError as exc:
            return ("connect", str(exc))
        except aiohttp.ServerDisconnectedError as exc:
            if response is None:
                return ("disconnected", str(exc) or "server closed the connection")
            truncated = "disconnect"
        except aiohttp.ClientResponseError as exc:
            return ("http_protocol", f"{exc.status} {exc.message}")
        except aiohttp.InvalidURL as exc:
            return ("invalid_url", str(exc))
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            return ("network", f"{type(exc).__name__}: {exc}")
        assert response is not None
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.raw_headers
                   if k.decode("latin-1").lower() not in _DROP_HEADERS]
        request_headers = [(k, v) for k, v in response.request_info.headers.items()]
        exchange = Exchange(
            url=url, ip=ip, date=date, request_line=f"GET {path_query(url)} HTTP/1.1",
            request_headers=request_headers,
            protocol=f"HTTP/{response.version.major}.{response.version.minor}" if response.version else "HTTP/1.1",
            status_line=f"{response.status} {response.reason or ''}".strip(),
            response_headers=headers, body=bytes(body), truncated=truncated)
        return _Fetched(response.status, exchange, response.headers.get("Content-Type", ""),
                        response.headers.get("Location"))

    async def _fetch_robots(self, session: aiohttp.ClientSession, state: VisitState) -> None:
        url = state.key + "/robots.txt"
        self.sieve.add(url)  # a page linking to robots.txt does not fetch it again
        status: int | None = None
        body = b""
        counts: Counter[str] = Counter()  # journalled with the outcome, so a resumed crawl counts them
        for _hop in range(ROBOTS_MAX_REDIRECTS + 1):
            counts["robots_requests"] += 1
            got = await self._fetch(session, url, await self._address(url), ROBOTS_MAX_BYTES)
            if isinstance(got, tuple):
                status = None
                break
            if got.exchange.truncated:
                counts[f"truncated_{got.exchange.truncated}"] += 1
            assert self.store is not None
            self.store.write_exchange(got.exchange)
            encoding = next((v for k, v in got.exchange.response_headers if k.lower() == "content-encoding"), "")
            body, capped = await asyncio.to_thread(decode_capped, got.exchange.body, encoding, ROBOTS_MAX_BYTES)
            status = got.status
            if capped:
                counts["truncated_inflated"] += 1
            if status not in REDIRECTS or not got.location:
                break
            nxt = normalize(got.location, url)
            if nxt is None:
                break
            url = nxt  # followed across hosts too (RFC 9309 2.3.1.2)
        rules = rules_from_response(status, body, time.time())
        assert self.journal is not None
        counts[f"robots_{rules.outcome}"] += 1
        self.journal.robots(state.key, status, body.decode("utf-8", "replace"), dict(counts))
        self.counts.update(counts)
        self._set_robots(state, rules)

    async def _address(self, url: str) -> str:
        """The address of a URL's host: known, pinned, or looked up now (robots.txt redirects
        may lead to hosts the crawl has not met); "" if the lookup fails."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        if host not in self.addresses:
            if host in self.pins:
                self.addresses[host] = self.pins[host]
            else:
                try:
                    infos = await asyncio.get_running_loop().getaddrinfo(host, parts.port or 80,
                                                                         type=socket.SOCK_STREAM)
                    self.addresses[host] = (str(infos[0][4][0]), None)
                except (OSError, UnicodeError, IndexError):
                    return ""
        return self.addresses[host][0]

    def _set_robots(self, state: VisitState, rules: RobotsRules) -> None:
        state.robots = rules
        delay = rules.crawl_delay(self.s.user_agent)
        if delay is not None:
            state.delay = max(self.s.host_delay, min(delay, self.s.max_crawl_delay))

    async def _visit(self, session: aiohttp.ClientSession, state: VisitState) -> float | None:
        """Fetch robots.txt or the next URL of ``state``; the time the request ended, or None."""
        if state.robots is None:
            await self._fetch_robots(session, state)
            return time.monotonic()
        raw, low = state.popleft()
        entry = raw.decode("utf-8", "surrogatepass")
        depth_s, hops_s, pq = entry.split(" ", 2)
        depth, hops, url = int(depth_s), int(hops_s), state.key + pq
        if low and self.low_lanes is not None and not self.low_lanes.leave(url):
            return None  # promoted: fetched from the normal lane already
        if not state.robots.allowed(url, self.s.user_agent):
            self._error(url, "robots_disallowed", f"robots.txt ({state.robots.outcome}) disallows it")
            return None
        self.inflight += 1
        try:
            got = await self._fetch(session, url, state.ip or "", self.s.max_body_bytes)
        finally:
            self.inflight -= 1
        end = time.monotonic()
        if isinstance(got, tuple):
            self.counts["requests"] += 1
            self._error(url, got[0], got[1], depth=depth)  # the depth marks it as a request (totals.py)
            return end
        page: _Page | None = None
        if got.status not in REDIRECTS and 200 <= got.status < 300 and is_html(got.content_type):
            # inflating, hashing and parsing a page is CPU work: in a thread, so that one host's
            # large page does not hold every other host's requests and timers
            page = await asyncio.to_thread(_read_page, got, self.s.max_body_bytes, self.s.near_duplicates,
                                           self.s.embeds)
        # From here to the WARC record nothing awaits, so the counts' change is this page's tally.
        before = self.counts.copy()
        self.counts["requests"] += 1
        if got.exchange.truncated:
            self.counts[f"truncated_{got.exchange.truncated}"] += 1
        if low:
            self.counts["pages_steer_low_lane"] += 1
        batch: list[tuple[int, int, str, str]] = []
        if got.status in REDIRECTS and got.location:
            self.counts["redirects"] += 1
            target = normalize(got.location, url)
            if target is None:
                self.counts["redirects_not_http"] += 1
            elif hops >= self.s.max_redirects:
                self._error(target, "too_many_redirects", f"more than {self.s.max_redirects} hops", source=url)
            else:
                self.offer(target, depth, hops + 1, batch, low)  # a redirect keeps its lane
        elif page is not None:
            self._follow(page, url, depth, batch)
        self.counts["pages"] += 1
        self.counts[f"status_{got.status // 100}xx"] += 1
        self.counts["body_bytes"] += len(got.exchange.body)
        assert self.journal is not None and self.store is not None
        self.journal.discovered(batch)  # before the record: a stored page never loses its links
        self.journal.tally(url, _change(before, self.counts))
        self.store.write_exchange(got.exchange)
        self.pages += 1
        return end

    def _follow(self, page: _Page, url: str, depth: int, batch: list[tuple[int, int, str, str]]) -> None:
        if page.capped:
            self.counts["truncated_inflated"] += 1
        if self.s.near_duplicates:
            signature = page.signature
            if signature in self.signatures:
                self.counts["near_duplicates"] += 1
                return
            self.signatures.add(signature)
        host = urlsplit(url).hostname or ""
        cost = 1 if self.steering is None else self.steering.link_depth(host)
        low = self.steering is not None and self.steering.low_lane(host)
        if cost is not None and depth + cost > self.s.max_depth:
            self.counts["pages_at_max_depth"] += 1
            return
        if page.error:  # selectolax on hostile bytes: log it, keep the page
            self._error(url, "parse", page.error)
            return
        base, links = page.base, page.links
        if cost is None:  # a steered host with link_weight 0
            self.counts["links_steer_not_followed"] += len(links)
            return
        base_url = normalize(base, url) if base else url
        for raw in links:
            link = normalize(raw, base_url or url)
            if link is None:
                self.counts["links_not_http"] += 1
                continue
            self.offer(link, depth + cost, 0, batch, low)

    # ------------------------------------------------------------------ the loop
    async def _worker(self, session: aiohttp.ClientSession, todo: asyncio.Queue[VisitState | None]) -> None:
        while (state := await todo.get()) is not None:
            end: float | None = None
            try:
                end = await self._visit(session, state)
            except Exception as exc:  # a bug or a full disk: stop the crawl, do not hang on a dead worker
                self.failure = exc
            finally:
                self.workbench.release(state, end)
                self.busy -= 1
                self.wakeup.set()

    def _resume(self, seeds: list[str]) -> None:
        assert self.store is not None and self.journal is not None
        cut = sum(repair(p) for p in self.store.existing())
        self.counts["resume_bytes_cut"] = cut
        stored, self.signatures = stored_responses(self.store.existing(), self.s.near_duplicates)
        so_far = totals_so_far(self.journal, stored)
        self.counts.update(so_far.counts)  # the crawl so far, not only this run
        self._errors_logged = so_far.error_keys
        ended = {e["url"] for e in self.journal.read_errors()}
        for row in self.journal.read_robots():
            body = str(row["body"]).encode("utf-8")
            self._robots_restored[row["key"]] = rules_from_response(row["status"], body, time.time())
        resumed = 0
        for depth, hops, url, lane in self.journal.read_discovered():
            state = self._state(url)
            if lane == PROMOTED:  # the same URL queued again, in the normal lane
                if url not in stored and url not in ended and self.low_lanes is not None:
                    self.low_lanes.mark_promoted(url)
                    self._enqueue(state, depth, hops, url)
                continue
            self.counts["urls_accepted"] += 1
            self.sieve.add(url)
            state.accepted += 1
            if url in stored:
                self.pages += 1
                continue
            if url in ended:
                continue
            self._enqueue(state, depth, hops, url, lane == LOW)
            resumed += 1
        self.counts["resumed_pending"] = resumed
        self.counts["resumed_pages"] = self.pages
        for key in self._robots_restored:
            self.sieve.add(key + "/robots.txt")
        batch: list[tuple[int, int, str, str]] = []
        before = self.counts.copy()
        for seed in seeds:
            seed_url = normalize(seed)
            assert seed_url is not None  # read_seeds checked
            self.offer(seed_url, 0, 0, batch)
        if so_far.seeds_tallied and not batch:  # the same seeds again: counted when first offered
            self.counts = before
        self.journal.discovered(batch)
        if not so_far.seeds_tallied or batch:
            self.journal.tally(None, _change(before, self.counts))

    async def run(self) -> CrawlSummary:
        seeds = read_seeds(self.s, self.base_dir)
        for seed in seeds:
            host = urlsplit(normalize(seed) or "").hostname or ""
            self.scope.add(host if self.s.scope == "hosts" else registered_domain(host))
        self.dir.mkdir(parents=True, exist_ok=True)
        self.journal = Journal(self.dir)
        self.store = WarcStore(self.dir / "warc", self.s.snapshot, self.s.warc_max_bytes,
                               description=f"spamflow crawl {self.s.snapshot}")
        self.spill = SpillFile(self.dir / "state" / "frontier.spill")
        todo: asyncio.Queue[VisitState | None] = asyncio.Queue()
        started = time.monotonic()
        connector = aiohttp.TCPConnector(limit=self.s.concurrency, limit_per_host=0,
                                         resolver=_Resolver(self.addresses), use_dns_cache=False,
                                         ssl=self.s.verify_tls)  # True: default verification; False: none
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.s.connect_timeout,
                                        sock_read=self.s.read_timeout)
        bar = progress_bar(desc=f"crawl {self.s.snapshot}", unit="page", setting=self.progress, mininterval=0.5)
        try:
            self._open_steer_log()
            self._resume(seeds)
            async with aiohttp.ClientSession(
                    connector=connector, timeout=timeout, auto_decompress=False,
                    cookie_jar=aiohttp.DummyCookieJar(),
                    headers={"User-Agent": self.s.user_agent, "Accept": "*/*",
                             "Accept-Encoding": "gzip, deflate"}) as session:
                workers = [asyncio.create_task(self._worker(session, todo)) for _ in range(self.s.concurrency)]
                try:
                    await self._dispatch(todo, bar)
                finally:
                    for _ in workers:
                        todo.put_nowait(None)
                    await asyncio.gather(*workers, return_exceptions=True)
        finally:
            bar.close()
            self.store.close()
            self.journal.close()
            self.spill.close()
            if self._steer_log is not None:
                self._steer_log.close()
        if self.steering is not None:
            self._steer_counts()
        self.counts["hosts"] = len(self.hosts)
        self.counts["ips"] = len(self.workbench.entries)
        self.counts["pending_at_end"] = sum(s.pending() for s in self.hosts.values()) - (
            self.low_lanes.copies() if self.low_lanes is not None else 0)  # a promoted URL is pending once
        self.counts["discovered_urls"] = len(self.sieve)
        self.counts["seconds"] = round(time.monotonic() - started)
        return CrawlSummary(self.s.snapshot, self.store.existing(), self.journal.errors_path, dict(self.counts),
                            self.dir / "steer.jsonl" if self.steering is not None else None)

    async def _dispatch(self, todo: asyncio.Queue[VisitState | None], bar: tqdm[Any]) -> None:
        shown = 0
        front_max = 0
        while True:
            if self.failure is not None:
                raise SpamflowError(f"crawl {self.s.snapshot} stopped: {type(self.failure).__name__}: "
                                    f"{self.failure}") from self.failure
            busy = self.busy
            if self.pages - shown:
                bar.update(self.pages - shown)
                shown = self.pages
                bar.set_postfix(bytes=self.counts["body_bytes"], errors=sum(
                    v for k, v in self.counts.items() if k.startswith("errors_")), front=self.workbench.front,
                    refresh=False)
            front_max = max(front_max, self.workbench.front)
            if self.pages + busy >= self.s.max_pages:
                if busy == 0:
                    self.counts["stopped_at_max_pages"] = 1
                    break
                state = None
            else:
                state = self.workbench.take(time.monotonic())
            if state is not None:
                self.busy += 1
                todo.put_nowait(state)
                continue
            nxt = self.workbench.next_time()
            if nxt is None and busy == 0 and self.dns_pending == 0:
                break
            self.wakeup.clear()
            wait = None if nxt is None else max(0.0, nxt - time.monotonic())
            try:
                await asyncio.wait_for(self.wakeup.wait(), wait)
            except TimeoutError:
                pass
        self.counts["front_max"] = front_max


def _change(before: Counter[str], after: Counter[str]) -> dict[str, int]:
    """The counts that grew from ``before`` to ``after``, by how much, for the tally; errors and
    ``urls_accepted`` are left out (the error log and discovered.log count them)."""
    return {k: v - before[k] for k, v in after.items()
            if v != before[k] and not k.startswith("errors_") and k != "urls_accepted"}


def crawl(settings: CrawlSettings, directory: Path, base_dir: Path = Path("."),
          progress: bool | None = False) -> CrawlSummary:
    """Crawl one snapshot into ``directory`` (resuming what is there); WARCs go to ``directory/warc/``."""
    summary = asyncio.run(Crawler(settings, directory, base_dir, progress).run())
    (directory / "summary.json").write_text(json.dumps(
        {"snapshot": summary.snapshot, "warc_files": [str(p) for p in summary.warc_files],
         "errors": str(summary.errors), "counts": summary.counts,
         **({"steer": str(summary.steer)} if summary.steer else {})}, indent=1) + "\n")
    return summary


@dataclass
class _Page:
    """What the crawler needs of a fetched HTML page, worked out off the event loop."""

    capped: bool  # the inflated body was longer than max_body_bytes and was cut there
    signature: int
    base: str | None = None
    links: list[str] = field(default_factory=list)
    error: str | None = None


def _read_page(got: _Fetched, limit: int, near_duplicates: bool, embeds: bool) -> _Page:
    """Inflate (to at most ``limit`` bytes), sign and parse one page: run in a thread."""
    encoding = next((v for k, v in got.exchange.response_headers if k.lower() == "content-encoding"), "")
    body, capped = decode_capped(got.exchange.body, encoding, limit)
    page = _Page(capped, content_signature(body) if near_duplicates else 0)
    try:
        page.base, page.links = extract_links(body, embeds)
    except Exception as exc:  # noqa: BLE001 - selectolax on hostile bytes: reported, the page kept
        page.error = f"{type(exc).__name__}: {exc}"
    return page
