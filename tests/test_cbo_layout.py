"""The layout of ``solvers/optimize/``: functions a reader can hold, modules of one layer,
and no import circle (the solver never re-enters the public function)."""
import ast
import os

from _graphs import assert_acyclic
from test_design import ROOT, _code_lines

OPTIMIZE = os.path.join(ROOT, "solvers", "optimize")
MAX_FUNCTION, MAX_MODULE = 80, 500


def _modules():
    for name in sorted(os.listdir(OPTIMIZE)):
        if name.endswith(".py"):
            path = os.path.join(OPTIMIZE, name)
            yield name[:-3], open(path, encoding="utf-8").read()


def test_no_function_over_80_and_no_module_over_500_code_lines():
    too_long = []
    for name, text in _modules():
        code = _code_lines(text)
        if len(code) > MAX_MODULE:
            too_long.append(f"{name}: module, {len(code)} lines of code")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = len([i for i in code if node.lineno <= i <= node.end_lineno])
                if n > MAX_FUNCTION:
                    too_long.append(f"{name}:{node.lineno} {node.name}: {n} lines of code")
    assert not too_long, "\n".join(too_long)


def _imports(text):
    """Sibling modules a module imports (anywhere in it, function bodies included)."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and \
                node.module.startswith("solvers.optimize."):
            found.add(node.module.split(".")[2])
    return found


def test_no_import_circle_in_optimize():
    graph = {name: _imports(text) for name, text in _modules()}
    graph = {name: {m for m in deps if m in graph and m != name} for name, deps in
             graph.items()}
    assert_acyclic(graph)


def test_the_circle_check_finds_a_circle():
    # the checker itself must be able to fail: a two-module circle is reported
    graph_text = {"a": "from .b import x\n", "b": "def f():\n    from .a import y\n"}
    deps = {k: _imports(v) for k, v in graph_text.items()}
    assert deps == {"a": {"b"}, "b": {"a"}}
