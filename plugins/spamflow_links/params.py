"""The links detector's parameters, named as in the papers (alpha, c, ell)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from spamflow.detector import DetectorParams, InputPath
from spamflow.mr import Engine


class LinksParams(DetectorParams):
    nodes: Literal["host", "domain"] = Field(
        "host", description="graph nodes: host names, or registered domains (links inside a domain are self-links)")
    nofollow: bool = Field(True, description="count rel=nofollow links as edges")
    alpha: float = Field(0.85, gt=0.0, lt=1.0, description=(
        "damping factor of PageRank, CheiRank, TrustRank and truncated PageRank (Eom et al.: 0.85)"))
    rank_weights: Literal["binary", "counts"] = Field("binary", description=(
        "edges that PageRank, CheiRank, TrustRank and truncated PageRank walk: binary = the 0/1 host graph "
        "(Eom et al.'s A_ij = 1; a host linking to b from 50 pages counts once), counts = weighted by page-link "
        "counts"))
    tol: float = Field(1e-10, gt=0.0, description="power iteration stops when the L1 change is below tol")
    trust_seeds: list[str] = Field(
        default_factory=list, description="known-good hosts (or domains) TrustRank starts from; empty: no trustrank")
    xjaccard_c: float = Field(0.1, gt=0.0, lt=1.0, description="XJaccard decay c (Erdélyi et al. 3.1.3: 0.1)")
    psimrank_c: float = Field(0.15, gt=0.0, lt=1.0, description="PSimRank decay c (Erdélyi et al. 3.1.4: 0.15)")
    hits_c: float = Field(200.0, ge=0.0, description=(
        "importance c of the supersource of personalized HITS (Göbölös-Szabó & Benczúr 2.5: 200): the score it "
        "hands out per iteration, split by the change personalization"))
    ppr_c: float = Field(0.9, gt=0.0, le=1.0, description=(
        "probability c of jumping back to the change personalization in the personalized PageRank ChangePPR "
        "(Göbölös-Szabó & Benczúr eq. 3: 0.9)"))
    change_T: float = Field(10.0, gt=0.0, description=(
        "saturation T of change(u) in the HITS personalization change/(change + T) (Göbölös-Szabó & Benczúr eq. 2: "
        "10)"))
    fingerprints: int = Field(
        64, ge=1, description="min-hash permutations for XJaccard and coupled walk pairs for PSimRank")
    exact_max_nodes: int = Field(
        5000, ge=0, description=("graphs with at most this many nodes get exact neighbours at distance 2-4 and "
                                 "exact XJaccard; larger ones HyperLogLog counting and min-hash fingerprints"))
    hll_log2_registers: int = Field(7, ge=4, le=12, description="HyperLogLog registers per node = 2**this")
    seed: int = Field(0, description="seed of the min-hash permutations, PSimRank walks and HyperLogLog hash")
    frozen_links: InputPath | None = Field(None, description=(
        "frozen.npz of an earlier links run (a model's statistics): featurise this run's hosts on the union of "
        "that host graph and this run's links, their ranks solved against the frozen ranks (incremental scoring)"))
    engine: Engine = Field("auto", description=(
        "memory: ranks and supporters in this process; mapreduce: host edges by one mrjob job over the page "
        "table's parts, each power-iteration and supporter step one job; auto: mapreduce on a cluster runner, "
        "or for the ranks and supporters of a snapshot with more than mapreduce_above_edges edges"))
    mapreduce_above_edges: int = Field(
        10_000_000, ge=0, description="auto: a snapshot graph with more edges than this is walked by MapReduce jobs")
    execution_keys: ClassVar[frozenset[str]] = frozenset({"engine", "mapreduce_above_edges"})
