"""``python -m solvers warmup``: compile the Numba kernels ahead of time.

A Numba kernel is compiled the first time it runs on a machine and then loaded from
Numba's on-disk cache (``NUMBA_CACHE_DIR``, by default ``__pycache__`` next to the
modules), for the same Numba version and CPU. Small calls under ``backend="auto"`` need no
compilation at all (their generic code serves them), but the first large call of a solver
pays for its kernels: a few seconds per solver. Warming up moves that cost to a moment of
the user's choosing, e.g. after installing or in a container build::

    python -m solvers warmup              # every solver
    python -m solvers warmup lse dam      # by area or by solver name

Each unit runs a few small calls of one solver with ``backend="numba"`` (an explicit
request always runs the Numba kernels, whatever the size), with inputs on both sides of
the size thresholds that choose between kernels, so that what a typical call compiles is
in the cache afterwards. ``--float32`` also compiles the single-precision kernels, which
only float32 input uses.

Units are named like the demo's rows (``core``, ``safe_kl``, ``cbo``, ...); an area name
(``lse``, ``optimize``, ``transport``, ``memory``, ``dag``, ``qubo``) selects its units.
"""
import time

import numpy as np

__all__ = ["UNITS", "select_units", "warmup"]


def _rng():
    return np.random.default_rng(0)


def _spd(rng, n, d, dtype):
    G = rng.normal(size=(n, d, d))
    return (G @ np.swapaxes(G, 1, 2) / d + 0.5 * np.eye(d)).astype(dtype)


def _core(dtype):
    from ..lse import log_softmax, logsumexp, logsumexp_matmul, softmax

    rng = _rng()
    for shape in ((200, 100), (400, 400)):  # both sides of the parallel threshold
        a = rng.normal(size=shape).astype(dtype)
        for axis in (None, 0, 1):
            logsumexp(a, axis=axis, backend="numba")
            logsumexp(a, axis=axis, b=np.abs(a), backend="numba")
        logsumexp(a, axis=1, b=a, return_sign=True, backend="numba")
        softmax(a, axis=1, backend="numba")
        log_softmax(a, axis=0, backend="numba")
    logsumexp(rng.normal(size=100).astype(dtype), backend="numba")
    A, B = rng.normal(size=(300, 8)).astype(dtype), rng.normal(size=(8, 300)).astype(dtype)
    logsumexp_matmul(A, B, backend="numba")


def _safe_kl(dtype):
    from ..lse import minimize_logsumexp, safe_logsumexp

    rng = _rng()
    a = rng.normal(size=(50, 200)).astype(dtype)
    safe_logsumexp(a, 0.1, axis=1, backend="numba")
    safe_logsumexp(a, 0.1, axis=1, b=np.abs(a), backend="numba")
    data = rng.normal(size=(200, 3)).astype(dtype)
    phi = lambda x, batch: (0.5 * np.sum((x - batch) ** 2, axis=1), x - batch)  # noqa: E731
    for estimator in ("safe-kl", "naive"):
        minimize_logsumexp(phi, np.zeros(3, dtype=dtype), data, rho=0.1, batch_size=16,
                           maxiter=4, estimator=estimator, rng=0, backend="numba")


def _cbo(dtype):
    from ..optimize.cbo import minimize_cbo

    minimize_cbo(lambda x: float(np.sum((x - 0.5) ** 2)), bounds=[(-3.0, 3.0)] * 3,
                 maxfev=400, rng=0, backend="numba")
    vec = lambda x: np.sum((x - 0.5) ** 2, axis=0)  # noqa: E731
    minimize_cbo(vec, bounds=[(-3.0, 3.0)] * 3, maxfev=400, vectorized=True, n_runs=2,
                 rng=0, backend="numba")


def _lightsb(dtype):
    from ..transport import schrodinger_bridge

    rng = _rng()
    # 4 components on 300 samples: minibatch-sized work; 50 on 2500: the parallel kernels
    for n, K in ((300, 4), (2500, 50)):
        x0 = rng.normal(size=(n, 2)).astype(dtype)
        x1 = (rng.normal(size=(n, 2)) + 2.0).astype(dtype)
        for covariance in ("diag", "full"):
            sb = schrodinger_bridge(x0, x1, 1.0, n_components=K, covariance=covariance,
                                    maxiter=3, rng=0, backend="numba")
            sb.sample(x0[:50], rng=0)


def _bures(dtype):
    from ..transport import (bures_wasserstein_barycenter, bures_wasserstein_cdist,
                             weighted_monge_map)

    rng = _rng()
    m, S = rng.normal(size=(30, 3)).astype(dtype), _spd(rng, 30, 3, dtype)
    bures_wasserstein_cdist(m[:5], S[:5], m, S, backend="numba")
    bures_wasserstein_barycenter(m, S, maxiter=3, backend="numba")
    weighted_monge_map(S[:2], S, np.full((2, 30), 1 / 30, dtype=dtype), backend="numba")


def _dam(dtype):
    from ..memory import GaussianMemory, VectorMemory

    rng = _rng()
    m, S = (rng.normal(size=(30, 3)) * 3).astype(dtype), _spd(rng, 30, 3, dtype)
    mem = GaussianMemory(m, S, beta=1.0, backend="numba")
    mem.retrieve(m[:4] + 0.1, S[:4], maxiter=3)
    VectorMemory(m, beta=1.0, backend="numba").retrieve(m[:4] + 0.1, maxiter=3)


def _cosmo(dtype):
    from ..dag import learn_dag, simulate_data

    data = simulate_data(5, 200, k=2, rng=0)
    learn_dag(data.X.astype(dtype), method="cosmo", maxiter=20, rng=0, backend="numba")


def _dpdag(dtype):
    from ..dag import learn_dag, sample_dags, simulate_data

    rng = _rng()
    for d, n in ((6, 8), (30, 5000)):  # both sides of the parallel threshold
        sample_dags(rng.normal(size=d), rng.normal(size=(d, d)), n, rng=0, backend="numba")
    data = simulate_data(6, 200, k=2, rng=0)
    learn_dag(data.X.astype(dtype), method="dpdag", maxiter=2, rng=0, backend="numba")


def _qubo(dtype):
    from ..qubo import minimize_qubo

    rng = _rng()
    coupling = "float32" if dtype == np.float32 else None
    # 20 variables x 4 reads: the serial kernels; 100 x 32 x 100 sweeps: the parallel ones
    for n, n_reads, maxiter in ((20, 4, 20), (100, 32, 100)):
        Q = rng.normal(size=(n, n))
        minimize_qubo((Q + Q.T) / 2, n_reads=n_reads, maxiter=maxiter, rng=0,
                      coupling_dtype=coupling, backend="numba")


#: unit name -> (area, what it compiles, the calls)
UNITS = {
    "core": ("lse", "logsumexp, softmax, logsumexp_matmul", _core),
    "safe_kl": ("lse", "safe_logsumexp, minimize_logsumexp", _safe_kl),
    "cbo": ("optimize", "minimize_cbo", _cbo),
    "lightsb": ("transport", "schrodinger_bridge", _lightsb),
    "bures": ("transport", "Bures-Wasserstein distances, maps, barycenters", _bures),
    "dam": ("memory", "GaussianMemory, VectorMemory", _dam),
    "cosmo": ("dag", "learn_dag(method='cosmo')", _cosmo),
    "dpdag": ("dag", "learn_dag(method='dpdag'), sample_dags", _dpdag),
    "qubo": ("qubo", "minimize_qubo", _qubo),
}


def select_units(names=None):
    """The unit names that ``names`` (unit or area names; None or empty: all) select, in
    the order of :data:`UNITS`.

    Raises
    ------
    ValueError
        A name that is neither a unit nor an area; the message lists the valid names.
    """
    if not names:
        return list(UNITS)
    areas = sorted({area for area, _, _ in UNITS.values()})
    unknown = [n for n in names if n not in UNITS and n not in areas]
    if unknown:
        raise ValueError(f"unknown warmup name(s) {', '.join(map(repr, unknown))}; choose "
                         f"from: {', '.join(UNITS)} (or an area: {', '.join(areas)})")
    return [u for u, (area, _, _) in UNITS.items() if u in names or area in names]


class _CompileCounter:
    """Counts the compilations of the library's kernels (one per kernel and signature not
    found in the cache; Numba's own helpers compiled along with them are not counted)
    while it is active."""

    def __init__(self):
        from numba.core import event

        self.count = 0
        counter = self

        class _Listener(event.Listener):
            def on_start(self, ev):
                pass

            def on_end(self, ev):
                module = getattr(ev.data["dispatcher"].py_func, "__module__", "") or ""
                counter.count += module.startswith("solvers.")

        self._event, self._listener = event, _Listener()

    def __enter__(self):
        self._event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc):
        self._event.unregister("numba:compile", self._listener)
        return False


def warmup(names=None, *, float32=False, progress=True, report=None):
    """Compile (or load from the cache) the Numba kernels of the selected units.

    Parameters
    ----------
    names : list of str, optional
        Unit or area names (see :data:`UNITS`); all units by default.
    float32 : bool, optional
        Also compile the single-precision kernels.
    progress : bool, optional
        Show a progress bar on stderr (one step per unit and precision).
    report : callable, optional
        Called with one line per unit: its name, the compilations it ran (0 when the cache
        already held everything) and its seconds.

    Returns
    -------
    dict
        ``{unit: number of compilations}``.
    """
    from .results import Progress

    units = select_units(names)
    dtypes = (np.float64, np.float32) if float32 else (np.float64,)
    compiled = {}
    with Progress(len(units) * len(dtypes), desc="warmup", enabled=progress) as bar:
        for unit in units:
            start = time.perf_counter()
            with _CompileCounter() as counter:
                for dtype in dtypes:
                    bar.update(0, unit=unit)
                    UNITS[unit][2](dtype)
                    bar.update(1, unit=unit)
            compiled[unit] = counter.count
            if report is not None:
                report(f"{unit}: {counter.count} compiled, "
                       f"{time.perf_counter() - start:.1f} s")
    return compiled
