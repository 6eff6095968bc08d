"""Atomic writes: the target holds the old content or the whole new one, never a part."""

from __future__ import annotations

import pytest

from spamflow.atomic import atomic_path, write_text_atomic


def test_success_replaces_the_target_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "out" / "scores.json"
    write_text_atomic(target, "old")
    write_text_atomic(target, "new")
    assert target.read_text() == "new"
    assert sorted(p.name for p in target.parent.iterdir()) == ["scores.json"]


def test_an_error_while_writing_keeps_the_old_target(tmp_path):
    target = tmp_path / "scores.json"
    target.write_text("old")
    with pytest.raises(RuntimeError, match="disk full"):
        with atomic_path(target) as tmp:
            tmp.write_text("half a fi")
            raise RuntimeError("disk full")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["scores.json"]
