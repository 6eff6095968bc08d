"""The spin detector's parameters (DSpin's names where the paper has them)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator

from spamflow.detector import RunSettings
from spamflow.mundane import ErrorPageParams

PACKAGE_PREFIX = "package:"


def resolve_dictionary_path(entry: str, base_dir: Path | None) -> Path:
    """``package:pkg.name/rel/path`` -> a file shipped inside an importable package (the demo's
    dictionary); otherwise a path, relative to ``base_dir`` (the config file's folder)."""
    if entry.startswith(PACKAGE_PREFIX):
        package, _, rel = entry[len(PACKAGE_PREFIX):].partition("/")
        try:
            return Path(str(resources.files(package).joinpath(rel)))
        except ModuleNotFoundError as exc:
            raise ValueError(f"{entry!r}: no importable package {package!r}") from exc
    path = Path(entry).expanduser()
    return path if path.is_absolute() or base_dir is None else (base_dir / path).resolve()


SpinEngine = Literal["auto", "memory", "direct", "mapreduce"]


def spin_engine(engine: SpinEngine, settings: RunSettings, size: int, above: int, words: int = 0,
                direct_max_words: int | None = None) -> str:
    """The engine a snapshot of ``size`` pages and about ``words`` words runs on: the one asked
    for, or for ``auto`` ``mapreduce`` on a cluster runner (spark, hadoop, emr) or above
    ``direct_max_words`` words (the direct engine's merge of its numbering grows with the
    snapshot's distinct immutables), ``direct`` above ``above`` pages, ``memory`` otherwise.

    >>> [spin_engine("auto", RunSettings(runner=r), n, above)
    ...  for r, n, above in (("local", 10, 5000), ("local", 6000, 5000), ("local", 10, 0), ("spark", 10, 0))]
    ['memory', 'direct', 'direct', 'mapreduce']
    >>> spin_engine("auto", RunSettings(runner="local"), 6000, 0, words=2_000_000, direct_max_words=1_000_000)
    'mapreduce'
    """
    if engine != "auto":
        return engine
    if settings.on_cluster or (direct_max_words is not None and words > direct_max_words):
        return "mapreduce"
    return "direct" if size > above else "memory"


class SpinParams(ErrorPageParams):
    dictionary: list[str] = Field(min_length=1, description=(
        "synonym dictionary files in the spinners' 'head|syn|syn' format, merged; relative paths are "
        "relative to the config file, 'package:PKG/PATH' names a file shipped in a Python package"))
    phrase_match: Literal["longest", "paper"] = Field("longest", description=(
        "partition scan: the longest dictionary entry at each word, or the paper's (a word in the "
        "dictionary is mutable alone; only other words are tried as phrase starts)"))
    immutable_threshold: float = Field(0.6, gt=0.0, le=1.0, description=(
        "a pair is spun if the Jaccard coefficient of its immutable sets is at least this ..."))
    verifier_threshold: float = Field(0.5, ge=0.0, le=1.0, description=(
        "... and the mutable verifier's overlap is at least this (0.5, measured: keeps spun pairs when the "
        "detector's dictionary differs from the spinner's; the paper's 0.7 suits the spinner's own dictionary)"))
    max_pages: int = Field(10000, ge=2, description=(
        "immutables on more pages than this are never indexed for candidate pairs (too popular; a "
        "campaign with more copies than this is missed)"))
    min_shared: int = Field(3, ge=1, description=(
        "k: candidate pairs share at least k of their rarest immutables (each page indexes k - 1 more, so "
        "no pair above immutable_threshold is lost; larger k, fewer candidates)"))
    promoted_fraction: float = Field(0.5, gt=0.0, le=1.0, description=(
        "a host is a campaign's promoted site if at least this fraction of the campaign's pages "
        "link to it from another registered domain"))
    min_domains: int = Field(2, ge=1, description=(
        "a cluster of pairs is a campaign only if its pages span at least this many registered domains, "
        "and a promoted site must be linked from copies on at least this many registered domains (DSpin's "
        "campaigns promote sites across many; one site's duplicate pages are not a campaign). Clusters "
        "below it are dropped and counted. 1: every cluster is a campaign (the paper's behaviour)"))
    min_article_words: int = Field(30, ge=0, description=(
        "a page with fewer article words (its words without its link anchors: what DSpin compares) is "
        "boilerplate only and never forms or joins a campaign; counted. 0: the paper's behaviour"))
    engine: SpinEngine = Field("auto", description=(
        "memory: every page of a snapshot in this process (fast, ~145 KB per real page); mapreduce: "
        "pages streamed, partitions on disk, the candidate jobs and the verifier as a join job (bounded memory); "
        "direct: pages streamed as on mapreduce, the three jobs' arithmetic in this process over integer "
        "immutable ids, rows between the steps on local disk (bounded memory, no task processes); auto: "
        "mapreduce on a cluster runner (spark, hadoop, emr) or above direct_max_words words, else direct "
        "above mapreduce_above pages and memory below. Same output either way"))
    mapreduce_above: int = Field(0, ge=0, description=(
        "engine auto: snapshots with more pages than this use the direct engine, the others memory (0, the "
        "default: direct for every snapshot, the cheaper of the two at every size measured, the demo's "
        "included); on a cluster runner every snapshot uses the MapReduce one"))
    direct_max_words: int = Field(240_000_000, ge=0, description=(
        "engine auto: a snapshot with more words than this (the page table's, estimated from its Parquet "
        "metadata) uses the MapReduce engine instead of direct, whose memory still grows with the snapshot's "
        "distinct immutables when it merges their numbering's generations (3.64 GB at 2.23 x 10^8 words, the "
        "scale benchmark's 5 x 10^5-page snapshots; 6.3-7.5 GB there before the generations)"))
    execution_keys: ClassVar[frozenset[str]] = frozenset({"engine", "mapreduce_above", "direct_max_words"})

    @field_validator("dictionary")
    @classmethod
    def _files_exist(cls, value: list[str], info: ValidationInfo) -> list[str]:
        base = (info.context or {}).get("config_dir")
        out = []
        for entry in value:
            path = resolve_dictionary_path(entry, Path(base) if base else None)
            if not path.is_file():
                raise ValueError(f"synonym dictionary {entry!r} not found (looked for {path})")
            out.append(entry if entry.startswith(PACKAGE_PREFIX) else str(path))
        return out
