"""The generic (Array API) Bures–Wasserstein kernels: the reference implementations.

The Numba and CuPy twins of :mod:`.bures_kernels`' table are tested against these; the
CuPy ones call them with device-sized blocks. See :mod:`.bures_kernels` for the math.
"""
import numpy as np

#: default budget (in floats) for one (queries x patterns x d x d) block of the generic path
BLOCK_FLOATS = 2 ** 22


def sym(S, xp):
    """The symmetric part ``(S + S^T) / 2`` of a stack of matrices."""
    return 0.5 * (S + xp.matrix_transpose(S))


def tiny(dtype, xp):
    """The smallest positive normal float of ``dtype`` (float32 or float64)."""
    return float(np.finfo(np.float32 if dtype == xp.float32 else np.float64).tiny)


def roots(S, xp):
    """``(sqrt(lam), S^{1/2}, S^{-1/2})`` of a stack of symmetric PSD matrices.

    One eigendecomposition of the symmetric part; eigenvalues are clipped at 0 for the
    root (never NaN from a ``-1e-16`` rounding eigenvalue) and at the dtype's tiny value
    for the inverse root (large but finite for a singular input).
    """
    lam, U = xp.linalg.eigh(sym(S, xp))
    Ut = xp.matrix_transpose(U)
    r = xp.sqrt(xp.maximum(lam, xp.zeros_like(lam)))
    rinv = xp.maximum(lam, xp.asarray(tiny(S.dtype, xp), dtype=lam.dtype)) ** -0.5
    return r, (U * r[..., None, :]) @ Ut, (U * rinv[..., None, :]) @ Ut


def sqrt_and_inv_sqrt(S, xp):
    """``S^{1/2}`` and ``S^{-1/2}`` of a stack of SPD matrices from one eigendecomposition."""
    _, R, Rinv = roots(S, xp)
    return R, Rinv


def sqdist_direct(a, b, xp):
    """``|a_q - b_i|^2`` as a (Q, N) array from explicit differences (no cancellation)."""
    diff = a[:, None, :] - b[None, :, :]
    return xp.sum(diff * diff, axis=-1)


def sqdist_gram(a, b, xp):
    """``|a_q - b_i|^2`` through ``|a|^2 + |b|^2 - 2 a.b`` (one matmul), clipped at 0."""
    d2 = (xp.sum(a * a, axis=1)[:, None] + xp.sum(b * b, axis=1)[None, :]
          - 2 * (a @ xp.matrix_transpose(b)))
    return xp.maximum(d2, xp.zeros_like(d2))


def chunk_rows(n_rows, per_row, budget=BLOCK_FLOATS):
    """``(start, stop)`` row blocks holding at most ``budget`` floats of ``per_row`` each."""
    step = max(1, budget // max(per_row, 1))
    return [(i, min(i + step, n_rows)) for i in range(0, n_rows, step)]


def _pair_roots(R, S, xp, *, vectors):
    """Eigen-roots of ``R_q S_i R_q`` for all pairs: traces (Q, N) and, if asked, the
    weighted-sum-ready factors ``(V, sqrt(lam))``."""
    C = sym(R[:, None, :, :] @ S[None, :, :, :] @ R[:, None, :, :], xp)
    # LAPACK on NaN/inf is undefined (garbage or an error): such pairs get NaN roots and
    # are decomposed as the identity
    bad = xp.logical_not(xp.all(xp.isfinite(C), axis=(-2, -1)))
    C = xp.where(bad[..., None, None], xp.eye(C.shape[-1], dtype=C.dtype), C)
    if vectors:
        lam, V = xp.linalg.eigh(C)
    else:
        lam, V = xp.linalg.eigvalsh(C), None
    s = xp.sqrt(xp.maximum(lam, xp.zeros_like(lam)))
    s = xp.where(bad[..., None], xp.asarray(float("nan"), dtype=s.dtype), s)
    return xp.sum(s, axis=-1), V, s


def cdist_full_xp(qm, R, trq, m, S, trS, xp, budget=BLOCK_FLOATS):
    """Generic exact ``W2^2`` (Q, N) from query roots ``R`` and traces (the reference)."""
    d = S.shape[-1]
    out = []
    for a, b in chunk_rows(qm.shape[0], S.shape[0] * d * d, budget):
        tr_cross, _, _ = _pair_roots(R[a:b, ...], S, xp, vectors=False)
        d2 = (sqdist_direct(qm[a:b, ...], m, xp) + trq[a:b, None] + trS[None, :]
              - 2 * tr_cross)
        out.append(xp.maximum(d2, xp.zeros_like(d2)))
    if not out:
        return xp.zeros((0, S.shape[0]), dtype=qm.dtype)
    return out[0] if len(out) == 1 else xp.concat(out, axis=0)


def weighted_root_sum_xp(R, S, W, xp, budget=BLOCK_FLOATS):
    """Generic ``M_q = sum_i W[q, i] (R_q S_i R_q)^{1/2}`` (the reference), (Q, d, d)."""
    d = S.shape[-1]
    out = []
    for a, b in chunk_rows(R.shape[0], S.shape[0] * d * d, budget):
        _, V, s = _pair_roots(R[a:b, ...], S, xp, vectors=True)
        w = W[a:b, :, None]
        # a zero weight drops its pair (as the kernels do), even a NaN one
        ws = xp.where(w == 0, xp.zeros_like(s), s * w)
        M = xp.sum((V * ws[..., None, :]) @ xp.matrix_transpose(V), axis=1)
        out.append(sym(M, xp))
    if not out:
        return xp.zeros((0, d, d), dtype=R.dtype)
    return out[0] if len(out) == 1 else xp.concat(out, axis=0)


def screened_cdist_xp(qm, R, trq, rq, m, S, trS, rS, cut, xp):
    """Generic twin of the screened kernel: the exact distances (no pair skipped)."""
    return cdist_full_xp(qm, R, trq, m, S, trS, xp)
