"""Moved to :mod:`spamflow.parse.warc_records`.

This path re-exports its public names so that plugins written before the move keep
working.  New code imports ``spamflow.parse.warc_records``."""

from spamflow.parse.warc_records import *  # noqa: F403
