"""The run report (one static HTML file plus assets, built from run.json or as the DAG's last
stage) and the judging page (``spamflow judge``) that turns a person's verdicts into labels.

What a plugin returns from the ``spamflow_report_*`` hooks is defined here."""

from spamflow.report.evidence import Evidence, EvidenceSet
from spamflow.report.host_columns import FiredRule, HostColumns, HostScore
from spamflow.report.section import ReportSection

__all__ = ["Evidence", "EvidenceSet", "FiredRule", "HostColumns", "HostScore", "ReportSection"]
