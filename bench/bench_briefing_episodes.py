"""How many episodes a briefing shows in a repository with a real history (seed 000 REQ-14).

Not a timing benchmark: it counts. A fresh fleetmem home is filled with the first ``--runs``
synthetic run records of :class:`bench.fleet.FleetData` (several repositories, agents and
outcomes, realistic result texts), plus a few project facts, through the same
``MemoryService.ingest_run`` path a harness uses. Then every synthetic agent's briefing for
one repository and branch is composed by ``BriefingService.preview`` (the built-in provider
answering, no embeddings) at ``briefing_max_chars`` 2,000 (the default) and 4,000, and the
episodes section's shown and omitted counts are recorded with the document's size.

    python -m bench.bench_briefing_episodes [--runs 120] [--repo github.com/acme/api]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from bench.common import AGENTS, FleetData, machine, write_result
from fleetmem.core.scope import project_scope
from fleetmem.core.wrapper import parse
from fleetmem.service.bootstrap import build

FACTS = (
    "The settlement fixture writes rows in local time.",
    "Ledger amounts are Decimal, never float.",
    "Run the billing tests with --tz=UTC or the rounding cases fail.",
    "Migrations must be reversible; CI runs the down step.",
    "The payments sandbox rejects cards issued after 2025 in test mode.",
)


def _config(max_chars: int) -> str:
    lines = ["[model_api]", 'embedding_model = ""']
    for agent, _adapter, _model in AGENTS:
        lines += [f"[agent.{agent}]", f"briefing_max_chars = {max_chars}"]
    return "\n".join(lines) + "\n"


def measure(runs: int, repo: str, branch: str | None) -> dict[str, Any]:
    """Fill a store and count every agent's briefing episodes at 2,000 and 4,000 chars."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        env = {"HOME": tmp}
        (home / "fleetmem.toml").write_text(_config(2000), encoding="utf-8")
        app = build(home, env)
        try:
            for record in FleetData().records(runs):
                app.memory.ingest_run(record)
            for text in FACTS:
                app.facts.add(text, scope=project_scope(repo))
            in_repo = sum(1 for r in FleetData().records(runs) if r["sessions"][0]["repo"] == repo)
        finally:
            app.close()
        out: dict[str, Any] = {"runs": runs, "repo": repo, "branch": branch, "episodes": in_repo}
        for max_chars in (2000, 4000):
            (home / "fleetmem.toml").write_text(_config(max_chars), encoding="utf-8")
            app = build(home, env)
            try:
                rows = []
                for agent, _adapter, _model in AGENTS:
                    composed = app.briefings.preview(agent, repo=repo, branch=branch)
                    doc, _nonce = parse(composed.text)
                    section = doc.section("episodes")
                    assert section is not None
                    rows.append(
                        {
                            "agent": agent,
                            "shown": len(section.items),
                            "omitted": section.omitted,
                            "chars": composed.chars,
                            "bytes": composed.size_bytes,
                            "shown_by_section": dict(composed.shown),
                        }
                    )
            finally:
                app.close()
            out[f"max_chars_{max_chars}"] = {
                "agents": rows,
                "min_shown": min(r["shown"] for r in rows),
                "mean_shown": round(sum(r["shown"] for r in rows) / len(rows), 2),
            }
        return out


def run(quick: bool = False, tiny: bool = False) -> dict[str, Any]:
    """For ``bench.run_all``: 120 run records (quick 60, tiny 24) on the default repository."""
    runs = 24 if tiny else 60 if quick else 120
    return measure(runs, "github.com/acme/api", "main")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=120)
    parser.add_argument("--repo", default="github.com/acme/api")
    parser.add_argument("--branch", default="main")
    parser.add_argument("--suffix", default="")
    args = parser.parse_args()
    result = measure(args.runs, args.repo, args.branch or None)
    result["loadavg_1m_after"] = round(os.getloadavg()[0], 2)
    path = write_result("briefing_episodes", result, machine(), suffix=args.suffix)
    for size in (2000, 4000):
        block = result[f"max_chars_{size}"]
        print(
            f"max_chars={size}: episodes shown per agent "
            f"{[r['shown'] for r in block['agents']]} (min {block['min_shown']}, "
            f"mean {block['mean_shown']}), omitted {[r['omitted'] for r in block['agents']]}"
        )
    print(f"{result['episodes']} episodes in {args.repo}; written to {path}")


if __name__ == "__main__":
    main()
