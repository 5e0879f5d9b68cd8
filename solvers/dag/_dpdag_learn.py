"""``learn_dag(X, method="dpdag")``: VI-DP-DAG training and the final graph (split from
:mod:`solvers.dag.dpdag`, which holds the model class and the sampler).
"""
import math
import time

import numpy as np

from .._lib.backend import resolve_backend
from .._lib.host import to_host
from .._lib.optim import Adam
from .._lib.results import Progress, Status, call_callback
from .._lib.rng import Draws
from .._lib.params import (BACKEND, CALLBACK, COUNT, FLAG, NONE, NONNEGATIVE, POSITIVE,
                           PROBABILITY, SEED, Choice, Integer, Options, Param)
from ._dpdag_vi import _draw_noise, _elbo_grad, _mlp_term
from .additive import additive_search
from .dpdag import _ORDER_METHODS, DPDAG, _sigmoid
from ._results import check_data, dag_result
from .refine import EBIC_GAMMA, edge_penalty, model_bic, search_options, search_order


def _refit(C, A, xp):
    """Least-squares weights of each node on its parents in A (host numpy, d x d)."""
    C = np.asarray(to_host(C), dtype=np.float64)
    A = np.asarray(to_host(A)) != 0
    d = C.shape[0]
    W = np.zeros((d, d))
    for j in range(d):
        pa = np.flatnonzero(A[:, j])
        if pa.size:
            W[pa, j] = np.linalg.solve(C[np.ix_(pa, pa)] + 1e-12 * np.eye(pa.size),
                                       C[pa, j])
    return W


def _order_score(C, order):
    """Total residual sum of squares when every node is regressed on all its
    predecessors: sum_k L_kk^2 for the Cholesky factor of C permuted to the order. Under
    equal noise variances the true order minimises it (the product of the terms is det C
    for every order, and the sum of numbers of fixed product is smallest when they are
    equal)."""
    Cp = C[np.ix_(order, order)]
    try:
        L = np.linalg.cholesky(Cp)
    except np.linalg.LinAlgError:
        L = np.linalg.cholesky(Cp + 1e-10 * np.trace(Cp) / len(order) * np.eye(len(order)))
    return float(np.sum(np.diag(L) ** 2))


def _holdout_split(Xc, draws, xp):
    """(training rows, held-out rows): 20% held out (none when ``n < 10``)."""
    n = Xc.shape[0]
    if n < 10:
        return Xc, None
    perm = np.random.default_rng(draws.spawn_seed()).permutation(n)
    k = max(n // 5, 2)
    take = lambda rows: xp.take(Xc, xp.asarray(rows), axis=0)  # noqa: E731
    return take(np.sort(perm[k:])), take(np.sort(perm[:k]))


def _mlp_support(host, order, mech, X_tr, X_val, cfg, xp):
    r"""Parents of each node for MLP mechanisms, chosen by held-out likelihood.

    In the mode order, each node's allowed parents are ranked by edge probability; for
    every ``k`` the top-``k`` mask is scored by the held-out Gaussian negative
    log-likelihood of the node, :math:`\tfrac{m}{2}\log\hat\sigma_k^2 +
    \mathrm{rss}^{val}_k / (2\hat\sigma_k^2)` with :math:`\hat\sigma_k^2` the training
    residual variance under that mask (the VI-trained networks evaluated with the mask;
    they were trained on sampled masks). The best ``k`` per node is kept, so a node
    gets a parent only if it predicts unseen rows better: no dense graphs."""
    d = len(order)
    pos = np.empty(d, dtype=np.int64)
    pos[np.asarray(order)] = np.arange(d)
    P = np.asarray(to_host(host.edge_probs), dtype=np.float64)
    P = np.where(pos[:, None] < pos[None, :], P, -1.0)
    ranked = np.argsort(-P, axis=0, kind="stable")          # column j: parents by prob
    n_allowed = (P >= 0).sum(axis=0)
    cfg1 = dict(cfg, scale=1.0)
    one = xp.ones((d,), dtype=X_tr.dtype)
    best, best_nll = np.zeros((d, d), dtype=bool), np.full(d, np.inf)
    for k in range(d):
        A = np.zeros((d, d), dtype=bool)
        for j in range(d):
            A[ranked[:min(k, n_allowed[j]), j], j] = True
        A_x = xp.asarray(A[None, ...], dtype=X_tr.dtype)
        v_tr = np.asarray(to_host(_mlp_term(A_x, mech, X_tr, one, cfg1, xp)[0]))[0]
        v_val = np.asarray(to_host(_mlp_term(A_x, mech, X_val, one, cfg1, xp)[0]))[0]
        s2 = np.maximum(v_tr / X_tr.shape[0], 1e-12)
        nll = 0.5 * X_val.shape[0] * np.log(s2) + 0.5 * v_val / s2
        better = nll < best_nll - 1e-12
        best[:, better] = A[:, better]
        best_nll[better] = nll[better]
        if k >= n_allowed.max():
            break
    return best


def _renamed(maxiter, max_iter, sinkhorn_iter, n_iter):
    """The deprecated spellings ``max_iter`` (now ``maxiter``, as every solver here and
    SciPy) and ``n_iter`` (now ``sinkhorn_iter``: it counts Sinkhorn normalizations, not
    optimizer steps) still work for one release, with a ``DeprecationWarning``."""
    import warnings

    if max_iter is not None:
        warnings.warn("max_iter is deprecated; use maxiter", DeprecationWarning, stacklevel=4)
        maxiter = max_iter
    if n_iter is not None:
        warnings.warn("n_iter is deprecated; use sinkhorn_iter", DeprecationWarning,
                      stacklevel=4)
        sinkhorn_iter = n_iter
    return maxiter, sinkhorn_iter


def _regularized_gram(C, xp):
    """The Gram matrix, with a ridge of 1e-8 of its mean diagonal when it is singular
    (``n <= d``, a duplicated or collinear column), so that the Cholesky factors of the
    profile score exist; a nonsingular ``C`` is returned unchanged."""
    C_h = np.asarray(to_host(C), dtype=np.float64)
    try:
        L = np.linalg.cholesky(C_h)
        if np.min(np.diag(L)) > 1e-7 * math.sqrt(np.max(np.diag(C_h))):
            return C
    except np.linalg.LinAlgError:
        pass
    d = C.shape[0]
    ridge = 1e-8 * float(np.trace(C_h)) / d
    return C + ridge * xp.eye(d, dtype=C.dtype)


def _search(C, n, order, o, noise, threshold):
    """The order search of :func:`solvers.dag.refine.refine_order` from ``order``."""
    opts = search_options(C, n, noise=noise, threshold=threshold, max_parents=None,
                          pen=o["pen"], be=o["be"])
    return search_order(C, n, order, opts)[:2]


def _nonequal_final(C, n, W_eq, order, o):
    """The final linear graph under one noise variance per node: the order search of
    :func:`solvers.dag.refine.refine_order` from the VI mode order, scored by the
    non-equal-variance extended BIC (scale-free). With ``"auto"`` it replaces the
    equal-variance graph ``W_eq`` only if its extended BIC (variance parameters counted)
    is lower than that of the same search scored with equal variances (the two models
    compared at equal effort)."""
    pen = o["pen"]
    o_ne, W_ne = _search(C, n, order, o, "nonequal", 0.0)
    if o["noise_variance"] == "auto":  # compare the models at the same search effort
        W_eq_s = _search(C, n, order, o, "equal", 0.3)[1]
    if o["noise_variance"] == "nonequal" or (model_bic(C, n, W_ne, "nonequal", pen=pen)
                                             < model_bic(C, n, W_eq_s, "equal", pen=pen)):
        return np.asarray(W_ne, dtype=np.float64), np.asarray(o_ne, dtype=np.int64), \
            "nonequal"
    return W_eq, order, "equal"


OPTIONS = Options(
    "DPDAGOptions",
    Param("order", Choice(*_ORDER_METHODS), "softsort", "order distribution"),
    Param("maxiter", COUNT, 3000, "Adam steps"),
    Param("n_samples", COUNT, 16, "Monte Carlo DAG samples per step"),
    Param("lr", POSITIVE, 0.1, "Adam step size"),
    Param("tau", POSITIVE, 1.0, "temperature of the order relaxation"),
    Param("tau_edges", POSITIVE, 1.0, "temperature of the Gumbel-sigmoid edges"),
    Param("prior_p", PROBABILITY, 0.1, "prior edge probability"),
    Param("noise_variance", Choice("auto", "equal", "nonequal"), "auto", "noise model"),
    Param("w_l2", NONNEGATIVE, 0.0, "ridge on the weights"),
    Param("w_threshold", NONNEGATIVE, 0.3, "smallest kept weight"),
    Param("refit", FLAG, True, "least-squares refit of the final graph"),
    Param("init_order", Choice("random", "varsort"), "random", "order logits' start"),
    Param("sinkhorn_iter", COUNT, 20, "Sinkhorn normalizations"),
    Param("order_grad", Choice("score", "st"), "score", "order-logit gradient"),
    Param("order_kl", FLAG, True, "KL(q(order) | uniform) in the objective"),
    Param("order_objective", (Choice("elbo", "profile"), NONE), None,
          "what the order logits follow (default by mechanism)"),
    Param("support", (Choice("order", "edges"), NONE), None,
          "final graph's support (default by mechanism)"),
    Param("mechanism", Choice("linear", "additive", "mlp"), "linear", "mechanisms"),
    Param("hidden", COUNT, 8, "hidden units per node (mlp)"),
    Param("batch_size", COUNT, 256, "minibatch rows (mlp)"),
    Param("refine", FLAG, False, "order search after VI"),
    Param("n_candidates", Integer(low=0), 100, "orders sampled from q for refine"),
    Param("ebic_gamma", NONNEGATIVE, EBIC_GAMMA, "extended BIC gamma of the searches"),
    Param("rng", SEED, None, "random numbers"),
    Param("callback", (CALLBACK, NONE), None, "called each step"),
    Param("progress", FLAG, False, "show a progress bar"),
    Param("backend", BACKEND, "auto", "which kernels run"),
    Param("max_iter", (COUNT, NONE), None, "deprecated spelling of maxiter"),
    Param("n_iter", (COUNT, NONE), None, "deprecated spelling of sinkhorn_iter"),
)


@OPTIONS.entry
def _learn_dpdag(X, *, order="softsort", maxiter=3000, n_samples=16, lr=0.1, tau=1.0,
                 tau_edges=1.0, prior_p=0.1, noise_variance="auto", w_l2=0.0,
                 w_threshold=0.3, refit=True, init_order="random", sinkhorn_iter=20,
                 order_grad="score", order_kl=True, order_objective=None,
                 support=None, mechanism="linear", hidden=8, batch_size=256, refine=False,
                 n_candidates=100, ebic_gamma=EBIC_GAMMA,
                 rng=None,
                 callback=None, progress=False, backend="auto", max_iter=None, n_iter=None):
    r"""VI-DP-DAG with linear or small MLP mechanisms (``learn_dag(X, method="dpdag")``).

    Parameters
    ----------
    X : array, shape (n, d)
        Data (numpy, cupy or any Array API array).
    order : {"softsort", "sinkhorn"}
        Order distribution: Plackett-Luce via Gumbel-Top-k/SoftSort, or Gumbel-Sinkhorn.
    maxiter : int
        Adam steps.
    n_samples : int
        Monte Carlo DAG samples per step.
    lr : float
        Adam step size (shared by order logits, edge logits and weights).
    tau, tau_edges : float
        Temperatures of the order relaxation and of the Gumbel-sigmoid edges (backward
        pass only: the forward pass is hard).
    prior_p : float in (0, 1)
        Edge prior: every ordered pair is an edge with probability ``prior_p`` a priori.
    noise_variance : {"auto", "equal", "nonequal"}
        Gaussian noise model: one variance for all nodes (identifies the order on
        equal-variance data) or one per node; updated in closed form each step of VI.
        With ``"nonequal"`` (linear mechanisms) the final graph comes from the swap
        search scored by the per-node-variance BIC (scale-free, only the equivalence class
        is identified: ``result.cpdag``), started at the VI mode order. ``"auto"``
        (default) runs VI with equal variances and keeps whichever final graph, equal or
        non-equal, has the lower BIC (equal variances are the nested special case).
        With ``"nonequal"`` VI runs on standardized columns (``sigma2``, ``W_vi`` and the
        MLP parameters are then in standardized units; ``W`` is in the data's units).
    w_l2 : float
        Gaussian prior (ridge) on the weights, ``w_l2 / 2 * |W|_F^2``.
    w_threshold : float
        Final edges need ``|W_ij| > w_threshold``.
    refit : bool
        Refit the weights of the final graph by least squares (the ML weights of the MAP
        graph) before thresholding.
    init_order : {"random", "varsort"}
        ``"varsort"`` initialises the order logits from minus the log-variances of the
        columns (low variance first). This exploits varsortability of simulated data:
        report it when you use it.
    sinkhorn_iter : int
        Sinkhorn iterations (``order="sinkhorn"``).
    max_iter, n_iter : int, optional
        Deprecated spellings of ``maxiter`` and ``sinkhorn_iter`` (a
        ``DeprecationWarning``; removed in a later release).
    order_grad : {"score", "st"}
        Gradient of the order logits (``order="softsort"``): the score-function estimator
        of the Plackett-Luce expectation with a leave-one-out baseline (unbiased), or the
        straight-through SoftSort estimator of the paper (biased: its first-order view of
        a swap adds the reversed edge without removing the forward one, and on linear
        data it drifts towards reversals). ``order="sinkhorn"`` always uses
        straight-through.
    mechanism : {"linear", "additive", "mlp"}
        ``"additive"``: VI with linear mechanisms gives the start order of the
        CAM-style additive spline search of :func:`solvers.dag.additive.additive_search`
        (``W`` then holds edge strengths).
        Linear mechanisms (``X (A * W)``, through the Gram matrix: per step cost
        independent of ``n``) or one tanh hidden layer per node,
        ``y_j = V_j tanh(U1_j (x * A[:, j]) + b1_j) + c_j``, trained on minibatches.
        With ``"mlp"`` VI trains on 80% of the rows; in the mode order each node keeps the
        top-``k`` most probable parents with ``k`` chosen by the held-out likelihood of the
        other 20% (so graphs are not dense), and ``W`` holds the norms of the
        first-layer weights of each kept edge.
    hidden, batch_size : int
        Hidden units per node and minibatch rows (``mechanism="mlp"``).
    order_objective : {"profile", "elbo"}, optional
        Default ``"profile"`` for linear mechanisms, ``"elbo"`` for MLPs.
        What the order logits follow (``order_grad="score"`` only). ``"elbo"``: the ELBO
        itself, as for every other parameter (a single variational objective; the weights
        of pairs the current order forbids are never trained, so q can settle in a wrong
        order). ``"profile"``: a collapsed objective for the order, the Gaussian
        log-likelihood with every predecessor a parent and least-squares weights (the
        squared Cholesky diagonal of the permuted Gram matrix, ``O(d^3)`` per sample),
        which has no such blind spot; edges and weights still follow the ELBO.
    support : {"order", "edges"}, optional
        Default ``"order"`` for linear mechanisms, ``"edges"`` for MLPs. Final graph:
        ``"order"`` refits every node on all its predecessors in the mode order and
        keeps ``|W| > w_threshold``; ``"edges"`` refits on the mode DAG (the
        edges with ``q > 1/2`` allowed by the mode order) before thresholding.
    order_kl : bool
        Include ``KL(q(order) || uniform)`` in the objective (score-function estimate;
        ``order_grad="score"`` only). Without it q(order) is free to collapse, as in the
        reference code.
    refine : bool
        After VI (equal noise variances only): score the mode order and
        ``n_candidates`` orders sampled from q by the total residual sum of squares with
        all predecessors as parents (minimal at the true order for equal-variance linear
        SEMs), then improve the best with :func:`solvers.dag.refine.refine_order` (the
        local search and sparse BIC refit COSMO uses). This search is outside VI and is
        strong on its own on ER2 data (see the user guide), so say which setting a figure
        used. Off by default.
    n_candidates : int
        Orders sampled from q for ``refine``.
    ebic_gamma : float
        Gamma of the extended BIC of the order searches (``refine``, ``"nonequal"``):
        ``log n + 2 gamma log d`` per edge, as in :func:`solvers.dag.cosmo.learn_cosmo`.
    rng, callback, progress, backend
        As everywhere; ``callback(intermediate_result)`` gets ``nit``, ``fun`` and
        ``edge_probs`` each step and may raise ``StopIteration``.

    Returns
    -------
    DAGResult
        ``W``, ``adjacency``, ``order`` (the mode order), plus ``edge_probs`` (marginal
        ``P(A_ij = 1)`` under q), ``model`` (a :class:`DPDAG`), ``sample_dags(n, rng)``,
        ``sigma2``, ``W_vi`` (the variational weights before the refit).

    Examples
    --------
    >>> from solvers.dag import learn_dag, simulate_data, shd
    >>> X, W, B = simulate_data(d=4, n=500, k=1, rng=0)
    >>> res = learn_dag(X, method="dpdag", rng=0, maxiter=300)
    >>> res.is_dag(), res.edge_probs.shape, res.sample_dags(5, rng=0).shape
    (True, (4, 4), (5, 4, 4))
    """
    options = dict(locals())
    del options["X"]
    start = time.perf_counter()
    opt = OPTIONS.validate(**options)
    X, xp_in = check_data(X)
    maxiter, sinkhorn_iter = _renamed(opt.maxiter, opt.max_iter, opt.sinkhorn_iter,
                                      opt.n_iter)
    o = _settings(opt.replace(maxiter=maxiter, sinkhorn_iter=sinkhorn_iter))
    be = resolve_backend(opt.backend, xp_in)
    o["be"], o["pen"] = be, edge_penalty(X.shape[0], X.shape[1], o["ebic_gamma"])
    xp = be.xp
    X = be.to_device(X)
    sd_h = None
    if o["noise_variance"] == "nonequal":  # scale-free model: fit on standardized columns
        sd = xp.std(X, axis=0)
        X = X / sd
        sd_h = np.asarray(to_host(sd), dtype=np.float64)
    draws = Draws(opt.rng, xp)
    data = _prepare(X, o, draws, xp)
    vi = _run_vi(_init_params(data, o, draws, xp), data, o, draws, xp, opt.callback,
                 opt.progress)
    graph = _final_graph(vi, data, X, o, draws, xp, sd_h)
    return _result(graph, vi, X, xp_in, be, o, start)


def _settings(opt):
    """The run's settings (a dict) and the VI configuration ``cfg`` from the validated
    options ``opt`` (what a spec cannot say checked here)."""
    o = opt.as_dict()
    o["vi_noise"] = "equal" if opt.noise_variance == "auto" else opt.noise_variance
    o["S"] = opt.n_samples
    o["mlp"] = mlp = opt.mechanism == "mlp"
    o["additive"] = opt.mechanism == "additive"   # VI runs linear; the end is additive
    objective = opt.order_objective or ("elbo" if mlp else "profile")
    o["support"] = opt.support or ("edges" if mlp else "order")
    if mlp and (objective == "profile" or o["support"] == "order" or opt.refine):
        raise ValueError("mechanism='mlp' needs order_objective='elbo', support='edges' "
                         "and refine=False (the profile, the order support and the "
                         "refinement are least-squares constructions)")
    o["cfg"] = {"order": opt.order, "tau": opt.tau, "tau_edges": opt.tau_edges,
                "n_iter": opt.sinkhorn_iter,
                "prior_logit": math.log(opt.prior_p) - math.log1p(-opt.prior_p),
                "w_l2": opt.w_l2, "order_grad": opt.order_grad, "order_kl": opt.order_kl,
                "order_objective": objective, "mechanism": "mlp" if mlp else "linear"}
    return o


def _prepare(X, o, draws, xp):
    """Centered data, the (regularized) Gram matrix and, for MLPs, the held-out rows."""
    n = X.shape[0]
    Xc = X - xp.mean(X, axis=0, keepdims=True)
    data = {"n": n, "C": _regularized_gram(xp.matmul(xp.matrix_transpose(Xc), Xc), xp),
            "Xc": Xc, "X_val": None, "n_fit": n}
    if o["mlp"]:
        # hold out 20% of the rows: the final sparsity is chosen by held-out likelihood
        data["Xc"], data["X_val"] = _holdout_split(Xc, draws, xp)
        data["n_fit"] = data["Xc"].shape[0]
        data["m"] = min(o["batch_size"], data["n_fit"])
        o["cfg"]["scale"] = data["n_fit"] / data["m"]
    return data


def _init_params(data, o, draws, xp):
    """Order logits ``theta``, edge logits ``phi`` and the mechanism parameters."""
    C, n = data["C"], data["n"]
    d, dtype = C.shape[0], C.dtype
    if o["init_order"] == "varsort":
        lv = xp.log(xp.linalg.diagonal(C) / n)
        theta = -(lv - xp.mean(lv)) * 2.0
        if o["order"] == "sinkhorn":  # position k prefers the k-th lowest-variance node
            rank = xp.astype(xp.argsort(xp.argsort(lv)), dtype)
            theta = -xp.abs(xp.arange(d, dtype=dtype)[:, None] - rank[None, :])
    else:
        shape = (d,) if o["order"] == "softsort" else (d, d)
        theta = 0.01 * draws.normal(shape, dtype=dtype)
    phi = xp.zeros((d, d), dtype=dtype)
    if o["mlp"]:
        h = o["hidden"]
        mech = [0.1 * draws.normal((d, d, h), dtype=dtype), xp.zeros((d, h), dtype=dtype),
                0.1 * draws.normal((d, h), dtype=dtype), xp.zeros((d,), dtype=dtype)]
    else:
        mech = [xp.zeros((d, d), dtype=dtype)]
    return [theta, phi] + mech


def _run_vi(params, data, o, draws, xp, callback, progress):
    """The VI loop (Adam on the ELBO, closed-form noise variances); returns a dict."""
    C, n_fit, cfg = data["C"], data["n_fit"], o["cfg"]
    d, dtype = C.shape[0], C.dtype
    opt = Adam(params, o["lr"], xp=xp)  # the shared _lib Adam
    sigma2 = xp.ones((d,), dtype=dtype) * (xp.sum(xp.linalg.diagonal(C)) / (data["n"] * d))
    history, nit = [], 0
    status, message = Status.MAXITER, "maximum number of iterations reached (the VI budget)"
    with Progress(o["maxiter"], "dpdag", enabled=progress) as bar:
        for it in range(o["maxiter"]):
            noise = _draw_noise(draws, o["S"], d, o["order"], dtype)
            if o["mlp"]:
                idx = draws.integers(0, n_fit, (data["m"],))
                data_in, W_arg = xp.take(data["Xc"], idx, axis=0), tuple(params[2:])
            else:
                data_in, W_arg = C, params[2]
            loss, grads, v = _elbo_grad(params[0], params[1], W_arg, data_in, sigma2,
                                        noise, cfg, xp)
            if o["mlp"]:
                grads = (grads[0], grads[1]) + tuple(grads[2])
            # closed-form noise variance for the current samples (coordinate ascent)
            vm = xp.mean(v, axis=0) / n_fit
            sigma2 = xp.ones((d,), dtype=dtype) * xp.mean(vm) if o["vi_noise"] == "equal" \
                else vm
            sigma2 = xp.maximum(sigma2, xp.asarray(1e-8, dtype=dtype))
            loss_val = float(loss) + 0.5 * n_fit * float(xp.sum(xp.log(sigma2)))
            if not math.isfinite(loss_val):
                status, message = (Status.NONFINITE,
                                   "non-finite objective (lower lr or check the data)")
                break
            history.append(loss_val)
            params = opt.step(params, grads)
            nit = it + 1
            bar.update(1, loss=loss_val)
            if callback is not None and call_callback(callback, x=params[0], nit=nit,
                                                      fun=loss_val,
                                                      edge_probs=_sigmoid(params[1], xp)):
                status, message = Status.CALLBACK, None
                break
    return {"params": params, "sigma2": sigma2, "history": history, "nit": nit,
            "status": status, "message": message}


def _final_graph(vi, data, X, o, draws, xp, sd_h):
    """The returned DAG: mode order, then refit / refinement / held-out MLP support /
    non-equal-variance search / additive search, as the options ask."""
    params, cfg, n = vi["params"], o["cfg"], data["n"]
    host = DPDAG(to_host(params[0]), to_host(params[1]), order=o["order"], tau=cfg["tau"],
                 n_iter=cfg["n_iter"])
    C_h = np.asarray(to_host(data["C"]), dtype=np.float64)
    W_vi = None if o["mlp"] else np.asarray(to_host(params[2]), dtype=np.float64)
    final_order = np.asarray(host.mode_order(), dtype=np.int64)
    if o["support"] == "order":  # every predecessor in the mode order; refit + prune
        pos = np.argsort(final_order)
        support = pos[:, None] < pos[None, :]
    else:
        support = np.asarray(host.mode_dag())
    refined = bool(o["refine"]) and o["vi_noise"] == "equal"
    if refined:
        cands = [final_order]
        k = o["n_candidates"]
        if k:
            cands += list(host.sample_orders(k, rng=draws.spawn_seed()))
        scores = [_order_score(C_h, c) for c in cands]
        final_order, W_fin = _search(C_h / n, n, cands[int(np.argmin(scores))], o,
                                     "equal", o["w_threshold"])
    elif o["mlp"]:  # edge strength: norm of the first-layer weights of parent i in node j
        if data["X_val"] is not None:
            support = _mlp_support(host, final_order, tuple(params[2:]), data["Xc"],
                                   data["X_val"], cfg, xp)
        U1 = np.asarray(to_host(params[2]), dtype=np.float64)
        W_fin = np.sqrt(np.sum(U1 * U1, axis=-1)).T * support
    else:
        W_fin = _refit(C_h, support, np) if o["refit"] else W_vi * support
        W_fin = np.where(np.abs(W_fin) > o["w_threshold"], W_fin, 0.0) * support
    chosen = "equal" if o["noise_variance"] == "auto" else o["noise_variance"]
    if not o["mlp"] and o["noise_variance"] != "equal":
        W_fin, final_order, chosen = _nonequal_final(C_h / n, n, W_fin, final_order, o)
    if sd_h is not None:  # back to the original units
        W_fin = W_fin * sd_h[None, :] / sd_h[:, None]
    if o["additive"]:
        final_order, W_fin, _ = additive_search(
            np.asarray(to_host(X), np.float64), [final_order],
            pen=4 * math.log(n) + o["pen"] - math.log(n))
        chosen = "nonequal"
    return {"W": np.asarray(W_fin, dtype=np.float64), "W_vi": W_vi, "refined": refined,
            "order": np.asarray(final_order, dtype=np.int64), "chosen": chosen}


def _result(graph, vi, X, xp_in, be, o, start):
    params, cfg = vi["params"], o["cfg"]
    model = DPDAG(be.to_input(params[0]), be.to_input(params[1]), order=o["order"],
                  tau=cfg["tau"], n_iter=cfg["n_iter"])
    history = vi["history"]
    return dag_result(graph["W"], be=be, dtype=X.dtype, status=vi["status"],
                      success=True if vi["status"] == Status.MAXITER else None,
                      message=vi["message"], method="dpdag", order=graph["order"],
                      priorities=model.order_logits,
                      fun=history[-1] if history else np.nan, loss_history=history,
                      nit=vi["nit"], time=time.perf_counter() - start,
                      edge_probs=model.edge_marginals(), model=model,
                      sample_dags=model.sample_dags, sigma2=be.to_input(vi["sigma2"]),
                      W_vi=graph["W_vi"], refined=graph["refined"],
                      noise_variance=graph["chosen"],
                      identified=o["mlp"] or o["additive"] or graph["chosen"] == "equal",
                      mlp_params=tuple(be.to_input(p_) for p_ in params[2:]) if o["mlp"]
                      else None)
