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
import time

import numpy as np

from .._lib.namespace import array_namespace, is_numpy_namespace
from .._lib.backend import resolve_backend
from .._lib.rng import Draws, check_rng
from .._lib.validation import (as_float_array, check_finite, check_positive, check_int,
                               check_choice)
from .._lib.optim import Adam
from .._lib.results import call_callback, Progress, STOPPED_BY_CALLBACK
from ..lse import log_softmax, softmax, logsumexp
from .._lib.host import to_host
from .permutations import (_onehot, _soft_sort_forward, _soft_sort_backward,
                           hungarian, sinkhorn_vjp)

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

    References
    ----------
    .. [1] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
       ICLR 2022.
    .. [2] S. Prillo, J. Eisenschlos, "SoftSort: a continuous relaxation for the argsort
       operator", ICML 2020.
    .. [3] G. Mena, D. Belanger, S. Linderman, J. Snoek, "Learning latent permutations
       with Gumbel-Sinkhorn networks", ICLR 2018.

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
        TypeError
            A non-integer ``n``, or an ``rng`` that is not None, an int or a
            ``numpy.random.Generator``.

        References
        ----------
        .. [1] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
           ICLR 2022.
        .. [2] R. L. Plackett, "The analysis of permutations", Journal of the Royal
           Statistical Society C 24(2):193-202, 1975.

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
        TypeError
            A non-integer ``n``, or an ``rng`` that is not None, an int or a
            ``numpy.random.Generator``.

        References
        ----------
        .. [1] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
           ICLR 2022.

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
        from ._dag_kernels import KERNELS

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

    def _thresholds(self):
        q = np.asarray(self.edge_probs, dtype=np.float64)
        return np.floor(q * 2.0**53).astype(np.uint64)

    def _sample_numba(self, n, rng):
        from . import _dpdag_numba as kern

        d = self.d
        out = np.zeros((n, d, d), dtype=np.uint8)
        seed = int(rng.integers(2**63))
        if self.order == "softsort":
            orders = np.empty((n, d), dtype=np.int64)
            kern.sample_dags(np.asarray(self.order_logits, dtype=np.float64),
                             self._thresholds(), n, seed, out, orders)
        else:
            orders = np.ascontiguousarray(self._orders(n, Draws(rng, np)), dtype=np.int64)
            kern.dags_from_orders(orders, self._thresholds(), seed, out)
        return out.view(np.bool_), orders

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

        References
        ----------
        .. [1] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
           ICLR 2022.
        .. [2] R. L. Plackett, "The analysis of permutations", Journal of the Royal
           Statistical Society C 24(2):193-202, 1975.

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

        References
        ----------
        .. [1] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
           ICLR 2022.

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

        Parameters
        ----------
        n_mc : int
            Monte Carlo orders (``order="sinkhorn"`` only; ignored for softsort).
        rng : None, int or numpy.random.Generator
            Randomness of the Monte Carlo estimate (ignored for softsort).

        Returns
        -------
        array, shape (d, d)
            ``P[i, j]`` the probability that ``i`` precedes ``j``; zero diagonal,
            ``P + P.T = 1`` off the diagonal (exactly for softsort).

        Raises
        ------
        ValueError
            ``n_mc < 1`` or a negative integer seed (``order="sinkhorn"`` only).
        TypeError
            A non-integer ``n_mc`` or a bad ``rng`` type (``order="sinkhorn"`` only).

        References
        ----------
        .. [1] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
           ICLR 2022.
        .. [2] R. L. Plackett, "The analysis of permutations", Journal of the Royal
           Statistical Society C 24(2):193-202, 1975.

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

        Parameters
        ----------
        n_mc : int
            Monte Carlo orders (``order="sinkhorn"`` only; ignored for softsort).
        rng : None, int or numpy.random.Generator
            Randomness of the Monte Carlo estimate (ignored for softsort).

        Returns
        -------
        array, shape (d, d)
            ``P(A_ij = 1)``; zero diagonal.

        Raises
        ------
        ValueError
            ``n_mc < 1`` or a negative integer seed (``order="sinkhorn"`` only).
        TypeError
            A non-integer ``n_mc`` or a bad ``rng`` type (``order="sinkhorn"`` only).

        References
        ----------
        .. [1] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
           ICLR 2022.

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

        References
        ----------
        .. [1] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
           ICLR 2022.
        .. [2] R. L. Plackett, "The analysis of permutations", Journal of the Royal
           Statistical Society C 24(2):193-202, 1975.

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

        References
        ----------
        .. [1] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
           ICLR 2022.

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


def _sample_numba(model, n, rng, be):
    """Kernel-table entry ``sample_dags`` for numba (the compiled batched sampler)."""
    return model._sample_numba(n, rng)


def _sample_generic(model, n, rng, be):
    """The generic ``xp`` sampler (the reference of the compiled ones)."""
    return model._sample_generic(n, Draws(rng, model.xp))


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

    References
    ----------
    .. [1] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
       ICLR 2022.
    .. [2] S. Prillo, J. Eisenschlos, "SoftSort: a continuous relaxation for the argsort
       operator", ICML 2020.
    .. [3] G. Mena, D. Belanger, S. Linderman, J. Snoek, "Learning latent permutations
       with Gumbel-Sinkhorn networks", ICLR 2018.

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

    References
    ----------
    .. [1] B. Charpentier, S. Kibler, S. Günnemann, "Differentiable DAG sampling",
       ICLR 2022.

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
def _bernoulli_kl(phi, prior_logit, mask, xp):
    """sum_{i != j} KL(Bern(q) || Bern(p0)) and its gradient wrt phi (q = sigmoid(phi))."""
    q = _sigmoid(phi, xp)
    lq, l1q = _log_sigmoid(phi, xp), _log_sigmoid(-phi, xp)
    lp, l1p = -math.log1p(math.exp(-prior_logit)), -math.log1p(math.exp(prior_logit))
    kl = xp.sum(mask * (q * (lq - lp) + (1 - q) * (l1q - l1p)))
    # d/dphi [q log q/p + (1-q) log (1-q)/(1-p)] = q (1 - q) (phi - logit p)
    return kl, mask * q * (1 - q) * (phi - prior_logit)


def _elbo_grad(theta, phi, W, C, sigma2, noise, cfg, xp, hard=True):
    """Negative ELBO (data + KL, sigma2 fixed) and gradients wrt (theta, phi, W).

    ``noise`` holds the draws: ``g`` (Gumbel for the order) and ``l`` (logistic for the
    edges). ``hard=False`` runs the relaxed forward (exact gradients, for tests); the
    default is the straight-through estimator (hard forward, relaxed backward).
    Returns (loss, grads, per-node residual sums v (S, d)).
    """
    S = noise["l"].shape[0]
    d = phi.shape[0]
    dtype = phi.dtype
    off = _offdiag(d, xp, dtype)
    U = xp.astype(xp.arange(d)[:, None] < xp.arange(d)[None, :], dtype)
    # order
    score = cfg["order"] == "softsort" and cfg.get("order_grad", "st") == "score" and hard
    if score:  # the relaxation is not needed: only the hard orders and their log q
        s = theta[None, :] + noise["g"]
        orders = xp.argsort(s, axis=-1, descending=True, stable=True)
        P_hard = _onehot(orders, d, xp, dtype)
        P = P_hard
        pos = xp.argsort(orders, axis=-1)
    elif cfg["order"] == "softsort":
        s = log_softmax(theta)[None, :] + noise["g"]
        P_soft, P_hard, diff = _soft_sort_forward(s, cfg["tau"], d, xp)
        P = P_hard if hard else P_soft
    else:
        X_ = theta[None, ...] + noise["g"]
        P_soft, vjp_sk = sinkhorn_vjp(X_, cfg["n_iter"], cfg["tau"])
        P = hungarian(X_) if hard else P_soft
    if score:  # P^T U P of a hard permutation is [pos_i < pos_j]: no matmul needed
        M = xp.astype(pos[:, :, None] < pos[:, None, :], dtype)
    else:
        M = xp.matmul(xp.matrix_transpose(P), xp.matmul(U, P)) * off
    # edges (Gumbel-sigmoid with logistic noise l)
    z = (phi[None, ...] + noise["l"]) / cfg["tau_edges"]
    E_soft = _sigmoid(z, xp)
    E = xp.astype(z > 0, dtype) if hard else E_soft
    E = E * off
    A = E * M
    kl, g_kl = _bernoulli_kl(phi, cfg["prior_logit"], off, xp)
    if cfg.get("mechanism", "linear") == "mlp":
        v, data, reg, gA, gW = _mlp_term(A, W, C, sigma2, cfg, xp)
        loss = data + kl + reg
    else:
        B = A * W
        R = xp.eye(d, dtype=dtype) - B
        CR = xp.matmul(C, R)
        v = xp.sum(R * CR, axis=-2)  # (S, d): residual sum of squares of each node
        data = 0.5 * xp.sum(v / sigma2) / S
        loss = data + kl + 0.5 * cfg["w_l2"] * xp.sum(W * W)
        # backward
        gB = -(CR / sigma2) / S  # d data / d B, columns scaled by 1 / sigma2_j
        gW = xp.sum(gB * A, axis=0) + cfg["w_l2"] * W
        gA = gB * W
    gE = gA * M
    gM = gA * E * off
    gphi = xp.sum(gE * E_soft * (1 - E_soft), axis=0) / cfg["tau_edges"] + g_kl
    if not score:
        gP = xp.matmul(U, xp.matmul(P, xp.matrix_transpose(gM))) + \
            xp.matmul(xp.matrix_transpose(U), xp.matmul(P, gM))
    if score:
        # score-function (REINFORCE) gradient of E_q[f(pi)] with a leave-one-out baseline;
        # f = data term (+ log q(pi) when the KL to the uniform order prior is on)
        if cfg.get("order_objective", "elbo") == "profile":
            # collapsed order term: every predecessor a parent with least-squares weights;
            # the residual sums are the squared Cholesky diagonal of the permuted Gram
            Cp = xp.matmul(P_hard, xp.matmul(C, xp.matrix_transpose(P_hard)))
            L = xp.linalg.cholesky(Cp)
            rss = xp.linalg.diagonal(L) ** 2  # (S, d) in sampled order
            s2o = xp.matmul(P_hard, sigma2[:, None])[..., 0]
            f = 0.5 * xp.sum(rss / s2o, axis=-1)
        else:
            f = 0.5 * xp.sum(v / sigma2, axis=-1)
        logq, glogq = _pl_logprob_grad(theta, P_hard, xp)
        if cfg.get("order_kl", True):
            f = f + logq
            loss = loss + xp.mean(logq) + math.lgamma(d + 1)
        base = (xp.sum(f) - f) / max(S - 1, 1) if S > 1 else xp.zeros_like(f)
        gtheta = xp.sum((f - base)[:, None] * glogq, axis=0) / S
    elif cfg["order"] == "softsort":
        gs = _soft_sort_backward(gP, P_soft, P_hard, diff, cfg["tau"], xp)
        gs = xp.sum(gs, axis=0)
        gtheta = gs - softmax(theta) * xp.sum(gs)
    else:
        gtheta = xp.sum(vjp_sk(gP), axis=0)
    return loss, (gtheta, gphi, gW), v


def _mlp_term(A, params, Xb, sigma2, cfg, xp):
    """Data term of MLP mechanisms and its backward pass.

    Node ``j`` is predicted from its sampled parents by one tanh hidden layer:
    ``y_j = sum_k V[j, k] tanh(sum_i x_i A[i, j] U1[j, i, k] + b1[j, k]) + c[j]``.
    ``Xb`` is a (centred) minibatch of ``m`` rows; residual sums are scaled by
    ``cfg["scale"] = n / m``. Returns (v (S, d), data, l2 penalty, d/dA, grads of
    (U1, b1, V, c)).
    """
    U1, b1, V, c = params
    S = A.shape[0]
    AT = xp.matrix_transpose(A)  # (S, child j, parent i)
    G = AT[..., None] * U1[None, ...]  # (S, d, d, h): masked first-layer weights
    Hpre = xp.matmul(Xb[None, None, ...], G) + b1[None, :, None, :]  # (S, d, m, h)
    H = xp.tanh(Hpre)
    Y = xp.sum(H * V[None, :, None, :], axis=-1) + c[None, :, None]  # (S, d, m)
    R = xp.matrix_transpose(Xb)[None, ...] - Y
    v = cfg["scale"] * xp.sum(R * R, axis=-1)  # (S, d)
    data = 0.5 * xp.sum(v / sigma2) / S
    lam = cfg["w_l2"]
    reg = 0.5 * lam * (xp.sum(U1 * U1) + xp.sum(V * V))
    dY = -(cfg["scale"] / S) * R / sigma2[None, :, None]
    gV = xp.sum(xp.sum(dY[..., None] * H, axis=2), axis=0) + lam * V
    gc = xp.sum(xp.sum(dY, axis=2), axis=0)
    dHpre = dY[..., None] * V[None, :, None, :] * (1 - H * H)
    gb1 = xp.sum(xp.sum(dHpre, axis=2), axis=0)
    dG = xp.matmul(xp.matrix_transpose(Xb)[None, None, ...], dHpre)  # (S, d, d, h)
    gU1 = xp.sum(dG * AT[..., None], axis=0) + lam * U1
    gA = xp.matrix_transpose(xp.sum(dG * U1[None, ...], axis=-1))
    return v, data, reg, gA, (gU1, gb1, gV, gc)


def _pl_logprob_grad(theta, P, xp):
    """Plackett-Luce log q(pi) of orders given as one-hot P (S, d, d) and its gradient
    wrt theta, (S,) and (S, d): d/dt_m = 1 - e^{t_m} sum_{k <= m} 1 / Z_k with
    Z_k = sum_{m' >= k} e^{t_m'} (t = theta in sampled order)."""
    t = xp.matmul(P, theta[:, None])[..., 0]  # (S, d)
    t = t - xp.max(theta)
    e = xp.exp(t)
    Z = xp.flip(xp.cumulative_sum(xp.flip(e, axis=-1), axis=-1), axis=-1)
    logq = xp.sum(t - xp.log(Z), axis=-1)
    gt = 1.0 - e * xp.cumulative_sum(1.0 / Z, axis=-1)
    return logq, xp.matmul(xp.matrix_transpose(P), gt[..., None])[..., 0]


def _draw_noise(draws, S, d, order, dtype):
    g_shape = (S, d) if order == "softsort" else (S, d, d)
    u = draws.uniform(0.0, 1.0, (S, d, d), dtype=dtype)
    xp = draws.xp
    tiny = xp.asarray(1e-12 if dtype == xp.float64 else 1e-6, dtype=dtype)
    u = xp.clip(u, tiny, 1 - tiny)
    return {"g": draws.gumbel(g_shape, dtype=dtype), "l": xp.log(u / (1 - u))}


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


def _nonequal_final(C, n, W_eq, order, noise_variance):
    """The final linear graph under one noise variance per node: the swap search of
    :func:`solvers.dag.refine.refine_order` from the VI mode order, scored by the
    non-equal-variance BIC (scale-free). With ``"auto"`` it replaces the equal-variance
    graph ``W_eq`` only if its BIC (variance parameters counted) is lower than that of the
    same search scored with equal variances (the two models compared at equal effort)."""
    from .refine import model_bic, refine_order

    o_ne, W_ne, _ = refine_order(None, order, gram=(C, n), threshold=0.0,
                                 noise_variance="nonequal")
    if noise_variance == "auto":  # compare the models at the same search effort
        W_eq_s = refine_order(None, order, gram=(C, n), noise_variance="equal")[1]
    if noise_variance == "nonequal" or (model_bic(C, n, W_ne, "nonequal")
                                        < model_bic(C, n, W_eq_s, "equal")):
        return np.asarray(W_ne, dtype=np.float64), np.asarray(o_ne, dtype=np.int64), \
            "nonequal"
    return W_eq, order, "equal"


def _learn_dpdag(X, *, order="softsort", maxiter=3000, n_samples=16, lr=0.1, tau=1.0,
                 tau_edges=1.0, prior_p=0.1, noise_variance="auto", w_l2=0.0,
                 w_threshold=0.3, refit=True, init_order="random", sinkhorn_iter=20,
                 order_grad="score", order_kl=True, order_objective=None,
                 support=None, mechanism="linear", hidden=8, batch_size=256, refine=False,
                 n_candidates=100,
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
        Default ``"order"`` for linear mechanisms, ``"edges"`` for MLPs. Final graph: ``"order"`` refits every node on all its predecessors in the mode
        order and keeps ``|W| > w_threshold``; ``"edges"`` refits on the mode DAG (the
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
    from .learn import check_data, make_result

    start = time.perf_counter()
    X, xp_in = check_data(X)
    check_choice(order, _ORDER_METHODS, "order")
    check_choice(noise_variance, ("auto", "equal", "nonequal"), "noise_variance")
    vi_noise = "equal" if noise_variance == "auto" else noise_variance
    check_choice(init_order, ("random", "varsort"), "init_order")
    maxiter, sinkhorn_iter = _renamed(maxiter, max_iter, sinkhorn_iter, n_iter)
    maxiter = check_int(maxiter, "maxiter", minimum=1)
    S = check_int(n_samples, "n_samples", minimum=1)
    lr = check_positive(lr, "lr")
    prior_p = check_positive(prior_p, "prior_p")
    if prior_p >= 1:
        raise ValueError(f"prior_p must be in (0, 1), got {prior_p}")
    w_l2 = check_positive(w_l2, "w_l2", strict=False)
    w_threshold = check_positive(w_threshold, "w_threshold", strict=False)
    be = resolve_backend(backend, xp_in)
    xp = be.xp
    X = be.to_device(X)
    n, d = X.shape
    dtype = X.dtype
    sd_h = None
    if noise_variance == "nonequal":  # scale-free model: fit on standardized columns
        sd = xp.std(X, axis=0)
        X = X / sd
        sd_h = np.asarray(to_host(sd), dtype=np.float64)
    draws = Draws(rng, xp)
    check_choice(mechanism, ("linear", "additive", "mlp"), "mechanism")
    mlp = mechanism == "mlp"
    additive = mechanism == "additive"
    mechanism = "linear" if additive else mechanism  # VI runs linear; the end is additive
    if order_objective is None:
        order_objective = "elbo" if mlp else "profile"
    if support is None:
        support = "edges" if mlp else "order"
    check_choice(support, ("edges", "order"), "support")
    if mlp and (order_objective == "profile" or support == "order" or refine):
        raise ValueError("mechanism='mlp' needs order_objective='elbo', support='edges' "
                         "and refine=False (the profile, the order support and the "
                         "refinement are least-squares constructions)")
    cfg = {"order": order, "tau": check_positive(tau, "tau"),
           "tau_edges": check_positive(tau_edges, "tau_edges"),
           "n_iter": check_int(sinkhorn_iter, "sinkhorn_iter", minimum=1),
           "prior_logit": math.log(prior_p) - math.log1p(-prior_p), "w_l2": w_l2,
           "order_grad": check_choice(order_grad, ("score", "st"), "order_grad"),
           "order_kl": bool(order_kl),
           "order_objective": check_choice(order_objective, ("elbo", "profile"),
                                           "order_objective"),
           "mechanism": mechanism}
    Xc = X - xp.mean(X, axis=0, keepdims=True)
    C = _regularized_gram(xp.matmul(xp.matrix_transpose(Xc), Xc), xp)

    if init_order == "varsort":
        lv = xp.log(xp.linalg.diagonal(C) / n)
        theta = -(lv - xp.mean(lv)) * 2.0
        if order == "sinkhorn":  # position k prefers the k-th lowest-variance node
            rank = xp.astype(xp.argsort(xp.argsort(lv)), dtype)
            theta = -xp.abs(xp.arange(d, dtype=dtype)[:, None] - rank[None, :])
    else:
        shape = (d,) if order == "softsort" else (d, d)
        theta = 0.01 * draws.normal(shape, dtype=dtype)
    phi = xp.zeros((d, d), dtype=dtype)
    n_fit, X_val = n, None
    if mlp:
        h = check_int(hidden, "hidden", minimum=1)
        # hold out 20% of the rows: the final sparsity is chosen by held-out likelihood
        Xc, X_val = _holdout_split(Xc, draws, xp)
        n_fit = Xc.shape[0]
        m = min(check_int(batch_size, "batch_size", minimum=1), n_fit)
        cfg["scale"] = n_fit / m
        mech = [0.1 * draws.normal((d, d, h), dtype=dtype), xp.zeros((d, h), dtype=dtype),
                0.1 * draws.normal((d, h), dtype=dtype), xp.zeros((d,), dtype=dtype)]
    else:
        mech = [xp.zeros((d, d), dtype=dtype)]
    params = [theta, phi] + mech
    opt = Adam(params, lr, xp=xp)  # the shared _lib Adam
    sigma2 = xp.ones((d,), dtype=dtype) * (xp.sum(xp.linalg.diagonal(C)) / (n * d))
    history = []
    status, message = 0, "maximum number of iterations reached"
    nit = 0
    with Progress(maxiter, "dpdag", enabled=progress) as bar:
        for it in range(maxiter):
            noise = _draw_noise(draws, S, d, order, dtype)
            if mlp:
                idx = draws.integers(0, n_fit, (m,))
                data_in = xp.take(Xc, idx, axis=0)
                W_arg = tuple(params[2:])
            else:
                data_in, W_arg = C, params[2]
            loss, grads, v = _elbo_grad(params[0], params[1], W_arg, data_in, sigma2,
                                        noise, cfg, xp)
            if mlp:
                grads = (grads[0], grads[1]) + tuple(grads[2])
            # closed-form noise variance for the current samples (coordinate ascent)
            vm = xp.mean(v, axis=0) / n_fit
            if vi_noise == "equal":
                sigma2 = xp.ones((d,), dtype=dtype) * xp.mean(vm)
            else:
                sigma2 = vm
            sigma2 = xp.maximum(sigma2, xp.asarray(1e-8, dtype=dtype))
            loss_val = float(loss) + 0.5 * n_fit * float(xp.sum(xp.log(sigma2)))
            if not math.isfinite(loss_val):
                status, message = 4, "non-finite objective (lower lr or check the data)"
                break
            history.append(loss_val)
            params = opt.step(params, grads)
            nit = it + 1
            bar.update(1, loss=loss_val)
            if callback is not None and call_callback(callback, x=params[0], nit=nit,
                                                      fun=loss_val,
                                                      edge_probs=_sigmoid(params[1], xp)):
                status, message = STOPPED_BY_CALLBACK
                break
    theta, phi = params[0], params[1]
    W = params[2] if not mlp else xp.zeros((d, d), dtype=dtype)
    model = DPDAG(be.to_input(theta), be.to_input(phi), order=order, tau=cfg["tau"],
                  n_iter=cfg["n_iter"])
    # the final graph is built on the host (d x d)
    host = DPDAG(to_host(theta), to_host(phi), order=order, tau=cfg["tau"],
                 n_iter=cfg["n_iter"])
    C_h = np.asarray(to_host(C), dtype=np.float64)
    W_vi = np.asarray(to_host(W), dtype=np.float64)
    final_order = np.asarray(host.mode_order(), dtype=np.int64)
    if support == "order":  # every predecessor in the mode order; refit + threshold prune
        pos = np.argsort(final_order)
        support = pos[:, None] < pos[None, :]
    else:
        support = np.asarray(host.mode_dag())
    refined = bool(refine) and vi_noise == "equal"
    if refined:
        cands = [final_order]
        k = check_int(n_candidates, "n_candidates", minimum=0)
        if k:
            cands += list(host.sample_orders(k, rng=draws.spawn_seed()))
        scores = [_order_score(C_h, o) for o in cands]
        from .refine import refine_order

        final_order, W_fin, _ = refine_order(to_host(X), cands[int(np.argmin(scores))],
                                             threshold=w_threshold)
        final_order = np.asarray(final_order, dtype=np.int64)
        W_fin = np.asarray(W_fin, dtype=np.float64)
    elif mlp:  # edge strength: norm of the first-layer weights of parent i in node j
        if X_val is not None:
            support = _mlp_support(host, final_order, tuple(params[2:]), Xc, X_val, cfg, xp)
        U1 = np.asarray(to_host(params[2]), dtype=np.float64)
        W_fin = np.sqrt(np.sum(U1 * U1, axis=-1)).T * support
        W_vi = None
    else:
        W_fin = _refit(C_h, support, np) if refit else W_vi * support
        W_fin = np.where(np.abs(W_fin) > w_threshold, W_fin, 0.0) * support
    chosen = "equal" if noise_variance == "auto" else noise_variance
    if not mlp and noise_variance != "equal":
        W_fin, final_order, chosen = _nonequal_final(C_h / n, n, W_fin, final_order,
                                                     noise_variance)
    if sd_h is not None:  # back to the original units
        W_fin = W_fin * sd_h[None, :] / sd_h[:, None]
    if additive:
        from .additive import additive_search

        final_order, W_fin, _ = additive_search(np.asarray(to_host(X), np.float64),
                                                [final_order])
        chosen = "nonequal"
    if not is_numpy_namespace(xp_in):
        W_out = xp_in.asarray(W_fin, dtype=X.dtype) if xp_in is xp else \
            be.to_input(xp.asarray(W_fin, dtype=X.dtype))
    else:
        W_out = W_fin.astype(np.float32 if X.dtype == xp.float32 else np.float64)
    success = status == 0  # the shared contract: a callback stop is not a success
    return make_result(W_out, method="dpdag", order=final_order,
                       priorities=model.order_logits,
                       fun=history[-1] if history else np.nan, loss_history=history,
                       nit=nit, success=success, status=status, message=message,
                       time=time.perf_counter() - start,
                       edge_probs=model.edge_marginals(), model=model,
                       sample_dags=model.sample_dags, sigma2=be.to_input(sigma2),
                       W_vi=W_vi, refined=refined, noise_variance=chosen,
                       identified=mlp or additive or chosen == "equal",
                       mlp_params=tuple(be.to_input(p_) for p_ in params[2:]) if mlp
                       else None)
