"""Hosts that must stay on one side of a split: connected by a registered domain or an IP.

The Discovery Challenge 2010 rule: no registered domain and no IP address is split between
training and test.  Hosts are nodes; two hosts sharing a domain or an address are joined;
each connected component is one group (union-find, linear in hosts + addresses).

>>> host_groups(["a.x.com", "b.x.com", "c.org", "d.net"], ["x.com", "x.com", "c.org", "d.net"],
...             [["1.1.1.1"], [], ["2.2.2.2"], ["1.1.1.1"]])
[0, 0, 1, 0]
"""

from __future__ import annotations

from collections.abc import Sequence


def host_groups(hosts: Sequence[str], domains: Sequence[str], ips: Sequence[Sequence[str]]) -> list[int]:
    """A group id per host (0, 1, ... in order of first appearance)."""
    parent = list(range(len(hosts)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[tuple[str, str], int] = {}
    for i, (domain, addresses) in enumerate(zip(domains, ips)):
        for key in [("domain", domain), *(("ip", a) for a in addresses if a)]:
            if key[1] == "":
                continue
            j = first.setdefault(key, i)
            ri, rj = find(i), find(j)
            if ri != rj:
                parent[max(ri, rj)] = min(ri, rj)
    ids: dict[int, int] = {}
    return [ids.setdefault(find(i), len(ids)) for i in range(len(hosts))]
