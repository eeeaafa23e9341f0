"""requirements.lock, the exact set `make` installs: it must agree with pyproject.toml's
ranges, carry a hash for every pin, and be what `make lock` would write today."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements.lock"
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", re.M)


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(text: str) -> dict[str, str]:
    return {_norm(name): version for name, version in PIN.findall(text)}


def _declared() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [
        Requirement(r) for r in [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    ]


def test_every_declared_dependency_is_a_range_and_locked_inside_it() -> None:
    locked = pins(LOCK.read_text())
    for req in _declared():
        ops = {spec.operator for spec in req.specifier}
        assert ops == {">=", "<"}, f"{req}: a compatible range >=X,<NEXT_MAJOR, not a pin"
        assert _norm(req.name) in locked, f"{req.name} is not in requirements.lock"
        assert Version(locked[_norm(req.name)]) in req.specifier, (req, locked[_norm(req.name)])


def test_every_pin_carries_a_hash() -> None:
    # Blocks start at a pin and run to the next one; each needs at least one sha256.
    blocks = re.split(r"^(?=[A-Za-z0-9])", LOCK.read_text(), flags=re.M)
    pinned = [b for b in blocks if PIN.match(b)]
    assert len(pinned) == len(pins(LOCK.read_text())) > 50
    assert all("--hash=sha256:" in b for b in pinned)


@pytest.mark.slow
def test_the_lock_is_what_make_lock_writes_now(tmp_path: Path) -> None:
    from uv import find_uv_bin

    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^lock:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert recipe and "uv pip compile pyproject.toml" in recipe[1]
    fresh = tmp_path / "requirements.lock"
    shutil.copy(LOCK, fresh)  # as `make lock`: the current pins are kept where they fit
    proc = subprocess.run(
        [
            str(find_uv_bin()), "pip", "compile", str(ROOT / "pyproject.toml"), "--extra", "dev",
            "--generate-hashes", "--universal", "--python-version", "3.11", "-o", str(fresh),
            "--python", sys.executable, "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert pins(fresh.read_text()) == pins(LOCK.read_text()), "run `make lock` and commit it"
