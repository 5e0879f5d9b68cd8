r"""Consensus-based optimization (CBO): a derivative-free global minimizer.

``N`` particles :math:`X_i \in \mathbb{R}^d` move toward a Gibbs-weighted consensus point
and explore with noise scaled by their distance to it. One Euler--Maruyama step is

.. math::

   w_i = \frac{e^{-\alpha f(X_i)}}{\sum_j e^{-\alpha f(X_j)}}, \qquad
   c = \sum_i w_i X_i, \qquad
   X_i \leftarrow X_i - \lambda\,\Delta t\,(X_i - c) + \sigma \sqrt{\Delta t}\; \eta_i,

with the noise :math:`\eta_i = \operatorname{diag}(X_i - c)\,\xi_i` (anisotropic),
:math:`\lVert X_i - c \rVert_2\,\xi_i` (isotropic), :math:`\xi_i \sim N(0, I_d)`, or
(covariance noise, consensus-based sampling style) :math:`\eta_i = \sum_j \sqrt{w_j}\,
(X_j - c)\,\zeta_{ij}`, :math:`\zeta_i \sim N(0, I_N)`: a draw from
:math:`N(0, \Sigma_w)` with :math:`\Sigma_w = \sum_j w_j (X_j - c)(X_j - c)^\top` the
Gibbs-weighted covariance around the consensus. Its square root is the weighted deviation
matrix itself (a rank-``N`` factor, no Cholesky), so for ``x = A y + b`` the particles of
the mapped problem are exactly the mapped particles, draw for draw: the dynamics are affine
invariant, as CMA-ES is.

The module is split by layer, as SciPy's ``_differentialevolution.py`` is: this file holds
the public functions; :mod:`._cbo_config` validates the options into a frozen
configuration; :mod:`._cbo_solver` is the solver class (starts, steps, stopping rules,
restarts) written against the Array API (``xp``), with :mod:`._cbo_refine` (the refinement
of each start's answer) and :mod:`._cbo_result` (the status table); the hot inner
operations come from the kernel table :mod:`._cbo_kernels` (Numba on numpy input, CuPy on
cupy input, the generic twins of :mod:`._cbo_generic` otherwise, which are the reference
the kernels are tested against); :mod:`._cbo_runs` maps independent runs over workers.
"""
import math

from .._lib.backend import resolve_backend
from .._lib.namespace import array_namespace
from .._lib.rng import Draws
from ._cbo_config import CONSENSUS_OPTIONS, OPTIONS, configure, prepare
from ._cbo_kernels import KERNELS
from ._cbo_runs import map_runs
from ._cbo_solver import CBOSolver
from .._lib.docstrings import fill_doc

__all__ = ["minimize_cbo", "consensus"]

#: a docstring block shared by several functions of this module (fill_doc)
_REFERENCES = """
References
----------
.. [1] R. Pinnau, C. Totzeck, O. Tse, S. Martin, "A consensus-based model for global
   optimization and its mean-field limit", Math. Models Methods Appl. Sci. 27 (2017).
.. [2] J. A. Carrillo, S. Jin, L. Li, Y. Zhu, "A consensus-based global optimization
   method for high dimensional machine learning problems", ESAIM: COCV 27 (2021).
"""



@fill_doc(references=_REFERENCES)
def consensus(x, energies, alpha, *, backend="auto"):
    r"""Consensus point :math:`c = \sum_i w_i x_i`, :math:`w = \mathrm{softmax}(-\alpha f)`.

    The weights are computed after shifting by the smallest energy, so any spread of
    ``alpha * energies`` (1e6, 1e300) is safe, and adding a constant to the energies
    changes nothing. Non-finite energies (NaN, +-inf) give weight zero; if no energy of a
    set is finite, the consensus is the plain mean.

    Parameters
    ----------
    x : array, shape (N, d) or (M, N, d)
        Particles (``M`` independent sets).
    energies : array, shape (N,) or (M, N)
        Objective values of the particles.
    alpha : float
        Inverse temperature, ``0 <= alpha < inf``.
    backend : {"auto", "numpy", "numba", "cupy"}, optional
        ``"auto"`` runs the Numba kernel on numpy input and generic code otherwise.

    Returns
    -------
    c : array, shape (d,) or (M, d)
        The consensus point(s), in the namespace of ``x``.

    Raises
    ------
    ValueError
        ``x`` not 2-d or 3-d, ``energies`` not matching ``x.shape[:-1]``, non-finite
        particles, a negative, NaN or infinite ``alpha``, or an unknown ``backend`` (or
        ``"cupy"`` without a usable GPU).
    TypeError
        Complex or non-numeric ``x`` or ``energies``, or a non-real ``alpha``.

    {{references}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.optimize.cbo import consensus
    >>> x = np.array([[0.0, 0.0], [1.0, 2.0]])
    >>> consensus(x, np.array([1.0, 0.0]), alpha=0.0).tolist()
    [0.5, 1.0]
    >>> consensus(x, np.array([1.0, 0.0]), alpha=1e9).tolist()
    [1.0, 2.0]
    """
    cfg = CONSENSUS_OPTIONS.validate(alpha=alpha, backend=backend)
    be = resolve_backend(cfg.backend, array_namespace(x, energies))
    x, energies = CONSENSUS_OPTIONS.arrays(be, x=x, energies=energies)
    energies = be.xp.astype(energies, x.dtype)
    single = x.ndim == 2
    if single:
        x, energies = x[None, ...], energies[None, ...]
    if tuple(energies.shape) != tuple(x.shape[:2]):
        raise ValueError(f"energies must have shape {tuple(x.shape[:2])} to match x, "
                         f"got {tuple(energies.shape)}")
    C = KERNELS.get("consensus", be, size=math.prod(x.shape))(x, energies, cfg.alpha, be.xp)
    if single:
        C = C[0, ...]
    return be.to_input(C)


@fill_doc(references=_REFERENCES)
@OPTIONS.entry
def minimize_cbo(fun, bounds=None, x0=None, *, args=(), n_particles=20, maxiter=None,
                 alpha=30.0, alpha_growth=1.05, alpha_max=None, ess=None, sigma=None,
                 lam=None, dt=None, noise="mixed", batch_size=None, memory=False,
                 n_runs=1, independent_runs=False, x0_spread=None, maxfev=None, xtol=None,
                 ftol=1e-10, f_target=None, restarts="ipop", spend_budget=False,
                 popsize_factor=2.0, polish=True, polish_share=0.1, vectorized=False,
                 workers=1, rng=None, callback=None, backend="auto", progress=False):
    r"""Minimize a function with consensus-based optimization (CBO), restarts and refinement.

    Particles start uniformly in ``bounds`` (or around ``x0``) and follow

    .. math::

       X_i \leftarrow X_i - \lambda\,\Delta t\,(X_i - c_\alpha)
                     + \sigma\sqrt{\Delta t}\,\eta_i,\qquad
       c_\alpha = \sum_i \frac{e^{-\alpha f(X_i)}}{\sum_j e^{-\alpha f(X_j)}}\,X_i,

    with the noise :math:`\eta_i` of :mod:`solvers.optimize.cbo` (anisotropic,
    isotropic or Gibbs-weighted covariance). The noise is scaled by
    :math:`\sigma\sqrt{\Delta t}` (CBXpy's convention; ConsensusBasedX.jl uses
    :math:`\sqrt{2\Delta t}`). For the diagonal noises ``alpha`` grows by ``alpha_growth``
    per step up to ``alpha_max``; covariance noise sets alpha per step so that the
    effective sample size :math:`1/\sum w_i^2` is ``ess * N`` (0.5 N by default) and
    scales its draws by a step size adapted from the length of the consensus moves
    (CMA-ES's step-size rule; :mod:`solvers.optimize._cbo_solver`).

    **Stopping rules.** A *start* (one swarm) ends when the first of these holds:

    * ``xtol``: every particle is within ``xtol`` (sup-norm) of the consensus (default:
      1e-5 of the widest side of the start box);
    * ``ftol``: the particles' values differ by at most ``ftol * (1 + |f_min|)``;
    * stagnation: no run's best improved (by more than 1e-12 relative) for
      :math:`k(10 + \lceil 30 d / N \rceil)` steps (``k = 3`` for covariance noise, 10 for
      the diagonal noises, whose best often stalls before it hops to a better basin);
    * with ``noise="mixed"``, the first start also ends after 2.5 % of ``maxfev``;
    * a diagonal-noise start whose best lies above the best answer so far ends once, at
      the pace its best fell over the last stagnation window, the evaluations left to the
      run would not bring it down to that answer (with ``maxfev``).

    Its best point is then refined until the refinement converges (``polish``): a local
    covariance run (:mod:`solvers.optimize._cbo_local`, CMA-ES's updates with Gibbs
    weights) started with the swarm's shape, which goes on while it improves. With
    restarts, the next start follows (IPOP: ``popsize_factor`` times the particles of the
    previous start of the same noise); right after the first start comes a *probe*, a
    local covariance run from a new uniform point. The run ends when the starts have
    found at most two basins and the best of them twice (two answers share a basin when
    their values agree within ``max(ftol, 1e-6) * (1 + |f|)``, or 1e-4 for the first
    start's answer, whose refinement pauses sooner, and their points within 1e-3 of the
    start box; a probe ends as soon as it reaches the best answer's basin): a
    unimodal problem ends after the probe, a multimodal one keeps searching. ``maxfev`` and
    ``maxiter`` are caps, not targets; pass ``spend_budget=True`` to keep restarting until
    ``maxfev`` is spent (for a multimodal problem whose good basins are rare, where two
    starts may find the same local minimum). ``f_target`` ends the run as soon as it is
    reached. ``noise="mixed"`` (the default) alternates covariance starts (affine
    invariant: rotated, ill-conditioned valleys) and anisotropic starts (separable and
    Rastrigin-like landscapes); a noise whose last start found no better value (by more
    than 1e-6 relative) gives its turn to the other while the other's last start did.
    Every evaluated point lies in ``bounds`` (particles leaving
    the box are reflected back, see :mod:`solvers.optimize._cbo_bounds`).

    **Status.** One status per end, whatever ``restarts`` says:

    ==============  =========  ====================================================
    ``status``      success    end
    ==============  =========  ====================================================
    0 (converged)   True       the last two starts agreed (with restarts), or the
                               one start's rule fired (``restarts=False``)
    3 (target)      True       a value ``<= f_target`` was found
    2 (maxfev)      False      the next step would exceed ``maxfev``
    1 (maxiter)     False      ``maxiter`` steps were made
    99 (callback)   False      the callback raised ``StopIteration``
    4 (non-finite)  False      no finite value was found, or the particles diverged
    ==============  =========  ====================================================

    The message names the rule and the evaluations used. With ``spend_budget=True`` the
    normal end is status 2 (``success=False``: no stopping rule was waited for).

    Parameters
    ----------
    fun : callable
        ``fun(x, *args) -> float`` for ``x`` of shape ``(d,)``; with ``vectorized=True``,
        ``x`` has shape ``(d, S)`` and the result shape ``(S,)`` (SciPy's contract), in the
        namespace of the computation. NaN or infinite values count as the worst particle
        (``n_nonfinite`` reports how many); anything but a real number is a TypeError.
    bounds : scipy.optimize.Bounds or sequence of (low, high) pairs, optional
        Hard box constraints and the start box. Scalar ``Bounds`` broadcast to ``x0``'s
        dimension; open sides are allowed only with ``x0``; ``keep_feasible`` is always
        honoured (every point is feasible). Needed unless ``x0`` is given.
    x0 : array_like, shape (d,), optional
        Start: particle 0 of the first start is ``x0``, the others uniform in
        ``x0 +- x0_spread`` (restarts too). Must lie in ``bounds``.
    args : tuple, optional
        Extra arguments passed to ``fun``.
    n_particles : int, optional
        Particles per run in the first start, ``N >= 2`` (covariance starts use at least
        ``6 d``).
    maxiter : int, optional
        Cap on the steps over all starts (default: none; ``maxfev`` caps the run).
    alpha, alpha_growth, alpha_max : float, optional
        Initial inverse temperature, its growth per step and its cap (default: 1e5 for
        the growth schedule; the ``ess`` schedule is not capped).
    ess : float in (0, 1], optional
        Set alpha per run and step by bisection so that the effective sample size is
        ``ess * N`` (default for covariance noise: 0.5; diagonal noises: the schedule).
    sigma, lam, dt : float, optional
        Noise strength, drift strength, time step. ``None`` picks the per-noise default:
        (10.5, 0.4, 0.01) for the diagonal noises, (1, 1, 1) for covariance noise.
    noise : {"mixed", "anisotropic", "isotropic", "covariance"}, optional
        The noise of every start, or ``"mixed"``: covariance and anisotropic alternately,
        a noise whose last start gained nothing giving its turn to one whose last did.
    batch_size : int, optional
        Random mini-batch consensus over ``batch_size`` particles per step.
    memory : bool, optional
        Each particle keeps its personal best; the consensus is taken over those.
    n_runs : int, optional
        Independent runs batched in one ``(M, N, d)`` array (one objective call per step
        with ``vectorized=True``); a restart happens when every run's start has ended, and
        the batched runs go on until ``maxfev`` (only the best run's answer is refined).
    independent_runs : bool, optional
        Run the ``n_runs`` runs one by one instead, each a full run (restarts and
        refinement, its share of ``maxfev``) with a generator spawned from ``rng``, mapped
        over ``workers`` (``callback`` is then not supported).
    x0_spread : float or array_like, optional
        Half-width of the start box around ``x0``; default a quarter of the bounds' width,
        or 1 without finite bounds.
    maxfev : int, optional
        Cap on the point evaluations over all runs, restarts and refinements; never
        exceeded. Default ``n_runs * 20 * max(4000, 200 d)`` unless ``maxiter`` is given.
    xtol : float, optional
        Absolute spread (sup-norm) at which a start has collapsed; default 1e-5 of the
        start box's widest side. ``0`` turns the rule off.
    ftol : float, optional
        Tolerance on values: a start whose particles' values agree within
        ``ftol * (1 + |f|)`` has converged; two starts' answers share a basin when their
        values agree within ``max(ftol, 1e-6) * (1 + |f|)`` (1e-4 for the first start's
        answer; and their points lie close).
        ``0`` turns the first rule off.
    f_target : float, optional
        Stop as soon as a value ``<= f_target`` has been found (finite).
    restarts : {"ipop", False}, optional
        IPOP restarts (the default) or a single start.
    spend_budget : bool, optional
        Keep restarting until ``maxfev`` (or ``maxiter``) is spent, even after two starts
        agreed.
    popsize_factor : float, optional
        Population growth per restart of the same noise (>= 1).
    polish : bool or {"L-BFGS-B", "Powell", "Nelder-Mead"}, optional
        Refinement of each start's best point: ``True`` the local covariance run (and the
        probe restart), a name that SciPy method (within ``bounds``), ``False`` none.
    polish_share : float in [0, 1), optional
        Share of one run's budget (``maxfev / n_runs``) the starts leave for refining the
        last start's answer when ``maxfev`` ends the run.
    vectorized : bool, optional
        ``fun`` takes the whole population at once.
    workers : int or map-like callable, optional
        ``1``: serial; an int > 1 (-1: all cores): a process pool (fork start method where
        available); any ``map``-like callable (``Executor.map``, dask ``Client.map``).
        ``workers`` evaluates the points of each step, or, with ``independent_runs``, maps
        the runs. It never changes the result: serial, a pool and a dask cluster give the
        identical ``OptimizeResult`` for the same ``rng``.
    rng : None, int or numpy.random.Generator, optional
        Source of all random draws.
    callback : callable, optional
        ``callback(intermediate_result)`` after every step (fields ``x``, ``fun``, ``nit``,
        ``nfev``, ``n_restarts``, ``consensus``, ``population``, ``alpha``); raising
        ``StopIteration`` stops the run (``success=False``, status 99).
    backend : {"auto", "numpy", "numba", "cupy"}, optional
        Which kernels run (:mod:`solvers.optimize._cbo_kernels`).
    progress : bool, optional
        Show a progress bar on stderr; its total is ``maxfev``, refinements included.

    Returns
    -------
    res : OptimizeResult
        ``x``, ``fun`` (best point evaluated), ``nfev`` (point evaluations), ``nit``
        (steps over all starts), ``n_restarts``, ``success``, ``status``, ``message``,
        ``population`` / ``population_energies`` / ``consensus`` (last swarm step),
        ``x_runs`` / ``fun_runs`` (best of each run), ``n_nonfinite``, ``alpha``.

    Raises
    ------
    ValueError
        Missing or malformed ``bounds``/``x0`` (shape, NaN, low >= high, ``x0`` outside the
        bounds), invalid option values (a non-finite ``f_target`` among them), ``workers``
        with ``vectorized=True``, ``maxfev`` below one step, or a vectorized ``fun``
        returning the wrong shape.
    TypeError
        ``fun`` not callable or not returning a real scalar (real values of shape (S,)
        with ``vectorized=True``), or options of the wrong type.

    See Also
    --------
    solvers.minimize : the router (``method="cbo"``).
    scipy.optimize.differential_evolution, scipy.optimize.dual_annealing

    {{references}}
    .. [3] J. A. Carrillo, F. Hoffmann, A. M. Stuart, U. Vaes, "Consensus-based sampling",
       Stud. Appl. Math. 148 (2022) (the covariance noise).
    .. [4] A. Auger, N. Hansen, "A restart CMA evolution strategy with increasing
       population size", CEC 2005 (IPOP restarts).
    .. [5] N. Hansen, "The CMA evolution strategy: a tutorial", arXiv:1604.00772 (2016)
       (the step-size rule, the local covariance run and the stopping rules).
    .. [6] R. Bailo et al., "CBX: Python and Julia packages for consensus-based interacting
       particle methods", J. Open Source Softw. 9 (2024) (CBXpy's noise convention).

    Examples
    --------
    >>> import numpy as np
    >>> from solvers import minimize_cbo
    >>> def rastrigin(x):
    ...     return 10 * x.shape[0] + np.sum(x**2 - 10 * np.cos(2 * np.pi * x), axis=0)
    >>> res = minimize_cbo(rastrigin, bounds=[(-3, 3)] * 5, vectorized=True, rng=0,
    ...                    maxfev=50_000)
    >>> bool(np.max(np.abs(res.x)) < 1e-6), res.nfev <= 50_000
    (True, True)
    """
    cfg = OPTIONS.validate(
        fun=fun, args=args, n_particles=n_particles, maxiter=maxiter, alpha=alpha,
        alpha_growth=alpha_growth, alpha_max=alpha_max, ess=ess, sigma=sigma, lam=lam,
        dt=dt, noise=noise, batch_size=batch_size, memory=memory, n_runs=n_runs,
        independent_runs=independent_runs, x0_spread=x0_spread, maxfev=maxfev, xtol=xtol,
        ftol=ftol, f_target=f_target, restarts=restarts, spend_budget=spend_budget,
        popsize_factor=popsize_factor, polish=polish, polish_share=polish_share,
        vectorized=vectorized, workers=workers, rng=rng, callback=callback,
        backend=backend, progress=progress)
    problem = prepare(bounds, x0, cfg.x0_spread, cfg.backend)
    cfg = configure(cfg, problem.d)
    if cfg.independent_runs and cfg.n_runs > 1:
        return map_runs(cfg, bounds, x0)
    return CBOSolver(cfg, problem, Draws(cfg.rng, problem.be.xp)).solve()
