"""The hss detector's parameters, named as in the paper (section 4.2 gives the defaults)."""

from __future__ import annotations

import math
from typing import ClassVar

from pydantic import Field, model_validator

from spamflow.detector import DetectorParams
from spamflow.mr import Engine


class HSSParams(DetectorParams):
    n: int = Field(32, ge=1, description="characters per n-gram of the HTML noise (section 3.2)")
    m: int = Field(128, ge=1, le=4096, description="fingerprint dimensions (section 3.3)")
    k: int = Field(1, ge=1, description="dimensions per probe key (section 3.4)")
    p: int = Field(20, ge=1, description="probes: random k-subsets of the m dimensions (section 3.4)")
    t: int = Field(35, ge=1, description="check threshold: a pair is an edge if it matches on more than t "
                                         "of the m dimensions, Sim_b > t/m (section 3.4)")
    noise_window: int = Field(0, ge=0, description=(
        "0 (the paper's preprocessing): fingerprint every n-gram of a page's HTML noise.  N > 0: only its first "
        "and last N n-grams, where a template is, and not a huge content block between them (pages with at most "
        "2N n-grams are fingerprinted whole).  Joins a site's giant listing pages to their template, but also "
        "unrelated modern pages that share third-party boilerplate in their head; measured in docs/hss.md"))
    seed: int = Field(0, ge=0, description="seed of the m orderings sigma_i and of the probe subsets")
    max_representatives: int = Field(64, ge=1, description=(
        "most representatives one bucket is checked against per probe (quasi-transitivity, section 3.4.1); "
        "caps the cost of a bucket of unrelated pages"))
    mapreduce: bool = Field(False, description=(
        "the older spelling of engine: mapreduce (kept for existing configs; still part of the signature, as "
        "before, so that existing work directories keep their hss stage)"))
    engine: Engine = Field("auto", description=(
        "memory: fingerprint and probe/check in this process; mapreduce: with the mrjob jobs mr_fingerprint and "
        "mr_probe_check on the configured mapreduce runner; auto: mapreduce on a cluster runner or above "
        "mapreduce_above pages.  The fingerprints and clusters are the same"))
    mapreduce_above: int = Field(1_000_000, ge=0, description=(
        "pages (all snapshots) above which engine: auto runs the MapReduce jobs (a fingerprint is m x 8 bytes "
        "in memory, 1 KB with m = 128)"))
    execution_keys: ClassVar[frozenset[str]] = frozenset({"engine", "mapreduce_above"})

    @model_validator(mode="after")
    def _fits_m(self) -> HSSParams:
        if self.k > self.m or self.t > self.m:
            raise ValueError(f"k and t must be at most m={self.m}; got k={self.k}, t={self.t}")
        if self.p > math.comb(self.m, self.k):
            raise ValueError(f"p={self.p} is more than the C(m, k) = {math.comb(self.m, self.k)} distinct probes")
        return self
