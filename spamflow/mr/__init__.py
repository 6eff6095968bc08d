"""Running mrjob jobs from stages: one driver picks the runner and ships the code."""

from spamflow.mr.driver import run_job, run_job_compact, run_job_lean
from spamflow.mr.engine import Engine, use_mapreduce

__all__ = ["Engine", "run_job", "run_job_compact", "run_job_lean", "use_mapreduce"]
