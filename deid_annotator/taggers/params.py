"""scikit-learn's parameter contract, without importing scikit-learn.

``get_params`` / ``set_params`` as ``sklearn.base.BaseEstimator`` has them: the parameters
are the keyword parameters of the class's ``__init__``, kept as attributes of the same name;
``sklearn.base.clone`` and scikit-learn's tools work with any class that has both. The
taggers do not inherit ``BaseEstimator`` itself because importing scikit-learn costs 0.5 to
3 s, and ``tag`` with a crf, rules or bilstm-crf model starts in 0.3 s without it.
"""
from __future__ import annotations

import inspect
from typing import Any

from ..errors import DeidError


class Parameters:
    """``get_params`` / ``set_params`` over the keyword parameters of ``__init__``."""

    @classmethod
    def param_names(cls) -> list[str]:
        """The names of ``__init__``'s parameters, sorted (as scikit-learn sorts them)."""
        parameters = [p for p in inspect.signature(cls.__init__).parameters.values()
                      if p.name != "self"]
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters):
            raise TypeError(f"{cls.__name__}.__init__ must name its parameters (no *args, "
                            f"**kwargs): they are what get_params returns")
        return sorted(p.name for p in parameters)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The parameters by name; ``deep``: a parameter with parameters of its own adds
        them as ``name__parameter``."""
        out: dict[str, Any] = {}
        for name in self.param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{name}__{k}", v) for k, v in value.get_params().items())
            out[name] = value
        return out

    def set_params(self, **params: Any) -> "Parameters":
        """Set parameters (``name__parameter`` reaches into a parameter's own); an unknown
        name is a DeidError naming the known ones. Returns self."""
        known = self.param_names()
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in known:
                raise DeidError(f"{getattr(self, 'name', '') or type(self).__name__}: unknown "
                                f"parameter {name!r}; known: {', '.join(known)}")
            if sub:
                nested.setdefault(name, {})[sub] = value
            else:
                setattr(self, name, value)
        for name, values in nested.items():
            getattr(self, name).set_params(**values)
        return self

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items())
        return f"{type(self).__name__}({shown})"


__all__ = ["Parameters"]
