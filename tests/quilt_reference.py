"""Brute-force quilted-page detection, written straight from Najork (SIGIR 2012), Section 2
and 3, on k-gram *tuples* (no hashing, no MapReduce): the independent computation the
MapReduce jobs are checked against.  Quadratic; for small corpora only."""

from __future__ import annotations

from collections.abc import Sequence


def grams(words: Sequence[str], k: int) -> set[tuple[str, ...]]:
    """grams_k(d): the set of the n-k+1 overlapping k-grams of d."""
    return {tuple(words[i:i + k]) for i in range(len(words) - k + 1)}


def server(page: dict, foreign: str) -> object:
    return {"domain": page["domain"], "ip": page["ip"]}[foreign]


def reference_quilts(pages: list[dict], k: int, m: int, c: int, theta: float,
                     foreign: str = "none", phi: float | None = None) -> list[dict]:
    gram_sets = {p["doc_id"]: grams(p["words"], k) for p in pages}
    by_id = {p["doc_id"]: p for p in pages}

    def docs(g):  # docs_k(g)
        return {d for d, gs in gram_sets.items() if g in gs}

    df = {}
    for gs in gram_sets.values():
        for g in gs:
            if g not in df:
                df[g] = len(docs(g))

    def pgrams(d):  # pgrams_{k,m}(d) = {g in grams_k(d) : 1 < |docs_k(g)| <= m}
        return {g for g in gram_sets[d] if 1 < df[g] <= m}

    out = []
    for d in sorted(gram_sets):
        n = len(gram_sets[d])
        if n == 0:
            continue
        patch = pgrams(d)
        patchfrac = len(patch) / n
        if patchfrac < theta:
            continue
        # C <- {(d', g) : d' in D \ {d}, g in grams(d) ∩ grams(d'), 1 < |docs(g)| <= m [, server(d) != server(d')]}
        cover = {(d2, g) for d2 in gram_sets if d2 != d for g in gram_sets[d] & gram_sets[d2] if 1 < df[g] <= m
                 and (foreign == "none" or _foreign(by_id[d], by_id[d2], foreign))}
        sources = []
        while cover:
            counts: dict[int, int] = {}
            for d2, _ in cover:
                counts[d2] = counts.get(d2, 0) + 1
            best = min(counts, key=lambda x: (-counts[x], x))  # most grams, ties: smallest doc_id
            covered = {g for d2, g in cover if d2 == best}
            sources.append((best, len(covered)))
            cover = {(d2, g) for d2, g in cover if g not in covered}
        if phi is not None:
            sources = [(s, n_new) for s, n_new in sources if n_new >= phi * len(patch)]
        if len(sources) < c:
            continue
        linked = {link["url"] for link in by_id[d].get("links") or []}
        out.append({
            "doc_id": d,
            "url": by_id[d]["url"],
            "patchfrac": patchfrac,
            "n_grams": n,
            "n_patch_grams": len(patch),
            "sources": [{"doc_id": s, "url": by_id[s]["url"], "grams": n_new} for s, n_new in sources],
            "linked_source_fraction": sum(by_id[s]["url"] in linked for s, _ in sources) / len(sources),
        })
    return out


def _foreign(page: dict, other: dict, foreign: str) -> bool:
    """server(d) != server(d'); a page whose server is unknown (no IP) is foreign to nothing."""
    a, b = server(page, foreign), server(other, foreign)
    return a is not None and b is not None and a != b
