"""The retrieval machinery shared by :class:`.VectorMemory` and :class:`.GaussianMemory`:
the geometries (distances to every pattern and one Gibbs-weighted step for a block of
queries), the batched retrieval loop, the result builder and the options of ``retrieve``.
See the package docstring (:mod:`solvers.memory`) for the math.
"""
import copy

import numpy as np

from .._lib.backend import backend_arg
from .._lib.frames import unwrap_frame
from .._lib.params import (CALLBACK, FLAG, NONNEGATIVE, Integer, Options, Param)
from .._lib.host import to_host
from .._lib.results import (Status, call_callback, make_result, Progress,
                            STOPPED_BY_CALLBACK)
from ..lse import logsumexp
from ..transport import bures_kernels as _bw


def retrieve_options(tol, *queries):
    """The options of ``retrieve``: the memory's query arrays (``queries``, declared
    ``Param`` entries), then the iteration options (the memories differ in ``tol``)."""
    return Options(
        "RetrieveOptions", *queries,
        Param("maxiter", Integer(low=0), 100, "iteration cap"),
        Param("tol", NONNEGATIVE, tol, "stop a query when its step is at most tol"),
        Param("callback", CALLBACK, None, "called with the intermediate result"),
        Param("progress", FLAG, False, "show a progress bar"))


#: floats per (queries x patterns) block when evaluating Gibbs weights
_BLOCK = 2 ** 22
#: log-sum-exp terms of a whole vector-path computation (calls x queries x patterns) under
#: which ``"auto"`` runs it on the generic code, nothing to compile: about 10 ms of generic
#: log-sum-exps against about a second of compiling the Numba ones (the full path's
#: threshold is the Bures kernels', :func:`solvers.transport.bures_kernels.kernel_backend`)
VECTOR_GENERIC_BELOW = 1 << 20


def vector_backend(be, n_queries, n_patterns, calls=1):
    """The backend of one vector-path computation (``calls`` evaluations of ``n_queries``
    queries against ``n_patterns`` patterns): ``be``, or the generic code for a small one
    under ``"auto"``. Picked once and handed on to every log-sum-exp of the computation."""
    return be.for_size(calls * n_queries * n_patterns, VECTOR_GENERIC_BELOW)
#: relative size of off-diagonal entries below which matrices count as diagonal/commuting
_COMMUTE_RTOL = 1e-10

# ---------------------------------------------------------------------------------------
# geometries: distances to all patterns and one step, for a block of queries
# ---------------------------------------------------------------------------------------
class _VectorGeometry:
    """Euclidean (or dot-product) vector DAM on states z (Q, D)."""

    def __init__(self, Z, xp, similarity="euclidean"):
        self.Z, self.xp, self.similarity = Z, xp, similarity
        self.Zt = xp.matrix_transpose(Z)
        self.norms = xp.sum(Z * Z, axis=1)

    def scores(self, state, beta=None):
        """``-W2^2`` (euclidean) or the similarity (dot), per (query, pattern)."""
        (z,) = state
        xp = self.xp
        g = z @ self.Zt
        if self.similarity == "dot":
            return g
        d2 = xp.sum(z * z, axis=1)[:, None] + self.norms[None, :] - 2 * g
        return -xp.maximum(d2, xp.zeros_like(d2))

    def energy_offset(self, state):
        (z,) = state
        if self.similarity == "dot":
            return 0.5 * self.xp.sum(z * z, axis=1)
        return None

    def scores_aux(self, state, beta=None):
        """Scores and what ``step`` reuses from them (nothing here)."""
        return self.scores(state, beta), None

    def step(self, state, p, aux=None):
        (z,) = state
        znew = p @ self.Z
        dz = znew - z
        return (znew,), self.xp.sum(dz * dz, axis=1)


class _FullGeometry:
    """Full covariances; states (m (Q, d), Omega (Q, d, d)).

    Stateless after construction (one instance may serve several threads, e.g. dask
    chunks): the query roots computed for the scores are handed to ``step`` as ``aux``.
    """

    def __init__(self, mu, S, be, screen):
        xp = be.xp
        self.mu, self.S, self.be, self.xp = mu, S, be, xp
        self.trS = xp.linalg.trace(S)
        self.screen = screen
        self.wmin = 1e-18
        # square roots of the patterns' eigenvalues: the screen's spectral lower bound
        # (read only by the screened distances)
        self.rS = None
        if screen is not None:
            lam = xp.linalg.eigvalsh(_bw.sym(S, xp))
            self.rS = xp.sqrt(xp.maximum(lam, xp.zeros_like(lam)))

    def on(self, be):
        """This geometry with its kernels on ``be`` (the backend one computation picked
        with :func:`solvers.transport.bures_kernels.kernel_backend`: the generic code for
        a small one under ``"auto"``); the stored arrays are shared."""
        if be is self.be:
            return self
        other = copy.copy(self)
        other.be = be
        return other

    def scores_aux(self, state, beta=None):
        """``-W2^2`` per (query, pattern) and the query roots ``(R, R^{-1})``."""
        m, Om = state
        xp = self.xp
        r, R, Rinv = _bw.roots(Om, xp)
        trq = xp.linalg.trace(Om)
        if self.screen is not None and beta is not None:
            d2 = _bw.screened_cdist(m, R, trq, r, self.mu, self.S, self.trS, self.rS,
                                    self.screen / beta, self.be)
        else:
            d2 = _bw.cdist_full(m, Om, self.mu, self.S, self.be, R=R)
        return -d2, (R, Rinv)

    def scores(self, state, beta=None):
        return self.scores_aux(state, beta)[0]

    def energy_offset(self, state):
        return None

    def step(self, state, p, aux=None):
        m, Om = state
        xp = self.xp
        R, Rinv = aux if aux is not None else _bw.roots(Om, xp)[1:]
        mnew = p @ self.mu
        # weights below 1e-18 of the largest change M by less than rounding: skip them
        # (the Numba kernel then needs eigenvectors for a handful of pairs per query)
        pmax = xp.max(p, axis=1, keepdims=True)
        p = xp.where(p < self.wmin * pmax, xp.zeros_like(p), p)
        M = _bw.weighted_root_sum(R, self.S, p, self.be)
        # the map x -> A x, A = Rinv M Rinv (symmetric PD), is the optimal one from Omega to
        # Omega+, so the exact squared W2 length of the step is ||(M - Omega) Rinv||_F^2
        G = (M - Om) @ Rinv
        dm = mnew - m
        step2 = xp.sum(dm * dm, axis=1) + xp.sum(G * G, axis=(-2, -1))
        return (mnew, _bw.sym(Rinv @ M @ M @ Rinv, xp)), step2


def _where_rows(mask, new, old, xp):
    shape = (mask.shape[0],) + (1,) * (new.ndim - 1)
    return xp.where(xp.reshape(mask, shape), new, old)


def _evaluate(geom, state, beta, xp, lse_backend, rows, with_step):
    """Energy, nearest pattern and (optionally) one step for every row of ``state``."""
    parts_E, parts_idx, parts_new, parts_step = [], [], [], []
    for a, b in rows:
        sub = tuple(s[a:b, ...] for s in state)
        scores, aux = geom.scores_aux(sub, beta)
        logits = beta * scores
        lse = logsumexp(logits, axis=1, backend=lse_backend)
        E = -lse / beta
        off = geom.energy_offset(sub)
        parts_E.append(E if off is None else E + off)
        parts_idx.append(xp.argmax(scores, axis=1))
        if with_step:
            # Gibbs weights from the log-partition already computed (one exp pass)
            new, step2 = geom.step(sub, xp.exp(logits - lse[:, None]), aux)
            parts_new.append(new)
            parts_step.append(step2)
    if not rows:  # no queries: empty energies, indices and steps
        empty = xp.zeros((0,), dtype=state[0].dtype)
        return empty, xp.zeros((0,), dtype=xp.int64), state, empty
    cat = (lambda parts: parts[0] if len(parts) == 1 else xp.concat(parts, axis=0))
    E, index = cat(parts_E), cat(parts_idx)
    if not with_step:
        return E, index, None, None
    new = tuple(cat([p[k] for p in parts_new]) for k in range(len(state)))
    return E, index, new, cat(parts_step)


def _indexes_with_arrays(be):
    """Whether the arrays ``be`` computes on take integer-array indexing and assignment:
    host numpy arrays, and the cupy arrays of the CuPy kernels (a kernel backend runs on
    numpy or cupy only); generic code on any other namespace keeps to the standard."""
    return be.on_host or be.generic() is not be


def _iterate(geom, state, beta, maxiter, tol, be, *, callback=None, progress=False,
             block=_BLOCK, n_patterns=1, to_user=None):
    """The retrieval loop shared by every geometry, on the resolved backend ``be``.

    Where arrays take integer-array indexing (numpy, cupy) only the queries still moving
    are evaluated; elsewhere (array-api-strict) every query is evaluated and converged
    ones are frozen with ``where``. A query that converged gets one last evaluation at its
    final state (energy and nearest pattern) and is then left alone.
    """
    xp, lse_backend, to_input = be.xp, backend_arg(be), be.to_input
    Q = state[0].shape[0]
    gather = _indexes_with_arrays(be)
    nit = xp.zeros((Q,), dtype=xp.int64)
    converged = xp.zeros((Q,), dtype=xp.bool)
    need = xp.ones((Q,), dtype=xp.bool)     # rows evaluated this iteration
    E_cur = xp.zeros((Q,), dtype=state[0].dtype)
    idx_cur = xp.zeros((Q,), dtype=xp.int64)
    trace = []
    status, message = int(Status.MAXITER), (f"maxiter={maxiter} reached before every "
                                            "query converged")
    with Progress(maxiter, "retrieve", enabled=progress) as bar:
        for t in range(maxiter + 1):
            last = t == maxiter
            if gather:
                act = xp.nonzero(need)[0]
                sub = tuple(s[act, ...] for s in state)
            else:
                sub = state
            n_rows = sub[0].shape[0]
            rows = _bw.chunk_rows(n_rows, n_patterns, block)
            E, index, new, step2 = _evaluate(geom, sub, beta, xp, lse_backend, rows,
                                             with_step=not last)
            if gather:
                E_cur, idx_cur = xp.asarray(E_cur, copy=True), xp.asarray(idx_cur, copy=True)
                E_cur[act] = E
                idx_cur[act] = xp.astype(index, xp.int64)
            else:
                E_cur, idx_cur = E, xp.astype(index, xp.int64)
            trace.append(E_cur)
            if last:
                break
            moving = xp.logical_and(need, xp.logical_not(converged))
            if gather:
                mv = moving[act]
                st = [xp.asarray(s, copy=True) for s in state]
                keep = xp.nonzero(mv)[0]
                for k in range(len(st)):
                    st[k][act[keep], ...] = new[k][keep, ...]
                state = tuple(st)
                full_step = xp.zeros((Q,), dtype=step2.dtype)
                full_step[act] = step2
                step2 = full_step
            else:
                state = tuple(_where_rows(moving, n, s, xp) for n, s in zip(new, state))
            nit = nit + xp.astype(moving, xp.int64)
            # both stopping tests in one device -> host copy
            bad = xp.any(xp.logical_and(moving, xp.logical_not(xp.isfinite(step2))))
            bad, still_moving = (bool(f) for f in to_host(xp.stack([bad, xp.any(moving)])))
            if bad:
                status, message = int(Status.NONFINITE), ("a non-finite state appeared "
                                                          "(numerical failure)")
                break
            converged = xp.logical_or(converged,
                                      xp.logical_and(moving, step2 <= tol * tol))
            need = moving
            if progress:  # the count is a device sync: only when it is shown
                bar.update(1, converged=int(xp.sum(xp.astype(converged, xp.int64))))
            if callback is not None:
                user_state = to_user(state) if to_user is not None else state
                if call_callback(callback, x=to_input(user_state[0]), nit=t + 1,
                                 state=user_state, energy=E_cur, converged=converged):
                    status, message = STOPPED_BY_CALLBACK
                    need = xp.ones((Q,), dtype=xp.bool)
                    maxiter = t + 1  # evaluate the final state once, then stop
                    continue
            if not still_moving:
                status, message = int(Status.CONVERGED), "every query converged"
                break
    return state, nit, converged, idx_cur, xp.stack(trace, axis=0), status, message


def _offdiag_scale(M, xp):
    """max |off-diagonal| and max |entry| of a stack of matrices (0, 0 when empty)."""
    if M.shape[0] == 0 or M.shape[-1] == 0:
        return 0.0, 0.0
    d = M.shape[-1]
    eye = xp.eye(d, dtype=M.dtype)
    off = xp.max(xp.abs(M * (1 - eye)))
    return float(off), float(xp.max(xp.abs(M)))


def from_frame(x, name, feature_names=None):
    """pandas input at the boundary: ``(values, labels)`` of a DataFrame / Series (numpy
    values; the labels are a DataFrame's columns), ``(x, None)`` otherwise.

    Raises ``ValueError`` naming ``name`` when a DataFrame's columns differ from the
    ``feature_names`` the memory was built with (a different order of the same columns
    too: the values would be matched by position).
    """
    values, labels = unwrap_frame(x, name)
    if labels is None or np.ndim(values) != 2:
        return values, None
    if feature_names is not None and list(labels) != list(feature_names):
        raise ValueError(f"{name} has the columns {list(labels)}, but the memory stores "
                         f"patterns with the columns {list(feature_names)}")
    return values, labels


def _no_live_output(callback, progress):
    if callback is not None or progress:
        raise ValueError("callback and progress are not available with dask queries (the "
                         "chunks run on the workers); compute the lazy result instead")


def _result(be, single, status, message, nit, conv, index, trace, feature_names=None,
            **arrays):
    out = {} if feature_names is None else {"feature_names": list(feature_names)}
    for k, v in arrays.items():
        if isinstance(v, str):
            out[k] = v
        else:
            out[k] = be.to_input(v[0, ...] if single else v)
    fun = trace[-1, ...]
    if single:
        out.update(nit=int(nit[0]), converged=bool(conv[0]), index=int(index[0]),
                   energy=be.to_input(trace[:, 0]), fun=float(fun[0]))
    else:
        out.update(nit=be.to_input(nit), converged=be.to_input(conv),
                   index=be.to_input(index), energy=be.to_input(trace),
                   fun=be.to_input(fun))
    if "x" not in out and "means" in out:
        out["x"] = out["means"]
    # retrieval converges: spending maxiter before every query converged is no success
    return make_result(status, success=status == Status.CONVERGED, message=message, **out)

