"""Design rules of issue 14 that a reader of the code relies on, checked on the source.

- dispatch lives in the kernel tables and ``_lib``: no algorithm module asks which backend
  it runs on (``be.name == "numba"``, ``backend in (...)``);
- no public function body over 120 lines of code (docstring, comments and blank lines
  excluded) and no module over 800 lines of code;
- one Adam, one device-to-host helper, one in-kernel PRNG: no second definition;
- every asv module has a ``time_`` and a ``track_`` benchmark.
"""
import ast
import io
import os
import re
import tokenize
from pathlib import Path

import pytest


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "solvers")


def _sources(top=PACKAGE):
    for folder, _, files in os.walk(top):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, ROOT), open(path, encoding="utf-8").read()


def _is_kernel_module(rel):
    name = os.path.basename(rel)
    return (rel.startswith(os.path.join("solvers", "_lib")) or name.endswith("_numba.py")
            or name.endswith("_cupy.py") or "kernels" in name)


BACKEND_TEST = re.compile(r"""\.name\s*(==|!=|in)\s*[(\['"]|backend\s*(==|!=|in)\s*[(\['"]""")


def test_no_backend_branches_in_algorithm_modules():
    offenders = [f"{rel}:{i}: {line.strip()}"
                 for rel, text in _sources() if not _is_kernel_module(rel)
                 for i, line in enumerate(text.splitlines(), 1) if BACKEND_TEST.search(line)]
    assert not offenders, "dispatch belongs in kernel tables:\n" + "\n".join(offenders)


def _code_lines(source):
    """Line numbers holding code: no blank lines, comments or docstrings."""
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                        tokenize.DEDENT, tokenize.ENCODING, tokenize.ENDMARKER):
            continue
        lines.update(range(tok.start[0], tok.end[0] + 1))
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and body and isinstance(body[0], ast.Expr) \
                and isinstance(getattr(body[0], "value", None), ast.Constant) \
                and isinstance(body[0].value.value, str):
            lines.difference_update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def test_functions_and_modules_a_reader_can_hold():
    too_long = []
    for rel, text in _sources():
        code = _code_lines(text)
        if len(code) > 800:
            too_long.append(f"{rel}: module, {len(code)} lines of code")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and not node.name.startswith("_"):
                n = len([i for i in code if node.lineno <= i <= node.end_lineno])
                if n > 120:
                    too_long.append(f"{rel}:{node.lineno} {node.name}: {n} lines of code")
    assert not too_long, "\n".join(too_long)


@pytest.mark.parametrize("pattern, home", [
    (r"^\s*class\s+_?Adam\b|^\s*def\s+_?adam\b", "solvers/_lib/optim.py"),
    (r"^\s*def\s+_?(to_host|host|host_any)\b(?!\(self)", "solvers/_lib/host.py"),
    (r"0x9E3779B97F4A7C15|2685821657736338717", "solvers/_lib/_prng.py"),
])
def test_one_copy_of_shared_plumbing(pattern, home):
    found = sorted({rel for rel, text in _sources()
                    if re.search(pattern, text, flags=re.M | re.I)})
    assert found == [os.path.normpath(home)], f"{pattern!r} defined in {found}"


def test_every_asv_module_times_and_tracks():
    missing = []
    for rel, text in _sources(os.path.join(ROOT, "benchmarks")):
        if not os.path.basename(rel).startswith("bench_"):
            continue
        for prefix in ("time_", "track_"):
            if not re.search(rf"def {prefix}\w+\(", text):
                missing.append(f"{rel}: no {prefix} benchmark")
    assert not missing, "\n".join(missing)


# ----------------------------------------------------------------- the shared contract
#: files not yet on the shared contract, by area (their area's work empties the list: the
#: tests fail on an offender not listed and on a listed file that no longer offends)
STATUS_LITERALS_LEFT = set()
NAMESPACE_TESTS_LEFT = set()


def _is_status(node):
    return (isinstance(node, ast.Name) and node.id == "status") or \
        (isinstance(node, ast.Attribute) and node.attr == "status")


def _int_literal(node):
    return isinstance(node, ast.Constant) and type(node.value) is int


def _status_literals(text):
    """Lines where an integer literal stands for a status (``status=2``, ``x.status == 0``)."""
    lines = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.keyword) and node.arg == "status" and _int_literal(node.value):
            lines.append(node.value.lineno)
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_is_status(o) for o in operands) and any(_int_literal(o) for o in operands):
                lines.append(node.lineno)
    return lines


def _offenders(found, left):
    new = sorted(set(found) - left)
    cleared = sorted(left - set(found))
    return new, cleared


def test_status_codes_come_from_the_shared_table():
    found = {rel: lines for rel, text in _sources()
             if not rel.startswith(os.path.join("solvers", "_lib"))
             for lines in [_status_literals(text)] if lines}
    new, cleared = _offenders(found, {os.path.normpath(p) for p in STATUS_LITERALS_LEFT})
    assert not new, "use _lib.results.Status, not integers: " + \
        ", ".join(f"{r}:{found[r]}" for r in new)
    assert not cleared, f"on the contract now: remove from STATUS_LITERALS_LEFT: {cleared}"


NAMESPACE_TEST = re.compile(r"\b(is_numpy_namespace|is_cupy_namespace|_is_host_numpy|"
                            r"_is_numpy)\(")


def test_namespace_questions_are_asked_of_the_backend():
    """Outside ``_lib`` and the kernel modules, code asks its ``Backend`` (``be.on_host``,
    ``be.host()``, ``be.to_result``) instead of testing namespaces itself."""
    found = {rel for rel, text in _sources() if not _is_kernel_module(rel)
             for line in text.splitlines()
             if NAMESPACE_TEST.search(line) and not line.lstrip().startswith(("from", "import",
                                                                              "def"))}
    new, cleared = _offenders(found, {os.path.normpath(p) for p in NAMESPACE_TESTS_LEFT})
    assert not new, f"namespace tests outside _lib (use the Backend helpers): {new}"
    assert not cleared, f"on the contract now: remove from NAMESPACE_TESTS_LEFT: {cleared}"


def test_methods_are_registered_only_by_the_router():
    router = os.path.join("solvers", "optimize", "_minimize.py")
    offenders = [rel for rel, text in _sources() if rel != router
                 and re.search(r"\bregister_method\(", text)]
    assert not offenders, f"register_method( outside the router table: {offenders}"


def test_every_kernel_table_has_a_slow_obvious_reference():
    """``tests/naive.py`` names the references of every kernel table in the package."""
    import naive

    package = Path(ROOT) / "solvers"
    tables = set()
    for path in sorted(package.rglob("*.py")):
        if re.search(r"^\w+ = KernelTable\(", path.read_text(encoding="utf-8"), re.M):
            tables.add(".".join(path.relative_to(ROOT).with_suffix("").parts))
    tables.discard("solvers._lib.kernels")     # its docstring's example table
    assert tables == set(naive.FAMILIES)
    missing = [n for names in naive.FAMILIES.values() for n in names if not hasattr(naive, n)]
    assert not missing
