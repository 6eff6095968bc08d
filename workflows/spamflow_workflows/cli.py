"""The composition root: the ``spamflow`` command line with the Luigi DAG as its runner.

Core builds the parsers and commands (:mod:`spamflow.cli`) and runs stages only through the
runner it is given; this module is the one place that joins the two, so the layers point down."""

from __future__ import annotations

import sys

from spamflow import cli
from spamflow_workflows.dag import run_pipeline


def main(argv: list[str] | None = None) -> int:
    return cli.main(argv, runner=run_pipeline)


if __name__ == "__main__":
    sys.exit(main())
