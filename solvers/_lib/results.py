"""The one result and callback contract, and the progress bar, shared by every solver.

Every solver follows SciPy's conventions:

- it returns :class:`scipy.optimize.OptimizeResult` (or a subclass with methods), built by
  :func:`make_result`, with a :class:`Status` code and its message;
- ``success`` has SciPy's meaning: ``False`` when the callback stopped the run
  (``status = 99``, as SciPy's ``minimize``) or a value went non-finite; ``True`` when it
  converged or reached a target; for the budget statuses (``MAXITER``, ``MAXFEV``) the
  solver says which it means (a fixed-budget stochastic method succeeds when it spends its
  budget; a convergence-based one does not);
- ``callback(intermediate_result)`` is called through :func:`call_callback` with an
  ``OptimizeResult`` whose ``x`` is the current iterate as an array of the input's
  namespace; raising ``StopIteration`` (or returning ``True``) stops the run;
- ``progress=True`` shows a bar (``tqdm.auto`` when installed, so it renders in notebooks;
  a plain stderr bar otherwise); nothing is printed otherwise.
"""
import enum
import sys
import time

from scipy.optimize import OptimizeResult

__all__ = ["OptimizeResult", "Status", "make_result", "call_callback", "Progress",
           "STOPPED_BY_CALLBACK"]


class Status(enum.IntEnum):
    """Status codes shared by every solver (``result.status``)."""

    CONVERGED = 0
    MAXITER = 1
    MAXFEV = 2
    TARGET = 3
    NONFINITE = 4
    CALLBACK = 99

    @property
    def message(self):
        return _MESSAGES[self]


_MESSAGES = {
    Status.CONVERGED: "converged",
    Status.MAXITER: "maximum number of iterations reached",
    Status.MAXFEV: "maximum number of function evaluations reached",
    Status.TARGET: "target value reached",
    Status.NONFINITE: "stopped: a non-finite value was encountered",
    Status.CALLBACK: "stopped by the callback (StopIteration)",
}

#: ``(status, message)`` a solver reports when the callback stopped it (kept for callers
#: written before :class:`Status`)
STOPPED_BY_CALLBACK = (int(Status.CALLBACK), Status.CALLBACK.message)

_ALWAYS_FAILED = (Status.NONFINITE, Status.CALLBACK)


def make_result(status, *, success=None, message=None, result_class=OptimizeResult,
                **fields):
    """Build a solver's result under the shared contract.

    Parameters
    ----------
    status : Status or int
        One of :class:`Status`.
    success : bool, optional
        Required for ``MAXITER`` / ``MAXFEV`` (the solver says whether spending the
        budget is success); defaults to ``True`` for ``CONVERGED`` / ``TARGET``; always
        ``False`` for ``NONFINITE`` and ``CALLBACK`` (passing ``True`` is an error).
    message : str, optional
        Defaults to the status' message; a solver may add detail
        (``"non-finite objective at iteration 12"``).
    result_class : type
        ``OptimizeResult`` or a subclass.
    **fields
        ``x``, ``fun``, ``nit``, ``nfev`` and solver-specific fields.
    """
    status = Status(status)
    if status in _ALWAYS_FAILED:
        if success:
            raise ValueError(f"status {status.name} cannot be a success")
        success = False
    elif success is None:
        if status in (Status.MAXITER, Status.MAXFEV):
            raise ValueError(f"status {status.name}: the solver must say whether it is a "
                             "success")
        success = True
    return result_class(status=int(status), success=bool(success),
                        message=message if message is not None else status.message,
                        **fields)


def call_callback(callback, **state):
    """Call ``callback(OptimizeResult(**state))``; return True if it asked to stop.

    A callback may raise ``StopIteration`` (SciPy's convention) or return ``True`` (the
    legacy one) to stop; any other exception propagates.
    """
    if callback is None:
        return False
    try:
        answer = callback(OptimizeResult(**state))
    except StopIteration:
        return True
    return answer is True


class Progress:
    """A progress bar shown only when ``enabled``: ``tqdm.auto`` if installed, else plain.

    Use as a context manager; ``update(n, **info)`` advances it (never past ``total``) and
    shows ``info`` as a postfix. The plain fallback redraws at most ten times a second and
    prints its final line once.
    """

    def __init__(self, total, desc="", enabled=False, stream=None, width=30):
        self.total = max(int(total), 1)
        self.desc = desc
        self.enabled = bool(enabled)
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.count = 0
        self._bar = _tqdm_bar(self.total, desc, self.stream) if self.enabled else None
        self._last_draw = 0.0
        self._drawn_final = False
        self._start = time.perf_counter()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def update(self, n=1, **info):
        n = max(min(n, self.total - self.count), 0)
        self.count += n
        if not self.enabled:
            return
        if self._bar is not None:
            if info:
                self._bar.set_postfix(info, refresh=False)
            self._bar.update(n)
            return
        now = time.perf_counter()
        if now - self._last_draw >= 0.1:
            self._last_draw = now
            self._draw(info)

    def _draw(self, info):
        frac = self.count / self.total
        filled = int(frac * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        extra = " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                         for k, v in info.items())
        elapsed = time.perf_counter() - self._start
        self.stream.write(f"\r{self.desc} [{bar}] {self.count}/{self.total} "
                          f"{elapsed:.1f}s {extra}")
        self.stream.flush()

    def close(self):
        if not self.enabled or self._drawn_final:
            return
        self._drawn_final = True
        if self._bar is not None:
            self._bar.close()
            return
        self._draw({})
        self.stream.write("\n")
        self.stream.flush()


def _tqdm_bar(total, desc, stream):
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=desc, file=stream, leave=True, mininterval=0.1)
