"""One section of the run report: what a plugin returns from ``spamflow_report_section``."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_ORDER = 100
"""Where a section goes when it names no ``order``: after the built-in detectors' sections,
which use 10 to 70 (so a plugin written before ``order`` existed keeps its place)."""


@dataclass(frozen=True)
class ReportSection:
    """A titled block of the report.  ``html`` is inserted as is (escape your own data);
    images it references must be written into the ``assets`` folder the hook was given and
    referenced as ``assets/<file>``."""

    anchor: str
    """The section's id in the page (``#anchor``), unique in the report."""
    title: str
    html: str
    order: int = DEFAULT_ORDER
    """Sections are shown by ``order``, ties in run order, after the run summary and the host
    table (which always come first)."""
