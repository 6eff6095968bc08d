"""The steps of the supporter balls (Becchetti et al.'s neighbours at distance k), grown once per
step of one mrjob job (:class:`spamflow_links.mr_walks.MRWalks`, one Spark application,
however many distances):
ball_k(x) = ball_{k-1}(x) united with ball_{k-1}(y) of every in-neighbour y -> x.

Input and output lines are node records ``node<TAB>state<TAB>targets<TAB>sizes``,
``targets`` = the out-neighbours joined by ``,``, ``sizes`` = what each step's ball was
(``exact``: its node count; ``hll``: its registers), joined by ``,`` (absent or empty on
input). The state is either

- ``hll``: the node's HyperLogLog registers as hex bytes; the union of balls is the
  register-wise maximum (Flajolet-Martin style probabilistic counting, as the in-memory
  ``supporters_hll`` with the same seed: the maxima are exact, so the registers are equal);
- ``exact``: the ball's node ids, ascending, joined by ``,`` (small graphs only: a
  ball can hold every node).

The map sends the state along every out-link and the structure to the node itself; the
reduce merges.  Given ``distances`` (a job of more steps than the balls need, as
:mod:`spamflow_links.mr_walks`), a node whose record holds that many sizes sends nothing and
keeps only its sizes (``node<TAB><TAB><TAB>sizes``: its links would cost a shuffle in every
step left). Imports nothing of spamflow.
"""

import numpy as np

from spamflow_links.node_messages import node_and_messages


def merge_states(kind: str, states: list[str]) -> str:
    """The union of balls: register-wise max (``hll``) or the sorted union of ids (``exact``)."""
    if kind == "hll":
        regs = np.frombuffer(bytes.fromhex(states[0]), dtype=np.uint8).copy()
        for state in states[1:]:
            np.maximum(regs, np.frombuffer(bytes.fromhex(state), dtype=np.uint8), out=regs)
        return regs.tobytes().hex()
    if kind == "exact":
        ids: set[int] = set()
        for state in states:
            ids.update(int(i) for i in state.split(",") if i)
        return ",".join(str(i) for i in sorted(ids))
    raise ValueError(f"--kind must be 'hll' or 'exact', not {kind!r}")


def ball_size(kind: str, state: str) -> str:
    """What a step records of a ball: its node count (``exact``), its registers (``hll``)."""
    return str(state.count(",") + 1 if state else 0) if kind == "exact" else state


def grown_enough(sizes: str, distances: int | None) -> bool:
    """Whether a record whose recorded sizes are ``sizes`` has grown ``distances`` times."""
    return distances is not None and (sizes.count(",") + 1 if sizes else 0) >= distances


def spread(line: str, distances: int | None = None):
    """The map: the state along each out-link, the structure (state, targets, sizes) to the node."""
    node, state, targets, *sizes = line.rstrip("\n").split("\t")
    recorded = sizes[0] if sizes else ""
    yield node, ["s", state, targets, recorded]
    if grown_enough(recorded, distances):
        return
    for target in targets.split(",") if targets else ():
        yield target, state


def unite(node: str, values, kind: str, distances: int | None = None) -> str:
    """The reduce: the node's line with its grown ball (its sizes alone, once grown ``distances`` times)."""
    record, states = node_and_messages(node, values)
    state, targets, sizes = record[1], record[2], record[3] if len(record) > 3 else ""
    if grown_enough(sizes, distances):
        return f"{node}\t\t\t{sizes}"
    grown = merge_states(kind, [state, *states])
    return f"{node}\t{grown}\t{targets}\t{sizes + ',' if sizes else ''}{ball_size(kind, grown)}"
