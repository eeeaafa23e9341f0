"""Running the real ``fleetmem`` console script in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

FLEETMEM = str(Path(sys.executable).with_name("fleetmem"))


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETMEM_")}
    env.update({"FLEETMEM_HOME": str(home), "HF_HUB_OFFLINE": "1", **extra})
    return env


def run_cli(
    home: Path, *args: str, stdin: bytes | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [FLEETMEM, *args],
        input=stdin.decode() if stdin is not None else None,
        capture_output=True,
        text=True,
        env=env_for(home),
        timeout=120,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"fleetmem {args} exited {proc.returncode}: {proc.stderr}")
    return proc


def run_json(home: Path, *args: str) -> Any:
    return json.loads(run_cli(home, *args, "--json").stdout)
