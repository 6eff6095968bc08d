"""Spam campaigns: connected components of the spun and duplicate pairs (DSpin section VI),
each with the sites it promotes."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any


def components(edges: Iterable[tuple[int, int]]) -> list[list[int]]:
    """Connected components (of two or more nodes) of an undirected graph, each sorted,
    largest first, ties by smallest node.

    >>> components([(1, 2), (3, 4), (2, 5)])
    [[1, 2, 5], [3, 4]]
    """
    parent: dict[int, int] = {}

    def root(x: int) -> int:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in edges:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for node in parent:
        groups.setdefault(root(node), []).append(node)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g[0]))


def promoted_sites(pages: Iterable[Mapping[str, Any]], min_fraction: float,
                   min_domains: int = 1) -> list[dict[str, Any]]:
    """Link target hosts that at least ``min_fraction`` of a campaign's pages link to from another
    registered domain (a page counts once per target), and that copies on at least ``min_domains``
    registered domains link to (a link from one domain's copies only is that site's own link, not
    the campaign's), most linked first.

    Each page needs ``domain`` and ``link_targets``: [(target host, target domain)].

    >>> pages = [{"domain": "a.com", "link_targets": [("shop.com", "shop.com"), ("x.org", "x.org")]},
    ...          {"domain": "a.com", "link_targets": [("x.org", "x.org")]},
    ...          {"domain": "b.com", "link_targets": [("shop.com", "shop.com"), ("a.com", "a.com")]}]
    >>> promoted_sites(pages, 0.5)
    [{'host': 'shop.com', 'pages': 2}, {'host': 'x.org', 'pages': 2}]
    >>> promoted_sites(pages, 0.5, min_domains=2)  # x.org: linked from a.com's copies only
    [{'host': 'shop.com', 'pages': 2}]
    """
    pages = list(pages)
    linked: Counter[str] = Counter()
    linking_domains: dict[str, set[str]] = {}
    for page in pages:
        targets = {host for host, domain in page["link_targets"] if domain != page["domain"]}
        linked.update(targets)
        for host in targets:
            linking_domains.setdefault(host, set()).add(page["domain"])
    need = min_fraction * len(pages)
    return [{"host": host, "pages": n} for host, n in sorted(linked.items(), key=lambda kv: (-kv[1], kv[0]))
            if n >= need and len(linking_domains[host]) >= min_domains]
