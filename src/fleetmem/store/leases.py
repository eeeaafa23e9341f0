"""Leases: work that one process of a fleet sharing a store does at a time.

A lease is a row of ``store_leases`` (both stores): its ``holder`` (a tag each process draws
once, see :func:`holder_tag`) has it until ``held_until``. Claiming is one statement under the
store's single writer, so two daemons asking at once never both get it. A daemon killed while
holding a lease loses it when ``held_until`` passes; nothing needs to clean up after it.

Periodic work (``every_s`` > 0) also records when it last finished: the lease is not handed
out again before ``done_at + every_s``, whichever daemon asks, so an hourly pass runs once an
hour across the fleet, not once an hour per daemon.

Times are the callers' clocks (UNIX seconds): hosts of a fleet keep their clocks in step
(NTP), as they must for the jobs' claims and the runs' heartbeats too.
"""

from __future__ import annotations

import os
import secrets
import socket

#: Held by no one: the work it names is free (a lease released without ``done_at`` is deleted).
UPSERT = """
INSERT INTO store_leases (name, holder, held_until, done_at) VALUES ({p}, {p}, {p}, NULL)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, held_until = excluded.held_until
WHERE (store_leases.held_until IS NULL OR store_leases.held_until <= {p}
       OR store_leases.holder = excluded.holder)
  AND (store_leases.done_at IS NULL OR store_leases.done_at + {p} <= {p})
RETURNING holder
"""


def upsert_sql(placeholder: str) -> str:
    """The claim statement with the driver's placeholder (``?`` or ``%s``); its parameters:
    name, holder, held_until, now, every_s, now."""
    return UPSERT.format(p=placeholder)


def holder_tag() -> str:
    """This process's name on the leases it holds: host, process id and a random part (a pid
    reused after a restart must not inherit a dead process's lease)."""
    host = socket.gethostname()[:40] or "host"
    return f"{host}:{os.getpid()}:{secrets.token_hex(4)}"
