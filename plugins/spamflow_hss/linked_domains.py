"""Which registered domains of an HSS template cluster are one operator's network: those tied
together by links that stay inside the cluster.

One HTML template on three or more registered domains is as much an honest shared theme (a CMS
theme, a blog platform, a newspaper chain's CMS) as a link farm.  What a template network built
to spam does and a theme's users do not is link to each other rather than to the rest of the
web.  Per cluster, a domain is **insular** when more than half of the other registered domains
its cluster pages link to are domains of the same cluster; a domain's **linked domains** are its
weakly connected component in the graph whose nodes are the cluster's insular domains and whose
edges are the links of cluster pages between two of them (0 for a domain that is not insular).
docs/hss.md ("When a host fires") says why and what it measures on real and synthetic crawls.

Only the cluster's own pages count (their ``links`` column in the parse stage's page table),
streamed part by part and batch by batch.  Memory per cluster domain is bounded by the
cluster's domain count: the targets inside the cluster are at most its other domains, and the
targets outside are counted only until they reach that many (the domain then cannot be insular).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from spamflow.domains import host_of, registered_domain
from spamflow_hss.probing import components

log = logging.getLogger(__name__)
BATCH_ROWS = 512


@dataclass
class DomainLinks:
    """The distinct registered domains one domain's cluster pages link to: inside the cluster
    (all of them) and outside (counted up to the cluster's domain count less one)."""

    inside: set[str] = field(default_factory=set)
    outside: set[str] = field(default_factory=set)

    def add(self, target: str, cluster_domains: frozenset[str]) -> None:
        if target in cluster_domains:
            self.inside.add(target)
        elif len(self.outside) < len(cluster_domains) - 1:  # enough to tell: inside has at most that many
            self.outside.add(target)

    @property
    def insular(self) -> bool:
        """More than half of the distinct domains it links to (its own aside) are the cluster's."""
        return len(self.inside) > len(self.outside)


def link_domains(links: Iterable[dict[str, Any]] | None, own: str) -> set[str]:
    """The registered domains a page's links point to, its own domain and unparsable URLs left out."""
    out = {registered_domain(host_of(link["url"] or "")) for link in links or ()}
    out.discard(own)
    out.discard("")
    return out


def cluster_links(parts: Iterable[Any], assignment: pa.Table) -> dict[int, dict[str, DomainLinks]]:
    """cluster id -> domain -> the domains its pages in that cluster link to, read from the
    page-table ``parts`` (columns ``doc_id``, ``domain``, ``links``; a part without ``links``
    gives no links) for the pages ``assignment`` (HSS's page table) puts in a cluster."""
    clustered = assignment.filter(assignment.column("cluster_id").is_valid())
    if not clustered.num_rows:
        return {}
    doc_ids = clustered.column("doc_id").to_numpy()
    order = np.argsort(doc_ids, kind="stable")
    doc_ids, cluster_ids = doc_ids[order], clustered.column("cluster_id").to_numpy()[order]
    members: dict[int, set[str]] = defaultdict(set)
    for cid, domain in zip(clustered.column("cluster_id").to_pylist(), clustered.column("domain").to_pylist()):
        members[cid].add(domain)
    domains = {cid: frozenset(d) for cid, d in members.items()}
    found: dict[int, dict[str, DomainLinks]] = defaultdict(lambda: defaultdict(DomainLinks))
    for part in parts:
        file = pq.ParquetFile(part)
        if "links" not in file.schema_arrow.names:
            log.warning("hss: %s has no links column: its pages count as linking nowhere", part)
            continue
        for batch in file.iter_batches(batch_size=BATCH_ROWS, columns=["doc_id", "domain", "links"]):
            ids = batch.column("doc_id").to_numpy()
            at = np.minimum(np.searchsorted(doc_ids, ids), len(doc_ids) - 1)
            rows = np.flatnonzero(doc_ids[at] == ids)
            if not len(rows):
                continue
            picked = batch.take(pa.array(rows))
            for i, own, links in zip(rows, picked.column("domain").to_pylist(), picked.column("links").to_pylist()):
                cid = int(cluster_ids[at[i]])
                entry = found[cid][own]
                for target in link_domains(links, own):
                    entry.add(target, domains[cid])
    return {cid: dict(by_domain) for cid, by_domain in found.items()}


def linked_domains(found: dict[int, dict[str, DomainLinks]]) -> dict[tuple[int, str], int]:
    """(cluster id, domain) -> the size of the domain's component among the cluster's insular
    domains joined by their links to each other (either direction); insular domains only."""
    sizes: dict[tuple[int, str], int] = {}
    for cid, by_domain in found.items():
        insular = sorted(d for d, links in by_domain.items() if links.insular)
        if not insular:
            continue
        index = {d: i for i, d in enumerate(insular)}
        edges = np.array([(index[d], index[t]) for d in insular for t in sorted(by_domain[d].inside) if t in index],
                         np.int64).reshape(-1, 2)
        labels = components(len(insular), edges)
        counts = np.bincount(labels, minlength=len(insular))
        sizes.update({(cid, d): int(counts[labels[i]]) for d, i in index.items()})
    return sizes
