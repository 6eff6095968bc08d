"""The content detector's parameters, named as in the paper where it names them."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from spamflow.detector import DetectorParams, InputPath
from spamflow.mr import Engine


class ContentParams(DetectorParams):
    max_pages: int = Field(400, ge=1, description="featurise at most this many pages per host and snapshot "
                                                  "(the paper's sample of 400)")
    query_terms: InputPath | None = Field(None, description="file of query terms, one per line, most popular "
                                                            "first; null: the list shipped with the plugin")
    vocabulary_size: int = Field(10_000, ge=1, description="BM25 vocabulary: the most frequent terms ...")
    min_df: float = Field(0.1, ge=0.0, le=1.0, description="... found in at least this fraction of virtual documents")
    max_df: float = Field(0.5, ge=0.0, le=1.0, description="... and at most this fraction")
    k1: float = Field(1.2, ge=0.0, description="BM25 term-frequency saturation")
    b: float = Field(0.75, ge=0.0, le=1.0, description="BM25 length normalisation")
    decay_lambda: float = Field(0.5, description="λ, the decay rate of the Decay temporal feature")
    decay_weight: Literal["as_printed", "decaying"] = Field(
        "as_printed", description="Decay weight λe^{λ(Tmax-T)} as the paper prints it, or λe^{-λ(Tmax-T)}")
    corpus_stats: InputPath | None = Field(None, description=(
        "corpus_stats.json of an earlier run: featurise against its popular words, vocabulary and IDF "
        "instead of this corpus's"))
    engine: Engine = Field("auto", description=(
        "memory: in this process; mapreduce: the corpus statistics, page measures and host features as "
        "two mrjob jobs on mapreduce.runner; auto: mapreduce on a cluster runner or above mapreduce_above pages"))
    mapreduce_above: int | None = Field(5_000_000, ge=0, description=(
        "engine auto: run the jobs when the page table has more pages than this (null: only on a cluster runner)"))
    execution_keys: ClassVar[frozenset[str]] = frozenset({"engine", "mapreduce_above"})

    @model_validator(mode="after")
    def _df_range(self) -> ContentParams:
        if self.min_df > self.max_df:
            raise ValueError(f"min_df ({self.min_df}) is above max_df ({self.max_df})")
        return self
