"""Context files: the fixed catalog, names, limits and what a body may contain (pure).

Three families (docs/context-files.md):

* **workspace context files**: exactly six per workspace, each loaded on every run or read on
  demand; at most three load on every run, sharing one 1,500-token budget;
* **agent files**: per agent, Identity, Role, Notes, Capabilities, Operating loop, Tools, Skills
  and Output contract, each with its FR-47 budget; Notes is the only one an agent may write;
* **project files**: per repository, the notebook (agents append to it) and the scope prompt
  (people only), part of every run there.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from dataclasses import dataclass
from typing import Final, Literal

from fleetmem.errors import InvalidInput, NotFound

FileKind = Literal["workspace", "agent", "project"]
Mode = Literal["every_run", "on_demand"]
ActorKind = Literal["user", "agent", "system"]

#: A body is at most this many bytes of UTF-8 (FR-31).
MAX_FILE_BYTES: Final = 64 * 1024
#: At most this many workspace files load on every run (FR-28).
MAX_EVERY_RUN: Final = 3
#: Every-run workspace files share this budget (FR-29).
WORKSPACE_CONTEXT_BUDGET: Final = 1500
#: A note appended by an agent (``note_project``, ``update_notes``) is at most this long.
MAX_NOTE_CHARS: Final = 2000
#: Revisions kept per file: the last 20, plus every one younger than 30 days (FR-38).
KEEP_REVISIONS: Final = 20
KEEP_REVISIONS_YOUNGER_THAN_S: Final = 30 * 86_400.0

#: The Skills file's budget unless the agent's ``skills_budget`` says otherwise (FR-47).
SKILLS_BUDGET: Final = 4000
#: A ``## `` heading opens one skill in the Skills file.
_SKILL_HEADING: Final = re.compile(r"^## +\S", re.MULTILINE)


def count_skills(body: str) -> int:
    """How many skills a Skills file holds: its ``## `` headings (a body with text but no
    heading is one skill)."""
    found = len(_SKILL_HEADING.findall(body))
    return found or (1 if body.strip() else 0)


#: The authoring rule the head-and-tail truncation implies (FR-44).
AUTHORING_RULE: Final = (
    "Lead with what matters most — the top of a file is the part that always survives."
)


@dataclass(frozen=True, slots=True)
class FileSpec:
    """One file of the catalog: its family, stable slug, title, caption and budget."""

    kind: FileKind
    slug: str
    title: str
    caption: str
    budget: int | None = None  # None: workspace files (shared budget or on demand)
    default_mode: Mode | None = None  # workspace files only


WORKSPACE_FILES: Final[tuple[FileSpec, ...]] = (
    FileSpec("workspace", "about_you", "About you",
             "Who you are, what you care about and how you like to work.",
             default_mode="every_run"),
    FileSpec("workspace", "organization", "Organization",
             "What the organization does, its products and how it is structured.",
             default_mode="on_demand"),
    FileSpec("workspace", "people", "People",
             "Who is who: names, roles, who owns what and whom to ask.",
             default_mode="on_demand"),
    FileSpec("workspace", "glossary", "Glossary",
             "Words with a special meaning here, and words to avoid.",
             default_mode="on_demand"),
    FileSpec("workspace", "voice", "Voice",
             "How your agents write: tone, style, words to use and avoid.",
             default_mode="every_run"),
    FileSpec("workspace", "roster", "Roster",
             "Your agents: who does what and who hands work to whom.",
             default_mode="on_demand"),
)  # fmt: skip

AGENT_FILES: Final[tuple[FileSpec, ...]] = (
    FileSpec("agent", "identity", "Identity",
             "Who this agent is — voice, values, how it carries itself.", 1200),
    FileSpec("agent", "role", "Role", "What it owns and how it works.", 1200),
    FileSpec("agent", "notes", "Notes",
             "What this agent learned and keeps for itself; the one file it may write.", 1500),
    FileSpec("agent", "capabilities", "Capabilities", "What this agent can do, briefly.", 400),
    FileSpec("agent", "operating_loop", "Operating loop",
             "How it goes about a task, step by step.", 800),
    FileSpec("agent", "tools", "Tools", "Which tools it has and when to use each.", 1500),
    FileSpec("agent", "skills", "Skills",
             "Procedures it can follow, one ## heading per skill: when to use it, the steps.",
             SKILLS_BUDGET),
    FileSpec("agent", "output_contract", "Output contract",
             "The shape every answer must take.", 150),
)  # fmt: skip

#: What one repository's work asks of every agent in it: the seed's "Work-level prompt
#: customisation" (FR-47's Scope prompts), written by people only.
SCOPE_PROMPT: Final = FileSpec(
    "project",
    "scope_prompt",
    "Scope prompt",
    "How work in this repository is done: instructions every agent working here follows.",
    600,
)

NOTEBOOK: Final = FileSpec(
    "project",
    "notebook",
    "Project notebook",
    "Conventions and standing facts for this repository; every agent working here gets it.",
    4000,
)

_BY_KIND: Final[dict[FileKind, tuple[FileSpec, ...]]] = {
    "workspace": WORKSPACE_FILES,
    "agent": AGENT_FILES,
    "project": (NOTEBOOK, SCOPE_PROMPT),
}
_MODE_NAMES: Final[dict[str, Mode]] = {
    "every_run": "every_run",
    "on_demand": "on_demand",
}


def _slug(text: str) -> str:
    return re.sub(r"[\s_-]+", "_", text.strip().casefold())


def resolve(kind: FileKind, name: str) -> FileSpec:
    """The file of family ``kind`` called ``name`` (slug or title, any case, - or _ or space)."""
    wanted = _slug(name) if isinstance(name, str) else ""
    for spec in _BY_KIND[kind]:
        if wanted in (spec.slug, _slug(spec.title)):
            return spec
    others = [s for k, specs in _BY_KIND.items() if k != kind for s in specs]
    for spec in others:
        if wanted in (spec.slug, _slug(spec.title)):
            hint = {
                "workspace": "it is a workspace context file: leave out --agent and --project",
                "agent": "it is an agent file: name the agent (--agent NAME)",
                "project": "it is a project notebook: name the repository (--project REPO)",
            }[spec.kind]
            # A real file, of another family: not found where it was looked for.
            raise NotFound(f"no {kind} file {name!r}: {hint}", file=spec.slug)
    choices = ", ".join(spec.slug for spec in _BY_KIND[kind])
    raise InvalidInput("name", name, f"no such {kind} file; one of {choices}")


def parse_mode(text: str) -> Mode:
    """``every-run``/``every_run`` or ``on-demand``/``on_demand``."""
    mode = _MODE_NAMES.get(_slug(text)) if isinstance(text, str) else None
    if mode is None:
        raise InvalidInput("mode", text, "must be every-run or on-demand")
    return mode


@dataclass(frozen=True, slots=True)
class FileRef:
    """One file: its spec and owner (``""`` for workspace files, an agent or a repository)."""

    spec: FileSpec
    owner: str = ""

    @property
    def kind(self) -> FileKind:
        return self.spec.kind

    @property
    def name(self) -> str:
        return self.spec.slug

    def __str__(self) -> str:
        if self.kind == "workspace":
            return f"workspace/{self.name}"
        return f"{self.kind}/{self.owner}/{self.name}"

    @property
    def display(self) -> str:
        """``Voice``, ``Notes — research-agent``, ``Project notebook — github.com/acme/api``."""
        return self.spec.title if not self.owner else f"{self.spec.title} — {self.owner}"


# ---------------------------------------------------------------------------------------------
# Bodies
# ---------------------------------------------------------------------------------------------

# Refused anywhere in a body: controls other than tab and newline, unpaired surrogates, line and
# paragraph separators, bidi embeddings/overrides/isolates, invisible format characters, blank
# letters, interlinear annotations, tag characters (allowed only inside an emoji flag tag
# sequence, checked separately) and the two non-characters U+FFFE/U+FFFF. Zero-width (non-)
# joiners, LRM/RLM/ALM and variation selectors stay: emoji sequences and several scripts need
# them.
_REFUSED_RE: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\u200b\u2060-\u2064\u206a-\u206f\ufeff\u180e\ufff9-\ufffb\ufffe\uffff"
    "\u115f\u1160\u3164\uffa0\U000e0000-\U000e007f]"
)
_EMOJI_TAG_SEQUENCE_RE: Final = re.compile("\U0001f3f4[\U000e0020-\U000e007e]+\U000e007f")
_WHY: Final = {
    "bidi": "bidirectional controls can make text read differently from how it displays",
    "tag": "tag characters are invisible and can smuggle text to an agent",
    "separator": "use a newline instead",
    "control": "control characters are not text",
    "surrogate": "an unpaired surrogate is not a character",
    "invisible": "invisible characters can hide or split words",
}


def _why(char: str) -> str:
    code = ord(char)
    if 0x202A <= code <= 0x202E or 0x2066 <= code <= 0x2069:
        return _WHY["bidi"]
    if 0xE0000 <= code <= 0xE007F:
        return _WHY["tag"]
    if code in (0x2028, 0x2029):
        return _WHY["separator"]
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return _WHY["control"]
    if 0xD800 <= code <= 0xDFFF:
        return _WHY["surrogate"]
    return _WHY["invisible"]


def normalize_body(text: str) -> str:
    """The body as stored: one leading BOM dropped, CRLF and lone CR turned into LF."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def body_problem(text: str) -> str | None:
    """Why ``text`` (already normalized) cannot be stored, or None. Names position, not content."""
    position = 0
    while (match := _REFUSED_RE.search(text, position)) is not None:
        char = match.group()
        if 0xE0020 <= ord(char) <= 0xE007F:
            sequence = _EMOJI_TAG_SEQUENCE_RE.match(text, max(0, match.start() - 1))
            # A flag's tags follow U+1F3F4, which is two UTF-16 units but one code point here.
            if sequence is not None and sequence.start() < match.start() < sequence.end():
                position = sequence.end()
                continue
        line = text.count("\n", 0, match.start()) + 1
        column = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
        name = unicodedata.name(char, "") if not 0xD800 <= ord(char) <= 0xDFFF else ""
        label = f"U+{ord(char):04X}" + (f" {name}" if name else "")
        return f"contains {label} at line {line}, column {column}: {_why(char)}"
    return None


def check_body(text: object, field: str = "text") -> str:
    """Normalize and validate a body; raise InvalidInput naming ``field`` (never the text)."""
    if not isinstance(text, str):
        raise InvalidInput(field, type(text).__name__, "must be a string")
    body = normalize_body(text)
    problem = body_problem(body)
    if problem is not None:
        raise InvalidInput(field, f"<{len(body)} characters>", problem)
    size = len(body.encode("utf-8"))
    if size > MAX_FILE_BYTES:
        raise InvalidInput(
            field,
            f"<{size:,} bytes>",
            f"a context file is at most {MAX_FILE_BYTES:,} bytes (64 KB); trim"
            f" {size - MAX_FILE_BYTES:,} bytes",
        )
    return body


def append_note(body: str, note: str) -> str:
    """``body`` with ``note`` added as its last line(s); the old body stays an exact prefix."""
    note = note.strip("\n")
    if not body:
        return note + "\n"
    return body + ("" if body.endswith("\n") else "\n") + note + "\n"


def unified_diff(old: str, new: str, old_label: str, new_label: str) -> str:
    """A unified diff from ``old`` to ``new`` (empty when they are equal)."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=old_label,
        tofile=new_label,
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)
