"""Steering a crawl by an earlier run's scores (``input.crawl.steer``, docs/crawl.md).

An earlier run says which hosts looked like spam: its classifier's host scores, or any
detector's per-host evidence.  Each signal is named ``stage.output.column`` in the config, and
read as any third-party tool would (run.json -> the stage's declared output -> Parquet on
disk): no plugin is imported and none is named here, so a third-party detector's column
steers a crawl as the built-in ones do.  The signals become a :class:`Steering` policy the
crawler asks:

* a *steered* host (a signal at or above ``threshold``) gets ``spam_budget`` URLs instead of
  ``max_pages_per_host`` (0: it is not crawled at all);
* a host the earlier run never saw, on the registered domain of a steered host, is a *new
  subdomain*: at most ``subdomain_cap`` of them per domain are crawled, the rest refused;
* a link found on a steered host costs ``1 / link_weight`` depth levels instead of one (0:
  its links are not followed), so ``max_depth`` reaches less far from spam.
* a URL found on a steered host waits in its host's low-priority lane (the crawler asks
  :meth:`Steering.low_lane`), behind the URLs honest pages link to.

Every decision about a host is one line of ``steer.jsonl`` (see :meth:`Steering.record`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from spamflow.domains import registered_domain
from spamflow.errors import ConfigError

STEER_COUNTS = ("hosts_steered", "hosts_steer_skipped", "subdomains_admitted", "subdomains_capped",
                "urls_steer_over_budget", "urls_steer_skipped", "urls_steer_subdomain_capped",
                "links_steer_not_followed", "urls_steer_low_lane", "pages_steer_low_lane",
                "urls_steer_promoted")
"""The counts a steered crawl always reports (0 or not), copied per snapshot into run.json."""

SIGNAL_PATTERN = r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$"
"""A signal: ``stage.output.column``, a column of a per-(snapshot, host) table the stage declares."""


def signal_parts(signal: str) -> tuple[str, str, str]:
    """(stage, output, column) of ``stage.output.column``."""
    stage, output, column = signal.split(".")
    return stage, output, column


class SteerSettings(BaseModel):
    """``input.crawl.steer``: which earlier run, which of its signals, and what they change."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    run: str
    """The earlier run: its workdir or its run.json (relative to the config file)."""
    threshold: float = Field(0.5, ge=0, le=1)
    """A host is steered if one of its ``evidence`` signals is at least this."""
    evidence: list[Annotated[str, Field(pattern=SIGNAL_PATTERN)]] = Field(["classify.scores.score"], min_length=1)
    """Which signals count, each ``stage.output.column`` (docs/crawl.md lists the built-in ones)."""
    snapshots: list[str] = []
    """Read only these snapshots' rows of the run (default: all; a host's highest value counts)."""
    spam_budget: int = Field(1, ge=0)
    """URLs accepted per steered host (0: the host is skipped)."""
    subdomain_cap: int = Field(1, ge=0)
    """New subdomains (hosts the run never saw) crawled per registered domain of a steered host."""
    link_weight: float = Field(0.5, ge=0, le=1)
    """A link found on a steered host costs 1/link_weight depth levels (rounded up); 0: not followed."""


@dataclass(frozen=True)
class HostEvidence:
    """Why a host is steered: each signal at or above the threshold, with its value."""

    host: str
    reasons: dict[str, float]  # evidence -> its highest value over the snapshots read


@dataclass
class Steering:
    """The policy of one crawl, from :func:`load_steering`."""

    settings: SteerSettings
    steered: dict[str, HostEvidence]
    """host name -> why (only hosts at or above the threshold)."""
    known: set[str]
    """Every host the run's tables hold (in the snapshots read): a host not here is new."""
    source: dict[str, str] = field(default_factory=dict)
    """evidence -> the file it was read from (for the record)."""
    admitted: dict[str, set[str]] = field(default_factory=dict)
    """registered domain -> its new subdomains this crawl admitted (at most ``subdomain_cap``)."""
    domains: set[str] = field(init=False, default_factory=set)
    """The registered domains of the steered hosts."""

    def __post_init__(self) -> None:
        self.domains = {registered_domain(h) for h in self.steered}

    def budget(self, host: str) -> int | None:
        """URLs this host may have accepted, or None for no steering limit."""
        return self.settings.spam_budget if host in self.steered else None

    def link_depth(self, host: str) -> int | None:
        """Depth levels a link found on ``host`` costs; None: do not follow it."""
        if host not in self.steered:
            return 1
        w = self.settings.link_weight
        return None if w == 0 else math.ceil(round(1 / w, 9))

    def low_lane(self, host: str) -> bool:
        """Whether the links found on ``host`` go to their hosts' low-priority lanes."""
        return host in self.steered

    def new_subdomain_domain(self, host: str) -> str | None:
        """The steered registered domain ``host`` is a new subdomain of, or None."""
        if host in self.known or host in self.steered:
            return None
        domain = registered_domain(host)
        return domain if domain in self.domains else None

    def admit(self, host: str) -> bool:
        """Whether a host met for the first time may be crawled (the subdomain cap); an admitted
        new subdomain is remembered, so the cap counts hosts, each once."""
        domain = self.new_subdomain_domain(host)
        if domain is None:
            return True
        admitted = self.admitted.setdefault(domain, set())
        if host in admitted:
            return True
        if len(admitted) >= self.settings.subdomain_cap:
            return False
        admitted.add(host)
        return True

    def record(self, host: str, action: str) -> dict[str, Any]:
        """The steer.jsonl line for ``host``: ``action`` is ``budget``, ``skip``,
        ``new_subdomain`` (admitted under the cap) or ``subdomain_capped``."""
        row: dict[str, Any] = {"host": host, "action": action}
        if host in self.steered:
            row["budget"] = self.settings.spam_budget
            row["reasons"] = dict(sorted(self.steered[host].reasons.items()))
            row["link_depth"] = self.link_depth(host)
        else:
            domain = registered_domain(host)
            row["domain"] = domain
            row["cap"] = self.settings.subdomain_cap
            row["steered_hosts_of_domain"] = sorted(h for h in self.steered if registered_domain(h) == domain)
        row["threshold"] = self.settings.threshold
        return row


def manifest_path(run: str, base_dir: Path) -> Path:
    """run.json of ``run`` (a workdir or run.json itself), relative to ``base_dir``."""
    path = base_dir / run
    return path / "run.json" if path.is_dir() else path


def stage_output(manifest: dict[str, Any], stage: str, output: str, where: str) -> Path:
    """The path run.json declares for ``stage``'s ``output``; a ConfigError naming what is missing."""
    entry = (manifest.get("stages") or {}).get(stage)
    if not isinstance(entry, dict) or not entry.get("complete"):
        raise ConfigError(f"{where}: the run has no complete stage {stage!r} "
                          f"(stages: {', '.join(sorted(manifest.get('stages') or {})) or 'none'})")
    path = (entry.get("outputs") or {}).get(output)
    if not path:
        raise ConfigError(f"{where}: stage {stage!r} of the run declares no output {output!r}")
    if not Path(path).exists():
        raise ConfigError(f"{where}: {stage}.{output} of the run is {path}, which does not exist")
    return Path(path)


def steer_files(settings: SteerSettings, base_dir: Path, where: str) -> dict[str, Path]:
    """The files steering reads: run.json and each evidence table (the crawl's identity hashes them)."""
    import json

    path = manifest_path(settings.run, base_dir)
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{where}.run: cannot read the run's {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{where}.run: {path} is not JSON: {exc}") from None
    if not isinstance(manifest, dict):
        raise ConfigError(f"{where}.run: {path} is not a run.json (no stages)")
    files = {"run": path}
    for evidence in settings.evidence:
        stage, output, _column = signal_parts(evidence)
        files[evidence] = stage_output(manifest, stage, output, f"{where}.evidence {evidence} ({path})")
    return files


def load_steering(settings: SteerSettings, base_dir: Path, where: str = "input.crawl.steer") -> Steering:
    """Read the run's evidence tables into the policy; a ConfigError names the file and the
    missing stage, output or column."""
    import pyarrow.parquet as pq

    files = steer_files(settings, base_dir, where)
    best: dict[str, dict[str, float]] = {}
    known: set[str] = set()
    wanted = set(settings.snapshots)
    for evidence in settings.evidence:
        column = signal_parts(evidence)[2]
        path = files[evidence]
        try:
            table = pq.read_table(path, columns=["snapshot", "host", column])
        except (OSError, ValueError, KeyError) as exc:  # pyarrow: missing column, not Parquet
            raise ConfigError(f"{where}.evidence {evidence}: cannot read snapshot, host, {column} "
                              f"from {path}: {exc}") from None
        for snapshot, host, value in zip(*(table.column(c).to_pylist() for c in ("snapshot", "host", column))):
            if (wanted and snapshot not in wanted) or not host:
                continue
            host = str(host).lower().rstrip(".")
            known.add(host)
            if value is None or math.isnan(float(value)) or float(value) < settings.threshold:
                continue
            reasons = best.setdefault(host, {})
            reasons[evidence] = max(float(value), reasons.get(evidence, -math.inf))
    if wanted and not known:
        raise ConfigError(f"{where}.snapshots: no row of the run's {', '.join(settings.evidence)} tables is in "
                          f"{sorted(wanted)} ({files['run']})")
    steered = {h: HostEvidence(h, r) for h, r in best.items()}
    return Steering(settings, steered, known, {k: str(v) for k, v in files.items()})
