"""Running mrjob jobs from stages: one driver picks the runner and ships the code."""

from spamflow.mr.driver import run_job
from spamflow.mr.engine import Engine, use_mapreduce

__all__ = ["Engine", "run_job", "use_mapreduce"]
