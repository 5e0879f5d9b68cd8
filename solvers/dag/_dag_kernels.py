"""The DAG area's kernel table: one line per hot inner operation (see :mod:`solvers._lib.kernels`).

COSMO (``cosmo.py``) asks for ``cosmo_state`` / ``cosmo_orient`` / ``cosmo_step``; the
refinement (``refine.py``) for ``local_fit``; DP-DAG (``dpdag.py``) for ``sample_dags``.
Backends without an entry use the generic ``xp`` implementation the caller passes, which is
also the reference every kernel is tested against.
"""
from .._lib.kernels import KernelTable

KERNELS = KernelTable(
    __package__,
    cosmo_state={"numba": "._cosmo_numba:init_state", "cupy": "._cosmo_cupy:init_state"},
    cosmo_orient={"numba": "._cosmo_numba:orient_into", "cupy": "._cosmo_cupy:orient"},
    cosmo_step={"numba": "._cosmo_numba:step", "cupy": "._cosmo_cupy:grad_step"},
    local_fit={"numba": ".refine:_numba_fit"},
    sample_dags={"numba": ".dpdag:_sample_numba", "cupy": "._dpdag_cupy:sample_dags"},
)
