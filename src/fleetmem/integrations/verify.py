"""Which command runs are verifications (tests, builds, linters, type checks), and of what class.

An agent's stream reports the commands it ran; a run record only cares about the ones that
check the work. :func:`classify` answers with an error class for a verification and None for
anything else (``ls``, ``git status``, ``cat``). An agent's ``verify_patterns`` are tried
first, as regular expressions searched in the whole command line; then the built-in rules:

- ``test_failure``: pytest, tox, nox, ``python -m pytest/unittest``, jest, vitest, mocha,
  rspec, phpunit, ctest, bats, ``go test``, ``cargo test/nextest``, ``npm/yarn/pnpm/bun
  test`` and ``run test*``, ``mvn test/verify``, ``gradle test/check``, ``make test/check``,
  ``dotnet/mix/swift/deno test``;
- ``build_failure``: ``make`` (other targets), ``cargo build``, ``go build``, ``npm run
  build*``, ``mvn package/compile/install``, ``gradle build/assemble``, ``cmake --build``,
  ninja, ``dotnet build``, ``bazel build``, ``python -m build``;
- ``lint_failure``: ruff, flake8, pylint, eslint, golangci-lint, ``cargo clippy``,
  shellcheck, rubocop, ``black/prettier --check``, ``go vet``, ``npm run lint*``, ``make lint``;
- ``type_error``: mypy, pyright, tsc, flow, ``cargo check``, ``npm run typecheck``,
  ``make typecheck``.

Commands are read the way a shell would split them: ``cd api && pytest -q`` is a test run,
``bash -lc 'npm test'`` too, and wrappers (``uv run``, ``poetry run``, ``npx``, ``python -m``,
``timeout 60``, ``env A=1``, ``time``...) are looked through.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence
from typing import Final, Protocol

TEST, BUILD, LINT, TYPE = "test_failure", "build_failure", "lint_failure", "type_error"

_SEPARATORS: Final = re.compile(r"&&|\|\||;|\||\n")
_ASSIGNMENT: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")
_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
# Prefixes that run the next word: (name, how many following words to skip first).
_RUNNERS: Final[dict[str, int]] = {
    "time": 0, "nice": 0, "nohup": 0, "sudo": 0, "command": 0, "exec": 0, "xvfb-run": 0,
    "npx": 0, "bunx": 0, "pipx": 0, "uvx": 0, "timeout": 1, "env": 0,
}  # fmt: skip
_RUN_SUBCOMMANDS: Final[dict[str, frozenset[str]]] = {
    "uv": frozenset({"run"}),
    "poetry": frozenset({"run"}),
    "pipenv": frozenset({"run"}),
    "pdm": frozenset({"run"}),
    "hatch": frozenset({"run"}),
    "rye": frozenset({"run"}),
    "pnpm": frozenset({"exec", "dlx"}),
    "yarn": frozenset({"dlx", "exec"}),
    "bundle": frozenset({"exec"}),
    "conda": frozenset({"run"}),
}
_SIMPLE: Final[dict[str, str]] = {
    "pytest": TEST, "py.test": TEST, "tox": TEST, "nox": TEST, "jest": TEST, "vitest": TEST,
    "mocha": TEST, "ava": TEST, "karma": TEST, "rspec": TEST, "phpunit": TEST, "ctest": TEST,
    "bats": TEST, "nosetests": TEST, "playwright": TEST, "cypress": TEST,
    "ninja": BUILD,
    "ruff": LINT, "flake8": LINT, "pylint": LINT, "eslint": LINT, "golangci-lint": LINT,
    "shellcheck": LINT, "rubocop": LINT, "stylelint": LINT, "hadolint": LINT,
    "markdownlint": LINT, "biome": LINT, "oxlint": LINT,
    "mypy": TYPE, "pyright": TYPE, "tsc": TYPE, "flow": TYPE, "vue-tsc": TYPE,
}  # fmt: skip
_SUBCOMMANDS: Final[dict[str, dict[str, str]]] = {
    "go": {"test": TEST, "build": BUILD, "vet": LINT},
    "cargo": {
        "test": TEST, "nextest": TEST, "build": BUILD, "clippy": LINT, "check": TYPE,
    },
    "mvn": {"test": TEST, "verify": TEST, "package": BUILD, "compile": BUILD, "install": BUILD},
    "gradle": {"test": TEST, "check": TEST, "build": BUILD, "assemble": BUILD},
    "dotnet": {"test": TEST, "build": BUILD},
    "mix": {"test": TEST, "compile": BUILD},
    "swift": {"test": TEST, "build": BUILD},
    "deno": {"test": TEST, "lint": LINT, "check": TYPE},
    "bazel": {"test": TEST, "build": BUILD},
    "rake": {"test": TEST, "spec": TEST},
    "cmake": {"--build": BUILD},
}  # fmt: skip
_PACKAGE_MANAGERS: Final = frozenset({"npm", "yarn", "pnpm", "bun"})
_CHECK_FLAG_TOOLS: Final = frozenset({"black", "prettier", "isort"})


class PatternLike(Protocol):
    """What :func:`classify` needs of a configured pattern (``config.VerifyPattern``)."""

    @property
    def match(self) -> str: ...

    @property
    def error_class(self) -> str: ...


def classify(command: str, patterns: Sequence[PatternLike] = ()) -> str | None:
    """The error class of ``command`` when it is a verification, else None."""
    if not isinstance(command, str) or not command.strip():
        return None
    for pattern in patterns:
        try:
            if re.search(pattern.match, command):
                return pattern.error_class
        except re.error:
            continue
    return _builtin(command, depth=0)


def _builtin(command: str, *, depth: int) -> str | None:
    for words in _segments(command):
        found = _segment(words, depth)
        if found is not None:
            return found
    return None


def _segments(command: str) -> list[list[str]]:
    """Simple commands of ``command`` as word lists, split at ``&& || ; |`` and newlines,
    quotes respected and redirections dropped."""
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes: read it the naive way
        return [part.split() for part in _SEPARATORS.split(command)]
    segments: list[list[str]] = [[]]
    redirect = False
    for token in tokens:
        if token in ("&&", "||", ";", "|", "&", ";;", "|&"):
            segments.append([])
        elif token and set(token) <= set("<>&"):
            redirect = True
        elif redirect:
            redirect = False
        elif token not in ("(", ")", "{", "}"):
            segments[-1].append(token)
    return [s for s in segments if s]


def _segment(words: list[str], depth: int) -> str | None:
    while words:
        head = posixpath.basename(words[0])
        if _ASSIGNMENT.fullmatch(words[0]):
            words = words[1:]
        elif head in _SHELLS and depth < 3:
            script = _shell_script(words[1:])
            return _builtin(script, depth=depth + 1) if script is not None else None
        elif head in _RUNNERS:
            words = _skip_options(words[1:], _RUNNERS[head])
        elif head in _RUN_SUBCOMMANDS and len(words) > 1 and words[1] in _RUN_SUBCOMMANDS[head]:
            words = _skip_options(words[2:], 0)
        elif re.fullmatch(r"python[0-9.]*", head) and len(words) > 2 and words[1] == "-m":
            return _python_module(words[2], words[3:])
        else:
            return _command(head, words[1:])
    return None


def _skip_options(words: list[str], positional: int) -> list[str]:
    rest = list(words)
    while rest and (rest[0].startswith("-") or _ASSIGNMENT.fullmatch(rest[0])):
        rest = rest[1:]
    return rest[positional:]


def _shell_script(args: list[str]) -> str | None:
    for i, arg in enumerate(args):
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            return args[i + 1] if i + 1 < len(args) else None
    return None


def _python_module(module: str, args: list[str]) -> str | None:
    if module in ("pytest", "unittest", "nose", "tox", "nox"):
        return TEST
    if module == "build":
        return BUILD
    if module in ("mypy", "pyright"):
        return TYPE
    if module in ("ruff", "flake8", "pylint"):
        return LINT
    if module in _CHECK_FLAG_TOOLS and "--check" in args:
        return LINT
    return None


def _command(head: str, args: list[str]) -> str | None:
    if head in _SIMPLE:
        if head == "ruff" and args[:1] == ["format"] and "--check" not in args:
            return None
        return _SIMPLE[head]
    name = "gradle" if head == "gradlew" else head
    if name in _SUBCOMMANDS:
        sub = next((a for a in args if not a.startswith("-") or a == "--build"), None)
        return _SUBCOMMANDS[name].get(sub or "")
    if head in _CHECK_FLAG_TOOLS:
        return LINT if "--check" in args else None
    if head in _PACKAGE_MANAGERS:
        return _package_script(args)
    if head == "make":
        return _make_target(args)
    return None


def _script_class(script: str) -> str | None:
    if script.startswith(("test", "e2e", "spec")):
        return TEST
    if script.startswith("build"):
        return BUILD
    if script.startswith("lint"):
        return LINT
    if script in ("typecheck", "type-check", "types", "tsc", "check-types"):
        return TYPE
    return None


def _package_script(args: list[str]) -> str | None:
    words = [a for a in args if not a.startswith("-")]
    if not words:
        return None
    if words[0] in ("run", "run-script") and len(words) > 1:
        return _script_class(words[1])
    if words[0] in ("test", "t"):
        return TEST
    # yarn/pnpm/bun run scripts without "run" (``pnpm lint``), except package commands.
    if words[0] in ("install", "add", "remove", "i", "ci", "exec", "dlx", "init", "publish"):
        return None
    return _script_class(words[0])


def _make_target(args: list[str]) -> str | None:
    targets: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("-C", "-f", "-j", "-I", "-o", "-W"):
            skip = True
        elif not arg.startswith("-") and "=" not in arg:
            targets.append(arg)
    target = targets[0] if targets else ""
    if target in ("test", "tests", "check", "unittest", "unit", "integration", "e2e"):
        return TEST
    if target in ("lint", "fmt-check", "format-check", "style"):
        return LINT
    if target in ("typecheck", "type-check", "mypy", "types"):
        return TYPE
    if target in ("clean", "install", "serve", "run", "dev", "help", "deps", "setup"):
        return None
    return BUILD
