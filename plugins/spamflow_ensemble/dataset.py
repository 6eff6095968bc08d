"""From a feature table and labels to what the estimator takes: labels per row (matched by
host name, or by Web Spam Challenge host id through a hostnames file) and a group per row
(registered domain, IP component) so that no split separates one domain or one address."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from spamflow.domains import registered_domain
from spamflow_ensemble.groups import host_groups
from spamflow_ensemble.labels import NONSPAM, SPAM, Labels
from spamflow_ensemble.tables import FeatureTable

GROUP_BY = ("domain+ip", "domain", "ip", "none")


def name_hosts(table: FeatureTable, hostnames: Mapping[str, str] | None) -> FeatureTable:
    """Replace host ids by host names where ``hostnames`` knows them (an ARFF's ``hostid``)."""
    if hostnames:
        table.host = [hostnames.get(h, h) for h in table.host]
    return table


def row_labels(table: FeatureTable, labels: Labels | None,
               hostnames: Mapping[str, str] | None = None) -> list[str | None]:
    """``spam``/``nonspam``/None per row: from the labels file if given, else the table's own
    class column.  Web Spam Challenge ids are translated to names when ``hostnames`` is given."""
    if labels is None:
        if table.labels is None:
            return [None] * len(table.host)
        return [None if v is None else (SPAM if v.lower() in ("spam", "1") else NONSPAM) for v in table.labels]
    by_key = dict(labels.by_key)
    if hostnames and labels.format == "webspam-challenge":
        by_key.update({hostnames[k]: v for k, v in labels.by_key.items() if k in hostnames})
    return [by_key.get(h) for h in table.host]


def to_binary(labels: Sequence[str | None]) -> tuple[np.ndarray, np.ndarray]:
    """(mask of labelled rows, 0/1 spam over those rows)."""
    mask = np.array([v is not None for v in labels])
    y = np.array([v == SPAM for v in labels if v is not None], dtype=np.int64)
    return mask, y


def row_groups(hosts: Sequence[str], group_by: str,
               ips: Mapping[str, Sequence[str]] | None = None) -> np.ndarray | None:
    """A group id per row for ``group_by`` in :data:`GROUP_BY` (None for ``none``)."""
    if group_by not in GROUP_BY:
        raise ValueError(f"group_by must be one of {GROUP_BY}, not {group_by!r}")
    if group_by == "none":
        return None
    domains = [registered_domain(h) if "domain" in group_by else f"host:{h}" for h in hosts]
    addresses = [list((ips or {}).get(h, ())) if "ip" in group_by else [] for h in hosts]
    return np.asarray(host_groups(list(hosts), domains, addresses), dtype=np.int64)
