"""Import pymilvus without paying for pandas.

``import pymilvus`` imports its ORM, which imports pandas (about 40% of the cold import
here, bench/results/store.md) only to name ``pd.DataFrame`` in annotations and
``isinstance`` checks, and to bind five helpers from ``pandas.api.types``. codeseam never passes DataFrames. When pandas is
not imported yet, stand-ins are put in ``sys.modules`` for the duration of the import only:

- ``DataFrame`` is a class whose ``isinstance`` check asks the real pandas if it is loaded
  (no object can be a DataFrame otherwise) and whose call builds a real DataFrame;
- every other attribute, and every ``pandas.api.types`` helper when called, imports the
  real pandas and forwards to it.

So pymilvus behaves as before, and a later ``import pandas`` gets the real module.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
import warnings
from typing import Any

_STUB_NAMES = ("pandas", "pandas.api", "pandas.api.types")
_lock = threading.Lock()


class _Stub(types.ModuleType):
    pass


def _real(name: str) -> Any:
    for stub_name in _STUB_NAMES:
        if isinstance(sys.modules.get(stub_name), _Stub):
            del sys.modules[stub_name]
    return importlib.import_module(name)


class _DataFrameMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        real = sys.modules.get("pandas")
        return real is not None and not isinstance(real, _Stub) and isinstance(obj, real.DataFrame)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return _real("pandas").DataFrame(*args, **kwargs)


class _PandasStub(_Stub):
    DataFrame: type  # set in _stubs
    api: _ApiStub

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(_real("pandas"), name)


class _ApiStub(_Stub):
    types: _TypesStub  # set in _stubs


class _TypesStub(_Stub):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        def forward(*args: Any, **kwargs: Any) -> Any:
            return getattr(_real("pandas.api.types"), name)(*args, **kwargs)

        forward.__name__ = name
        return forward


def _stubs() -> dict[str, types.ModuleType]:
    pandas, api, api_types = _PandasStub("pandas"), _ApiStub("pandas.api"), _TypesStub("pandas.api.types")
    pandas.DataFrame = _DataFrameMeta("DataFrame", (), {"__module__": "pandas"})
    pandas.api, api.types = api, api_types
    pandas.__path__, api.__path__ = [], []  # packages, so submodule imports resolve
    return {"pandas": pandas, "pandas.api": api, "pandas.api.types": api_types}


def import_pymilvus() -> types.ModuleType:
    """``import pymilvus``, without importing pandas when nothing else has yet."""
    if "pymilvus" in sys.modules:
        return sys.modules["pymilvus"]
    with _lock, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="pkg_resources is deprecated")
        if "pandas" in sys.modules:
            return _without_char_checks(importlib.import_module("pymilvus"))
        installed = _stubs()
        sys.modules.update(installed)
        try:
            return _without_char_checks(importlib.import_module("pymilvus"))
        finally:
            for name, module in installed.items():
                if sys.modules.get(name) is module:
                    del sys.modules[name]


def _without_char_checks(pymilvus: types.ModuleType) -> types.ModuleType:
    """Turn off pymilvus' VARCHAR check on row inserts. It hands each row's string to a loop
    meant for a list of strings, so it walks the string's characters (each of length 1: it can
    never fail) and costs about a fifth of the keyword phase (cProfile on flask: 3.0 of 9.4 s;
    bench/results/keyword-phase.md). codeseam checks every VARCHAR itself before it writes
    (``model.check_varchar``), since Milvus Lite does not."""
    from pymilvus.client import entity_helper

    entity_helper.CHECK_STR_ARRAY = False
    return pymilvus
