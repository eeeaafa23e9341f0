"""The last line of defence for logs: every line fleetmem's handlers write is redacted.

fleetmem's own log lines carry ids, sizes, counts and outcomes, never text from outside; but
an exception message, a library's warning or a future log call may still carry a value. A
:class:`RedactingFilter` on each handler fleetmem installs formats the message with its
arguments, hides URL userinfo, runs the redactor over it (and over a traceback's text), and
hands the handler a record with no arguments left, so no formatter can reinsert a raw value.

A filter on a *handler* sees every record the handler writes, including those propagated from
child loggers and from libraries (a filter on a logger would only see that logger's own).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from fleetmem.core.redact import redact
from fleetmem.core.reveal import hide_userinfo


def scrub(text: str) -> str:
    """``text`` as a log line may carry it: URL userinfo hidden, secrets redacted.

    Unlike :func:`fleetmem.core.redact.redact`, a newline is kept but a carriage return and
    other control characters go, so one record cannot forge another line's start.
    """
    return redact(hide_userinfo(text))


class RedactingFilter(logging.Filter):
    """Redacts each record's formatted message and traceback text in place; never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed format string: keep what can be shown safely
            message = f"{record.msg!r} (unformattable log arguments)"
        record.msg = scrub(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        # Formatted already: keep the handler from formatting the raw exception again.
        record.exc_info = None
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True


_FILTER = RedactingFilter()


def protect(handler: logging.Handler) -> logging.Handler:
    """Add the redacting filter to ``handler`` (once); returns it for chaining."""
    if not any(isinstance(f, RedactingFilter) for f in handler.filters):
        handler.addFilter(_FILTER)
    return handler


def protect_loggers(loggers: Iterable[logging.Logger]) -> None:
    """Protect every handler attached to each of ``loggers``."""
    for logger in loggers:
        for handler in logger.handlers:
            protect(handler)
