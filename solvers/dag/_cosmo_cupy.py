"""CuPy kernels for COSMO (imported lazily, only when ``backend`` resolves to cupy).

The orientation is one fused elementwise kernel (sigmoid, diagonal mask, ``W = H * S``);
the gradient and Adam update reuse the generic ``xp`` step, which CuPy runs as a handful
of elementwise kernels and two reductions per step.
"""
import functools

import cupy

from .cosmo import _step_xp


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


def init_state(H, p):
    """Adam moments on the device."""
    return (cupy.zeros_like(H), cupy.zeros_like(H), cupy.zeros_like(p), cupy.zeros_like(p))


def orient(H, p, inv_t, eps, state=None):
    """``S`` and ``W = H * S`` on the device (mirrors ``_cosmo_numba.orient``)."""
    d = p.shape[0]
    dt = H.dtype.type
    S, W = _orient_kernel()(H, p[:, None], p[None, :], dt(inv_t), dt(eps), d)
    return S, W


def grad_step(G, H, p, S, inv_t, l1, l2, lp, lr, b1, b2, bc1, bc2, adam_eps, adam, state):
    """Gradients and one Adam/SGD step on the device."""
    d = p.shape[0]
    off = 1.0 - cupy.eye(d, dtype=H.dtype)
    return _step_xp(cupy, G, H, p, S, inv_t, l1, l2, lp, lr, b1, b2, bc1, bc2, adam_eps,
                    adam, state, off)
