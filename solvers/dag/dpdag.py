r"""DP-DAG: a differentiable probabilistic model over DAGs, and VI-DP-DAG.

A DAG sample is

.. math:: A = E \odot (P^\top U P),

with :math:`P` a permutation matrix (``P[k, i] = 1`` when node ``i`` is at position ``k``),
:math:`U` the strictly upper-triangular matrix of ones and :math:`E` independent edge
indicators, :math:`E_{ij} \sim \operatorname{Bernoulli}(\sigma(\phi_{ij}))`. Since
:math:`(P^\top U P)_{ij} = [\mathrm{pos}(i) < \mathrm{pos}(j)]`, every sample is acyclic
by construction. The order is drawn by Gumbel-Top-k (a Plackett-Luce model with
log-weights :math:`\theta \in \mathbb{R}^d`, relaxed by SoftSort) or by Gumbel-Sinkhorn
(position-by-item scores :math:`\Theta \in \mathbb{R}^{d \times d}`, Hungarian rounding).

Under Plackett-Luce the probabilities are exact and cheap:

.. math::

   p(\pi) = \prod_{k} \frac{e^{\theta_{\pi_k}}}{\sum_{m \ge k} e^{\theta_{\pi_m}}}, \qquad
   P(i \text{ before } j) = \sigma(\theta_i - \theta_j), \qquad
   P(A_{ij} = 1) = \sigma(\theta_i - \theta_j)\,\sigma(\phi_{ij}),

and :math:`p(A) = \sum_{\pi \text{ consistent with } A} p(\pi) \prod_{\mathrm{pos}(i) <
\mathrm{pos}(j)} q_{ij}^{A_{ij}} (1 - q_{ij})^{1 - A_{ij}}` (enumerated for small ``d``).

VI-DP-DAG (:func:`_learn_dpdag`, reached through ``learn_dag(X, method="dpdag")``) fits
:math:`q(\pi) q(E)` and linear mechanisms :math:`W` by maximising

.. math:: \mathbb{E}_q\big[\log \mathcal{N}(X \mid X (A \odot W), \sigma^2)\big]
          - \mathrm{KL}\big(q(E) \,\|\, \operatorname{Bernoulli}(p_0)\big),

with the proper Bernoulli KL :math:`\sum_{i \ne j} q_{ij}\log\frac{q_{ij}}{p_0} + (1 -
q_{ij})\log\frac{1 - q_{ij}}{1 - p_0}` (the released code treats logits as
log-probabilities in this term, which pushes graphs dense). Gradients use the
straight-through estimators of :mod:`.permutations` and of the Gumbel-sigmoid edges, with
every backward pass written by hand.

References
----------
.. [1] Charpentier, B., Kibler, S. and Günnemann, S. "Differentiable DAG sampling."
   ICLR 2022.
.. [2] Prillo, S. and Eisenschlos, J. "SoftSort." ICML 2020.
.. [3] Mena, G. et al. "Learning latent permutations with Gumbel-Sinkhorn networks."
   ICLR 2018.
"""
import itertools
import math

import numpy as np

from .._lib.namespace import array_namespace
from .._lib.backend import resolve_backend
from .._lib.rng import Draws, check_rng
from .._lib.validation import (as_float_array, check_finite, check_positive, check_int,
                               check_choice)
from ..lse import logsumexp
from .._lib.host import to_host
from ._dag_kernels import KERNELS
from .permutations import (_onehot, hungarian)
from .._lib.docstrings import fill_doc, fill_doc_members
from ._docs import DOCS


#: docstring blocks shared by this module's functions (filled by fill_doc)
_DOCS = dict(DOCS)
_DOCS["references_1"] = """
References
----------
.. [1] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
   ICLR 2022.
.. [2] S. Prillo, J. Eisenschlos, "SoftSort: a continuous relaxation for the argsort
   operator", ICML 2020.
.. [3] G. Mena, D. Belanger, S. Linderman, J. Snoek, "Learning latent permutations
   with Gumbel-Sinkhorn networks", ICLR 2018.
"""
_DOCS["references_2"] = """
References
----------
.. [1] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
   ICLR 2022.
.. [2] R. L. Plackett, "The analysis of permutations", Journal of the Royal
   Statistical Society C 24(2):193-202, 1975.
"""
_DOCS["references_3"] = """
References
----------
.. [1] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
   ICLR 2022.
"""

__all__ = ["DPDAG", "sample_dags", "exact_edge_posterior"]

_ORDER_METHODS = ("softsort", "sinkhorn")


def _sigmoid(x, xp):
    # stable for large |x|: exp of a non-positive number only
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _log_sigmoid(x, xp):
    return xp.minimum(x, xp.zeros_like(x)) - xp.log1p(xp.exp(-xp.abs(x)))


def _offdiag(d, xp, dtype):
    return 1.0 - xp.eye(d, dtype=dtype)


class DPDAG:
    r"""A DP-DAG distribution over DAGs on ``d`` nodes.

    Parameters
    ----------
    order_logits : array, shape (d,) or (d, d)
        Plackett-Luce log-weights :math:`\theta` (``order="softsort"``; larger comes
        first) or position-by-item Gumbel-Sinkhorn scores :math:`\Theta`
        (``order="sinkhorn"``).
    edge_logits : array, shape (d, d)
        :math:`\phi`; edge ``i -> j`` is present with probability
        :math:`\sigma(\phi_{ij})` when ``i`` precedes ``j``. The diagonal is ignored.
    order : {"softsort", "sinkhorn"}
        Order sampler.
    tau : float
        Temperature of the order relaxation (used by gradients only; hard samples do not
        depend on it).
    n_iter : int
        Sinkhorn normalisation pairs.

    Attributes
    ----------
    d : int
    edge_probs : array, shape (d, d)
        :math:`\sigma(\phi)` with a zero diagonal.
    order : str
        The order sampler.
    order_logits, edge_logits : array
        The parameters, finite, cast to a common floating dtype.
    tau : float
    n_iter : int

    Raises
    ------
    ValueError
        Unknown ``order``; non-finite logits; ``edge_logits`` not a square matrix;
        ``order_logits`` not of shape ``(d,)`` (softsort) or ``(d, d)`` (sinkhorn);
        ``tau <= 0`` or ``n_iter < 1``.
    TypeError
        Non-numeric or complex logits, a non-real ``tau`` or a non-integer ``n_iter``.

    {{references_1}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.dpdag import DPDAG
    >>> model = DPDAG(np.array([2.0, 0.0, -2.0]), np.zeros((3, 3)))
    >>> A = model.sample_dags(1000, rng=0)
    >>> A.shape, A.dtype
    ((1000, 3, 3), dtype('bool'))
    >>> model.edge_marginals().round(3)
    array([[0.   , 0.44 , 0.491],
           [0.06 , 0.   , 0.44 ],
           [0.009, 0.06 , 0.   ]])
    """

    def __init__(self, order_logits, edge_logits, *, order="softsort", tau=1.0, n_iter=20):
        check_choice(order, _ORDER_METHODS, "order")
        xp = array_namespace(order_logits, edge_logits)
        theta = check_finite(as_float_array(order_logits, xp, "order_logits"), xp,
                             "order_logits")
        phi = check_finite(as_float_array(edge_logits, xp, "edge_logits", ndim=2), xp,
                           "edge_logits")
        d = phi.shape[0]
        if phi.shape != (d, d):
            raise ValueError(f"edge_logits must be square (d, d), got {tuple(phi.shape)}")
        want = (d,) if order == "softsort" else (d, d)
        if tuple(theta.shape) != want:
            raise ValueError(f"order_logits must have shape {want} for order={order!r}, "
                             f"got {tuple(theta.shape)}")
        dtype = xp.result_type(theta.dtype, phi.dtype)
        self.xp = xp
        self.order = order
        self.order_logits = xp.astype(theta, dtype)
        self.edge_logits = xp.astype(phi, dtype)
        self.tau = check_positive(tau, "tau")
        self.n_iter = check_int(n_iter, "n_iter", minimum=1)
        self.d = d

    def __repr__(self):
        return f"DPDAG(d={self.d}, order={self.order!r})"

    @property
    def edge_probs(self):
        xp = self.xp
        return _sigmoid(self.edge_logits, xp) * _offdiag(self.d, xp, self.edge_logits.dtype)

    # ------------------------------------------------------------------ sampling
    def sample_orders(self, n, rng=None):
        """Sample ``n`` node orders.

        Parameters
        ----------
        n : int
        rng : None, int or numpy.random.Generator

        Returns
        -------
        orders : array of int, shape (n, d)
            ``orders[b, k]`` is the node at position ``k`` (sources first).

        Raises
        ------
        ValueError
            ``n < 1`` or a negative integer seed.
        {{raises_type_n_rng}}

        {{references_2}}

        Examples
        --------
        >>> import numpy as np
        >>> from solvers.dag.dpdag import DPDAG
        >>> m = DPDAG(np.array([2.0, 0.0, -2.0]), np.zeros((3, 3)))
        >>> orders = m.sample_orders(4, rng=0)
        >>> orders.shape, all(sorted(o) == [0, 1, 2] for o in orders.tolist())
        ((4, 3), True)
        """
        n = check_int(n, "n", minimum=1)
        return self._orders(n, Draws(rng, self.xp))

    def _orders(self, n, draws):
        xp, d = self.xp, self.d
        if self.order == "softsort":
            g = draws.gumbel((n, d), dtype=self.order_logits.dtype)
            return xp.argsort(self.order_logits[None, :] + g, axis=-1, descending=True,
                              stable=True)
        g = draws.gumbel((n, d, d), dtype=self.order_logits.dtype)
        P = hungarian(self.order_logits[None, ...] + g)
        return xp.argmax(P, axis=-1)

    def sample_dags(self, n, rng=None, *, return_orders=False, backend="auto"):
        """Sample ``n`` DAGs (every one acyclic by construction).

        Parameters
        ----------
        n : int
            Number of samples.
        rng : None, int or numpy.random.Generator
        return_orders : bool
            Also return the sampled node orders.
        backend : {"auto", "numpy", "numba", "cupy"}
            ``"auto"`` uses the Numba kernel for numpy parameters (its own counter-based
            stream seeded from ``rng``: reproducible, but not the same draws as the
            generic code), CuPy kernels for cupy parameters, and generic Array API code
            otherwise.

        Returns
        -------
        A : array of bool, shape (n, d, d)
            ``A[b, i, j]`` is the edge ``i -> j`` of sample ``b``.
        orders : array of int, shape (n, d), only with ``return_orders``

        Raises
        ------
        ValueError
            ``n < 1``, a negative integer seed, an unknown ``backend``, or a backend
            that cannot run on these parameters (e.g. ``"cupy"`` without a GPU).
        {{raises_type_n_rng}}

        {{references_3}}

        Examples
        --------
        >>> import numpy as np
        >>> from solvers.dag.dpdag import DPDAG
        >>> from solvers.dag import is_dag
        >>> model = DPDAG(np.zeros(6), np.full((6, 6), 3.0))
        >>> A = model.sample_dags(100, rng=1)
        >>> all(is_dag(a) for a in A)
        True
        """
        n = check_int(n, "n", minimum=1)
        be = resolve_backend(backend, self.xp)
        sampler = KERNELS.get("sample_dags", be, generic=_sample_generic)
        A, orders = sampler(self, n, check_rng(rng), be)
        return (A, orders) if return_orders else A

    def _sample_generic(self, n, draws, chunk_bytes=2**25):
        xp, d = self.xp, self.d
        q = self.edge_probs
        per = max(1, chunk_bytes // (8 * d * d))
        As, Os = [], []
        for start in range(0, n, per):
            m = min(per, n - start)
            orders = self._orders(m, draws)
            pos = xp.argsort(orders, axis=-1)
            M = pos[:, :, None] < pos[:, None, :]
            u = draws.uniform(0.0, 1.0, (m, d, d), dtype=q.dtype)
            As.append(xp.logical_and(M, u < q[None, ...]))
            Os.append(orders)
        if len(As) == 1:
            return As[0], Os[0]
        return xp.concat(As, axis=0), xp.concat(Os, axis=0)

    # ------------------------------------------------------------ probabilities
    def _require_pl(self, what):
        if self.order != "softsort":
            raise NotImplementedError(
                f"{what} has no closed form for order='sinkhorn' (the Gumbel-matching "
                "distribution); estimate it from samples")

    def log_prob_order(self, orders):
        r"""Plackett-Luce log-probability of node orders (``order="softsort"`` only).

        Parameters
        ----------
        orders : array of int, shape (..., d)

        Returns
        -------
        array, shape (...)
            :math:`\log \prod_k e^{\theta_{\pi_k}} / \sum_{m \ge k} e^{\theta_{\pi_m}}`.

        Raises
        ------
        NotImplementedError
            The model uses ``order="sinkhorn"`` (no closed form).

        Notes
        -----
        ``orders`` is not checked: each row is assumed to be a permutation of
        ``range(d)``; other rows give meaningless values, not an error.

        {{references_2}}

        Examples
        --------
        >>> import numpy as np
        >>> from solvers.dag.dpdag import DPDAG
        >>> m = DPDAG(np.log(np.array([3.0, 1.0])), np.zeros((2, 2)))
        >>> np.exp(m.log_prob_order(np.array([[0, 1], [1, 0]]))).round(6)
        array([0.75, 0.25])
        """
        self._require_pl("log_prob_order")
        xp, d = self.xp, self.d
        orders = xp.asarray(orders)
        P = _onehot(orders, d, xp, self.order_logits.dtype)
        t = xp.matmul(P, self.order_logits[:, None])[..., 0]  # theta in order, (..., d)
        # log sum over the suffix m >= k: cumulative logsumexp from the end
        tails = [logsumexp(t[..., k:], axis=-1) for k in range(d)]
        tail = xp.stack([xp.asarray(v) for v in tails], axis=-1)
        return xp.sum(t - tail, axis=-1)

    def _log_lik_edges(self, A, M):
        """log prod over allowed pairs of Bernoulli(A; q) (host numpy, small d)."""
        phi = np.asarray(to_host(self.edge_logits), dtype=np.float64)
        lq = np.minimum(phi, 0) - np.log1p(np.exp(-np.abs(phi)))
        l1q = np.minimum(-phi, 0) - np.log1p(np.exp(-np.abs(phi)))
        return np.sum(M * np.where(A, lq, l1q), axis=(-2, -1))

    def log_prob_dag(self, A):
        """Exact log-probability of DAGs, summing over all ``d!`` orders (``d <= 8``).

        Parameters
        ----------
        A : array of bool, shape (..., d, d)

        Returns
        -------
        ndarray, shape (...)
            ``-inf`` for graphs the model cannot produce (cyclic ones).

        Raises
        ------
        NotImplementedError
            The model uses ``order="sinkhorn"``.
        ValueError
            ``d > 8``.

        {{references_3}}

        Examples
        --------
        >>> import numpy as np
        >>> from solvers.dag.dpdag import DPDAG
        >>> m = DPDAG(np.zeros(2), np.zeros((2, 2)))
        >>> np.exp(m.log_prob_dag(np.array([[[0, 0], [0, 0]], [[0, 1], [0, 0]]]))).round(6)
        array([0.5 , 0.25])
        """
        self._require_pl("log_prob_dag")
        d = self.d
        if d > 8:
            raise ValueError(f"log_prob_dag enumerates d! orders; d = {d} > 8 is too many")
        A = np.asarray(to_host(self.xp.asarray(A))) != 0
        perms = np.array(list(itertools.permutations(range(d))), dtype=np.int64)
        lp = np.asarray(to_host(self.log_prob_order(self.xp.asarray(perms))))
        pos = np.argsort(perms, axis=1)
        M = pos[:, :, None] < pos[:, None, :]  # (K, d, d)
        flat = A.reshape(-1, d, d)
        out = np.empty(flat.shape[0])
        for b in range(flat.shape[0]):
            ok = ~np.any(flat[b][None] & ~M, axis=(1, 2))
            ll = lp + self._log_lik_edges(flat[b][None], M)
            out[b] = logsumexp(ll[ok]) if np.any(ok) else -np.inf
        return out.reshape(A.shape[:-2])

    def order_before(self, n_mc=10000, rng=None):
        """``P(i before j)``: ``sigmoid(theta_i - theta_j)`` (softsort), or Monte Carlo.

        {{params_n_mc}}

        Returns
        -------
        array, shape (d, d)
            ``P[i, j]`` the probability that ``i`` precedes ``j``; zero diagonal,
            ``P + P.T = 1`` off the diagonal (exactly for softsort).

        {{raises_n_mc}}

        {{references_2}}

        Examples
        --------
        >>> import numpy as np
        >>> from solvers.dag.dpdag import DPDAG
        >>> P = DPDAG(np.array([1.0, 0.0]), np.zeros((2, 2))).order_before()
        >>> P.round(4)
        array([[0.    , 0.7311],
               [0.2689, 0.    ]])
        """
        xp, d = self.xp, self.d
        if self.order == "softsort":
            t = self.order_logits
            return _sigmoid(t[:, None] - t[None, :], xp) * _offdiag(d, xp, t.dtype)
        pos = xp.argsort(self.sample_orders(n_mc, rng), axis=-1)
        M = xp.astype(pos[:, :, None] < pos[:, None, :], self.edge_logits.dtype)
        return xp.mean(M, axis=0)

    def edge_marginals(self, n_mc=10000, rng=None):
        """Marginal edge probabilities ``P(A_ij = 1) = P(i before j) sigma(phi_ij)``.

        Exact for ``order="softsort"``; a Monte Carlo estimate with ``n_mc`` orders for
        ``order="sinkhorn"``.

        {{params_n_mc}}

        Returns
        -------
        array, shape (d, d)
            ``P(A_ij = 1)``; zero diagonal.

        {{raises_n_mc}}

        {{references_3}}

        Examples
        --------
        >>> import numpy as np
        >>> from solvers.dag.dpdag import DPDAG
        >>> m = DPDAG(np.zeros(3), np.zeros((3, 3)))   # uniform order, sigma(0) = 1/2
        >>> m.edge_marginals().round(3)
        array([[0.  , 0.25, 0.25],
               [0.25, 0.  , 0.25],
               [0.25, 0.25, 0.  ]])
        """
        return self.order_before(n_mc, rng) * self.edge_probs

    def mode_order(self):
        """The most probable order: ``argsort(-theta)`` (softsort) or the matching of
        ``Theta`` (sinkhorn).

        Returns
        -------
        order : array of int, shape (d,)
            Node at each position, sources first; ties broken by node index.

        Notes
        -----
        Takes no input and raises nothing; the parameters were validated by the
        constructor.

        {{references_2}}

        Examples
        --------
        >>> import numpy as np
        >>> from solvers.dag.dpdag import DPDAG
        >>> DPDAG(np.array([0.0, 2.0, 1.0]), np.zeros((3, 3))).mode_order()
        array([1, 2, 0])
        """
        xp = self.xp
        if self.order == "softsort":
            return xp.argsort(self.order_logits, descending=True, stable=True)
        return xp.argmax(hungarian(self.order_logits), axis=-1)

    def mode_dag(self):
        """The DAG of the joint mode of (order, edges): the mode order with every allowed
        edge of probability > 1/2. (The mode of the DAG marginal can differ; for small
        ``d`` compare :meth:`log_prob_dag` over candidates.)

        Returns
        -------
        A : array of bool, shape (d, d)
            Acyclic; ``A[i, j]`` for the edge ``i -> j``.

        Notes
        -----
        Takes no input and raises nothing; the parameters were validated by the
        constructor.

        {{references_3}}

        Examples
        --------
        >>> import numpy as np
        >>> from solvers.dag.dpdag import DPDAG
        >>> phi = np.array([[0.0, 3.0, -1.0], [0.0, 0.0, 2.0], [1.0, 0.0, 0.0]])
        >>> DPDAG(np.array([2.0, 0.0, -2.0]), phi).mode_dag().astype(int)
        array([[0, 1, 0],
               [0, 0, 1],
               [0, 0, 0]])
        """
        xp = self.xp
        pos = xp.argsort(self.mode_order())
        M = pos[:, None] < pos[None, :]
        return xp.logical_and(M, self.edge_logits > 0)


def _sample_generic(model, n, rng, be):
    """The generic ``xp`` sampler (the reference of the compiled ones)."""
    return model._sample_generic(n, Draws(rng, model.xp))


@fill_doc(**_DOCS)
def sample_dags(order_logits, edge_logits, n, rng=None, *, order="softsort",
                return_orders=False, backend="auto"):
    """Sample ``n`` DAGs from the DP-DAG model with the given parameters.

    Shorthand for ``DPDAG(order_logits, edge_logits, order=order).sample_dags(...)``.

    Parameters
    ----------
    order_logits : array, shape (d,) or (d, d)
    edge_logits : array, shape (d, d)
    n : int
    rng : None, int or numpy.random.Generator
    order : {"softsort", "sinkhorn"}
    return_orders : bool
    backend : {"auto", "numpy", "numba", "cupy"}

    Returns
    -------
    A : array of bool, shape (n, d, d)
    orders : array of int, shape (n, d), only with ``return_orders``

    Raises
    ------
    ValueError
        Bad parameters (see :class:`DPDAG`), ``n < 1``, a negative integer seed, or an
        unknown or unavailable ``backend``.
    TypeError
        Non-numeric logits, a non-integer ``n``, or an ``rng`` that is not None, an int
        or a ``numpy.random.Generator``.

    {{references_1}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag import sample_dags, is_dag
    >>> A = sample_dags(np.zeros(5), np.ones((5, 5)), 10, rng=0)
    >>> A.shape, all(is_dag(a) for a in A)
    ((10, 5, 5), True)
    """
    model = DPDAG(order_logits, edge_logits, order=order)
    return model.sample_dags(n, rng, return_orders=return_orders, backend=backend)


@fill_doc(**_DOCS)
def exact_edge_posterior(X, W, sigma2, prior_p):
    r"""Exact posterior edge marginals of the DP-DAG generative model, by enumeration.

    The model of VI-DP-DAG: a uniform order, ``E_ij ~ Bernoulli(prior_p)`` for every
    ordered pair, ``A = E * mask(order)`` and ``X | A ~ N(X (A * W), diag(sigma2))`` row by
    row, with the weights ``W`` and noise variances fixed (the VI point estimates). Every
    (order, edge set) pair is enumerated, so ``d <= 5``.

    Parameters
    ----------
    X : ndarray, shape (n, d)
        Data (centred internally, as in training).
    W : ndarray, shape (d, d)
    sigma2 : float or ndarray, shape (d,)
    prior_p : float in (0, 1)

    Returns
    -------
    ndarray, shape (d, d)
        :math:`P(A_{ij} = 1 \mid X)`.

    Raises
    ------
    ValueError
        ``d > 5``, ``X`` not 2-D, or ``prior_p`` outside ``(0, 1)`` (a math domain
        error from its logarithm).

    Notes
    -----
    ``W`` and ``sigma2`` are not checked: ``W`` is assumed ``(d, d)`` and ``sigma2``
    positive (a wrong shape surfaces as numpy's broadcasting error).

    {{references_3}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag.dpdag import exact_edge_posterior
    >>> X = np.random.default_rng(0).normal(size=(50, 2))
    >>> P = exact_edge_posterior(X, np.zeros((2, 2)), 1.0, 0.3)  # W = 0: data say nothing
    >>> P.round(6)  # the prior marginal: P(i before j) * prior_p
    array([[0.  , 0.15],
           [0.15, 0.  ]])
    """
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    if d > 5:
        raise ValueError(f"exact_edge_posterior enumerates every order and edge set; d = {d} > 5")
    Xc = X - X.mean(axis=0)
    C = Xc.T @ Xc
    W = np.asarray(W, dtype=np.float64)
    s2 = np.broadcast_to(np.asarray(sigma2, dtype=np.float64), (d,))
    lp, l1p = math.log(prior_p), math.log1p(-prior_p)
    logs, As = [], []
    for order in itertools.permutations(range(d)):
        pairs = [(order[a], order[b]) for a in range(d) for b in range(a + 1, d)]
        for bits in itertools.product((0, 1), repeat=len(pairs)):
            A = np.zeros((d, d))
            for bit, (i, j) in zip(bits, pairs):
                A[i, j] = bit
            R = np.eye(d) - A * W
            v = np.sum(R * (C @ R), axis=0)
            ll = -0.5 * np.sum(v / s2) - 0.5 * n * np.sum(np.log(2 * np.pi * s2))
            k = sum(bits)
            logs.append(ll + k * lp + (len(pairs) - k) * l1p - math.lgamma(d + 1))
            As.append(A)
    logs = np.asarray(logs)
    w = np.exp(logs - logs.max())
    return np.tensordot(w / w.sum(), np.asarray(As), axes=1)


# ------------------------------------------------------------------------- VI-DP-DAG


fill_doc_members(DPDAG, **_DOCS)
