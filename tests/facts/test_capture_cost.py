"""What the capture rules cost a process that does not need them: an agent hook answering
another event, or a prompt without any word a rule needs."""

from __future__ import annotations

import subprocess
import sys

_COUNT = (
    "import fleetmem.core.capture as c, fleetmem.core.capture_patterns as p\n"
    "from fleetmem.core.lazy_pattern import LazyPattern\n"
    "def compiled():\n"
    "    return sorted(n for n, v in vars(p).items()\n"
    "                  if isinstance(v, LazyPattern) and v._compiled is not None)\n"
    "print(compiled())\n"
    "c.captured_facts({prompt!r})\n"
    "print(compiled())\n"
)


def _compiled(prompt: str) -> tuple[str, str]:
    out = subprocess.run(
        [sys.executable, "-c", _COUNT.format(prompt=prompt)],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    at_import, after = out.stdout.splitlines()
    return at_import, after


def test_importing_the_rules_compiles_none_of_them() -> None:
    at_import, _ = _compiled("fix the bug")
    assert at_import == "[]"


def test_a_prompt_without_a_hint_compiles_only_the_hint() -> None:
    _, after = _compiled("fix the bug in the parser and rerun the suite")
    assert after == "['HINT']"


def test_a_request_compiles_what_it_needs() -> None:
    _, after = _compiled("remember that we deploy on Tuesdays")
    assert "'TRIGGER'" in after
    assert "'LABEL_ONLY'" not in after  # one line: nothing below it for a label to open
