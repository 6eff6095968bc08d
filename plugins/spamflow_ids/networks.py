"""From identifiers on pages to per-identifier records, networks and per-host features.

Pure functions shared by both engines (the MapReduce job imports this module: it imports
nothing of spamflow). The memory engine and the job's reducers both build one
:func:`id_record` per (snapshot, identifier) from the same occurrences; :func:`assemble`
turns the records into the outputs, so the engines agree exactly. Everything is ordered
explicitly (hosts, identifiers, networks), never by set or dict order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

Occurrence = tuple[str, str, int, str]
"""(host, registered domain, doc_id, url) of one page carrying an identifier."""

HOST_COLUMNS = ("pages", "ids", "ids_per_page", "shared_ids", "domains_sharing", "network_hosts",
                "network_domains", "affiliate_network_domains", "platform_ids")

AFFILIATE_KINDS = ("aff", "path", "short")
"""The identifier kinds a link carries (affiliate tracking ids, affiliate-program paths,
shortlinks): the only ones that make a host fire. On the ~1,170 honest pages of the
trafilatura and article-extraction sets every network is joined by analytics, tag-manager or
AdSense ids (media groups) and no link-borne id is on two registered domains, while the
affiliate networks of issue 35 are tied by them (docs/ids.md, "When a host fires")."""


def id_kind(ident: str) -> str:
    """``aff`` of ``aff:bta=40211``."""
    return ident.partition(":")[0]


def page_occurrences(snapshot: str, host: str, domain: str, doc_id: int, url: str,
                     ids: Iterable[str]) -> list[tuple[tuple[str, str], Occurrence]]:
    """Key ``(snapshot, identifier)`` and value of each identifier of one page."""
    return [((snapshot, i), (host, domain, int(doc_id), url)) for i in ids]


def id_record(snapshot: str, ident: str, occurrences: Iterable[Occurrence], *, max_domains: int,
              max_examples: int) -> dict[str, Any]:
    """One identifier of one snapshot: its hosts (each with its registered domain, how many of
    its pages carry it and the first ``max_examples`` pages by doc_id), how many registered
    domains carry it, and whether that is more than ``max_domains`` (a platform's identifier:
    its pages are not kept)."""
    hosts: dict[str, list[Any]] = {}
    for host, domain, doc_id, url in occurrences:
        entry = hosts.setdefault(host, [domain, 0, []])
        entry[1] += 1
        entry[2].append((int(doc_id), url))
    domains = len({e[0] for e in hosts.values()})
    platform = domains > max_domains
    out = {}
    for host in sorted(hosts):
        domain, n, pages = hosts[host]
        examples = [] if platform else [list(p) for p in sorted(set(pages))[:max_examples]]
        out[host] = {"domain": domain, "pages": n, "examples": examples}
    return {"snapshot": snapshot, "id": ident, "domains": domains, "platform": platform, "hosts": out}


class _UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:  # path compression
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            lo, hi = sorted((ra, rb))  # the smaller name is the root: no dependence on call order
            self.parent[hi] = lo


def assemble(records: Iterable[dict[str, Any]], host_pages: dict[tuple[str, str], tuple[str, int]]
             ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Per-host feature rows (every (snapshot, host) of ``host_pages``, which maps it to its
    registered domain and page count), the networks and the platform identifiers.

    An identifier joins its hosts when it is on at least two registered domains and is not a
    platform's; a network is a connected component of hosts so joined (so it always spans
    two or more registered domains). A host's ``affiliate_network_domains`` counts the
    registered domains of its component when only identifiers of :data:`AFFILIATE_KINDS` join
    (0: in none): the firing rule, ``network_domains`` (any kind) stays a feature."""
    records = sorted(records, key=lambda r: (r["snapshot"], r["id"]))
    platform = [{"snapshot": r["snapshot"], "id": r["id"], "domains": r["domains"], "hosts": len(r["hosts"])}
                for r in records if r["platform"]]
    joining = [r for r in records if not r["platform"] and r["domains"] >= 2]
    ids_of: dict[tuple[str, str], int] = defaultdict(int)
    id_pages: dict[tuple[str, str], int] = defaultdict(int)
    shared: dict[tuple[str, str], int] = defaultdict(int)
    n_platform: dict[tuple[str, str], int] = defaultdict(int)
    sharing_domains: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in records:
        for host, entry in r["hosts"].items():
            key = (r["snapshot"], host)
            if r["platform"]:
                n_platform[key] += 1
                continue
            ids_of[key] += 1
            id_pages[key] += entry["pages"]
    by_snapshot: dict[str, _UnionFind] = defaultdict(_UnionFind)
    for r in joining:
        hosts = list(r["hosts"])
        uf = by_snapshot[r["snapshot"]]
        for host in hosts:
            key = (r["snapshot"], host)
            shared[key] += 1
            own = r["hosts"][host]["domain"]
            sharing_domains[key].update(e["domain"] for e in r["hosts"].values() if e["domain"] != own)
            uf.union(hosts[0], host)
    affiliate: dict[str, _UnionFind] = defaultdict(_UnionFind)  # the same, joined by link-borne ids only
    for r in joining:
        if id_kind(r["id"]) in AFFILIATE_KINDS:
            hosts = list(r["hosts"])
            for host in hosts:
                affiliate[r["snapshot"]].union(hosts[0], host)
    affiliate_domains: dict[tuple[str, str], int] = {}
    for snapshot in sorted(affiliate):
        auf = affiliate[snapshot]
        components: dict[str, set[str]] = defaultdict(set)
        for host in sorted(auf.parent):
            components[auf.find(host)].add(host_pages.get((snapshot, host), ("", 0))[0] or host)
        for host in auf.parent:
            affiliate_domains[(snapshot, host)] = len(components[auf.find(host)])
    networks: list[dict[str, Any]] = []
    member: dict[tuple[str, str], dict[str, Any]] = {}
    for snapshot in sorted(by_snapshot):
        uf = by_snapshot[snapshot]
        groups: dict[str, list[str]] = defaultdict(list)
        for host in sorted(uf.parent):
            groups[uf.find(host)].append(host)
        found: list[dict[str, Any]] = []
        for hosts in groups.values():
            domains = sorted({host_pages.get((snapshot, h), ("", 0))[0] or h for h in hosts})
            found.append({"snapshot": snapshot, "hosts": sorted(hosts), "domains": domains})
        found.sort(key=lambda n: (-len(n["domains"]), -len(n["hosts"]), n["hosts"][0]))
        joined: dict[str, dict[str, Any]] = defaultdict(dict)  # component root -> the identifiers joining it
        for r in joining:
            if r["snapshot"] == snapshot:
                joined[uf.find(next(iter(r["hosts"])))][r["id"]] = r["hosts"]
        for k, net in enumerate(found, 1):
            net["network"] = f"{snapshot}/{k}"
            ids = joined[uf.find(net["hosts"][0])]
            evidence = {i: ids[i] for i in sorted(ids)}
            net["ids"] = list(evidence)
            net["evidence"] = evidence
            net["pages"] = sum(host_pages.get((snapshot, h), ("", 0))[1] for h in net["hosts"])
            networks.append({k2: net[k2] for k2 in ("network", "snapshot", "domains", "hosts", "ids", "pages",
                                                    "evidence")})
            for h in net["hosts"]:
                member[(snapshot, h)] = net
    rows = []
    for key in sorted(host_pages):
        domain, pages = host_pages[key]
        mine = member.get(key)
        rows.append({"snapshot": key[0], "host": key[1], "pages": pages, "ids": ids_of[key],
                     "ids_per_page": id_pages[key] / pages if pages else 0.0, "shared_ids": shared[key],
                     "domains_sharing": len(sharing_domains[key]),
                     "network_hosts": len(mine["hosts"]) if mine else 0,
                     "network_domains": len(mine["domains"]) if mine else 0,
                     "affiliate_network_domains": affiliate_domains.get(key, 0),
                     "platform_ids": n_platform[key], "network": mine["network"] if mine else None})
    return rows, networks, platform


def group_occurrences(pairs: Iterable[tuple[tuple[str, str], Occurrence]], *, max_domains: int,
                      max_examples: int) -> list[dict[str, Any]]:
    """:func:`id_record` of every (snapshot, identifier) among ``pairs`` (the memory engine's
    shuffle)."""
    groups: dict[tuple[str, str], list[Occurrence]] = defaultdict(list)
    for key, occ in pairs:
        groups[key].append(occ)
    return [id_record(s, i, groups[(s, i)], max_domains=max_domains, max_examples=max_examples)
            for s, i in sorted(groups)]
