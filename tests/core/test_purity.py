"""core/ stays pure: it imports only the standard library, core/ and the errors module."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "src" / "fleetmem" / "core"
# Modules that do I/O, read the clock or the environment, or produce randomness.
FORBIDDEN_STDLIB = {
    "os", "sys", "time", "random", "secrets", "subprocess", "socket", "sqlite3", "urllib",
    "http", "asyncio", "threading", "shutil", "tempfile", "pathlib", "io", "uuid", "logging",
}  # fmt: skip


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_core_imports_are_pure() -> None:
    offenders = []
    for path in sorted(CORE.glob("*.py")):
        for name in _imports(path):
            top = name.split(".")[0]
            if name.startswith("fleetmem."):
                if not (name.startswith("fleetmem.core") or name == "fleetmem.errors"):
                    offenders.append(f"{path.name}: {name}")
            elif top not in sys.stdlib_module_names:
                offenders.append(f"{path.name}: {name} (third-party)")
            elif name in FORBIDDEN_STDLIB or top in FORBIDDEN_STDLIB:
                offenders.append(f"{path.name}: {name} (I/O, clock or randomness)")
    assert offenders == []


def test_the_walker_catches_an_offender(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import time\nfrom fleetmem.store import base\n", encoding="utf-8")
    assert _imports(bad) == ["time", "fleetmem.store"]
