"""Every ``fleetmem facts`` action, defined once: how it runs at this machine and how it is sent
to a daemon with ``--server``.

``facts_cmds`` dispatches the local side and ``remote_ops`` the remote side from this one table,
so an action added to one side cannot be forgotten on the other. An action the API has no route
for (``sweep``) has no remote operation: through a daemon it is refused, never run against a
local store by surprise.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from fleetmem.surfaces.cli import facts_cmds as local
from fleetmem.surfaces.cli import remote_facts as remote

#: ``(FactService, args, actor) -> exit code``, run against this machine's store.
LocalHandler = Callable[[Any, argparse.Namespace, Any], int]


@dataclass(frozen=True, slots=True)
class FactAction:
    """One action: its local handler, and its operation through the daemon (None: no route)."""

    local: LocalHandler
    remote: remote.Operation | None


FACT_ACTIONS: Mapping[str, FactAction] = MappingProxyType(
    {
        "add": FactAction(local._add, remote._add),
        "list": FactAction(local._list, remote._list),
        "search": FactAction(local._search, remote._search),
        "show": FactAction(local._show, remote._show),
        "edit": FactAction(local._edit, remote._edit),
        "forget": FactAction(local._forget, remote._forget),
        "restore": FactAction(local._restore, remote._restore),
        "pin": FactAction(local._pin, remote._pin),
        "unpin": FactAction(local._pin, remote._pin),
        "review": FactAction(local._review, remote._review),
        "history": FactAction(local._history, remote._history),
        "votes": FactAction(local._votes, remote._votes),
        "forget-all": FactAction(local._forget_all, remote._forget_all),
        "trace": FactAction(local._trace, remote._trace),
        "sweep": FactAction(local._sweep, None),
    }
)

#: ``facts ACTION`` -> its operation through the daemon, for ``remote_ops.OPERATIONS``.
FACT_OPERATIONS: Mapping[str, remote.Operation] = MappingProxyType(
    {
        f"facts {name}": remote.rate_limited_as_locally(action.remote)
        for name, action in FACT_ACTIONS.items()
        if action.remote is not None
    }
)
