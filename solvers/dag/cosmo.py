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
refit exactly among its predecessors and the order is improved by local swaps, see
:mod:`solvers.dag.refine`.

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

import numpy as np

from .._lib.backend import resolve_backend
from .._lib.optim import adam_update
from .._lib.results import STOPPED_BY_CALLBACK, Progress, Status, call_callback
from .._lib.rng import check_rng
from .._lib.validation import check_choice, check_int, check_positive
from .._lib.validation import check_callback
from .graph import to_host
from .learn import check_data, make_result
from .refine import model_bic
from ._dag_kernels import KERNELS

__all__ = ["learn_cosmo", "cosmo_loss_grad", "orientation"]

INITS = ("variance", "zeros", "random")

#: above this many nodes the defaults switch to minibatches of 64 and 1000 steps
LARGE_D = 256


def _sigmoid_xp(xp, z):
    # stable for both signs, no overflow warnings
    e = xp.exp(-xp.abs(z))
    return xp.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def orientation(p, t, eps=1e-2):
    """The smooth orientation ``S_ij = sigmoid((p_j - p_i - eps) / t)`` with ``S_ii = 0``.

    Parameters
    ----------
    p : array, shape (d,)
        Priorities (any Array API namespace).
    t : float
        Temperature (> 0).
    eps : float
        Margin: two nodes closer than ``eps`` in priority orient neither way.

    Returns
    -------
    S : array, shape (d, d)

    Notes
    -----
    No input is validated, so nothing is raised on purpose: ``p`` is assumed to be a 1-D
    array (not a list) of a floating dtype and ``t > 0`` (``t = 0`` gives ``nan``/``inf``
    entries rather than an error).

    References
    ----------
    .. [1] R. Massidda, F. Landolfi, M. Cinquini, D. Bacciu, "Constraint-free structure
       learning with smooth acyclic orientations", ICLR 2024.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.cosmo import orientation
    >>> np.round(orientation(np.array([0.0, 1.0]), t=1e-3), 3)
    array([[0., 1.],
           [0., 0.]])
    """
    from .._lib.namespace import array_namespace

    xp = array_namespace(p)
    d = p.shape[0]
    z = (p[None, :] - p[:, None] - eps) / t
    off = 1.0 - xp.eye(d, dtype=p.dtype)
    return _sigmoid_xp(xp, z) * off


def cosmo_loss_grad(H, p, X, t, eps=1e-2, lambda1=0.0, lambda2=0.0, lambda_p=0.0):
    """COSMO loss and its closed-form gradients with respect to ``H`` and ``p``.

    Parameters
    ----------
    H : array, shape (d, d)
    p : array, shape (d,)
    X : array, shape (n, d)
        Data (used as given: center it first to match :func:`learn_cosmo`).
    t, eps : float
        Temperature and margin of the orientation.
    lambda1, lambda2, lambda_p : float
        Penalty weights (``l1 |H|_1 + l2 |H|_F^2 + lp |p|^2``).

    Returns
    -------
    loss : float
    grad_H : array, shape (d, d)
    grad_p : array, shape (d,)

    Notes
    -----
    No input is validated, so nothing is raised on purpose: the arrays are assumed to be
    of one namespace and floating dtype with matching shapes (a mismatch surfaces as the
    namespace's own matmul error) and ``t > 0``. The gradients are exact (closed form),
    not autodiff; ``sign(0) = 0`` is used as the subgradient of the L1 term.

    References
    ----------
    .. [1] R. Massidda, F. Landolfi, M. Cinquini, D. Bacciu, "Constraint-free structure
       learning with smooth acyclic orientations", ICLR 2024.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.cosmo import cosmo_loss_grad
    >>> X = np.random.default_rng(0).normal(size=(50, 3))
    >>> loss, gH, gp = cosmo_loss_grad(np.ones((3, 3)), np.arange(3.0), X, t=0.5)
    >>> gH.shape, gp.shape
    ((3, 3), (3,))
    """
    from .._lib.namespace import array_namespace

    xp = array_namespace(H, p, X)
    n = X.shape[0]
    S = orientation(p, t, eps)
    W = H * S
    R = X @ W - X
    G = (X.T @ R) / n
    loss = float(xp.sum(R * R)) / (2 * n)
    off = 1.0 - xp.eye(H.shape[0], dtype=H.dtype)
    Ho = H * off
    loss += lambda1 * float(xp.sum(xp.abs(Ho))) + lambda2 * float(xp.sum(Ho * Ho))
    loss += lambda_p * float(xp.sum(p * p))
    gH = (G * S + lambda1 * xp.sign(Ho) + 2.0 * lambda2 * Ho)
    M = G * H * S * (1.0 - S) / t
    gp = xp.sum(M, axis=0) - xp.sum(M, axis=1) + 2.0 * lambda_p * p
    return loss, gH, gp


# ---------------------------------------------------------------------------------------
# one optimisation step, generic (xp) version; the Numba path fuses the same arithmetic

def _step_xp(xp, G, H, p, S, inv_t, l1, l2, lp, lr, b1, b2, bc1, bc2, adam_eps, adam,
             state, off):
    Ho = H * off
    pen = l1 * xp.sum(xp.abs(Ho)) + l2 * xp.sum(Ho * Ho) + lp * xp.sum(p * p)
    gH = (G * S + l1 * xp.sign(Ho) + 2.0 * l2 * Ho) * off
    M = G * H * S * (1.0 - S) * inv_t
    gp = xp.sum(M, axis=0) - xp.sum(M, axis=1) + 2.0 * lp * p
    if adam:  # the shared _lib Adam update (the Numba kernel fuses the same arithmetic)
        mH, vH, mp, vp = state
        H, mH, vH = adam_update(H, gH, mH, vH, lr, b1, b2, adam_eps, bc1, bc2, xp)
        p, mp, vp = adam_update(p, gp, mp, vp, lr, b1, b2, adam_eps, bc1, bc2, xp)
        state = (mH, vH, mp, vp)
    else:
        H = H - lr * gH
        p = p - lr * gp
    return H, p, state, pen


def _init_state_xp(H, p):
    """Generic run state: the off-diagonal mask and the Adam moments."""
    from .._lib.namespace import array_namespace

    xp = array_namespace(H, p)
    off = 1.0 - xp.eye(p.shape[0], dtype=H.dtype)
    return {"off": off, "adam": (xp.zeros_like(H), xp.zeros_like(H), xp.zeros_like(p),
                                 xp.zeros_like(p))}


def _orient_xp(H, p, inv_t, eps, state):
    from .._lib.namespace import array_namespace

    xp = array_namespace(H, p)
    S = _sigmoid_xp(xp, (p[None, :] - p[:, None] - eps) * inv_t) * state["off"]
    return S, H * S


def _step_generic(G, H, p, S, inv_t, l1, l2, lp, lr, b1, b2, bc1, bc2, adam_eps, adam,
                  state):
    from .._lib.namespace import array_namespace

    xp = array_namespace(H, p)
    H, p, state["adam"], pen = _step_xp(xp, G, H, p, S, inv_t, l1, l2, lp, lr, b1, b2, bc1,
                                        bc2, adam_eps, adam, state["adam"], state["off"])
    return H, p, state, pen


def _temperature(k, total, t_max, t_min):
    """Cosine annealing from t_max (k = 0) to t_min (k = total - 1)."""
    if total <= 1:
        return t_min
    c = 0.5 * (1.0 + math.cos(math.pi * k / (total - 1)))
    return t_min + (t_max - t_min) * c


def _train(Xc, C, n, H, p, *, be, batch_size, maxiter, t_max, t_min, eps, l1, l2, lp, lr,
           optimizer, rng, callback, progress, record_every):
    """Run the COSMO optimisation; returns H, p, loss history, nit, stopped."""
    xp = be.xp
    adam = optimizer == "adam"
    b1, b2, adam_eps = 0.9, 0.999, 1e-8
    history = []
    stopped = False
    full = batch_size is None or batch_size >= n
    half_trC = 0.5 * float(xp.sum(xp.linalg.diagonal(C))) if full else 0.0
    init_state = KERNELS.get("cosmo_state", be, generic=_init_state_xp)
    orient_k = KERNELS.get("cosmo_orient", be, generic=_orient_xp)
    step_k = KERNELS.get("cosmo_step", be, generic=_step_generic)
    state = init_state(H, p)
    perm = None
    pos = n
    with Progress(maxiter, desc="cosmo", enabled=progress) as bar:
        for k in range(maxiter):
            t = _temperature(k, maxiter, t_max, t_min)
            inv_t = 1.0 / t
            S, W = orient_k(H, p, inv_t, eps, state)
            if full:
                CW = C @ W
                G = CW - C
            else:
                if pos + batch_size > n:
                    perm = xp.asarray(rng.permutation(n))
                    pos = 0
                idx = perm[pos:pos + batch_size]
                pos += batch_size
                Xb = xp.take(Xc, idx, axis=0)
                R = Xb @ W - Xb
                G = (Xb.T @ R) / batch_size
            bc1 = 1.0 - b1 ** (k + 1)
            bc2 = 1.0 - b2 ** (k + 1)
            H, p, state, pen = step_k(G, H, p, S, inv_t, l1, l2, lp, lr, b1, b2, bc1, bc2,
                                      adam_eps, adam, state)
            record = (k % record_every == 0) or k == maxiter - 1
            if record or callback is not None:
                if full:
                    data = half_trC - float(xp.sum(C * W)) + 0.5 * float(xp.sum(W * CW))
                else:
                    data = 0.5 * float(xp.sum(R * R)) / batch_size
                loss = data + float(pen)
                if not math.isfinite(loss):
                    history.append(loss)
                    return H, p, history, k + 1, "nonfinite"
                if record:
                    history.append(loss)
                    bar.update(k + 1 - bar.count, loss=loss, t=t)  # ends at maxiter
                if callback is not None and call_callback(
                        callback, x=p, H=H, priorities=p, fun=loss, nit=k + 1,
                        temperature=t):
                    stopped = True
                    return H, p, history, k + 1, "callback"
    return H, p, history, maxiter, stopped


def _order_from_priorities(p_host):
    """Ascending priorities, ties broken by node index (explicit and deterministic)."""
    return np.argsort(p_host, kind="stable")


def _plain_graph(H, p, t_min, eps, threshold):
    """The paper's graph: |H * S(t_min)| > threshold, restricted to the priority order."""
    from .graph import order_mask

    Hh = np.asarray(to_host(H), dtype=float)
    ph = np.asarray(to_host(p), dtype=float)
    S = np.asarray(to_host(orientation(ph, t_min, eps)))
    order = _order_from_priorities(ph)
    W = Hh * S * order_mask(order)
    W[np.abs(W) <= threshold] = 0.0
    return W, order


def learn_cosmo(X, *, lambda1=1e-3, lambda2=2e-3, lambda_p=0.0, t_max=0.45, t_min=1e-3,
                eps=1e-2, threshold=None, maxiter=None, epochs=None, batch_size=None,
                lr=None, optimizer="adam", init="variance", refine=True, restarts=1,
                refine_rounds=50, refine_time_limit=None, max_parents=None, rng=None,
                callback=None, progress=False, backend="auto", record_every=50,
                noise_variance="auto", mechanism="auto", workers=None):
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
        live on standardized columns and are pruned by BIC alone (a fixed threshold there
        cut true edges and forced the refit to add many wrong ones).
    noise_variance : {"auto", "equal", "nonequal"}
        Noise model of the score the order is refined with. ``"equal"``: one noise
        variance for all nodes (least squares; identifies the DAG when the variances
        really are equal, Peters & Bühlmann 2014, but reads the order off the marginal
        scales, so it fails on standardized or real data). ``"nonequal"``: one variance per
        node, :math:`\tfrac12\sum_j \log \mathrm{rss}_j + |E| \log n / (2n)`; training
        runs on standardized columns and the result does not depend on the scale of any
        column; only the Markov equivalence class is identified (see ``cpdag``).
        ``"auto"`` (default) fits equal variances first and keeps them, skipping the
        non-equal search, when that graph has the lower BIC with one variance than with
        one per node (its residual variances are equal up to noise); the equal search
        then also starts from CAM's greedy order. Otherwise it runs both and keeps the
        lower BIC (equal variances are the nested special case).
    mechanism : {"auto", "linear", "additive"}
        ``"auto"`` (default): the linear model, then the additive one when it has the
        lower BIC (variance parameters counted; additive nests linear), see
        the guide page "Which assumptions, which method"; ``result.mechanism`` says
        which was kept and ``result.bic["additive"]`` its score (with
        ``refine=False`` the paper's linear graph is returned). ``"linear"``: the
        linear SEM. ``"additive"``: each node a sum of smooth functions of its parents
        (CAM-style cubic splines with a ridge penalty, parents chosen by the additive
        BIC, see :mod:`solvers.dag.additive`); the order is searched with the same
        additive score, started from the linear results and a greedy
        edge-addition start. ``W`` then holds edge strengths (the standard deviation of
        each fitted component on standardized data) and the DAG is identified.
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
        Refit parents exactly and improve the order by local swaps (default, beyond the
        paper). ``False`` returns the paper's thresholded ``H * S``.
    restarts : int
        Independent COSMO fits: the first with ``init`` and ``rng`` as given, the others
        with ``init="random"`` and generators spawned from ``rng``
        (``Generator.spawn``); the fit with the lowest BIC is kept (``restart_bics``
        lists them, ``nit`` and ``time`` add up over all).
    workers : None, int or map-like callable
        Runs the restarts in parallel: an int (processes of a
        ``concurrent.futures.ProcessPoolExecutor``; ``-1`` one per CPU) or any
        ``map(func, iterable)`` such as ``multiprocessing.Pool.map`` or dask's
        ``Client.map``. The result does not depend on ``workers``.
    refine_rounds, refine_time_limit
        Limits of the swap search (:func:`solvers.dag.refine.refine_order`).
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
        ``fun`` (final training loss), ``loss_history``, ``nit``, ``score`` (BIC per sample
        of the returned graph, lower is better), ``W_cosmo`` (the plain COSMO graph before
        refinement), ``noise_variance`` (the model kept), ``bic`` (BIC per sample of each
        model tried, variance parameters counted), ``cpdag`` (the equivalence class, see
        :attr:`DAGResult.cpdag`), ``time``.

    Raises
    ------
    ValueError
        Bad data (NaN, ``n < 2``, constant column, not 2-D) or options (negative
        penalties, ``t_min > t_max``, non-positive ``lr``, both ``maxiter`` and
        ``epochs``, an unknown ``optimizer``/``init``/``backend``, or a backend that
        cannot run here).
    TypeError
        Non-numeric or complex data, a non-integer ``maxiter``/``batch_size``/
        ``restarts``/``record_every``, an ``rng`` that is not None, an int or a
        ``numpy.random.Generator``, or a ``callback`` that is not callable.

    References
    ----------
    .. [1] R. Massidda, F. Landolfi, M. Cinquini, D. Bacciu, "Constraint-free structure
       learning with smooth acyclic orientations", ICLR 2024.
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
    restarts = check_int(restarts, "restarts", minimum=1)
    if restarts > 1:
        return _restarts(X, options, start)
    X, xp_in = check_data(X)
    check_callback(callback)
    be = resolve_backend(backend, xp_in)
    xp = be.xp
    X = be.to_device(X)
    n, d = X.shape
    for name, v in (("lambda1", lambda1), ("lambda2", lambda2), ("lambda_p", lambda_p)):
        check_positive(v, name, strict=False)
    t_max = check_positive(t_max, "t_max")
    t_min = check_positive(t_min, "t_min")
    if t_min > t_max:
        raise ValueError(f"t_min ({t_min}) must be <= t_max ({t_max})")
    eps = check_positive(eps, "eps", strict=False)
    if threshold is not None:
        threshold = check_positive(threshold, "threshold", strict=False)
    optimizer = check_choice(optimizer, ("adam", "sgd"), "optimizer")
    init = check_choice(init, INITS, "init")
    record_every = check_int(record_every, "record_every", minimum=1)
    if batch_size is None:
        # full-batch steps cost one d x d x d product; above LARGE_D minibatches are cheaper
        batch_size = None if d <= LARGE_D else 64
    full = batch_size is None
    if not full:
        batch_size = check_int(batch_size, "batch_size", minimum=1)
        if batch_size >= n:
            full = True
    if maxiter is not None and epochs is not None:
        raise ValueError("give maxiter or epochs, not both")
    if epochs is not None:
        check_positive(epochs, "epochs")
        maxiter = max(1, int(math.ceil(epochs * n / (n if full else batch_size))))
    if maxiter is None:
        maxiter = 5000 if full else (8000 if d <= LARGE_D else 1000)
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    if lr is None:
        lr = 3e-2 if full else 1e-2
    lr = check_positive(lr, "lr")
    rng = check_rng(rng)

    noise_variance = check_choice(noise_variance, ("auto", "equal", "nonequal"),
                                  "noise_variance")
    mechanism = check_choice(mechanism, ("auto", "linear", "additive", "mlp"), "mechanism")
    if mechanism == "mlp":
        raise ValueError("mechanism='mlp' is DP-DAG's: use learn_dag(X, method='dpdag', "
                         "mechanism='mlp'), or mechanism='additive' here")
    dtype = X.dtype
    Xc = X - xp.mean(X, axis=0)
    C = (Xc.T @ Xc) / n
    C_host = np.asarray(to_host(C), dtype=np.float64)
    train = dict(be=be, batch_size=None if full else batch_size, maxiter=maxiter,
                 t_max=t_max, t_min=t_min, eps=eps, l1=float(lambda1), l2=float(lambda2),
                 lp=float(lambda_p), lr=lr, optimizer=optimizer, rng=rng, callback=callback,
                 progress=progress, record_every=record_every)
    search = dict(refine=refine, threshold=threshold, max_parents=max_parents,
                  refine_rounds=refine_rounds, refine_time_limit=refine_time_limit, be=be)
    runs = {}
    if noise_variance in ("auto", "equal"):
        runs["equal"] = _run_restarts(Xc, C, C_host, n, init, restarts, "equal", train,
                                      search)
    if noise_variance in ("auto", "nonequal") and not _stopped(runs) \
            and not _equal_decisive(runs, C_host, n, noise_variance):
        # train on standardized columns (the equal-variance loss is then scale-free too)
        sd = xp.sqrt(xp.linalg.diagonal(C))
        extra = [runs["equal"][0]["order"]] if "equal" in runs else []
        runs["nonequal"] = _run_restarts(Xc / sd, C / (sd[:, None] * sd[None, :]), C_host,
                                         n, init, restarts, "nonequal", train, search,
                                         extra_orders=extra)
    X_host = None  # the data on the host, copied once for the additive model
    greedy = None  # CAM's greedy order, computed once for both uses below
    if noise_variance == "auto" and len(runs) == 1 and refine and not _stopped(runs):
        from ._mechanism import greedy_start

        X_host = np.asarray(to_host(X), dtype=np.float64)
        greedy = greedy_start(X_host, max_parents)
        _better_start(runs, "equal", C_host, n, search, greedy)
    if len(runs) == 2 and refine:
        # and the non-equal order as one more start for the equal-variance search, so
        # the two models are compared at their best graphs found from the same starts
        _better_start(runs, "equal", C_host, n, search, runs["nonequal"][0]["order"])
    bics = {k: model_bic(C_host, n, r[0]["W"], k) for k, r in runs.items()}
    chosen = min(bics, key=bics.get)
    best, nit_total, (success, status, message) = runs[chosen]
    nit_total = sum(r[1] for r in runs.values())
    if mechanism == "additive" or (mechanism == "auto" and refine):
        from ._mechanism import choose_mechanism

        if X_host is None:
            X_host = np.asarray(to_host(X), dtype=np.float64)
        best, mechanism = choose_mechanism(
            X_host, C_host, n, best, bics,
            [r[0]["order"] for r in runs.values()], mechanism=mechanism,
            max_parents=max_parents, max_rounds=refine_rounds,
            time_limit=refine_time_limit, greedy=greedy)
        if mechanism == "additive":
            chosen = "nonequal"
    mechanism = "linear" if mechanism == "auto" else mechanism
    W = best["W"]
    if _is_host_numpy(xp_in):
        W_out = W.astype(X.dtype)
    else:
        W_out = xp_in.asarray(W, dtype=dtype)
    p_out = best["p"] if _is_host_numpy(xp_in) else xp_in.asarray(best["p"], dtype=dtype)
    return make_result(
        W_out, method="cosmo", order=best["order"], priorities=p_out,
        fun=best["loss"], loss_history=best["history"], nit=nit_total, success=success,
        status=status, message=message, time=time.perf_counter() - start,
        score=best["score"], W_cosmo=best["W_cosmo"], refined=bool(refine),
        noise_variance=chosen, bic=bics, mechanism=mechanism,
        identified=chosen == "equal" or mechanism == "additive")


def _restarts(X, options, start):
    """``restarts`` independent fits mapped over ``workers``; keep the lowest BIC."""
    from .._lib.parallel import parallel_map, spawn_generators

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


def _better_start(runs, noise, C_host, n, search, order):
    """Refine ``order`` with the ``noise`` score; keep it when it beats ``runs[noise]``."""
    best = runs[noise][0]
    cand = _candidate(C_host, n, None, order, None, [], noise=noise, **search)
    if cand["score"] < best["score"]:
        cand.update(p=best["p"], W_cosmo=best["W_cosmo"], loss=best["loss"],
                    history=best["history"])
        runs[noise] = (cand,) + tuple(runs[noise][1:])


def _equal_decisive(runs, C_host, n, noise_variance):
    """Skip the non-equal search (``"auto"``) when the equal-variance graph already has a
    lower BIC with one variance than the same graph with one variance per node: its
    residual variances are then equal up to noise, the equal model's assumption holds and
    identifies the DAG, and the non-equal search (the slower one) cannot win."""
    if noise_variance != "auto" or "equal" not in runs:
        return False
    W = runs["equal"][0]["W"]
    return model_bic(C_host, n, W, "equal") < model_bic(C_host, n, W, "nonequal")


def _stopped(runs):
    return any(r[2][1] == STOPPED_BY_CALLBACK[0] or not r[2][0] for r in runs.values())


def _run_restarts(Xc, C, C_host, n, init, restarts, noise, train, search, extra_orders=()):
    """COSMO runs (the first from ``init``, later ones perturbed), each refined with the
    ``noise`` model's score; returns ``(best, nit, (success, status, message))``.

    ``Xc``/``C`` are the (centered, possibly standardized) training data; ``C_host`` the
    original Gram matrix the refinement scores. ``extra_orders`` are refined too (e.g. the
    equal-variance result as one more start for the non-equal search)."""
    rng, xp = train["rng"], train["be"].xp
    d = C_host.shape[0]
    var_host = np.diag(np.asarray(to_host(C), dtype=np.float64))
    best, nit_total = None, 0
    success, status, message = True, 0, "converged (schedule completed)"
    for r in range(restarts):
        if init == "variance":
            p0 = np.log(var_host)
        elif init == "zeros":
            p0 = np.zeros(d)
        else:
            p0 = 0.1 * rng.standard_normal(d)
        p = xp.asarray(p0, dtype=Xc.dtype)
        H = xp.zeros((d, d), dtype=Xc.dtype)
        H, p, hist, nit, stop = _train(Xc, C, n, H, p, **train)
        nit_total += nit
        if stop == "nonfinite":
            success, status = False, int(Status.NONFINITE)
            message = (f"the loss became non-finite at step {nit}; lower lr "
                       "or standardize the data")
        elif stop == "callback":  # the shared contract: a stopped run is not a success
            success, (status, message) = False, STOPPED_BY_CALLBACK
        p_host = np.nan_to_num(np.asarray(to_host(p), dtype=float))
        H_host = np.nan_to_num(np.asarray(to_host(H), dtype=float))
        W_plain, order = _plain_graph(H_host, p_host, train["t_min"], train["eps"],
                                      _threshold(search["threshold"], "equal"))
        if noise == "nonequal":
            sd = np.sqrt(np.diag(C_host))
            W_plain = W_plain * sd[None, :] / sd[:, None]
        cand = _candidate(C_host, n, W_plain, order, p_host, hist, noise=noise, **search)
        if best is None or cand["score"] < best["score"]:
            best = cand
        if noise == "nonequal" and search["refine"]:
            # one more start: the equal-variance search on the standardized Gram matrix
            # (scale-free as well; its sparse graphs are good starts for the swaps)
            from .refine import refine_order

            C_std = np.asarray(to_host(C), dtype=np.float64)
            extra_orders = list(extra_orders) + [refine_order(
                None, order, gram=(C_std, n), noise_variance="equal",
                max_rounds=search["refine_rounds"],
                time_limit=search["refine_time_limit"])[0]]
        if stop:
            break
    for order in extra_orders:
        if not search["refine"]:
            break
        cand = _candidate(C_host, n, None, order, None, [], noise=noise, **search)
        if cand["score"] < best["score"]:
            cand.update(p=best["p"], W_cosmo=best["W_cosmo"], loss=best["loss"],
                        history=best["history"])
            best = cand
    return best, nit_total, (success, status, message)


def _is_host_numpy(xp):
    from .._lib.namespace import is_numpy_namespace

    return is_numpy_namespace(xp)


def _threshold(threshold, noise):
    """Default weight threshold: 0.3 for equal variances (raw units, as in the paper),
    none for non-equal ones (weights on standardized columns, BIC alone prunes)."""
    if threshold is not None:
        return threshold
    return 0.3 if noise == "equal" else 0.0


def _candidate(C, n, W_plain, order, p_host, hist, *, noise, refine, threshold,
               max_parents, refine_rounds, refine_time_limit, be):
    from . import refine as rf

    threshold = _threshold(threshold, noise)
    mp = rf._max_parents(max_parents, C.shape[0])
    fit_backend = "numba" if KERNELS.has("local_fit", be) else "numpy"
    if refine:
        order_r, W, score = rf.refine_order(
            None, order, threshold=threshold, max_parents=mp, max_rounds=refine_rounds,
            time_limit=refine_time_limit, backend=fit_backend, gram=(C, n),
            noise_variance=noise)
    else:
        W, order_r = W_plain, order
        score = model_bic(C, n, W, noise, variances=False)
    loss = hist[-1] if hist else float("nan")
    return {"W": W, "order": order_r, "score": score, "p": p_host, "W_cosmo": W_plain,
            "loss": loss, "history": hist}


_learn_cosmo = learn_cosmo
