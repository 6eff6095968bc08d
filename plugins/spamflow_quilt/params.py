"""The quilt detector's parameters, named as in the paper."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from spamflow.detector import DetectorParams
from spamflow.mr import Engine


class QuiltParams(DetectorParams):
    k: int = Field(5, ge=1, description="words per gram")
    m: int = Field(50, ge=2, description="a patch gram is in more than 1 and at most m pages")
    c: int = Field(4, ge=1, description="a quilt has at least c source pages")
    theta: float = Field(0.5, ge=0.0, le=1.0, description="a quilt has at least a theta fraction of patch grams")
    foreign: Literal["none", "domain", "ip"] = Field(
        "none", description="sources must be on another registered domain / IP (Section 3)")
    phi: float | None = Field(None, gt=0.0, le=1.0, description=(
        "if set, each kept source must newly cover at least a phi fraction of the page's patch grams "
        "(the paper's future work)"))
    engine: Engine = Field("auto", description=(
        "memory: the three jobs' arithmetic in this process, the rows between them in bucket files on local "
        "disk (bounded memory; ~2x less CPU than the jobs on one machine); mapreduce: the three mrjob jobs on "
        "mapreduce.runner; auto: mapreduce on a cluster runner (spark, hadoop, emr), else memory. Same quilts "
        "either way"))
    execution_keys: ClassVar[frozenset[str]] = frozenset({"engine"})
