"""Retrieval over chunks of a dask array of queries.

``GaussianMemory.retrieve`` / ``VectorMemory.retrieve`` hand dask queries here, with a
payload ``(memory class, args, kwargs)`` that rebuilds the memory on a worker. Every row
chunk becomes one task that runs the ordinary batched retrieval; the stored patterns
travel as one task input (a tuple of arrays), so a dask.distributed cluster copies them to
each worker once, and each worker process builds the memory from them once (a small
per-process cache keyed by the patterns' token). Queries are independent, so the result
equals the serial one row for row. Nothing is computed here: the fields come back as lazy
dask arrays. dask is imported only when dask input arrives.
"""
import numpy as np

from .._lib.results import OptimizeResult, Status


__all__ = ["retrieve_dask"]

#: per-process cache of memories rebuilt from a payload (token -> memory)
_BUILT = {}
_CACHE_SIZE = 4


def _memory_from(payload, token):
    mem = _BUILT.get(token)
    if mem is None:
        cls, args, kwargs = payload  # the memory class travels in the payload
        mem = cls(*args, **kwargs)
        if len(_BUILT) >= _CACHE_SIZE:
            _BUILT.pop(next(iter(_BUILT)))
        _BUILT[token] = mem
    return mem


def _retrieve_block(payload, token, queries, maxiter, tol):
    """One chunk: the ordinary batched retrieval, fields as a tuple of arrays."""
    mem = _memory_from(payload, token)
    res = mem.retrieve(*queries, maxiter=maxiter, tol=tol)
    states = (res.means, res.covs) if _is_gaussian(payload) else (res.x,)
    status = np.full((int(res.nit.shape[0]),), res.status, dtype=np.int64)
    return states + (res.nit, res.converged, res.index, res.fun, status)


def _is_gaussian(payload):
    """Whether the payload rebuilds a memory of Gaussians (means and covs per query)."""
    return payload[0].__name__ == "GaussianMemory"


def _aligned(queries, da):
    """Queries as dask arrays chunked by rows only, all with the first one's row chunks."""
    queries = [da.asarray(q) for q in queries]
    rows = queries[0].rechunk({i: -1 for i in range(1, queries[0].ndim)}).chunks[0]
    return [q.rechunk((rows,) + tuple((s,) for s in q.shape[1:])) for q in queries]


def retrieve_dask(payload, queries, *, maxiter, tol, dtype):
    """Lazy retrieval of dask ``queries`` (a tuple: means[, covs]) against ``payload``.

    Returns an ``OptimizeResult`` whose fields are dask arrays: the retrieved states
    (``means``/``covs``, or ``x``), ``nit``, ``converged``, ``index``, ``fun`` per query,
    and 0-d ``status`` (the worst chunk status: 0 converged, 1 maxiter, 4 non-finite) and
    ``success`` (``status == 0``). The energy trace is not kept (its length differs per
    chunk).
    """
    import dask
    import dask.array as da
    from dask.base import tokenize


    queries = _aligned(queries, da)
    if queries[0].ndim != 2:
        raise ValueError("dask queries must be 2-D (Q, d) means: rows are mapped in chunks")
    token = tokenize(payload)
    payload_d = dask.delayed(payload, pure=True, traverse=False)
    gaussian = _is_gaussian(payload)
    n_states = 2 if gaussian else 1
    kinds = [dtype] * n_states + [np.int64, bool, np.int64, dtype, np.int64]
    parts = [[] for _ in kinds]
    blocks = zip(*(q.to_delayed().ravel() for q in queries))
    for rows, block in zip(queries[0].chunks[0], blocks):
        out = dask.delayed(_retrieve_block, nout=len(kinds), pure=True)(
            payload_d, token, block, maxiter, tol)
        for k, (part, kind) in enumerate(zip(parts, kinds)):
            shape = (rows,) + (tuple(queries[k].shape[1:]) if k < n_states else ())
            part.append(da.from_delayed(out[k], shape=shape, dtype=kind))
    fields = [da.concatenate(p, axis=0) for p in parts]
    names = (["means", "covs"] if gaussian else ["x"]) + ["nit", "converged", "index",
                                                          "fun", "status_per_query"]
    res = dict(zip(names, fields))
    status = res.pop("status_per_query").max()
    if gaussian:
        res["x"] = res["means"]
    return OptimizeResult(status=status, success=status == int(Status.CONVERGED),
                          message="lazy dask result: compute the fields (status is the "
                                  "worst chunk status)", **res)
