"""Where minibatches come from: in-memory rows, a sampler, or partitioned (dask) data.

Every source has ``n`` (number of terms, ``None`` for a sampler), ``batch(size)`` (the next
minibatch, as an array or a tuple of arrays in the computing namespace) and
``chunks(size)`` (the whole data once, in order, for the end-of-run diagnostic pass).

Minibatch sequence (what is guaranteed)
---------------------------------------
In memory, an epoch is one permutation of the ``n`` rows drawn from ``rng``; batches are
consecutive slices of it and the last ``n % batch_size`` rows of the permutation are
dropped (a new permutation starts when fewer than ``batch_size`` rows are left).

Partitioned data (a dask array or dataframe, or a tuple of them with matching
partitions) follows the same rule over a two-level permutation: at the start of an epoch
the partition order is ``rng.permutation(P)`` (not drawn when ``P == 1``), and each
partition, when it is read, gets its row order ``rng.permutation(n_j)``. Batches are
consecutive slices of the concatenated stream (a batch may straddle two partitions) and
an epoch's last ``n % batch_size`` rows are dropped. Hence

- with one partition the batches are *identical* to the in-memory path on the same rows
  with the same ``rng`` (same draws, same order);
- the batches never depend on the scheduler or on the number of workers (all draws are
  made on the client, in order);
- every row is used at most once per epoch, and at most two partitions are held in memory
  at once.
"""
import numbers

import numpy as np

from .._lib.namespace import is_dask_collection

__all__ = ["make_source", "is_partitioned"]


def is_partitioned(data, name="data"):
    """True when ``data`` (or every member of a tuple ``data``) is a dask collection."""
    items = data if isinstance(data, tuple) else (data,)
    flags = [is_dask_collection(d) for d in items]
    if any(flags) and not all(flags):
        raise TypeError(f"{name}: give only dask collections or only in-memory arrays, "
                        "not a mix")
    return bool(flags) and all(flags)


def _take(arrays, idx, xp):
    return tuple(xp.take(a, idx, axis=0) for a in arrays)


def _pack(arrays, is_tuple):
    return arrays if is_tuple else arrays[0]


class ArrayRows:
    """Rows of an in-memory array, or of a tuple of arrays with a common first axis."""

    def __init__(self, arrays, is_tuple, xp, draws):
        self.arrays, self.is_tuple, self.xp, self.draws = arrays, is_tuple, xp, draws
        self.n = arrays[0].shape[0]
        self._perm, self._pos = None, 0

    def batch(self, size):
        if self._perm is None or self._pos + size > self.n:
            self._perm, self._pos = self.draws.permutation(self.n), 0
        idx = self._perm[self._pos:self._pos + size]
        self._pos += size
        return _pack(_take(self.arrays, idx, self.xp), self.is_tuple)

    def chunks(self, size):
        for r in range(0, self.n, size):
            stop = min(r + size, self.n)
            yield _pack(tuple(a[r:stop, ...] for a in self.arrays), self.is_tuple)


class SamplerRows:
    """``sampler(rng, size) -> batch`` for an infinite population."""

    n = None

    def __init__(self, sampler, host_rng):
        self.sampler, self.rng = sampler, host_rng

    def batch(self, size):
        return self.sampler(self.rng, size)

    def chunks(self, size, total):
        for r in range(0, total, size):
            yield self.sampler(self.rng, min(size, total - r))


def _dask_parts(obj):
    """Per-partition lazy pieces and their lengths (computed once if unknown)."""
    if hasattr(obj, "blocks"):  # dask array
        if any(c != c for c in obj.chunks[0]):  # NaN: unknown chunk sizes
            obj = obj.compute_chunk_sizes()
        if obj.ndim > 1 and obj.numblocks[1:] != (1,) * (obj.ndim - 1):
            obj = obj.rechunk({i: -1 for i in range(1, obj.ndim)})
        return [obj.blocks[j] for j in range(obj.numblocks[0])], list(obj.chunks[0])
    parts = [obj.partitions[j] for j in range(obj.npartitions)]
    return parts, [int(v) for v in obj.map_partitions(len).compute()]


class PartitionedRows:
    """Rows of a dask collection (or a tuple of them), read partition by partition."""

    #: the diagnostic pass must not hold a value per term: it streams partials instead
    streaming = True

    def __init__(self, data, is_tuple, be, draws):
        self.is_tuple, self.be, self.draws = is_tuple, be, draws
        items = data if is_tuple else (data,)
        pieces = [_dask_parts(d) for d in items]
        sizes = pieces[0][1]
        if any(len(p[0]) != len(sizes) or p[1] != sizes for p in pieces):
            raise ValueError("data: dask collections in a tuple must have the same "
                             "partitions (numbers of rows per partition)")
        self.parts = [tuple(p[0][j] for p in pieces) for j in range(len(sizes))]
        self.sizes = sizes
        self.n = sum(sizes)
        self._cache = (None, None)
        self._order, self._next = [], 0
        self._cur, self._perm, self._pos = None, None, 0
        self._left = 0

    def _load(self, j):
        if self._cache[0] == j:
            return self._cache[1]
        import dask

        host = dask.compute(*self.parts[j])
        arrays = tuple(self.be.to_device(self.be.xp.asarray(_to_array(h))) for h in host)
        if any(a.shape[0] != self.sizes[j] for a in arrays):
            raise ValueError(f"data: partition {j} has {arrays[0].shape[0]} rows, "
                             f"expected {self.sizes[j]}")
        self._cache = (j, arrays)
        return arrays

    def _new_epoch(self):
        P = len(self.parts)
        self._order = [0] if P == 1 else [int(j) for j in self.draws.rng.permutation(P)]
        self._next, self._cur, self._left = 0, None, self.n

    def _advance(self):
        j = self._order[self._next]
        self._next += 1
        self._cur = self._load(j)
        self._perm, self._pos = self.draws.permutation(self.sizes[j]), 0

    def batch(self, size):
        if self._left < size:
            self._new_epoch()
        pieces, need = [], size
        while need > 0:
            if self._cur is None or self._pos >= self._cur[0].shape[0]:
                self._advance()
            k = min(need, self._cur[0].shape[0] - self._pos)
            idx = self._perm[self._pos:self._pos + k]
            pieces.append(_take(self._cur, idx, self.be.xp))
            self._pos += k
            need -= k
        self._left -= size
        if len(pieces) == 1:
            return _pack(pieces[0], self.is_tuple)
        xp = self.be.xp
        return _pack(tuple(xp.concat([p[i] for p in pieces], axis=0)
                           for i in range(len(pieces[0]))), self.is_tuple)

    def chunks(self, size):
        for j in range(len(self.parts)):
            arrays = self._load(j)
            n_j = arrays[0].shape[0]
            for r in range(0, n_j, size):
                stop = min(r + size, n_j)
                yield _pack(tuple(a[r:stop, ...] for a in arrays), self.is_tuple)


def _to_array(obj):
    """A computed partition as an array (pandas objects through ``to_numpy``)."""
    if hasattr(obj, "to_numpy") and not hasattr(obj, "__array_namespace__"):
        return obj.to_numpy()
    return obj


def make_source(data, be, draws, is_tuple):
    """The source for validated ``data`` (arrays already moved to ``be.xp``)."""
    if callable(data):
        return SamplerRows(data, draws.rng)
    if is_partitioned(data):
        return PartitionedRows(data, is_tuple, be, draws)
    return ArrayRows(data if is_tuple else (data,), is_tuple, be.xp, draws)


def check_rows(arrays, name="data"):
    """Common first dimension of in-memory arrays; a clear error otherwise."""
    n = arrays[0].shape[0]
    if any(a.ndim == 0 or a.shape[0] != n for a in arrays):
        raise ValueError(f"{name}: arrays must share their first dimension, got shapes "
                         f"{[tuple(a.shape) for a in arrays]}")
    if not isinstance(n, numbers.Integral):
        raise ValueError(f"{name}: the number of rows must be known, got {n}")
    return int(n)


def as_rows(data, name="data"):
    """Lists become numpy arrays (object dtype rejected); arrays pass through."""
    if isinstance(data, list):
        try:
            arr = np.asarray(data)
        except ValueError:
            arr = np.empty(0, dtype=object)
        if arr.dtype == object:
            raise TypeError(f"{name}: a list must convert to a regular numeric array "
                            "(ragged or non-numeric rows given)")
        return arr
    return data
