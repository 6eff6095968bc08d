"""spamflow's Luigi workflows: the DAG built from a config, run locally or through luigid."""

from spamflow_workflows.dag import RunOutcome, run_for_command, run_pipeline
from spamflow_workflows.stage_task import StageTask

__all__ = ["RunOutcome", "StageTask", "run_for_command", "run_pipeline"]
