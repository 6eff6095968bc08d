"""The YAML loader for config files: PyYAML's SafeLoader with two differences.

Dates stay strings (``snapshot: 2026-01`` is a label, not a date), and a key given twice in
one mapping is an error: PyYAML silently keeps the last one, so a second ``workdir:`` or a
detector listed twice under ``detectors:`` would quietly replace the first.

:func:`check_shape` reads the file's events once before anything is built and refuses two
shapes built to hurt: aliases (``*name``) that would repeat more than :data:`MAX_ALIAS_NODES`
values in all (the "billion laughs": nine lines that expand to 10^9 strings), and collections
nested deeper than :data:`MAX_DEPTH` (PyYAML builds them recursively and fails with a
``RecursionError`` at a few hundred levels).  Both are fixed bounds, not config keys: the
config cannot loosen the check that guards reading it.
"""

from __future__ import annotations

from typing import Any

import yaml

_MERGE_TAG = "tag:yaml.org,2002:merge"

MAX_ALIAS_NODES = 10_000
"""Most values (scalars, lists, mappings) that aliases may repeat in one config, counted as expanded."""
MAX_DEPTH = 100
"""Deepest nesting of lists and mappings in one config."""


class ShapeError(yaml.YAMLError):
    """The YAML is built to cost far more than a config needs; says the line (1-based) and why."""

    def __init__(self, line: int, why: str) -> None:
        self.line = line
        super().__init__(f"line {line}: {why}")


def check_shape(text: str) -> None:
    """Refuse aliases that expand past :data:`MAX_ALIAS_NODES` values and nesting deeper than
    :data:`MAX_DEPTH`, from PyYAML's events (its parser keeps a stack, it does not recurse):
    no alias is expanded and nothing is built.  Invalid YAML is left for the loader to report."""
    sizes: dict[str, int] = {}  # anchor -> values it stands for, once complete
    open_anchors: set[str] = set()
    stack: list[list[Any]] = []  # open collections: [values so far, anchor]
    repeated = 0
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            line = event.start_mark.line + 1 if event.start_mark else 0
            if isinstance(event, yaml.CollectionStartEvent):
                if len(stack) >= MAX_DEPTH:
                    raise ShapeError(line, f"lists and mappings nested more than {MAX_DEPTH} deep; "
                                           "a spamflow config needs a handful of levels")
                if event.anchor:
                    open_anchors.add(event.anchor)
                stack.append([1, event.anchor])
                continue
            if isinstance(event, yaml.CollectionEndEvent):
                size, anchor = stack.pop()
                if anchor:
                    open_anchors.discard(anchor)
                    sizes[anchor] = size
            elif isinstance(event, yaml.ScalarEvent):
                size = 1
                if event.anchor:
                    sizes[event.anchor] = 1
            elif isinstance(event, yaml.AliasEvent):
                if event.anchor in open_anchors:
                    raise ShapeError(line, f"alias *{event.anchor} refers to a list or mapping that contains it; "
                                           "a config cannot be infinite")
                size = sizes.get(event.anchor or "", 0)  # an undefined alias is the loader's error to report
                repeated += size
                if repeated > MAX_ALIAS_NODES:
                    raise ShapeError(line, f"alias *{event.anchor}: the aliases of this file repeat more "
                                           f"than {MAX_ALIAS_NODES} values in all (the limit: a 'billion laughs' "
                                           "file of a few lines expands to gigabytes); write the values out, "
                                           "or use fewer aliases")
            else:
                continue
            if stack:
                stack[-1][0] += size
    except ShapeError:
        raise
    except yaml.YAMLError:
        return  # not valid YAML: the loader says where and why


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
