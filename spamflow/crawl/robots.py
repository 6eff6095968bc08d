"""robots.txt rules per host, with fetch outcomes handled as RFC 9309 section 2.3.1 says.

* 2xx: parse (Protego) the first 500 KiB (the RFC's minimum parsing limit);
* redirects: followed, at most 5, across hosts too (more: "unavailable");
* 4xx ("unavailable"): everything is allowed;
* 5xx or a network error ("unreachable"): everything is disallowed.

Rules are cached for the host for the rest of the crawl; the RFC's 24-hour cache limit is
honoured by refetching after ``ROBOTS_TTL`` seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

from protego import Protego

ROBOTS_MAX_BYTES = 500 * 1024
ROBOTS_MAX_REDIRECTS = 5
ROBOTS_TTL = 24 * 3600.0


@dataclass(frozen=True)
class RobotsRules:
    """What one host's robots.txt allows; ``outcome`` is parsed, unavailable, unreachable or off."""

    outcome: str
    parser: Protego | None = None
    fetched_at: float = 0.0

    def allowed(self, url: str, user_agent: str) -> bool:
        if self.outcome == "unreachable":
            return False
        if self.parser is None:
            return True
        return bool(self.parser.can_fetch(url, user_agent))

    def crawl_delay(self, user_agent: str) -> float | None:
        if self.parser is None:
            return None
        delay = self.parser.crawl_delay(user_agent)
        return float(delay) if delay is not None else None


def rules_from_response(status: int | None, body: bytes, now: float) -> RobotsRules:
    """The rules a robots.txt fetch gives: ``status`` None means a network error."""
    if status is None or status >= 500:
        return RobotsRules("unreachable", None, now)
    if 400 <= status < 500 or status >= 300:  # 3xx left over after the redirect limit: unavailable
        return RobotsRules("unavailable", None, now)
    text = body[:ROBOTS_MAX_BYTES].decode("utf-8", "replace")
    return RobotsRules("parsed", Protego.parse(text), now)


ALLOW_ALL = RobotsRules("off")
