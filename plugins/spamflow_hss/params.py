"""The hss detector's parameters, named as in the paper (section 4.2 gives the defaults)."""

from __future__ import annotations

import math
from typing import ClassVar, Literal

from pydantic import Field, model_validator

from spamflow.mr import Engine
from spamflow.mundane import ErrorPageParams


class HSSParams(ErrorPageParams):
    n: int = Field(32, ge=1, description="characters per n-gram of the HTML noise (section 3.2)")
    m: int = Field(128, ge=1, le=4096, description="fingerprint dimensions (section 3.3)")
    k: int = Field(1, ge=1, description="dimensions per probe key (section 3.4)")
    p: int = Field(20, ge=1, description="probes: random k-subsets of the m dimensions (section 3.4)")
    t: int | Literal["auto"] = Field(35, description=(
        "check threshold: a pair is an edge if it matches on more than t of the m dimensions, Sim_b > t/m "
        "(section 3.4).  auto (not in the paper): the smallest t in [t_min, t_max] whose expected false edges per "
        "page, from the crawl's null distribution of Sim_b between pages of different registered domains, stay "
        "under false_edge_rate (auto_threshold.py, docs/hss.md)"))
    false_edge_rate: float = Field(0.01, gt=0, description=(
        "t: auto: the expected cross-domain edges per page the chosen t may let through (empirical tail of the "
        "null times the cross-domain candidate pairs per page)"))
    null_pairs: int = Field(1_000_000, ge=1, description=(
        "t: auto: cross-domain page pairs sampled (with a fixed seed) for the null distribution of Sim_b"))
    t_min: int = Field(8, ge=1, description="t: auto: the lowest t it may choose")
    t_max: int = Field(35, ge=1, description="t: auto: the highest t it may choose (the paper's 35)")
    noise: Literal["paper", "markup", "markup-urls"] = Field("markup-urls", description=(
        "markup-urls (not in the paper; the default): the noise inside tags, leaving out the punctuation of the "
        "text between them, with every URL attribute value cut to its first mark (an item's URL is data, not "
        "template) and line ends read as LF (markup_noise.py); joins a template's giant listing pages to it.  "
        "markup: the same without the URL cut and the LF reading (the default before; docs/hss.md, \"Giant "
        "listing pages\").  paper: the whole HTML noise (section 3.1); noise: paper with t: 35 and "
        "exclude_error_pages: false is the paper"))
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
        if self.t == "auto":
            if not self.t_min <= self.t_max <= self.m:
                raise ValueError(f"t: auto needs t_min <= t_max <= m={self.m}; got t_min={self.t_min}, "
                                 f"t_max={self.t_max}")
        elif self.t < 1:
            raise ValueError(f"t must be at least 1 (or auto); got t={self.t}")
        if self.k > self.m or (self.t != "auto" and self.t > self.m):
            raise ValueError(f"k and t must be at most m={self.m}; got k={self.k}, t={self.t}")
        if self.p > math.comb(self.m, self.k):
            raise ValueError(f"p={self.p} is more than the C(m, k) = {math.comb(self.m, self.k)} distinct probes")
        return self
