"""The DAG area on the shared contract, checked on its source (``solvers/dag/``).

- functions a reader can hold (at most 80 lines of code, docstrings, comments and blank
  lines excluded; private ones and methods too) and modules of at most 500;
- no import circles between the area's modules, and no function-level imports of them
  (the demo modules, loaded by ``python -m solvers`` only when run, excepted);
- the kernel table points into kernel modules only (``_*_numba.py`` / ``_*_cupy.py``);
- no literal status codes (every result goes through ``Status``) and no backend names
  handed on as strings (a resolved ``Backend`` is passed down).
"""
import ast
import os
import re

import pytest

from _graphs import assert_acyclic
from test_design import _code_lines

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AREA = os.path.join(ROOT, "solvers", "dag")
MODULES = sorted(f[:-3] for f in os.listdir(AREA) if f.endswith(".py"))


def _source(module):
    with open(os.path.join(AREA, module + ".py"), encoding="utf-8") as fh:
        return fh.read()


def _trees():
    return {m: ast.parse(_source(m)) for m in MODULES}


def _own_imports(node):
    """Area modules a relative import statement names (``from .x import y``,
    ``from . import x``)."""
    if not isinstance(node, ast.ImportFrom) or node.level != 1:
        return []
    if node.module:
        return [node.module.split(".")[0]]
    return [alias.name for alias in node.names]


def test_functions_and_modules_fit_on_a_screen():
    too_long = []
    for module in MODULES:
        text = _source(module)
        code = _code_lines(text)
        if len(code) > 500:
            too_long.append(f"{module}.py: {len(code)} lines of code")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = len([i for i in code if node.lineno <= i <= node.end_lineno])
                if n > 80:
                    too_long.append(f"{module}.py:{node.lineno} {node.name}: {n} lines")
    assert not too_long, "\n".join(too_long)


def test_the_checker_counts_code_lines_only():
    # the rule must be able to fail: a function of 81 statements is caught, its
    # docstring and comments are not counted
    body = "\n".join(f"    x{i} = {i}  # c" for i in range(81))
    src = f'def f():\n    """doc\n\n    more doc\n    """\n    # comment\n{body}\n'
    code = _code_lines(src)
    assert len(code) == 82          # the def line and the 81 statements


def test_no_import_circles_and_no_function_level_imports():
    trees = _trees()
    graph, late = {}, []
    for module, tree in trees.items():
        graph[module] = {name for node in ast.walk(tree) for name in _own_imports(node)
                         if name in MODULES}
        if module.startswith("_demo"):
            continue
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                late += [f"{module}.py:{node.lineno}" for node in ast.walk(fn)
                         if _own_imports(node) or (isinstance(node, ast.ImportFrom)
                                                   and node.level == 2)]
    assert not late, "function-level imports of the package's modules: " + ", ".join(late)
    assert_acyclic(graph)


def test_kernel_table_points_into_kernel_modules_only():
    from solvers.dag._dag_kernels import KERNELS

    for name, entries in KERNELS.operations.items():
        for backend, target in entries.items():
            if backend == "generic_below":          # a size threshold, not a target
                continue
            module = target.partition(":")[0].lstrip(".")
            assert re.fullmatch(r"_\w+_(numba|cupy)", module), (name, backend, target)
            assert module.endswith(backend), (name, backend, target)


def _literal_statuses(tree):
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "status" \
                and isinstance(node.value, ast.Constant):
            found.append(node.value.lineno)
        if isinstance(node, ast.Assign):
            targets = [t for t in node.targets if isinstance(t, (ast.Name, ast.Tuple))]
            for t in targets:
                names = [t] if isinstance(t, ast.Name) else list(t.elts)
                values = [node.value] if isinstance(t, ast.Name) else \
                    (list(node.value.elts) if isinstance(node.value, ast.Tuple) else [])
                for name, value in zip(names, values):
                    if isinstance(name, ast.Name) and name.id == "status" \
                            and isinstance(value, ast.Constant):
                        found.append(node.lineno)
    return found


@pytest.mark.parametrize("module", MODULES)
def test_no_literal_status_and_no_backend_strings(module):
    tree = ast.parse(_source(module))
    assert not _literal_statuses(tree), f"{module}.py: literal status at lines " \
        f"{_literal_statuses(tree)}"
    handed_on = [node.lineno for node in ast.walk(tree)
                 if isinstance(node, ast.keyword) and node.arg == "backend"
                 and isinstance(node.value, ast.Constant)
                 and isinstance(node.value.value, str)]
    assert not handed_on, f"{module}.py: backend string handed on at lines {handed_on}"


def test_literal_status_checker_can_fail():
    tree = ast.parse("def f():\n    status, message = 2, 'x'\n    g(status=4)\n")
    assert _literal_statuses(tree) == [2, 3]
