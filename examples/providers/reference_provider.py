#!/usr/bin/env python3
"""A reference episode provider for fleetmem: the four-tool contract, version 1, over MCP.

Read it as the contract's example. It is a separate program that speaks MCP over stdio
(the default) or streamable HTTP, built on the official MCP Python SDK:

    python reference_provider.py                          # stdio
    python reference_provider.py --transport http --port 8765
    python reference_provider.py --store /var/lib/ref/episodes.json

and is configured in fleetmem as an upstream:

    [mcp.ref]
    command = "python3"
    args = ["/path/to/reference_provider.py", "--store", "/var/lib/ref/episodes.json"]

    [memory]
    provider = "ref"

What a provider must do (fleetmem checks it with ``fleetmem provider check``):

* ``memory_contract {}`` -> ``{"contract": 1, "provider": {"name", "version"}}``
* ``memory_record_episode {episode_id, scope, trust_class, episode, text}`` -> ``{"ids": [...]}``
  with 1 to 32 ids of what it stored. This one derives two memories per episode (the whole
  text, and the result excerpt on its own) to show that several ids per episode are fine;
  recording the same episode again returns the same ids.
* ``memory_recall {query, scope, limit, paths?}`` -> ``{"items": [{"id", "text", "score"}]}``,
  at most ``limit`` items, only from the given scopes; text at most 2,000 characters.
* ``memory_forget {id}`` -> ``{"forgotten": true}``, or ``false`` for an id it does not hold.

Answers are JSON text (no structured content), as many real providers send them; fleetmem
accepts either form.

``--misbehave MODE[,MODE...]`` turns it into the misbehaving providers fleetmem's tests run
against: ignore-scope, foreign-ids, oversized (a 5,000-character item and a NaN score),
contract2, no-contract, hang (recall never answers), die (exits during a recall),
malformed (answers out of contract), never-forget. ``--calls-file`` appends each tool call's
name and arguments' episode or item id (never text) to a file, for tests to read.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

NAME = "fleetmem-reference-provider"
VERSION = "1.0.0"
MAX_TEXT = 2000
MODES = {
    "ignore-scope",
    "foreign-ids",
    "oversized",
    "contract2",
    "no-contract",
    "hang",
    "die",
    "malformed",
    "never-forget",
}
WORD = re.compile(r"[a-z0-9]+")


class Memories:
    """Memories by id: {id: {"episode_id", "scope", "text", "started_at", "files"}}."""

    def __init__(self, path: Path | None) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._items: dict[str, dict[str, Any]] = {}
        if path is not None and path.exists():
            self._items = json.loads(path.read_text(encoding="utf-8"))

    def _save(self) -> None:
        if self._path is None:
            return
        tmp = self._path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._items), encoding="utf-8")
        tmp.replace(self._path)

    def put(self, items: dict[str, dict[str, Any]]) -> None:
        with self._lock:
            self._items.update(items)
            self._save()

    def delete(self, memory_id: str) -> bool:
        with self._lock:
            found = self._items.pop(memory_id, None) is not None
            self._save()
            return found

    def all(self) -> list[tuple[str, dict[str, Any]]]:
        with self._lock:
            return list(self._items.items())


def memory_ids(episode_id: str) -> tuple[str, str]:
    """Stable ids of the two memories derived from one episode."""
    stem = "ref-" + hashlib.sha256(episode_id.encode()).hexdigest()[:16]
    return f"{stem}-full", f"{stem}-excerpt"


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def build(args: argparse.Namespace) -> MCPServer:
    modes = set(args.misbehave)
    store = Memories(Path(args.store) if args.store else None)
    calls_file = Path(args.calls_file) if args.calls_file else None
    server = MCPServer(NAME, version=VERSION, log_level="WARNING")

    def note(tool: str, detail: str = "") -> None:
        if calls_file is not None:
            with calls_file.open("a", encoding="utf-8") as out:
                out.write(f"{os.getpid()} {tool} {detail}".rstrip() + "\n")

    def answer(data: dict[str, Any]) -> str:
        # allow_nan: the oversized mode sends a NaN score, which is not valid JSON on purpose.
        return json.dumps(data, allow_nan=True)

    if "no-contract" not in modes:

        @server.tool(structured_output=False)
        def memory_contract() -> str:
            """The contract version this provider implements."""
            note("memory_contract")
            version = 2 if "contract2" in modes else 1
            if args.contract_from:  # tests change the answer while the process runs
                version = int(Path(args.contract_from).read_text(encoding="utf-8").strip())
            return answer({"contract": version, "provider": {"name": NAME, "version": VERSION}})

    @server.tool(structured_output=False)
    def memory_record_episode(
        episode_id: str, scope: str, trust_class: str, episode: dict[str, Any], text: str
    ) -> str:
        """Store one episode; returns the ids of the memories derived from it."""
        note("memory_record_episode", episode_id)
        if "malformed" in modes:
            return answer({"ids": "not-a-list"})
        full, excerpt = memory_ids(episode_id)
        common = {
            "episode_id": episode_id,
            "scope": scope,
            "started_at": str(episode.get("started_at") or ""),
            "files": [str(f) for f in episode.get("files_touched") or []],
        }
        derived = {full: {**common, "text": text[:MAX_TEXT]}}
        excerpt_text = str(episode.get("result_excerpt") or "")
        if excerpt_text:
            derived[excerpt] = {**common, "text": excerpt_text[:MAX_TEXT]}
        store.put(derived)
        return answer({"ids": list(derived)})

    @server.tool(structured_output=False)
    def memory_recall(
        query: str, scope: list[str], limit: int, paths: list[str] | None = None
    ) -> str:
        """Memories sharing words with the query, in the given scopes, best first."""
        note("memory_recall")
        if "die" in modes:
            os._exit(17)  # mid-session, mid-call: the client sees the connection close
        if "hang" in modes:
            time.sleep(3600)
        if "malformed" in modes:
            return "this is not JSON"
        wanted = words(query)
        boost = set(paths or ())
        scored = []
        for memory_id, item in store.all():
            if "ignore-scope" not in modes and item["scope"] not in scope:
                continue
            overlap = len(wanted & words(item["text"]))
            if not overlap:
                continue
            score = overlap / (len(wanted) or 1) + (0.5 if boost & set(item["files"]) else 0.0)
            scored.append((score, item["started_at"], memory_id, item["text"]))
        scored.sort(key=lambda s: (-s[0], s[1], s[2]))
        items: list[dict[str, Any]] = [
            {"id": memory_id, "text": text, "score": round(score, 6)}
            for score, _, memory_id, text in scored[:limit]
        ]
        if "foreign-ids" in modes:
            items.append({"id": "foreign-memory-1", "text": "from another tool", "score": 0.5})
        if "oversized" in modes and items:
            first = items[0]["id"]
            items.append({"id": first, "text": "x" * 5000, "score": 0.4})
            items.append({"id": first, "text": "a NaN score", "score": float("nan")})
        return answer({"items": items})

    @server.tool(structured_output=False)
    def memory_forget(id: str) -> str:
        """Forget one memory; false when this provider does not hold it."""
        note("memory_forget", id)
        if "malformed" in modes:
            return answer({"forgotten": "maybe"})
        if "never-forget" in modes:
            return answer({"forgotten": True})
        return answer({"forgotten": store.delete(id)})

    return server


def serve_http(server: MCPServer, host: str, port: int, require: tuple[str, str] | None) -> None:
    import anyio
    import uvicorn

    app = server.streamable_http_app(host=host)

    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and require is not None:
            headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers", [])}
            if headers.get(require[0]) != require[1]:
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"missing or wrong header"})
                return
        await app(scope, receive, send)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    bound = sock.getsockname()[1]
    print(f"listening http://{host}:{bound}/mcp", flush=True)
    config = uvicorn.Config(guarded, log_level="warning", lifespan="off")
    uv = uvicorn.Server(config)

    async def main() -> None:
        # The streamable HTTP app needs its session manager running (its lifespan).
        async with server.session_manager.run():
            await uv.serve(sockets=[sock])

    anyio.run(main)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0, help="HTTP port (0: any free port)")
    p.add_argument("--store", help="keep memories in this JSON file (default: in memory)")
    p.add_argument("--calls-file", help="append each tool call's name and id here")
    p.add_argument("--pid-file", help="write the process id here")
    p.add_argument("--contract-from", help="answer the contract version read from this file")
    p.add_argument("--require-header", help="HTTP only: refuse requests without NAME=VALUE")
    p.add_argument(
        "--misbehave",
        type=lambda s: [m for m in s.split(",") if m],
        default=[],
        help="comma-separated: " + ", ".join(sorted(MODES)),
    )
    args = p.parse_args(argv)
    unknown = set(args.misbehave) - MODES
    if unknown:
        p.error(f"unknown --misbehave mode(s): {', '.join(sorted(unknown))}")
    if args.pid_file:
        Path(args.pid_file).write_text(str(os.getpid()), encoding="utf-8")
    require: tuple[str, str] | None = None
    if args.require_header:
        header, _, expected = args.require_header.partition("=")
        if not expected:
            p.error("--require-header takes NAME=VALUE")
        require = (header.lower(), expected)
    server = build(args)
    if args.transport == "http":
        serve_http(server, args.host, args.port, require)
    else:
        server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
