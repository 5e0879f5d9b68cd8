"""CuPy kernel for COSMO (imported lazily, only when ``backend`` resolves to cupy).

The orientation is one fused elementwise kernel (sigmoid, diagonal mask, ``W = H * S``);
the gradient and Adam update run as the generic ``xp`` step on cupy arrays (a handful of
elementwise kernels and two reductions per step), so they have no entry here.
"""
import functools

import cupy


@functools.cache
def _orient_kernel():
    return cupy.ElementwiseKernel(
        "T h, T pi, T pj, T inv_t, T eps, int64 d",
        "T s, T w",
        """
        long long row = i / d;
        long long col = i % d;
        if (row == col) { s = 0; w = 0; }
        else {
            T z = (pj - pi - eps) * inv_t;
            T e = exp(-fabs(z));
            s = z >= 0 ? 1 / (1 + e) : e / (1 + e);
            w = h * s;
        }
        """,
        "solvers_cosmo_orient")


def orient(H, p, inv_t, eps, state=None):
    """``S`` and ``W = H * S`` on the device (mirrors ``_cosmo_numba.orient``)."""
    d = p.shape[0]
    dt = H.dtype.type
    S, W = _orient_kernel()(H, p[:, None], p[None, :], dt(inv_t), dt(eps), d)
    return S, W
