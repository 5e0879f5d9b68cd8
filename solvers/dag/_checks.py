"""Input checks shared by the graph helpers, metrics and simulators of ``solvers.dag``.

Graphs are small (``d x d``), so these run on the host: device arrays are copied with the
one explicit helper :func:`solvers._lib.host.to_host`. Every message names the argument.
"""
import numpy as np

from .._lib.host import to_host

__all__ = ["as_real_square", "as_adjacency", "check_labels", "check_graph", "NOISE_TYPES"]

#: noise distributions of the simulators (linear and nonlinear SEMs)
NOISE_TYPES = ("gauss", "exp", "gumbel")


def as_real_square(W, name):
    """``W`` as a finite float64 ``(d, d)`` host array.

    Raises
    ------
    TypeError
        ``W`` is complex or not numeric.
    ValueError
        ``W`` is not a 2-D square matrix, or holds NaN or inf.
    """
    W = np.asarray(to_host(W))
    if W.dtype.kind == "c":
        raise TypeError(f"{name} must be real, got complex dtype {W.dtype}")
    try:
        W = W.astype(np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real numeric matrix, got dtype {W.dtype}") from None
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"{name} must be a square (d, d) matrix, got shape {W.shape}")
    if not np.all(np.isfinite(W)):
        raise ValueError(f"{name} must be finite; it holds {int(np.isnan(W).sum())} NaN and "
                         f"{int(np.isinf(W).sum())} inf value(s)")
    return W


def as_adjacency(B, name, *, binary=False):
    """The edge set ``B != 0`` of a finite square matrix, as a bool ``(d, d)`` host array.

    With ``binary=True`` the entries must be 0/1 (or bool).

    Raises
    ------
    TypeError
        ``B`` is complex or not numeric.
    ValueError
        ``B`` is not a 2-D square matrix, holds NaN or inf, or (``binary``) an entry
        other than 0 or 1.
    """
    W = as_real_square(B, name)
    if binary and not np.all((W == 0) | (W == 1)):
        bad = W[(W != 0) & (W != 1)][0]
        raise ValueError(f"{name} must be a 0/1 (binary) adjacency matrix, got an entry {bad}")
    return W != 0


def check_labels(labels, d, name="labels"):
    """``labels`` as a list of ``d`` distinct node names (``None``: ``0 .. d-1``).

    ``d=None`` accepts any length (``labels`` must then be given).

    Raises
    ------
    ValueError
        ``labels`` does not have ``d`` entries, or two entries are equal.
    TypeError
        ``labels`` is not a sequence, or holds unhashable entries.
    """
    if labels is None:
        return list(range(d))
    try:
        names = list(labels)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of node names, "
                        f"got {type(labels).__name__}") from None
    d = len(names) if d is None else d
    if len(names) != d:
        raise ValueError(f"{name} must have {d} entries, got {len(names)}")
    try:
        distinct = len(set(names))
    except TypeError:
        raise TypeError(f"{name} must hold hashable node names") from None
    if distinct != d:
        seen = set()
        dup = next(v for v in names if v in seen or seen.add(v))
        raise ValueError(f"{name} must be distinct node names; {dup!r} appears more than once")
    return names


def check_graph(G, name="G"):
    """Raise ``TypeError`` unless ``G`` looks like a networkx graph (``nodes`` and ``edges``)."""
    if not (hasattr(G, "nodes") and hasattr(G, "edges") and callable(getattr(G, "edges"))):
        raise TypeError(f"{name} must be a networkx graph, got {type(G).__name__}")
    return G
