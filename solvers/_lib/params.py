"""Option specs: every public solver declares its options once.

A solver lists its options as :class:`Param` entries of an :class:`Options` spec: the name,
a constraint (an interval, a set of choices, a type), the default and a one-line doc. One
call validates the user's values, fills the defaults and returns a frozen config the
solver reads by attribute::

    OPTIONS = Options(
        "BridgeOptions",
        Param("epsilon", Real(low=0, low_open=True), 1.0, "entropic regularisation"),
        Param("n_components", Integer(low=1), 50, "mixture components K"),
        Param("init", Choice("auto", "split", "kmeans++"), "auto", "initialisation"),
        Param("maxiter", Integer(low=1), None, "iteration cap (default: by optimizer)"),
        Param("rng", SEED, None, "random numbers"),
        Param("backend", BACKEND, "auto", "which kernels run"),
    )

    @OPTIONS.entry
    def schrodinger_bridge(x0, x1, *, epsilon=1.0, n_components=50, ...):
        cfg = OPTIONS.validate(epsilon=epsilon, n_components=n_components, ...)
        cfg.epsilon, cfg.n_components          # validated and typed (float, int, ...)

A default of ``None`` means "chosen by the solver" (the solver fills it, e.g. with
``cfg.replace(maxiter=500)``); ``None`` is then accepted from the user too.

Array arguments are declared with :class:`Array` (number of dimensions, whether NaN and inf
are errors) and converted after the backend is resolved, with :meth:`Options.arrays`.
What a constraint cannot say (shapes that must match another argument, SPD matrices,
objectives that misbehave) stays in the solver's own checks.

The same declaration drives the tests: :meth:`Constraint.invalid_values` gives the bad
values of a scalar option (below or above the interval, NaN, a string, an unknown choice),
and ``tests/test_bad_input.py`` turns every spec of a public entry point (``__options__``,
set by :meth:`Options.entry`) into bad-input cells. :meth:`Options.doc` writes numpydoc
parameter lines for docstrings that want them.
"""
import dataclasses
import math
import numbers

import numpy as np

from .backend import BACKENDS
from .validation import as_float_array, check_finite

__all__ = ["Options", "Param", "Real", "Integer", "Choice", "Flag", "Callable", "Seed",
           "Workers", "Nothing", "Array", "POSITIVE", "NONNEGATIVE", "PROBABILITY", "COUNT",
           "NONE", "SEED", "BACKEND", "CALLBACK", "WORKERS", "FLAG"]


class Constraint:
    """What values an option takes. Subclasses implement :meth:`check` and
    :meth:`invalid_values`, and describe themselves in :attr:`kind` and :meth:`describe`."""

    #: the numpydoc type of the option ("float", "int", "str", ...)
    kind = "object"

    def check(self, value, name):
        """Return ``value`` validated and normalised, or raise ``TypeError`` / ``ValueError``
        naming ``name``."""
        raise NotImplementedError

    def invalid_values(self):
        """``{kind: bad value}``: values this constraint must reject (for tests)."""
        return {}

    def describe(self):
        """A short human description for docs and messages ("> 0", "in [0, 1)")."""
        return ""


def _is_real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


class Real(Constraint):
    """A real number in an interval; returned as ``float``.

    Parameters
    ----------
    low, high : float, optional
        Interval ends (``None``: unbounded).
    low_open, high_open : bool
        Whether the ends are excluded.
    finite : bool
        Whether ``+-inf`` is rejected (NaN always is).
    """

    kind = "float"

    def __init__(self, low=None, high=None, *, low_open=False, high_open=False, finite=True):
        self.low, self.high = low, high
        self.low_open, self.high_open, self.finite = low_open, high_open, finite

    def _inside(self, v):
        if self.low is not None and (v < self.low or (self.low_open and v == self.low)):
            return False
        return self.high is None or not (v > self.high or (self.high_open and v == self.high))

    def describe(self):
        if self.low is not None and self.high is not None:
            left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
            return f"in {left}{self.low:g}, {self.high:g}{right}"
        if self.low is not None:
            return f"{'>' if self.low_open else '>='} {self.low:g}"
        if self.high is not None:
            return f"{'<' if self.high_open else '<='} {self.high:g}"
        return "finite" if self.finite else ""

    def check(self, value, name):
        if not _is_real(value):
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
        value = float(value)
        if math.isnan(value) or (self.finite and math.isinf(value)):
            raise ValueError(f"{name} must be finite, got {value}")
        if not self._inside(value):
            raise ValueError(f"{name} must be {self.describe()}, got {value}")
        return value

    def invalid_values(self):
        bad = {"nan": float("nan"), "str": "1", "bool": True}
        if self.finite:
            bad["inf"] = float("inf")
        if self.low is not None:
            bad["below"] = float(self.low) if self.low_open else float(self.low) - 1.0
        if self.high is not None:
            bad["above"] = float(self.high) if self.high_open else float(self.high) + 1.0
        return bad


class Integer(Constraint):
    """An integer (not a bool) in ``[low, high]``; returned as ``int``."""

    kind = "int"

    def __init__(self, low=None, high=None):
        self.low, self.high = low, high

    def describe(self):
        if self.low is not None and self.high is not None:
            return f"in [{self.low}, {self.high}]"
        if self.low is not None:
            return f">= {self.low}"
        return f"<= {self.high}" if self.high is not None else ""

    def check(self, value, name):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
        value = int(value)
        if (self.low is not None and value < self.low) or \
                (self.high is not None and value > self.high):
            raise ValueError(f"{name} must be {self.describe()}, got {value}")
        return value

    def invalid_values(self):
        bad = {"float": 2.5, "str": "3", "bool": True}
        if self.low is not None:
            bad["below"] = self.low - 1
        if self.high is not None:
            bad["above"] = self.high + 1
        return bad


class Choice(Constraint):
    """One of a fixed set of values (usually strings)."""

    kind = "str"

    def __init__(self, *choices):
        self.choices = tuple(choices)

    def describe(self):
        return "{" + ", ".join(repr(c) for c in self.choices) + "}"

    def check(self, value, name):
        try:
            known = value in self.choices
        except TypeError:  # e.g. an unhashable or array value compared elementwise
            known = False
        if not known or isinstance(value, (np.ndarray, list)):
            raise ValueError(f"{name} must be one of {self.choices}, got {value!r}")
        return value

    def invalid_values(self):
        bad = {"unknown": "no-such-option"}
        if 3 not in self.choices:
            bad["int"] = 3
        return bad


class Flag(Constraint):
    """``True`` or ``False`` (numpy bools and the integers 0 / 1 too); returned as bool."""

    kind = "bool"

    def check(self, value, name):
        if isinstance(value, (bool, np.bool_)) or (
                isinstance(value, numbers.Integral) and value in (0, 1)):
            return bool(value)
        raise TypeError(f"{name} must be True or False, got {value!r}")

    def invalid_values(self):
        return {"str": "yes", "int": 2}


class Callable(Constraint):
    """A callable (``None`` only when the default is ``None``)."""

    kind = "callable"

    def check(self, value, name):
        if not callable(value):
            raise TypeError(f"{name} must be callable, got {type(value).__name__}")
        return value

    def invalid_values(self):
        return {"notcallable": 3.0}


class Seed(Constraint):
    """SciPy's ``rng``: ``None``, a non-negative int seed or a ``numpy.random.Generator``.
    Returned as given (the solver turns it into a Generator with ``check_rng``)."""

    kind = "None, int or numpy.random.Generator"

    def check(self, value, name):
        if value is None or isinstance(value, np.random.Generator):
            return value
        if isinstance(value, (numbers.Integral,)) and not isinstance(value, (bool, np.bool_)):
            if value < 0:
                raise ValueError(f"{name} seed must be non-negative, got {value}")
            return int(value)
        raise TypeError(f"{name} must be None, an int seed or a numpy.random.Generator, got "
                        f"{type(value).__name__}")

    def invalid_values(self):
        return {"str": "seed", "neg": -1}


class Workers(Constraint):
    """``workers=``: ``1`` (here), an int ``k > 1`` or ``-1`` (a process pool), or a map-like
    callable. Returned as given (``_lib.parallel.check_workers`` builds the map)."""

    kind = "int or map-like callable"

    def check(self, value, name):
        if callable(value):
            return value
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{name} must be an int or a map-like callable, got {value!r}")
        if value == 0 or value < -1:
            raise ValueError(f"{name} must be a positive int, -1 (all cores) or a map-like "
                             f"callable, got {value}")
        return int(value)

    def invalid_values(self):
        return {"zero": 0, "float": 1.5, "str": "2"}


class Nothing(Constraint):
    """Only ``None`` (in a tuple of constraints: "or None", e.g. ``(POSITIVE, NONE)``)."""

    kind = "None"

    def check(self, value, name):
        if value is not None:
            raise TypeError(f"{name} must be None, got {type(value).__name__}")
        return None


class Array(Constraint):
    """A real floating array (converted by :meth:`Options.arrays` once the backend is known).

    Parameters
    ----------
    ndim : int or tuple of int, optional
        Allowed numbers of dimensions.
    finite : bool
        NaN and inf are errors (``True``) or propagate (``False``, e.g. log-sum-exp input).
    empty : bool
        Whether a size-0 array is allowed (the tests then expect a finite result or a clear
        error; ``False`` documents that it is rejected).
    """

    kind = "array_like"

    def __init__(self, ndim=None, *, finite=True, empty=True):
        self.ndim, self.finite, self.empty = ndim, finite, empty

    def check(self, value, name, be=None):
        if be is None:
            raise TypeError(f"array option {name!r} needs the backend: use Options.arrays")
        x = as_float_array(be.to_device(value), be.xp, name, ndim=self.ndim)
        if self.finite:
            check_finite(x, be.xp, name)
        if not self.empty and math.prod(x.shape) == 0:
            raise ValueError(f"{name} must not be empty, got shape {tuple(x.shape)}")
        return x


#: shared constraints (reuse them: one declaration, one message)
POSITIVE = Real(low=0, low_open=True)
NONNEGATIVE = Real(low=0)
PROBABILITY = Real(0, 1, low_open=True, high_open=True)
COUNT = Integer(low=1)
NONE = Nothing()
SEED = Seed()
CALLBACK = Callable()
WORKERS = Workers()
FLAG = Flag()
#: ``backend=`` (whether cupy can run is decided when the backend is resolved)
BACKEND = Choice(*BACKENDS)

_REQUIRED = object()


@dataclasses.dataclass(frozen=True)
class Param:
    """One option: ``name``, its ``constraint``, the ``default`` and a one-line ``doc``.

    A default of ``None`` also lets the user pass ``None`` (the solver fills it in); a
    constraint may be a tuple of constraints (the first that accepts the value wins).
    """

    name: str
    constraint: object
    default: object = _REQUIRED
    doc: str = ""

    @property
    def required(self):
        return self.default is _REQUIRED

    @property
    def constraints(self):
        c = self.constraint
        return tuple(c) if isinstance(c, (tuple, list)) else (c,)

    def check(self, value, be=None):
        if value is None and self.default is None:
            return None
        errors = []
        for constraint in self.constraints:
            try:
                if isinstance(constraint, Array):
                    return constraint.check(value, self.name, be)
                return constraint.check(value, self.name)
            except (TypeError, ValueError) as exc:
                errors.append(exc)
        if len(errors) == 1:
            raise errors[0]
        raise TypeError(f"{self.name} must be " + " or ".join(
            _describe(c) for c in self.constraints) + f", got {value!r}")

    def invalid_values(self):
        """Bad values every constraint of this option rejects (for tests)."""
        if any(isinstance(c, Array) for c in self.constraints):
            return {}
        merged = {}
        for constraint in self.constraints:
            for kind, value in constraint.invalid_values().items():
                if not any(_accepts(c, value, self.name) for c in self.constraints):
                    merged.setdefault(kind, value)
        if self.default is not None and not self.required:
            merged.setdefault("none", None)
            if _accepts_any(self, None):
                merged.pop("none")
        return merged

    def doc_lines(self):
        """numpydoc lines: ``name : type, constraint, default ...`` and the doc."""
        kinds = " or ".join(dict.fromkeys(c.kind for c in self.constraints))
        head = f"{self.name} : {kinds}"
        described = ", ".join(d for d in (c.describe() for c in self.constraints) if d)
        if described:
            head += f", {described}"
        if not self.required:
            head += ", optional" if self.default is None else f", default {self.default!r}"
        return [head] + ([f"    {self.doc}"] if self.doc else [])


def _describe(constraint):
    return f"{constraint.kind} {constraint.describe()}".strip()


def _accepts(constraint, value, name):
    if isinstance(constraint, Array):
        return True
    try:
        constraint.check(value, name)
        return True
    except (TypeError, ValueError):
        return False


def _accepts_any(param, value):
    return any(_accepts(c, value, param.name) for c in param.constraints)


class Options:
    """A solver's declared options and the frozen config class they fill.

    Parameters
    ----------
    name : str
        Name of the config class (``"LightSBOptions"``).
    *params : Param
        The options, in the order the solver's signature lists them.
    """

    def __init__(self, name, *params):
        self.name = name
        self.params = {p.name: p for p in params}
        if len(self.params) != len(params):
            raise ValueError(f"{name}: an option is declared twice")
        self.config_class = dataclasses.make_dataclass(
            name, [(p.name, object) for p in params if not _is_array(p)], frozen=True,
            namespace={"replace": dataclasses.replace, "as_dict": _as_dict})

    def __iter__(self):
        return iter(self.params.values())

    def __contains__(self, name):
        return name in self.params

    def validate(self, **values):
        """Check the scalar options given, fill the defaults of the others, and return the
        frozen config (read by attribute; ``cfg.replace(name=value)`` fills a derived
        default).

        Raises
        ------
        TypeError, ValueError
            A value outside its constraint, naming the option; ``TypeError`` for a name
            the spec does not declare or an array option (see :meth:`arrays`).
        """
        unknown = sorted(set(values) - set(self.params))
        if unknown:
            raise TypeError(f"{self.name}: no option(s) {unknown}")
        filled = {}
        for param in self.params.values():
            if _is_array(param):
                if param.name in values:
                    raise TypeError(f"{self.name}: {param.name!r} is an array; use arrays()")
                continue
            if param.name in values:
                filled[param.name] = param.check(values[param.name])
            elif param.required:
                raise TypeError(f"{self.name}: option {param.name!r} is required")
            else:
                filled[param.name] = param.default
        return self.config_class(**filled)

    def arrays(self, be, **arrays):
        """Convert the array options given (to ``be.xp``, checked) and return them as a
        tuple in the order given; ``None`` passes through for optional arrays."""
        out = []
        for name, value in arrays.items():
            param = self.params.get(name)
            if param is None or not _is_array(param):
                raise TypeError(f"{self.name}: {name!r} is not a declared array option")
            out.append(None if value is None and not param.required
                       else param.check(value, be))
        return tuple(out)

    def entry(self, func):
        """Decorator marking ``func`` as taking these options (``func.__options__``)."""
        func.__options__ = self
        return func

    def doc(self, *names):
        """numpydoc ``Parameters`` lines for ``names`` (all options when none given)."""
        names = names or tuple(self.params)
        return "\n".join(line for n in names for line in self.params[n].doc_lines())


def _as_dict(config):
    """The config's options as a plain dict (values not copied)."""
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}


def _is_array(param):
    return any(isinstance(c, Array) for c in param.constraints)
