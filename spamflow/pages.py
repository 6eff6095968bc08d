"""Moved to :mod:`spamflow.parse.pages` (the page record).

This path re-exports its public names so that plugins written before the move keep
working.  New code imports ``spamflow.parse.pages``."""

from spamflow.parse.pages import *  # noqa: F403
