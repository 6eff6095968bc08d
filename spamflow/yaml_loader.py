"""The YAML loader for config files: PyYAML's SafeLoader with two differences.

Dates stay strings (``snapshot: 2026-01`` is a label, not a date), and a key given twice in
one mapping is an error: PyYAML silently keeps the last one, so a second ``workdir:`` or a
detector listed twice under ``detectors:`` would quietly replace the first.
"""

from __future__ import annotations

from typing import Any

import yaml

_MERGE_TAG = "tag:yaml.org,2002:merge"


class DuplicateKeyError(yaml.YAMLError):
    """A mapping gives one key twice; says the key's path and both lines (1-based)."""

    def __init__(self, path: tuple[str, ...], first_line: int, line: int) -> None:
        self.path, self.first_line, self.line = path, first_line, line
        where = f"twice on line {line}" if first_line == line else f"at lines {first_line} and {line}"
        super().__init__(f"line {line}: {'.'.join(path)}: duplicate key, given {where}; "
                         "give each key once (YAML would silently keep only the last)")


class ConfigLoader(yaml.SafeLoader):
    """SafeLoader that keeps dates as text and refuses duplicate mapping keys."""

    _root: yaml.Node | None = None

    def construct_document(self, node: yaml.Node) -> Any:
        self._root = node  # to name the path of a duplicate key
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, yaml.Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:  # `<<: *anchor` merges; explicit keys may override it
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.setdefault(key, key_node)
            except TypeError:  # an unhashable key: SafeLoader reports it
                continue
            if first is not key_node:
                path = (*_path_to(self._root, node), str(key_node.value))
                raise DuplicateKeyError(path, first.start_mark.line + 1, key_node.start_mark.line + 1)
        return super().construct_mapping(node, deep=deep)


ConfigLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _path_to(root: yaml.Node | None, target: yaml.Node) -> tuple[str, ...]:
    """The keys (and list indexes) from ``root`` down to ``target``; () if not found."""
    stack: list[tuple[yaml.Node, tuple[str, ...]]] = [(root, ())] if root is not None else []
    visited: set[int] = set()
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        if id(node) in visited:  # aliases can make the node graph cyclic
            continue
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            stack.extend((value, (*path, str(key.value))) for key, value in node.value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((value, (*path, str(i))) for i, value in enumerate(node.value))
    return ()
