"""Structure-learning metrics: SHD, TPR, FDR, F1, AUROC and the COSMO-paper NHD.

Conventions follow DAGMA / gCastle / causal-learn: an edge predicted in the reverse
direction counts once in the SHD and is a false discovery (not a true positive).
``B[i, j]`` (nonzero) is the edge ``i -> j``.
"""
import numpy as np

from ._checks import as_real_square
from .cpdag import cpdag_accuracy
from .graph import is_dag, to_host
from .._lib.docstrings import fill_doc
from ._docs import DOCS


#: docstring blocks shared by this module's functions (filled by fill_doc)
_DOCS = dict(DOCS)
_DOCS["params_b"] = """
Parameters
----------
B_true, B_est : array_like, shape (d, d)
    True and estimated adjacency; any nonzero ``B[i, j]`` is the edge ``i -> j``
    (weights are binarized). numpy, cupy or Array API arrays are accepted.
"""
_DOCS["raises_b"] = """
Raises
------
ValueError
    Either matrix is not square, has a nonzero diagonal (self-loop), the two
    shapes differ, or ``B_est`` has a directed cycle (the DAG metrics assume
    acyclic graphs; with ``cpdag=True`` a CPDAG matrix is accepted).
"""
_DOCS["ref_notears"] = """
References
----------
.. [1] X. Zheng, B. Aragam, P. Ravikumar, E. P. Xing, "DAGs with NO TEARS: continuous
   optimization for structure learning", NeurIPS 2018 (the ``count_accuracy``
   conventions used here).
"""
_DOCS["params_b_returns_float"] = _DOCS["params_b"].strip("\n") + "\n\nReturns\n-------\nfloat"
_DOCS["raises_ref_example"] = "\n\n".join(
    [_DOCS["raises_b"].strip("\n"), _DOCS["ref_notears"].strip("\n"),
     "Examples\n--------\n>>> import numpy as np"])

__all__ = ["shd", "tpr", "fdr", "f1_score", "auroc", "nhd", "count_accuracy"]


def _binary(B, name):
    B = np.asarray(to_host(B))
    if B.ndim != 2 or B.shape[0] != B.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {B.shape}")
    B = B != 0
    if np.any(np.diag(B)):
        raise ValueError(f"{name} must have no self-loops (nonzero diagonal)")
    return B


def _pair(B_true, B_est):
    B_true = _binary(B_true, "B_true")
    B_est = _binary(B_est, "B_est")
    if B_true.shape != B_est.shape:
        raise ValueError(f"B_true and B_est shapes differ: {B_true.shape} vs {B_est.shape}")
    return B_true, B_est


@fill_doc(**_DOCS)
def count_accuracy(B_true, B_est, cpdag=False):
    """All edge metrics at once.

    Parameters
    ----------
    B_true, B_est : array_like, shape (d, d)
        True and estimated adjacency (nonzero = edge ``i -> j``).
    cpdag : bool
        Score equivalence classes instead of DAGs: each DAG is replaced by its CPDAG
        (a CPDAG matrix or :class:`~solvers.dag.cpdag.CPDAG` is used as is) and the
        result is :func:`solvers.dag.cpdag.cpdag_accuracy`'s (``shd``, ``extra``,
        ``missing``, ``misoriented``, ``skeleton_f1``). Use it when the model only
        identifies the class (linear-Gaussian data with unequal noise variances).

    Returns
    -------
    dict
        ``shd`` (extra + missing + reversed, a reversal counting 1), ``tpr`` (correctly
        oriented true edges / true edges), ``fdr`` ((reversed + extra) / predicted),
        ``f1`` (harmonic mean of precision ``1 - fdr`` and ``tpr``), ``nnz`` (predicted
        edges), ``extra``, ``missing``, ``reversed`` counts.

    {{raises_b}}

    References
    ----------
    .. [1] I. Tsamardinos, L. E. Brown, C. F. Aliferis, "The max-min hill-climbing
       Bayesian network structure learning algorithm", Machine Learning 65(1):31-78,
       2006.
    .. [2] X. Zheng, B. Aragam, P. Ravikumar, E. P. Xing, "DAGs with NO TEARS: continuous
       optimization for structure learning", NeurIPS 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag import count_accuracy
    >>> B = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]])
    >>> E = np.array([[0, 1, 0], [0, 0, 0], [1, 1, 0]])   # two edges reversed
    >>> m = count_accuracy(B, E)
    >>> m["shd"], m["reversed"], m["tpr"]
    (2, 2, 0.3333333333333333)
    """
    if cpdag:
        return cpdag_accuracy(B_true, B_est)
    B_true, B_est = _pair(B_true, B_est)
    if not is_dag(B_est):
        raise ValueError("B_est must be the adjacency of a DAG (it has a directed cycle); "
                         "an equivalence class (both directions on an edge) is scored "
                         "with cpdag=True")
    skel_true = B_true | B_true.T
    skel_est = B_est | B_est.T
    lower = np.tril(np.ones(B_true.shape, dtype=bool), -1)
    extra = int(np.sum(skel_est & ~skel_true & lower))
    missing = int(np.sum(skel_true & ~skel_est & lower))
    true_pos = int(np.sum(B_est & B_true))
    reversed_ = int(np.sum(B_est & B_true.T & ~B_true))
    false_pos = int(np.sum(B_est & ~skel_true))
    pred = int(B_est.sum())
    cond = int(B_true.sum())
    tpr_ = true_pos / max(cond, 1)
    fdr_ = (reversed_ + false_pos) / max(pred, 1)
    precision = true_pos / max(pred, 1)
    f1 = 2 * precision * tpr_ / (precision + tpr_) if precision + tpr_ > 0 else 0.0
    return {"shd": extra + missing + reversed_, "tpr": tpr_, "fdr": fdr_, "f1": f1,
            "nnz": pred, "extra": extra, "missing": missing, "reversed": reversed_}


@fill_doc(**_DOCS)
def shd(B_true, B_est):
    """Structural Hamming distance: extra + missing + reversed edges (a reversal counts 1).

    {{params_b}}

    Returns
    -------
    int
        ``extra + missing + reversed``; a reversed edge counts once (unlike :func:`nhd`).

    {{raises_b}}

    References
    ----------
    .. [1] I. Tsamardinos, L. E. Brown, C. F. Aliferis, "The max-min hill-climbing
       Bayesian network structure learning algorithm", Machine Learning 65(1):31-78,
       2006.
    .. [2] X. Zheng, B. Aragam, P. Ravikumar, E. P. Xing, "DAGs with NO TEARS: continuous
       optimization for structure learning", NeurIPS 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag import shd
    >>> shd(np.array([[0, 1], [0, 0]]), np.array([[0, 0], [1, 0]]))
    1
    """
    return count_accuracy(B_true, B_est)["shd"]


@fill_doc(**_DOCS)
def tpr(B_true, B_est):
    """True-positive rate: correctly oriented true edges / true edges.

    {{params_b_returns_float}}
        In ``[0, 1]``; a reversed edge is not a true positive. 0.0 when ``B_true`` has no
        edge.

    {{raises_ref_example}}
    >>> from solvers.dag import tpr
    >>> tpr(np.array([[0, 1], [0, 0]]), np.array([[0, 1], [0, 0]]))
    1.0
    """
    return count_accuracy(B_true, B_est)["tpr"]


@fill_doc(**_DOCS)
def fdr(B_true, B_est):
    """False-discovery rate: (reversed + extra predicted edges) / predicted edges.

    {{params_b_returns_float}}
        In ``[0, 1]``; a reversed edge is a false discovery. 0.0 when ``B_est`` has no
        edge.

    {{raises_ref_example}}
    >>> from solvers.dag import fdr
    >>> fdr(np.array([[0, 1], [0, 0]]), np.array([[0, 0], [1, 0]]))
    1.0
    """
    return count_accuracy(B_true, B_est)["fdr"]


@fill_doc(**_DOCS)
def f1_score(B_true, B_est):
    """F1 of the directed edges (precision ``1 - fdr``, recall ``tpr``).

    {{params_b_returns_float}}
        ``2 P R / (P + R)`` with precision ``P = 1 - fdr`` and recall ``R = tpr``; 0.0
        when both are 0.

    {{raises_ref_example}}
    >>> from solvers.dag import f1_score
    >>> f1_score(np.array([[0, 1], [0, 0]]), np.array([[0, 1], [0, 0]]))
    1.0
    """
    return count_accuracy(B_true, B_est)["f1"]


def auroc(B_true, W_score):
    """Area under the ROC curve of the scores ``|W_score[i, j]|`` for the edges ``i -> j``.

    Every ordered pair ``i != j`` is a candidate; ties get half credit (the Mann–Whitney
    statistic). Returns ``nan`` when the truth has no edge or every pair is an edge.

    Parameters
    ----------
    B_true : array_like, shape (d, d)
        True adjacency; any nonzero ``B_true[i, j]`` is the edge ``i -> j``.
    W_score : array_like, shape (d, d)
        Edge scores (e.g. learned weights or edge probabilities); only ``|W_score|``
        matters and the diagonal is ignored.

    Returns
    -------
    float
        Probability that a random true edge scores above a random non-edge (ties count
        1/2), or ``nan`` when one of the two classes is empty.

    Raises
    ------
    ValueError
        ``B_true`` is not square or has a nonzero diagonal, or ``W_score`` has a
        different shape or holds NaN or inf.
    TypeError
        ``W_score`` is complex or not numeric.

    References
    ----------
    .. [1] J. A. Hanley, B. J. McNeil, "The meaning and use of the area under a receiver
       operating characteristic (ROC) curve", Radiology 143(1):29-36, 1982.

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag import auroc
    >>> B = np.array([[0, 1], [0, 0]])
    >>> auroc(B, np.array([[0.0, 0.9], [0.1, 0.0]]))
    1.0
    """
    from scipy.stats import rankdata

    B_true = _binary(B_true, "B_true")
    S = np.asarray(to_host(W_score))
    if S.shape != B_true.shape:
        raise ValueError(f"W_score shape {S.shape} differs from B_true shape {B_true.shape}")
    S = np.abs(as_real_square(S, "W_score"))
    off = ~np.eye(B_true.shape[0], dtype=bool)
    y = B_true[off]
    s = S[off]
    n_pos = int(y.sum())
    n_neg = y.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(s)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


@fill_doc(**_DOCS)
def nhd(B_true, B_est):
    """Normalized Hamming distance of the COSMO paper: entries that differ / d.

    A reversed edge differs in two entries, so it counts 2 (unlike :func:`shd`). Use it only
    to compare with the COSMO paper's tables.

    {{params_b_returns_float}}
        ``sum(B_true != B_est) / d`` (binarized matrices).

    {{raises_b}}

    {{ref_cosmo}}

    Examples
    --------
    >>> import numpy as np
    >>> from solvers.dag import nhd
    >>> nhd(np.array([[0, 1], [0, 0]]), np.array([[0, 0], [1, 0]]))
    1.0
    """
    B_true, B_est = _pair(B_true, B_est)
    return float(np.sum(B_true != B_est)) / B_true.shape[0]
