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
