"""Where fleetmem's home is: ``$FLEETMEM_HOME``, else ``~/.fleetmem``.

Standard library only, so an agent's hook can find the home (and the daemon's hook socket
in it) without importing the configuration machinery.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def default_home(environ: Mapping[str, str]) -> Path:
    """``$FLEETMEM_HOME`` from ``environ``, else ``~/.fleetmem``; ``~`` expanded via ``HOME``."""
    text = environ.get("FLEETMEM_HOME") or "~/.fleetmem"
    if text == "~" or text.startswith("~/"):
        home = environ.get("HOME") or _account_home()
        return Path(home + text[1:])
    return Path(os.path.expanduser(text) if text.startswith("~") else text)


def _account_home() -> str:
    import pwd  # POSIX only; reached only when HOME is unset

    return pwd.getpwuid(os.getuid()).pw_dir
