"""numpy, imported on first use.

numpy takes about 70 ms to import, and most of fleetmem's short-lived processes never touch
a vector: a Claude Code hook answering with the session's context, ``fleetmem facts list``.
The modules that compute with vectors import ``np`` from here (and the real numpy for the
type checker), so a process pays for numpy only when it first uses it.
"""

from __future__ import annotations

import importlib
import types
from typing import Any


class _OnFirstUse(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        module = importlib.import_module(self.__name__)
        value = getattr(module, name)
        # Later lookups of the same name skip this method.
        setattr(self, name, value)
        return value


np: Any = _OnFirstUse("numpy")
