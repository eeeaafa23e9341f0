"""Every install path the README gives, run for real from a copy of this checkout into fresh
temporary locations: the wheel's metadata, then ``pipx install .``, ``uv tool install .`` and
``python -m pip install .`` each followed by ``fleetmem --version``, a first fact, a recall
and the doctor's embeddings check (full function: semantic search, not words only).

The installs resolve dependencies from the package index (PyPI is reachable here and in CI),
so they use pyproject.toml's ranges, not requirements.lock: what a user of these tools gets.
"""

from __future__ import annotations

import email.parser
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from fleetmem import __version__

ROOT = Path(__file__).resolve().parents[2]

#: The README's "Install as a command" block, line for line (tests/test_readme.py checks it).
INSTALL_COMMANDS = ("pipx install .", "uv tool install .", "python -m pip install .")

FACT = "The billing ledger tests need TZ=UTC to pass"
REPO = "github.com/acme/api"
INSTALL_TIMEOUT_S = 900


def _uv() -> str:
    from uv import find_uv_bin

    return str(find_uv_bin())


def copy_checkout(dest: Path) -> Path:
    """The tracked and untracked-but-not-ignored files of this checkout, copied, so builds
    never write build/ or *.egg-info into the working tree."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in filter(None, listed):
        rel = raw.decode()
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_checkout(tmp_path_factory.mktemp("checkout"))


@pytest.mark.slow
@pytest.mark.timeout(INSTALL_TIMEOUT_S)
def test_the_wheel_carries_licence_urls_classifiers_and_ranges(
    checkout: Path, tmp_path: Path
) -> None:
    out = tmp_path / "dist"
    subprocess.run(
        [_uv(), "build", "--wheel", "--out-dir", str(out), str(checkout)],
        check=True,
        capture_output=True,
        timeout=INSTALL_TIMEOUT_S,
        env={**os.environ, "UV_PYTHON": sys.executable, "UV_PYTHON_DOWNLOADS": "never"},
    )
    [wheel] = out.glob("fleetmem-*.whl")
    assert wheel.name == f"fleetmem-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        info = f"fleetmem-{__version__}.dist-info"
        meta = email.parser.Parser().parsestr(zf.read(f"{info}/METADATA").decode())
        licence = zf.read(f"{info}/licenses/LICENSE").decode()
        entry_points = zf.read(f"{info}/entry_points.txt").decode()
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    assert meta["License-Expression"] == "Apache-2.0"
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Homepage", "Documentation", "Repository", "Issues"} <= set(urls)
    classifiers = meta.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert "License :: OSI Approved :: Apache Software License" not in classifiers  # PEP 639
    requires = [r for r in meta.get_all("Requires-Dist") or [] if "extra ==" not in r]
    # Compatible ranges (>=tested,<next major), so fleetmem installs beside other packages.
    assert requires and all(
        ">=" in r and re.search(r"<\d", r) and "==" not in r for r in requires
    ), requires
    assert "fleetmem = fleetmem.surfaces.cli.main:main" in entry_points
    assert "fleetmem/__main__.py" in names and "fleetmem/py.typed" in names
    assert any(n.startswith("fleetmem/surfaces/web/templates/") for n in names)


def _tool_env(tmp: Path) -> tuple[dict[str, str], Path]:
    """An environment whose installs all land under ``tmp``; returns it and the bin dir."""
    shims, bin_dir = tmp / "shims", tmp / "bin"
    shims.mkdir()
    bin_dir.mkdir()
    # `pipx` and `uv` as the README runs them, from this test environment's packages.
    (shims / "pipx").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pipx "$@"\n')
    (shims / "uv").write_text(f'#!/bin/sh\nexec "{_uv()}" "$@"\n')
    for shim in shims.iterdir():
        shim.chmod(0o755)
    venv = tmp / "venv"  # a fresh virtualenv for `python -m pip install .`
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEETMEM_", "VIRTUAL_"))}
    env.update(
        {
            "PATH": os.pathsep.join([str(venv / "bin"), str(bin_dir), str(shims), env["PATH"]]),
            "HOME": str(tmp / "user"),
            "FLEETMEM_HOME": str(tmp / "fleetmem-home"),
            "PIPX_HOME": str(tmp / "pipx"),
            "PIPX_BIN_DIR": str(bin_dir),
            "PIPX_MAN_DIR": str(tmp / "man"),
            "UV_TOOL_DIR": str(tmp / "uv-tools"),
            "UV_TOOL_BIN_DIR": str(bin_dir),
            "UV_PYTHON": sys.executable,
            "UV_PYTHON_DOWNLOADS": "never",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "HF_HUB_OFFLINE": "1",
        }
    )
    (tmp / "user").mkdir()
    return env, bin_dir


def _sh(command: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    assert proc.returncode == 0, f"{command} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    return proc


@pytest.mark.slow
@pytest.mark.timeout(2 * INSTALL_TIMEOUT_S)
@pytest.mark.parametrize("command", INSTALL_COMMANDS)
def test_install_path_gives_a_working_fleetmem(
    command: str, checkout: Path, tmp_path: Path
) -> None:
    env, bin_dir = _tool_env(tmp_path)
    _sh(command, env, checkout)
    where = _sh("command -v fleetmem", env, tmp_path).stdout.strip()
    expected_dir = tmp_path / "venv" / "bin" if command.startswith("python") else bin_dir
    assert Path(where).parent == expected_dir  # this install's command, not another one
    assert _sh("fleetmem --version", env, tmp_path).stdout.strip() == f"fleetmem {__version__}"
    if command.startswith("python"):  # the module form, in the same virtualenv
        module = _sh("python -m fleetmem --version", env, tmp_path).stdout.strip()
        assert module == f"fleetmem {__version__}"

    # Full function: the offline embedder loads (model and tokenizer) in this install.
    doctor = json.loads(_sh("fleetmem doctor --json || true", env, tmp_path).stdout)
    [embeddings] = [c for c in doctor["checks"] if c["name"] == "embeddings"]
    assert embeddings["status"] == "ok", embeddings["detail"]

    added = json.loads(
        _sh(f'fleetmem facts add "{FACT}" --scope project:{REPO} --json', env, tmp_path).stdout
    )
    recalled = json.loads(
        _sh(f'fleetmem recall "ledger tests timezone" --repo {REPO} --json', env, tmp_path).stdout
    )
    assert [f["id"] for f in recalled["facts"]] == [added["fact"]["id"]]
    assert recalled["facts"][0]["body"] == FACT
