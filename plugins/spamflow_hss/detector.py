"""The ``hss`` stage: fingerprint every page (streaming), cluster each snapshot's
fingerprints with Procedure 2, and write the cluster table, the page assignment and
per-host features."""

from __future__ import annotations

import itertools
import json
import logging
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from spamflow.detector import Detector, StageContext, StageResult
from spamflow.mr import use_mapreduce
from spamflow.mundane import HTTP_ERROR, SOFT_404, Rules, page_reason
from spamflow.per_host import HostFeature, PerHostTable, host_schema
from spamflow.progress import progress_bar
from spamflow.words import words as split_words
from spamflow_hss.auto_threshold import auto_threshold
from spamflow_hss.cluster_mapreduce import cluster_snapshots_mapreduce
from spamflow_hss.cluster_table import centroid, rank_key
from spamflow_hss.fingerprint import EMPTY
from spamflow_hss.fingerprint_table import (
    fingerprint_pages,
    fingerprint_pages_mapreduce,
    fingerprints_dataset,
    page_parts,
    read_fingerprints,
)
from spamflow_hss.linked_domains import cluster_links, linked_domains
from spamflow_hss.params import HSSParams
from spamflow_hss.probing import ProbeStats, cluster_fingerprints, p_miss

log = logging.getLogger(__name__)
P_MISS_WARNING = 0.01

ASSIGNMENT_SCHEMA = pa.schema([
    pa.field("doc_id", pa.int64(), nullable=False),
    pa.field("snapshot", pa.string(), nullable=False),
    pa.field("url", pa.string(), nullable=False),
    pa.field("host", pa.string(), nullable=False),
    pa.field("domain", pa.string(), nullable=False),
    pa.field("cluster_id", pa.int64()),
    pa.field("cluster_size", pa.int64(), nullable=False),
    pa.field("cluster_domains", pa.int64(), nullable=False),
    pa.field("similarity_to_centroid", pa.float64()),
])

HOST_SCHEMA = host_schema(
    pa.field("pages", pa.int64(), nullable=False),
    pa.field("largest_cluster_size", pa.int64(), nullable=False),
    pa.field("largest_cluster_domains", pa.int64(), nullable=False),
    pa.field("multi_domain_fraction", pa.float64(), nullable=False),
    pa.field("linked_cluster_domains", pa.int64(), nullable=False),
)


class HSSDetector(Detector):
    name = "hss"
    version = "2"  # 2: linked_cluster_domains, the firing feature (was largest_cluster_domains)
    description = ("Urvoy et al.'s Hidden Style Similarity: min-sampling fingerprints of the HTML noise and "
                   "probe/check clustering of pages made from one template, across domains.")
    Params = HSSParams
    host_tables = (PerHostTable("hosts", (
        HostFeature("pages", "pages of the host"),
        HostFeature("largest_cluster_size", "pages in the largest cluster holding one of the host's pages"),
        HostFeature("largest_cluster_domains", "domains of the host's largest cluster"),
        HostFeature("multi_domain_fraction", "fraction of the host's pages in clusters over 2+ domains"),
        HostFeature("linked_cluster_domains", "domains of the host's largest cluster that link mostly inside it, "
                    "tied to the host's domain by those links (fired: 3+; linked_domains.py)", evidence=True,
                    above=2))),)
    requires = ("parse",)
    uses_mapreduce = True  # engine: mapreduce (or auto above mapreduce_above pages, or on a cluster runner)

    def run(self, ctx: StageContext) -> StageResult:
        params = ctx.params
        assert isinstance(params, HSSParams)
        parts = page_parts(ctx.inputs["parse"]["pages"])
        total = sum(pq.ParquetFile(part).metadata.num_rows for part in parts)
        mapreduce = params.mapreduce or use_mapreduce(params.engine, ctx.settings, size=total,
                                                      above=params.mapreduce_above)
        if mapreduce:
            counts: Counter[str] = Counter(fingerprint_pages_mapreduce(
                parts, ctx.outdir / "fingerprints", ctx.outdir / "work", params.n, params.m, params.seed,
                ctx.settings.runner, ctx.settings.runner_args, window=params.noise_window, noise_mode=params.noise))
        else:
            with progress_bar(total=total, desc="hss fingerprints", unit="page",
                              setting=ctx.settings.progress) as bar:
                counts = Counter(fingerprint_pages(parts, ctx.outdir / "fingerprints", params.n, params.m,
                                                   params.seed, ctx.settings.workers, done=bar.update,
                                                   window=params.noise_window, noise_mode=params.noise))
        table = fingerprints_dataset(ctx.outdir / "fingerprints", params.m).to_table()
        matrix = read_fingerprints(table, params.m)  # once, as NumPy: the Arrow column goes
        table = table.drop_columns(["fingerprint"])
        matrix, keep = blank_error_pages(table, matrix, parts, params, counts)
        threshold = None
        if params.t == "auto":  # once, here on the driver: both engines check with this t
            threshold = auto_threshold(((matrix[rows[keep[rows]]],
                                         table.column("domain").take(pa.array(rows[keep[rows]])).to_pylist())
                                        for _, rows in snapshot_rows(table)), params.m, params.null_pairs,
                                       params.false_edge_rate, params.t_min, params.t_max, params.seed)
            log.info("hss: t: auto chose t = %d (%s; %.4g expected false edges per page, rate %g, %d null pairs)",
                     threshold.t, threshold.reason, threshold.expected_false_edges, params.false_edge_rate,
                     threshold.pairs)
        check = params if threshold is None else params.model_copy(update={"t": threshold.t})
        assert isinstance(check.t, int)
        miss = p_miss(check.m, check.k, check.p, check.t)
        if miss > P_MISS_WARNING:
            log.warning("hss: P_miss = %.4f for m=%d k=%d p=%d t=%d is above %.0f%%; raise p (the paper: "
                        "p * t >= 512 for m = 128, k = 1)", miss, check.m, check.k, check.p, check.t,
                        100 * P_MISS_WARNING)
        labelled = None
        if mapreduce:
            log.info("hss: %d pages: fingerprints and probe/check by MapReduce jobs on the %r runner",
                     total, ctx.settings.runner)
            snapshots = ((name, matrix[rows]) for name, rows in snapshot_rows(table))
            labelled = cluster_snapshots_mapreduce(snapshots, check, ctx.outdir / "work", ctx.settings.runner,
                                                   ctx.settings.runner_args)
        clusters, assignment, summary = cluster_snapshots(table, check, counts, progress=ctx.settings.progress,
                                                          labelled=labelled, fingerprints=matrix)
        summary.update(p_miss=miss, p_miss_warning=miss > P_MISS_WARNING, params=params.model_dump(), t=check.t)
        details: dict[str, Any] = {"t": check.t}
        if threshold is not None:
            summary["threshold"] = details["threshold"] = threshold.record()
        with open(ctx.outdir / "clusters.jsonl", "w", encoding="utf-8") as fh:
            for cluster in clusters:
                fh.write(json.dumps(cluster) + "\n")
        pq.write_table(assignment, ctx.outdir / "page_clusters.parquet")
        pq.write_table(host_features(assignment, linked_domains(cluster_links(parts, assignment))),
                       ctx.outdir / "hosts.parquet")
        (ctx.outdir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        counts["clusters"] = len(clusters)
        counts["clustered_pages"] = sum(c["size"] for c in clusters)
        counts["multi_domain_clusters"] = sum(c["domains"] > 1 for c in clusters)
        counts["p_miss_above_1pct"] = int(miss > P_MISS_WARNING)
        return StageResult(outputs={"fingerprints": "fingerprints", "clusters": "clusters.jsonl",
                                    "page_clusters": "page_clusters.parquet", "hosts": "hosts.parquet",
                                    "summary": "summary.json"}, counts=dict(counts), details=details)


def blank_error_pages(table: pa.Table, matrix: np.ndarray, parts: list[Any], params: HSSParams,
                      counts: Counter[str]) -> tuple[np.ndarray, np.ndarray]:
    """Error pages (HTTP >= 400, soft 404s) join no cluster in either engine: their rows of the
    fingerprint matrix are made all-empty (no probe key, no matched dimension), as a page
    shorter than n is; the stored fingerprints stay the pages' own.  Returns the matrix and
    the rows kept (for the null of ``t: auto``), counting ``error_pages_<reason>``."""
    excluded = error_pages(parts, params) if params.exclude_error_pages else {}
    for reason in (HTTP_ERROR, SOFT_404):
        counts[f"error_pages_{reason}"] = sum(r == reason for r in excluded.values())
    keep = np.ones(len(matrix), bool)
    if excluded:
        keep = ~np.isin(table.column("doc_id").to_numpy(), np.fromiter(excluded, np.int64, len(excluded)))
        if not matrix.flags.writeable:  # a zero-copy view of the Arrow column
            matrix = matrix.copy()
        matrix[~keep] = EMPTY
    return matrix, keep


def error_pages(parts: list[Any], params: HSSParams) -> dict[int, str]:
    """doc_id -> why (``http_error``, ``soft_404``) for the error pages of the page table
    (spamflow/mundane.py's rules, as spin's; no boilerplate rule: a template-only page is what
    HSS is for).

    A soft 404's title or article words hold a soft-404 phrase, and its article words are some
    of its words, so a page whose words and title do not hold every word of some phrase is
    none; only the others are read into Python and given the rule (reading every page's words
    into Python was a third of the stage's CPU at 10^5 pages)."""
    rules = Rules.of(True, params.soft_404_max_words, params.soft_404_phrases, min_article_words=0)
    tokens = sorted({token for phrase in rules.soft_404_phrases for token in phrase})
    bit_of = {token: 1 << k for k, token in enumerate(tokens)}
    phrase_bits = [sum(bit_of[token] for token in set(phrase)) for phrase in rules.soft_404_phrases]
    out: dict[int, str] = {}
    for part in parts:
        file = pq.ParquetFile(part)
        columns = [c for c in ("doc_id", "status", "title", "words", "links") if c in file.schema_arrow.names]
        for batch in file.iter_batches(batch_size=2048, columns=columns):
            n = batch.num_rows
            none: list[Any] = [None] * n
            docs = batch.column("doc_id").to_pylist()
            status, title = (batch.column(c).to_pylist() if c in columns else none for c in ("status", "title"))
            held = _phrase_words_held(batch.column("words") if "words" in columns else None, tokens, n)
            rows = []  # the pages that may be soft 404s
            for i in range(n):
                if status[i] is not None and status[i] >= 400:
                    out[int(docs[i])] = HTTP_ERROR
                    continue
                if title[i]:
                    held[i] |= sum(bit_of.get(token, 0) for token in set(split_words(title[i])))
                if any(held[i] & bits == bits for bits in phrase_bits):
                    rows.append(i)
            if not rows:
                continue
            picked = batch.take(pa.array(rows))
            words = picked.column("words").to_pylist() if "words" in columns else [None] * len(rows)
            bounds = [0] * (len(rows) + 1)
            anchors: list[str | None] = []
            if "links" in columns:
                links = picked.column("links")  # a null list: no links
                bounds[1:] = itertools.accumulate(pc.fill_null(pc.list_value_length(links), 0).to_pylist())
                anchors = pc.struct_field(pc.list_flatten(links), "anchor").to_pylist()
            for j, i in enumerate(rows):
                reason = page_reason(rules, status[i], title[i], words[j] or [],
                                     (anchor or "" for anchor in anchors[bounds[j]:bounds[j + 1]]))
                if reason is not None:
                    out[int(docs[i])] = reason
    return out


def _phrase_words_held(words: Any, tokens: list[str], n: int) -> np.ndarray:
    """For each of ``n`` pages (``words``: their list column, or None), a bit for each of
    ``tokens`` its words hold."""
    held = np.zeros(n, np.int64)
    if words is None or not tokens:
        return held
    at = pc.index_in(pc.list_flatten(words), value_set=pa.array(tokens, pa.string()))
    found = pc.is_valid(at).to_numpy(zero_copy_only=False)
    parents = pc.list_parent_indices(words).to_numpy()[found]
    np.bitwise_or.at(held, parents, np.left_shift(1, at.to_numpy(zero_copy_only=False)[found].astype(np.int64)))
    return held


def snapshot_rows(table: pa.Table) -> Iterator[tuple[str, np.ndarray]]:
    """Each snapshot (in sort order) with its rows of the fingerprints table (in table order:
    the order the probing checks a bucket's pages in)."""
    for snapshot in sorted(set(table.column("snapshot").to_pylist())):
        yield snapshot, np.flatnonzero(pc.equal(table.column("snapshot"), snapshot).to_numpy(zero_copy_only=False))


def cluster_snapshots(table: pa.Table, params: HSSParams, counts: Counter[str], progress: bool | None = False,
                      labelled: Mapping[str, tuple[np.ndarray, ProbeStats]] | None = None,
                      fingerprints: np.ndarray | None = None) -> tuple[list[dict[str, Any]], pa.Table, dict[str, Any]]:
    """Procedure 2 on each snapshot's fingerprints: the ranked cluster records, the per-page
    assignment table and a summary of the probing.  ``labelled``: each snapshot's component
    labels and probe statistics when the MapReduce job found them, else computed here;
    ``fingerprints``: the table's (pages, m) matrix, if read already (the table may then go
    without its ``fingerprint`` column)."""
    matrix = read_fingerprints(table, params.m) if fingerprints is None else fingerprints
    clusters: list[dict[str, Any]] = []
    member_rows: list[tuple[int, np.ndarray, np.ndarray]] = []  # (cluster index, table rows, similarities)
    per_snapshot: dict[str, Any] = {}
    rng = np.random.default_rng(params.seed)
    for snapshot, rows in progress_bar(list(snapshot_rows(table)), desc="hss clusters", setting=progress):
        part = table.select(["doc_id", "url", "domain", "ip", "host"]).take(pa.array(rows))
        snapshot_fingerprints = matrix[rows]
        if labelled is None:
            assert isinstance(params.t, int), "t: auto is resolved before clustering"
            stats = ProbeStats()
            labels = cluster_fingerprints(snapshot_fingerprints, params.k, params.p, params.t, params.seed, stats,
                                          params.max_representatives)
        else:
            labels, stats = labelled[snapshot]
        per_snapshot[snapshot] = {"pages": len(rows), **{k: v for k, v in vars(stats).items()
                                                         if k != "per_probe_checks"}}
        for name in ("checks", "edges", "unchecked", "skipped_empty_keys"):
            counts[f"probe_{name}"] += getattr(stats, name)
        doc_ids = part.column("doc_id").to_numpy()
        urls = part.column("url").to_pylist()
        domains = part.column("domain").to_pylist()
        ips = part.column("ip").to_pylist()
        hosts = part.column("host").to_pylist()
        order = np.argsort(labels, kind="stable")
        sorted_labels = labels[order]
        bounds = np.flatnonzero(np.r_[True, sorted_labels[1:] != sorted_labels[:-1], True])
        for start, stop in zip(bounds[:-1], bounds[1:]):
            if stop - start < 2:
                continue
            members = order[start:stop]
            members = members[np.argsort(doc_ids[members], kind="stable")]
            centre = centroid(snapshot_fingerprints[members], rng)
            centre_row = int(members[centre.index])
            by_similarity = np.argsort(-centre.similarities, kind="stable")
            members, similarities = members[by_similarity], centre.similarities[by_similarity]
            cluster_domains = {domains[i] for i in members}
            mean = centre.mean_similarity
            clusters.append({
                "snapshot": snapshot, "size": int(len(members)), "domains": len(cluster_domains),
                "hosts": len({hosts[i] for i in members}), "ips": len({ips[i] for i in members if ips[i]}),
                "mean_similarity": round(mean, 6), "score": round(rank_key(mean, len(cluster_domains)), 6),
                "centroid": {"doc_id": int(doc_ids[centre_row]), "url": urls[centre_row]},
                "members": [int(doc_ids[i]) for i in members],
            })
            member_rows.append((len(clusters) - 1, rows[members], similarities))
        del part, snapshot_fingerprints, labels  # before the next snapshot's are taken
    ranking = sorted(range(len(clusters)), key=lambda i: (-clusters[i]["score"], -clusters[i]["size"],
                                                           clusters[i]["snapshot"], clusters[i]["members"][0]))
    new_id = {old: rank for rank, old in enumerate(ranking)}
    ranked = [{"cluster_id": new_id[i], **clusters[i]} for i in ranking]
    assignment = _assignment(table, clusters, member_rows, new_id)
    return ranked, assignment, {"snapshots": per_snapshot}


def _assignment(table: pa.Table, clusters: list[dict[str, Any]],
                member_rows: list[tuple[int, np.ndarray, np.ndarray]], new_id: dict[int, int]) -> pa.Table:
    n = table.num_rows
    cluster_id = np.full(n, -1, np.int64)
    size = np.ones(n, np.int64)
    domain_count = np.ones(n, np.int64)
    similarity = np.full(n, np.nan)
    for index, rows, sims in member_rows:
        cluster_id[rows] = new_id[index]
        size[rows] = clusters[index]["size"]
        domain_count[rows] = clusters[index]["domains"]
        similarity[rows] = sims
    columns = [table.column(name) for name in ("doc_id", "snapshot", "url", "host", "domain")]
    columns += [pa.array(cluster_id, mask=cluster_id < 0), pa.array(size), pa.array(domain_count),
                pa.array(similarity, mask=np.isnan(similarity))]
    return pa.Table.from_arrays(columns, schema=ASSIGNMENT_SCHEMA).sort_by([("snapshot", "ascending"),
                                                                           ("doc_id", "ascending")])


def host_features(assignment: pa.Table, linked: Mapping[tuple[int, str], int] | None = None) -> pa.Table:
    """Per (snapshot, host): pages, size and domain count of the largest cluster holding one
    of its pages (0 if none; ties: the cluster of its page with the smallest doc_id), the
    fraction of its pages in clusters spanning 2+ domains, and ``linked``
    (:func:`~spamflow_hss.linked_domains.linked_domains`) of that cluster and the host's
    domain (0 if none)."""
    linked = linked or {}
    acc: dict[tuple[str, str], list[Any]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    for snapshot, host, domain, cid, size, doms in zip(*(assignment.column(c).to_pylist() for c in (
            "snapshot", "host", "domain", "cluster_id", "cluster_size", "cluster_domains"))):
        entry = acc[(snapshot, host)]
        entry[0] += 1
        if cid is not None:
            if size > entry[1]:
                entry[1], entry[2], entry[4] = size, doms, linked.get((cid, domain), 0)
            entry[3] += doms > 1
    rows = [{"snapshot": s, "host": h, "pages": e[0], "largest_cluster_size": e[1],
             "largest_cluster_domains": e[2], "multi_domain_fraction": e[3] / e[0], "linked_cluster_domains": e[4]}
            for (s, h), e in sorted(acc.items())]
    return pa.Table.from_pylist(rows, schema=HOST_SCHEMA)
