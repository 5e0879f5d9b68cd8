"""Fitting LightSB: starts (k-means++, splitting), minibatch Adam, full-batch L-BFGS with
held-out early stopping, and the choice among candidate fits.

:class:`_Fitter` holds one validated problem (the public :func:`.lightsb.schrodinger_bridge`
builds it); each method is one step of the fit.
"""
import math

import numpy as np

from .._lib.host import to_host
from .._lib.optim import Adam, cosine_decay
from .._lib.results import Progress, Status, call_callback, STOPPED_BY_CALLBACK
from ._lightsb_model import Params, loss_and_grad, logits_c, softmax_rows

#: (status, message) pairs of a fit, codes shared with every solver (``_lib.results``)
NONFINITE = (int(Status.NONFINITE), "the loss became non-finite (lower lr or rescale the data)")
BUDGET = (int(Status.MAXITER), "maximum number of iterations reached")
_STOP = STOPPED_BY_CALLBACK[0]
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
    d2 = xp.sum((y - y[first:first + 1, :]) ** 2, axis=1)
    for _ in range(1, K):
        with np.errstate(divide="ignore"):
            score = xp.log(d2) + draws.gumbel((n,), dtype=y.dtype)
        nxt = int(xp.argmax(score))
        if not bool(d2[nxt] > 0):  # fewer distinct rows than K: fall back to any unused row
            used = set(chosen)
            nxt = next(i for i in range(n) if i not in used)
        chosen.append(nxt)
        d2 = xp.minimum(d2, xp.sum((y - y[nxt:nxt + 1, :]) ** 2, axis=1))
    return chosen


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

    def __init__(self, x0, x1, eps, *, be, kernels, draws, opts, callback, progress):
        self.x0, self.x1, self.eps = x0, x1, eps
        self.be, self.xp, self.kernels, self.draws = be, be.xp, kernels, draws
        self.opts, self.callback, self.progress = opts, callback, progress
        self.x0v = self.x1v = None

    # -- data and starts ----------------------------------------------------------------
    def hold_out(self, fraction):
        """Move a random ``fraction`` of each sample set to the held-out part."""
        xp, n0, n1 = self.xp, self.x0.shape[0], self.x1.shape[0]
        n0v, n1v = max(1, int(round(fraction * n0))), max(1, int(round(fraction * n1)))
        p0, p1 = self.draws.permutation(n0), self.draws.permutation(n1)
        self.x0v, self.x0 = xp.take(self.x0, p0[:n0v], axis=0), xp.take(self.x0, p0[n0v:], axis=0)
        self.x1v, self.x1 = xp.take(self.x1, p1[:n1v], axis=0), xp.take(self.x1, p1[n1v:], axis=0)

    def initial(self, k, x0_all, x1_all):
        """k means from target samples, S = init_scale I, uniform weights; one component
        (the start of "split") sits at the mean displacement."""
        xp, o = self.xp, self.opts
        dtype, D = x1_all.dtype, x1_all.shape[1]
        if k == 1 and o["init"] in ("split", "auto"):
            r = (xp.mean(x1_all, axis=0, keepdims=True)
                 - o["init_scale"] * xp.mean(x0_all, axis=0, keepdims=True))
        else:
            if o["init"] == "random":
                idx = self.draws.choice(x1_all.shape[0], k, replace=False)
            else:
                idx = xp.asarray(kmeanspp_rows(x1_all, k, self.draws, xp))
            r = xp.take(x1_all, idx, axis=0)
        la = xp.full((k,), -math.log(k), dtype=dtype)
        if o["covariance"] == "diag":
            q = xp.full((k, D), math.log(o["init_scale"]), dtype=dtype)
        else:
            q = xp.broadcast_to(math.sqrt(o["init_scale"]) * xp.eye(D, dtype=dtype), (k, D, D))
            q = q * xp.ones((k, 1, 1), dtype=dtype)
        return Params(la, r, q, o["covariance"])

    def score(self, p):
        """The held-out loss (the training loss without a held-out part)."""
        x, y = (self.x0v, self.x1v) if self.x0v is not None else (self.x0, self.x1)
        value, _ = loss_and_grad(x, y, p, self.eps, self.xp, self.kernels, self.opts["chunk"])
        return float(value)

    def _stop_requested(self, p, fun, nit):
        if self.callback is None:
            return False
        x = self.be.to_input(p.flat(self.xp))
        return call_callback(self.callback, x=x, fun=fun, nit=nit)

    # -- optimizers ---------------------------------------------------------------------
    def minibatch_adam(self, p, nit_offset=0):
        """Minibatch Adam (``solvers._lib.optim``) with a cosine schedule.

        As in the reference code, the weights move as ``a = eps * log alpha`` (gradient
        ``g / eps``): Adam's step is invariant to the gradient's scale, so this is Adam on
        ``log alpha`` with step size ``eps * lr``.
        """
        xp, o, eps = self.xp, self.opts, self.eps
        total = max(o["maxiter"] - 1, 1)
        opt_la = Adam([p.la], lr=cosine_decay(o["lr"] * eps, total, o["lr_decay"]), xp=xp)
        opt_rq = Adam([p.r, p.q], lr=cosine_decay(o["lr"], total, o["lr_decay"]), xp=xp)
        n0, n1, bs, maxiter = self.x0.shape[0], self.x1.shape[0], o["batch_size"], o["maxiter"]
        history, nit, pending = [], 0, []
        status, message = BUDGET
        # losses reach the host once per `every` steps (one device sync, not one per step)
        # unless a callback or the progress bar needs each one
        every = 1 if (self.callback is not None or self.progress) else SYNC_EVERY
        with Progress(maxiter, "lightsb adam", enabled=self.progress) as bar:
            for it in range(1, maxiter + 1):
                xb = xp.take(self.x0, self.draws.integers(0, n0, (min(bs, n0),)), axis=0)
                yb = xp.take(self.x1, self.draws.integers(0, n1, (min(bs, n1),)), axis=0)
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
                if self._stop_requested(p, history[-1], nit_offset + it):
                    status, message = STOPPED_BY_CALLBACK
                    break
        return p, history, nit, status, message

    def lbfgs(self, p, nit_offset=0):
        """Full-batch L-BFGS (SciPy) on the closed-form gradient, held-out early stopping."""
        from scipy.optimize import minimize

        xp, o, eps = self.xp, self.opts, self.eps
        kind, dtype = p.kind, p.r.dtype
        shapes = [tuple(a.shape) for a in p.arrays()]
        sizes = [math.prod(s) for s in shapes]
        host_dtype = np.float32 if dtype == xp.float32 else np.float64

        def unpack(v):
            out, off = [], 0
            for shp, sz in zip(shapes, sizes):
                out.append(xp.reshape(xp.asarray(np.ascontiguousarray(v[off:off + sz]),
                                                  dtype=dtype), shp))
                off += sz
            return Params(*out, kind)

        def fun(v):
            loss, g = loss_and_grad(self.x0, self.x1, unpack(v), eps, xp, self.kernels,
                                    o["chunk"])
            return float(loss), to_host(g.flat(xp)).astype(np.float64)

        history = []
        state = {"best": None, "best_val": math.inf, "bad": 0, "stop": None}
        label = f"lightsb l-bfgs K={shapes[1][0]}"
        with Progress(o["maxiter"], label, enabled=self.progress) as bar:
            def cb(intermediate_result):
                v = intermediate_result.x
                history.append(float(intermediate_result.fun))
                bar.update(1, loss=history[-1])
                params = unpack(v)
                if self.x0v is not None and self._early_stop(params, v, state):
                    raise StopIteration
                if self._stop_requested(params, history[-1], nit_offset + len(history)):
                    state["stop"] = "callback"
                    raise StopIteration

            v0 = to_host(p.flat(xp)).astype(host_dtype).astype(np.float64)
            res = minimize(fun, v0, jac=True, method="L-BFGS-B", callback=cb,
                           options={"maxiter": o["maxiter"], "maxcor": 20, "ftol": 1e-15,
                                    "gtol": 1e-12, "maxls": 40})
        v = state["best"] if state["best"] is not None else res.x
        return (unpack(v), history, len(history)) + self._lbfgs_status(state, res)

    def _early_stop(self, params, v, state):
        """Track the best held-out loss; True once it stalled for ``patience`` iterations."""
        val = self.score(params)   # called only with a held-out part (x0v, x1v)
        if val < state["best_val"] - 1e-12 * abs(val):
            state.update(best=v.copy(), best_val=val, bad=0)
            return False
        state["bad"] += 1
        if state["bad"] >= self.opts["patience"]:
            state["stop"] = "early"
            return True
        return False

    def _lbfgs_status(self, state, res):
        if state["stop"] == "callback":
            return STOPPED_BY_CALLBACK
        if state["stop"] == "early":
            return (int(Status.CONVERGED), "held-out loss stopped improving for "
                    f"{self.opts['patience']} iterations")
        if not np.isfinite(res.fun):
            return NONFINITE
        # L-BFGS-B: 0 converged, 1 iteration budget, 2 the line search spent its
        # evaluations without a sufficient decrease (abnormal termination)
        code = {0: Status.CONVERGED, 1: Status.MAXITER}.get(int(res.status), Status.MAXFEV)
        return int(code), str(res.message)

    def fit(self, p, nit_offset=0):
        """One fit from ``p``: ``(params, history, nit, status, message)``."""
        if self.opts["optimizer"] == "adam":
            return self.minibatch_adam(p, nit_offset)
        return self.lbfgs(p, nit_offset)

    # -- candidate fits -----------------------------------------------------------------
    def by_splitting(self, x0_all, x1_all):
        """Grow 1 -> 2 -> 4 -> ... -> K components while the score drops by split_tol."""
        K = self.opts["n_components"]
        out = self.fit(self.initial(1, x0_all, x1_all))
        history, nit = list(out[1]), out[2]
        best_out, best_score = out, self.score(out[0])
        stages = [(1, best_score)]
        score_x0 = self.x0v if self.x0v is not None else self.x0
        while best_out[0].r.shape[0] < K and out[3] != _STOP:
            grown = split_components(best_out[0], score_x0, self.eps, self.draws, self.xp, K,
                                     self.kernels.lse)
            out = self.fit(grown, nit_offset=nit)
            history += out[1]
            nit += out[2]
            sc = self.score(out[0])
            stages.append((grown.r.shape[0], sc))
            if not sc < best_score - self.opts["split_tol"]:
                break
            best_out, best_score = out, sc
        if out[3] == _STOP:
            best_out = out
        params, _, _, status, message = best_out
        return (params, history, nit, status, message), best_score, stages

    def candidates(self, x0_all, x1_all):
        """Every candidate fit as ``(fit, score, stages)``; "auto" tries both starts and
        restarts repeat them. A callback stop ends the list."""
        o = self.opts
        init, K = o["init"], o["n_components"]
        must_score = o["n_restarts"] > 1 or init == "auto"
        runs = []
        for _ in range(o["n_restarts"]):
            if init in ("split", "auto"):
                runs.append(self.by_splitting(x0_all, x1_all))
                if runs[-1][0][3] == _STOP:
                    break
            if init != "split":
                out = self.fit(self.initial(K, x0_all, x1_all))
                sc = self.score(out[0]) if must_score else math.nan
                runs.append((out, sc, [(K, sc)]))
                if out[3] == _STOP:
                    break
        return runs
