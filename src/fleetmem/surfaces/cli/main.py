"""``fleetmem``'s entry point: the console script and ``python -m fleetmem`` call :func:`main`.

An agent hook (``fleetmem hook …``) runs after every tool call, so it is sent on before
anything else is imported: not the parser, not the command modules
(:mod:`fleetmem.surfaces.cli.commandline`, where every other command line goes).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence


def _hook_argv(argv: Sequence[str]) -> tuple[list[str], str | None] | None:
    """``[--home H] [-v] hook REST...`` -> (REST, H); None for any other command line."""
    home = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "hook":
            return list(argv[i + 1 :]), home
        if arg == "--home" and i + 1 < len(argv):
            home, i = argv[i + 1], i + 2
        elif arg.startswith("--home="):
            home, i = arg.split("=", 1)[1], i + 1
        elif arg in ("-v", "--verbose"):
            i += 1
        else:
            return None
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command line; the exit code is documented in docs/cli.md."""
    try:
        try:
            return _main(argv)
        finally:
            # Flush here, inside the guard (also on --help's SystemExit), so a reader that
            # left early is noticed now, not as "Exception ignored" at interpreter exit.
            sys.stdout.flush()
    except BrokenPipeError:
        # `fleetmem ... | head`: the reader has all it wanted. End quietly, as a process
        # killed by SIGPIPE would, and point stdout at /dev/null so the interpreter's final
        # flush has nowhere to fail.
        from fleetmem.surfaces.cli.common import EXIT_BROKEN_PIPE

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE


def _main(argv: Sequence[str] | None) -> int:
    args_in = sys.argv[1:] if argv is None else list(argv)
    hook = _hook_argv(args_in)
    if hook is not None and "-h" not in hook[0] and "--help" not in hook[0]:
        # Agent hooks start fast and always exit 0: no parser, no eager imports.
        from fleetmem.integrations.hookmain import main as hook_main

        return hook_main(hook[0], home=hook[1])
    from fleetmem.surfaces.cli.commandline import run

    return run(argv)


if __name__ == "__main__":
    sys.exit(main())
