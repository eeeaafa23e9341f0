"""Regular expressions compiled the first time they are used.

The redactor's rule modules hold a few hundred patterns, and the capture rules a few large
ones (one is 25 KB); a process that never needs them (an agent hook answering another event,
a command that redacts nothing) should not pay for compiling them at import: about 20 ms for
the redactor's, 0.2 s for the capture rules'. Each method compiles once, then hands over to
:mod:`re`. Pure: the standard library only.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Iterator
from typing import Any

Compiler = Callable[[str, int], "re.Pattern[str]"]

#: How every pattern is compiled: plain :func:`re.compile` unless a process installed another.
_compiler: Compiler = re.compile
#: Every pattern made, so that :func:`compile_all` can warm a cache with all of them.
_made: weakref.WeakSet[LazyPattern] = weakref.WeakSet()


def use_compiler(compiler: Compiler) -> None:
    """Compile patterns with ``compiler`` from now on: it must return what
    ``re.compile(source, flags)`` would."""
    global _compiler
    _compiler = compiler


def compile_all() -> int:
    """Compile every pattern made so far that is not compiled yet; returns how many."""
    waiting = [pattern for pattern in list(_made) if pattern._compiled is None]
    for pattern in waiting:
        pattern.compiled  # noqa: B018 (compiling is the point)
    return len(waiting)


class LazyPattern:
    """A pattern compiled the first time it is used."""

    __slots__ = ("__weakref__", "_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None
        _made.add(self)

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = _compiler(self._source, self._flags)
        return self._compiled

    def search(self, text: str, pos: int = 0, endpos: int | None = None) -> re.Match[str] | None:
        compiled = self.compiled
        return compiled.search(text, pos) if endpos is None else compiled.search(text, pos, endpos)

    def match(self, text: str, pos: int = 0, endpos: int | None = None) -> re.Match[str] | None:
        compiled = self.compiled
        return compiled.match(text, pos) if endpos is None else compiled.match(text, pos, endpos)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.compiled.fullmatch(text)

    def finditer(
        self, text: str, pos: int = 0, endpos: int | None = None
    ) -> Iterator[re.Match[str]]:
        compiled = self.compiled
        return (
            compiled.finditer(text, pos) if endpos is None else compiled.finditer(text, pos, endpos)
        )

    def findall(self, text: str) -> list[Any]:
        return self.compiled.findall(text)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0) -> str:
        return self.compiled.sub(repl, text, count)

    def split(self, text: str, maxsplit: int = 0) -> list[Any]:
        return self.compiled.split(text, maxsplit)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source!r}, {self._flags!r})"
