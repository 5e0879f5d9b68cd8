r"""Simulated annealing for QUBOs: ``minimize_qubo``.

The objective ``f(x) = x^T Q x + c^T x + c_0`` is put in the form
``f(x) = c_0 + a^T x + x^T W x / 2`` (``W = Q + Q^T`` with zero diagonal,
``a = diag(Q) + c``). A read keeps the local field ``h = a + W x``; the energy change of
flipping bit ``i`` is ``(1 - 2 x_i) h_i`` (``O(1)``), and an accepted flip updates ``h``
with one row of ``W`` (``O(n)`` dense, ``O(deg i)`` sparse). Sweeps visit the bits in
order and accept a move with the Metropolis probability ``min(1, exp(-beta * delta))``;
``beta`` follows a schedule from hot to cold, one value per sweep.

Backends: ``"numba"`` (default for numpy input) runs the reads in parallel with
``prange``, each read with its own random stream (results do not depend on the number of
threads); ``"cupy"`` runs one GPU thread per read; the generic code (``"numpy"`` and any
other Array API namespace) updates all reads at once, bit by bit, and draws its uniforms on
the host, so it is identical on every namespace.
"""
import math

import numpy as np
import scipy.sparse as sps

from solvers._lib import (
    Draws, OptimizeResult, Progress, check_choice, check_int, check_positive, check_rng,
    is_numpy_namespace, resolve_backend,
)
from ._input import parse_qubo, to_binary

__all__ = ["minimize_qubo", "default_beta_range"]

SCHEDULES = ("geometric", "linear")


def _binary_parts(qb):
    """(a, W, c0) of the binary objective: dense W as numpy/xp, or CSR when sparse."""
    xp = qb.xp
    if qb.sparse:
        Q = qb.Q
        a = Q.diagonal().copy()
        if qb.c is not None:
            a = a + np.asarray(qb.c, dtype=np.float64)
        W = (Q + Q.T).tocsr()
        W = (W - sps.diags(W.diagonal())).tocsr()
        W.eliminate_zeros()
        return a, W, float(qb.offset)
    Q = qb.Q
    n = Q.shape[-1]
    d = xp.linalg.diagonal(Q)
    a = d if qb.c is None else d + qb.c
    W = (Q + xp.matrix_transpose(Q)) * (1.0 - xp.eye(n, dtype=Q.dtype))
    return a, W, float(qb.offset)


def default_beta_range(Q, c=None, *, vartype="binary"):
    r"""The default ``(beta_hot, beta_cold)`` of :func:`minimize_qubo`.

    With ``a`` and ``W`` the binary canonical form, the largest energy change a single
    flip can cause is bounded by ``D_max = max_i (|a_i| + sum_j |W_ij|)`` and a typical
    small one is ``D_min`` = the 1st percentile of the nonzero ``|a_i|``, ``|W_ij|``.
    ``beta_hot = ln 2 / D_max`` accepts every move at least half the time;
    ``beta_cold = ln 100 / D_min`` rejects almost all uphill moves.

    Parameters
    ----------
    Q : array_like, scipy.sparse matrix, dict or dimod.BinaryQuadraticModel
        The ``(n, n)`` matrix, as in :func:`minimize_qubo` (no stacks).
    c : array_like, optional
        Linear coefficients ``(n,)``.
    vartype : {"binary", "spin"}
        Domain of the variables; spin problems are first rewritten in binary variables.

    Returns
    -------
    tuple of float
        ``(beta_hot, beta_cold)``; ``(1.0, 1.0)`` when every coefficient is zero.

    Raises
    ------
    ValueError
        A non-square, stacked or non-finite ``Q``, ``c`` of the wrong shape or not finite,
        or an unknown ``vartype``.
    TypeError
        A dict key that is not a pair ``(i, j)``, or ``c`` given with a
        BinaryQuadraticModel.

    Notes
    -----
    For dense ``n > 2000`` the percentile is taken over a regular subsample of ``W``.
    Since ``D_min <= D_max``, ``beta_cold > beta_hot`` always.

    References
    ----------
    .. [1] S. Kirkpatrick, C. D. Gelatt, M. P. Vecchi, "Optimization by simulated
       annealing", Science 220 (1983).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.qubo.anneal import default_beta_range
    >>> hot, cold = default_beta_range(np.array([[1.0, -2.0], [0.0, 1.0]]))
    >>> round(hot, 4), round(cold, 4)
    (0.2310, 4.6052)
    """
    qb = to_binary(parse_qubo(Q, c, 0.0, vartype, allow_stack=False))
    a, W, _ = _binary_parts(qb)
    return _beta_range_from_parts(qb, a, W)


def _beta_range_from_parts(qb, a, W):
    if qb.sparse:
        absW = abs(W)
        rows = np.asarray(absW.sum(axis=1)).ravel()
        coefs = np.concatenate([np.abs(a), absW.data])
    else:
        xp = qb.xp
        rows = np.asarray(_host(xp, xp.sum(xp.abs(W), axis=-1)))
        a = np.asarray(_host(xp, a))
        size = W.shape[0] * W.shape[1]
        step = size // 4_000_000 + 1  # beyond n = 2000 a regular subsample is plenty
        flat = xp.reshape(W, (size,))[::step]
        coefs = np.concatenate([np.abs(a), np.abs(np.asarray(_host(xp, flat)))])
    dmax = float(np.max(np.abs(a) + rows)) if a.size else 0.0
    coefs = coefs[coefs > 0]
    if dmax <= 0 or coefs.size == 0:
        return 1.0, 1.0
    dmin = float(np.percentile(coefs, 1.0))
    return math.log(2.0) / dmax, math.log(100.0) / dmin


def _host(xp, x):
    if is_numpy_namespace(xp):
        return x
    if hasattr(x, "get"):
        return x.get()
    return np.asarray(x.tolist()) if hasattr(x, "tolist") else np.asarray(x)


def _schedule(beta_range, n_sweeps, kind):
    hot, cold = beta_range
    if n_sweeps == 1:
        return np.array([cold])
    if kind == "geometric":
        return np.geomspace(hot, cold, n_sweeps)
    return np.linspace(hot, cold, n_sweeps)


def _check_betas(beta_schedule, beta_range, n_sweeps, default):
    if beta_schedule is not None and not isinstance(beta_schedule, str):
        betas = np.asarray(beta_schedule, dtype=np.float64)
        if betas.ndim != 1 or betas.size == 0:
            raise ValueError("beta_schedule must be 'geometric', 'linear' or a 1-D sequence "
                             f"of inverse temperatures, got shape {betas.shape}")
        if not np.all(betas >= 0) or np.any(np.isnan(betas)):
            raise ValueError("beta_schedule values must be >= 0 (inf allowed: greedy sweeps)")
        return betas
    kind = check_choice("geometric" if beta_schedule is None else beta_schedule, SCHEDULES,
                        "beta_schedule")
    if beta_range is None:
        beta_range = default()
    else:
        if len(beta_range) != 2:
            raise ValueError(f"beta_range must be (beta_hot, beta_cold), got {beta_range!r}")
        beta_range = tuple(check_positive(b, "beta_range entries") for b in beta_range)
    return _schedule(beta_range, n_sweeps, kind)


def minimize_qubo(Q, c=None, offset=0.0, *, method="anneal", vartype="binary", n_reads=16,
                  n_sweeps=1000, beta_range=None, beta_schedule="geometric", x0=None,
                  polish=True, coupling_dtype=None, rng=None, backend="auto",
                  progress=False):
    r"""Minimize ``f(x) = x^T Q x + c^T x + offset`` over binary or spin vectors.

    Simulated annealing with ``O(1)`` energy deltas and ``O(n)`` (dense) or ``O(deg)``
    (sparse) field updates per accepted flip; ``n_reads`` independent reads run in parallel.

    Parameters
    ----------
    Q : array_like, scipy.sparse matrix, dict or dimod.BinaryQuadraticModel
        ``(n, n)`` matrix (not necessarily symmetric), a dict ``{(i, j): w}``, or a
        BinaryQuadraticModel (its vartype, linear biases and offset are used).
    c : array_like, optional
        Linear coefficients ``(n,)``.
    offset : float, optional
        Constant term, included in ``fun`` and ``energies``.
    method : {"anneal"}
        Only simulated annealing for now.
    vartype : {"binary", "spin"}
        Variables in ``{0, 1}`` or ``{-1, +1}``.
    n_reads : int
        Independent annealing runs (run in parallel).
    n_sweeps : int
        Sweeps per read (one sweep proposes a flip of every variable once, in order).
        Ignored when ``beta_schedule`` is an explicit sequence.
    beta_range : (float, float), optional
        ``(beta_hot, beta_cold)``; default from :func:`default_beta_range`.
    beta_schedule : {"geometric", "linear"} or array_like
        Interpolation from hot to cold, or the inverse temperature of every sweep
        (``inf`` gives greedy sweeps).
    x0 : array_like, optional
        Initial state, ``(n,)`` for all reads or ``(n_reads, n)``; random by default.
    polish : bool
        Finish every read with steepest descent to a 1-flip local minimum.
    coupling_dtype : {None, "float32", "float64"}
        Numba backend: precision of the couplings the annealing sweeps read (the fields
        are always accumulated in float64; the final descent and the energies use float64
        couplings). float32 halves the memory traffic of a flip, about 1.7x faster at
        n = 1000; the acceptance decisions then see deltas perturbed by ~1e-7 relative.
        Default: float32 for dense problems with n >= 256, float64 otherwise.
    rng : None, int or numpy.random.Generator
        Seeds the initial states and the per-read random streams.
    backend : {"auto", "numpy", "numba", "cupy"}
        ``"auto"``: Numba for numpy input, CuPy for cupy input, generic code otherwise.
    progress : bool
        Show a progress bar on stderr.

    Returns
    -------
    OptimizeResult
        ``x`` (best sample, int8), ``fun`` (its energy), ``samples`` (``(n_reads, n)``
        int8), ``energies`` (``(n_reads,)``), ``nfev`` (flip proposals), ``nit``
        (sweeps), ``beta_range``, ``success``, ``status``, ``message`` and ``variables``
        (labels, for dict or BinaryQuadraticModel input).

    Raises
    ------
    ValueError
        Bad ``Q`` (non-square, stacked, NaN or inf), ``c`` or ``offset`` of the wrong shape;
        an unknown ``method``, ``vartype``, ``coupling_dtype``, ``backend`` or
        ``beta_schedule`` name; a ``beta_schedule`` sequence that is not 1-d, empty or
        negative; a ``beta_range`` that is not two positive finite numbers; ``n_reads``
        or ``n_sweeps`` < 1; ``x0`` of the wrong shape or with entries outside the
        vartype's values; or ``backend="cupy"`` without a usable GPU.
    TypeError
        ``n_reads``, ``n_sweeps`` not integers, an invalid ``rng``, a dict key that is not
        a pair ``(i, j)``, or ``c`` given with a BinaryQuadraticModel.

    Notes
    -----
    Sparse input runs a CSR kernel when less than a quarter of ``Q`` is nonzero (Numba);
    the generic and CuPy paths use a dense ``W``. Energies are recomputed from the final
    samples, so floating-point drift of the incremental fields never reaches ``fun``.

    References
    ----------
    .. [1] S. Kirkpatrick, C. D. Gelatt, M. P. Vecchi, "Optimization by simulated
       annealing", Science 220 (1983).
    .. [2] S. V. Isakov, I. N. Zintchenko, T. F. Ronnow, M. Troyer, "Optimised simulated
       annealing for Ising spin glasses", Comput. Phys. Commun. 192 (2015).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import minimize_qubo
    >>> Q = np.array([[-1.0, 2.0, 0.0], [0.0, -1.0, 2.0], [0.0, 0.0, -1.0]])
    >>> res = minimize_qubo(Q, n_reads=4, n_sweeps=50, rng=0)
    >>> res.x.tolist(), res.fun
    ([1, 0, 1], -2.0)
    """
    check_choice(method, ("anneal",), "method")
    if coupling_dtype is not None:
        check_choice(coupling_dtype, ("float32", "float64"), "coupling_dtype")
    n_reads = check_int(n_reads, "n_reads", minimum=1)
    n_sweeps = check_int(n_sweeps, "n_sweeps", minimum=1)
    q = parse_qubo(Q, c, offset, vartype, allow_stack=False)
    qb = to_binary(q)
    xp = q.xp
    be = resolve_backend(backend, xp)
    a, W, c0 = _binary_parts(qb)
    n = qb.n
    betas = _check_betas(beta_schedule, beta_range, n_sweeps,
                         lambda: _beta_range_from_parts(qb, a, W))
    gen = check_rng(rng)
    X0 = _initial_states(x0, n_reads, n, q.vartype, gen)
    seeds = gen.integers(1, 2**63, size=n_reads, dtype=np.uint64)

    if be.name == "numba":
        single = (n >= 256) if coupling_dtype is None else coupling_dtype == "float32"
        X, energies = _run_numba(a, W, c0, betas, X0, seeds, polish, progress, single)
    elif be.name == "cupy":
        from ._anneal_cupy import run_cupy

        Wd = W.toarray() if sps.issparse(W) else W
        X, energies = run_cupy(be, a, Wd, c0, betas, X0, seeds, polish, progress)
    else:
        Wd = W.toarray() if sps.issparse(W) else W
        X, energies = _run_generic(be.xp, a, Wd, c0, betas, X0, gen, polish, progress)

    out_xp = be.input_xp if not q.sparse else np
    best = int(np.argmin(_host(out_xp, energies)))
    if q.vartype == "spin":
        X = 2 * X - 1
    res = OptimizeResult(
        x=X[best, ...], fun=float(energies[best]), samples=X, energies=energies,
        nfev=int(n_reads * betas.shape[0] * n), nit=int(betas.shape[0]),
        beta_range=(float(betas[0]), float(betas[-1])), success=True, status=0,
        message="annealing finished", backend=be.name)
    if q.variables is not None:
        res["variables"] = q.variables
    return res


def _initial_states(x0, n_reads, n, vartype, gen):
    if x0 is None:
        return gen.integers(0, 2, size=(n_reads, n)).astype(np.int8)
    x0 = np.asarray(_host_any(x0))
    if x0.ndim == 1:
        x0 = np.broadcast_to(x0, (n_reads, x0.shape[0]))
    if x0.shape != (n_reads, n):
        raise ValueError(f"x0 must have shape ({n},) or ({n_reads}, {n}), got {x0.shape}")
    allowed = (-1, 1) if vartype == "spin" else (0, 1)
    if not np.all(np.isin(x0, allowed)):
        raise ValueError(f"x0 entries must be in {{{allowed[0]}, {allowed[1]}}} for "
                         f"vartype={vartype!r}")
    X0 = (x0 + 1) // 2 if vartype == "spin" else x0
    return np.ascontiguousarray(X0, dtype=np.int8)


def _host_any(x):
    if hasattr(x, "get"):
        return x.get()
    if hasattr(x, "__array_namespace__") and not isinstance(x, np.ndarray):
        return np.asarray(x.tolist())
    return x


def _chunks(total, progress):
    """Split the sweeps into pieces so a progress bar can advance (one piece otherwise)."""
    if not progress:
        return [(0, total)]
    step = max(1, total // 50)
    return [(s, min(s + step, total)) for s in range(0, total, step)]


def _energies_numpy(a, W, c0, X):
    Xf = X.astype(np.float64)
    WX = (W @ Xf.T).T if sps.issparse(W) else Xf @ W
    return c0 + Xf @ a + 0.5 * np.sum(Xf * WX, axis=1)


def _run_numba(a, W, c0, betas, X0, seeds, polish, progress, single):
    from . import _anneal_numba as kernels

    a = np.ascontiguousarray(a, dtype=np.float64)
    X = X0.copy()
    states = seeds.copy()
    dense = not sps.issparse(W) or W.nnz > 0.25 * W.shape[0] ** 2
    single = single and dense
    if dense:
        Wd = np.ascontiguousarray(W.toarray() if sps.issparse(W) else W, dtype=np.float64)
        Wk = Wd.astype(np.float32) if single else Wd  # half the memory traffic per flip
        H = a + X.astype(np.float64) @ Wd
    else:
        Wc = sps.csr_matrix(W, dtype=np.float64)
        H = a + (Wc @ X.T.astype(np.float64)).T
    H = np.ascontiguousarray(H)
    pieces = _chunks(betas.shape[0], progress)
    with Progress(betas.shape[0], "anneal", enabled=progress) as bar:
        for k, (lo, hi) in enumerate(pieces):
            last = polish and k == len(pieces) - 1 and not single
            if dense:
                kernels.anneal_dense(Wk, X, H, betas[lo:hi], states, last)
            else:
                kernels.anneal_csr(Wc.indptr, Wc.indices, Wc.data, X, H, betas[lo:hi],
                                   states, last)
            bar.update(hi - lo)
    if polish and single:  # exact fields, then the descent in float64
        H = np.ascontiguousarray(a + X.astype(np.float64) @ Wd)
        kernels.anneal_dense(Wd, X, H, betas[:0], states, True)
    return X, _energies_numpy(a, Wd if dense else Wc, c0, X)


def _run_generic(xp, a, W, c0, betas, X0, gen, polish, progress):
    """All reads at once, bit by bit, in any Array API namespace (the reference path)."""
    dtype = W.dtype
    n_reads, n = X0.shape
    X = xp.asarray(X0.astype(np.float64 if dtype == xp.float64 else np.float32))
    H = a + xp.matmul(X, W)
    draws = Draws(gen, xp)
    zero = xp.asarray(0.0, dtype=dtype)
    with Progress(betas.shape[0], "anneal", enabled=progress) as bar:
        for t in range(betas.shape[0]):
            beta = float(betas[t])
            U = draws.uniform(0.0, 1.0, (n_reads, n), dtype=dtype)
            for i in range(n):
                xi = X[:, i]
                step = 1.0 - 2.0 * xi
                d = step * H[:, i]
                if math.isinf(beta):
                    accept = d <= 0.0
                else:
                    accept = (d <= 0.0) | (U[:, i] < xp.exp(xp.minimum(-beta * d, zero)))
                move = xp.where(accept, step, zero)
                X[:, i] = xi + move
                H = H + move[:, None] * W[i, :][None, :]
            bar.update(1)
    if polish:
        X, H = _descend_generic(xp, W, X, H, zero)
    energies = c0 + xp.sum(X * a, axis=1) + 0.5 * xp.sum(X * xp.matmul(X, W), axis=1)
    return xp.astype(X, xp.int8), energies


def _descend_generic(xp, W, X, H, zero):
    n = X.shape[1]
    for _ in range(10 * n + 10):
        D = (1.0 - 2.0 * X) * H
        best = xp.min(D, axis=1)
        if not bool(xp.any(best < 0.0)):
            break
        arg = xp.argmin(D, axis=1)
        onehot = xp.astype(xp.arange(n)[None, :] == arg[:, None], X.dtype)
        move = xp.where(best < 0.0, xp.sum(onehot * (1.0 - 2.0 * X), axis=1), zero)
        X = X + move[:, None] * onehot
        H = H + move[:, None] * xp.matmul(onehot, W)
    return X, H


def _minimize_anneal(fun, x0, *, c=None, offset=0.0, vartype="binary", n_reads=16,
                     n_sweeps=1000, beta_range=None, beta_schedule="geometric", polish=True,
                     coupling_dtype=None, rng=None, backend="auto", progress=False):
    """Adapter for ``solvers.minimize(fun, x0, method="anneal", **options)``.

    ``fun`` is the QUBO: a matrix, a dict, a BinaryQuadraticModel, or a pair ``(Q, c)``;
    ``x0`` (optional) is the initial state of every read. The options are those of
    :func:`minimize_qubo`.
    """
    if isinstance(fun, tuple):
        if len(fun) != 2 or c is not None:
            raise TypeError("fun must be Q or a pair (Q, c) for method 'anneal'")
        fun, c = fun
    if callable(fun) and not hasattr(fun, "shape") and not isinstance(fun, dict):
        raise TypeError("method 'anneal' minimizes a QUBO: pass the matrix Q (or (Q, c), a "
                        "dict, or a BinaryQuadraticModel) as fun, not a Python function")
    return minimize_qubo(fun, c, offset, vartype=vartype, n_reads=n_reads, n_sweeps=n_sweeps,
                         beta_range=beta_range, beta_schedule=beta_schedule, x0=x0,
                         polish=polish, coupling_dtype=coupling_dtype, rng=rng,
                         backend=backend, progress=progress)


def _register():
    from solvers.optimize._minimize import register_method

    register_method("anneal", _minimize_anneal, takes_x0=False)


_register()
