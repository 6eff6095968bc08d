"""The parse stage as a map-only mrjob job: each input line is one WARC file's
:class:`~spamflow.parse.file_job.FileJob` (JSON); the mapper parses that file into its part
of the page table with the in-process stage's own function and writes one JSON line back
(counts, bad records, revisits), which the stage aggregates as it does its own results.

Counts also go to the job's counters (group ``spamflow parse``) for whoever watches a
cluster job.  Under ``--strict`` a bad record stops its file and comes back as an ``error``
line with the in-process message, so the stage fails with the same words on every runner.

On ``hadoop`` and ``emr`` the input is read with ``NLineInputFormat``, one line (one file)
per map task; Hadoop streaming then hands the mapper ``<offset>\\t<line>``.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO, cast

from mrjob.job import MRJob
from mrjob.protocol import RawValueProtocol

from spamflow.errors import BadInputError
from spamflow.parse.file_job import FileJob, error_line, result_line, run_file_job

COUNTER_GROUP = "spamflow parse"
NLINE_INPUT_FORMAT = "org.apache.hadoop.mapred.lib.NLineInputFormat"


class MRParse(MRJob):
    OUTPUT_PROTOCOL = RawValueProtocol
    # a retried or speculative copy of a task would write the same part file twice
    JOBCONF = {"mapreduce.map.speculative": "false"}

    def hadoop_input_format(self) -> str | None:
        # not on Spark: mrjob's Spark harness reads a Hadoop input format's key as the line
        return NLINE_INPUT_FORMAT if self.options.runner in ("hadoop", "emr") else None

    def mapper(self, _: None, line: str) -> Iterator[tuple[None, str]]:
        job = FileJob.from_json(line.rsplit("\t", 1)[-1])  # JSON has no raw tab; NLineInputFormat adds "<offset>\t"
        try:
            with _text_stderr():
                result = run_file_job(job)
        except BadInputError as exc:
            self.increment_counter(COUNTER_GROUP, "strict_failures", 1)
            yield None, error_line(job.part, job.location, str(exc))
            return
        self.increment_counter(COUNTER_GROUP, "files", 1)
        for key, value in sorted(result.counts.items()):
            self.increment_counter(COUNTER_GROUP, key, value)
        yield None, result_line(job.part, result)


@contextmanager
def _text_stderr() -> Iterator[None]:
    """``sys.stderr`` as text while a file is parsed: mrjob's inline runner sets it to the task's
    binary log file, and warcio's warnings (a record not followed by a newline) written there
    would raise, turning a readable record into an ``unreadable`` one."""
    err = sys.stderr
    if isinstance(err, io.TextIOBase):
        yield
        return
    binary = cast(BinaryIO, err)
    text = io.TextIOWrapper(binary, encoding="utf-8", errors="backslashreplace", write_through=True)
    sys.stderr = text
    try:
        yield
    finally:
        sys.stderr = err
        text.detach()  # leave the task's log file open


if __name__ == "__main__":
    MRParse.run()
