"""Numba kernels for Safe-KL: the per-slice shift solve and the fused minibatch step.

``solve_rows`` runs the same safeguarded Newton as the generic code, one row per thread,
accumulating in float64. ``step_terms`` computes, in one pass over a minibatch, the capped
weights ``w = 1/(rho + exp(s - phi))``, the weighted gradient ``mean(w * jac)`` and the
means of ``w`` and of the softplus surrogate terms.

One compiled version each: ``solve_rows`` is one parallel kernel (float64, run on one
thread for small inputs), ``step_terms`` one serial kernel per float dtype of the run
(the dtype of ``x0``).
"""
import math

import numpy as np

from .._lib.numba_config import (jit, jit_parallel, kernel_array, kernel_float, prange,
                                 threads_for)

#: elements (R * n) from which the rows are solved on every thread: below, one parallel
#: region costs more than it saves
PARALLEL_WORK = 1 << 15


@jit
def _w(x, s, rho):
    t = s - x
    if t > 700.0:  # exp would overflow: the weight is 0 to double precision
        return 0.0
    return 1.0 / (rho + math.exp(t))


@jit
def _h(x, s, rho, log_rho):
    d = x - s + log_rho
    if d > 0.0:
        return (d + math.log1p(math.exp(-d))) / rho
    return math.log1p(math.exp(d)) / rho


@jit
def _row_stats(A, mu, has_mu, r, s, rho):
    n = A.shape[1]
    ew = 0.0
    ev = 0.0
    for i in range(n):
        w = _w(A[r, i], s, rho)
        m = mu[r, i] if has_mu else 1.0
        ew += m * w
        ev += m * w * (1.0 - rho * w)
    if not has_mu:
        ew /= n
        ev /= n
    return ew, ev


@jit
def _solve_one(A, mu, has_mu, r, rho, tol, maxiter):
    n = A.shape[1]
    # log-mean-exp F of the row (max shift)
    mx = -math.inf
    for i in range(n):
        if A[r, i] > mx:
            mx = A[r, i]
    tot = 0.0
    for i in range(n):
        m = mu[r, i] if has_mu else 1.0 / n
        tot += m * math.exp(A[r, i] - mx)
    F = mx + math.log(tot)
    hi = F + math.log1p(-rho)
    gap = 1.0
    lo = hi - gap
    for _ in range(64):
        ew_lo, _ = _row_stats(A, mu, has_mu, r, lo, rho)
        if ew_lo >= 1.0:
            break
        gap *= 2.0
        lo = hi - gap
    s = hi
    for it in range(maxiter):
        ew, ev = _row_stats(A, mu, has_mu, r, s, rho)
        g = math.log(ew) if ew > 0.0 else -math.inf
        if it == 0 and g >= 0.0:
            break  # rounding put the root at hi already
        if g > 0.0:
            lo = s
        else:
            hi = s
        newton = s + g * ew / ev if ev > 0.0 else math.nan
        if newton > lo and newton < hi:
            s_new = newton
        else:
            s_new = 0.5 * (lo + hi)
        step = abs(s_new - s)
        s = s_new
        scale = tol * (1.0 + abs(s))
        if step <= scale or hi - lo <= scale:
            break
    log_rho = math.log(rho)
    acc = 0.0
    for i in range(n):
        m = mu[r, i] if has_mu else 1.0
        if A[r, i] == -math.inf:
            continue
        acc += m * _h(A[r, i], s, rho, log_rho)
    if not has_mu:
        acc /= n
    return s, s - 1.0 + acc


@jit_parallel
def _solve_rows(A, mu, has_mu, rho, tol, maxiter, s_out, v_out):
    for r in prange(A.shape[0]):
        s, v = _solve_one(A, mu, has_mu, r, rho, tol, maxiter)
        s_out[r] = s
        v_out[r] = v


def solve_rows(A, mu, rho, tol, maxiter):
    """Shift and surrogate value (log-mean units) for each row of ``A`` (R, n), computed
    in float64 (float64 out)."""
    A = kernel_array(A)
    has_mu = mu is not None
    mu = kernel_array(mu) if has_mu else np.empty((1, 1))
    R = A.shape[0]
    s_out = np.empty(R)
    v_out = np.empty(R)
    with threads_for(A.size if R > 1 else 0, PARALLEL_WORK):
        _solve_rows(A, mu, bool(has_mu), float(rho), float(tol), int(maxiter), s_out, v_out)
    return s_out, v_out


@jit
def _step_kernel(values, jac, s, rho, gx):
    B, p = jac.shape
    log_rho = math.log(rho)
    sw = 0.0
    sh = 0.0
    for j in range(p):
        gx[j] = 0.0
    for i in range(B):
        x = values[i]
        w = _w(x, s, rho)
        sw += w
        sh += _h(x, s, rho, log_rho)
        for j in range(p):
            gx[j] += w * jac[i, j]
    for j in range(p):
        gx[j] /= B
    return sw / B, sh / B


def step_terms(values, jac, s, rho):
    """``(mean(w * jac, axis=0), mean(w), mean(h))`` for a minibatch (numpy in, numpy out).

    An empty batch gives NaN throughout, as the generic means do. Both arrays reach the
    kernel in one float dtype (float32 when they are single precision, else float64);
    sums accumulate in float64.
    """
    dtype = kernel_float(values, jac)
    jac, values = kernel_array(jac, dtype), kernel_array(values, dtype)
    if values.shape[0] == 0:
        return np.full(jac.shape[1], np.nan, dtype=dtype), math.nan, math.nan
    gx = np.empty(jac.shape[1], dtype=np.float64)
    mean_w, mean_h = _step_kernel(values, jac, float(s), float(rho), gx)
    return gx.astype(dtype, copy=False), mean_w, mean_h
