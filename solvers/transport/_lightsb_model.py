"""The LightSB model written against ``xp``: parameters, log-weights, loss and gradient,
drift and exact sampling. The algorithm modules (:mod:`._lightsb_fit`,
:mod:`._lightsb_result`) call these; the backend-specific inner operations come from
:mod:`._lightsb_kernels`, whose generic twins live here.

Notation: ``la`` = log alpha (K,), ``r`` (K, D), ``q`` = log s (K, D) for diagonal S or a
lower-triangular factor L (K, D, D) with S = L L^T for full S.
"""
import math

from .._lib.host import to_host
from ..lse import logsumexp

_LOG_2PI = math.log(2.0 * math.pi)


class Params:
    """Unconstrained LightSB parameters ``(la, r, q)`` and the kind of S."""

    __slots__ = ("la", "r", "q", "kind")

    def __init__(self, la, r, q, kind):
        self.la, self.r, self.q, self.kind = la, r, q, kind

    def arrays(self):
        return (self.la, self.r, self.q)

    def flat(self, xp):
        """One vector ``[la, r.ravel(), q.ravel()]`` (the iterate a callback sees)."""
        return xp.concat([xp.reshape(a, (-1,)) for a in self.arrays()], axis=0)

    def to(self, xp):
        """The same parameters as arrays of ``xp`` (an explicit host copy if needed)."""
        if _same_namespace(self.r, xp):
            return self
        return Params(*(xp.asarray(to_host(a)) for a in self.arrays()), self.kind)


def _same_namespace(a, xp):
    from .._lib.namespace import array_namespace

    return array_namespace(a) is xp


def tril_mask(D, dtype, xp):
    i = xp.arange(D)
    return xp.astype(i[:, None] >= i[None, :], dtype)


def S_matrices(p, xp):
    """S_k as (K, D) diagonals or (K, D, D) matrices."""
    if p.kind == "diag":
        return xp.exp(p.q)
    return p.q @ xp.matrix_transpose(p.q)


def logits_c(x, p, xp, eps):
    """log alpha_k + (x^T S_k x + 2 r_k^T x) / (2 eps), shape (n, K)."""
    if p.kind == "diag":
        quad = (x * x) @ xp.matrix_transpose(xp.exp(p.q))
    else:
        Z = x @ p.q                                    # (K, n, D): rows x^T L_k
        quad = xp.matrix_transpose(xp.sum(Z * Z, axis=-1))
    return p.la + (quad + 2.0 * (x @ xp.matrix_transpose(p.r))) / (2.0 * eps)


def logits_v(y, p, xp, eps):
    """log alpha_k + log N(y | r_k, eps S_k) for diagonal S, shape (m, K)."""
    D = y.shape[1]
    const = -0.5 * D * (_LOG_2PI + math.log(eps))
    inv_s = xp.exp(-p.q)
    quad = ((y * y) @ xp.matrix_transpose(inv_s)
            - 2.0 * (y @ xp.matrix_transpose(p.r * inv_s))
            + xp.sum(p.r * p.r * inv_s, axis=1))
    half_logdet = 0.5 * xp.sum(p.q, axis=1)
    return p.la + const - half_logdet - quad / (2.0 * eps)


def softmax_rows(logits, xp, backend):
    """Row softmax and row log-sum-exp of an (n, K) array."""
    lse = logsumexp(logits, axis=1, backend=backend)
    return xp.exp(logits - lse[:, None]), lse


# ----------------------------------------------------------------------------------------
# generic twins of the kernels in _lightsb_kernels (the references they are tested against)
# ----------------------------------------------------------------------------------------
def _moment_stats(w, pts, xp):
    """(K, 1 + 2 D): sum_i w_ik, sum_i w_ik pts_i, sum_i w_ik pts_i^2."""
    wt = xp.matrix_transpose(w)
    return xp.concat([xp.sum(wt, axis=1, keepdims=True), wt @ pts, wt @ (pts * pts)],
                     axis=1)


def diag_stats_xp(x, y, la, r, s, eps, *, xp, lse_backend="auto", chunk=None):
    """Sufficient statistics of the diagonal-S loss on a batch.

    Returns ``(sum_i log c(x_i), sum_j log v(y_j), stats_x, stats_y)`` with ``stats`` of
    shape (K, 1 + 2 D): the Gibbs-weight sums and the weighted first and second moments.
    """
    K, D = r.shape
    p = Params(la, r, xp.log(s), "diag")
    chunk = max(x.shape[0], y.shape[0], 1) if chunk is None else chunk
    out = []
    for pts, logits in ((x, logits_c), (y, logits_v)):
        total = xp.zeros((), dtype=r.dtype)
        stats = xp.zeros((K, 1 + 2 * D), dtype=r.dtype)
        for a in range(0, pts.shape[0], chunk):
            block = pts[a:min(a + chunk, pts.shape[0]), :]
            w, lse = softmax_rows(logits(block, p, xp, eps), xp, lse_backend)
            total = total + xp.sum(lse)
            stats = stats + _moment_stats(w, block, xp)
        out.append((total, stats))
    (lc, sx), (lv, sy) = out
    return lc, lv, sx, sy


def _chunked_row_lse(pts, logits_of, chunk, xp, lse_backend, dtype):
    """Row log-sum-exps of ``logits_of(block)`` over ``pts``, ``chunk`` rows at a time."""
    rows = [logsumexp(logits_of(pts[a:min(a + chunk, pts.shape[0]), :]), axis=1,
                      backend=lse_backend)
            for a in range(0, pts.shape[0], chunk)]
    return xp.concat(rows, axis=0) if rows else xp.zeros((0,), dtype=dtype)


def diag_lse_xp(x, y, la, r, s, eps, *, xp, lse_backend="auto", chunk=None):
    """The row log-sum-exps of the diagonal-S loss, without the moments: ``log c(x_i)``
    (n,) and ``log v(y_j)`` (m,); what the held-out score needs."""
    p = Params(la, r, xp.log(s), "diag")
    chunk = max(x.shape[0], y.shape[0], 1) if chunk is None else chunk
    return tuple(_chunked_row_lse(pts, lambda b, f=logits: f(b, p, xp, eps), chunk, xp,
                                  lse_backend, r.dtype)
                 for pts, logits in ((x, logits_c), (y, logits_v)))


def log_weights_diag_xp(x, la, r, s, eps, *, xp, lse_backend="auto"):
    """log gamma_k(x) for diagonal S, shape (n, K), normalised over k."""
    logits = logits_c(x, Params(la, r, xp.log(s), "diag"), xp, eps)
    return logits - logsumexp(logits, axis=1, backend=lse_backend)[:, None]


def pick_components(logits, u, xp):
    """Component index per draw by inverse CDF: ``u`` (n, ns) uniforms -> (n * ns,)."""
    K = logits.shape[1]
    w = xp.exp(logits - xp.max(logits, axis=1, keepdims=True))
    cdf = xp.cumulative_sum(w, axis=1)                                    # (n, K)
    target = u * cdf[:, K - 1:K]
    k = xp.sum(xp.astype(cdf[:, None, :K - 1] <= target[:, :, None], xp.int64), axis=-1)
    return xp.reshape(k, (-1,))


def sample_diag_xp(x, logits, r, s, eps, u, z, *, xp):
    """Exact draws (n, ns, D) from the diagonal-S mixture pi(.|x): component by inverse
    CDF of the gates (``u``), then ``r_k + s_k x + sqrt(eps s_k) z``."""
    n, ns = u.shape
    D = x.shape[1]
    k = pick_components(logits, u, xp)
    zr = xp.reshape(z, (n * ns, D))
    xr = xp.reshape(xp.broadcast_to(x[:, None, :], (n, ns, D)), (n * ns, D))
    sk = xp.take(s, k, axis=0)
    y = xp.take(r, k, axis=0) + sk * xr + math.sqrt(eps) * xp.sqrt(sk) * zr
    return xp.reshape(y, (n, ns, D))


# ----------------------------------------------------------------------------------------
# loss and gradient
# ----------------------------------------------------------------------------------------
def _grad_diag(lc, lv, sx_all, sy_all, p, eps, n, m, xp):
    D = p.r.shape[1]
    sx, sxx = sx_all[:, 1:D + 1], sx_all[:, D + 1:]
    cu, sy, syy = sy_all[:, 0], sy_all[:, 1:D + 1], sy_all[:, D + 1:]
    loss = lc / n - lv / m
    g_la = sx_all[:, 0] / n - cu / m
    r, s = p.r, xp.exp(p.q)
    inv_s = 1.0 / s
    g_r = sx / (n * eps) - (sy - cu[:, None] * r) * inv_s / (m * eps)
    scat = syy - 2.0 * r * sy + cu[:, None] * r * r      # sum_j u_jk (y_j - r_k)^2
    g_s = sxx / (2.0 * eps * n) - (-0.5 * cu[:, None] * inv_s
                                   + scat * inv_s * inv_s / (2.0 * eps)) / m
    return loss, Params(g_la, g_r, g_s * s, p.kind)


def _full_side_stats(pts, logit_fn, K, D, chunk, xp, lse_backend):
    """Sum of log-sum-exps, weight sums, first moments and flattened second moments."""
    dtype = pts.dtype
    total = xp.zeros((), dtype=dtype)
    c0, c1 = xp.zeros((K,), dtype=dtype), xp.zeros((K, D), dtype=dtype)
    c2 = xp.zeros((K, D, D), dtype=dtype)
    for a in range(0, pts.shape[0], chunk):
        b = pts[a:min(a + chunk, pts.shape[0]), :]
        bb = xp.reshape(b[:, :, None] * b[:, None, :], (b.shape[0], D * D))
        w, lse = softmax_rows(logit_fn(b, bb), xp, lse_backend)
        wt = xp.matrix_transpose(w)
        total = total + xp.sum(lse)
        c0, c1 = c0 + xp.sum(w, axis=0), c1 + wt @ b
        c2 = c2 + xp.reshape(wt @ bb, (K, D, D))
    return total, c0, c1, c2


def _full_logits(p, eps, xp):
    """Full S = L L^T: ``S^{-1}`` and the logit functions ``(b, vec(b b^T)) -> logits``
    of ``log c`` and ``log v`` (quadratic forms as GEMMs on vec(x x^T):
    x^T M x = vec(x x^T).vec(M))."""
    K, D = p.r.shape
    L, r = p.q, p.r
    Linv = xp.linalg.solve(L, xp.broadcast_to(xp.eye(D, dtype=r.dtype), L.shape))
    S_inv = xp.matrix_transpose(Linv) @ Linv                            # (K, D, D)
    S_flat_t = xp.matrix_transpose(xp.reshape(L @ xp.matrix_transpose(L), (K, D * D)))
    P_flat_t = xp.matrix_transpose(xp.reshape(S_inv, (K, D * D)))
    Pr = xp.squeeze(S_inv @ r[:, :, None], axis=-1)                     # (K, D)
    v_const = (p.la - 0.5 * D * (_LOG_2PI + math.log(eps))
               - xp.sum(xp.log(xp.abs(xp.linalg.diagonal(L))), axis=1)
               - xp.sum(r * Pr, axis=1) / (2.0 * eps))
    r_t2, Pr_t2 = xp.matrix_transpose(r) / eps, xp.matrix_transpose(Pr) / eps
    return (S_inv, lambda b, bb: p.la + (bb @ S_flat_t) / (2.0 * eps) + b @ r_t2,
            lambda b, bb: v_const - (bb @ P_flat_t) / (2.0 * eps) + b @ Pr_t2)


def _loss_and_grad_full(x, y, p, eps, xp, lse_backend, chunk):
    """Full S = L L^T: the loss and its gradient from the side statistics."""
    n, m = x.shape[0], y.shape[0]
    K, D = p.r.shape
    L, r = p.q, p.r
    S_inv, logits_x, logits_y = _full_logits(p, eps, xp)
    lc, cx, sx, sxx = _full_side_stats(x, logits_x, K, D, chunk, xp, lse_backend)
    lv, cu, sy, syy = _full_side_stats(y, logits_y, K, D, chunk, xp, lse_backend)
    loss, g_la = lc / n - lv / m, cx / n - cu / m
    resid = sy - cu[:, None] * r                                        # sum u (y - r)
    g_r = sx / (n * eps) - xp.squeeze(S_inv @ resid[:, :, None], axis=-1) / (m * eps)
    outer_ry = r[:, :, None] * sy[:, None, :]
    scat = (syy - outer_ry - xp.matrix_transpose(outer_ry)
            + cu[:, None, None] * (r[:, :, None] * r[:, None, :]))
    G = sxx / (2.0 * eps * n) - (-0.5 * cu[:, None, None] * S_inv
                                 + S_inv @ scat @ S_inv / (2.0 * eps)) / m
    G = 0.5 * (G + xp.matrix_transpose(G))
    return loss, Params(g_la, g_r, 2.0 * (G @ L) * tril_mask(D, r.dtype, xp), p.kind)


def loss_and_grad(x, y, p, eps, xp, kernels, chunk=None):
    """Loss ``mean log c(x) - mean log v(y)`` and its gradient in ``(la, r, q)``.

    ``kernels`` is a resolved :class:`._lightsb_kernels.Kernels`; ``chunk`` bounds the
    rows per block (memory), ``None`` for one block.
    """
    n, m = x.shape[0], y.shape[0]
    chunk = max(n, m, 1) if chunk is None else chunk
    if p.kind == "diag":
        lc, lv, sx, sy = kernels.diag_stats(x, y, p.la, p.r, xp.exp(p.q), eps, chunk=chunk)
        return _grad_diag(lc, lv, sx, sy, p, eps, n, m, xp)
    return _loss_and_grad_full(x, y, p, eps, xp, kernels.lse, chunk)


def _full_row_lse(x, y, p, eps, xp, lse_backend, chunk):
    """Full S: the row log-sum-exps ``log c(x_i)``, ``log v(y_j)`` (no moments)."""
    D = p.r.shape[1]
    _, logits_x, logits_y = _full_logits(p, eps, xp)

    def with_outer(f):      # the logit functions take the block and vec(b b^T)
        return lambda b: f(b, xp.reshape(b[:, :, None] * b[:, None, :], (b.shape[0], D * D)))

    return tuple(_chunked_row_lse(pts, with_outer(f), chunk, xp, lse_backend, p.r.dtype)
                 for pts, f in ((x, logits_x), (y, logits_y)))


def row_lse(x, y, p, eps, xp, kernels, chunk=None):
    """``(log c(x_i), log v(y_j))`` per row, the terms of the loss without its gradient
    (about two thirds of the cost of :func:`loss_and_grad`: no moment products)."""
    chunk = max(x.shape[0], y.shape[0], 1) if chunk is None else chunk
    if p.kind == "diag":
        return kernels.diag_lse(x, y, p.la, p.r, xp.exp(p.q), eps, chunk=chunk)
    return _full_row_lse(x, y, p, eps, xp, kernels.lse, chunk)


def loss_value(x, y, p, eps, xp, kernels, chunk=None):
    """The loss ``mean log c(x) - mean log v(y)`` alone."""
    lc, lv = row_lse(x, y, p, eps, xp, kernels, chunk)
    return xp.sum(lc) / x.shape[0] - xp.sum(lv) / y.shape[0]


# ----------------------------------------------------------------------------------------
# drift and sampling
# ----------------------------------------------------------------------------------------
def drift(x, t, p, eps, xp, lse_backend, eig):
    """drift(x, t) = sum_k beta_k M_k^{-1} (r_k + (S_k - I) x), M_k = t S_k + (1-t) I."""
    if p.kind == "diag":
        s = xp.exp(p.q)
        Mi = 1.0 / (t * s + (1.0 - t))                                  # (K, D)
        a = (s - 1.0) * Mi
        logits = (p.la - 0.5 * xp.sum(xp.log(t * s + (1.0 - t)), axis=1)
                  + ((x * x) @ xp.matrix_transpose(a)
                     + 2.0 * (x @ xp.matrix_transpose(p.r * Mi))
                     - t * xp.sum(p.r * p.r * Mi, axis=1)) / (2.0 * eps))
        beta, _ = softmax_rows(logits, xp, lse_backend)
        return beta @ (p.r * Mi) + (beta @ a) * x
    lam, U = eig                                                          # (K, D), (K, D, D)
    mk = t * lam + (1.0 - t)
    Mi = 1.0 / mk
    a = (lam - 1.0) * Mi
    xk = x @ U                                                            # (K, n, D)
    rho = xp.squeeze(p.r[:, None, :] @ U, axis=1)                         # (K, D)
    quad = xp.sum(xk * xk * a[:, None, :] + 2.0 * xk * (rho * Mi)[:, None, :], axis=-1)
    logits = (p.la - 0.5 * xp.sum(xp.log(mk), axis=1)
              + (xp.matrix_transpose(quad) - t * xp.sum(rho * rho * Mi, axis=1)) / (2.0 * eps))
    beta, _ = softmax_rows(logits, xp, lse_backend)                       # (n, K)
    v = (rho * Mi)[:, None, :] + a[:, None, :] * xk                       # (K, n, D)
    back = v @ xp.matrix_transpose(U)                                     # (K, n, D)
    return xp.sum(xp.matrix_transpose(beta)[:, :, None] * back, axis=0)


def _sample_full(x, logits, p, eps, u, z, xp):
    """Full S: group the draws by component so each S_k, L_k is one matmul."""
    n, ns = u.shape
    K, D = p.r.shape
    k = pick_components(logits, u, xp)
    zr = xp.reshape(z, (n * ns, D))
    xr = xp.reshape(xp.broadcast_to(x[:, None, :], (n, ns, D)), (n * ns, D))
    order = xp.argsort(k, stable=True)
    ks = xp.take(k, order)
    xs, zs = xp.take(xr, order, axis=0), xp.take(zr, order, axis=0)
    S = S_matrices(p, xp)
    counts = to_host(xp.sum(xp.astype(ks[:, None] == xp.arange(K)[None, :], xp.int64),
                            axis=0)).tolist()
    parts, start = [], 0
    for j, c in enumerate(counts):
        if c == 0:
            continue
        xb, zb = xs[start:start + c, :], zs[start:start + c, :]
        parts.append(p.r[j, :] + xb @ S[j, ...]
                     + math.sqrt(eps) * (zb @ xp.matrix_transpose(p.q[j, ...])))
        start += c
    ys = xp.concat(parts, axis=0)
    inv = xp.argsort(order, stable=True)
    return xp.reshape(xp.take(ys, inv, axis=0), (n, ns, D))


def sample(x, p, eps, ns, draws, xp, kernels):
    """(n, ns, D) exact samples: component by inverse CDF of gamma(x), then a Gaussian.

    Draws: ``u`` (n, ns) uniforms, then ``z`` (n, ns, D) normals, on every backend, so the
    kernels and the generic code give the same samples for the same rng.
    """
    n, D = x.shape
    logits = logits_c(x, p, xp, eps)                                      # (n, K)
    u = draws.uniform(0.0, 1.0, (n, ns), dtype=x.dtype)
    z = draws.normal((n, ns, D), dtype=x.dtype)
    if p.kind == "diag":
        return kernels.sample_diag(x, logits, p.r, xp.exp(p.q), eps, u, z)
    return _sample_full(x, logits, p, eps, u, z, xp)
