"""The ``input.crawl`` section of the YAML config (``docs/crawl.md`` is the reference)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

import spamflow
from spamflow.crawl.steer import SteerSettings
from spamflow.crawl.urls import normalize
from spamflow.errors import ConfigError

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_PIN = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:]+\])(?::(\d{1,5}))?$")
DEFAULT_USER_AGENT = f"spamflow/{spamflow.__version__} (web spam research crawler)"


class CrawlSettings(BaseModel):
    """One crawl (one snapshot).  Delays and timeouts are in seconds."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    snapshot: str = "crawl"
    """Names the crawl: WARC files are <snapshot>-NNNNN.warc.gz, and it is the snapshot label downstream."""
    seeds: list[str] = []
    """Seed URLs."""
    seed_file: str | None = None
    """A file of seed URLs, one per line (# comments), relative to the config file."""
    scope: Literal["hosts", "domains", "any"] = "hosts"
    """Which discovered URLs may be followed: those on the seeds' hosts, their registered domains, or any."""
    filter: str | None = None
    """A BUbiNG filter expression URLs must also pass, e.g. 'DuplicateSegmentsLessThan(3) and NoMoreSlashesThan(12)'."""
    resolve: dict[str, str] = {}
    """host -> address or address:port, used instead of DNS (as curl --resolve / --connect-to)."""
    max_pages: int = Field(100_000, ge=1)
    """Stop after this many fetches (robots.txt not counted)."""
    max_pages_per_host: int = Field(10_000, ge=1)
    """At most this many URLs are accepted per host (scheme and authority)."""
    max_depth: int = Field(20, ge=0)
    """Links followed from the seeds at most this many times (redirects do not add depth)."""
    max_redirects: int = Field(5, ge=0)
    """Redirect hops followed from one URL."""
    host_delay: float = Field(2.0, ge=0)
    """Seconds between the end of one request to a host and the start of the next to it."""
    ip_delay: float = Field(0.5, ge=0)
    """Seconds between the end of one request to an IP address and the start of the next to it."""
    max_crawl_delay: float = Field(30.0, ge=0)
    """A robots.txt Crawl-delay raises the host delay up to this."""
    robots: bool = True
    """Obey robots.txt (RFC 9309)."""
    concurrency: int = Field(64, ge=1)
    """Requests in flight at once (BUbiNG's fetching threads); at most one per IP."""
    connect_timeout: float = Field(10.0, gt=0)
    read_timeout: float = Field(30.0, gt=0)
    """Longest wait for the next bytes of a response."""
    fetch_timeout: float = Field(60.0, gt=0)
    """Longest one fetch may take; a slower body is kept up to there and marked WARC-Truncated: time."""
    max_body_bytes: int = Field(10_000_000, ge=1024)
    """Longer bodies are cut here and marked WARC-Truncated: length."""
    user_agent: str = DEFAULT_USER_AGENT
    verify_tls: bool = True
    """Check HTTPS certificates; false also fetches sites with self-signed or expired ones (common on spam hosts)."""
    embeds: bool = False
    """Also fetch <img>, <script> and <link> targets."""
    near_duplicates: bool = True
    """Do not follow the links of a page whose content signature was seen before (it is still stored)."""
    warc_max_bytes: int = Field(1_000_000_000, ge=1_000_000)
    """Start a new WARC file once the current one is this large."""
    frontier_head: int = Field(32, ge=1)
    """URLs per host kept in memory at the head of its queue; the rest spill to disk."""
    frontier_block: int = Field(256, ge=1)
    """URLs per block written to the spill file."""
    steer: SteerSettings | None = None
    """Limit hosts an earlier run found spammy (see "Steering by an earlier run's scores" in docs/crawl.md)."""

    @field_validator("snapshot")
    @classmethod
    def _label(cls, v: str) -> str:
        if not _LABEL.match(v):
            raise ValueError(f"snapshot {v!r} must match {_LABEL.pattern} (it names files)")
        return v

    @field_validator("resolve")
    @classmethod
    def _pins(cls, v: dict[str, str]) -> dict[str, str]:
        for host, pin in v.items():
            if not _PIN.match(pin):
                raise ValueError(f"resolve: {host}: {pin!r} is not an IP address or address:port")
        return {h.lower().rstrip("."): p for h, p in v.items()}


def read_seeds(settings: CrawlSettings, base_dir: Path) -> list[str]:
    """The seed URLs: ``seeds`` then the lines of ``seed_file`` (blank lines and # comments skipped)."""
    seeds = list(settings.seeds)
    if settings.seed_file:
        path = base_dir / settings.seed_file
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ConfigError(f"input.crawl.seed_file: cannot read {path}: {exc.strerror or exc}") from None
        seeds += [s.strip() for s in lines if s.strip() and not s.lstrip().startswith("#")]
    if not seeds:
        raise ConfigError(f"input.crawl ({settings.snapshot}): give seeds (a list of URLs) or a seed_file with some")
    for seed in seeds:
        if normalize(seed) is None:
            raise ConfigError(f"input.crawl: seed {seed!r} is not an http(s) URL with a host")
    return seeds


def parse_pin(pin: str) -> tuple[str, int | None]:
    """``"127.0.0.2:8080"`` -> ("127.0.0.2", 8080); ``"127.0.0.2"`` -> ("127.0.0.2", None)."""
    m = _PIN.match(pin)
    assert m, pin
    return m.group(1).strip("[]"), int(m.group(2)) if m.group(2) else None
