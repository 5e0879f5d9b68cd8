"""Numba kernels for COSMO: the smooth orientation, the fused gradient + Adam step, and
the local least-squares parent fit and one-parent gain of the order search.

Each mirrors a generic version (``cosmo._orient_xp``, ``cosmo._step_xp``,
``_order_search.local_fit_xp`` / ``add_gain_xp``) that the tests compare against; the
kernel-table entries (``_dag_kernels.py``) are the plain-Python wrappers at the end.
"""
import math

import numpy as np

from .._lib.numba_config import jit


@jit
def orient(H, p, inv_t, eps, S, W):
    """S_ij = sigmoid((p_j - p_i - eps) / t) (S_ii = 0) and W = H * S, in place."""
    d = p.shape[0]
    for i in range(d):
        pi = p[i]
        for j in range(d):
            if i == j:
                S[i, j] = 0.0
                W[i, j] = 0.0
                continue
            z = (p[j] - pi - eps) * inv_t
            # saturated entries skip the exp (at low temperature that is most of them);
            # the error is below 2.4e-16 in absolute value
            if z > 36.0:
                s = 1.0
            elif z < -36.0:
                s = 0.0
            elif z >= 0.0:
                s = 1.0 / (1.0 + math.exp(-z))
            else:
                e = math.exp(z)
                s = e / (1.0 + e)
            S[i, j] = s
            W[i, j] = H[i, j] * s


@jit
def grad_step(G, H, p, S, inv_t, l1, l2, lp, lr, b1, b2, bc1, bc2, adam_eps, adam,
              mH, vH, mp, vp, gp):
    """Closed-form gradients of the COSMO loss and one Adam (or SGD) step, in place.

    ``G`` is the gradient of the data term with respect to ``W``. Returns the penalty part
    of the loss (l1 |H|_1 + l2 |H|_F^2 + lp |p|^2) at the *old* parameters.
    """
    d = p.shape[0]
    for j in range(d):
        gp[j] = 0.0
    pen = 0.0
    for i in range(d):
        for j in range(d):
            if i == j:
                continue
            h = H[i, j]
            s = S[i, j]
            g = G[i, j]
            pen += l1 * abs(h) + l2 * h * h
            sg = 0.0
            if h > 0.0:
                sg = 1.0
            elif h < 0.0:
                sg = -1.0
            gh = g * s + l1 * sg + 2.0 * l2 * h
            m = g * h * s * (1.0 - s) * inv_t
            gp[j] += m
            gp[i] -= m
            if adam:
                mm = b1 * mH[i, j] + (1.0 - b1) * gh
                vv = b2 * vH[i, j] + (1.0 - b2) * gh * gh
                mH[i, j] = mm
                vH[i, j] = vv
                H[i, j] = h - lr * (mm / bc1) / (math.sqrt(vv / bc2) + adam_eps)
            else:
                H[i, j] = h - lr * gh
    for j in range(d):
        pj = p[j]
        pen += lp * pj * pj
        g = gp[j] + 2.0 * lp * pj
        gp[j] = g
        if adam:
            mm = b1 * mp[j] + (1.0 - b1) * g
            vv = b2 * vp[j] + (1.0 - b2) * g * g
            mp[j] = mm
            vp[j] = vv
            p[j] = pj - lr * (mm / bc1) / (math.sqrt(vv / bc2) + adam_eps)
        else:
            p[j] = pj - lr * g
    return pen


# The parent sets' Gram matrices are symmetric positive definite (forward selection only
# adds a parent whose residual variance is positive), so a hand-written Cholesky serves
# where np.linalg would: Numba compiles np.linalg.solve / inv in about 2 s on a first
# call, these loops in a tenth of that (measured). They are inlined into their callers at
# Numba's IR level: compiled apart, each caller would optimise their code again when
# linking them in (0.27 CPU s more on the demo's first DAG fit). Arrays here come from
# np.empty: np.zeros and np.ones are compiled anew the first time a process meets them (a
# tenth of a second each).

@jit(inline='always')
def _cholesky(A):
    """Lower factor ``L`` of ``A = L L^T``; a pivot that is not positive (a parent set
    collinear to round-off) is floored at 1e-12 of its diagonal entry (an uninformative
    parent, which the pruning then drops)."""
    s = A.shape[0]
    L = np.empty((s, s))        # the upper triangle is never read
    for j in range(s):
        d = A[j, j]
        for k in range(j):
            d -= L[j, k] * L[j, k]
        d = math.sqrt(max(d, 1e-12 * abs(A[j, j]), 1e-300))
        L[j, j] = d
        for i in range(j + 1, s):
            acc = A[i, j]
            for k in range(j):
                acc -= L[i, k] * L[j, k]
            L[i, j] = acc / d
    return L


@jit(inline='always')
def _forward_solve(L, b):
    """``L^{-1} b`` for the lower factor of :func:`_cholesky`."""
    s = L.shape[0]
    z = np.empty(s)
    for i in range(s):
        acc = b[i]
        for k in range(i):
            acc -= L[i, k] * z[k]
        z[i] = acc / L[i, i]
    return z


@jit
def _solve_inv(A):
    """``A^{-1}`` of a symmetric positive definite ``A``: ``L^{-T} L^{-1}``."""
    s = A.shape[0]
    L = _cholesky(A)
    Li = np.empty((s, s))           # L^{-1}, lower triangular, column by column
    e = np.empty(s)
    for j in range(s):
        e[j] = 0.0
    for j in range(s):
        e[j] = 1.0
        z = _forward_solve(L, e)
        e[j] = 0.0
        for i in range(s):
            Li[i, j] = z[i]
    inv = np.empty((s, s))
    for i in range(s):
        for j in range(i, s):
            acc = 0.0
            for k in range(j, s):
                acc += Li[k, i] * Li[k, j]
            inv[i, j] = acc
            inv[j, i] = acc
    return inv


@jit
def _forward(C, y, cand, n, pen, max_parents, floor, sel):
    """Forward selection into ``sel``; returns the count (mirrors ``_forward`` of
    ``_order_search``: residualized covariances, one Gram-Schmidt step per parent)."""
    k = cand.shape[0]
    rss = C[y, y]
    s = 0
    if k == 0 or max_parents <= 0:
        return 0
    active = np.empty(k, dtype=np.bool_)
    rxy = np.empty(k)
    rxx = np.empty(k)
    rxx0 = np.empty(k)
    for a in range(k):
        active[a] = True
        rxy[a] = C[cand[a], y]
        rxx[a] = C[cand[a], cand[a]]
        rxx0[a] = rxx[a]
    Z = np.empty((min(max_parents, k), k))   # row q is written before it is read
    while s < max_parents:
        best = -1
        bestg = -1.0
        for a in range(k):
            if active[a] and rxx[a] > 1e-10 * rxx0[a]:
                g = rxy[a] * rxy[a] / rxx[a]
                if g > bestg:
                    bestg = g
                    best = a
        if best < 0 or bestg <= 0.0:
            break
        new_rss = max(rss - bestg, floor)
        if n * math.log(rss / new_rss) <= pen:
            break
        p = cand[best]
        sel[s] = p
        active[best] = False
        rss = new_rss
        root = math.sqrt(rxx[best])
        ry = rxy[best] / root
        for a in range(k):
            acc = C[cand[a], p]
            for q in range(s):
                acc -= Z[q, a] * Z[q, best]
            z = acc / root
            Z[s, a] = z
            rxy[a] -= z * ry
            rxx[a] -= z * z
        s += 1
    return s


@jit
def _local_fit(C, y, cand, n, pen, w_thr, max_parents, out_parents, out_coefs):
    """Forward selection + backward pruning of the parents of ``y`` among ``cand``.

    Mirrors ``_order_search.local_fit_xp``. Writes the parents and weights to the
    ``out`` arrays and returns ``(rss, count)``.
    """
    cyy = C[y, y]
    floor = 1e-12 * max(cyy, 1e-300)
    sel = np.empty(max(max_parents, 1), dtype=np.int64)
    s = _forward(C, y, cand, n, pen, max_parents, floor, sel)
    rss = cyy
    coefs = np.empty(0)
    while s > 0:
        A = np.empty((s, s))
        for q in range(s):
            for r in range(s):
                A[q, r] = C[sel[q], sel[r]]
        L = _solve_inv(A)
        coefs = np.empty(s)
        fit = 0.0
        for q in range(s):
            acc = 0.0
            for r in range(s):
                acc += L[q, r] * C[sel[r], y]
            coefs[q] = acc
            fit += C[y, sel[q]] * acc
        rss = max(cyy - fit, floor)
        worst = -1
        worst_drop = 0.0
        for q in range(s):
            drop = coefs[q] * coefs[q] / L[q, q]
            bad = abs(coefs[q]) < w_thr or n * math.log((rss + drop) / rss) <= pen
            if bad and (worst < 0 or drop < worst_drop):
                worst = q
                worst_drop = drop
        if worst < 0:
            break
        for q in range(worst, s - 1):
            sel[q] = sel[q + 1]
        s -= 1
        coefs = np.empty(0)
    if s == 0:
        rss = max(cyy, floor)
    for q in range(s):
        out_parents[q] = sel[q]
        out_coefs[q] = coefs[q]
    return rss, s


@jit
def add_gain(C, w, v, parents, coefs):
    """Drop in residual variance of ``w`` if ``v`` joined its ``parents`` (0 if degenerate).

    Mirrors ``_order_search.add_gain_xp``.
    """
    s = parents.shape[0]
    cxy = C[v, w]
    cxx = C[v, v]
    if s > 0:
        A = np.empty((s, s))
        b = np.empty(s)
        for q in range(s):
            b[q] = C[v, parents[q]]
            cxy -= b[q] * coefs[q]
            for r in range(s):
                A[q, r] = C[parents[q], parents[r]]
        z = _forward_solve(_cholesky(A), b)     # b^T A^{-1} b = |L^{-1} b|^2
        for q in range(s):
            cxx -= z[q] * z[q]
    if cxx <= 1e-10 * C[v, v]:
        return 0.0
    return cxy * cxy / cxx


# ---------------------------------------------------------------------------------------
# the kernel-table entries (see _dag_kernels.py): state buffers, orientation, fused step

def init_state(H, p):
    """Work buffers of a run: ``S``, ``W`` and the Adam moments (updated in place)."""
    return {"S": np.empty_like(H), "W": np.empty_like(H), "mH": np.zeros_like(H),
            "vH": np.zeros_like(H), "mp": np.zeros_like(p), "vp": np.zeros_like(p),
            "gp": np.empty_like(p)}


def orient_into(H, p, inv_t, eps, state):
    """``(S, W)`` written into the run's buffers."""
    orient(H, p, inv_t, eps, state["S"], state["W"])
    return state["S"], state["W"]


def step(G, H, p, S, inv_t, l1, l2, lp, lr, b1, b2, bc1, bc2, adam_eps, adam, state):
    """One fused gradient + Adam step in place; returns ``(H, p, state, penalty)``."""
    pen = grad_step(G, H, p, S, inv_t, l1, l2, lp, lr, b1, b2, bc1, bc2, adam_eps, adam,
                    state["mH"], state["vH"], state["mp"], state["vp"], state["gp"])
    return H, p, state, pen


def local_fit(C, y, cand, n, pen, w_thr, max_parents):
    """The compiled local fit with the generic signature: ``(rss, parents, coefs)``."""
    out_p = np.empty(max(max_parents, 1), dtype=np.int64)
    out_c = np.empty(max(max_parents, 1))
    rss, m = _local_fit(C, y, np.asarray(cand, dtype=np.int64), float(n), float(pen),
                        float(w_thr), int(max_parents), out_p, out_c)
    return float(rss), out_p[:m], out_c[:m]        # views of arrays made for this call
