"""The steps of a rank walk: power iterations of PageRank, TrustRank, CheiRank or truncated
PageRank, as the steps of one mrjob job (:class:`spamflow_links.mr_walks.MRWalks`, one Spark
application on the spark runner, however many iterations), so that a cluster's start-up cost
is paid once per job, not once per iteration.

An iteration is  p_t = alpha * S p_{t-1} + J_t * v  with  J_t = alpha * d(p_{t-1}) + 1 - alpha,
d(p) the mass on dangling nodes (truncated PageRank: alpha = 1, v = 1/N, J_t = d(p_{t-1})).
J_t is global, so inside a job it lags one step: a node's record holds y_t = p_t - J_t v,
and the mass record (key ``*``) holds J_t.  A step's map sends y along every out-link, every
dangling node's y to ``*``, and ``*`` sends J_t to every node; the reduce makes
y_{t+1} = alpha * (sum of the shares + J_t u), u = S v (fixed, in the node's record), and
``*`` makes J_{t+1}.  Every node knows its full p_t in the step after, keeps the last
``history`` of them, and sends |p_{t-1} - p_{t-2}| to ``*``, which so learns the L1 change
of every iteration two steps late; once it is below ``tol`` (or the iteration is the
record's ``stop``, the caller's max_iter), ``*`` tells the nodes which iteration to keep
and they freeze on it (a frozen record carries no edges, so the remaining steps are cheap).
The caller reads the last records and finishes what the job could not see yet
(``spamflow_links.mapreduce``).

Records (tab-separated, floats written with ``repr``, so they read back exactly):

- live node ``node L y v u edges history``; ``edges`` = ``target:weight`` pairs joined by
  ``,`` (empty: dangling), ``history`` = earlier full values, newest first, joined by ``,``;
- frozen node ``node F values``: the kept iterate, then the earlier ones the node kept, newest
  first, joined by ``,`` (truncated PageRank, whose ``stop`` is its last step, keeps them all);
- mass ``* M J t dv n stop errors frozen``: t = the iteration y and J belong to, dv = the
  teleport mass on dangling nodes, n = the node count (ids 0..n-1), stop = the iteration to
  keep (max_iter until the change is below tol), errors = the L1 changes of iterations
  1, 2, ... known so far, frozen = 1 once the nodes froze.

Sums are ``math.fsum`` (exactly rounded): every runner gives the same bits whatever order
the shuffle delivers the messages in.  Imports nothing of spamflow.
"""

import math

from spamflow_links.node_messages import node_and_messages

MASS = "*"
"""The key of the mass record (node keys are decimal ids, so it meets none)."""


def parse_edges(text: str) -> list[tuple[str, float]]:
    """``a:1.0,b:2.0`` as [(a, 1.0), (b, 2.0)]; [] for ''."""
    if not text:
        return []
    out = []
    for pair in text.split(","):
        target, weight = pair.split(":")
        out.append((target, float(weight)))
    return out


def floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",")] if text else []


def joined(values) -> str:
    return ",".join(repr(float(x)) for x in values)


def node_record(node, y: float, teleport: float, u: float, edges: str, history=()) -> str:
    """A live node's line."""
    return f"{node}\tL\t{y!r}\t{teleport!r}\t{u!r}\t{edges}\t{joined(history)}"


def mass_record(jump: float, t: int, dv: float, n: int, stop: int, errors=(), frozen: bool = False) -> str:
    """The mass record's line."""
    return f"{MASS}\tM\t{jump!r}\t{t}\t{dv!r}\t{n}\t{stop}\t{joined(errors)}\t{int(frozen)}"


def parse_mass(fields: list[str]) -> tuple[float, int, float, int, int, list[float], bool]:
    """(J, t, dv, n, stop, errors, frozen) of a mass line's fields after ``* M``."""
    jump, t, dv, n, stop, errors, frozen = fields
    return float(jump), int(t), float(dv), int(n), int(stop), floats(errors), frozen == "1"


def scatter(line: str):
    """The map of a step."""
    fields = line.rstrip("\n").split("\t")
    key, kind = fields[0], fields[1]
    if kind == "F":
        yield key, ["F", fields[2]]
    elif kind == "M":
        jump, t, dv, n, stop, errors, frozen = parse_mass(fields[2:])
        yield MASS, ["M", jump, t, dv, n, stop, errors, frozen]
        if not frozen:
            for node in range(n):
                yield str(node), [jump, stop, t]
    elif kind == "L":
        y, teleport, u, edges, history = float(fields[2]), float(fields[3]), float(fields[4]), fields[5], fields[6]
        past = floats(history)
        yield key, ["L", y, teleport, u, edges, past]
        pairs = parse_edges(edges)
        if pairs:
            share = y * (1.0 / math.fsum(w for _, w in pairs))
            for target, weight in pairs:
                yield target, weight * share
        else:
            yield MASS, ["d", y]
        if len(past) >= 2:
            yield MASS, ["e", abs(past[0] - past[1])]
    else:
        raise ValueError(f"not a rank-walk record (kind {kind!r}): {line[:80]!r}")


def gather(node: str, values, alpha: float, keep: int) -> str:
    """The reduce of a step for a node: its next line."""
    record, messages = node_and_messages(node, _tagged(values))
    if record[0] == "F":
        return f"{node}\tF\t{record[1]}"
    _, y, teleport, u, edges, past = record
    told = [m for m in messages if isinstance(m, tuple)]
    if len(told) != 1:
        raise ValueError(f"node {node!r} got {len(told)} mass messages, not 1")
    jump, stop, t = told[0]
    history = [y + jump * teleport, *past]
    if t >= stop:
        return f"{node}\tF\t{joined(history[t - stop:])}"
    shares = [m for m in messages if not isinstance(m, tuple)]
    y_next = alpha * (math.fsum(shares) + jump * u)
    return node_record(node, y_next, teleport, u, edges, history[:keep])


def _tagged(values):
    """The mass broadcast ``[J, stop, t]`` as a tuple, so it is told apart from the node's own
    record (a list) by :func:`node_and_messages`."""
    for value in values:
        if isinstance(value, list) and value and not isinstance(value[0], str):
            yield tuple(value)
        else:
            yield value


def gather_mass(values, alpha: float, tol: float) -> str:
    """The reduce of a step for ``*``: J and t of the next iteration, the change learnt."""
    mass, dangling, changes = None, [], []
    for value in values:
        tag = value[0]
        if tag == "M":
            mass = value[1:]
        elif tag == "d":
            dangling.append(value[1])
        elif tag == "e":
            changes.append(value[1])
    if mass is None:
        raise ValueError("the rank walk's input has no mass record ('*')")
    jump, t, dv, n, stop, errors, frozen = mass
    errors = list(errors)
    frozen = frozen or t >= stop  # the nodes froze in this step (on the stop they were told)
    if changes:  # the change of iteration t - 1 (every live node sent its share)
        errors.append(math.fsum(changes))
        if errors[-1] < tol:
            stop = min(stop, t - 1)
    jump_next = alpha * (math.fsum(dangling) + jump * dv) + (1.0 - alpha)
    return mass_record(jump_next, t + 1, dv, n, stop, errors, frozen)
