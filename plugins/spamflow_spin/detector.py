"""The ``spin`` stage, per snapshot: article words → exact duplicates → partition →
candidate pairs (mrjob) → immutable Jaccard → mutable verifier → campaigns and host features."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from pydantic import BaseModel
from xxhash import xxh3_64_intdigest

from spamflow.article import article_words
from spamflow.atomic import atomic_path
from spamflow.detector import Detector, StageContext, StageResult
from spamflow.domains import host_of, registered_domain
from spamflow.mundane import REASONS, Rules
from spamflow.per_host import HostFeature, PerHostTable, host_schema
from spamflow.progress import progress_bar
from spamflow_spin.campaigns import components, promoted_sites
from spamflow_spin.candidates import candidate_pairs_count, stage_candidates
from spamflow_spin.copies import between_group_pairs, group_same_immutables, within_group_pairs
from spamflow_spin.dictionary import SynonymDictionary, load_dictionary
from spamflow_spin.params import SpinParams, resolve_dictionary_path, spin_engine
from spamflow_spin.partition import Partition, partition
from spamflow_spin.similarity import jaccard
from spamflow_spin.streaming import find_spin_streaming
from spamflow_spin.verifier import mutable_overlap, spun_pairs

HOST_SCHEMA = host_schema(
    pa.field("pages", pa.int64(), nullable=False),
    pa.field("campaign_pages", pa.int64(), nullable=False),
    pa.field("campaign_fraction", pa.float64(), nullable=False),
    pa.field("spun_pages", pa.int64(), nullable=False),
    pa.field("duplicate_pages", pa.int64(), nullable=False),
    pa.field("campaigns", pa.int64(), nullable=False),
    pa.field("max_campaign_articles", pa.int64(), nullable=False),
    pa.field("max_campaign_hosts", pa.int64(), nullable=False),
    pa.field("promoted_by_campaigns", pa.int64(), nullable=False),
    pa.field("is_promoted", pa.bool_(), nullable=False),
)


BATCH_ROWS = 256
"""Pages decoded into Python objects at a time: a real page (~1,900 words, a few hundred links)
is ~0.4 MB of them, so 256 rows keep a batch near 0.1 GB (the MapReduce engine holds no more)."""


@dataclass
class Page:
    doc_id: int
    url: str
    host: str
    domain: str
    link_targets: list[tuple[str, str]]
    words: list[str]
    status: int | None = None
    title: str = ""


class PageHost(NamedTuple):
    """A page's doc id and host: all :func:`host_features` reads of a page."""
    doc_id: int
    host: str


def read_pages(pages_path: Path, snapshot: str, counts: Counter[str], *, words: bool = True,
               links_of: set[int] | None = None, only: set[int] | None = None) -> Iterator[Page]:
    """The snapshot's pages with their article words (links cut out) and link target hosts,
    streamed ``BATCH_ROWS`` at a time.  ``links_of``: link targets only for these pages; ``words=False``: without
    words (the campaign table of the MapReduce and direct engines); ``only``: only these pages
    (the others dropped in Arrow, before any Python object is made of them)."""
    columns = ["doc_id", "url", "host", "domain", "snapshot", "words", "links", "status", "title"]
    present = set(ds.dataset(pages_path, format="parquet").schema.names)
    columns = [c for c in columns if c in present or c not in ("status", "title")]  # hand-made tables lack them
    if not words:
        columns.remove("words")
        if links_of is not None and not links_of:
            columns.remove("links")
    wanted = None if only is None else np.array(sorted(only), np.int64)
    for batch in _batches(pages_path, columns):
        if wanted is not None:  # by binary search: pc.is_in built a hash table of ``only`` per batch
            docs = batch.column("doc_id").to_numpy(zero_copy_only=False)
            at = np.searchsorted(wanted, docs).clip(max=max(len(wanted) - 1, 0))
            batch = batch.filter(pa.array(wanted[at] == docs if len(wanted) else np.zeros(len(docs), bool)))
        yield from _pages(batch, snapshot, counts, words, links_of)


def page_hosts(pages_path: Path, snapshot: str) -> Iterator[PageHost]:
    """Every page of the snapshot as (doc id, host), from those two columns (a :class:`Page` of
    every page read for them was ~3 % of the stage on the direct engine)."""
    for batch in _batches(pages_path, ["doc_id", "host", "snapshot"], rows=1 << 16):
        batch = batch.filter(pc.equal(batch.column("snapshot"), snapshot))
        yield from map(PageHost, batch.column("doc_id").to_pylist(), batch.column("host").to_pylist())


def _batches(pages_path: Path, columns: list[str], rows: int = BATCH_ROWS) -> Iterator[pa.RecordBatch]:
    for fragment in ds.dataset(pages_path, format="parquet").get_fragments():
        # file by file, in the dataset's order: its scanner reads ahead (0.44 GB of Arrow
        # buffers for a 93 MB part of 6,000 real pages, against 0.31 GB this way)
        # pre_buffer=False: with it (the default) the reader kept the buffers of every row group
        # read so far: +15 KB a real page, 0.54 GB after 20,000 pages, flat at ~0.25 GB without
        yield from pq.ParquetFile(fragment.path, pre_buffer=False).iter_batches(batch_size=rows, columns=columns)


def _pages(batch: pa.RecordBatch, snapshot: str, counts: Counter[str], words: bool,
           links_of: set[int] | None) -> Iterator[Page]:
    """The batch's pages, its columns made Python lists one at a time (``batch.to_pylist()``
    made a dict per row and per link: ~7 % of the stage's CPU on the direct engine)."""
    rows = batch.num_rows
    column = {name: batch.column(name).to_pylist() for name in batch.schema.names if name != "links"}
    none = [None] * rows
    status, title = column.get("status", none), column.get("title", none)
    texts = column.get("words", none)
    anchors: list[Any] = []  # str or None, as the column holds them
    urls: list[Any] = []
    bounds = [0] * (rows + 1)
    if "links" in batch.schema.names:
        links = batch.column("links")
        flat = pc.list_flatten(links)  # null lists: no links, as ``row["links"] or []``
        bounds[1:] = itertools.accumulate(pc.fill_null(pc.list_value_length(links), 0).to_pylist())
        anchors = pc.struct_field(flat, "anchor").to_pylist() if words else []
        urls = pc.struct_field(flat, "url").to_pylist() if links_of is None or links_of else []
    for i, doc in enumerate(column["doc_id"]):
        if column["snapshot"][i] != snapshot:
            continue
        first, end = bounds[i], bounds[i + 1]
        text: list[str] = []
        if words:
            text, missing = article_words(texts[i] or [], (anchor or "" for anchor in anchors[first:end]))
            counts["anchors_not_in_words"] += missing
        targets = sorted({host_of(url) for url in urls[first:end]} - {""}) \
            if links_of is None or doc in links_of else []
        yield Page(doc, column["url"][i], column["host"][i], column["domain"][i],
                   [(t, registered_domain(t)) for t in targets], text, status[i], title[i] or "")


def words_per_page(pages_path: Path) -> float:
    """The page table's mean words a page, from its Parquet metadata (the ``words`` column's
    values per row group; nothing is read but the footers)."""
    words = pages = 0
    for fragment in ds.dataset(pages_path, format="parquet").get_fragments():
        meta = fragment.metadata
        columns = [meta.schema.column(i).path for i in range(meta.num_columns)]
        if "words.list.element" not in columns:
            continue
        at = columns.index("words.list.element")
        for group in range(meta.num_row_groups):
            words += meta.row_group(group).column(at).num_values
            pages += meta.row_group(group).num_rows
    return words / pages if pages else 0.0


def excluded_pages(pages: Iterable[Page], rules: Rules, excluded: dict[int, str],
                   counts: Counter[str]) -> Iterator[Page]:
    """``pages`` unchanged, noting in ``excluded`` why a page may not form or join a campaign
    (``mundane.Rules``: HTTP error, soft 404, boilerplate only) and counting each reason."""
    for page in pages:
        reason = rules.reason(page.status, page.title, page.words)
        if reason is not None:
            excluded[page.doc_id] = reason
            counts[f"pages_excluded_{reason}"] += 1
        yield page


def candidate_pairs(partitions: dict[int, Partition], work: Path, params: SpinParams, runner: str,
                    runner_args: tuple[str, ...], counts: Counter[str]) -> list[tuple[int, int]]:
    """Pairs of pages that may reach the immutable threshold (the mrjob jobs, prefix filtering)."""
    work.mkdir(parents=True, exist_ok=True)
    lines = work / "immutables.tsv"
    with atomic_path(lines) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        for doc, part in partitions.items():
            fh.write(f"{doc}\t{' '.join(part.immutables)}\n")
    return stage_candidates(lines, work, params, runner, runner_args, counts)


def find_spin(pages: list[Page], dictionary: SynonymDictionary, params: SpinParams, work: Path, runner: str,
              runner_args: tuple[str, ...] = (),
              progress: bool | None = False) -> tuple[list[dict[str, Any]], Counter[str]]:
    """Duplicate and spun pairs among ``pages``: [{doc_a, doc_b, immutable_jaccard, mutable_overlap, kind}]."""
    counts: Counter[str] = Counter()
    groups: dict[int, list[int]] = {}
    for page in pages:
        groups.setdefault(xxh3_64_intdigest(" ".join(page.words).encode("utf-8")), []).append(page.doc_id)
    words_of = {page.doc_id: page.words for page in pages}
    pairs: list[dict[str, Any]] = []
    partitions: dict[int, Partition] = {}
    for members in progress_bar(groups.values(), desc="spin: partition", unit="article", setting=progress):
        rep, *copies = sorted(members)
        part = partition(words_of[rep], dictionary, params.phrase_match)
        if len(part.immutables) <= 1:  # DSpin: one immutable says nothing
            counts["skipped_one_immutable_or_less"] += len(members)
            continue
        partitions[rep] = part
        counts["immutables"] += len(part.immutables)
        counts["mutables"] += len(part.mutables)
        counts["words"] += len(words_of[rep])
        for doc in copies:
            pairs.append({"doc_a": rep, "doc_b": doc, "immutable_jaccard": 1.0, "mutable_overlap": 1.0,
                          "kind": "duplicate"})
    counts["articles"] = len(partitions)
    counts["duplicate_pairs"] = len(pairs)
    groups = group_same_immutables({doc: part.immutables for doc, part in partitions.items()})
    counts["immutable_groups"] = len(groups)
    representatives = {rep: partitions[rep] for rep in groups}
    candidates = (candidate_pairs(representatives, work, params, runner, runner_args, counts)
                  if len(representatives) > 1 else [])
    counts["candidate_pairs"] = candidate_pairs_count(candidates, counts)
    sets = {rep: frozenset(part.immutables) for rep, part in representatives.items()}
    scored = [(a, b, 1.0) for a, b in within_group_pairs(groups)]
    counts["same_immutable_pairs"] = len(scored)
    for rep_a, rep_b in candidates:
        score = jaccard(sets[rep_a], sets[rep_b])
        if score >= params.immutable_threshold:
            scored += [(a, b, score) for a, b in between_group_pairs(groups, rep_a, rep_b)]
    scored.sort()  # page pairs in order, as the candidates of every page came out before grouping
    counts["pairs_above_immutable_threshold"] = len(scored)
    overlaps = ((a, b, score, mutable_overlap(partitions[a].mutables, partitions[b].mutables, dictionary))
                for a, b, score in progress_bar(scored, desc="spin: verify", unit="pair", setting=progress))
    pairs += spun_pairs(overlaps, params.verifier_threshold, counts)
    return pairs, counts


def describe_campaigns(pairs: list[dict[str, Any]], pages: Iterable[Page], snapshot: str,
                       promoted_fraction: float, min_domains: int = 1, excluded: dict[int, str] | None = None,
                       counts: Counter[str] | None = None,
                       dropped: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The campaigns: one record per connected component of the pairs whose two pages may join a
    campaign (neither in ``excluded``) if its pages span at least ``min_domains`` registered domains;
    the other components go to ``dropped`` with their reason (``pages``: at least those in a pair).
    With the defaults, DSpin's campaigns: every component of the pairs."""
    by_doc = {page.doc_id: page for page in pages}
    excluded = excluded or {}
    counts = Counter() if counts is None else counts
    spun = {d for p in pairs if p["kind"] == "spun" for d in (p["doc_a"], p["doc_b"])}
    paired = {d for p in pairs for d in (p["doc_a"], p["doc_b"])}
    for reason in REASONS:
        counts[f"paired_pages_excluded_{reason}"] += sum(excluded.get(d) == reason for d in paired)
    edges = ((p["doc_a"], p["doc_b"]) for p in pairs if p["doc_a"] not in excluded and p["doc_b"] not in excluded)
    out: list[dict[str, Any]] = []
    dropped = [] if dropped is None else dropped
    first_dropped = len(dropped)
    for docs in components(edges):
        members = [by_doc[d] for d in docs]
        domains = len({m.domain for m in members})
        few = domains < min_domains
        record = {
            "campaign": f"{snapshot}/{len(out) + 1}",
            "snapshot": snapshot,
            "articles": len(members),
            "spun_articles": sum(d in spun for d in docs),
            "hosts": len({m.host for m in members}),
            "domains": domains,
            "promoted_sites": promoted_sites(({"domain": m.domain, "link_targets": m.link_targets} for m in members),
                                             promoted_fraction, min_domains),
            "pages": [{"doc_id": m.doc_id, "url": m.url, "host": m.host} for m in members],
        }
        if few:
            record = {"cluster": f"{snapshot}/dropped/{len(dropped) - first_dropped + 1}", **record,
                      "reason": f"its pages span {domains} registered domain{'s' * (domains != 1)}, "
                                f"fewer than min_domains = {min_domains}"}
            del record["campaign"]
            dropped.append(record)
            counts["clusters_dropped_few_domains"] += 1
            counts["cluster_pages_dropped_few_domains"] += len(members)
        else:
            out.append(record)
    return out


def host_features(pages: Iterable[Page | PageHost], pairs: list[dict[str, Any]], campaigns: list[dict[str, Any]],
                  snapshot: str) -> list[dict[str, Any]]:
    """Per host of the snapshot: how much of it is in campaigns, how big they are, whether it is promoted
    (``pages``: every page of the snapshot, read once)."""
    in_campaign: dict[int, dict[str, Any]] = {p["doc_id"]: c for c in campaigns for p in c["pages"]}
    kind_of: dict[int, set[str]] = {}
    for pair in pairs:
        for doc in (pair["doc_a"], pair["doc_b"]):
            kind_of.setdefault(doc, set()).add(pair["kind"])
    promoted = Counter(site["host"] for c in campaigns for site in c["promoted_sites"])
    rows: dict[str, dict[str, Any]] = {}
    for page in pages:
        row = rows.setdefault(page.host, {"snapshot": snapshot, "host": page.host, "pages": 0, "campaign_pages": 0,
                                          "spun_pages": 0, "duplicate_pages": 0, "_campaigns": set(),
                                          "max_campaign_articles": 0, "max_campaign_hosts": 0})
        row["pages"] += 1
        campaign = in_campaign.get(page.doc_id)
        if campaign is not None:
            row["campaign_pages"] += 1
            row["_campaigns"].add(campaign["campaign"])
            row["max_campaign_articles"] = max(row["max_campaign_articles"], campaign["articles"])
            row["max_campaign_hosts"] = max(row["max_campaign_hosts"], campaign["hosts"])
        row["spun_pages"] += "spun" in kind_of.get(page.doc_id, ())
        row["duplicate_pages"] += "duplicate" in kind_of.get(page.doc_id, ())
    out = []
    for host in sorted(rows):
        row = rows[host]
        row["campaigns"] = len(row.pop("_campaigns"))
        row["campaign_fraction"] = row["campaign_pages"] / row["pages"]
        row["promoted_by_campaigns"] = promoted[host]
        row["is_promoted"] = promoted[host] > 0
        out.append(row)
    return out


class SpinDetector(Detector):
    name = "spin"
    version = "6"  # 2: two candidate jobs (frequencies, then index/probe prefixes), candidate_pair_counts;
    # 3: a head without synonyms (also head|head) spins nothing; unusable dictionary lines are bad records;
    # 4: pages with the same immutables go to the jobs as one group (same pairs; new counts, smaller work/)
    # 5: the accumulated positional bound after the count filter (same pairs; new count
    #    candidate_pairs_bound_pruned, smaller work/)
    # 6: campaigns span min_domains registered domains and hold no error or boilerplate-only page
    #    (mundane.py); promoted sites are linked from copies on min_domains domains; dropped_clusters
    #    and excluded_pages outputs (same pairs)
    description = ("DSpin: automatically spun articles (immutable Jaccard, mutable verifier), exact duplicates "
                   "and spam campaigns with their promoted sites.")
    Params = SpinParams
    host_tables = (PerHostTable("hosts", (
        HostFeature("pages", "pages of the host"),
        HostFeature("campaign_pages", "campaign pages", evidence=True),
        HostFeature("campaign_fraction", "campaign_pages / pages"),
        HostFeature("spun_pages", "pages in a spun pair"),
        HostFeature("duplicate_pages", "pages in a duplicate pair"),
        HostFeature("campaigns", "campaigns with a page on the host"),
        HostFeature("max_campaign_articles", "articles of the largest such campaign"),
        HostFeature("max_campaign_hosts", "hosts of the largest such campaign"),
        HostFeature("promoted_by_campaigns", "campaigns that promote the host"),
        HostFeature("is_promoted", "some campaign promotes the host"))),)
    requires = ("parse",)
    uses_mapreduce = True

    @classmethod
    def input_files(cls, params: BaseModel) -> dict[str, Path]:
        """The dictionaries, ``package:`` ones included: their content is part of the identity."""
        assert isinstance(params, SpinParams)
        return {f"dictionary.{i}": resolve_dictionary_path(entry, None) for i, entry in enumerate(params.dictionary)}

    def run(self, ctx: StageContext) -> StageResult:
        params = ctx.params
        assert isinstance(params, SpinParams)
        paths = [resolve_dictionary_path(entry, None) for entry in params.dictionary]
        dictionary = load_dictionary(paths, strict=ctx.settings.strict)
        pages_path = ctx.inputs["parse"]["pages"]
        sizes = Counter(ds.dataset(pages_path, format="parquet").to_table(columns=["snapshot"])
                        ["snapshot"].to_pylist())
        snapshots = sorted(sizes)
        per_page = words_per_page(pages_path) if params.engine == "auto" else 0.0
        counts: Counter[str] = Counter(dictionary.counts())
        counts["snapshots"] = len(snapshots)
        for name in ("clusters_dropped_few_domains", "cluster_pages_dropped_few_domains",
                     *(f"{kind}_{reason}" for kind in ("pages_excluded", "paired_pages_excluded")
                       for reason in REASONS)):
            counts[name] += 0  # present when zero: nothing is dropped silently
        rules = Rules.from_params(params)
        all_pairs, all_campaigns, hosts = [], [], []
        all_dropped: list[dict[str, Any]] = []
        all_excluded: list[dict[str, Any]] = []
        (ctx.outdir / "work").mkdir()  # declared even when no snapshot has two articles to compare
        for snapshot in snapshots:
            work = ctx.outdir / "work" / snapshot
            excluded: dict[int, str] = {}
            engine = spin_engine(params.engine, ctx.settings, sizes[snapshot], params.mapreduce_above,
                                 round(sizes[snapshot] * per_page), params.direct_max_words)
            if engine in ("mapreduce", "direct"):
                stream = excluded_pages(read_pages(pages_path, snapshot, counts, links_of=set()),  # targets: only
                                        rules, excluded, counts)  # for campaigns
                pairs, found = find_spin_streaming(stream, dictionary, params, work, ctx.settings.runner,
                                                   ctx.settings.runner_args, progress=ctx.settings.progress,
                                                   direct=engine == "direct")
                in_pairs = {doc for p in pairs for doc in (p["doc_a"], p["doc_b"])}
                pages = list(read_pages(pages_path, snapshot, counts, words=False, links_of=in_pairs, only=in_pairs))
                every_page: Iterable[Page | PageHost] = page_hosts(pages_path, snapshot)
                counts[f"engine_{engine}_snapshots"] += 1
            else:
                pages = list(excluded_pages(read_pages(pages_path, snapshot, counts), rules, excluded, counts))
                counts["pages"] += len(pages)
                pairs, found = find_spin(pages, dictionary, params, work, ctx.settings.runner,
                                         ctx.settings.runner_args, progress=ctx.settings.progress)
                every_page = pages
            counts.update(found)
            campaigns = describe_campaigns(pairs, pages, snapshot, params.promoted_fraction,
                                           params.min_domains, excluded, counts, all_dropped)
            urls = {page.doc_id: page.url for page in pages}
            in_pairs = {doc for p in pairs for doc in (p["doc_a"], p["doc_b"])}
            all_excluded += [{"snapshot": snapshot, "doc_id": page.doc_id, "url": page.url, "host": page.host,
                              "status": page.status, "title": page.title, "reason": excluded[page.doc_id]}
                             for page in pages if page.doc_id in in_pairs and page.doc_id in excluded]
            all_pairs += [{"snapshot": snapshot, **p, "url_a": urls[p["doc_a"]], "url_b": urls[p["doc_b"]]}
                          for p in pairs]
            all_campaigns += campaigns
            hosts += host_features(every_page, pairs, campaigns, snapshot)
            del pages, every_page
        counts["campaigns"] = len(all_campaigns)
        counts["campaign_pages"] = sum(c["articles"] for c in all_campaigns)
        _write_jsonl(ctx.outdir / "pairs.jsonl", all_pairs)
        _write_jsonl(ctx.outdir / "campaigns.jsonl", all_campaigns)
        _write_jsonl(ctx.outdir / "dropped_clusters.jsonl", all_dropped)
        _write_jsonl(ctx.outdir / "excluded_pages.jsonl",
                     sorted(all_excluded, key=lambda r: (r["snapshot"], r["doc_id"])))
        _write_jsonl(ctx.outdir / "bad_records.jsonl", dictionary.bad_lines)
        pq.write_table(pa.Table.from_pylist(hosts, schema=HOST_SCHEMA), ctx.outdir / "hosts.parquet")
        files = [{"entry": e, "path": str(p), "bytes": p.stat().st_size} for e, p in zip(params.dictionary, paths)]
        (ctx.outdir / "dictionary.json").write_text(json.dumps({"files": files}, indent=1) + "\n")
        outputs = {"pairs": "pairs.jsonl", "campaigns": "campaigns.jsonl", "dropped_clusters": "dropped_clusters.jsonl",
                   "excluded_pages": "excluded_pages.jsonl", "hosts": "hosts.parquet",
                   "dictionary": "dictionary.json", "bad_records": "bad_records.jsonl", "work": "work"}
        return StageResult(outputs=outputs, counts=dict(counts), bad_records=dictionary.bad_lines)


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
