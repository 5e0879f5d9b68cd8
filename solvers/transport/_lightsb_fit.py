"""Fitting LightSB: the problem (data, held-out split, options), the starts (k-means++,
splitting) and minibatch Adam. The full-batch L-BFGS fits and the search among candidate
starts are in :mod:`._lightsb_search`.

:class:`_Fitter` holds one validated problem (the public :func:`.lightsb.schrodinger_bridge`
builds it); each method is one step of the fit.
"""
import math

import numpy as np

from .._lib.host import to_host
from .._lib.optim import Adam, cosine_decay
from .._lib.results import Progress, Status, STOPPED_BY_CALLBACK
from ._lightsb_model import Params, loss_and_grad, loss_value, logits_c, softmax_rows

#: (status, message) pairs of a fit, codes shared with every solver (``_lib.results``)
NONFINITE = (int(Status.NONFINITE), "the loss became non-finite (lower lr or rescale the data)")
BUDGET = (int(Status.MAXITER), "maximum number of iterations reached")
#: Adam steps between two copies of the loss history to the host (without a callback)
SYNC_EVERY = 50
#: statuses that count as a successful fit (a spent Adam schedule or L-BFGS budget is one)
SUCCESS = (int(Status.CONVERGED), int(Status.MAXITER))


def kmeanspp_rows(y, K, draws, xp):
    """Indices of K rows of ``y`` chosen by k-means++ seeding (D^2 sampling).

    The first row is uniform; each next row is drawn with probability proportional to
    its squared distance to the nearest row already chosen (Gumbel-max on the log
    distances, so it stays in ``xp``). Unlike K uniform draws, this covers clusters that
    hold a small fraction of the target mass: a component of the potential that no
    initial mean sits near is rarely found by the optimiser later (a local optimum).
    """
    n = y.shape[0]
    first = int(draws.integers(0, n))
    chosen = [first]
    to_row = _squared_distances(y, xp)
    d2 = to_row(first)
    for _ in range(1, K):
        with np.errstate(divide="ignore"):
            score = xp.log(d2) + draws.gumbel((n,), dtype=y.dtype)
        nxt = int(xp.argmax(score))
        if not bool(d2[nxt] > 0):  # fewer distinct rows than K: fall back to any unused row
            used = set(chosen)
            nxt = next(i for i in range(n) if i not in used)
        chosen.append(nxt)
        d2 = xp.minimum(d2, to_row(nxt))
    return chosen


def _squared_distances(y, xp):
    """``to_row(i)``: squared distances of every row of ``y`` to row ``i``.

    Computed as ``|a|^2 - 2 a.b + |b|^2`` on the centred rows (one matrix-vector
    product instead of an (n, D) temporary: 2.6x faster at n = 150 000, D = 64); values
    within rounding of zero (duplicates of row ``i``, row ``i`` itself) are set to zero.
    """
    yc = y - xp.mean(y, axis=0, keepdims=True)
    norms = xp.sum(yc * yc, axis=1)

    def to_row(i):
        d2 = norms - 2.0 * (yc @ yc[i, :]) + norms[i]
        return xp.where(d2 > 1e-12 * (norms + norms[i]), d2, xp.zeros_like(d2))
    return to_row


def split_components(p, x, eps, draws, xp, n_max, lse_backend, scale=0.1):
    """Double the mixture (up to ``n_max`` components) by splitting the heaviest ones.

    Each split component k becomes two with half its weight, the same S_k and means
    r_k -+ delta, where delta is a random direction of length ``scale * sqrt(eps)``: the
    two children's gates differ by delta^T x / eps, a soft cut of the region k served,
    which the next fit sharpens or undoes. "Heaviest" is by the mean gate
    E_x gamma_k(x) over ``x``.
    """
    K, D = p.r.shape
    n_new = min(K, n_max - K)
    gates, _ = softmax_rows(logits_c(x, p, xp, eps), xp, lse_backend)
    idx = xp.argsort(-xp.mean(gates, axis=0))[:n_new]
    delta = draws.normal((n_new, D), dtype=p.r.dtype)
    delta = delta * (scale * math.sqrt(eps)
                     / xp.sqrt(xp.sum(delta * delta, axis=1, keepdims=True)))
    # (K, n_new) indicator of the split rows: updates without in-place indexing (xp-generic)
    onehot = xp.astype(xp.arange(K)[:, None] == idx[None, :], p.r.dtype)
    la = p.la - math.log(2.0) * xp.sum(onehot, axis=1)
    r = xp.concat([p.r - onehot @ delta, xp.take(p.r, idx, axis=0) + delta], axis=0)
    return Params(xp.concat([la, xp.take(la, idx, axis=0)], axis=0), r,
                  xp.concat([p.q, xp.take(p.q, idx, axis=0)], axis=0), p.kind)


class _Fitter:
    """One validated LightSB problem: data (with the held-out split), options, kernels."""

    def __init__(self, x0, x1, eps, *, be, kernels, draws, opts, progress, chunk):
        self.x0, self.x1, self.eps = x0, x1, eps
        self.be, self.xp, self.kernels, self.draws = be, be.xp, kernels, draws
        self.opts, self.progress = opts, progress   # opts: the validated options
        self.chunk = chunk                          # rows per block of the generic loss
        self.x0v = self.x1v = None

    # -- data and starts ----------------------------------------------------------------
    def hold_out(self, fraction):
        """Move a random ``fraction`` of each sample set to the held-out part."""
        xp, n0, n1 = self.xp, self.x0.shape[0], self.x1.shape[0]
        n0v, n1v = max(1, int(round(fraction * n0))), max(1, int(round(fraction * n1)))
        p0, p1 = self.draws.permutation(n0), self.draws.permutation(n1)
        self.x0v, self.x0 = xp.take(self.x0, p0[:n0v], axis=0), xp.take(self.x0, p0[n0v:], axis=0)
        self.x1v, self.x1 = xp.take(self.x1, p1[:n1v], axis=0), xp.take(self.x1, p1[n1v:], axis=0)

    def initial(self, k, x0_all, x1_all, how, draws):
        """A start of ``k`` components, S = init_scale I, uniform weights: for ``how =
        "split"`` one component at the mean displacement, otherwise means at ``k`` rows of
        ``x1_all`` drawn by k-means++ seeding (``"kmeans++"``) or uniformly
        (``"random"``) with ``draws``."""
        xp, o = self.xp, self.opts
        dtype, D = x1_all.dtype, x1_all.shape[1]
        if how == "split":
            r = (xp.mean(x1_all, axis=0, keepdims=True)
                 - o.init_scale * xp.mean(x0_all, axis=0, keepdims=True))
        else:
            if how == "random":
                idx = draws.choice(x1_all.shape[0], k, replace=False)
            else:
                idx = xp.asarray(kmeanspp_rows(x1_all, k, draws, xp))
            r = xp.take(x1_all, idx, axis=0)
        la = xp.full((k,), -math.log(k), dtype=dtype)
        if o.covariance == "diag":
            q = xp.full((k, D), math.log(o.init_scale), dtype=dtype)
        else:
            q = xp.broadcast_to(math.sqrt(o.init_scale) * xp.eye(D, dtype=dtype), (k, D, D))
            q = q * xp.ones((k, 1, 1), dtype=dtype)
        return Params(la, r, q, o.covariance)

    def score(self, p):
        """The held-out loss (the training loss without a held-out part)."""
        x, y = (self.x0v, self.x1v) if self.x0v is not None else (self.x0, self.x1)
        return float(loss_value(x, y, p, self.eps, self.xp, self.kernels, self.chunk))

    # -- optimizers ---------------------------------------------------------------------
    def minibatch_adam(self, p, draws, monitor=None):
        """Minibatch Adam (``solvers._lib.optim``) with a cosine schedule.

        As in the reference code, the weights move as ``a = eps * log alpha`` (gradient
        ``g / eps``): Adam's step is invariant to the gradient's scale, so this is Adam on
        ``log alpha`` with step size ``eps * lr``. ``monitor(params, loss, nit)`` is called
        after each step (True: stop) when given.
        """
        xp, o, eps = self.xp, self.opts, self.eps
        total = max(o.maxiter - 1, 1)
        opt_la = Adam([p.la], lr=cosine_decay(o.lr * eps, total, o.lr_decay), xp=xp)
        opt_rq = Adam([p.r, p.q], lr=cosine_decay(o.lr, total, o.lr_decay), xp=xp)
        n0, n1, bs, maxiter = self.x0.shape[0], self.x1.shape[0], o.batch_size, o.maxiter
        history, nit, pending = [], 0, []
        status, message = BUDGET
        # losses reach the host once per `every` steps (one device sync, not one per step)
        # unless a callback or the progress bar needs each one
        every = 1 if (monitor is not None or self.progress) else SYNC_EVERY
        with Progress(maxiter, "lightsb adam", enabled=self.progress) as bar:
            for it in range(1, maxiter + 1):
                xb = xp.take(self.x0, draws.integers(0, n0, (min(bs, n0),)), axis=0)
                yb = xp.take(self.x1, draws.integers(0, n1, (min(bs, n1),)), axis=0)
                loss, g = loss_and_grad(xb, yb, p, eps, xp, self.kernels)
                (la,) = opt_la.step([p.la], [g.la / eps])
                r, q = opt_rq.step([p.r, p.q], [g.r, g.q])
                p = Params(la, r, q, p.kind)
                pending.append(xp.asarray(loss))
                if len(pending) < every and it < maxiter:
                    continue
                values = to_host(xp.stack(pending)).astype(np.float64)
                pending = []
                bad = np.flatnonzero(~np.isfinite(values))
                keep = values if bad.size == 0 else values[:bad[0] + 1]
                history += keep.tolist()
                nit = it - values.size + keep.size
                if bad.size:
                    status, message = NONFINITE
                    break
                bar.update(keep.size, loss=history[-1])
                if monitor is not None and monitor(p, history[-1], it):
                    status, message = STOPPED_BY_CALLBACK
                    break
        return p, history, nit, status, message
