"""No rendered page carries a bidi override, embedding, isolate or mark (Trojan Source).

Stored text may hold them (rows written before ingress stripped them, or by an old version):
a real daemon serves a fact whose words hold every bidi control, and the pages that show it
must come back without one, the words themselves still there.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import httpx

from fleetmem.core.facts import Actor
from fleetmem.core.fence import BIDI_CONTROLS
from fleetmem.service.bootstrap import App
from fleetmem.surfaces.web.render import ENV, no_bidi
from tests.web.conftest import WebDaemon
from tests.web.seeds import seeding_facts

BIDI = sorted(BIDI_CONTROLS)


def _hostile_words(rng: random.Random) -> tuple[str, str]:
    """A body with bidi controls scattered between its words, and what it reads as."""
    words = [f"w{rng.randrange(10**6):06d}" for _ in range(8)]
    pieces = []
    for word in words:
        pieces.append("".join(rng.sample(BIDI, 3)) + word)
    return " ".join(pieces) + "".join(BIDI), " ".join(words)


def test_the_finalize_hook_strips_bidi_from_every_expression() -> None:
    template = ENV.from_string("<p title='{{ a }}'>{{ a }} {{ n }} {{ m }}</p>")
    html = template.render(a="x\u202ey\u2066z", n=5, m=None)
    assert html == "<p title='xyz'>xyz 5 None</p>"
    assert no_bidi(3) == 3 and no_bidi(None) is None


def test_pages_holding_bidi_characters_render_without_them(
    start_daemon: Callable[..., WebDaemon],
) -> None:
    rng = random.Random()
    body, reads = _hostile_words(rng)
    assert any(c in body for c in BIDI_CONTROLS)
    ids: list[str] = []

    def seed(app: App) -> None:
        me = Actor("human", "marina")
        facts = seeding_facts(app, start=time.time() - 86_400)
        facts.add("A plain seeded rule.", actor=me)
        fact = facts.add(f"Placeholder rule {rng.randrange(10**9)}.", actor=me).fact
        assert fact is not None
        with app.store.transaction():  # an old row: its words written before ingress existed
            app.store.db.conn.execute("UPDATE facts SET body = ? WHERE id = ?", (body, fact.id))
        ids.append(fact.id)

    daemon = start_daemon(seed=seed)
    link = daemon.links()[0]
    with httpx.Client(base_url=daemon.url, timeout=60) as browser:
        assert browser.get(link.replace(daemon.url, "")).status_code == 303
        pages = [browser.get(path) for path in ("/memory/facts", f"/memory/facts/{ids[0]}")]
    for page in pages:
        assert page.status_code == 200, (page.url, page.text[page.text.find("<main") :][:600])
        assert not any(c in page.text for c in BIDI_CONTROLS), page.url
        assert reads in page.text  # the words are shown, in the order they are stored
