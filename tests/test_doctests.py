"""The examples in docstrings are true: every module with a ``>>>`` example runs it."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules_with_examples() -> list[str]:
    names = []
    for base in (ROOT, ROOT / "plugins", ROOT / "workflows"):
        for path in sorted(base.glob("spamflow*/**/*.py")):
            if ">>>" in path.read_text(encoding="utf-8"):
                names.append(".".join(path.relative_to(base).with_suffix("").parts))
    return names


@pytest.mark.parametrize("module", _modules_with_examples())
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
