"""CLI manners: --version, shell completion, broken pipes, NO_COLOR, --json everywhere, and
the daemon's startup (a busy port refused before anything is printed; "serving on" only once
the port accepts). Real subprocesses, real shells, real sockets."""

from __future__ import annotations

import argparse
import os
import pty
import select
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from fleetmem import __version__
from fleetmem.surfaces.cli.commandline import COMPLETION_SHELLS, _parser
from tests.conftest import write_config
from tests.surfaces.cli_helpers import FLEETMEM, env_for, run_cli
from tests.surfaces.test_http import free_port

VECTORS_OFF = '[model_api]\nembedding_model = ""\n'
ANSI = "\x1b["

#: Leaf commands that print no data record and so take no --json: the daemon (a log),
#: the stdio MCP server and agent hooks (protocol streams), completion (a shell script) and
#: the interactive terminal screen.
NO_JSON = {"serve", "mcp", "hook", "completion", "tui"}


Parsers = dict[str, argparse.ArgumentParser]


def _leaves(parser: argparse.ArgumentParser, prefix: str = "") -> Parsers:
    out: Parsers = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                nested = _leaves(sub, f"{prefix}{name} ")
                out.update(nested or {f"{prefix}{name}": sub})
    return out


def test_version_from_the_script_and_from_python_m(tmp_path: Path) -> None:
    script = run_cli(tmp_path, "--version")
    module = subprocess.run(
        [sys.executable, "-m", "fleetmem", "--version"],
        capture_output=True,
        text=True,
        env=env_for(tmp_path),
        timeout=60,
    )
    assert script.stdout.strip() == module.stdout.strip() == f"fleetmem {__version__}"


def test_every_data_command_takes_json() -> None:
    parser, _ = _parser()
    leaves = _leaves(parser)
    assert len(leaves) > 40  # the audit really walked the command tree
    missing = sorted(
        name
        for name, sub in leaves.items()
        if name not in NO_JSON and not any("--json" in a.option_strings for a in sub._actions)
    )
    assert missing == []
    assert set(leaves) >= NO_JSON  # every exemption names a real command


@pytest.mark.parametrize("args", [("status",), ("files", "show", "about_you", "--preview")])
def test_a_closed_pipe_ends_quietly(home: Path, args: tuple[str, ...]) -> None:
    write_config(home, VECTORS_OFF)
    proc = subprocess.Popen(
        [FLEETMEM, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env_for(home)
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first byte is written
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 141, err
    assert err == ""


def test_head_in_a_real_shell_pipeline_sees_no_traceback(home: Path) -> None:
    write_config(home, VECTORS_OFF)
    # `head -n 0` leaves at once, so the write always meets a closed pipe.
    line = f"set -o pipefail; '{FLEETMEM}' files show about_you --preview | head -n 0"
    shell = subprocess.run(
        ["bash", "-c", line], capture_output=True, text=True, env=env_for(home), timeout=60
    )
    assert (shell.returncode, shell.stdout, shell.stderr) == (141, "", "")


def _run_in_pty(home: Path, *args: str, **env: str) -> tuple[int, str]:
    """Run fleetmem with stdout and stderr on a pseudo-terminal; return (code, output)."""
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [FLEETMEM, *args],
        stdout=secondary,
        stderr=secondary,
        stdin=subprocess.DEVNULL,
        env={**env_for(home), "TERM": "xterm", **env},
    )
    os.close(secondary)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([primary], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(primary, 4096)
        except OSError:  # EIO: the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    os.close(primary)
    return proc.wait(timeout=60), b"".join(chunks).decode(errors="replace")


def test_errors_are_coloured_on_a_terminal_unless_no_color(home: Path) -> None:
    write_config(home, VECTORS_OFF)
    bad = ("recall", "ledger", "--repo", "github.com/acme/api", "--limit", "0")
    code, coloured = _run_in_pty(home, *bad)
    assert code == 2 and "fleetmem: error:" in coloured and ANSI in coloured
    code, plain = _run_in_pty(home, *bad, NO_COLOR="1")
    assert code == 2 and "fleetmem: error:" in plain and ANSI not in plain
    piped = run_cli(home, *bad, check=False)  # not a terminal: never coloured
    assert piped.returncode == 2 and ANSI not in piped.stderr


def test_completion_scripts_complete_commands_in_real_shells(tmp_path: Path) -> None:
    assert set(COMPLETION_SHELLS) == {"bash", "zsh", "fish"}
    bad = run_cli(tmp_path, "completion", "tcsh", check=False)
    assert bad.returncode == 2 and "invalid choice: 'tcsh'" in bad.stderr
    scripts = {sh: run_cli(tmp_path, "completion", sh).stdout for sh in COMPLETION_SHELLS}
    for text in scripts.values():
        assert "recall" in text and "facts" in text and "json" in text

    bash_script = tmp_path / "fleetmem.bash"
    bash_script.write_text(scripts["bash"])
    probe = (
        f"source '{bash_script}'; COMP_WORDS=(fleetmem fa); COMP_CWORD=1;"
        ' _shtab_fleetmem; echo "${COMPREPLY[@]}";'
        " COMP_WORDS=(fleetmem facts fo); COMP_CWORD=2;"
        ' _shtab_fleetmem; echo "${COMPREPLY[@]}"'
    )
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
    assert out.stdout.split("\n")[:2] == ["facts", "forget forget-all"], out.stderr

    if shutil.which("fish") is None:
        pytest.fail("fish is not installed (.ci/run installs it: apt-get install fish)")
    fish_script = tmp_path / "fleetmem.fish"
    fish_script.write_text(scripts["fish"])
    fish = subprocess.run(
        ["fish", "--no-config", "-c", f"source {fish_script}; complete -C 'fleetmem fac'"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert [line.split("\t")[0] for line in fish.stdout.splitlines()] == ["facts"], fish.stderr

    if shutil.which("zsh") is None:
        pytest.fail("zsh is not installed (.ci/run installs it: apt-get install zsh)")
    zsh_script = tmp_path / "_fleetmem"
    zsh_script.write_text(scripts["zsh"])
    assert scripts["zsh"].startswith("#compdef fleetmem")
    syntax = subprocess.run(["zsh", "-n", str(zsh_script)], capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr
    loaded = subprocess.run(
        [
            "zsh",
            "-f",
            "-c",
            f"fpath=({tmp_path} $fpath); autoload -Uz compinit; compinit -u -d {tmp_path}/zcd;"
            " print -r -- ${_comps[fleetmem]}",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert loaded.stdout.strip() == "_fleetmem", loaded.stderr


def test_busy_port_is_refused_before_anything_is_printed(home: Path) -> None:
    write_config(home, VECTORS_OFF)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [FLEETMEM, "serve", "--port", str(port)],
            capture_output=True,
            text=True,
            env=env_for(home),
            timeout=60,
        )
    assert proc.returncode == 6
    assert proc.stdout == ""  # no "serving on", no control token, no login link
    errors = [line for line in proc.stderr.splitlines() if " INFO " not in line]
    assert errors == [
        f"fleetmem: error: port {port} on 127.0.0.1 is already in use (is another"
        " `fleetmem serve` running? choose another with --port)"
    ]
    assert "login?token" not in proc.stderr


@contextmanager
def _serving(home: Path, port: int) -> Iterator[subprocess.Popen[str]]:
    """``fleetmem serve --port PORT`` with its stdout readable line by line, stopped after."""
    write_config(home, VECTORS_OFF)
    proc = subprocess.Popen(
        [FLEETMEM, "serve", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env_for(home),
    )
    try:
        assert proc.stdout is not None
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        if proc.stdout is not None:
            proc.stdout.close()


def test_serving_on_is_printed_only_once_the_port_accepts(home: Path) -> None:
    port = free_port()
    with _serving(home, port) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        # Connect the moment the line arrives: it must already accept and answer.
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            reply = conn.recv(64)
        assert first.startswith(f"fleetmem serving on http://127.0.0.1:{port} ")
        assert reply.startswith(b"HTTP/1.1 200")
        # The control token and the login link follow it.
        assert "API control token" in proc.stdout.readline()
        assert "/login?token=" in proc.stdout.readline()


def test_port_zero_announces_the_port_really_bound(home: Path) -> None:
    with _serving(home, 0) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        url = first.split()[3]
        port = int(url.rsplit(":", 1)[1])
        assert port > 0
        # The announced port is the one serving: it answers HTTP.
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            assert conn.recv(64).startswith(b"HTTP/1.1 200")
