r"""The stochastic Safe-KL solver behind :func:`solvers.minimize_logsumexp`, and the
building blocks every Safe-KL module shares.

Building blocks: the capped weights and softplus terms (:func:`terms_generic`), the
per-row shift solve of the deterministic surrogate (:func:`surrogate_rows`, through the
``solve_rows`` kernel), and the option constraints the Safe-KL entry points declare
(:class:`Either`, :func:`scheduled`, :data:`BETAS`) and the options every stochastic
entry point shares.

The run, in the order it calls its pieces: :func:`init_shift` (first shift),
:func:`step` (one minibatch step, no host synchronisation), :func:`check` (every
``CHECK_EVERY`` steps: the only host synchronisation of the loop, for non-finite values),
:func:`record` (history), and :func:`finish` (the full-data diagnostic pass and the
result). A run reads its options from the frozen config ``cfg`` and what it derived from
them and the data from the frozen :class:`Plan`. Dispatch goes through the area's kernel
table; nothing here asks which backend runs.

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
import dataclasses
import functools
import math

import numpy as np

from .._lib.backend import backend_arg
from .._lib.host import to_float
from .._lib.namespace import array_namespace
from .._lib.optim import Adam
from .._lib.params import (BACKEND, CALLBACK, FLAG, PROBABILITY, SEED, Constraint, Param,
                           Real)
from .._lib.results import Status, call_callback, make_result
from ._safe_kl_kernels import KERNELS, PASS_GENERIC_BELOW
from .logsumexp import logsumexp, logsumexp_merge, logsumexp_partial, softmax

#: steps between the loop's host synchronisations (the non-finite check)
CHECK_EVERY = 16
#: detail added to the shared NONFINITE status
NONFINITE_DETAIL = "phi returned non-finite values or gradients"
#: rows per phi call in the diagnostic pass (at least the batch size)
DIAG_CHUNK = 4096


# --- option constraints shared by the Safe-KL entry points ---------------------------------

class Either(Constraint):
    """The values ``inner`` accepts, or any value ``passes(value)`` lets through unchanged
    (a callable schedule, ``None``); anything else gets ``inner``'s own error, so an
    out-of-range number stays a ``ValueError``."""

    def __init__(self, inner, passes, kind):
        self.inner, self.passes = inner, passes
        self.kind = f"{inner.kind} or {kind}"

    def check(self, value, name):
        return value if self.passes(value) else self.inner.check(value, name)

    def invalid_values(self):
        return self.inner.invalid_values()

    def describe(self):
        return self.inner.describe()


def scheduled(inner):
    """``inner``'s values or a callable schedule ``value(k)`` of the step ``k`` (whose
    values the solver checks when it uses them)."""
    return Either(inner, callable, "callable")


class _Pair(Constraint):
    """Two floats in ``[0, 1)`` (Adam's ``betas``); returned as a tuple of floats."""

    kind = "(float, float)"

    def check(self, value, name):
        try:
            b1, b2 = (float(b) for b in value)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a pair of floats, got {value!r}") from None
        if not (0 <= b1 < 1 and 0 <= b2 < 1):
            raise ValueError(f"{name} must lie in [0, 1), got {value!r}")
        return b1, b2

    def invalid_values(self):
        return {"one": (1.0, 0.5), "nan": (math.nan, 0.5), "length": (0.9,), "str": "0.9"}

    def describe(self):
        return "each in [0, 1)"


#: Safe-KL's cap parameter rho, a constant or a schedule rho(k)
RHO = scheduled(PROBABILITY)
#: the fraction of the run after which iterates are averaged (None: the last iterate)
FRACTION = Either(Real(0, 1, high_open=True), lambda value: value is None, "None")
#: Adam's moment decay rates
BETAS = _Pair()

#: options every stochastic Safe-KL entry point takes, declared once
RNG = Param("rng", SEED, None, "random numbers")
CALLBACK_OPTION = Param("callback", CALLBACK, None, "called with the intermediate result")
PROGRESS = Param("progress", FLAG, False, "show a progress bar")
BACKEND_OPTION = Param("backend", BACKEND, "auto", "which kernels run")
AVERAGE = Param("average", FRACTION, 0.5, "fraction of the run before suffix averaging")


# --- scalar building blocks (also used by safe_kl, _semidual_ot and _kl_dro) ---------------

def _softplus(x, xp):
    """``log(1 + e^x)`` without overflow."""
    return xp.maximum(x, xp.zeros_like(x)) + xp.log1p(xp.exp(-xp.abs(x)))


def terms_generic(values, s, rho):
    """Generic twin of the ``terms`` kernel: ``(w, h)`` in the namespace of ``values``."""
    xp = array_namespace(values)
    log_rho = math.log(rho)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        d = values - s
        w = 1.0 / (rho + xp.exp(-d))
        h = _softplus(d + log_rho, xp) / rho
    return w, h


def _row_means(x, mu, xp):
    if mu is None:
        return xp.mean(x, axis=1)
    return xp.sum(mu * x, axis=1)


def solve_rows_generic(A, mu, rho, tol, maxiter, *, be):
    """Shift ``s`` with ``E_mu w = 1`` per row of finite-or--inf ``A`` (R, n); value F_rho.

    The generic twin of the ``solve_rows`` kernel (``be``: the resolved backend, whose
    generic code computes the rows' log-mean-exp). Safeguarded Newton on
    ``G(s) = log E w(s)`` (decreasing, root unique) inside a bracket ``[lo, hi]``:
    ``hi = F + log(1 - rho)`` (Jensen: ``G(hi) <= 0``), ``lo`` found by doubling the
    distance until ``G(lo) >= 0``. Steps leaving the bracket are bisections.
    """
    xp = array_namespace(A)
    F = logsumexp(A, axis=1, b=mu, backend=backend_arg(be.generic()))
    if mu is None:
        F = F - math.log(A.shape[1])
    F = xp.asarray(F, dtype=A.dtype)
    log1m = math.log1p(-rho)

    def stats(s):
        with np.errstate(over="ignore"):
            w = 1.0 / (rho + xp.exp(xp.reshape(s, (-1, 1)) - A))
        ew = _row_means(w, mu, xp)
        ev = _row_means(w * (1.0 - rho * w), mu, xp)
        return ew, ev

    hi = F + log1m
    ew_hi, _ = stats(hi)
    gap = xp.ones_like(F)
    lo = hi - gap
    for _ in range(64):
        ew_lo, _ = stats(lo)
        short = ew_lo < 1.0
        if not bool(xp.any(short)):
            break
        gap = xp.where(short, 2.0 * gap, gap)
        lo = xp.where(short, hi - gap, lo)
    s = hi
    done = ew_hi >= 1.0  # rounding put the root at hi already
    for _ in range(maxiter):
        ew, ev = stats(s)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = xp.log(ew)
            lo = xp.where(g > 0, s, lo)
            hi = xp.where(g <= 0, s, hi)
            newton = s + g * ew / ev
        inside = (newton > lo) & (newton < hi) & xp.isfinite(newton)
        s_new = xp.where(inside, newton, 0.5 * (lo + hi))
        s_new = xp.where(done, s, s_new)
        step = xp.abs(s_new - s)
        s = s_new
        done = done | (step <= tol * (1.0 + xp.abs(s))) | (hi - lo <= tol * (1.0 + xp.abs(s)))
        if bool(xp.all(done)):
            break
    _, h = terms_generic(A, xp.reshape(s, (-1, 1)), rho)
    value = s - 1.0 + _row_means(h, mu, xp)
    return s, value


def surrogate_rows(A, mu, rho, be, tol=None, maxiter=100):
    """``(s, F_rho)`` per row of finite-or--inf ``A`` (R, n) under the row measures ``mu``
    (``None``: uniform), in ``A``'s dtype: the shift solve of the deterministic surrogate
    (Numba kernel or the generic code). ``tol`` defaults to sqrt(eps) of the dtype."""
    xp = be.xp
    if tol is None:
        tol = math.sqrt(float(xp.finfo(A.dtype).eps))
    solve = KERNELS.get("solve_rows", be, generic=functools.partial(solve_rows_generic, be=be),
                        size=A.shape[0] * A.shape[1])
    s, value = solve(A, mu, rho, tol, maxiter)
    return xp.astype(s, A.dtype, copy=False), xp.astype(value, A.dtype, copy=False)


# --- estimators (generic twins of the kernels) ----------------------------------------------

def step_terms_generic(values, jac, s, rho):
    """``(mean(w jac), mean(w), mean(h))``: the generic twin of the ``step_terms`` kernel."""
    w, h = terms_generic(values, s, rho)
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

@dataclasses.dataclass(frozen=True)
class Plan:
    """What a run derives from its options and its data (the options stay in ``cfg``).

    Attributes
    ----------
    be : Backend
        The resolved backend.
    step_be : Backend
        The backend of the minibatch steps: ``be``, or the generic code when ``"auto"``
        chose Numba for a run too short to pay for compiling the step kernel (the
        ``step_terms`` threshold, over ``maxiter * batch_size`` terms).
    epoch_terms : int
        Terms per epoch (``n``; for a sampler ``epoch_size`` or ``batch_size``).
    avg_start : int or None
        First averaged step (``None``: the last iterate is returned).
    record_every : int
        Steps between history records.
    window : int
        Steps whose minibatch estimates make ``fun`` (an epoch, at least one step).
    """

    be: object
    step_be: object
    epoch_terms: int
    avg_start: object
    record_every: int
    window: int


class State:
    """Everything a run carries between steps (device arrays stay on the device)."""

    def __init__(self, x, s, plan):
        self.x, self.s = x, s
        self.x_avg, self.n_avg = None, 0
        self.adam = None
        xp, dtype = plan.be.xp, x.dtype
        self.ring = xp.zeros((plan.window,), dtype=dtype)
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


def step(st, k, cfg, plan, source):
    """One minibatch step; device work only. Returns the minibatch estimate (0-d)."""
    xp = plan.be.xp
    rho_k = _schedule(cfg.rho, k)
    if callable(cfg.rho):
        PROBABILITY.check(rho_k, "rho")
    lr_k = _schedule(cfg.lr, k)
    values, jac = _evaluate(cfg.phi, st.x, source.batch(cfg.batch_size), xp)
    st.bad = st.bad | ~(xp.all(xp.isfinite(values)) & xp.all(xp.isfinite(jac)))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):  # st.bad reports it
        return _update(st, k, cfg, plan, values, jac, rho_k, lr_k)


def _update(st, k, cfg, plan, values, jac, rho_k, lr_k):
    """The estimator and optimizer part of :func:`step`."""
    xp = plan.be.xp
    if st.s is None and cfg.estimator == "safe-kl":
        st.s = init_shift(values, rho_k, plan.step_be, st.x.dtype)
    gx, gs, fun_k = estimator_step(values, jac, st.s, rho_k, cfg.estimator, plan.step_be)
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
    if plan.avg_start is not None and k >= plan.avg_start:
        st.n_avg += 1
        st.x_avg = st.x if st.x_avg is None else st.x_avg + (st.x - st.x_avg) / st.n_avg
    st.ring[k % plan.window] = fun_k
    st.nit = k + 1
    return fun_k, rho_k


def window_mean(st, plan):
    """Mean of the minibatch estimates over the last ``window`` steps (0-d array)."""
    filled = min(st.nit, plan.window)
    return plan.be.xp.sum(st.ring[:filled]) / max(filled, 1)


def check(st, plan):
    """Host sync: False when a non-finite value appeared since the last check."""
    if bool(st.bad):
        return False
    st.good = (st.x, st.s, st.x_avg, st.n_avg, st.nit, window_mean(st, plan))
    return True


def rollback(st):
    """Return to the last iterate checked finite."""
    st.x, st.s, st.x_avg, st.n_avg, st.nit, _ = st.good
    return st.nit


def record(st, cfg, plan, rho_k):
    nit = st.nit
    if nit % plan.record_every and nit != cfg.maxiter:
        return
    h = st.history
    h["nit"].append(nit)
    h["epoch"].append(nit * cfg.batch_size / plan.epoch_terms)
    h["fun"].append(window_mean(st, plan))
    h["s"].append(st.s)
    h["rho"].append(rho_k)


def notify(st, cfg, plan, fun_k):
    """The callback, with arrays of the input namespace (no sync on the device)."""
    be = plan.be
    return call_callback(cfg.callback, x=be.to_input(st.x_ret), x_last=be.to_input(st.x),
                         s=None if st.s is None else be.to_input(st.s), nit=st.nit,
                         nfev=st.nit * cfg.batch_size,
                         epoch=st.nit * cfg.batch_size / plan.epoch_terms,
                         fun=be.to_input(fun_k))


def _host_floats(items):
    """Python floats from a list of 0-d arrays / floats / None (one pass at the end)."""
    return [float("nan") if v is None else to_float(v) for v in items]


# --- diagnostics and result -----------------------------------------------------------------

def diagnostics(cfg, be, x, source, rho):
    """The full-data pass at ``x`` (see the module docstring); None when not possible."""
    xp = be.xp
    if source.n is None:
        if cfg.epoch_size is None:
            return None
        chunks = source.chunks(max(cfg.batch_size, DIAG_CHUNK), cfg.epoch_size)
    else:
        chunks = source.chunks(max(cfg.batch_size, DIAG_CHUNK))
    if getattr(source, "streaming", False):
        return _streaming_diagnostics(cfg, be, x, chunks, rho)
    parts = [_evaluate(cfg.phi, x, batch, xp)[0] for batch in chunks]
    v = xp.concat(parts) if len(parts) > 1 else parts[0]
    N = v.shape[0]
    be = be.for_size(N, PASS_GENERIC_BELOW)  # a small pass under "auto" compiles nothing
    backend = backend_arg(be)
    logN = math.log(N)
    F = to_float(logsumexp(v, backend=backend)) - logN
    out = {"lme": F, "n_terms": N}
    if not math.isfinite(F):
        return {**out, "surrogate": float("nan"), "gap": float("nan"),
                "kappa": float("nan"), "rho_kappa": float("nan"),
                "capped_mass": float("nan")}
    F2 = to_float(logsumexp(2.0 * v, backend=backend)) - logN
    kappa = math.exp(min(F2 - 2.0 * F, 700.0))
    F_rho = to_float(surrogate_rows(xp.reshape(v, (1, -1)), None, rho, be)[1][0])
    capped = (v - F) > -math.log(rho)
    ninf = xp.asarray(-xp.inf, dtype=v.dtype)
    cm = to_float(logsumexp(xp.where(capped, v, ninf), backend=backend)) - logN - F
    return {**out, "surrogate": F_rho, "gap": F - F_rho, "kappa": kappa,
            "rho_kappa": rho * kappa, "capped_mass": math.exp(cm)}


def _streaming_diagnostics(cfg, be, x, chunks, rho):
    """Partitioned data: ``lme`` and ``kappa`` from exact (max, sum) partials merged over
    the chunks, in memory O(chunk); ``surrogate``, ``gap`` and ``capped_mass`` (which need
    every value at once) are None."""
    xp = be.xp
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


def finish(st, cfg, plan, source, status, message):
    """The result: iterate back to the input namespace, history to floats, diagnostics.

    A run that spends its budget succeeds (a fixed-budget stochastic method), unless the
    diagnostic pass finds the Safe-KL surrogate unreliable at the returned ``x``.
    """
    be = plan.be
    rho_last = _schedule(cfg.rho, max(st.nit - 1, 0))
    failed = status == Status.NONFINITE
    fun = st.good[5] if failed else window_mean(st, plan) if st.nit else None
    diag, success = None, None
    if status == Status.MAXITER:
        success = True
    if cfg.diagnose and st.nit and not failed:
        diag = diagnostics(cfg, be, st.x_ret, source, rho_last)
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


def run(cfg, plan, x, s, source, bar):
    """The loop: steps, a host check every ``CHECK_EVERY`` steps, callback, progress."""
    st = State(x, s, plan)
    status, message = Status.MAXITER, None
    for k in range(cfg.maxiter):
        fun_k, rho_k = step(st, k, cfg, plan, source)
        last = st.nit == cfg.maxiter
        if (st.nit % CHECK_EVERY == 0 or last) and not check(st, plan):
            first = rollback(st)
            status = Status.NONFINITE
            message = (f"{NONFINITE_DETAIL} at a step in ({first}, {k + 1}]; the returned x "
                       f"is the iterate after step {first}, the last one checked finite")
            break
        record(st, cfg, plan, rho_k)
        bar.update(1)
        if cfg.callback is not None and notify(st, cfg, plan, fun_k):
            status = Status.CALLBACK
            break
    if status == Status.CALLBACK and not check(st, plan):
        first = rollback(st)
        status, message = Status.NONFINITE, f"{NONFINITE_DETAIL} after step {first}"
    return finish(st, cfg, plan, source, status, message)
