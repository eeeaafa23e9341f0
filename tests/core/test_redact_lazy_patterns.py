"""The redactor's rule patterns are compiled on first use, and behave as compiled ones."""

from __future__ import annotations

import re
import secrets
import string
import subprocess
import sys

from fleetmem.core.redact import redact
from fleetmem.core.redact_base import LazyPattern, rx, rx_folded

COUNT = """
import gc
from fleetmem.core import redact, redact_base
lazy = [o for o in gc.get_objects() if isinstance(o, redact_base.LazyPattern)]
before = sum(o._compiled is not None for o in lazy)
redact.redact("pytest -q tests/test_ledger.py && git status")
print(len(lazy), before, sum(o._compiled is not None for o in lazy))
"""


def test_importing_the_redactor_compiles_few_of_its_patterns() -> None:
    out = subprocess.run(
        [sys.executable, "-c", COUNT], capture_output=True, text=True, check=True
    ).stdout.split()
    total, at_import, after_plain_text = map(int, out)
    assert total > 80  # the rule modules' patterns
    assert at_import == 0
    assert after_plain_text < total // 4  # the prefilter kept most rules from running


def test_a_rule_first_used_late_still_finds_its_secret() -> None:
    body = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(36))
    token = f"ghp_{body}"
    assert token not in redact(f"the token is {token} here")


def test_a_lazy_pattern_answers_like_the_compiled_one() -> None:
    source = r"(?P<k>[a-z]+)=(?P<v>[0-9]{2,})"
    lazy, compiled = rx(source), re.compile(source, re.ASCII | re.VERBOSE)
    assert isinstance(lazy, LazyPattern)
    text = "a=1 bb=22 ccc=333 d=4444"
    for pos, end in ((0, None), (3, None), (3, 12), (0, 0)):
        args = (text, pos) if end is None else (text, pos, end)
        for method in ("search", "match"):
            mine, theirs = getattr(lazy, method)(*args), getattr(compiled, method)(*args)
            assert (mine and mine.span()) == (theirs and theirs.span()), (method, pos, end)
        assert [m.span() for m in lazy.finditer(*args)] == [
            m.span() for m in compiled.finditer(*args)
        ]
    folded, twin = rx_folded("abc")
    assert twin.search("xABCx") is not None and folded.search("xABCx") is None
