"""Moved to :mod:`spamflow.parse.html_text` (HTML to title, words and links).

This path re-exports its public names so that plugins written before the move keep
working.  New code imports ``spamflow.parse.html_text``."""

from spamflow.parse.html_text import *  # noqa: F403
