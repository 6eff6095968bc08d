"""The spin stage's MapReduce engine, per snapshot: the same pairs as ``find_spin`` without
holding the corpus in one process.

The pages stream from the page table in batches; each distinct article text is partitioned
once and its partition written to disk (``partitions.tsv``: one line per article, the
``mr_verify_pairs`` input format).  The candidate jobs read the representatives'
immutables from disk, and the exact Jaccard and the verifier run as a join job on doc id
(``mr_verify_pairs``).  What stays in this process is, per page, a few integers (its text's
hash group and immutable-set group) and, per pair found, its result: O(pages) small numbers,
not O(pages) texts.  (On the ``inline`` runner mrjob sorts each step's records in this
process: bounded memory needs ``local`` or a cluster runner.)

The grouping is ``find_spin``'s: pages with the same article words (64-bit xxh3, as there)
are one article, its smallest doc id their representative; articles with the same immutable
set (here compared by a 128-bit xxh3 of the sorted set rather than by the set itself) go to
the candidate jobs as one.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Iterator
from itertools import combinations
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from xxhash import xxh3_64_intdigest, xxh3_128_intdigest

from spamflow.mr import run_job_lean
from spamflow.progress import progress_bar
from spamflow_spin.batch_partition import partition_batch
from spamflow_spin.candidates import add_candidate_counts, candidate_pairs_count, stage_candidates, task_args
from spamflow_spin.copies import between_group_pairs, within_group_pairs
from spamflow_spin.dictionary import SynonymDictionary
from spamflow_spin.direct import IdWriter, PageIds, direct_candidates, verify_direct
from spamflow_spin.mr_verify_pairs import BELOW, MRVerifyPairs, pair_line, partition_line, split_partition
from spamflow_spin.params import SpinParams
from spamflow_spin.partition import partition
from spamflow_spin.synonyms import write_synonyms
from spamflow_spin.verifier import spun_pairs

BATCH_WORDS = 1 << 20
"""Words of new texts partitioned at a time by the direct engine (``partition_batch``): ~2,000
of the scale benchmark's pages, ~0.2 GB of Python and Arrow objects while a batch is held."""


def find_spin_streaming(pages: Iterator[Any], dictionary: SynonymDictionary, params: SpinParams, work: Path,
                        runner: str, runner_args: tuple[str, ...] = (), progress: bool | None = False,
                        direct: bool = False) -> tuple[list[dict[str, Any]], Counter[str]]:
    """``find_spin``'s pairs and counts from a stream of pages (``doc_id`` and ``words``).
    ``direct``: the jobs' arithmetic in this process (``direct.py``) instead of the jobs."""
    work.mkdir(parents=True, exist_ok=True)
    counts: Counter[str] = Counter()
    partitions = work / "partitions.tsv"
    pages = progress_bar(pages, desc="spin: partition", unit="page", setting=progress)
    writer = IdWriter(work / "ids.u32") if direct else None  # the direct engine's input, instead of immutables.tsv
    if writer is not None:
        pairs, same_set = _articles_once(pages, dictionary, params, partitions, writer, counts)
    else:
        pairs, same_set = _articles_spooled(pages, dictionary, params, work, partitions, counts)
    counts["duplicate_pairs"] = len(pairs)
    groups = {members[0]: members for members in sorted(sorted(m) for m in same_set.values())}
    del same_set
    counts["immutable_groups"] = len(groups)
    # 3. candidate pairs of groups: the representatives' immutables to the two candidate jobs
    candidates: list[tuple[int, int]] = []
    lines = work / "immutables.tsv"  # the jobs' input; the report reads the campaigns' immutables from it
    if len(groups) > 1:
        _representatives(partitions, groups, lines)
    if writer is not None:
        scored = _direct(writer.finish(keep=groups), partitions, groups, dictionary, params, work, counts)
    else:
        if len(groups) > 1:
            candidates = stage_candidates(lines, work, params, runner, runner_args, counts)
        counts["candidate_pairs"] = candidate_pairs_count(candidates, counts)
    counts["same_immutable_pairs"] = sum(len(members) * (len(members) - 1) // 2 for members in groups.values())
    if not direct:
        scored = _score_jobs(partitions, groups, candidates, dictionary, params, work, runner, runner_args)
    scored.sort()  # page pairs in order, as find_spin verifies them
    counts["pairs_above_immutable_threshold"] = len(scored)
    pairs += spun_pairs(scored, params.verifier_threshold, counts)
    return pairs, counts


def _new_texts(pages: Iterator[Any], texts: dict[int, list[int]], counts: Counter[str]) -> Iterator[tuple[int, Any]]:
    """The pages whose article text is new (64-bit xxh3 of its words), with that hash; every
    page's doc id goes to its text's list in ``texts`` (text hash -> its pages, first seen first)."""
    for page in pages:
        counts["pages"] += 1
        key = xxh3_64_intdigest(" ".join(page.words).encode("utf-8"))
        members = texts.get(key)
        if members is not None:
            members.append(page.doc_id)
            continue
        texts[key] = [page.doc_id]
        yield key, page


def _articles_spooled(pages: Iterator[Any], dictionary: SynonymDictionary, params: SpinParams, work: Path,
                      partitions: Path, counts: Counter[str]) -> tuple[list[dict[str, Any]], dict[int, list[int]]]:
    """Steps 1 and 2 for the jobs: each distinct text partitioned to a spool file, then
    ``partitions.tsv`` written with each text's representative; returns the ``duplicate`` pairs
    and the representatives by immutable set (128-bit xxh3 of the sorted set)."""
    # 1. one partition per distinct text, to disk; in memory: text hash -> its pages
    texts: dict[int, list[int]] = {}
    spool = work / "texts.tsv"
    with open(spool, "w", encoding="utf-8") as fh:
        for _, page in _new_texts(pages, texts, counts):
            part = partition(page.words, dictionary, params.phrase_match)
            fh.write(f"{len(page.words)}\t{' '.join(part.immutables)}\t{'|'.join(part.mutables)}\n")
    # 2. representatives (smallest doc id of a text), duplicates, groups of equal immutables
    pairs: list[dict[str, Any]] = []
    same_set: dict[int, list[int]] = {}
    with open(spool, encoding="utf-8") as src, open(partitions, "w", encoding="utf-8") as dst:
        for members, line in zip(texts.values(), src):
            n_words, _, rest = line.rstrip("\n").partition("\t")
            immutables, mutables = split_partition(rest)
            rep, *copies = sorted(members)
            if len(immutables) <= 1:  # DSpin: one immutable says nothing
                counts["skipped_one_immutable_or_less"] += len(members)
                continue
            dst.write(partition_line(rep, immutables, mutables))
            counts["articles"] += 1
            counts["immutables"] += len(immutables)
            counts["mutables"] += len(mutables)
            counts["words"] += int(n_words)
            pairs += [{"doc_a": rep, "doc_b": doc, "immutable_jaccard": 1.0, "mutable_overlap": 1.0,
                       "kind": "duplicate"} for doc in copies]
            same_set.setdefault(xxh3_128_intdigest(" ".join(sorted(immutables)).encode("utf-8")), []).append(rep)
    spool.unlink()
    return pairs, same_set


def _articles_once(pages: Iterator[Any], dictionary: SynonymDictionary, params: SpinParams, partitions: Path,
                   writer: IdWriter, counts: Counter[str]) -> tuple[list[dict[str, Any]], dict[int, list[int]]]:
    """Steps 1 and 2 for the direct engine in one pass, without the spool file: the distinct
    texts partitioned ``BATCH_WORDS`` words at a time (``partition_batch``), each one's line
    written to ``partitions.tsv`` and its immutable ids to ``writer`` under its first page's doc
    id, which is relabelled afterwards where a later copy has a smaller one (the
    representative).  The same ``partitions.tsv``, pairs and groups as
    :func:`_articles_spooled`; equal immutable sets are found by a 128-bit xxh3 of the sorted
    ids (ids and immutables correspond one to one; if the writer numbered them in more than one
    generation, the keys are made again from the global ids)."""
    texts: dict[int, list[int]] = {}  # text hash -> its pages, first seen first
    rows: dict[int, int] = {}  # text hash -> its row in ``writer`` (texts of two immutables or more)
    set_keys: list[int] = []  # per row: its immutable set's hash
    batch: list[tuple[int, int, list[str]]] = []  # new texts (hash, first page, words) to partition
    held = 0
    with open(partitions, "w", encoding="utf-8") as dst:
        for key, page in _new_texts(pages, texts, counts):
            batch.append((key, page.doc_id, page.words))
            held += len(page.words)
            if held >= BATCH_WORDS:
                _partition_batch(batch, dictionary, params, dst, writer, rows, set_keys, counts)
                batch, held = [], 0
        _partition_batch(batch, dictionary, params, dst, writer, rows, set_keys, counts)
    if writer.merge():  # ids numbered per generation: the sets' keys again, from the global ids
        set_keys = writer.set_keys()
    pairs: list[dict[str, Any]] = []
    same_set: dict[int, list[int]] = {}
    relabelled: dict[int, int] = {}  # first page -> representative, where they differ
    for key, members in texts.items():
        row = rows.get(key)
        if row is None:
            counts["skipped_one_immutable_or_less"] += len(members)
            continue
        rep, *copies = sorted(members)
        if rep != members[0]:
            relabelled[members[0]] = rep
            writer.relabel(row, rep)
        counts["articles"] += 1
        pairs += [{"doc_a": rep, "doc_b": doc, "immutable_jaccard": 1.0, "mutable_overlap": 1.0,
                   "kind": "duplicate"} for doc in copies]
        same_set.setdefault(set_keys[row], []).append(rep)
    if relabelled:
        _relabel(partitions, relabelled)
    return pairs, same_set


def _partition_batch(batch: list[tuple[int, int, list[str]]], dictionary: SynonymDictionary, params: SpinParams,
                     dst: TextIO, writer: IdWriter, rows: dict[int, int], set_keys: list[int],
                     counts: Counter[str]) -> None:
    """The batch's texts partitioned; those of two immutables or more (DSpin: one says nothing)
    to ``partitions.tsv`` and ``writer``, each its row and immutable set's hash."""
    if not batch:
        return
    keys, docs, texts = zip(*batch)
    part = partition_batch(docs, texts, dictionary, params.phrase_match, writer.lookup)
    sizes = np.diff(part.starts)
    kept = np.flatnonzero(sizes > 1).tolist()
    for t in kept:
        rows[keys[t]] = len(set_keys)
        set_keys.append(xxh3_128_intdigest(np.sort(part.ids[part.starts[t]:part.starts[t + 1]]).tobytes()))
        counts["immutables"] += int(sizes[t])
        counts["mutables"] += int(part.mutables[t])
        counts["words"] += len(texts[t])
    dst.writelines(part.lines[t] + "\n" for t in kept)
    writer.add_ids([docs[t] for t in kept], part.ids[np.repeat(sizes > 1, sizes)], sizes[kept].tolist())


def _relabel(partitions: Path, relabelled: dict[int, int]) -> None:
    """``partitions.tsv`` rewritten with the doc ids of ``relabelled`` replaced."""
    fixed = partitions.with_name(partitions.name + ".relabelled")
    with open(partitions, encoding="utf-8", newline="\n") as src, open(fixed, "w", encoding="utf-8") as dst:
        for line in src:
            end = line.find("\t", 2)
            rep = relabelled.get(int(line[2:end]))
            dst.write(line if rep is None else f"A\t{rep}{line[end:]}")
    fixed.replace(partitions)


def _representatives(partitions: Path, groups: dict[int, list[int]], lines: Path) -> None:
    """The groups' representatives' lines ``doc<TAB>immutables`` of ``partitions.tsv``."""
    with open(partitions, encoding="utf-8", newline="\n") as src, open(lines, "w", encoding="utf-8") as fh:
        for line in src:
            _, doc, immutables, _ = line.split("\t", 3)
            if int(doc) in groups:
                fh.write(f"{doc}\t{immutables}\n")


def _direct(ids: PageIds, partitions: Path, groups: dict[int, list[int]], dictionary: SynonymDictionary,
            params: SpinParams, work: Path, counts: Counter[str]) -> list[tuple[int, int, float, float]]:
    """Steps 3 and 4 in this process: candidates, Jaccard and verifier (``direct.py``); ``ids``:
    the groups' representatives."""
    candidates: list[tuple[int, int]] = []
    scores: list[float] = []
    if len(groups) > 1:
        with tempfile.TemporaryDirectory(prefix="direct-", dir=work) as scratch:
            found = direct_candidates(ids, Path(scratch), threshold=params.immutable_threshold,
                                      max_pages=params.max_pages, min_shared=params.min_shared)
        candidates = add_candidate_counts(found, counts)
        scores = ids.jaccard(np.array([a for a, _ in candidates], np.int64),
                             np.array([b for _, b in candidates], np.int64)).tolist()
    ids.remove()
    counts["candidate_pairs"] = candidate_pairs_count(candidates, counts)
    scored = [(a, b, 1.0) for a, b in within_group_pairs(groups)]
    for (rep_a, rep_b), score in zip(candidates, scores):
        if score >= params.immutable_threshold:
            scored += [(a, b, score) for a, b in between_group_pairs(groups, rep_a, rep_b)]
    scored.sort()
    return verify_direct(scored, partitions, dictionary)


def _score_jobs(partitions: Path, groups: dict[int, list[int]], candidates: list[tuple[int, int]],
                dictionary: SynonymDictionary, params: SpinParams, work: Path, runner: str,
                runner_args: tuple[str, ...]) -> list[tuple[int, int, float, float]]:
    """Step 4 on the jobs: every page pair to score to the join job."""
    # 4. page pairs to score: inside groups (Jaccard 1.0) and behind each candidate pair of groups
    to_score = work / "pairs.tsv"
    with open(to_score, "w", encoding="utf-8") as fh:
        for members in groups.values():
            fh.writelines(pair_line(a, b) for a, b in combinations(members, 2))
        for rep_a, rep_b in candidates:
            fh.writelines(pair_line(a, b) for a, b in between_group_pairs(groups, rep_a, rep_b))
    return _verify(to_score, partitions, dictionary, params, work, runner, runner_args) \
        if to_score.stat().st_size else []


def _verify(to_score: Path, partitions: Path, dictionary: SynonymDictionary, params: SpinParams, work: Path,
            runner: str, runner_args: tuple[str, ...]) -> list[tuple[int, int, float, float]]:
    """The join job: (doc_a, doc_b, immutable Jaccard, verifier overlap) of the pairs at or above t."""
    synonyms = work / "synonyms.tsv"
    write_synonyms(dictionary.neighbours, synonyms)
    out = run_job_lean(MRVerifyPairs, [to_score, partitions], work / "verified.tsv", runner=runner,
                  runner_args=task_args(runner, runner_args),
                  args=["--threshold", repr(params.immutable_threshold), "--synonyms", str(synonyms)])
    scored = []
    with open(out, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            key, tab, value = line.rstrip("\n").partition("\t")
            if key == BELOW:
                continue
            a, _, b = key.partition(" ")
            score, _, overlap = value.partition(" ")
            try:
                scored.append((int(a), int(b), float(score), float(overlap)))
            except ValueError:
                raise ValueError(f"{out}:{number}: not 'doc_a doc_b<TAB>jaccard overlap': {line[:80]!r}") from None
    return scored
