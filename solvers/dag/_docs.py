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
DOCS["raises_n_mc"] = """
Raises
------
ValueError
    ``n_mc < 1`` or a negative integer seed (``order="sinkhorn"`` only).
TypeError
    A non-integer ``n_mc`` or a bad ``rng`` type (``order="sinkhorn"`` only).
"""
DOCS["raises_adjacency"] = """
Raises
------
ValueError
    ``B`` is not a square (2-D) matrix, or holds NaN or inf.
TypeError
    ``B`` is complex or not numeric.
"""
DOCS["params_search_limits"] = """
max_rounds : int
    Cap on the rounds (local moves to a local optimum, then one tuck search).
time_limit : float, optional
    Seconds after which the search stops (the best order so far is kept).
depth : int
    Depth of the tuck search (0: local moves only).
"""
DOCS["raises_order"] = """
Raises
------
ValueError
    ``order`` is not a permutation of ``range(d)``, or an unknown ``backend``.
"""
DOCS["param_adjacency"] = """
Parameters
----------
B : array_like, shape (d, d)
    Adjacency; ``B[i, j] != 0`` is the edge ``i -> j``. Self-loops count as cycles.
"""
DOCS["raises_type_n_rng"] = """
TypeError
    A non-integer ``n``, or an ``rng`` that is not None, an int or a
    ``numpy.random.Generator``.
"""
DOCS["rng_returns_x"] = """
rng : None, int or numpy.random.Generator

Returns
-------
X : ndarray, shape (n, d)
"""
DOCS["params_n_mc"] = """
Parameters
----------
n_mc : int
    Monte Carlo orders (``order="sinkhorn"`` only; ignored for softsort).
rng : None, int or numpy.random.Generator
    Randomness of the Monte Carlo estimate (ignored for softsort).
"""
