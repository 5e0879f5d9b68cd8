r"""COSMO: constraint-free structure learning with smooth acyclic orientations.

The model (Massidda et al., ICLR 2024) parameterises a weighted graph by an unconstrained
matrix ``H`` and one *priority* per node ``p``:

.. math::

    S_{ij} = \sigma\!\left(\frac{p_j - p_i - \varepsilon}{t}\right)\ (i \ne j),
    \qquad S_{ii} = 0, \qquad W = H \odot S,

and minimises the least-squares loss of the linear SEM ``X = X W + N``:

.. math::

    L(H, p) = \frac{1}{2n}\lVert X - X W\rVert_F^2 + \lambda_1 \lVert H\rVert_1
              + \lambda_2 \lVert H\rVert_F^2 + \lambda_p \lVert p\rVert_2^2 .

As the temperature ``t`` goes to 0, ``S`` tends to the strict order of the priorities, so
``W`` is a DAG without ever evaluating an acyclicity function: the orientation costs
O(d^2) per step where NOTEARS / DAGMA pay O(d^3) (matrix exponential, log-determinant).

Gradients in closed form, with ``G = dL_data/dW`` (``C (W - I)`` for the centered Gram
matrix ``C = X^T X / n``, or ``X_b^T (X_b W - X_b) / b`` on a minibatch):

.. math::

    \frac{\partial L}{\partial H} = G \odot S + \lambda_1 \operatorname{sign}(H) + 2\lambda_2 H,
    \qquad
    \frac{\partial L}{\partial p_k} = \sum_i M_{ik} - \sum_j M_{kj} + 2 \lambda_p p_k,

with ``M = G * H * S * (1 - S) / t`` (zero diagonal).

The returned graph is always a DAG: the final order is the priorities sorted ascending, ties
broken by node index (``numpy.argsort(p, kind="stable")``), and only edges pointing
forward in that order are kept, so two nodes with equal priority never both point at each
other. With ``refine=True`` (the default; beyond the paper) the parents of every node are
refit exactly among its predecessors and the order is improved by a deterministic search
(local moves and tucks) until no move lowers the extended BIC, see
:mod:`solvers.dag.refine`.

The default fit (:func:`learn_cosmo`) is four steps: validate the options; fit each noise
model (a COSMO run, its order searched under that model's score, plus fixed extra
starts); select the noise model and the mechanism by extended BIC; build the result.

The gradient search is chaotic: the digits of the data far below the sampling error
(a column rescaled by 3, a relative perturbation of 1e-12) change the priorities it ends
at. Its inputs are therefore the Gram matrix scaled to unit mean variance (unit
variances for one noise variance per node) and rounded to a grid of ``2**-20``, so the
same data in other units give the same run; everything after it is a deterministic
search on the exact Gram matrix.

References
----------
.. [1] R. Massidda, F. Landolfi, M. Cinquini, D. Bacciu, "Constraint-free structure
   learning with smooth acyclic orientations", ICLR 2024.
.. [2] C. Deng, K. Bello, B. Aragam, P. Ravikumar, "Optimizing NOTEARS objectives via
   topological swaps", ICML 2023.
"""
import functools
import math
import time
from types import SimpleNamespace

import numpy as np

from .._lib.backend import resolve_backend
from .._lib.host import to_host
from .._lib.parallel import parallel_map, spawn_generators
from .._lib.params import (BACKEND, CALLBACK, COUNT, FLAG, NONE, NONNEGATIVE, POSITIVE,
                           SEED, WORKERS, Choice, Integer, Options, Param)
from .._lib.results import Status
from .._lib.rng import check_rng
from ._cosmo_train import cosmo_loss_grad, orientation, plain_graph, train
from ._mechanism import choose_mechanism
from ._results import check_data, dag_result
from .refine import (EBIC_GAMMA, edge_penalty, greedy_start, model_bic, search_options,
                     search_order)
from .._lib.docstrings import fill_doc
from ._docs import DOCS


#: docstring blocks this module's functions use (filled by fill_doc)
_DOCS = dict(DOCS)

__all__ = ["learn_cosmo", "cosmo_loss_grad", "orientation"]

INITS = ("variance", "zeros", "random")

#: above this many nodes the defaults switch to minibatches of 64 and 1000 steps
LARGE_D = 256

#: grid the gradient search's inputs are rounded to (see the module docstring)
GRID = 2.0 ** -20

#: depth of the tuck search of the order refinement
SEARCH_DEPTH = 2

OPTIONS = Options(
    "CosmoOptions",
    Param("lambda1", NONNEGATIVE, 1e-3, "weight of |H|_1"),
    Param("lambda2", NONNEGATIVE, 2e-3, "weight of |H|_F^2"),
    Param("lambda_p", NONNEGATIVE, 0.0, "weight of |p|^2"),
    Param("t_max", POSITIVE, 0.45, "temperature at the first step"),
    Param("t_min", POSITIVE, 1e-3, "temperature at the last step (<= t_max)"),
    Param("eps", NONNEGATIVE, 1e-2, "orientation margin"),
    Param("threshold", (NONNEGATIVE, NONE), None, "smallest kept weight (default by model)"),
    Param("maxiter", (COUNT, NONE), None, "optimizer steps (default by batch mode)"),
    Param("epochs", (POSITIVE, NONE), None, "passes over the data (instead of maxiter)"),
    Param("batch_size", (COUNT, NONE), None, "minibatch rows (default: full batch)"),
    Param("lr", (POSITIVE, NONE), None, "learning rate (default by batch mode)"),
    Param("optimizer", Choice("adam", "sgd"), "adam", "optimizer of the training"),
    Param("init", Choice(*INITS), "variance", "initial priorities"),
    Param("refine", FLAG, True, "refit parents and search the order"),
    Param("restarts", COUNT, 1, "independent COSMO fits"),
    Param("refine_rounds", COUNT, 50, "rounds of the order search"),
    Param("refine_time_limit", (POSITIVE, NONE), None, "seconds of the order search"),
    Param("max_parents", (Integer(low=0), NONE), None, "parents per node (default: any)"),
    Param("rng", SEED, None, "random numbers"),
    Param("callback", (CALLBACK, NONE), None, "called each step"),
    Param("progress", FLAG, False, "show a progress bar"),
    Param("backend", BACKEND, "auto", "which kernels run"),
    Param("record_every", COUNT, 50, "steps between loss_history entries"),
    Param("noise_variance", Choice("auto", "equal", "nonequal"), "auto", "noise model"),
    Param("mechanism", Choice("auto", "linear", "additive", "mlp"), "auto",
          "linear or additive mechanisms ('mlp' is DP-DAG's)"),
    Param("workers", (WORKERS, NONE), None, "runs the restarts in parallel"),
    Param("ebic_gamma", NONNEGATIVE, EBIC_GAMMA, "extended BIC gamma (0: BIC)"),
)


@fill_doc(**_DOCS)
@OPTIONS.entry
def learn_cosmo(X, *, lambda1=1e-3, lambda2=2e-3, lambda_p=0.0, t_max=0.45, t_min=1e-3,
                eps=1e-2, threshold=None, maxiter=None, epochs=None, batch_size=None,
                lr=None, optimizer="adam", init="variance", refine=True, restarts=1,
                refine_rounds=50, refine_time_limit=None, max_parents=None, rng=None,
                callback=None, progress=False, backend="auto", record_every=50,
                noise_variance="auto", mechanism="auto", workers=None,
                ebic_gamma=EBIC_GAMMA):
    r"""Learn a linear DAG with COSMO (smooth acyclic orientations), optionally refined.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Observational data (columns are centered internally).
    lambda1, lambda2, lambda_p : float
        Weights of ``|H|_1``, ``|H|_F^2`` and ``|p|^2``. The defaults (1e-3, 2e-3, 0) are
        the calibrated full-batch setting; the paper's ranges are l1 1e-4..1e-3,
        l2 1e-3..5e-3, lp 1e-3..3e-3.
    t_max, t_min : float
        Cosine-annealed temperature schedule, from ``t_max`` at step 0 to ``t_min`` at the
        last step (paper: 0.45 to ~1e-3).
    eps : float
        Orientation margin (paper 5e-3..2e-2).
    threshold : float, optional
        Smallest absolute weight kept in the returned graph. Default 0.3 with equal noise
        variances (raw units, as in the paper) and 0 with non-equal ones, whose weights
        live on standardized columns and are pruned by the score alone (a fixed threshold
        there cut true edges and forced the refit to add many wrong ones).
    ebic_gamma : float
        Gamma of the extended BIC that scores every graph: an edge costs
        ``log n + 2 gamma log d`` (in units of twice the log-likelihood). Default 0.5;
        ``0`` is the plain BIC, which keeps several false edges per hundred candidates at
        ``n = 1000`` (see :mod:`solvers.dag.refine`).
    noise_variance : {"auto", "equal", "nonequal"}
        Noise model of the score the order is searched with. ``"equal"``: one noise
        variance for all nodes (least squares; identifies the DAG when the variances
        really are equal, Peters & Bühlmann 2014, but reads the order off the marginal
        scales, so it fails on standardized or real data). ``"nonequal"``: one variance per
        node, :math:`\tfrac12\sum_j \log \mathrm{rss}_j + |E|\,\mathrm{pen} / (2n)`;
        training runs on standardized columns and the result does not depend on the scale
        of any column; only the Markov equivalence class is identified (see ``cpdag``).
        ``"auto"`` (default) fits both (non-equal first; its order is one more start of
        the equal-variance search) and keeps the lower extended BIC, variance parameters
        counted (equal variances are the nested special case); ``result.bic`` holds the
        scores and ``result.selection`` says which model won.
    mechanism : {"auto", "linear", "additive"}
        ``"auto"`` (default): the linear model, then the additive one when it has the
        lower extended BIC (each additive edge costs ``q`` spline coefficients, ``q log n``
        plus the same ``2 gamma log d``; variance parameters counted; additive nests
        linear), see the guide page "Which assumptions, which method";
        ``result.mechanism`` says which was kept and ``result.bic["additive"]`` its score
        (with ``refine=False`` the paper's linear graph is returned). ``"linear"``: the
        linear SEM. ``"additive"``: each node a sum of smooth functions of its parents
        (CAM-style cubic splines with a ridge penalty, parents chosen by the additive
        score, see :mod:`solvers.dag.additive`); the order is searched with the same
        additive score, started from the linear results and a greedy edge-addition start.
        ``W`` then holds edge strengths (the standard deviation of each fitted component
        on standardized data) and the DAG is identified.
    maxiter : int, optional
        Optimizer steps; default 5000 full batch, 8000 minibatch, and 1000 when
        ``d > 256`` (there the refinement does most of the work; see the guide).
    epochs : float, optional
        Alternative to ``maxiter`` for minibatch training: passes over the data.
    batch_size : int, optional
        Minibatch size. ``None`` (default) trains full batch on the Gram matrix when
        ``d <= 256`` (for n = 1000 faster and steadier than the paper's batch 64) and on
        minibatches of 64 above (a full-batch step costs a d x d x d product, a minibatch
        step O(64 d^2)).
    lr : float, optional
        Learning rate; default 3e-2 full batch, 1e-2 minibatch.
    optimizer : {"adam", "sgd"}
    init : {"variance", "zeros", "random"}
        Initial priorities: ``"variance"`` sets ``p`` to the log marginal variances, which
        exploits the fact that in raw simulated data variance tends to grow along the
        causal order ("varsortability"); on standardized data it is neutral. ``"random"``
        draws small normal priorities.
    refine : bool
        Refit parents exactly and search the order (default, beyond the paper). ``False``
        returns the paper's thresholded ``H * S``.
    restarts : int
        Independent COSMO fits: the first with ``init`` and ``rng`` as given, the others
        with ``init="random"`` and generators spawned from ``rng``
        (``Generator.spawn``); the fit with the lowest extended BIC is kept
        (``restart_bics`` lists them, ``nit`` and ``time`` add up over all).
    workers : None, int or map-like callable
        Runs the restarts in parallel: an int (processes of a
        ``concurrent.futures.ProcessPoolExecutor``; ``-1`` one per CPU) or any
        ``map(func, iterable)`` such as ``multiprocessing.Pool.map`` or dask's
        ``Client.map``. The result does not depend on ``workers``.
    refine_rounds, refine_time_limit
        Limits of the order search (:func:`solvers.dag.refine.refine_order`); when one
        stops it before a fixed point, ``status`` is ``MAXITER`` (still a success: the
        graph is the best found).
    max_parents : int, optional
        Cap on the parents of one node during the refit.
    rng : None, int or numpy.random.Generator
        Minibatch order and random inits.
    callback : callable, optional
        ``callback(intermediate_result)`` each step with ``priorities``, ``H``, ``fun``,
        ``nit``, ``temperature``; raise ``StopIteration`` (or return True) to stop.
    progress : bool
        Progress bar on stderr.
    backend : {"auto", "numpy", "numba", "cupy"}
    record_every : int
        Steps between entries of ``loss_history``.

    Returns
    -------
    DAGResult
        ``W`` (input namespace), ``adjacency`` (acyclic), ``order``, ``priorities``,
        ``fun`` (final training loss), ``loss_history``, ``nit``, ``score`` (the searched
        score per sample of the returned graph, lower is better), ``W_cosmo`` (the plain
        COSMO graph before refinement), ``noise_variance`` and ``mechanism`` (the models
        kept), ``bic`` (extended BIC per sample of each model tried, variance parameters
        counted), ``selection`` (which model won, with the scores), ``cpdag`` (the
        equivalence class, see :attr:`DAGResult.cpdag`), ``status`` (``CONVERGED`` when
        the order search ended at a fixed point, ``MAXITER`` when a limit stopped it,
        ``NONFINITE`` / ``CALLBACK`` as everywhere), ``time``.

    Raises
    ------
    ValueError
        Bad data (NaN, ``n < 2``, constant column, not 2-D) or options (negative
        penalties, ``t_min > t_max``, non-positive ``lr``, both ``maxiter`` and
        ``epochs``, an unknown ``optimizer``/``init``/``backend``, a negative
        ``ebic_gamma``, or a backend that cannot run here).
    TypeError
        Non-numeric or complex data, a non-integer ``maxiter``/``batch_size``/
        ``restarts``/``record_every``, an ``rng`` that is not None, an int or a
        ``numpy.random.Generator``, or a ``callback`` that is not callable.

    {{ref_cosmo}}
    .. [2] C. Deng, K. Bello, B. Aragam, P. Ravikumar, "Optimizing NOTEARS objectives via
       topological swaps", ICML 2023.

    Examples
    --------
    >>> from solvers.dag import simulate_data, shd
    >>> from solvers.dag.cosmo import learn_cosmo
    >>> X, W, B = simulate_data(d=10, n=1000, k=2, rng=1)
    >>> res = learn_cosmo(X, rng=0)
    >>> res.is_dag(), shd(B, res.adjacency)
    (True, 0)
    """
    options = dict(locals())
    del options["X"]
    start = time.perf_counter()
    opt = OPTIONS.validate(**options)
    if opt.restarts > 1:
        return _restarts(X, opt.as_dict(), start)
    cfg, data = _validate(X, opt)
    fits = _fit_models(data, cfg)
    chosen = _select(fits, data, cfg)
    return _result(chosen, fits, data, cfg, start)


# ---------------------------------------------------------------------------------------
# validate

def _validate(X, o):
    """The run's settings (``cfg``, read by attribute) from the validated options ``o``
    (what a spec cannot say checked here), and the prepared data."""
    X, xp_in = check_data(X)
    be = resolve_backend(o.backend, xp_in)
    X = be.to_device(X)
    n, d = X.shape
    if o.t_min > o.t_max:
        raise ValueError(f"t_min ({o.t_min}) must be <= t_max ({o.t_max})")
    if o.mechanism == "mlp":
        raise ValueError("mechanism='mlp' is DP-DAG's: use learn_dag(X, method='dpdag', "
                         "mechanism='mlp'), or mechanism='additive' here")
    cfg = SimpleNamespace(
        threshold=o.threshold, init=o.init, refine=o.refine, refine_rounds=o.refine_rounds,
        refine_time_limit=o.refine_time_limit, max_parents=o.max_parents,
        noise_variance=o.noise_variance, mechanism=o.mechanism,
        pen=edge_penalty(n, d, o.ebic_gamma), train=_train_options(o, n, d, be))
    return cfg, _prepare(X, be)


def _train_options(o, n, d, be):
    """Keyword arguments of :func:`solvers.dag._cosmo_train.train` (defaults filled in)."""
    batch_size = o.batch_size
    if batch_size is None:
        # full-batch steps cost one d x d x d product; above LARGE_D minibatches are cheaper
        batch_size = None if d <= LARGE_D else 64
    if batch_size is not None and batch_size >= n:
        batch_size = None
    maxiter = o.maxiter
    if maxiter is not None and o.epochs is not None:
        raise ValueError("give maxiter or epochs, not both")
    if o.epochs is not None:
        maxiter = max(1, int(math.ceil(o.epochs * n / (batch_size or n))))
    if maxiter is None:
        maxiter = 5000 if batch_size is None else (8000 if d <= LARGE_D else 1000)
    lr = o.lr if o.lr is not None else (3e-2 if batch_size is None else 1e-2)
    return dict(be=be, batch_size=batch_size, maxiter=maxiter, t_max=o.t_max,
                t_min=o.t_min, eps=o.eps, l1=o.lambda1, l2=o.lambda2, lp=o.lambda_p, lr=lr,
                optimizer=o.optimizer, rng=check_rng(o.rng), callback=o.callback,
                progress=o.progress, record_every=o.record_every)


def _prepare(X, be):
    """Centered data on the compute device and its Gram matrix on the host."""
    xp = be.xp
    n, d = X.shape
    Xc = X - xp.mean(X, axis=0)
    C = (Xc.T @ Xc) / n
    return {"be": be, "X": X, "Xc": Xc, "C": C, "n": n, "d": d,
            "C_host": np.asarray(to_host(C), dtype=np.float64)}


# ---------------------------------------------------------------------------------------
# fit per noise model

def _fit_models(data, cfg):
    """One fit per noise model: ``{noise: fit}`` (non-equal first, when both)."""
    models = ("nonequal", "equal") if cfg.noise_variance == "auto" \
        else (cfg.noise_variance,)
    fits = {}
    for noise in models:
        starts = [f["order"] for f in fits.values()]   # non-equal order -> equal search
        fits[noise] = _fit_noise_model(noise, data, cfg, starts)
        if fits[noise]["stop"]:
            break
    return fits


def _training_inputs(noise, data):
    """The gradient search's data: scaled to unit variances (non-equal) or unit mean
    variance (equal), rounded to ``GRID`` so the run does not see the data's units."""
    xp, Xc, C = data["be"].xp, data["Xc"], data["C"]
    diag = xp.linalg.diagonal(C)
    if noise == "nonequal":
        sd = xp.sqrt(diag)
        Xs, Cs = Xc / sd, C / (sd[:, None] * sd[None, :])
    else:
        scale = xp.sqrt(xp.mean(diag))
        Xs, Cs = Xc / scale, C / scale ** 2
    return xp.round(Xs / GRID) * GRID, xp.round(Cs / GRID) * GRID


def _initial_priorities(init, C_train, rng, xp):
    d = C_train.shape[0]
    if init == "variance":
        p0 = np.log(np.diag(np.asarray(to_host(C_train), dtype=np.float64)))
    elif init == "zeros":
        p0 = np.zeros(d)
    else:
        p0 = 0.1 * rng.standard_normal(d)
    return xp.asarray(p0, dtype=C_train.dtype)


def _fit_noise_model(noise, data, cfg, starts):
    """COSMO run, its order searched under ``noise``'s score, then the extra ``starts``
    (and, for non-equal variances, a greedy edge addition and the equal-variance search
    on the correlation matrix); the lowest score is kept. Returns the fit dict."""
    xp, tr = data["be"].xp, cfg.train
    Xt, Ct = _training_inputs(noise, data)
    p = _initial_priorities(cfg.init, Ct, tr["rng"], xp)
    H = xp.zeros((data["d"], data["d"]), dtype=Ct.dtype)
    H, p, hist, nit, stop = train(Xt, Ct, H, p, **tr)
    p_host = np.nan_to_num(np.asarray(to_host(p), dtype=float))
    W_plain, order = plain_graph(np.nan_to_num(np.asarray(to_host(H), dtype=float)),
                                 p_host, tr["t_min"], tr["eps"], _threshold(cfg, "equal"))
    if noise == "nonequal":      # trained on standardized columns: back to data units
        sd = np.sqrt(np.diag(data["C_host"]))
        W_plain = W_plain * sd[None, :] / sd[:, None]
    fit = {"W": W_plain, "order": order, "p": p_host, "W_cosmo": W_plain, "history": hist,
           "loss": hist[-1] if hist else float("nan"), "nit": nit, "stop": stop,
           "converged": True}
    if not cfg.refine:
        fit["score"] = model_bic(data["C_host"], data["n"], W_plain, noise, variances=False,
                                 pen=cfg.pen)
        return fit
    opts = search_options(data["C_host"], data["n"], noise=noise,
                          threshold=_threshold(cfg, noise), max_parents=cfg.max_parents,
                          pen=cfg.pen, be=data["be"])
    starts = [order] + list(starts)
    if noise == "nonequal":      # scale-free starts: a greedy edge addition, and the
        starts += [greedy_start(data["C_host"], data["n"], opts),    # equal-variance
                   _equal_on_correlations(order, data, cfg)]         # search's order
    for start in starts:
        o, W, score, converged = search_order(data["C_host"], data["n"], start, opts,
                                              max_rounds=cfg.refine_rounds,
                                              time_limit=cfg.refine_time_limit,
                                              depth=SEARCH_DEPTH)
        if "score" not in fit or score < fit["score"] - 1e-12:
            fit.update(W=W, order=o, score=score, converged=converged)
    return fit


def _equal_on_correlations(order, data, cfg):
    """The order of the equal-variance search on the correlation matrix, started from
    ``order`` (scale-free too: one more start of the non-equal search)."""
    sd = np.sqrt(np.diag(data["C_host"]))
    C_std = data["C_host"] / np.outer(sd, sd)
    opts = search_options(C_std, data["n"], noise="equal", threshold=_threshold(cfg, "equal"),
                          max_parents=cfg.max_parents, pen=cfg.pen, be=data["be"])
    return search_order(C_std, data["n"], order, opts, max_rounds=cfg.refine_rounds,
                        time_limit=cfg.refine_time_limit, depth=0)[0]


def _threshold(cfg, noise):
    """Default weight threshold: 0.3 for equal variances (raw units, as in the paper),
    none for non-equal ones (weights on standardized columns, the score alone prunes)."""
    if cfg.threshold is not None:
        return cfg.threshold
    return 0.3 if noise == "equal" else 0.0


# ---------------------------------------------------------------------------------------
# select

def _select(fits, data, cfg):
    """The noise model and the mechanism with the lowest extended BIC (variance
    parameters counted); returns ``{"fit", "noise", "mechanism", "bic"}``."""
    C, n = data["C_host"], data["n"]
    bics = {k: model_bic(C, n, f["W"], k, pen=cfg.pen) for k, f in fits.items()}
    noise = min(bics, key=bics.get)
    best, mechanism = fits[noise], "linear"
    stopped = any(f["stop"] for f in fits.values())
    if cfg.mechanism == "additive" or (cfg.mechanism == "auto" and cfg.refine
                                       and not stopped):
        X_host = np.asarray(to_host(data["X"]), dtype=np.float64)
        best, mechanism = choose_mechanism(
            X_host, C, n, best, bics, [f["order"] for f in fits.values()],
            mechanism=cfg.mechanism, max_parents=cfg.max_parents,
            max_rounds=cfg.refine_rounds, time_limit=cfg.refine_time_limit, pen=cfg.pen)
        if mechanism == "additive":
            noise = "nonequal"
    return {"fit": best, "noise": noise, "mechanism": mechanism, "bic": bics}


# ---------------------------------------------------------------------------------------
# result

def _status(fits, refine):
    """``(status, success, message)`` of the whole fit."""
    stops = [f["stop"] for f in fits.values()]
    if "nonfinite" in stops:
        nit = next(f["nit"] for f in fits.values() if f["stop"] == "nonfinite")
        return (Status.NONFINITE, False, f"the loss became non-finite at step {nit}; "
                "lower lr or standardize the data")
    if "callback" in stops:
        return Status.CALLBACK, False, None
    if refine and not all(f["converged"] for f in fits.values()):
        return (Status.MAXITER, True, "the order search stopped at refine_rounds / "
                "refine_time_limit before a fixed point (the best graph found is returned)")
    return (Status.CONVERGED, True, "converged: the order search ended at a fixed point"
            if refine else "converged (schedule completed)")


def _result(chosen, fits, data, cfg, start):
    be, best = data["be"], chosen["fit"]
    status, success, message = _status(fits, cfg.refine)
    scores = ", ".join(f"{k} {v:.6g}" for k, v in chosen["bic"].items())
    selection = (f"noise_variance={chosen['noise']!r}, mechanism={chosen['mechanism']!r}: "
                 f"lowest extended BIC per sample ({scores})")
    return dag_result(
        best["W"], be=be, dtype=data["X"].dtype, status=status, success=success,
        message=message, method="cosmo", order=best["order"],
        priorities=np.asarray(best["p"], dtype=np.float64), fun=best["loss"],
        loss_history=best["history"], nit=sum(f["nit"] for f in fits.values()),
        time=time.perf_counter() - start, score=best["score"], W_cosmo=best["W_cosmo"],
        refined=cfg.refine, noise_variance=chosen["noise"], bic=chosen["bic"],
        mechanism=chosen["mechanism"], selection=selection,
        identified=chosen["noise"] == "equal" or chosen["mechanism"] == "additive")


def _restarts(X, options, start):
    """``restarts`` independent fits mapped over ``workers``; keep the lowest score."""
    k = options["restarts"]
    first = check_rng(options["rng"])
    # spawning does not advance ``first``: restart 0 draws what a single fit would
    rngs = [first] + spawn_generators(first, k - 1)
    jobs = [dict(options, restarts=1, workers=None, rng=g,
                 init=options["init"] if r == 0 else "random") for r, g in enumerate(rngs)]
    results = parallel_map(functools.partial(_restart_job, X), jobs, options["workers"])
    bics = [min(r.bic.values()) for r in results]
    best = results[int(np.argmin(bics))]
    best.nit = sum(r.nit for r in results)
    best.time = time.perf_counter() - start
    best.restart_bics = bics
    return best


def _restart_job(X, options):
    return learn_cosmo(X, **options)


_learn_cosmo = learn_cosmo
