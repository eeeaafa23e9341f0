"""A PostToolUse edit's heartbeat, sent after the hook has answered.

With no daemon, a hook is a process of its own. Noting a command, or an edit of a file it
heartbeated moments ago, needs nothing but the standard library (about 70 ms); but the first
edit of a file must tell the run's presence, which means building the application: about
170 ms more, after every such tool call, while the agent waits (measured 2026-12-06). So the
hook notes the edit for SessionEnd at once, answers, and leaves the heartbeat to this
module, run as a detached process of its own (:func:`spawn`). It does exactly what the hook
did before: the same heartbeat, the same refusal logged, the file marked fresh once the run
has heard of it; only later by the time the application takes to build.

When a daemon listens, the daemon answers the whole hook (it has the application open), so
nothing is deferred.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: Seconds the detached process may take in all (building, heartbeat, closing).
BUDGET_S = 20.0
#: The largest request it reads on stdin (a path and names).
MAX_REQUEST_BYTES = 64 * 1024

log = logging.getLogger("fleetmem.hooks")


def spawn(home: Path, integration: str, agent: str | None, session_id: str, path: str) -> None:
    """Start the detached process for one edit's heartbeat; raises OSError if it cannot."""
    request = json.dumps(
        {"integration": integration, "agent": agent, "session_id": session_id, "path": path}
    ).encode()
    env = dict(os.environ, FLEETMEM_HOME=str(home))
    proc = subprocess.Popen(
        [sys.executable, "-m", "fleetmem.integrations.hook_heartbeat"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,  # outlives the hook, untouched by a signal to its group
    )
    assert proc.stdin is not None
    # Far below a pipe's buffer: the write does not wait for the child to read.
    proc.stdin.write(request)
    proc.stdin.close()


def heartbeat(request: Mapping[str, Any], environ: Mapping[str, str]) -> None:
    """Build the application, send the heartbeat for ``request``'s edit, close."""
    from fleetmem.homedir import default_home
    from fleetmem.integrations.hookmain import AGENT_ENV, hooks_class
    from fleetmem.integrations.hookstate import StateFiles
    from fleetmem.service.bootstrap import build

    started = time.monotonic()
    integration = str(request["integration"])
    sid, path = str(request["session_id"]), str(request["path"])
    home = default_home(environ)
    state = StateFiles(home, integration).load(sid)
    if state is None:  # the session ended meanwhile: its record has the edit already
        log.info("hook.heartbeat_skipped reason=no_session")
        return
    app = build(home, environ)
    try:
        agent = request.get("agent") or environ.get(AGENT_ENV) or integration
        hooks = hooks_class(integration)(app, agent=str(agent), environ=dict(environ))
        hooks.heartbeat_edit(state, path)
    finally:
        app.close()
    log.info(
        "hook.heartbeat run=%s ms=%d deferred=1",
        state.run_id,
        (time.monotonic() - started) * 1000,
    )


def main() -> int:
    """The detached process: never prints, always exits 0, logs to ``logs/hooks.log``."""
    from fleetmem.homedir import default_home
    from fleetmem.integrations.hookmain import log_to_file

    timer = threading.Timer(BUDGET_S, os._exit, args=(0,))
    timer.daemon = True
    timer.start()
    try:
        log_to_file(default_home(os.environ))
        request = json.loads(sys.stdin.buffer.read(MAX_REQUEST_BYTES))
        heartbeat(request, os.environ)
    except BaseException as exc:  # fail quietly: the edit is noted for SessionEnd anyway
        log.warning("hook.heartbeat_failed error=%s: %s", type(exc).__name__, str(exc)[:300])
    return 0


if __name__ == "__main__":
    main()
    from fleetmem import save_compiled

    save_compiled()
    os._exit(0)
