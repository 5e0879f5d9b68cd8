"""``python -m solvers demo``: every solver on a small built-in problem, one row each.

Each area contributes rows from a module named ``solvers/<area>/_demo*.py`` defining
``demo_rows(quick)``, which returns (or yields) dicts with keys ``method``, ``problem``,
``quality`` (a short human-readable figure of merit, e.g. "success 10/10" or "SHD 0") and
``seconds``. A row times only the solver call. Modules are discovered, so adding a solver
never edits this file.

Answers before the compiler finishes: the quick rows (the default) should be small enough
for the generic code that ``backend="auto"`` runs on small inputs (see
:mod:`solvers._lib.kernels`), so that they need no Numba compilation at all. A module whose
quick rows compile nothing says so with a module attribute ``QUICK_COMPILES = False``; the
demo runs those modules first, so the first rows appear at once even with an empty Numba
cache. A row whose timed call does run Numba kernels warms exactly those before it starts
the clock, with a small call that asks for them explicitly (``backend="numba"`` compiles
whatever the size; a small ``"auto"`` call would run the generic code and warm nothing).

A module is named on the command line by what follows ``_demo_`` in its file name
(``solvers/optimize/_demo_cbo.py`` -> ``cbo``), or by its area (``optimize``), which
selects every module of the area.
"""
import importlib
import importlib.util
import pkgutil
import sys
import time

import solvers

#: fixed column widths, so each row can be printed as soon as it is known
WIDTHS = (38, 56, 56)
HEADERS = ("method", "problem", "quality", "seconds")


def discover_demo_modules():
    """Names of all ``solvers.<area>._demo*`` modules, sorted."""
    names = []
    for area in pkgutil.iter_modules(solvers.__path__):
        if not area.ispkg or area.name.startswith("_"):
            continue
        # the package's spec, not the package: listing must not import every area
        # (``--help`` builds its text from this list)
        spec = importlib.util.find_spec(f"solvers.{area.name}")
        for mod in pkgutil.iter_modules(spec.submodule_search_locations):
            if mod.name.startswith("_demo"):
                names.append(f"solvers.{area.name}.{mod.name}")
    return sorted(names)


def short_name(module_name):
    """``solvers.optimize._demo_cbo`` -> ``cbo`` (a bare ``_demo`` module: its area)."""
    _, area, mod = module_name.split(".")
    return mod[len("_demo_"):] if mod.startswith("_demo_") else area


def demo_names():
    """``{short name: module name}`` of every demo module, in run order."""
    return {short_name(m): m for m in discover_demo_modules()}


def select_modules(only=None):
    """The module names that ``--only`` selects.

    Parameters
    ----------
    only : str or None
        Comma-separated short names (``cbo``, ``qubo``, ...) or area names (``dag``,
        ``optimize``, ...); None selects everything.

    Raises
    ------
    ValueError
        A name that is neither a demo nor an area; the message lists the valid names.
    """
    modules = discover_demo_modules()
    if only is None:
        return modules
    wanted = [w.strip() for w in str(only).split(",") if w.strip()]
    by_short = {short_name(m): m for m in modules}
    areas = sorted({m.split(".")[1] for m in modules})
    unknown = [w for w in wanted if w not in by_short and w not in areas]
    if unknown or not wanted:
        raise ValueError(f"unknown demo name(s) {', '.join(map(repr, unknown)) or repr(only)}"
                         f"; choose from: {', '.join(by_short)} (or an area: "
                         f"{', '.join(areas)})")
    return [m for m in modules if short_name(m) in wanted or m.split(".")[1] in wanted]


def _compiles_when_quick(name):
    """A module's ``QUICK_COMPILES`` (True when it does not say, or does not import: its
    row then reports the failure)."""
    try:
        return bool(getattr(importlib.import_module(name), "QUICK_COMPILES", True))
    except Exception:
        return True


def run_order(modules, quick=True):
    """``modules`` in the order the demo runs them: with ``quick``, the modules whose quick
    rows compile nothing (``QUICK_COMPILES = False``) first, each group in its given
    order."""
    if not quick:
        return list(modules)
    return sorted(modules, key=_compiles_when_quick)  # stable: False sorts first


def iter_rows(modules, quick=True):
    """Yield the rows of ``modules`` one at a time, as each is computed (in
    :func:`run_order`).

    A module that raises yields one ``FAILED`` row (the others still run).
    """
    for name in run_order(modules, quick):
        start = time.perf_counter()
        try:
            module = importlib.import_module(name)
            yield from module.demo_rows(quick=quick)
        except Exception as exc:  # one broken demo must not hide the others
            yield {"method": short_name(name), "problem": "-", "quality": f"FAILED: {exc!r}",
                   "seconds": time.perf_counter() - start}


def collect_rows(quick=True, only=None):
    """All rows at once, of the modules whose full name contains ``only`` (a substring, as
    before ``--only`` took names; the command line checks names with
    :func:`select_modules`)."""
    modules = [m for m in discover_demo_modules() if not only or only in m]
    return list(iter_rows(modules, quick=quick))


def format_row(row):
    """One table line (columns padded to :data:`WIDTHS`; longer cells push the rest)."""
    cells = [str(row["method"]), str(row["problem"]), str(row["quality"])]
    text = "  ".join(c.ljust(w) for c, w in zip(cells, WIDTHS))
    return f"{text}  {row['seconds']:7.3f}"


def format_header():
    text = "  ".join(h.ljust(w) for h, w in zip(HEADERS, WIDTHS))
    return f"{text}  {HEADERS[3]:>7}\n" + "  ".join("-" * w for w in WIDTHS + (7,))


def format_table(rows):
    """A plain-text table of demo rows (header and one line per row)."""
    return "\n".join([format_header()] + [format_row(r) for r in rows])


def run_demo(quick=True, only=None, stream=None):
    """Print the table row by row; return the exit code (1 if a row failed)."""
    stream = sys.stdout if stream is None else stream
    modules = select_modules(only)
    start = time.perf_counter()
    print(format_header(), file=stream, flush=True)
    failed = total = 0
    count = 0
    for row in iter_rows(modules, quick=quick):
        print(format_row(row), file=stream, flush=True)
        failed += str(row["quality"]).startswith("FAILED")
        total += row["seconds"]
        count += 1
    wall = time.perf_counter() - start
    print(f"\n{count} rows, {total:.2f} s in the timed calls, {wall:.1f} s wall (the rest is "
          "Numba compilation or cache loading, warm-up calls and the quality checks; "
          "'python -m solvers warmup' compiles the kernels ahead of time)",
          file=stream, flush=True)
    return 1 if failed else 0
