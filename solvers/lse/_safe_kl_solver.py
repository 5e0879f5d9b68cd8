r"""The stochastic Safe-KL solver behind :func:`solvers.minimize_logsumexp`.

Small pieces, in the order a run calls them: :func:`init_state` (first iterate and
shift), :func:`step` (one minibatch step, no host synchronisation), :func:`check` (every
``CHECK_EVERY`` steps: the only host synchronisation of the loop, for non-finite values),
:func:`record` (history), and :func:`finish` (the full-data diagnostic pass and the
result). Dispatch goes through the area's kernel table; nothing here asks which backend
runs.

The diagnostic pass evaluates ``phi`` once on every term at the returned iterate and
reports, with :math:`r_i = e^{\varphi_i - F}` the exact Gibbs density ratios,

- ``lme``: :math:`F = \log \frac1N\sum_i e^{\varphi_i}`, the exact log-mean-exp;
- ``surrogate``: :math:`F_\rho`, the Safe-KL surrogate of the same terms;
- ``gap``: :math:`F - F_\rho \ge 0`;
- ``kappa``: :math:`\kappa = \mathbb{E} r^2 = \mathbb{E}e^{2\varphi} / (\mathbb{E}e^\varphi)^2`
  and ``rho_kappa`` :math:`= \rho\kappa`;
- ``capped_mass``: the Gibbs mass :math:`\frac1N\sum_{r_i > 1/\rho} r_i` of the terms whose
  ratio exceeds the cap :math:`1/\rho` (the weight the surrogate cannot give them).

The bias bound :math:`F + \rho/2 + \log(1 - \rho\kappa) \le F_\rho \le F` holds only for
:math:`\rho\kappa < 1`; when :math:`\rho\kappa \ge 1` the surrogate can sit arbitrarily
far below :math:`F` (heavy-tailed exponents: one term dominates the sum), so the run
reports ``success=False`` (status ``MAXITER``: the budget was spent, but the answer did not
pass its check) with a message saying why.
"""
import math

import numpy as np

from .._lib.backend import backend_arg
from .._lib.host import to_float
from .._lib.namespace import array_namespace
from .._lib.optim import Adam
from .._lib.results import Status, call_callback, make_result
from .._lib.validation import check_positive
from ._safe_kl_kernels import KERNELS
from .logsumexp import logsumexp, logsumexp_merge, logsumexp_partial, softmax

#: steps between the loop's host synchronisations (the non-finite check)
CHECK_EVERY = 16
#: detail added to the shared NONFINITE status
NONFINITE_DETAIL = "phi returned non-finite values or gradients"
#: rows per phi call in the diagnostic pass (at least the batch size)
DIAG_CHUNK = 4096


# --- scalar building blocks (also used by safe_kl, _semidual_ot and _kl_dro) ---------------

def _softplus(x, xp):
    """``log(1 + e^x)`` without overflow."""
    return xp.maximum(x, xp.zeros_like(x)) + xp.log1p(xp.exp(-xp.abs(x)))


def _check_rho(rho):
    rho = check_positive(rho, "rho")
    if not rho < 1.0:
        raise ValueError(f"rho must lie in (0, 1), got {rho}")
    return rho


def _terms_xp(values, s, rho):
    """Generic twin of the ``terms`` kernel: ``(w, h)`` in the namespace of ``values``."""
    xp = array_namespace(values)
    log_rho = math.log(rho)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        d = values - s
        w = 1.0 / (rho + xp.exp(-d))
        h = _softplus(d + log_rho, xp) / rho
    return w, h


# --- estimators (generic twins of the kernels) ----------------------------------------------

def step_terms_generic(values, jac, s, rho):
    """``(mean(w jac), mean(w), mean(h))``: the generic twin of the ``step_terms`` kernel."""
    w, h = _terms_xp(values, s, rho)
    xp = array_namespace(values)
    B = values.shape[0]
    return (w @ jac) / B, xp.mean(w), xp.mean(h)


def estimator_step(values, jac, s, rho, estimator, be):
    """Gradient in (x, s) and the minibatch objective estimate, as 0-d arrays (no sync).

    Safe-KL: ``gx = mean(w jac)``, ``gs = 1 - mean(w)``, estimate ``s - 1 + mean(h)``.
    Naive: ``gx = softmax(values) @ jac``, estimate ``logsumexp(values) - log B``.
    """
    xp = be.xp
    B = values.shape[0]
    if estimator == "naive":
        backend = backend_arg(be)
        gx = softmax(values, backend=backend) @ jac
        return gx, None, logsumexp(values, backend=backend) - math.log(B)
    kernel = KERNELS.get("step_terms", be, generic=step_terms_generic)
    gx, mean_w, mean_h = kernel(values, jac, s, rho)
    gs = xp.asarray(1.0 - mean_w, dtype=values.dtype)
    return xp.asarray(gx, dtype=values.dtype), gs, s - 1.0 + mean_h


# --- the run --------------------------------------------------------------------------------

class State:
    """Everything a run carries between steps (device arrays stay on the device)."""

    def __init__(self, x, s, cfg):
        self.x, self.s = x, s
        self.x_avg, self.n_avg = None, 0
        self.adam = None
        xp, dtype = cfg.be.xp, x.dtype
        self.ring = xp.zeros((cfg.window,), dtype=dtype)
        self.bad = xp.asarray(False)
        self.good = (x, s, None, 0, 0, None)  # last iterate checked finite
        self.history = {"nit": [], "epoch": [], "fun": [], "s": [], "rho": []}
        self.nit = 0

    @property
    def x_ret(self):
        return self.x_avg if self.x_avg is not None else self.x


def _schedule(value, k):
    return float(value(k)) if callable(value) else value


def _evaluate(phi, x, batch, xp):
    out = phi(x, batch)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"phi must return a pair (values, jac), got {type(out).__name__}")
    values, jac = (xp.asarray(v) for v in out)
    for name, v in (("values", values), ("jac", jac)):
        if not xp.isdtype(v.dtype, ("real floating", "integral", "bool")):
            raise TypeError(f"phi must return real {name}, got dtype {v.dtype}")
    values = xp.reshape(xp.astype(values, x.dtype), (-1,))
    jac = xp.astype(jac, x.dtype)
    if jac.ndim != 2 or jac.shape[0] != values.shape[0] or jac.shape[1] != x.shape[0]:
        raise ValueError(f"phi must return values of shape (B,) and jac of shape "
                         f"(B, {x.shape[0]}); got {tuple(values.shape)} and "
                         f"{tuple(jac.shape)}")
    return values, jac


def init_shift(values, rho_k, be, dtype):
    """``log(1 - rho)`` plus the batch log-mean-exp: the shift at which E w = 1 roughly."""
    lme = logsumexp(values, backend=backend_arg(be)) - math.log(values.shape[0]) \
        + math.log1p(-rho_k)
    return be.xp.asarray(lme, dtype=dtype)


def step(st, k, cfg, source):
    """One minibatch step; device work only. Returns the minibatch estimate (0-d)."""
    xp = cfg.be.xp
    rho_k = _schedule(cfg.rho, k)
    if callable(cfg.rho):
        _check_rho(rho_k)
    lr_k = _schedule(cfg.lr, k)
    values, jac = _evaluate(cfg.phi, st.x, source.batch(cfg.batch_size), xp)
    st.bad = st.bad | ~(xp.all(xp.isfinite(values)) & xp.all(xp.isfinite(jac)))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):  # st.bad reports it
        return _update(st, k, cfg, values, jac, rho_k, lr_k)


def _update(st, k, cfg, values, jac, rho_k, lr_k):
    """The estimator and optimizer part of :func:`step`."""
    xp = cfg.be.xp
    if st.s is None and cfg.estimator == "safe-kl":
        st.s = init_shift(values, rho_k, cfg.be, st.x.dtype)
    gx, gs, fun_k = estimator_step(values, jac, st.s, rho_k, cfg.estimator, cfg.be)
    params, grads = ([st.x, st.s], [gx, gs]) if gs is not None else ([st.x], [gx])
    if cfg.optimizer == "adam":
        if st.adam is None:
            st.adam = Adam(params, lr=lr_k, betas=cfg.betas, xp=xp)
        params = st.adam.step(params, grads, lr=lr_k)
    else:
        params = [p - lr_k * g for p, g in zip(params, grads)]
    st.x = params[0]
    if gs is not None:
        st.s = params[1]
    if cfg.avg_start is not None and k >= cfg.avg_start:
        st.n_avg += 1
        st.x_avg = st.x if st.x_avg is None else st.x_avg + (st.x - st.x_avg) / st.n_avg
    st.ring[k % cfg.window] = fun_k
    st.nit = k + 1
    return fun_k, rho_k


def window_mean(st, cfg):
    """Mean of the minibatch estimates over the last ``window`` steps (0-d array)."""
    filled = min(st.nit, cfg.window)
    return cfg.be.xp.sum(st.ring[:filled]) / max(filled, 1)


def check(st, cfg):
    """Host sync: False when a non-finite value appeared since the last check."""
    if bool(st.bad):
        return False
    st.good = (st.x, st.s, st.x_avg, st.n_avg, st.nit, window_mean(st, cfg))
    return True


def rollback(st):
    """Return to the last iterate checked finite."""
    st.x, st.s, st.x_avg, st.n_avg, st.nit, _ = st.good
    return st.nit


def record(st, cfg, rho_k):
    nit = st.nit
    if nit % cfg.record_every and nit != cfg.maxiter:
        return
    h = st.history
    h["nit"].append(nit)
    h["epoch"].append(nit * cfg.batch_size / cfg.epoch_terms)
    h["fun"].append(window_mean(st, cfg))
    h["s"].append(st.s)
    h["rho"].append(rho_k)


def notify(st, cfg, fun_k):
    """The callback, with arrays of the input namespace (no sync on the device)."""
    be = cfg.be
    return call_callback(cfg.callback, x=be.to_input(st.x_ret), x_last=be.to_input(st.x),
                         s=None if st.s is None else be.to_input(st.s), nit=st.nit,
                         nfev=st.nit * cfg.batch_size,
                         epoch=st.nit * cfg.batch_size / cfg.epoch_terms,
                         fun=be.to_input(fun_k))


def _host_floats(items):
    """Python floats from a list of 0-d arrays / floats / None (one pass at the end)."""
    return [float("nan") if v is None else to_float(v) for v in items]


# --- diagnostics and result -----------------------------------------------------------------

def diagnostics(cfg, x, source, rho):
    """The full-data pass at ``x`` (see the module docstring); None when not possible."""
    xp = cfg.be.xp
    if source.n is None:
        if cfg.diag_size is None:
            return None
        chunks = source.chunks(max(cfg.batch_size, DIAG_CHUNK), cfg.diag_size)
    else:
        chunks = source.chunks(max(cfg.batch_size, DIAG_CHUNK))
    if getattr(source, "streaming", False):
        return _streaming_diagnostics(cfg, x, chunks, rho)
    parts = [_evaluate(cfg.phi, x, batch, xp)[0] for batch in chunks]
    v = xp.concat(parts) if len(parts) > 1 else parts[0]
    N = v.shape[0]
    from .safe_kl import safe_logsumexp  # safe_kl imports this module: import on use

    backend = backend_arg(cfg.be)
    logN = math.log(N)
    F = to_float(logsumexp(v, backend=backend)) - logN
    out = {"lme": F, "n_terms": N}
    if not math.isfinite(F):
        return {**out, "surrogate": float("nan"), "gap": float("nan"),
                "kappa": float("nan"), "rho_kappa": float("nan"),
                "capped_mass": float("nan")}
    F2 = to_float(logsumexp(2.0 * v, backend=backend)) - logN
    kappa = math.exp(min(F2 - 2.0 * F, 700.0))
    F_rho = to_float(safe_logsumexp(v, rho, backend=backend)) - logN
    capped = (v - F) > -math.log(rho)
    ninf = xp.asarray(-xp.inf, dtype=v.dtype)
    cm = to_float(logsumexp(xp.where(capped, v, ninf), backend=backend)) - logN - F
    return {**out, "surrogate": F_rho, "gap": F - F_rho, "kappa": kappa,
            "rho_kappa": rho * kappa, "capped_mass": math.exp(cm)}


def _streaming_diagnostics(cfg, x, chunks, rho):
    """Partitioned data: ``lme`` and ``kappa`` from exact (max, sum) partials merged over
    the chunks, in memory O(chunk); ``surrogate``, ``gap`` and ``capped_mass`` (which need
    every value at once) are None."""
    xp = cfg.be.xp
    m1, s1, m2, s2, N = [], [], [], [], 0
    for batch in chunks:
        v = _evaluate(cfg.phi, x, batch, xp)[0]
        N += v.shape[0]
        for ms, ss, a in ((m1, s1, v), (m2, s2, 2.0 * v)):
            m, sm = logsumexp_partial(a)
            ms.append(m)
            ss.append(sm)
    logN = math.log(N)
    F, F2 = (_merged(ms, ss, xp) - logN for ms, ss in ((m1, s1), (m2, s2)))
    kappa = math.exp(min(F2 - 2.0 * F, 700.0)) if math.isfinite(F) else float("nan")
    return {"lme": F, "n_terms": N, "surrogate": None, "gap": None, "kappa": kappa,
            "rho_kappa": rho * kappa, "capped_mass": None}


def _merged(ms, ss, xp):
    m, sm = logsumexp_merge(xp.stack(ms), xp.stack(ss))
    m, sm = to_float(m), to_float(sm)
    return m + math.log(sm) if sm > 0 else (m if m != m else -math.inf)


def _unreliable_message(d, rho):
    detail = "" if d["gap"] is None else (
        f"; it lies {d['gap']:.3g} below the exact log-mean-exp there and the capped terms "
        f"hold {100 * d['capped_mass']:.3g}% of the Gibbs mass")
    return (f"the Safe-KL surrogate is unreliable at the returned x: rho * kappa = "
            f"{d['rho_kappa']:.3g} >= 1 (kappa = E e^(2 phi) / (E e^phi)^2 = {d['kappa']:.3g} "
            f"over {d['n_terms']} terms), so its bias bound is void{detail}. The exponents "
            f"are heavy-tailed: use rho < 1/kappa = {1 / d['kappa']:.3g} or rescale phi "
            f"(e.g. a larger lam in kl_dro)")


def finish(st, cfg, source, status, message):
    """The result: iterate back to the input namespace, history to floats, diagnostics.

    A run that spends its budget succeeds (a fixed-budget stochastic method), unless the
    diagnostic pass finds the Safe-KL surrogate unreliable at the returned ``x``.
    """
    be = cfg.be
    rho_last = _schedule(cfg.rho, max(st.nit - 1, 0))
    failed = status == Status.NONFINITE
    fun = st.good[5] if failed else window_mean(st, cfg) if st.nit else None
    diag, success = None, None
    if status == Status.MAXITER:
        success = True
    if cfg.diagnose and st.nit and not failed:
        diag = diagnostics(cfg, st.x_ret, source, rho_last)
        if diag is not None and not math.isfinite(diag["lme"]):
            status, success = Status.NONFINITE, None
            message = (f"{NONFINITE_DETAIL} on the full data at the returned x (the "
                       f"diagnostic pass: log-mean-exp {diag['lme']})")
        elif diag is not None and cfg.estimator == "safe-kl" \
                and not diag["rho_kappa"] < 1 and status == Status.MAXITER:
            success, message = False, _unreliable_message(diag, rho_last)
    h = st.history
    history = {"nit": h["nit"], "epoch": h["epoch"], "fun": _host_floats(h["fun"]),
               "s": _host_floats(h["s"]), "rho": h["rho"]}
    return make_result(
        status, success=success, message=message,
        x=be.to_input(st.x_ret), x_last=be.to_input(st.x),
        s=None if st.s is None else to_float(st.s),
        fun=float("nan") if fun is None else to_float(fun),
        nit=st.nit, nfev=st.nit * cfg.batch_size, history=history,
        estimator=cfg.estimator, rho=rho_last, diagnostics=diag)


def run(cfg, x, s, source, bar):
    """The loop: steps, a host check every ``CHECK_EVERY`` steps, callback, progress."""
    st = State(x, s, cfg)
    status, message = Status.MAXITER, None
    for k in range(cfg.maxiter):
        fun_k, rho_k = step(st, k, cfg, source)
        last = st.nit == cfg.maxiter
        if (st.nit % CHECK_EVERY == 0 or last) and not check(st, cfg):
            first = rollback(st)
            status = Status.NONFINITE
            message = (f"{NONFINITE_DETAIL} at a step in ({first}, {k + 1}]; the returned x "
                       f"is the iterate after step {first}, the last one checked finite")
            break
        record(st, cfg, rho_k)
        bar.update(1)
        if cfg.callback is not None and notify(st, cfg, fun_k):
            status = Status.CALLBACK
            break
    if status == Status.CALLBACK and not check(st, cfg):
        first = rollback(st)
        status, message = Status.NONFINITE, f"{NONFINITE_DETAIL} after step {first}"
    return finish(st, cfg, source, status, message)
