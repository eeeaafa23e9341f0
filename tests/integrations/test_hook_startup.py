"""What a hook process loads before its work: the entry point imports no parser, and its log
needs the rotating handler only when the file is due to rotate."""

from __future__ import annotations

import logging
import logging.handlers
import secrets
import string
import subprocess
import sys
from pathlib import Path

from fleetmem.integrations.hookmain import LOG_MAX_BYTES, hooks_log_handler


def test_the_entry_point_imports_no_command_line_machinery() -> None:
    code = (
        "import sys\n"
        "from fleetmem.surfaces.cli.main import main\n"
        "print(sorted(m for m in ('argparse', 'json', 'logging.handlers',"
        " 'fleetmem.surfaces.cli.commandline') if m in sys.modules))\n"
        "from fleetmem.surfaces.cli.commandline import COMMAND_MODULES, _parser\n"
        "print(len(COMMAND_MODULES) > 5, callable(_parser))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["[]", "True True"]


def test_a_hook_appends_while_the_log_is_small_and_rotates_it_once_full(tmp_path: Path) -> None:
    small = hooks_log_handler(tmp_path, one_process=True)
    assert type(small) is logging.FileHandler  # no rotating machinery for a line or two
    small.emit(logging.makeLogRecord({"msg": "first line", "levelno": logging.INFO}))
    small.close()
    log = tmp_path / "logs" / "hooks.log"
    log.write_bytes(log.read_bytes() + b"x" * LOG_MAX_BYTES)
    full = hooks_log_handler(tmp_path, one_process=True)
    assert isinstance(full, logging.handlers.RotatingFileHandler)
    full.emit(logging.makeLogRecord({"msg": "after the limit", "levelno": logging.INFO}))
    full.close()
    assert (tmp_path / "logs" / "hooks.log.1").stat().st_size > LOG_MAX_BYTES
    assert "after the limit" in log.read_text(encoding="utf-8")
    # The daemon's handler lives for days: it always rotates, even from an empty file.
    fresh = tmp_path / "fresh"
    daemon = hooks_log_handler(fresh)
    assert isinstance(daemon, logging.handlers.RotatingFileHandler)
    daemon.close()


def test_every_line_of_both_handlers_is_redacted(tmp_path: Path) -> None:
    alphabet = string.ascii_letters + string.digits
    token = "ghp_" + "".join(secrets.choice(alphabet) for _ in range(36))
    for one_process in (True, False):
        handler = hooks_log_handler(tmp_path / str(one_process), one_process=one_process)
        handler.handle(logging.makeLogRecord({"msg": f"leaked {token}", "levelno": logging.INFO}))
        handler.close()
        text = (tmp_path / str(one_process) / "logs" / "hooks.log").read_text(encoding="utf-8")
        assert "leaked" in text and token not in text
