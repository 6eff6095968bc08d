"""The graph of registered domains of a host graph kept in a file (the ``hostgraph`` stage's
``adjacency.txt``), as ONE mrjob job of eight steps, for ``nodes: domain`` on graphs no
process holds: a domain links to another when one of its hosts links to one of the other's;
links inside a domain are dropped and counted (as ``hostgraph_input.by_domain`` does in
memory).  Domains are numbered in the order of their names, as ``by_domain`` numbers them.

Input lines ``id<TAB>domain<TAB>out ids<TAB>in ids`` (a host).  Steps 1-2 are this module's:

1. map: a host tells its domain to the hosts that link to it; reduce at a host: the domains
   it links to, those outside its own sent to its domain (``o``), the others counted;
2. reduce at a domain: each distinct target domain as an out-link of it and an in-link of
   the target;

steps 3-8 are the host-graph build's (:mod:`spamflow.mr_hostgraph`: distinct neighbours,
numbering blocks, ids told to neighbours), with blocks of the names' first three
characters, so block order and name order agree.  Output: the build's lines
``id<TAB>domain<TAB>domain<TAB>out ids<TAB>in ids`` and a ``!count`` line."""

from typing import Any

from spamflow.mr_hostgraph import COUNT, MRHostGraphBuild

PREFIX = 3
"""Characters of a domain name that name its numbering block."""


def tell_domain(line: str):
    """Step 1's map: the host's own domain, and its domain to each host linking to it."""
    node, domain, _, into = line.rstrip("\n").split("\t")
    yield f"i{node}", ["d", domain]
    for source in into.split(",") if into else ():
        yield f"i{source}", ["t", domain]


def host_domains(values):
    """Step 1's reduce at a host: its domain's out-links, the links inside it counted."""
    own, targets = None, []
    for tag, domain in values:
        if tag == "d":
            own = domain
        else:
            targets.append(domain)
    outside = sorted({t for t in targets if t != own})
    yield COUNT, {"edges_inside_domains": sum(1 for t in targets if t == own)}
    yield f"h{own}", ["n", own]
    if outside:
        yield f"h{own}", ["l", outside]


def domain_links(key: str, values):
    """Step 2's reduce at a domain: each distinct target as an out-link and an in-link."""
    targets: set[str] = set()
    for value in values:
        if value[0] == "n":
            continue
        targets.update(value[1])
    yield key, ["n", key[1:]]
    for target in sorted(targets):
        yield key, ["o", target]
        yield f"h{target}", ["i", key[1:]]


class MRDomainGraph(MRHostGraphBuild):
    def configure_args(self):
        super(MRHostGraphBuild, self).configure_args()

    def block_of(self, place: Any) -> str:
        """``place``: the domain's name; blocks of names with the same first characters."""
        return str(place)[:PREFIX]

    def parse(self, _, line):
        yield from tell_domain(line)

    def _step(self, step: int, key: str, values):
        if step == 1:
            return host_domains(values)
        if step == 2:
            return domain_links(key, values) if key.startswith("h") else ((key, v) for v in values)
        return super()._step(step, key, values)


if __name__ == "__main__":
    MRDomainGraph.run()
