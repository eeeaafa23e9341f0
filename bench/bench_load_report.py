"""Benchmark: the load meter of a 64 KB context file (NFR-1: p95 under 50 ms; target 5 ms).

Three figures on the same 64 KB of mixed prose, code, CJK, RTL scripts and emoji (the test
corpus of ``tests/files/corpus`` repeated):

* ``baseline_encode``: the bare tokenizer encoding the text, the physical floor of any exact
  meter (every token must be produced once);
* ``load_report``: :func:`fleetmem.core.budget.truncate_authored` with the Notes budget
  (1,500 tokens): the token count, the head-and-tail cut, the marker, the re-count of what is
  delivered and the skipped character and line ranges;
* ``service_meter``: ``ContextFileService.get`` on a stored 64 KB Notes file over a real
  SQLite store (row read, meter, runs-in-flight query): what the CLI and the API answer with.

Also ``whole_agent_report``: ``ContextFileService.report`` for an agent whose seven files, a
notebook and three every-run workspace files are all 64 KB (the worst case).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from bench.common import latency_summary, timed_ms
from fleetmem.config import default_settings
from fleetmem.core.budget import truncate_authored
from fleetmem.core.contextfiles import AGENT_FILES, MAX_FILE_BYTES, WORKSPACE_FILES
from fleetmem.service.files import Actor, ContextFileService
from fleetmem.store.sqlite.store import SqliteStore
from fleetmem.tokenize import ENCODING, PACKAGE, get_tokenizer

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "files" / "corpus"
USER = Actor("user", "bench")


def sixty_four_kb() -> str:
    unit = "\n".join(p.read_text(encoding="utf-8") for p in sorted(CORPUS.iterdir()))
    text = unit * (MAX_FILE_BYTES // len(unit.encode("utf-8")) + 1)
    return text.encode("utf-8")[:MAX_FILE_BYTES].decode("utf-8", "ignore")


def _samples(fn: Any, n: int) -> list[float]:
    fn()  # warm up
    return [timed_ms(fn)[0] for _ in range(n)]


def run(quick: bool = False, tiny: bool = False) -> dict[str, Any]:
    """p50/p95 of the meter on 64 KB, beside the bare encode of the same text."""
    n = 5 if tiny else 50 if quick else 300
    text = sixty_four_kb()
    tokenizer = get_tokenizer()
    report = truncate_authored(text, 1500, tokenizer)
    out: dict[str, Any] = {
        "tokenizer": {"encoding": ENCODING, "package": PACKAGE},
        "text": {
            "bytes": len(text.encode("utf-8")),
            "chars": len(text),
            "tokens": report.tokens,
            "budget": 1500,
            "used": report.used,
            "skipped_tokens": report.skipped_tokens,
        },
        "baseline_encode": latency_summary(_samples(lambda: tokenizer.encode(text), n)),
        "load_report": latency_summary(
            _samples(lambda: truncate_authored(text, 1500, tokenizer), n)
        ),
    }
    with tempfile.TemporaryDirectory() as tmp:
        store = SqliteStore(Path(tmp) / "bench.db")
        try:
            settings = default_settings()
            files = ContextFileService(store=store, settings=lambda: settings)
            notes = files.ref("notes", agent="bench-agent")
            files.save(notes, text, base_revision=0, actor=USER)
            out["service_meter"] = latency_summary(_samples(lambda: files.get(notes), n))
            for spec in AGENT_FILES:
                if spec.slug != "notes":
                    files.save(files.ref(spec.slug, agent="bench-agent"), text, base_revision=0,
                               actor=USER)  # fmt: skip
            files.save(files.ref("notebook", repo="bench/repo"), text, base_revision=0, actor=USER)
            files.set_mode("organization", "every_run", actor=Actor("system", "bench"))
            for spec in WORKSPACE_FILES:
                files.save(files.ref(spec.slug), text, base_revision=0, actor=Actor("system", "b"))
            report_samples = _samples(
                lambda: files.report("bench-agent", repo="bench/repo"), n // 5
            )
            out["whole_agent_report"] = latency_summary(report_samples)
        finally:
            store.close()
    return out


def summarize(result: dict[str, Any]) -> str:
    def row(name: str) -> str:
        r = result[name]
        return f"  {name:<20} p50 {r['p50_ms']:>7.3f} ms   p95 {r['p95_ms']:>7.3f} ms"

    t = result["text"]
    return "\n".join(
        [
            f"load meter, 64 KB ({t['tokens']:,} {result['tokenizer']['encoding']} tokens,"
            f" budget {t['budget']:,}):",
            row("baseline_encode"),
            row("load_report"),
            row("service_meter"),
            row("whole_agent_report"),
        ]
    )
