"""Running mrjob jobs from stages: one driver picks the runner and ships the code."""

from spamflow.mr.driver import run_job

__all__ = ["run_job"]
