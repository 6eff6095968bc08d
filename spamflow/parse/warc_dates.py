"""WARC-Date values as crawlers really wrote them, read to aware UTC datetimes.

Most files carry ISO 8601 dates (``2020-08-08T17:27:41Z``).  ClueWeb09's Nutch writer
(WARC/0.18) printed the day with Java's ``DD`` pattern, the day of the *year*, not of the
month: ``2008-10-294T05:21:46-0700`` is day 294 of 2008, 20 October.  Such a date is
repaired only when it is unambiguous: the ISO reading is impossible (a day past the
month's end) and the day of the year falls in the month the date names.  A valid ISO
date is always taken as written (under the ``DD`` bug it could only differ in January,
where both readings agree).  See ``docs/parse.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

DAY_OF_YEAR = "day-of-year"
"""The ``repair`` of a date whose day field is the day of the year (ClueWeb09)."""

_ORDINAL_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2,3})(T.*)?$")


@dataclass(frozen=True)
class WarcDate:
    """A parsed WARC-Date: the time (None if unreadable) and how it was repaired, if it was."""

    value: datetime | None
    repair: str | None = None


def parse_warc_date(text: str | None) -> WarcDate:
    """Read a WARC-Date; see the module docstring for the one repair made.

    >>> parse_warc_date("2008-10-294T05:21:46-0700")
    WarcDate(value=datetime.datetime(2008, 10, 20, 12, 21, 46, tzinfo=datetime.timezone.utc), repair='day-of-year')
    >>> parse_warc_date("2008-10-29T05:21:46-0700").repair is None
    True
    """
    if not text or not text.strip():
        return WarcDate(None)
    text = text.strip()
    iso = _iso(text)
    if iso is not None:
        return WarcDate(iso)
    match = _ORDINAL_DAY.match(text)
    if match is None:
        return WarcDate(None)
    year, month, ordinal, rest = int(match[1]), int(match[2]), int(match[3]), match[4] or ""
    if year < 1 or ordinal < 1:
        return WarcDate(None)
    try:
        day = date(year, 1, 1) + timedelta(days=ordinal - 1)
    except OverflowError:
        return WarcDate(None)
    if day.year != year or day.month != month:
        return WarcDate(None)  # neither reading makes sense: not repaired
    repaired = _iso(day.isoformat() + rest)
    return WarcDate(repaired, DAY_OF_YEAR if repaired is not None else None)


def _iso(text: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
