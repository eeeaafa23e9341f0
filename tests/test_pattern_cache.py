"""Compiled regular expressions kept between processes (fleetmem.pattern_cache).

In-process cases point the cache at a temporary file and reset its state; one case runs two
fresh interpreters, as hooks do, and one checks every pattern fleetmem defines.
"""

from __future__ import annotations

import importlib
import json
import marshal
import os
import pkgutil
import random
import re
import string
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

import fleetmem
from fleetmem import pattern_cache
from fleetmem.core import lazy_pattern
from fleetmem.core.lazy_pattern import LazyPattern

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The cache on a file of its own, empty, with saving allowed."""
    path = tmp_path / "patterns.marshal"
    monkeypatch.setattr(pattern_cache, "_where", lambda: path)
    monkeypatch.setattr(pattern_cache, "_table", None)
    monkeypatch.setattr(pattern_cache, "_new", {})
    monkeypatch.setattr(pattern_cache, "_used", set())
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    yield path


def _fresh_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """As a new process would start: nothing read, nothing compiled."""
    monkeypatch.setattr(pattern_cache, "_table", None)
    monkeypatch.setattr(pattern_cache, "_new", {})
    monkeypatch.setattr(pattern_cache, "_used", set())


def _count_compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sources :mod:`re` parses from now on (its own cache cleared first)."""
    from re import _compiler

    re.purge()
    seen: list[str] = []
    original = _compiler.compile

    def counting(p: object, flags: int = 0) -> re.Pattern[str]:
        seen.append(str(p))
        return original(p, flags)

    monkeypatch.setattr(_compiler, "compile", counting)
    return seen


def _random_sources(rng: random.Random, n: int) -> list[tuple[str, int]]:
    """Patterns of the shapes fleetmem writes: named groups, alternations, classes,
    lookarounds, repeats, backreferences, unicode, inline and passed flags."""
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 8))) for _ in range(40)]
    pieces = [
        lambda: re.escape(rng.choice(words)),
        lambda: "(?:" + "|".join(rng.sample(words, rng.randint(2, 6))) + ")",
        lambda: (
            f"(?P<g{rng.randint(0, 10**6)}>[a-z0-9_]{{{rng.randint(1, 3)},{rng.randint(4, 9)}}})"
        ),
        lambda: r"\b" + rng.choice(words) + r"\b",
        lambda: "(?<![A-Za-z])" + rng.choice(words),
        lambda: "(?=" + rng.choice(words) + ")",
        lambda: r"\s+",
        lambda: "[" + "".join(rng.sample("äöüßéñ漢字-_.", 4)) + "]*",
        lambda: "(" + rng.choice(words) + r")\s\1",
        lambda: rng.choice(words) + "?" + rng.choice(words) + "+?",
    ]
    out = []
    for _ in range(n):
        source = "".join(rng.choice(pieces)() for _ in range(rng.randint(1, 8)))
        source = re.sub(r"\(\?P<(g\d+)>(.*?)\)(.*)\(\?P<\1>", r"(?P<\1>\2)\3(?P<x\1>", source)
        flags = rng.choice([0, re.IGNORECASE, re.MULTILINE | re.DOTALL, re.VERBOSE, re.ASCII])
        if rng.random() < 0.2:
            source = "(?i)" + source
        out.append((source, flags))
    return out


def _valid(sources: list[tuple[str, int]]) -> list[tuple[str, int]]:
    kept = []
    for source, flags in sources:
        try:
            re.compile(source, flags)
        except re.error:
            continue
        kept.append((source, flags))
    return kept


def test_a_kept_pattern_is_the_one_re_compiles_and_is_not_compiled_again(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random()
    sources = _valid(_random_sources(rng, 120))
    assert len(sources) > 60
    first = [pattern_cache.compile(source, flags) for source, flags in sources]
    pattern_cache.save()
    assert cache.read_bytes().startswith(pattern_cache.HEADER)

    _fresh_state(monkeypatch)
    compiled = _count_compiles(monkeypatch)
    again = [pattern_cache.compile(source, flags) for source, flags in sources]
    assert compiled == [], "a kept pattern was parsed again"
    texts = [
        " ".join(rng.choices(string.printable + "äöü漢", k=rng.randint(0, 80))) for _ in range(30)
    ]
    for (source, flags), one, two in zip(sources, first, again, strict=True):
        expected = re.compile(source, flags)
        assert two == expected and one == expected
        assert (two.pattern, two.flags, two.groups, two.groupindex) == (
            expected.pattern, expected.flags, expected.groups, expected.groupindex,
        )  # fmt: skip
        for text in texts:
            assert [m.span() for m in two.finditer(text)] == [
                m.span() for m in expected.finditer(text)
            ]


def test_every_pattern_fleetmem_defines_comes_back_equal(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in pkgutil.walk_packages(fleetmem.__path__, "fleetmem."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    everything = [(p._source, p._flags) for p in list(lazy_pattern._made)]
    assert len(everything) > 100
    for source, flags in everything:
        pattern_cache.compile(source, flags)
    pattern_cache.save()
    _fresh_state(monkeypatch)
    compiled = _count_compiles(monkeypatch)
    for source, flags in everything:
        assert pattern_cache.compile(source, flags) == re.compile(source, flags)
    assert len(compiled) == len(everything)  # only the reference compiles, none of the cache's


def test_a_damaged_or_foreign_file_is_compiled_afresh(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = r"(?P<word>remember|rmbr)\s+that\b"
    pattern_cache.compile(source)
    pattern_cache.save()
    table = pattern_cache.read_table(cache)
    ((key, entry),) = table.items()

    # a flipped byte in an entry's code: the checksum no longer holds
    damaged = entry[:-3] + bytes([entry[-3] ^ 0xFF]) + entry[-2:]
    cache.write_bytes(pattern_cache.HEADER + marshal.dumps({key: damaged}))
    _fresh_state(monkeypatch)
    assert pattern_cache.compile(source) == re.compile(source)

    # code the engine refuses, with a checksum that holds: refused, compiled afresh
    flags, code, groups, groupindex, indexgroup = marshal.loads(entry[4:])
    body = marshal.dumps((flags, [99999, *code[1:]], groups, groupindex, indexgroup))
    forged = zlib.crc32(body).to_bytes(4, "big") + body
    cache.write_bytes(pattern_cache.HEADER + marshal.dumps({key: forged}))
    _fresh_state(monkeypatch)
    assert pattern_cache.compile(source) == re.compile(source)

    # not the cache's file at all, or cut short
    for data in (b"something else entirely", pattern_cache.HEADER + b"\x00\x01", b""):
        cache.write_bytes(data)
        _fresh_state(monkeypatch)
        assert pattern_cache.read_table(cache) == {}
        assert pattern_cache.compile(source) == re.compile(source)


def test_a_bad_pattern_raises_as_re_does(cache: Path) -> None:
    for source in ("(unclosed", "a{2,1}", "(?P<x>a)(?P<x>b)"):
        with pytest.raises(re.error):
            pattern_cache.compile(source)
    pattern_cache.save()
    assert not cache.exists()


def test_nothing_is_written_where_bytecode_may_not_be(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert pattern_cache.compile("abc+") == re.compile("abc+")
    pattern_cache.save()
    assert not cache.exists()


def test_saves_merge_and_a_full_file_keeps_what_was_used(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pattern_cache.compile("first+")
    pattern_cache.save()
    _fresh_state(monkeypatch)
    pattern_cache.compile("second+")
    pattern_cache.save()
    assert set(pattern_cache.read_table(cache)) == {("first+", 0), ("second+", 0)}

    monkeypatch.setattr(pattern_cache, "KEEP_BYTES", 10)
    _fresh_state(monkeypatch)
    pattern_cache.compile("third+")
    pattern_cache.compile("first+")  # read from the file: used
    pattern_cache.save()
    assert set(pattern_cache.read_table(cache)) == {("first+", 0), ("third+", 0)}


def test_an_unwritable_folder_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x", encoding="utf-8")
    monkeypatch.setattr(pattern_cache, "_where", lambda: blocked / "patterns.marshal")
    _fresh_state(monkeypatch)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert pattern_cache.compile("x+y") == re.compile("x+y")
    pattern_cache.save()  # never raises
    assert blocked.read_text(encoding="utf-8") == "x"


def test_lazy_patterns_compile_through_the_installed_compiler(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def compiler(source: str, flags: int) -> re.Pattern[str]:
        calls.append(source)
        return re.compile(source, flags)

    monkeypatch.setattr(lazy_pattern, "_compiler", compiler)
    one, two = LazyPattern("lazy-one"), LazyPattern("lazy-two", re.I)
    assert calls == []
    assert lazy_pattern.compile_all() >= 2
    assert calls.count("lazy-one") == calls.count("lazy-two") == 1
    assert one.search("x lazy-one") and two.fullmatch("LAZY-TWO")
    assert lazy_pattern.compile_all() == 0  # each compiled once
    assert calls.count("lazy-one") == 1


def _child(xdg: Path, source: str, environ: dict[str, str]) -> dict[str, object]:
    script = (
        "import json, re, sys\n"
        "from re import _compiler\n"
        "parsed = []\n"
        "original = _compiler.compile\n"
        f"_compiler.compile = lambda p, f=0: parsed.append(p == {source!r}) or original(p, f)\n"
        "import fleetmem\n"
        "from fleetmem.core.lazy_pattern import LazyPattern\n"
        f"pattern = LazyPattern({source!r}, re.IGNORECASE)\n"
        "ok = pattern.compiled == original(pattern._source, re.IGNORECASE)\n"
        "print(json.dumps({'parsed': sum(parsed), 'ok': ok}))\n"
    )
    env = {**environ, "XDG_CACHE_HOME": str(xdg), "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120,
        check=True,
    )  # fmt: skip
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_second_process_reads_what_the_first_kept(tmp_path: Path) -> None:
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
    environ.pop(pattern_cache.ENV, None)
    source = f"(?P<ask>remember|note)\\s+that\\s+{random.randrange(10**9)}"
    first = _child(tmp_path, source, environ)
    assert first == {"parsed": 1, "ok": True}
    assert list((tmp_path / "fleetmem").glob("patterns-*.marshal"))
    second = _child(tmp_path, source, environ)
    assert second == {"parsed": 0, "ok": True}
    # turned off: compiled as usual
    off = _child(tmp_path, source, {**environ, pattern_cache.ENV: "0"})
    assert off == {"parsed": 1, "ok": True}
