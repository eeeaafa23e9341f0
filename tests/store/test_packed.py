"""The SQLite store keeps run records and episode bodies deflated, reads rows written as
text before, and a copy carries them to another store as text."""

from __future__ import annotations

import json
import random
import secrets
import sqlite3
from pathlib import Path

import pytest

from fleetmem.store.sqlite.packed import pack, pack_against, repack, unpack
from fleetmem.store.sqlite.store import SqliteStore
from tests.conftest import make_record, session, write_config


def _random_text(rng: random.Random, n: int) -> str:
    # Any code point a JSON string can hold, surrogates excepted (UTF-8 cannot carry them).
    alphabet = [chr(c) for c in rng.sample(range(1, 0x2FFFF), 400) if not 0xD800 <= c < 0xE000]
    alphabet += [*'{}[]":, \n\t\\', "ep_", "agent", "\u202e", "\u200b", "\x00"]
    return "".join(rng.choice(alphabet) for _ in range(n))


def test_pack_round_trips_any_text() -> None:
    rng = random.Random(secrets.randbits(32))
    for n in (0, 1, 7, 300, 5000, 200_000):
        text = _random_text(rng, n)
        packed = pack(text)
        assert isinstance(packed, bytes) and unpack(packed) == text
    assert pack(None) is None and unpack(None) is None
    assert unpack("written before packing") == "written before packing"
    with pytest.raises(ValueError, match="unknown format"):
        unpack(b"\x09not ours")


def test_a_text_packed_against_a_body_needs_that_body() -> None:
    rng = random.Random(secrets.randbits(32))
    wrong = 0
    for n in (0, 1, 300, 5000, 60_000):  # past deflate's 32 KiB window too
        body = _random_text(rng, n)
        text = body[: n // 2] + _random_text(rng, 50) + body[n // 3 :]
        packed = pack_against(text, body)
        assert packed is not None and packed[0] == 2 and unpack(packed, body) == text
        with pytest.raises(ValueError, match="has none"):
            unpack(packed)
        for other in (body + "x", "x" + body, _random_text(rng, n + 1)):
            # Read beside another body it is an error, never other words (where the text
            # borrowed nothing from the part that differs, it reads right).
            try:
                assert unpack(packed, other) == text
            except ValueError as exc:
                assert "another body" in str(exc)
                wrong += 1
        # Moved to another base, or to none, it reads the same beside the new one.
        moved = repack(packed, body, other)
        assert unpack(moved, other) == text
        alone = repack(packed, body, None)
        assert alone is not None and alone[0] == 1 and unpack(alone) == text
    assert wrong >= 3  # a random other body, at least at 300 and 5,000 characters
    assert pack_against(None, "b") is None and pack_against("t", None) == pack("t")


def test_a_rendering_packed_against_its_body_is_a_fraction_of_it() -> None:
    fields = {
        "episode_id": "ep_" + secrets.token_hex(10),
        "agent": "fixer-" + secrets.token_hex(3),
        "repo": f"github.com/{secrets.token_hex(4)}/api",
        "result_excerpt": f"Fixed {secrets.token_hex(8)} in tests/test_ledger.py by pinning it.",
        "files_touched": [f"src/{secrets.token_hex(3)}/mod_{i}.py" for i in range(6)],
    }
    body = json.dumps(fields)
    rendering = "".join(
        f"{k}: {', '.join(v) if isinstance(v, list) else v}\n" for k, v in fields.items()
    )
    against = pack_against(rendering, body) or b""
    assert len(against) < 0.4 * len(pack(rendering) or b"")


def test_json_heavy_text_shrinks() -> None:
    body = json.dumps(
        {
            "episode_id": "ep_" + secrets.token_hex(10),
            "agent": "fixer",
            "result_excerpt": "Fixed the flaky test in tests/test_ledger.py by pinning the clock.",
            "files_touched": [f"src/pkg/mod_{i}.py" for i in range(8)],
        }
    )
    assert len(pack(body) or b"") < 0.7 * len(body.encode())


def test_stored_rows_are_packed_and_read_back(tmp_path: Path) -> None:
    from fleetmem.service.bootstrap import build

    home = tmp_path / "home"
    home.mkdir()
    write_config(home, '[model_api]\nembedding_model = ""\n')
    app = build(home, {"HOME": str(tmp_path)})
    marker = secrets.token_hex(6)
    record = make_record(
        run_id=f"run-{marker}", result_text=f"fixed the {marker} test", sessions=[session()]
    )
    result = app.memory.ingest_run(record)
    assert result.episode_id is not None
    got = app.store.get_episode(result.episode_id)
    assert got is not None and marker in (got.text or "")
    assert got.episode is not None and marker in json.dumps(got.episode)
    app.close()
    db = sqlite3.connect(home / "fleetmem.db")
    try:
        kinds = db.execute(
            "SELECT typeof(r.record_json), typeof(e.episode_json), typeof(e.text)"
            " FROM runs r JOIN episodes e ON e.run_id = r.run_id"
        ).fetchall()
        assert kinds == [("blob", "blob", "blob")]
        # A store written before packing holds TEXT: rewrite the row so, and read it again.
        raw = db.execute("SELECT episode_json, text FROM episodes").fetchone()
        with db:
            db.execute(
                "UPDATE episodes SET episode_json = ?, text = ?",
                (unpack(raw[0]), unpack(raw[1], unpack(raw[0]))),
            )
    finally:
        db.close()
    store = SqliteStore(home / "fleetmem.db")
    try:
        again = store.get_episode(result.episode_id)
        assert again is not None and again.text == got.text and again.episode == got.episode
    finally:
        store.close()
