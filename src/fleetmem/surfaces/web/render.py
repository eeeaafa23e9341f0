"""Templates and the small formatting rules every page shares (ages, numbers, bars)."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse

from fleetmem.core.budget import SKIPPED_END, SKIPPED_LABEL, LoadReport, skipped_caption
from fleetmem.core.fence import strip_bidi

#: Security headers of every page: no inline script or style, no framing, no referrer.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "object-src 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def age(ts: float | None, now: float | None = None) -> str:
    """``just now``, ``5 minutes ago``, ``3 days ago``: how long ago ``ts`` was."""
    if ts is None:
        return "never"
    seconds = max(0.0, (time.time() if now is None else now) - ts)
    for limit, unit, size in (
        (60, "", 1),
        (3600, "minute", 60),
        (86_400, "hour", 3600),
        (7 * 86_400, "day", 86_400),
        (30 * 86_400, "week", 7 * 86_400),
        (365 * 86_400, "month", 30 * 86_400),
        (math.inf, "year", 365 * 86_400),
    ):
        if seconds < limit:
            if not unit:
                return "just now"
            n = int(seconds // size)
            return f"{n} {unit}{'' if n == 1 else 's'} ago"
    return "long ago"  # pragma: no cover - the last limit is infinite


def when(ts: float | None) -> str:
    """An absolute time for tooltips and tables: ``2026-11-28 09:14 UTC``."""
    if ts is None:
        return ""
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M UTC")


def num(value: int | float | None) -> str:
    if value is None:
        return "—"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.1f}"
    return f"{int(value):,}"


def pct_class(used: float | None, total: float | None) -> str:
    """The CSS class of a bar filled to ``used / total`` (``pct-0`` to ``pct-100``).

    Widths are classes, not inline styles, so the pages run under a strict CSP.
    """
    if not used or not total or total <= 0:
        return "pct-0"
    share = max(0.0, min(1.0, used / total))
    return f"pct-{max(1, round(share * 100)) if share > 0 else 0}"


def percent(share: float | None) -> str:
    """A meter's percentage (:func:`~fleetmem.core.budget.percent_of`) as the seed's FR-40
    shows it: ``87 %``, ``130 %`` over budget, one decimal below 10 % (``0.4 %``); empty
    when there is no budget."""
    if share is None:
        return ""
    return f"{share:.1f} %" if share < 10 else f"{round(share):,} %"


def plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


@dataclass(frozen=True, slots=True)
class Marked:
    """A text with its skipped region split out, so a page can hatch and strike it.

    ``head + begin + "\\n" + middle + end + rest`` is exactly what
    :func:`fleetmem.core.budget.render_marked` returns (the attachment of "ask an agent");
    ``head + middle + tail`` is the file itself.
    """

    head: str
    middle: str
    tail: str
    begin: str
    end: str
    caption: str
    lead_newline: bool
    trail_newline: bool
    tail_sep: bool

    @property
    def sent(self) -> str:
        """The marked text exactly as :func:`render_marked` writes it."""
        parts = [self.head, "\n" if self.lead_newline else "", self.begin, "\n", self.middle]
        parts.append("\n" if self.trail_newline else "")
        parts.append(self.end)
        if self.tail:
            parts.extend(["\n", self.tail])
        elif self.tail_sep:
            parts.append("\n")
        return "".join(parts)


def marked(text: str, report: LoadReport | None) -> Marked | None:
    """Split ``text`` around the skipped region of ``report``; None when nothing is skipped."""
    if report is None or report.skipped is None:
        return None
    region = report.skipped
    head = text[: region.char_start]
    middle = text[region.char_start : region.char_end]
    tail = text[region.char_end :]
    caption = skipped_caption(report)
    return Marked(
        head=head,
        middle=middle,
        tail=tail,
        begin=f"▒▒▒ {SKIPPED_LABEL} · {caption} ▒▒▒",
        end=f"▒▒▒ {SKIPPED_END} ▒▒▒",
        caption=caption,
        lead_newline=bool(head) and not head.endswith("\n"),
        trail_newline=bool(middle) and not middle.endswith("\n"),
        tail_sep=not tail and text.endswith("\n"),
    )


def no_bidi(value: Any) -> Any:
    """Every ``{{ ... }}`` output without bidi overrides, embeddings, isolates or marks.

    Stored text (fact texts, branch names, run labels, file bodies) can hold them, and on a
    page they reorder what a person reads (Trojan Source). Markup stays Markup, so already
    escaped HTML is not escaped twice; numbers and None pass as they are.
    """
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, Markup):
        return Markup(strip_bidi(str(value)))
    text = value if isinstance(value, str) else str(value)
    cleaned = strip_bidi(text)
    return value if cleaned == text and not isinstance(value, str) else cleaned


def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("fleetmem.surfaces.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=no_bidi,
    )
    env.filters.update(age=age, when=when, num=num, plural=plural, percent=percent)
    env.globals.update(pct_class=pct_class, skipped_label=SKIPPED_LABEL)
    return env


ENV = _env()


def render(
    request: Request,
    template: str,
    context: Mapping[str, Any],
    *,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
) -> HTMLResponse:
    """A whole page (or fragment) with the security headers."""
    # The finalize hook cleans every expression; what filters and macros assemble as Markup
    # is cleaned here, so no page, whatever its template, carries a bidi control.
    html = strip_bidi(ENV.get_template(template).render(request=request, **context))
    return HTMLResponse(html, status_code=status_code, headers={**PAGE_HEADERS, **(headers or {})})
