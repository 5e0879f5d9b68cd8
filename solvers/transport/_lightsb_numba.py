"""Numba kernels for LightSB: component log-weights and exact sampling (diagonal S).

Imported lazily by :mod:`solvers.transport.lightsb` (never at package import).
"""
import math

import numpy as np

from .._lib.numba_config import jit, jit_parallel, prange


@jit_parallel
def _log_weights_diag(x, la, r, s, eps, out):
    n, D = x.shape
    K = r.shape[0]
    inv2e = 1.0 / (2.0 * eps)
    for i in prange(n):
        mx = -np.inf
        for k in range(K):
            acc = 0.0
            for d in range(D):
                xv = x[i, d]
                acc += (s[k, d] * xv + 2.0 * r[k, d]) * xv
            v = la[k] + acc * inv2e
            out[i, k] = v
            if v > mx:
                mx = v
        tot = 0.0
        for k in range(K):
            tot += math.exp(out[i, k] - mx)
        lse = mx + math.log(tot)
        for k in range(K):
            out[i, k] -= lse


def log_weights_diag(x, la, r, s, eps):
    """log gamma_k(x) for diagonal S, shape (n, K), normalised over k (float64 inside)."""
    out = np.empty((x.shape[0], r.shape[0]), dtype=np.float64)
    _log_weights_diag(np.ascontiguousarray(x, dtype=np.float64),
                      np.ascontiguousarray(la, dtype=np.float64),
                      np.ascontiguousarray(r, dtype=np.float64),
                      np.ascontiguousarray(s, dtype=np.float64), float(eps), out)
    return out.astype(x.dtype, copy=False)


@jit_parallel
def _sample_diag(x, logits, r, s, eps, u, z, out):
    n, ns = u.shape
    K = logits.shape[1]
    D = x.shape[1]
    se = math.sqrt(eps)
    for i in prange(n):
        mx = -np.inf
        for k in range(K):
            if logits[i, k] > mx:
                mx = logits[i, k]
        w = np.empty(K)
        tot = 0.0
        for k in range(K):
            tot += math.exp(logits[i, k] - mx)
            w[k] = tot
        for j in range(ns):
            target = u[i, j] * tot
            k = 0
            while k < K - 1 and w[k] <= target:
                k += 1
            for d in range(D):
                sk = s[k, d]
                out[i, j, d] = r[k, d] + sk * x[i, d] + se * math.sqrt(sk) * z[i, j, d]


def sample_diag(x, logits, r, s, eps, u, z):
    """Exact draws from the mixture pi(.|x) (diagonal S) by inverse-CDF component choice.

    ``u`` (n, ns) uniforms pick the component, ``z`` (n, ns, D) standard normals the
    Gaussian; the generic code uses the same draws the same way.
    """
    n, ns = u.shape
    out = np.empty((n, ns, x.shape[1]), dtype=np.float64)
    _sample_diag(np.ascontiguousarray(x, dtype=np.float64),
                 np.ascontiguousarray(logits, dtype=np.float64),
                 np.ascontiguousarray(r, dtype=np.float64),
                 np.ascontiguousarray(s, dtype=np.float64), float(eps),
                 np.ascontiguousarray(u, dtype=np.float64),
                 np.ascontiguousarray(z, dtype=np.float64), out)
    return out.astype(x.dtype, copy=False)
