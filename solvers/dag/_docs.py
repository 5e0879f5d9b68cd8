"""Docstring blocks shared by several modules of the dag area (filled by fill_doc)."""

DOCS = {}
DOCS["ref_cosmo"] = """
References
----------
.. [1] R. Massidda, F. Landolfi, M. Cinquini, D. Bacciu, "Constraint-free structure
   learning with smooth acyclic orientations", ICLR 2024.
"""
DOCS["ref_notears"] = """
References
----------
.. [1] X. Zheng, B. Aragam, P. Ravikumar, E. P. Xing, "DAGs with NO TEARS: continuous
   optimization for structure learning", NeurIPS 2018.
"""
