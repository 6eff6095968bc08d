"""The reduce side of a graph step in MapReduce: a node's values are its own record (a list,
what the node is and where it links) and the messages its in-neighbours sent it (rank shares,
supporter sketches).  Shared by the rank and supporter steps; imports nothing of spamflow."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def node_and_messages(node: str, values: Iterable[Any]) -> tuple[list[Any], list[Any]]:
    """The node's record and the messages sent to it; a node that receives messages but has no
    record is an error naming it (every edge target must be a node)."""
    record = None
    messages = []
    for value in values:
        if isinstance(value, list):
            record = value
        else:
            messages.append(value)
    if record is None:
        raise ValueError(f"node {node!r} receives links but has no node record: every edge target must be a node")
    return record, messages
