"""Stage ``demo``: write the bundled synthetic web (``spamflow.demo``) as WARC files."""

from __future__ import annotations

from spamflow.detector import DetectorParams, Stage, StageContext, StageResult


class DemoParams(DetectorParams):
    seed: int = 0


class DemoWebStage(Stage):
    name = "demo"
    version = "2"  # 2: labels/pages.tsv lists the revisit pages (parse makes them pages)
    description = "Generate the synthetic demo web with ground truth, as WARC files."
    Params = DemoParams
    requires = ()

    def run(self, ctx: StageContext) -> StageResult:
        from spamflow.demo import write_demo

        assert isinstance(ctx.params, DemoParams)
        summary = write_demo(ctx.outdir / "web", seed=ctx.params.seed)
        counts = {f"html_responses_{snap}": n for snap, n in summary["html_responses"].items()}
        counts.update({f"pages_{snap}": n for snap, n in summary["pages"].items()})
        counts["warc_bytes"] = summary["warc_bytes"]
        counts.update({f"hosts_{kind}": n for kind, n in summary["hosts_by_kind"].items()})
        return StageResult(
            outputs={"warc": "web/warc", "labels": "web/labels", "truth": "web/truth.json"},
            counts=counts,
        )
