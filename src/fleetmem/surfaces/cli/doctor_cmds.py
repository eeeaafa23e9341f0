"""``fleetmem doctor``: a read-only health report, exit 1 when any check fails."""

from __future__ import annotations

import argparse
from typing import Any

from fleetmem.surfaces.cli.common import Handler, emit

_MARK = {"ok": "ok  ", "info": "info", "note": "note", "warn": "WARN", "fail": "FAIL"}


def register(sub: Any) -> dict[str, Handler]:
    p = sub.add_parser("doctor", help="check configuration, store, embeddings and provider")
    p.add_argument("--json", action="store_true")
    return {"doctor": _cmd_doctor}


def _cmd_doctor(app: Any, args: argparse.Namespace) -> int:
    from fleetmem.service.doctor import exit_code, run_checks

    rows = run_checks(app)
    emit(
        args,
        {"checks": [r.to_dict() for r in rows]},
        lambda d: "\n".join(
            f"{_MARK[c['status']]}  {c['name']:<18} {c['detail']}" for c in d["checks"]
        ),
    )
    return exit_code(rows)
