"""The layering (issue "Architecture: the framework knows no detector"): core (``spamflow/``)
imports no plugin package and no workflow, and no plugin imports the workflows or another
plugin, read from the source with ``ast`` (every file, no list of allowed ones); and the report
frame (``spamflow/report/*.py`` and its templates) names no built-in detector or evidence kind
in its logic: every detector's part of the report is its plugin's, behind the report hooks."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from jinja2 import Environment

from spamflow.plugins import build_plugins
from spamflow.report.evidence import HOST_KIND, evidence_kinds

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "spamflow"
REPORT = CORE / "report"

PLUGINS = ROOT / "plugins"
WORKFLOWS = ROOT / "workflows"


def _packages(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if (p / "__init__.py").is_file()}


def _imported(tree: ast.AST) -> set[str]:
    """Top-level package of every absolute import, at any depth (imports inside functions too)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _violations(root: Path, forbidden: set[str]) -> set[tuple[str, str]]:
    found = set()
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name in _imported(tree) & forbidden:
            found.add((path.relative_to(ROOT).as_posix(), name))
    return found


def test_core_imports_no_plugin_and_no_workflow():
    forbidden = _packages(PLUGINS) | _packages(WORKFLOWS)
    assert {"spamflow_quilt", "spamflow_hss", "spamflow_ensemble", "spamflow_workflows"} <= forbidden
    assert _violations(CORE, forbidden) == set()


def test_no_plugin_imports_the_workflows_or_another_plugin():
    plugins = _packages(PLUGINS)
    assert {"spamflow_quilt", "spamflow_hss", "spamflow_ensemble", "spamflow_obvious"} <= plugins
    found = set()
    for plugin in sorted(plugins):
        found |= _violations(PLUGINS / plugin, (plugins - {plugin}) | _packages(WORKFLOWS))
    assert found == set()


def test_the_fixture_plugin_keeps_the_layers_too():
    """The third-party example imports only spamflow (and libraries), as docs/plugins.md shows."""
    fixture = ROOT / "tests" / "fixtures" / "spamflow-wordcount"
    assert _violations(fixture, _packages(PLUGINS) | _packages(WORKFLOWS)) == set()


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def core_import_graph(root: Path = CORE) -> dict[str, set[str]]:
    """Core module -> the core modules it imports, at any depth (a lazy import in a function
    still runs one module's code while the other is half-imported, or hides a knot)."""
    modules = {_module_name(p): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found |= {m for m in (node.module, *(f"{node.module}.{a.name}" for a in node.names)) if m in modules}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name in modules}
        graph[name] = found - {name, "spamflow"}  # the package itself only holds the hookimpl marker
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every set of modules that import each other in a circle (strongly connected, Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_core_modules_import_each_other_in_no_circle():
    """Was: plan -> stages.report -> report.records -> stage_runner -> plan, and
    plugins -> hookspecs -> report.evidence -> plugins."""
    assert import_cycles(core_import_graph()) == []


def test_the_cycle_check_finds_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"]]


def test_the_import_check_sees_imports_inside_functions(tmp_path):
    (tmp_path / "m.py").write_text("import os\n\ndef f():\n    from spamflow_hss.fingerprint import x\n"
                                   "    import spamflow_quilt.plugin as q\n")
    found = _imported(ast.parse((tmp_path / "m.py").read_text()))
    assert found == {"os", "spamflow_hss", "spamflow_quilt"}


@pytest.fixture(scope="module")
def builtin_names() -> set[str]:
    """The built-in detectors' names and the kinds of evidence they declare (cluster, campaign...)."""
    plugins = build_plugins(entry_points=False)
    names = set(plugins.detectors.names()) | (set(evidence_kinds(plugins)) - {HOST_KIND})
    assert {"quilt", "hss", "spin", "links", "classify", "content", "obvious", "cluster", "campaign"} <= names
    return names


def _logic_name(text: str, names: set[str]) -> bool:
    """``text`` is a detector used as an identifier: the name itself, or a key, stage, column or
    anchor built on it (``quilt:…``, ``quilt.quilted_pages``, ``quilt_sweep``, ``quilt-sweep``)."""
    return any(re.fullmatch(rf"{re.escape(n)}([:._-].*)?", text, re.DOTALL) for n in names)


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
        # attribute docstrings: a bare string after an assignment
        for body in (getattr(node, "body", None),):
            if isinstance(body, list):
                for prev, stmt in zip(body, body[1:]):
                    if (isinstance(prev, ast.Assign | ast.AnnAssign) and isinstance(stmt, ast.Expr)
                            and isinstance(stmt.value, ast.Constant)):
                        ids.add(id(stmt.value))
    return ids


def python_names(path: Path, names: set[str]) -> list[str]:
    """String constants (f-string parts included, docstrings excluded) naming a detector."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    prose = _docstrings(tree)
    return [f"{path.name}:{node.lineno}: {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
            and _logic_name(node.value, names)]


def template_names(path: Path, names: set[str]) -> list[str]:
    """In a Jinja template: string literals and variable or macro names naming a detector (an
    attribute after a dot, like ``h.links``, is a field, not a detector), and the page text
    naming one as a word (an HTML attribute such as ``content="…"`` is not)."""
    found = []
    previous = ""
    for lineno, kind, value in Environment().lex(path.read_text(encoding="utf-8")):
        if kind == "string" and _logic_name(value[1:-1], names):  # the raw token keeps its quotes
            found.append(f"{path.name}:{lineno}: string {value!r}")
        elif kind == "name" and previous != "." and value in names:
            found.append(f"{path.name}:{lineno}: name {value!r}")
        elif kind == "data":
            for name in names:
                for m in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w=-])", value):
                    found.append(f"{path.name}:{lineno}: text {value[max(0, m.start() - 20):m.end() + 20]!r}")
        if kind != "whitespace":
            previous = value
    return found


def test_the_report_frame_names_no_builtin_detector(builtin_names):
    found = [hit for path in sorted(REPORT.glob("*.py")) for hit in python_names(path, builtin_names)]
    found += [hit for path in sorted((REPORT / "templates").glob("*.j2")) for hit in template_names(path, builtin_names)]
    assert found == []


def test_the_name_check_finds_what_the_old_frame_held(tmp_path, builtin_names):
    """The checks see each way a detector was named in the frame before the plugins took over."""
    (tmp_path / "old.py").write_text(
        '"""Docstring naming quilt is prose."""\n'
        'HEADLINE = {"obvious": ("number_of_pages",)}\n'
        'def f(done, q):\n    """hss too."""\n    if "quilt" in done:\n        return f"cluster:{q}"\n'
        '    return ("quilt-sweep", "hss_similar", "links.pagerank", "Content-Type", "quilted pages")\n')
    assert sorted(h.split(": ", 1)[1] for h in python_names(tmp_path / "old.py", builtin_names)) == sorted([
        "'obvious'", "'quilt'", "'cluster:'", "'quilt-sweep'", "'hss_similar'", "'links.pagerank'"])
    (tmp_path / "old.j2").write_text(
        '{% macro quilt(q) %}{{ q }}{% endmacro %}<meta content="x">{{ h.links }}\n'
        '<p>(quilt: quilted pages; spin: campaign pages)</p>{% if stage == "hss" %}{% endif %}\n')
    hits = template_names(tmp_path / "old.j2", builtin_names)
    assert sorted(h.split(": ", 1)[1].split(" ")[0] for h in hits) == ["name", "string", "text", "text", "text"], hits
