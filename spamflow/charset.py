"""Moved to :mod:`spamflow.parse.charset` (decoding HTML bodies).

This path re-exports its public names so that plugins written before the move keep
working.  New code imports ``spamflow.parse.charset``."""

from spamflow.parse.charset import *  # noqa: F403
