"""Result objects, callbacks and progress bars shared by every solver.

Every solver follows SciPy's conventions:

- it returns :class:`scipy.optimize.OptimizeResult` (or a subclass with methods);
- ``callback(intermediate_result)`` is called once per iteration with an
  ``OptimizeResult`` of the current state; raising ``StopIteration`` ends the run cleanly
  with ``status = 99``-style bookkeeping left to the solver (``stopped_by_callback``);
- ``progress=True`` shows a bar on stderr; nothing is printed otherwise.
"""
import sys
import time

from scipy.optimize import OptimizeResult

__all__ = ["OptimizeResult", "call_callback", "Progress", "STOPPED_BY_CALLBACK"]

#: status code and message solvers use when a callback raised StopIteration
STOPPED_BY_CALLBACK = (99, "stopped by the callback (StopIteration)")


def call_callback(callback, **state):
    """Call ``callback(OptimizeResult(**state))``; return True if it asked to stop.

    A callback may also return ``True`` to stop (the legacy SciPy convention); any other
    exception propagates.
    """
    if callback is None:
        return False
    try:
        answer = callback(OptimizeResult(**state))
    except StopIteration:
        return True
    return answer is True


class Progress:
    """A minimal progress bar on stderr, shown only when ``enabled``.

    Use as a context manager; ``update(n, **info)`` advances it. Redraws at most ten times
    per second so it never costs measurable time in a hot loop.
    """

    def __init__(self, total, desc="", enabled=False, stream=None, width=30):
        self.total = max(int(total), 1)
        self.desc = desc
        self.enabled = bool(enabled)
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.count = 0
        self._last_draw = 0.0
        self._start = time.perf_counter()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def update(self, n=1, **info):
        self.count += n
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self._last_draw >= 0.1 or self.count >= self.total:
            self._last_draw = now
            self._draw(info)

    def _draw(self, info):
        frac = min(self.count / self.total, 1.0)
        filled = int(frac * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        extra = " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                         for k, v in info.items())
        elapsed = time.perf_counter() - self._start
        self.stream.write(f"\r{self.desc} [{bar}] {self.count}/{self.total} "
                          f"{elapsed:.1f}s {extra}")
        self.stream.flush()

    def close(self):
        if self.enabled:
            self._draw({})
            self.stream.write("\n")
            self.stream.flush()
