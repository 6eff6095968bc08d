"""``stage.json`` and run.json record each stage's CPU time, the stage's own and its
subprocesses' (on a shared machine wall time says little): a stage that starts a process
burning CPU is charged with at least the CPU time that process measured of itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from spamflow.detector import RunSettings, Stage, StageContext, StageResult
from spamflow.planned import PlannedStage
from spamflow.stage_runner import run_stage

BURN = ("import json, time\nt = time.process_time()\nx = 0\n"
        "while time.process_time() - t < 0.3:\n    x += sum(range(1000))\n"
        "print(json.dumps(time.process_time()))\n")


class BurnsInAChild(Stage):
    name = "burner"
    requires = ()

    def run(self, ctx: StageContext) -> StageResult:
        child = subprocess.run([sys.executable, "-c", BURN], capture_output=True, text=True, check=True)
        (ctx.outdir / "child.json").write_text(child.stdout)
        return StageResult(outputs={"child": "child.json"})


def test_a_stage_is_charged_with_its_subprocesses_cpu_time(tmp_path):
    stage = PlannedStage(name="burner", stage_class=f"{__name__}:BurnsInAChild", params={}, requires={},
                         signature="0", directory=str(tmp_path / "burner-0"))
    record = run_stage(stage, {}, RunSettings())
    child_cpu = json.loads((Path(stage.directory) / "child.json").read_text())
    assert child_cpu >= 0.3
    assert record["cpu_seconds"] >= child_cpu, (record["cpu_seconds"], child_cpu)
    assert json.loads((Path(stage.directory) / "stage.json").read_text())["cpu_seconds"] == record["cpu_seconds"]
