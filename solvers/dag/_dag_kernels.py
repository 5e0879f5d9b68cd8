"""The DAG area's kernel table: one line per hot inner operation (see :mod:`solvers._lib.kernels`).

COSMO's training (``_cosmo_train.py``) asks for ``cosmo_state`` / ``cosmo_orient`` /
``cosmo_step``; the order search (``refine.py``) for ``local_fit`` / ``add_gain``; DP-DAG
(``dpdag.py``) for ``sample_dags``. Every entry is an inner operation of a kernel module
(``_cosmo_numba``, ``_cosmo_cupy``, ``_dpdag_numba``, ``_dpdag_cupy``); none points into
an algorithm module.
Backends without an entry use the generic ``xp`` implementation the caller passes, which is
also the reference every kernel is tested against.
"""
from .._lib.kernels import KernelTable

__all__ = ["KERNELS", "SEARCH_GENERIC_BELOW"]

#: nodes under which ``backend="auto"`` runs the order search's fits generically (no
#: compilation; COSMO's steps stay compiled): below it a whole warm ``learn_dag`` call
#: took 1.1-1.9x the time with the numpy fits (1.1x at d = 4, 1.3x at d = 5, 1.7x at
#: d = 9; 2.2x at d = 10, 2.8x at d = 20), measured by
#: ``benchmarks/peers/dag_small_calls.py`` on one thread
SEARCH_GENERIC_BELOW = 10

KERNELS = KernelTable(
    __package__,
    cosmo_state={"numba": "._cosmo_numba:init_state"},
    cosmo_orient={"numba": "._cosmo_numba:orient_into", "cupy": "._cosmo_cupy:orient"},
    cosmo_step={"numba": "._cosmo_numba:step"},
    local_fit={"numba": "._cosmo_numba:local_fit", "generic_below": SEARCH_GENERIC_BELOW},
    add_gain={"numba": "._cosmo_numba:add_gain", "generic_below": SEARCH_GENERIC_BELOW},
    sample_dags={"numba": "._dpdag_numba:sample_model", "cupy": "._dpdag_cupy:sample_dags"},
)
