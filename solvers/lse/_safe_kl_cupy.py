"""CuPy kernel for the Safe-KL minibatch step (imported lazily, only with backend "cupy").

One fused elementwise kernel gives the capped weights ``w = 1/(rho + exp(s - phi))`` and the
softplus surrogate terms ``h = log(1 + rho exp(phi - s)) / rho`` (no overflow: ``exp`` of a
large argument is ``inf`` and ``1/inf = 0``); the weighted gradient is one GEMV.
"""
import math

import cupy

_terms = cupy.ElementwiseKernel(
    "T x, T s, T rho, T log_rho",
    "T w, T h",
    """
    w = (T)1 / (rho + exp(s - x));
    T d = x - s + log_rho;
    h = (d > 0 ? d + log1p(exp(-d)) : log1p(exp(d))) / rho;
    """,
    "solvers_safe_kl_terms",
)


def terms(values, s, rho):
    """``(w, h)`` for cupy ``values`` and a scalar (or 0-d) shift ``s``."""
    dtype = values.dtype
    s = cupy.asarray(s, dtype=dtype)
    return _terms(values, s, dtype.type(rho), dtype.type(math.log(rho)))


def step_terms(values, jac, s, rho):
    """``(mean(w * jac, axis=0), mean(w), mean(h))`` for a minibatch on the GPU."""
    values = cupy.asarray(values)
    w, h = terms(values, s, rho)
    B = values.shape[0]
    return (w @ cupy.asarray(jac)) / B, w.mean(), h.mean()


def scatter_add(v, idx, vals):
    """``v[idx] += vals`` in place on the GPU, repeated indices accumulated; returns ``v``."""
    import cupyx

    cupyx.scatter_add(v, idx, vals)
    return v
