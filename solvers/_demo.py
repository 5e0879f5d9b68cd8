"""``python -m solvers demo``: every solver on a small built-in problem, one row each.

Each area contributes rows from a module named ``solvers/<area>/_demo*.py`` defining
``demo_rows(quick)``, which returns a list of dicts with keys ``method``, ``problem``,
``quality`` (a short human-readable figure of merit, e.g. "success 10/10" or
"SHD 0") and ``seconds``. Modules are discovered, so adding a solver never edits this file.
"""
import importlib
import pkgutil
import time

import solvers


def discover_demo_modules():
    """Names of all ``solvers.<area>._demo*`` modules, sorted."""
    names = []
    for area in pkgutil.iter_modules(solvers.__path__):
        if not area.ispkg or area.name.startswith("_"):
            continue
        package = importlib.import_module(f"solvers.{area.name}")
        for mod in pkgutil.iter_modules(package.__path__):
            if mod.name.startswith("_demo"):
                names.append(f"solvers.{area.name}.{mod.name}")
    return sorted(names)


def collect_rows(quick=True, only=None):
    """Run every demo module (or those whose name contains ``only``) and gather rows."""
    rows = []
    for name in discover_demo_modules():
        if only and only not in name:
            continue
        module = importlib.import_module(name)
        start = time.perf_counter()
        try:
            produced = module.demo_rows(quick=quick)
        except Exception as exc:  # one broken demo must not hide the others
            produced = [{"method": name, "problem": "-", "quality": f"FAILED: {exc!r}",
                         "seconds": time.perf_counter() - start}]
        rows.extend(produced)
    return rows


def format_table(rows):
    """A plain-text table of demo rows."""
    headers = ("method", "problem", "quality", "seconds")
    cells = [[str(r["method"]), str(r["problem"]), str(r["quality"]), f"{r['seconds']:.2f}"]
             for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h)
              for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in cells]
    return "\n".join(out)


def run_demo(quick=True, only=None):
    rows = collect_rows(quick=quick, only=only)
    print(format_table(rows))
    failed = [r for r in rows if str(r["quality"]).startswith("FAILED")]
    return 1 if failed else 0
