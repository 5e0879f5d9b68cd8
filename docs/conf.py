"""Sphinx configuration for the solvers docs (built with -W: warnings are errors)."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the package, from the clone
sys.path.insert(0, os.path.join(HERE, "_ext"))  # gallery_hooks

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
    "sphinx_gallery.gen_gallery",
]
autosummary_generate = True
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
autodoc_default_options = {"members": False}
intersphinx_mapping = {}
exclude_patterns = ["_build", "_ext", "gallery.rst", "_gallery"]  # the last two: older builds
html_theme = "alabaster"
html_static_path = []
suppress_warnings = ["autosummary.import_cycle"]

# The gallery: sphinx-gallery runs every script in examples/ in quick mode (``--quick``, as
# CI always did) and shows the figures each one draws. ``-D plot_gallery=0`` builds the
# pages without running anything (no figures), for quick edits of the text.
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "gallery",
    "filename_pattern": r"\.py$",  # run every example, not only plot_*.py
    "within_subsection_order": "FileNameSortKey",
    "reset_argv": "gallery_hooks.quick_argv",
    "image_scrapers": ("matplotlib",),
    "capture_repr": (),
    "download_all_examples": False,
    "show_memory": False,
    "min_reported_time": 1,
}


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


def setup(app):
    import gallery_hooks

    app.connect("build-finished", gallery_hooks.check_figures)
