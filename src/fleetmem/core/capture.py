"""What a person asks to be remembered, found in their own prompt as they would say it.

``captured_facts(prompt)`` returns the wording to store for each request to remember, such
as "remember that we never deploy billing on Fridays", "please remember the staging
database is read-only", "don't forget: …", "note for next time: …", "remember: …" or
"#remember …". It reads only what a person typed (the caller passes the prompt of a
``UserPromptSubmit``, never text an agent wrote) and skips what a person pasted rather than
said: fenced code blocks and quoted (``>``) lines.

A request counts only at the start of a sentence (after an optional "please", "also",
"and", "oh" or "btw"), so "do you remember how…", "I can't remember where…" and "add a
remember-me checkbox" are left alone. "Remember to …" and "don't forget to …" usually ask
for something in this task ("don't forget to add a test"); they count only with a word
that makes them last ("always", "never", "from now on", "next time", …). A sentence that
ends in a question mark is a question, not a request.

Pure: no I/O. The measured rates on generated prompts are in ``tests/facts/test_capture.py``
and docs/facts.md.
"""

from __future__ import annotations

import re

#: At most this many captures from one prompt (a pasted list is not a series of requests).
MAX_CAPTURES = 10
#: The shortest wording worth a fact, and the longest: anything longer is not one fact.
MIN_WORDS = 2
MAX_CHARS = 600

# Words a sentence may open with before the request itself.
_LEAD = r"(?:(?:please|pls|also|and|oh|ok(?:ay)?|btw|so|but)[,]?\s+)*"
# Requests whose rest is what to remember, with or without "that".
_PLAIN = (
    r"remember(?:\s+this)?(?:\s+for\s+(?:next\s+time|later|the\s+future|future\s+runs))?"
    r"|(?:don'?t|do\s+not|never)\s+forget(?:\s+this)?"
    r"|make\s+a\s+note(?:\s+for\s+next\s+time)?"
)
# Labels that open a line or sentence and are followed by a colon or comma.
_LABEL = (
    r"note\s+for\s+(?:next\s+time|later|the\s+future|future\s+runs|future\s+sessions)"
    r"|notes?\s+to\s+self|for\s+next\s+time|for\s+future\s+reference|from\s+now\s+on"
    r"|going\s+forward"
)
_TRIGGER = re.compile(
    rf"^{_LEAD}(?:#remember\b\s*:?\s*(?P<tag>.*)"
    rf"|(?:{_LABEL})\s*[:,]\s*(?P<label>.*)"
    rf"|(?:{_PLAIN})\s*(?P<sep>[:,]|\s+that\b|\s+(?=\S))\s*(?P<plain>.*))$",
    re.IGNORECASE | re.DOTALL,
)
# After "remember" or "don't forget": openings that make a question or a present-task
# instruction rather than something to keep.
_NOT_A_FACT = re.compile(
    r"^(?:how|why|what|where|when|which|who|whom|whose|if|whether|me|us|him|her|them|"
    r"of|it\b(?!\s+is\b)|doing|seeing|having|being|the\s+(?:time|day|way)\s+when)\b",
    re.IGNORECASE,
)
# A statement rather than a bare name: a subject pronoun first, or a verb a fact would use.
_CLAUSE = re.compile(
    r"^(?:we|i|you|they|he|she|our|my|your|their|everyone|nobody|no\s+one)\b"
    r"|\b(?:is|are|was|were|be|been|has|have|had|must|should|shall|will|would|can|cannot|"
    r"can't|won't|doesn't|don't|isn't|aren't|wasn't|needs?|uses?|runs?|lives|goes|takes|"
    r"means|expects|requires|prefers|wants|belongs|breaks|only)\b",
    re.IGNORECASE,
)
_TO = re.compile(r"^to\s+", re.IGNORECASE)
# Words that make "remember to …" a standing instruction rather than a step of this task.
_LASTING = re.compile(
    r"\b(?:always|never|every\s+time|each\s+time|whenever|from\s+now\s+on|going\s+forward|"
    r"in\s+(?:the\s+)?future|next\s+time|from\s+here\s+on|any\s+time|anytime|in\s+every)\b",
    re.IGNORECASE,
)
# A sentence ends at . ! ? followed by space and a capital, or at a line's end; dots inside
# names (config.py, e.g.) do not end one.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(#])")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_BULLET = re.compile(r"^(?:[-*\u2022]|\d{1,2}[.)])\s+")
_MARKER = re.compile(r"^(?:#remember\b|remember\s*:)\s*:?\s*(?P<rest>.*)$", re.IGNORECASE)


def captured_facts(prompt: str) -> list[str]:
    """The wording of each fact ``prompt`` asks to be remembered, in order, without repeats."""
    found: list[str] = []
    for sentence in _sentences(prompt):
        body = _request(sentence)
        if body is not None and body not in found:
            found.append(body)
        if len(found) == MAX_CAPTURES:
            break
    return found


def without_requests(prompt: str) -> str:
    """``prompt`` with its requests to remember taken out: what else the person asked, so
    the facts matched to a prompt are matched to its task, not to what it asked to keep."""
    rest = prompt
    for sentence in _sentences(prompt):
        if _request(sentence) is not None:
            # A block under a marker was joined from several lines: it stays, as it is not
            # found whole in the prompt.
            rest = rest.replace(sentence, " ", 1)
    return rest


def _sentences(prompt: str) -> list[str]:
    """The person's own sentences: lines outside fences and quotes, split at sentence ends."""
    out: list[str] = []
    fenced = False
    lines = prompt.splitlines()
    at = 0
    while at < len(lines):
        line = lines[at]
        at += 1
        if _FENCE.match(line):
            fenced = not fenced
            continue
        stripped = line.strip()
        if fenced or not stripped or stripped.startswith(">"):
            continue
        # A marker at the line's start takes the whole line (its wording may hold sentences).
        marker = _MARKER.match(stripped)
        if marker:
            # A marker line that only opens a block ("remember:", "remember: users:",
            # "remember: [smtp]") takes the lines below it, up to a blank line: the block
            # is what to keep.
            rest = marker.group("rest")
            if rest.endswith(":") or len(rest.split()) < MIN_WORDS:
                block = []
                while at < len(lines) and lines[at].strip() and not _FENCE.match(lines[at]):
                    if not lines[at].strip().startswith(">"):
                        block.append(lines[at].strip())
                    at += 1
                if block and not rest and all(map(_BULLET.match, block)):
                    # A list under a bare marker: each item is a fact of its own.
                    out.extend("remember: " + _BULLET.sub("", item) for item in block)
                    continue
                stripped = " ".join([stripped, *block])
            out.append(stripped)
            continue
        out.extend(part.strip() for part in _SENTENCE_END.split(stripped) if part.strip())
    return out


def _request(sentence: str) -> str | None:
    """The wording ``sentence`` asks to keep, or None when it asks for nothing lasting."""
    if sentence.rstrip().endswith("?"):
        return None
    match = _TRIGGER.match(sentence)
    if match is None:
        return None
    body = (match.group("tag") or match.group("label") or match.group("plain") or "").strip()
    if match.group("plain") is not None and match.group("sep").strip() == "":
        # "remember X" with neither "that" nor a colon: X must state something lasting,
        # not ask ("how…"), name a thing for this task ("the changelog"), or be a step.
        if _NOT_A_FACT.match(body):
            return None
        if _TO.match(body):
            if not _LASTING.search(body):
                return None
            body = _TO.sub("", body)
        elif not (_CLAUSE.search(body) or _LASTING.search(body)):
            return None
    return _tidy(body)


def _tidy(body: str) -> str | None:
    body = re.sub(r"\s+", " ", body).strip().rstrip(",;:").strip()
    if body.lower().startswith("that "):
        body = body[5:].lstrip()
    if len(body.split()) < MIN_WORDS or len(body) > MAX_CHARS:
        return None
    return body
