"""The mundane-page rules spin applies to campaigns: defined in core (spamflow/mundane.py),
where HSS reads them too; re-exported here for spin's existing imports."""

from spamflow.mundane import BOILERPLATE, HTTP_ERROR, REASONS, SOFT_404, Rules

__all__ = ["BOILERPLATE", "HTTP_ERROR", "REASONS", "SOFT_404", "Rules"]
