"""Batched Bures–Wasserstein kernels shared by :mod:`.bures` and :mod:`solvers.memory`.

The inner operations of every batched Gaussian-OT computation in the library, each with
its generic Array API implementation (the reference) and, through :data:`KERNELS`, its
Numba (``_bures_numba``) and CuPy (``_bures_cupy``) twins:

``cdist_full``
    exact :math:`W_2^2` between ``Q`` query Gaussians (given their roots
    :math:`R_q = \\Omega_q^{1/2}`) and ``N`` stored ones,
    :math:`\\|m_q - \\mu_i\\|^2 + \\operatorname{tr}\\Omega_q + \\operatorname{tr}\\Sigma_i
    - 2\\operatorname{tr}(R_q\\Sigma_i R_q)^{1/2}`;
``weighted_root_sum``
    :math:`M_q = \\sum_i W_{qi}(R_q\\Sigma_i R_q)^{1/2}` (the Gibbs-weighted root whose
    conjugate :math:`R_q^{-1} M_q R_q^{-1}` is the averaged Monge map);
``screened_cdist``
    ``cdist_full`` skipping pairs whose spectral lower bound exceeds the best exact
    distance by ``cut`` (``+inf`` there); the Numba kernel screens, the CuPy and generic
    ones return the exact ``cdist_full`` (a skipped pair has a Gibbs weight below
    :math:`e^{-\\beta\\,\\mathrm{cut}}`).

Small computations under ``backend="auto"`` run the generic code (nothing to compile, see
:mod:`solvers._lib.kernels`): the three operations share the threshold
:data:`GENERIC_BELOW` on the work ``calls x queries x patterns x d^3`` of a whole
computation (a retrieval or a barycenter iterates, so its ``calls`` is its iteration cap),
and :func:`kernel_backend` picks the backend once for it. The generic code is competitive
there: the batched LAPACK calls of numpy cost about as much per pair as the kernels', which
win by screening, by skipping zero weights and by threads, on large batches.

The names here are public within the package: :mod:`solvers.memory` imports them; users
call the functions of :mod:`solvers.transport.bures`. The generic implementations live in
:mod:`._bures_generic` (which the CuPy twins call too).
"""
from .._lib.backend import Backend
from .._lib.kernels import KernelTable
from .._lib.namespace import array_namespace
from .._lib.validation import as_float_array, check_finite, check_positive_definite
from ._bures_generic import (BLOCK_FLOATS, cdist_full_xp, chunk_rows, roots,  # noqa: F401
                             screened_cdist_xp, sqdist_direct, sqdist_gram,
                             sqrt_and_inv_sqrt, sym, tiny, weighted_root_sum_xp)

__all__ = ["KERNELS", "sym", "tiny", "roots", "sqrt_and_inv_sqrt", "sqdist_direct",
           "sqdist_gram", "chunk_rows", "cdist_full", "weighted_root_sum", "screened_cdist",
           "check_covariances", "check_gaussians", "generic_backend", "kernel_backend",
           "BLOCK_FLOATS", "GENERIC_BELOW"]

#: work (calls x queries x patterns x d^3) under which ``"auto"`` runs the generic code:
#: about 50 ms of generic distances (100 ms of weighted roots), against seconds of
#: compilation for the three kernels
GENERIC_BELOW = 1e7

KERNELS = KernelTable(
    __package__,
    cdist_full={"numba": "._bures_numba:cdist_full", "cupy": "._bures_cupy:cdist_full",
                "generic_below": GENERIC_BELOW},
    weighted_root_sum={"numba": "._bures_numba:weighted_root_sum",
                       "cupy": "._bures_cupy:weighted_root_sum",
                       "generic_below": GENERIC_BELOW},
    screened_cdist={"numba": "._bures_numba:screened_cdist",
                    "cupy": "._bures_cupy:screened_cdist", "generic_below": GENERIC_BELOW},
)


def kernel_backend(be, n_queries, n_patterns, d, calls=1):
    """The backend the Bures kernels of one computation run on: ``be``, or the generic
    code when ``"auto"`` chose Numba for less than :data:`GENERIC_BELOW` of work
    (``calls`` kernel calls on ``n_queries x n_patterns`` pairs of ``d x d`` matrices).

    Pick it once per computation and pass it to every kernel call (and hand it on with
    ``backend_arg``), so one run never mixes the two."""
    return KERNELS.backend_for("cdist_full", be, calls * n_queries * n_patterns * d ** 3)


def generic_backend(*arrays):
    """The generic code on the arrays' own namespace: the backend of the closed forms that
    take no ``backend=`` (their option specs convert arrays with it). Built directly, so a
    closed form on numpy input never imports Numba to resolve ``"auto"``."""
    xp = array_namespace(*arrays)
    return Backend("generic", xp, xp)


def _xp_kernel(fn, xp):
    """Bind the namespace of a generic kernel (Numba/CuPy kernels take no ``xp``)."""
    return lambda *args: fn(*args, xp)


def cdist_full(qm, qS, m, S, be, *, R=None):
    """``W2^2`` (Q, N) between full-covariance queries and patterns on a resolved backend."""
    xp = be.xp
    if R is None:
        _, R, _ = roots(qS, xp)
    trq, trS = xp.linalg.trace(qS), xp.linalg.trace(S)
    kernel = KERNELS.get("cdist_full", be, generic=_xp_kernel(cdist_full_xp, xp))
    return kernel(qm, R, trq, m, S, trS)


def weighted_root_sum(R, S, W, be):
    """``sum_i W[q, i] (R_q S_i R_q)^{1/2}`` (Q, d, d) on a resolved backend."""
    kernel = KERNELS.get("weighted_root_sum", be,
                         generic=_xp_kernel(weighted_root_sum_xp, be.xp))
    return kernel(R, S, W)


def screened_cdist(qm, R, trq, rq, m, S, trS, rS, cut, be):
    """``W2^2`` with pairs beyond ``cut`` of the row's best skipped (``+inf``) where a
    kernel screens; the exact distances elsewhere."""
    kernel = KERNELS.get("screened_cdist", be, generic=_xp_kernel(screened_cdist_xp, be.xp))
    return kernel(qm, R, trq, rq, m, S, trS, rS, cut)


def half_to_single(S, xp):
    """``S`` as float32 when it is float16 (linear algebra has no half precision)."""
    if S.dtype == getattr(xp, "float16", None):
        return xp.astype(S, xp.float32)
    return S


def check_covariances(m, S, xp, *, diagonal, names=("means", "covs"), dtype=None):
    """Validate covariances (N, d, d), or variances (N, d) with ``diagonal``, against means
    ``m`` (N, d) already converted and checked finite (by an option spec).

    Returns ``S`` as a float array (of ``dtype`` when given). Raises ``ValueError`` naming
    ``names = (means name, covs name)`` for a shape mismatch, non-finite values,
    non-positive variances or covariances that are not symmetric positive definite.
    """
    mname, sname = names
    S = half_to_single(as_float_array(S, xp, sname, dtype=dtype), xp)
    want = tuple(m.shape) + (() if diagonal else (m.shape[-1],))
    if tuple(S.shape) != want:
        kind = "variances" if diagonal else "covariance matrices"
        raise ValueError(f"{sname} must hold {kind} of shape {want} to match {mname} with "
                         f"shape {tuple(m.shape)}, got {tuple(S.shape)}")
    if m.shape[0] == 0:  # an empty batch: nothing to check (and no reduction to run)
        return S
    if diagonal:
        check_finite(S, xp, sname)
        if bool(xp.any(S <= 0)):
            raise ValueError(f"{sname} must be positive variances (diagonal=True)")
    else:
        check_positive_definite(S, xp, sname)
    return S


def check_gaussians(m, S, xp, name, *, diagonal, batch=True, names=None, dtype=None):
    """Validate means (N, d) and covariances (N, d, d) or variances (N, d).

    For callers whose means are not on an option spec: converts and checks ``m``, then
    :func:`check_covariances`. Errors name ``<name>_means`` / ``<name>_covs`` (or
    ``means`` / ``covs``, or the pair ``names`` when given); ``dtype`` converts both
    arrays (e.g. ``float64`` for object or list input).
    """
    mname, sname = f"{name}_means" if name else "means", f"{name}_covs" if name else "covs"
    if names is not None:
        mname, sname = names
    m = as_float_array(m, xp, mname, ndim=2 if batch else 1, dtype=dtype)
    check_finite(m, xp, mname)
    return m, check_covariances(m, S, xp, diagonal=diagonal, names=(mname, sname),
                                dtype=dtype)
