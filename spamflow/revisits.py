"""Moved to :mod:`spamflow.parse.revisits`.

This path re-exports its public names so that plugins written before the move keep
working.  New code imports ``spamflow.parse.revisits``."""

from spamflow.parse.revisits import *  # noqa: F403
