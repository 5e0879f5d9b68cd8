"""Sphinx configuration for the solvers docs (built with -W: warnings are errors)."""
import os
import sys

sys.path.insert(0, os.path.abspath(".."))

project = "solvers"
author = "the solvers developers"
copyright = "2026, the solvers developers"
release = "0.1.0.dev0"

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
]
autosummary_generate = True
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
autodoc_default_options = {"members": False}
intersphinx_mapping = {}
exclude_patterns = ["_build"]
html_theme = "alabaster"
html_static_path = []
suppress_warnings = ["autosummary.import_cycle"]


def _write_gallery():
    """Generate gallery.rst from examples/*.py: each example's docstring, its command and
    the figures it wrote under examples/figures/ (run the examples before building)."""
    import ast
    import glob
    import shutil

    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    fig_src = os.path.join(root, "examples", "figures")
    fig_dst = os.path.join(here, "_gallery")
    os.makedirs(fig_dst, exist_ok=True)
    lines = ["Examples gallery", "================", "",
             "Every script in ``examples/`` runs in CI (``--quick``) and writes its figures to",
             "``examples/figures/``; the figures below come from the latest build.", ""]
    for path in sorted(glob.glob(os.path.join(root, "examples", "*.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        with open(path) as fh:
            doc = ast.get_docstring(ast.parse(fh.read())) or ""
        title = f"``{name}.py``"
        lines += [title, "-" * len(title), "", doc, "", "::", "",
                  f"    python examples/{name}.py", ""]
        for fig in sorted(glob.glob(os.path.join(fig_src, f"{name}*.png"))):
            shutil.copy(fig, fig_dst)
            lines += [f".. image:: _gallery/{os.path.basename(fig)}", "   :width: 90%", ""]
    with open(os.path.join(here, "gallery.rst"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


_write_gallery()


def _write_benchmarks_page():
    """benchmarks.rst from the README's performance table (one source for both)."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    section = readme.split("## Performance", 1)[1].split("\n## ", 1)[0]
    intro = [line for line in section.strip().splitlines() if not line.startswith("|")]
    rows = [line.strip().strip("|").split(" | ") for line in section.splitlines()
            if line.startswith("|") and not line.startswith("|---")]

    def cell(text):
        return text.strip().replace("`", "``").replace("\\|", "|")

    lines = ["Benchmarks", "==========", "", *[cell(i) for i in intro if i.strip()], "",
             "The same table is in the README; every figure comes with the command that",
             "produced it (asv benchmarks live in ``benchmarks/``, side-by-side scripts in",
             "``benchmarks/peers/``).", "",
             ".. list-table::", "   :header-rows: 1", "   :widths: 30 40 30", ""]
    for row in rows:
        lines.append(f"   * - {cell(row[0])}")
        lines += [f"     - {cell(c)}" for c in row[1:]]
    with open(os.path.join(here, "benchmarks.rst"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


_write_benchmarks_page()
