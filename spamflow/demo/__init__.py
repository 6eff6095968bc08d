"""The ``spamflow demo`` web: a small, deterministic synthetic crawl with exact ground truth.

``build_web(seed)`` builds it in memory; ``write_demo(outdir, seed)`` writes it as WARC
files plus label tables and ``truth.json``.  See docs/demo.md.
"""

from .build import DemoHost, DemoPage, SyntheticWeb, build_web
from .warc_out import write_demo

__all__ = ["build_web", "write_demo", "SyntheticWeb", "DemoPage", "DemoHost"]
