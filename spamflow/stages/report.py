"""The report stage: the DAG's last step, one static HTML report of every selected detector."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field

from spamflow.detector import DetectorParams, Stage, StageContext, StageResult


class ReportParams(DetectorParams):
    max_items: int = Field(50, ge=1)
    """Quilts, clusters and campaigns shown with their evidence, per kind (the rest are counted)."""
    max_hosts: int = Field(5000, ge=1)
    """Rows of the host table (highest score, or most detectors fired, first; the rest counted)."""


class ReportStage(Stage):
    name = "report"
    version = "2"  # 2: host table shows a page title per host
    description = "static HTML report of the run: summary, host table, evidence, plots"
    Params = ReportParams

    @classmethod
    def upstream(cls, params: BaseModel, selected: Mapping[str, type[Stage]]) -> tuple[str, ...]:
        """The page table and every selected detector."""
        return ("parse", *selected)

    def run(self, ctx: StageContext) -> StageResult:
        from spamflow.plugins import get_plugins
        from spamflow.report.records import records_from_inputs
        from spamflow.report.render import write_report

        params = ctx.params
        assert isinstance(params, ReportParams)
        from spamflow.storage import mirrored_url

        stages = records_from_inputs(ctx.inputs, ctx.outdir.parent)
        workdir = ctx.outdir.parent.parent  # a remote workdir's local cache is titled by its URL
        path, counts = write_report(stages, ctx.outdir, title=mirrored_url(workdir) or str(workdir),
                                    max_items=params.max_items, max_hosts=params.max_hosts, plugins=get_plugins())
        return StageResult(outputs={"report": path.name, "assets": "assets"}, counts=counts)
