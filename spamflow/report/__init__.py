"""The run report (one static HTML file plus assets, built from run.json or as the DAG's last
stage) and the judging page (``spamflow judge``) that turns a person's verdicts into labels."""

from spamflow.report.section import ReportSection

__all__ = ["ReportSection"]
