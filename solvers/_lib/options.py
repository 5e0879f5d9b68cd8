"""Option checking for the method routers (``minimize``, ``learn_dag``)."""
import inspect


def check_options(method, func, options, positional=()):
    """Raise ``TypeError`` if ``options`` holds a keyword ``func`` does not accept.

    Parameters
    ----------
    method : str
        Method name, for the message.
    func : callable
        The solver the options are for; ``**kwargs`` solvers accept anything.
    options : dict
        The user's options.
    positional : tuple of str
        Parameters the router passes itself (``fun``, ``x0``, ``X``); not options.
    """
    params = inspect.signature(func).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    allowed = [p for p, v in params.items()
               if v.kind in (inspect.Parameter.KEYWORD_ONLY,
                             inspect.Parameter.POSITIONAL_OR_KEYWORD)
               and p not in positional]
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(f"unknown option(s) {unknown} for method {method!r}; "
                        f"it accepts {sorted(allowed)}")
