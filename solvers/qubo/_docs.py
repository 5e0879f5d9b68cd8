"""Docstring blocks shared by several modules of the qubo area (filled by fill_doc)."""

DOCS = {}
DOCS["references"] = """
References
----------
.. [1] J. Lee, T. Gerlach, N. Piatkowski, "Standardization of multi-objective QUBOs",
   IEEE QCE 2025, arXiv:2504.12419.
"""
