"""CuPy paths for the batched Bures–Wasserstein kernels (imported lazily, GPU only).

The generic Array API code already runs on cupy arrays; on the device the work is batched
in much larger blocks (``cupy.linalg.eigh`` / ``eigvalsh`` on a stack of small symmetric
matrices use the batched Jacobi solver of cuSOLVER), and the weighted root sum drops the
patterns whose weights are zero for every query before the eigendecompositions.

``xp`` defaults to ``array_api_compat.cupy`` (imported on first call); the CPU tests pass
the numpy namespace to exercise the same code without a GPU.
"""
from ._bures_generic import cdist_full_xp, weighted_root_sum_xp

#: floats per (queries x patterns x d x d) block on the device (256 MiB in float64)
DEVICE_BLOCK = 2 ** 25


def _cupy_namespace():
    import array_api_compat.cupy as xp  # lazy: never at package import

    return xp


def cdist_full(qm, R, trq, m, S, trS, *, xp=None):
    """Exact W2^2 for all (query, pattern) pairs on the GPU; shape (Q, N)."""
    xp = _cupy_namespace() if xp is None else xp
    return cdist_full_xp(qm, R, trq, m, S, trS, xp, budget=DEVICE_BLOCK)


def weighted_root_sum(R, S, W, *, xp=None):
    """``M_q = sum_i W[q, i] (R_q S_i R_q)^{1/2}`` on the GPU; shape (Q, d, d).

    Only the patterns with a nonzero weight for some query enter the batched
    eigendecomposition (after a Gibbs softmax near a stored pattern that is a handful).
    """
    xp = _cupy_namespace() if xp is None else xp
    keep = xp.nonzero(xp.any(W != 0, axis=0))[0]
    if int(keep.shape[0]) < W.shape[1]:
        S, W = xp.take(S, keep, axis=0), xp.take(W, keep, axis=1)
    return weighted_root_sum_xp(R, S, W, xp, budget=DEVICE_BLOCK)


def screened_cdist(qm, R, trq, rq, m, S, trS, rS, cut, *, xp=None):
    """The exact distances on the GPU (no pair is skipped: batched blocks beat a screen
    there); same signature as the Numba screened kernel."""
    return cdist_full(qm, R, trq, m, S, trS, xp=xp)
