"""Kernel table of the Safe-KL area: one line per hot inner operation.

Each entry names the Numba and CuPy implementations of one operation; the algorithm
modules (``safe_kl.py``, ``_safe_kl_solver.py``, ``_semidual_ot.py``) look an operation up
for their resolved backend and pass the generic ``xp`` twin, which is the reference the
kernels are tested against. The algorithm modules never ask which backend they run on.

Operations
----------
``solve_rows(A, mu, rho, tol, maxiter) -> (s, value)``
    The per-row shift solve of :func:`solvers.safe_logsumexp` (Numba).
``step_terms(values, jac, s, rho) -> (mean(w jac), mean(w), mean(h))``
    The fused minibatch step of :func:`solvers.minimize_logsumexp` (Numba, CuPy).
``terms(values, s, rho) -> (w, h)``
    Capped weights and softplus terms, elementwise (CuPy).
``scatter_add(v, idx, vals) -> v``
    ``v[idx] += vals`` with repeated indices accumulated (numpy / CuPy; the generic twin
    is a one-hot product, ``O(len(v) len(idx))``).
"""
from .._lib.kernels import KernelTable

__all__ = ["KERNELS"]

KERNELS = KernelTable(
    __package__,
    solve_rows={"numba": "._safe_kl_numba:solve_rows"},
    step_terms={"numba": "._safe_kl_numba:step_terms", "cupy": "._safe_kl_cupy:step_terms"},
    terms={"cupy": "._safe_kl_cupy:terms"},
    scatter_add={"numba": "._safe_kl_numba:scatter_add", "cupy": "._safe_kl_cupy:scatter_add"},
)
