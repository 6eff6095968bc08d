"""Moved to :mod:`spamflow.parse.warc_file` (one WARC file to page rows).

This path re-exports its public names so that plugins written before the move keep
working.  New code imports ``spamflow.parse.warc_file``."""

from spamflow.parse.warc_file import *  # noqa: F403
