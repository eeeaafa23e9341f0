"""Compiled dataclass methods kept between processes (fleetmem.dataclass_cache).

Each case runs fresh interpreters, since the cache acts when a class is defined: a first one
compiles and writes, a second one reads, and both must give the same classes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest

from fleetmem.dataclass_cache import HEADER, cache_folder, read_table

ROOT = Path(__file__).resolve().parents[1]

# A module of dataclasses of every kind fleetmem uses: frozen and slotted, defaults and
# factories, keyword-only, ordered, inheriting, and one made by make_dataclass.
RECORDS = '''
from __future__ import annotations
from dataclasses import dataclass, field, make_dataclass

@dataclass(frozen=True, slots=True)
class Row:
    """A row."""
    id: str
    score: float = 0.0
    tags: tuple[str, ...] = ()

@dataclass
class Box:
    items: list[int] = field(default_factory=list)
    name: str = "box"

@dataclass(frozen=True, kw_only=True)
class Options:
    limit: int
    strict: bool = False

@dataclass(order=True)
class Version:
    major: int
    minor: int = 0

@dataclass(frozen=True, slots=True)
class Child(Row):
    extra: int = 1

Made = make_dataclass("Made", [("x", int), ("y", str, field(default="y"))])
'''

# What a process reports about the classes above: behaviour that every generated method
# decides, and how many sources it had to compile.
PROBE = """
import dataclasses, json, sys
import fleetmem.dataclass_cache as cache
on_file = set(cache.read_table(cache.cache_folder() / "records.marshal"))
import records as r
used = cache._used.get("records", set())
out = {
    "patched": getattr(dataclasses, "exec", None) is cache._exec,
    "repr": [repr(r.Row("a", 1.5, ("t",))), repr(r.Box()), repr(r.Options(limit=3)),
             repr(r.Child("c")), repr(r.Made(1))],
    "eq": [r.Row("a") == r.Row("a"), r.Row("a") == r.Row("b"), r.Box([1]) == r.Box([1])],
    "hash": hash(r.Row("a", 2.0)) == hash(r.Row("a", 2.0)),
    "order": sorted([r.Version(2), r.Version(1, 5), r.Version(1)]) == [
        r.Version(1), r.Version(1, 5), r.Version(2)],
    "factory_fresh": r.Box().items is not r.Box().items,
    "slots": not hasattr(r.Row("a"), "__dict__"),
    "fields": [f.name for f in dataclasses.fields(r.Child)],
    "replace": repr(dataclasses.replace(r.Row("a"), score=9.0)),
    "annotations": [repr(c.__init__.__annotations__) for c in (r.Row, r.Box, r.Options)],
    "signature": str(__import__("inspect").signature(r.Child)),
    "compiled": len(used - on_file),
}
try:
    r.Row("a").id = "b"
    out["frozen"] = False
except dataclasses.FrozenInstanceError:
    out["frozen"] = True
try:
    r.Options(3)
    out["kw_only"] = False
except TypeError:
    out["kw_only"] = True
cache.save()
print(json.dumps(out))
"""


def _probe(tmp_path: Path, cache_home: Path, **env_extra: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
    env.pop("FLEETMEM_DATACLASS_CACHE", None)
    env.update(
        {
            "XDG_CACHE_HOME": str(cache_home),
            "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT / "src")]),
            **env_extra,
        }
    )
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def _write_records(tmp_path: Path, source: str = RECORDS) -> None:
    (tmp_path / "records.py").write_text(textwrap.dedent(source), encoding="utf-8")


def _records_file(cache_home: Path) -> Path:
    return cache_folder({"XDG_CACHE_HOME": str(cache_home)}) / "records.marshal"


def test_a_second_process_compiles_nothing_and_gets_the_same_classes(tmp_path: Path) -> None:
    _write_records(tmp_path)
    cache_home = tmp_path / "cache"
    off = _probe(tmp_path, tmp_path / "unused", FLEETMEM_DATACLASS_CACHE="0")
    first = _probe(tmp_path, cache_home)
    second = _probe(tmp_path, cache_home)
    assert off["patched"] is False and first["patched"] is True
    assert first["compiled"] > 20  # every method of every class, compiled
    assert second["compiled"] == 0  # all of it read back
    for report in (first, second):
        behaviour = {k: v for k, v in report.items() if k not in ("compiled", "patched")}
        assert behaviour == {k: v for k, v in off.items() if k not in ("compiled", "patched")}
    assert off["frozen"] is True and off["kw_only"] is True and off["order"] is True
    table = read_table(_records_file(cache_home))
    assert len(table) == first["compiled"]


def test_a_changed_class_is_compiled_afresh_and_its_old_code_dropped(tmp_path: Path) -> None:
    cache_home = tmp_path / "cache"
    _write_records(tmp_path)
    _probe(tmp_path, cache_home)
    before = set(read_table(_records_file(cache_home)))
    _write_records(
        tmp_path,
        RECORDS.replace("    score: float = 0.0\n", "    score: float = 0.0\n    rank: int = 7\n"),
    )
    changed = _probe(tmp_path, cache_home)
    assert "rank=" in changed["repr"][0]
    assert 0 < changed["compiled"] < len(before)
    after = set(read_table(_records_file(cache_home)))
    stale = before - after
    assert stale and all("rank" not in source for source in stale)
    assert _probe(tmp_path, cache_home)["compiled"] == 0


@pytest.mark.parametrize(
    "damage",
    [b"", b"garbage", HEADER, HEADER + b"\x00\x01\x02", b"other-header\n" + b"x" * 64],
    ids=["empty", "garbage", "header-only", "truncated", "foreign"],
)
def test_a_damaged_file_is_ignored_and_replaced(tmp_path: Path, damage: bytes) -> None:
    cache_home = tmp_path / "cache"
    _write_records(tmp_path)
    path = _records_file(cache_home)
    path.parent.mkdir(parents=True)
    path.write_bytes(damage)
    first = _probe(tmp_path, cache_home)
    assert first["frozen"] is True and first["compiled"] > 20
    assert read_table(path)  # replaced by a good one
    assert _probe(tmp_path, cache_home)["compiled"] == 0


def test_nothing_is_written_where_python_may_not_write_bytecode(tmp_path: Path) -> None:
    cache_home = tmp_path / "cache"
    _write_records(tmp_path)
    report = _probe(tmp_path, cache_home, PYTHONDONTWRITEBYTECODE="1")
    assert report["patched"] is True and report["compiled"] > 20
    assert not cache_home.exists()


def test_an_unwritable_cache_costs_nothing_but_the_compiling(tmp_path: Path) -> None:
    _write_records(tmp_path)
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder would be", encoding="utf-8")
    report = _probe(tmp_path, blocked)
    assert report["frozen"] is True and report["compiled"] > 20


def test_importing_fleetmem_alone_does_not_import_dataclasses() -> None:
    # A hook relayed to the daemon defines no dataclass: it must not pay for the module.
    env = {k: v for k, v in os.environ.items() if k != "FLEETMEM_DATACLASS_CACHE"}
    code = (
        "import sys, fleetmem.surfaces.cli.main, fleetmem.integrations.hookrelay\n"
        "print('dataclasses' in sys.modules)\n"
        "import dataclasses, fleetmem.dataclass_cache as c\n"
        "print(dataclasses.exec is c._exec)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "True"]


def test_a_hook_process_keeps_what_it_compiled(tmp_path: Path) -> None:
    """The hook entry point leaves by os._exit, past the exit handlers: it saves itself."""
    cache_home, home = tmp_path / "cache", tmp_path / "home"
    home.mkdir()
    (home / "fleetmem.toml").write_text('[model_api]\nembedding_model = ""\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLEETMEM_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update({"XDG_CACHE_HOME": str(cache_home), "FLEETMEM_HOME": str(home)})
    payload = {
        "session_id": str(uuid.uuid4()),
        "transcript_path": str(tmp_path / "t.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    subprocess.run(
        [sys.executable, "-m", "fleetmem", "hook", "claude-code", "SessionStart"],
        input=json.dumps(payload), text=True, env=env, cwd=tmp_path, check=True,
        capture_output=True, timeout=120,
    )  # fmt: skip
    folder = cache_folder({"XDG_CACHE_HOME": str(cache_home)})
    kept = {p.name for p in folder.glob("*.marshal")}
    assert "fleetmem.service.bootstrap.marshal" in kept
    assert "fleetmem.config.settings.marshal" in kept


def test_a_module_name_that_cannot_name_a_file_is_compiled_and_never_written(
    tmp_path: Path,
) -> None:
    cache_home = tmp_path / "cache"
    code = textwrap.dedent(
        """
        import fleetmem.dataclass_cache as cache
        source = (
            "from dataclasses import dataclass\\n"
            "@dataclass(frozen=True)\\n"
            "class Odd:\\n"
            "    x: int = 1\\n"
        )
        for name in ("../escape", "a/b", "a\\\\b", "x" * 300, ""):
            namespace = {"__name__": name}
            exec(source, namespace)
            assert namespace["Odd"](2).x == 2 and namespace["Odd"]() == namespace["Odd"](1)
        cache.save()
        print("ok")
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.pop("FLEETMEM_DATACLASS_CACHE", None)
    env.update({"XDG_CACHE_HOME": str(cache_home), "PYTHONPATH": str(ROOT / "src")})
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert (proc.returncode, proc.stdout.strip()) == (0, "ok"), proc.stderr
    written = sorted(p.name for p in tmp_path.rglob("*.marshal"))
    assert all(not name.startswith(("..", "escape", "x" * 50)) for name in written)
    assert not (cache_home / "fleetmem" / "escape.marshal").exists()
    assert not (tmp_path / "escape.marshal").exists()
