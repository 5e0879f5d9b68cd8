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
    ``v[idx] += vals`` with repeated indices accumulated (numpy's ``add.at`` on the host,
    no compilation; CuPy; the generic twin is a one-hot product, ``O(len(v) len(idx))``).

Small inputs under ``backend="auto"`` run the generic twins (nothing to compile; see
:mod:`solvers._lib.kernels`): ``solve_rows`` below :data:`SOLVE_GENERIC_BELOW` elements
(``R * n``; the generic Newton takes a few milliseconds there), ``step_terms`` for runs of
fewer than :data:`STEP_GENERIC_BELOW` terms in all (``maxiter * batch_size``; the
generic step costs about 20 microseconds more than the kernel, the kernel's compilation
about a third of a second). A one-shot pass over the data (the diagnostic pass of
:func:`solvers.minimize_logsumexp`, each objective of ``kl_dro(method="lbfgs")``) of fewer
than :data:`PASS_GENERIC_BELOW` terms runs on the generic code as a whole, its
log-sum-exps included (``Backend.for_size``).
"""
from .._lib.kernels import KernelTable

__all__ = ["KERNELS", "SOLVE_GENERIC_BELOW", "STEP_GENERIC_BELOW", "PASS_GENERIC_BELOW"]

#: elements of ``A`` (R, n) under which ``"auto"`` solves the rows with the generic code
SOLVE_GENERIC_BELOW = 1 << 15
#: terms of a whole run (steps x batch) under which ``"auto"`` steps with the generic code
STEP_GENERIC_BELOW = 1 << 16
#: terms of a one-shot pass under which ``"auto"`` runs it on the generic code
PASS_GENERIC_BELOW = 1 << 15

KERNELS = KernelTable(
    __package__,
    solve_rows={"numba": "._safe_kl_numba:solve_rows", "generic_below": SOLVE_GENERIC_BELOW},
    step_terms={"numba": "._safe_kl_numba:step_terms", "cupy": "._safe_kl_cupy:step_terms",
                "generic_below": STEP_GENERIC_BELOW},
    terms={"cupy": "._safe_kl_cupy:terms"},
    scatter_add={"numba": "._safe_kl_host:scatter_add",
                 "cupy": "._safe_kl_cupy:scatter_add"},
)
