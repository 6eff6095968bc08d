"""Which pages of a host are featurised: its home page, its most linked-to page (standing in
for the maximum-PageRank page), and at most ``max_pages`` in all.

The paper samples "a few hundred" pages per host (400 for WEBSPAM-UK2007); the sample is
the home page, the most linked-to page, then the host's other pages in ``doc_id`` order.  A
``doc_id`` is a hash of the WARC record id, so that order is a deterministic pseudo-random
sample, the same whatever the order of the WARC files.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import numpy as np
import pyarrow as pa

from spamflow.parse.html_text import absolute_url
from spamflow_content.key_index import KeyIndex

_INDEX_PAGES = {"/index.html", "/index.htm", "/index.php", "/index.asp", "/index.aspx", "/default.asp",
                "/default.aspx", "/index.shtml", "/index.jsp", "/home.html", "/home.htm"}


def home_rank(url: str) -> int:
    """0 for the site root (path ``/`` or empty, no query), 1 for a root index page
    (``/index.html``, ``/default.asp``, ...), 2 otherwise.

    >>> [home_rank(u) for u in ("http://a.example/", "http://a.example/index.php", "http://a.example/x/")]
    [0, 1, 2]
    """
    parts = urlsplit(url)
    if parts.query:
        return 2
    if parts.path in ("", "/"):
        return 0
    return 1 if parts.path.lower() in _INDEX_PAGES else 2


def normal_url(url: str) -> str:
    """A page's WARC-Target-URI normalised as parse normalises link URLs, so links match it."""
    return absolute_url(url, url) or url


def in_degrees(page_keys: KeyIndex, link_batches: list[tuple[pa.Array, pa.Array]]) -> np.ndarray:
    """Links pointing at each page, from other pages of the same snapshot.

    ``page_keys`` index ``snapshot \\t normalised url`` per page; each link batch is
    (``snapshot \\t target url`` of each link, index of the linking page).  A page's links to
    itself do not count; repeated links from one page count once each.
    """
    degree = np.zeros(len(page_keys), dtype=np.int64)
    for targets, source in link_batches:
        hit = page_keys.positions(targets)
        keep = (hit >= 0) & (hit != source)
        degree += np.bincount(hit[keep], minlength=len(page_keys))
    return degree


def choose_sample(groups: np.ndarray, home: np.ndarray, degree: np.ndarray, doc_ids: np.ndarray,
                  max_pages: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pick pages per group (one group per snapshot and host).

    Returns three arrays over the pages: sampled (bool), is_home (the group's home page: best
    ``home`` rank, then shortest id order), is_max_linked (the group's page with most
    in-links; ties go to the home page, then the smaller ``doc_id``).  The home and
    max-linked pages are always sampled; the others fill up to ``max_pages`` in ``doc_id``
    order.
    """
    n = len(groups)
    sampled = np.zeros(n, dtype=bool)
    is_home = np.zeros(n, dtype=bool)
    is_max = np.zeros(n, dtype=bool)
    if n == 0:
        return sampled, is_home, is_max
    order = np.lexsort((doc_ids, home, groups))
    first = _group_firsts(groups[order])
    is_home[order[first]] = True
    by_degree = np.lexsort((doc_ids, ~is_home, -degree, groups))
    is_max[by_degree[_group_firsts(groups[by_degree])]] = True
    priority = np.where(is_home | is_max, 0, 1)
    rank_order = np.lexsort((doc_ids, priority, groups))
    ordered_groups = groups[rank_order]
    starts = _group_firsts(ordered_groups)
    position = np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))
    sampled[rank_order[(position < max_pages) | (priority[rank_order] == 0)]] = True
    return sampled, is_home, is_max


def _group_firsts(sorted_groups: np.ndarray) -> np.ndarray:
    new = np.ones(len(sorted_groups), dtype=bool)
    new[1:] = sorted_groups[1:] != sorted_groups[:-1]
    return np.flatnonzero(new)
