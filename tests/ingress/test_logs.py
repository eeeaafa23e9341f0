"""Nothing secret in logs: the redacting filter, and configuration errors that hide values."""

from __future__ import annotations

import io
import logging
import random
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fleetmem.config import ConfigHolder
from fleetmem.logsafe import RedactingFilter, protect, protect_loggers
from tests.conftest import write_config
from tests.ingress.corpus import samples
from tests.ingress.home_scan import leaks
from tests.surfaces.test_http import VECTORS_OFF, Daemon


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    stream = io.StringIO()
    handler = protect(logging.StreamHandler(stream))
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
    logger = logging.getLogger("fleetmem.test_logsafe")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield logger, stream
    finally:
        logger.removeHandler(handler)


def test_every_line_through_a_protected_handler_is_redacted(
    captured: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = captured
    planted = samples(random.Random())
    for sample in planted:
        logger.info("run.opened adapter=%s", sample.text)
        logger.warning("raw message with %s inside" % sample.text)  # noqa: UP031
        logger.info("mapping %(value)s", {"value": sample.text})
        try:
            raise ValueError(f"bad value {sample.text}")
        except ValueError:
            logger.exception("call.failed")
        logger.info("stacked", stack_info=True, extra={"note": "ok"})
    text = stream.getvalue()
    assert leaks(Path("/nonexistent"), planted, [text.encode()]) == []
    # Tokens become [REDACTED]; a URL's userinfo becomes ***@ before the redactor looks.
    assert text.count("[REDACTED]") + text.count("://***@") >= 4 * len(planted)
    assert "ValueError" in text and "Traceback" in text  # the traceback is kept, redacted


def test_the_filter_keeps_a_line_whose_arguments_do_not_format(
    captured: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = captured
    logger.info("two %s %s", "only-one")
    assert "unformattable" in stream.getvalue()


def test_protect_is_idempotent_and_covers_every_handler() -> None:
    logger = logging.getLogger("fleetmem.test_protect")
    handlers = [logging.StreamHandler(io.StringIO()), logging.StreamHandler(io.StringIO())]
    for h in handlers:
        logger.addHandler(h)
    try:
        protect_loggers([logger])
        protect_loggers([logger])
        assert [sum(isinstance(f, RedactingFilter) for f in h.filters) for h in handlers] == [1, 1]
    finally:
        for h in handlers:
            logger.removeHandler(h)


def test_a_failed_reload_names_the_key_and_hides_the_password(home: Path) -> None:
    password = "".join(random.choice("abcdefghjkmnpqrstuvwxyzABCDEFGH23456789") for _ in range(18))
    write_config(home, VECTORS_OFF)
    holder = ConfigHolder(home)
    write_config(home, f'[model_api]\nbase_url = "https://app:{password}@models.example/v1"\n')
    error = holder.reload()
    assert error is not None and error.key == "model_api.base_url"
    assert password not in str(error) and "app:" not in str(error)


@pytest.mark.slow
def test_the_daemon_logs_a_failed_reload_without_the_password(home: Path) -> None:
    password = "".join(random.choice("abcdefghjkmnpqrstuvwxyzABCDEFGH23456789") for _ in range(18))
    token = "sk-ant-" + "".join(
        random.choice("abcdefghjkmnpqrstuvwxyz0123456789") for _ in range(40)
    )
    write_config(home, VECTORS_OFF)
    daemon = Daemon(home)
    try:
        write_config(
            home,
            f'[model_api]\nbase_url = "https://app:{password}@models.example/v1"\n'
            f'api_key = "{token}"\n',
        )
        daemon.proc.send_signal(signal.SIGHUP)
        time.sleep(1.0)
        assert daemon.client.get("/healthz").status_code == 200  # the last good config kept
    finally:
        err = daemon.stop()
    assert "config.reload_failed" in err and "model_api." in err, err[-2000:]
    assert password not in err and token not in err
    (home / "fleetmem.toml").unlink()  # the operator's own file holds it; fleetmem's files must not
    assert [s for s in (password, token) if s.encode().lower() in _all_bytes(home)] == []


def _all_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes().lower() for p in home.rglob("*") if p.is_file())
