"""What a person asks to be remembered, found in their own prompt as they would say it.

``captured_facts(prompt)`` returns the wording to store for each request to remember:
"remember that we never deploy billing on Fridays", "please remember the staging database
is read-only", "don't forget: …", "note for next time: …", "from now on always use pnpm",
"House rule: …", "For your notes: …", "Save this as a preference: …", "Our staging cluster
is in us-east-2, please remember that.", a heading "## Note for future sessions" over a
paragraph, "remember: …" or "#remember …". It reads only what a person typed (the caller
passes the prompt of a ``UserPromptSubmit``, never text an agent wrote) and skips what a
person pasted rather than said: fenced code, quoted (``>``) and indented lines, log lines, and
the paragraph after "the changelog draft says:".

A request opens a sentence (after "please", "btw", "from now on", a vocative or a short
opening clause), points back at what was just said ("X. remember that", "X. It has to stay
that way. Keep that in mind."), or opens what follows ("To be clear for future sessions:",
a line ending "… please remember it from now on:"). An instruction to the agent is a request
when it is told to last ("… going forward", "never … again", "always … in this repo",
"whenever you touch X, …"). "Remember to …", "don't forget to …" and a bare "note …" usually
concern this task ("don't forget to add a test", "note that it returns 404"); they count
only with a word that makes them last ("always", "never", "from now on", "next time", …);
"keep in mind that <a statement>" counts unless it names the work in hand ("… when you
change it"). Wording about this task alone ("for this task", "in this PR", "today"), a plan,
something to find out, a change specified for the code ("from now on, failed uploads should
be retried"), a question ("do you remember how…") and a request to edit a file are not
facts; "can you remember that <a statement>?" is a request.

Requests in Spanish, Portuguese, German, French, Italian, Dutch and Polish are read too
("Recuerda que …", "Merk dir für die Zukunft, dass …", "… Bitte merken."), with the words of
:mod:`fleetmem.core.capture_languages`.

A prompt the rules find nothing in is read a second time by a small learned model
(:mod:`fleetmem.core.capture_learned`) that scores where the prompt could be cut into a request
and its fact; the rules' vetoes (not to keep, this task only, a question, a change to make
now, …) still apply to what it keeps.

The patterns are in :mod:`fleetmem.core.capture_patterns`. Pure: no I/O. The measured
rates (generated prompts in three halves, and 48 corpora written apart from the rules)
are in ``tests/facts/`` and docs/facts.md.
"""

from __future__ import annotations

import functools
import re

from fleetmem.core import capture_languages, capture_learned
from fleetmem.core.capture_patterns import (
    ADVERB_THAT,
    ALL_BACK,
    ALWAYS_NEVER,
    ANY_DASH,
    ASKED_MARK,
    ASKING,
    ASKS,
    ASKS_FOR_WORK,
    BACK_TAIL,
    BARE_KEEP,
    BOLD,
    BUILD_TASK,
    BULLET,
    CLAUSE,
    CLAUSE_BREAK,
    CLAUSE_OPENS,
    CODE_COMMENT,
    CODE_LINE,
    CODE_SPAN,
    CODE_SPOT,
    CODE_WORD,
    COMMENT_TAG,
    COURTESY,
    CUE_OPENS_A_FACT,
    DECORATION,
    DEFINITION,
    DIFF_LINE,
    DIFF_START,
    DIRECTIVE,
    DO_IT_NOW,
    DO_THAT_NOW,
    EDIT_NOW,
    ELSEWHERE,
    ELSEWHERE_FIRST,
    EMOJI_OPENING,
    ENDS_POINTING_BACK,
    EQUALS,
    EVERY_ONLY,
    EVERY_WORD,
    EXPLICIT_KEEP,
    FACT_ASKS,
    FACT_VERB,
    FENCE,
    FILLER,
    FOR_SESSIONS,
    FORGETS,
    FORWARD_FROM,
    GOES_ON,
    GOES_ON_RULE,
    HASH_NOTE,
    HEADING,
    HINT,
    HOW_LONG,
    HOW_LONG_STRONG,
    I_MEAN,
    IMPERATIVE,
    IN_RAM,
    IN_RAM_FOR,
    INDENTED,
    INNER_START,
    INNER_SYMBOLS,
    IT_WILL,
    ITALIC,
    ITS_POLICY,
    KEEP_AHEAD_END,
    KEEP_DASH,
    KEEP_OPENING,
    KEEP_STRONG,
    KEEPISH,
    KEPT_NOUN,
    KIND_LABEL,
    LABEL_ONLY,
    LASTING,
    LATER_ANYWHERE,
    LATER_OPENING,
    LATER_SPEC,
    LEAD_WORDS,
    LOG_LINE,
    LONG_STATEMENT,
    LOOSE_VERB,
    LOWER_END,
    MADE_PERMANENT,
    MANNER,
    MARKER,
    MOVES_ON,
    MUST,
    NEVER_AGAIN,
    NEXT_TIME_WHEN,
    NOT_A_FACT,
    NOT_BEFORE_BACK,
    NOT_KEEP,
    NOT_TO_KEEP,
    NOTE_TO_OTHERS,
    NOTED_THEN,
    NOW_ONLY,
    NOW_WORDS,
    ONE_FOR_LATER,
    OPENING,
    OPENING_BACK_TAIL,
    OR_ASKS,
    OUTLIVES,
    PAREN_KEEP,
    PASTE_ASK,
    PASTE_INTRO,
    PERSONAL,
    PLEASE,
    POINTS_BACK,
    POINTS_FORWARD,
    PRONOUN,
    PROSE_TASK,
    QUOTE_CLOSES,
    QUOTE_END,
    QUOTE_OPENS,
    QUOTED,
    RAM_CHOICE,
    RECALLED,
    REFERENCE,
    RELATIVE,
    REMARK_BACK,
    RULE_ADDS,
    RULE_MARK,
    RULE_REMARK,
    RULE_STEP,
    RUNTIME_SPEC,
    SAID_BY,
    SCOPE_END,
    SELF_TODO,
    SENTENCE_END,
    SHOULD,
    SO_I_CAN,
    SO_THAT,
    SOFT_NOUN,
    SPOKEN_START,
    STANDING_PLACE,
    STANDING_VERB,
    STATE_NOW,
    STATED,
    STATES_OPENING,
    STEP_NOW,
    STEP_OPENING,
    STORE_IN_MEMORY,
    TAG_QUESTION,
    TASK_CLAUSE,
    TASK_HINT,
    TASK_NOW,
    TASK_VERB,
    TENTATIVE,
    THAT_INSIDE,
    THE_THING,
    THIS_SCOPE,
    THIS_TASK,
    THIS_WORK,
    TO,
    TO_FIND_OUT,
    TO_MEMORY,
    TRAILING_SYMBOLS,
    TRIGGER,
    TURNS_AWAY,
    TURNS_BACK,
    TURNS_TO_TASK,
    UNMARKED_QUESTION,
    WHEN_READY,
    WHENEVER,
    WHILE_YOU,
    WITHOUT_IT,
    WORK_IN_HAND,
    WRITING_TASK,
    YOUR_MIND,
)

#: At most this many captures from one prompt (a pasted list is not a series of requests).
MAX_CAPTURES = 10
#: The shortest wording worth a fact, and the longest: anything longer is not one fact.
MIN_WORDS = 2
MAX_CHARS = 600
#: A sentence longer than this is pasted text (a minified file, a log line), not a person
#: asking: it is not searched for requests, which also bounds the time a huge prompt takes.
MAX_SENTENCE = 4_000
#: At most this many sentences of a prompt are searched (see :func:`_searched`).
MAX_SENTENCES = 2_000


def captured_facts(prompt: str, *, learned: bool = True) -> list[str]:
    """The wording of each fact ``prompt`` asks to be remembered, in order, without repeats.

    A prompt in which the rules find nothing is read a second time by the learned model of
    :mod:`fleetmem.core.capture_learned`, unless ``learned`` is False (or its weights
    cannot be read: ``fleetmem doctor`` says so)."""
    return [body for body, _ in _walk(prompt, learned)]


def _model() -> capture_learned.Model | None:
    try:
        return capture_learned.default_model()  # decoded once per process, about 4 ms
    except capture_learned.ModelError:
        return None


# A hook asks about one prompt several times (does it ask? what to store? what else does it
# ask? what to say when it could not be stored?): the rules run once per prompt.
@functools.lru_cache(maxsize=8)
def _walk(
    prompt: str, learned: bool | capture_learned.Model = False
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Each fact asked for, in order and without repeats, with the sentences that asked it
    (the request, and the sentence it points at when that is another one); a prompt the
    rules find nothing in is read by the packaged model when ``learned`` is True, or by the
    model given."""
    if not HINT.search(prompt):
        return ()  # no word any rule needs: the rules are not even compiled
    found = _ruled(prompt)
    if found or learned is False:
        return tuple(item for item in found if not _for_the_work_in_hand(*item))
    model = _model() if learned is True else learned
    if model is None:
        return found
    heard = _learned(prompt, model)
    return (heard,) if heard is not None and not _for_the_work_in_hand(*heard) else ()


def _for_the_work_in_hand(fact: str, used: tuple[str, ...]) -> bool:
    """Whether a fact found by either reading is this task's after all: it, or the clause
    that asked for it, names the piece of work in hand ("from now on in this class, use
    properties", "w tym skrypcie", "for this refactoring") and nothing says it outlives the
    session; or it speaks of this conversation or this task's clock ("I asked you for …",
    "I need this by 5pm"), or it is a step of the task ("…, handle that"). Checked last,
    on what both readings found, so that neither keeps what the other would not."""
    before = _before(fact, used)
    asked = " ".join(used if before is None else before)
    cue = CLAUSE_BREAK.split(asked)[-1]
    said = f"{cue} {fact}"
    # (this conversation's words anywhere in what asked: "memorize... nah, just write it …",
    # "I'll keep it in mind for next time, thanks. Now explain …")
    if (
        NOW_ONLY.search(f"{asked} {fact}")
        or STEP_NOW.search(fact)
        or IN_RAM_FOR.search(" ".join(used))
        or (TASK_CLAUSE.search(fact) and not (RULE_MARK.search(said) or _outlives(said)))
    ):
        return True
    if WHILE_YOU.search(cue) and not (_outlives(said) or LASTING.search(cue)):
        return True  # "While you're refactoring, remember …" (not "… keep in mind permanently")
    # (not words inside a quotation: "… is always 'does this change what citizens see?'")
    return bool(WORK_IN_HAND.search(QUOTED.sub(" ", said))) and not _outlives(said)


def _before(fact: str, used: tuple[str, ...]) -> tuple[str, ...] | None:
    """What precedes ``fact`` among the sentences that asked for it: those before the first
    that holds its opening words, and that one up to them; None when none holds them (a fact
    joined from several lines is not found whole)."""
    head = fact[:15].lower()
    for index, sentence in enumerate(used):
        at = sentence.lower().find(head)
        if at >= 0:
            return (*used[:index], sentence[:at])
    return None


def _outlives(said: str) -> bool:
    """Whether the words say what they ask for outlives the session: "for all sessions, not
    just now", "worth remembering beyond today", "for the long run"."""
    return bool(
        FOR_SESSIONS.search(said)
        or capture_languages.SESSIONS_WORDS.search(said)
        or OUTLIVES.search(said)
    )


def _ruled(prompt: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """What the rules find: :func:`_walk` without the model."""
    one_line = prompt.strip()
    note = HASH_NOTE.match(one_line)
    if note and not COMMENT_TAG.match(one_line) and _statement(note.group("note")):
        # A one-line prompt "# <a statement>": Claude Code's shortcut for adding a memory.
        kept = _kept(note.group("note"))
        return ((kept, (one_line,)),) if kept else ()
    found: list[tuple[str, tuple[str, ...]]] = []
    before = ""
    earlier = ""  # the sentence before ``before``
    history: list[str] = []  # every sentence before ``sentence``, in order
    last = False  # the sentence before gave the last fact found
    ahead = False  # the sentence before asked to remember what comes next
    prose = False  # an earlier sentence asked for text to be written ("Draft the release notes.")
    quoted = False  # inside a quotation that spans sentences ("Summarize this email: 'Hi, …")
    sentences = _searched(_sentences(prompt))
    for at, sentence in enumerate(sentences):
        plain = _plain(sentence)
        body: str | None = None
        used: tuple[str, ...] = (sentence,)
        opens, closes = _quote_marks(sentence)
        if quoted:
            quoted = closes <= opens
            continue
        quoted = opens > closes and not sentence.rstrip().endswith(("'", '"', "\u2019"))
        if prose and not EXPLICIT_KEEP.search(plain):
            # "Draft the release notes. Key point: from now on, API keys expire after 90
            # days.": what the text is to say, unless it tells the agent what to do.
            body = _request(sentence)
            if body is not None and not DIRECTIVE.match(body):
                body = None
        elif (
            last
            and not POINTS_BACK.match(plain)  # "Please make that a standing rule."
            and (
                DO_THAT_NOW.match(plain)
                or (LATER_SPEC.match(_plain(before)) and TASK_NOW.match(plain))
            )
        ):
            # "Going forward, X should skip weekends. Implement that in next_run()", "From now
            # on, new users should get the free plan. Update the signup handler.": the sentence
            # before specified this task's change.
            found.pop()
        elif ahead and not _question(plain) and not POINTS_FORWARD.match(plain):
            body = _request(sentence) or _kept(plain)  # "Can you remember something? X."
            used = (before, sentence)
        elif (
            before
            and (POINTS_BACK.match(plain) or REMARK_BACK.match(plain))
            and (not _question(plain) or ASKS.search(plain))
            and not _noted_then_done(plain)
        ):
            # "You should never commit .env.local. Remember that." (also "… Can you
            # remember that for me?": the request is the question, the fact is before it)
            taken = {s for _, sentences in found for s in sentences}
            if (
                not last
                and found
                and found[-1][1][-1] == earlier
                and not _question(before)
                and not POINTS_BACK.match(_plain(before))
            ):
                # "Never run `terraform apply`. Only plan. I'll apply. Remember this.": the
                # fact kept just before goes on up to the request
                whole = _kept(found[-1][0].rstrip(". ") + ". " + _plain(before))
                if whole is not None:
                    found[-1] = (whole, (*found[-1][1], before, sentence))
            elif not last and not _question(before) and not POINTS_BACK.match(_plain(before)):
                span = _back_span(history, taken, whole=bool(ALL_BACK.search(plain)))
                body = _kept(" ".join(_plain(s) for s in span)) if span else None
                used = (*span, sentence)
        else:
            body = _request(sentence)
            if (
                body is None
                and last
                and found
                and (_continues(plain) or _goes_on_to_the_end(prompt, sentences, at, found[-1]))
            ):
                # "Remember that the Android minSdk is 24. Anything that needs a newer API
                # must be guarded.": the rule goes on in the next sentence
                joined = _kept(found[-1][0].rstrip(". ") + ". " + plain)
                if joined is not None:
                    found[-1] = (joined, (*found[-1][1], sentence))
                    earlier, before = before, sentence
                    history.append(sentence)
                    continue
        # (a pointer with nothing before it points ahead: "Commit this to memory please. Our
        # CI image is …", "memorize this one. The maintenance VLAN is 4001 …")
        # ("Just remember this going forward ok? X": a tag question asks nothing)
        ahead = body is None and (
            _points_forward(TAG_QUESTION.sub(".", plain))
            or (
                not history
                and len(plain.split()) <= 6
                and POINTS_BACK.match(plain) is not None
                and not _question(plain)
            )
        )
        prose = prose or bool(PROSE_TASK.match(plain))
        if body is not None and last and found and PRONOUN.search(body) and _standing(plain):
            # "Remember that I hate the word 'simply'. Never write it.": one fact
            joined = _kept(found[-1][0].rstrip(".") + ". " + body)
            if joined is not None:
                found[-1] = (joined, (*found[-1][1], sentence))
                body = None
        earlier, before = before, sentence
        history.append(sentence)
        last = body is not None and all(body != kept for kept, _ in found)
        if last:
            assert body is not None
            found.append((body, used))
        if len(found) == MAX_CAPTURES:
            break
    return tuple(found)


#: At most this many sentences after a fact, to the prompt's end, go on with it.
GOES_ON_SENTENCES = 3


def _goes_on_to_the_end(
    prompt: str, sentences: list[str], at: int, item: tuple[str, tuple[str, ...]]
) -> bool:
    """Whether the sentences from ``at`` to the prompt's end (a few, on the fact's line)
    all say more of the fact ``item``: after a label ("For good: X. Y."), or each stating
    rather than asking ("Our alarm flood threshold is 10 per operator. Above that, the
    dashboard goes amber. Above 3x that it goes red."), none turning to the task."""
    if len(sentences) - at > GOES_ON_SENTENCES:
        return False
    labelled, previous = _labelled(item), item[1][-1]
    for sentence in sentences[at:]:
        plain = _plain(sentence)
        if not ((labelled or _declares(plain)) and _ends_rule(plain)):
            return False
        if "\n" in _gap(prompt, previous, sentence):
            return False
        previous = sentence
    return True


def _quote_marks(sentence: str) -> tuple[int, int]:
    """How many quotations ``sentence`` opens and closes. A straight double quote counts as
    both, except an unpaired one, which opens when it starts a word ('"You are Halcyon
    Assistant.' opens a quotation that the next sentences are inside)."""
    opens, closes = len(QUOTE_OPENS.findall(sentence)), len(QUOTE_CLOSES.findall(sentence))
    if sentence.count('"') % 2:
        at = sentence.rfind('"')
        if at == 0 or sentence[at - 1] in " \t\n([:":
            closes -= 1
        else:
            opens -= 1
    return opens, closes


def _noted_then_done(sentence: str) -> bool:
    """Whether ``sentence`` notes what came before as a step of the task: "Note it, fix it,
    move on." (not "Note that, and never do it again.")."""
    noted = NOTED_THEN.match(sentence)
    if noted is None:
        return False
    rest = noted.group("rest")
    return bool(TASK_VERB.match(rest) or TASK_NOW.match(rest) or ASKS_FOR_WORK.match(rest))


#: At most this many sentences before a request that points back make its fact.
BACK_SPAN = 4


def _back_span(history: list[str], taken: set[str], *, whole: bool = False) -> tuple[str, ...]:
    """The sentences a request pointing back keeps: the last of ``history``, and the ones
    before it while the first so far only goes on from another ("It has to stay runtime-
    agnostic.", "Ever.", "Just run them.") or says nothing of its own ("Not make, not npm
    scripts.", "Top-level public functions only."), or, when the request points at ``whole``
    of it ("remember all this"), while they state something; none a question, a request, or
    part of a fact kept before."""
    if not history or history[-1] in taken:
        return ()
    span = [history[-1]]
    at = len(history) - 1
    while at > 0 and len(span) < BACK_SPAN:
        first = _plain(span[0])
        if whole:
            if not _said(_plain(history[at - 1])):
                break  # "Long one, sorry."
        elif not (
            GOES_ON.match(first)
            or not _said(first)
            or len(first.split()) < MIN_WORDS
            or (len(first.split()) <= 4 and PRONOUN.search(first))  # "Just run them."
        ):
            break
        prior = history[at - 1]
        plain = _plain(prior)
        if prior in taken or _question(plain) or POINTS_BACK.match(plain) or _request(prior):
            break
        span.insert(0, prior)
        at -= 1
    return tuple(span)


def _searched(sentences: list[str]) -> list[str]:
    """The sentences searched for requests: all of them, or in a prompt of more than
    :data:`MAX_SENTENCES` (a paste) the first ones and the last ones, where a person writes."""
    if len(sentences) <= MAX_SENTENCES:
        return sentences
    tail = MAX_SENTENCES // 4
    return sentences[: MAX_SENTENCES - tail] + sentences[-tail:]


def _learned(prompt: str, model: capture_learned.Model) -> tuple[str, tuple[str, ...]] | None:
    """The fact of the best cut the model reads as a request, with the cue and the fact as
    written, or None when no cut both scores :data:`capture_learned.THRESHOLD` and passes
    the rules' vetoes."""
    best = best_cut(prompt, model)
    if best is None or best[0] < capture_learned.THRESHOLD:
        return None
    return best[1], best[2]


def best_cut(
    prompt: str, model: capture_learned.Model
) -> tuple[float, str, tuple[str, ...]] | None:
    """The highest-scoring cut no veto stops: its score, its fact tidied, and its cue and
    fact as written; None when there is none."""
    sentences = _searched(_sentences(prompt))
    plain = [_plain(s) for s in sentences]
    if any(DO_THAT_NOW.match(PLEASE.sub("", ASKING.sub("", p))) for p in plain):
        # "Going forward, X should Y. Implement that in next_run()." ("Can you implement
        # that?"): a task
        return None
    # "Going forward, refunds should be batched nightly. Write the cron job." (or "Update
    # the signup flow."): a change to make, specified, not a rule for the agent
    # (also in a clause: "From now on the button should say 'Abgeben' — change it in de.yml")
    builds = any(
        WRITING_TASK.match(p) or BUILD_TASK.match(p) or EDIT_NOW.match(p)
        for p in (PLEASE.sub("", c) for p in plain for c in CLAUSE_OPENS.split(p) if c)
    )
    best: tuple[float, str, tuple[str, ...]] | None = None
    for cut in capture_learned.cuts(sentences):
        fact = _kept(cut.fact)
        if not fact or learned_veto(cut.cue, fact) or (builds and SHOULD.search(fact)):
            continue
        score = model.score(cut.cue)
        if best is None or score > best[0]:
            best = (score, fact, (cut.cue, cut.fact))
    return best


#: :data:`HINT`, bound apart: a cue needs one of its words whether or not a caller turns the
#: prompt-wide gate off (so the gate never changes what the model keeps: a prompt without
#: any such word has no cue with one).
_KEEP_WORD = HINT


def _asked_in_quotes(cue: str, fact: str) -> bool:
    """Whether the only words that ask to keep are inside a quotation the fact holds:
    someone else's words, quoted."""
    quoted = " ".join(m.group(0) for m in QUOTED.finditer(fact))
    if not (KEEP_STRONG.search(quoted) or FORGETS.search(quoted)):
        return False
    outside = QUOTED.sub(" ", f"{cue} {fact}")
    return not (KEEP_STRONG.search(outside) or FORGETS.search(outside) or KEEPISH.search(outside))


def _in_ram(cue: str, fact: str) -> bool:
    """Whether the cue speaks of memory as RAM ("Store it in memory: a dict keyed by id is
    enough."): not "store in memory: X", which asks to keep what follows, unless what follows
    is a data structure."""
    if not IN_RAM.search(cue):
        return False
    return not STORE_IN_MEMORY.match(cue) or bool(RAM_CHOICE.search(fact))


def learned_cuts(prompt: str) -> list[capture_learned.Cut]:
    """The cuts of ``prompt``'s own sentences the model scores (and is trained on)."""
    return capture_learned.cuts(_searched(_sentences(prompt)))


def learned_veto(cue: str, fact: str) -> str | None:
    """Why a cut the model may read as a request is not one, whatever its score (the
    reason, or None): the rules' own reasons for a cue (no word any request needs, not to
    keep, this task only, a question of its own, a writing task, inside a quotation or
    code, a courtesy about now, memory as in RAM, a direction in the code) and for a fact
    (a question, code or a log, a change to the code or one to make now, this task's words,
    state or purpose, the work in hand)."""
    # "— write the description for me.": the cue read from its first word
    cue = QUOTED.sub("", cue).lstrip(" ,;:-\u2013\u2014>\u2192")
    if not _KEEP_WORD.search(cue):
        return "no keep word"
    if _asked_in_quotes(cue, fact):
        return "asked inside a quotation"  # '"Don't forget the four-eyes principle!" — our CISO'
    if "?" in CODE_SPAN.sub("", fact) or FACT_ASKS.match(fact):  # not "`?`"
        return "a question for a fact"
    if CUE_OPENS_A_FACT.search(cue):
        return "the cue opens a fact of its own"  # ", remember: X" after "For this task only"
    if len(cue.split()) < 2 and cue[:1].isalnum():
        return "a one-word label"  # "Rule: no-unused-vars …", a linter's line
    if CODE_LINE.match(fact) or LOG_LINE.match(fact):
        return "code or a log line for a fact"  # 'Save this: {"port": 8080}'
    if RUNTIME_SPEC.match(cue + " " + fact):
        return "a change to the code"  # "Going forward, refunds should be batched nightly"
    if _in_ram(cue, fact):
        return "memory as in RAM"  # "Store it in memory: a dict keyed by id is enough."
    if capture_languages.NOT_LASTING_WORDS.search(fact):
        return "the fact is this task's"  # "Recuerda que hoy el staging está caído"
    if WHEN_READY.search(cue):
        return "a courtesy about now"  # "Whenever you're ready, run the full test suite."
    if FORWARD_FROM.search(cue):
        return "a direction in the code"  # "Going forward from the migration, trace …"
    said = cue + " " + fact
    if (STATE_NOW.search(said) or SO_I_CAN.search(said) or TASK_HINT.search(said)) and not (
        _outlives(said) or LASTING.search(cue)  # "default from now on: when you write …, use …"
    ):
        # "For the record, X was already broken …", "keep in mind that I have only 20
        # minutes before the meeting", "… might be offline when this runs"
        return "this task's state or purpose"
    if QUOTE_END.search(fact) or QUOTE_END.search(cue) or _quoting(fact):
        return "inside a quotation"  # "Translate this: '… From now on, X.'"
    if NOT_TO_KEEP.search(cue):
        return "not to keep"  # "I don't want you to memorize my style, …"
    if (EDIT_NOW.match(fact) or BUILD_TASK.match(fact)) and not LASTING.search(fact):
        return "a change to make now"  # "Update the fee in `fees.yaml` — going forward, …"
    if IMPERATIVE.match(fact) and _names_the_work(fact) and not LASTING.search(fact):
        return "an instruction about the work in hand"  # "From here, run the tests in a.py."
    if NOT_KEEP.search(cue) or capture_languages.NOT_LASTING_WORDS.search(cue):
        return "not to keep"
    if THIS_SCOPE.search(cue) and not _outlives(said):  # not "…, not just now"
        return "this task only"
    if WRITING_TASK.match(cue) and not TO_MEMORY.search(cue):  # not "write it to memory:"
        return "a writing task"
    if _quoting(cue) or cue.count("`") % 2:
        return "inside a quotation or code"
    if _question(cue) and not (ASKS.search(cue) or capture_languages.ASKS.search(cue)):
        return "a question"  # "Do you remember …?", not "Could you keep this for later?"
    return None


def without_requests(prompt: str, *, learned: bool = True) -> str:
    """``prompt`` with its requests to remember taken out: what else the person asked, so
    the facts matched to a prompt are matched to its task, not to what it asked to keep."""
    rest = prompt
    for _, used in _walk(prompt, learned):
        for sentence in used:
            # A block under a marker was joined from several lines: it stays, as it is not
            # found whole in the prompt.
            rest = rest.replace(sentence, " ", 1)
    return rest


def _sentences(prompt: str) -> list[str]:
    """The person's own sentences: lines outside fences and quotes, split at sentence ends."""
    out: list[str] = []
    fenced = False
    in_diff = False
    lines = prompt.splitlines()
    # A paste of thousands of lines: its middle is read only for where fences open and close.
    skip_from, skip_to = len(lines), len(lines)
    if len(lines) > MAX_SENTENCES:
        skip_from, skip_to = MAX_SENTENCES - MAX_SENTENCES // 4, len(lines) - MAX_SENTENCES // 4
    at = 0
    while at < len(lines):
        if at == skip_from:
            fenced ^= sum(1 for line in lines[skip_from:skip_to] if FENCE.match(line)) % 2 == 1
            at = skip_to
            continue
        line = lines[at]
        at += 1
        if FENCE.match(line):
            fenced = not fenced
            continue
        stripped = line.strip()
        if fenced or not stripped or stripped.startswith(">") or INDENTED.match(line):
            continue
        if DIFF_START.match(line):
            in_diff = True
        if in_diff and line[:1] in ("+", "-", " ", "@", "\\"):
            continue
        in_diff = False
        if DIFF_LINE.match(line) or CODE_COMMENT.match(line):
            continue
        if stripped.startswith("#") and _code_comment(lines, at - 1):
            continue
        if (
            (
                PASTE_INTRO.search(stripped)
                or (PASTE_ASK.search(stripped) and not _request_next(lines, at))
            )
            and not MARKER.match(stripped)
            and not LABEL_ONLY.match(_plain(stripped))
            and not _request(stripped)
        ):
            # Skip the pasted paragraph: blank lines first, then up to the next blank line.
            while at < len(lines) and not lines[at].strip():
                at += 1
            while at < len(lines) and lines[at].strip():
                at += 1
            continue
        head = TRAILING_SYMBOLS.sub("", _plain(stripped))  # "Remember 👇"
        # A line that only opens what follows: a label ("## Note for future sessions"), or
        # an opening that asks to keep it ("… please remember it from now on:").
        opening = SENTENCE_END.split(head)[-1]  # the line's last sentence
        # (only with a line below it to open: a one-line prompt never compiles LABEL_ONLY)
        below = at
        while below < len(lines) and not lines[below].strip():
            below += 1
        opens = below < len(lines) and (
            LABEL_ONLY.match(head)
            or (
                opening.endswith(":")
                and not CODE_LINE.match(stripped)
                and not _quoting(opening)
                and _asks_to_keep(QUOTED.sub("", opening[:-1]))
                # "Merk dir das Copybook unten für die nächsten Fragen in diesem Chat:"
                and not _for_the_work_in_hand(opening, (opening,))
            )
        )
        if opens and not MARKER.match(stripped):
            below = at
            # blank lines and sub-headings ("### Commit style") stand between it and the text
            while below < len(lines) and (
                not lines[below].strip() or HEADING.match(lines[below].strip())
            ):
                below += 1
            text = lines[below].strip() if below < len(lines) else ""
            if text and not FENCE.match(lines[below]) and not text.startswith(">"):
                label = "remember: "  # what the label says, in the form the rules read
                if not BULLET.match(text):
                    out.append(label + text)
                    at = below + 1
                    continue
                # A list under the label: one fact per item.
                while below < len(lines) and BULLET.match(lines[below].strip()):
                    out.append(label + BULLET.sub("", lines[below].strip()))
                    below += 1
                at = below
                continue
        # A marker at the line's start takes the whole line (its wording may hold sentences).
        marker = MARKER.match(stripped)
        if marker:
            # A marker line that only opens a block ("remember:", "remember: users:",
            # "remember: [smtp]") takes the lines below it, up to a blank line: the block
            # is what to keep.
            rest = marker.group("rest")
            if rest.endswith(":") or len(rest.split()) < MIN_WORDS:
                if not rest:  # "Remember:", a blank line, then the fact
                    while at < len(lines) and not lines[at].strip():
                        at += 1
                block = []
                while at < len(lines) and lines[at].strip() and not FENCE.match(lines[at]):
                    if not lines[at].strip().startswith(">"):
                        block.append(lines[at].strip())
                    at += 1
                if block and not rest and all(map(BULLET.match, block)):
                    # A list under a bare marker: each item is a fact of its own.
                    out.extend("remember: " + BULLET.sub("", item) for item in block)
                    continue
                stripped = " ".join([stripped, *block])
            out.append(stripped)
            continue
        for part in SENTENCE_END.split(stripped):
            out.extend(_lower_sentences(part.strip()))
    return [part for part in out if part]


def _request_next(lines: list[str], at: int) -> bool:
    """Whether the first line with words from ``lines[at]`` on is the person's own request,
    turning from the material asked about ("Can you explain this plan?", a blank line, then
    "FYI for all future sessions: X"), rather than the material itself."""
    while at < len(lines) and not lines[at].strip():
        at += 1
    if at == len(lines):
        return False
    line = lines[at].strip()
    return bool(TURNS_AWAY.match(line)) and _request(line) is not None


def _lower_sentences(text: str) -> list[str]:
    """``text`` split where a sentence that points back at the one before it, or the task
    after such a one, starts in lower case ("X. remember that pls. now commit what we have"):
    typed in a hurry, the request is still a sentence of its own."""
    parts = LOWER_END.split(text)
    if len(parts) == 1:
        return [text]
    # Only a request with a task after it is split off: at the end of the text the rules read
    # "X. remember it!!" whole, and one that opens the text ("remember!! X") asks for what
    # follows it.
    last = len(parts) - 1
    ends_back = [ENDS_POINTING_BACK.match(_plain(part)) is not None for part in parts[:last]]
    back = {at for at in range(last) if (at and _bare_back(parts[at])) or ends_back[at]}
    out = [parts[0]]
    for at, part in enumerate(parts[1:], 1):
        if (at in back and not ends_back[at]) or at - 1 in back:
            out.append(part)
        else:
            out[-1] = f"{out[-1]} {part}"
    return out


def _bare_back(part: str, words: int = 12) -> bool:
    """Whether ``part`` only points back at what was said ("remember that pls.", "keep that
    in mind going forward and redo the diff"), holding no statement of its own after a comma,
    a dash or a colon ("remember this for later, path aliases only work in src/")."""
    plain = _plain(part)
    return (
        len(plain.split()) <= words
        and not re.search(r"[,:;\u2013\u2014]|\s-\s", plain)
        and bool(POINTS_BACK.match(plain))
    )


def _code_comment(lines: list[str], at: int) -> bool:
    """Whether the "#" line ``lines[at]`` comments pasted code rather than heads Markdown:
    it is tagged like code ("# NOTE:"), or a neighbouring line is code or another "#" line."""
    if COMMENT_TAG.match(lines[at].strip()):
        return True
    for near in (at - 1, at + 1):
        if 0 <= near < len(lines):
            text = lines[near].strip()
            if text and (CODE_LINE.match(text) or (text.startswith("#") and near == at - 1)):
                return True
    return False


def _plain(sentence: str) -> str:
    """``sentence`` without the Markdown, bullets and emoji around a request, and without
    the "uh" and "um" of dictation."""
    sentence = FILLER.sub("", ITALIC.sub(r"\1", BOLD.sub("", HEADING.sub("", sentence))))
    return INNER_SYMBOLS.sub("", DECORATION.sub("", sentence)).lstrip("(")


def _request(sentence: str) -> str | None:
    """The wording ``sentence`` asks to keep, or None when it asks for nothing lasting: the
    sentence itself, or (a sentence split where no capital followed its full stop) a part
    of it after a full stop, or a sentence that ends by asking to remember itself."""
    if len(sentence) > MAX_SENTENCE:
        return None
    emoji = EMOJI_OPENING.match(sentence.strip())
    if emoji and _asks_to_keep(_plain(emoji.group("open"))) and not ASKED_MARK.search(sentence):
        return _kept(_plain(emoji.group("rest")))  # "Keep this for next time 🙏 X"
    sentence = TAG_QUESTION.sub(".", _plain(sentence))
    if LOG_LINE.match(sentence) or RUNTIME_SPEC.match(sentence):
        return None  # a log line; "from now on, failed deliveries should be stored …"
    starts = sorted(
        {
            0,
            *(m.end() for m in INNER_START.finditer(sentence)),
            *(m.end() for m in capture_languages.INNER.finditer(sentence)),
            *_spoken_starts(sentence),
        }
    )
    starts = starts[:MAX_CAPTURES]
    for at, start in enumerate(starts):
        body = _asked(_plain(sentence[start:]), after=start > 0)
        if body is None and at + 1 < len(starts):
            # "remember that the macOS runner is flaky, just rerun it. anyway, can you check
            # the logs?": the request ends where the next sentence starts in lower case,
            # unless that sentence asks for it to be done now ("…; please implement that").
            part, after = sentence[start : starts[at + 1]], _plain(sentence[starts[at + 1] :])
            if not (part.rstrip().endswith(";") or DO_THAT_NOW.match(PLEASE.sub("", after))):
                body = _asked(_plain(part), after=start > 0)
        if body is not None:
            return body
    for start in starts:
        body = _opened_ahead(sentence[start:])
        if body is not None:
            return body
    paren = PAREN_KEEP.search(sentence)
    if paren is not None:
        # "btw (remember this one) I never want `any` in our TypeScript": the rest is the fact
        rest = PLEASE.sub(
            "", LEAD_WORDS.sub("", sentence[: paren.start()] + " " + sentence[paren.end() :])
        )
        if _said(rest.strip()) and not _question(rest):
            return _kept(rest)
    back = ENDS_POINTING_BACK.match(sentence)
    if back is not None and IT_WILL.search(sentence, back.end("fact")):
        back = None  # "when you add the column, remember it'll be null": "it" opens a statement
    if back is None and not _question(sentence):
        return _standing(sentence)
    if back is None or (_question(sentence) and not ASKS.search(sentence)):
        return None
    fact = back.group("fact").strip()
    if WRITING_TASK.match(fact):
        return None  # "write a review comment telling him … he should remember it"
    if (
        fact.endswith((":", "'", '"', "\u2018", "\u201c"))
        or _quoting(fact)
        or fact.count('"') % 2
        or fact.count("`") % 2
    ):
        return None  # "Write an email template: 'Please note that from now on, …'"
    if THIS_SCOPE.search(sentence[back.end("fact") :]):
        return None  # "… so keep that in mind when you debug this crash": this task's
    asked = list(ASKED_MARK.finditer(fact))
    if asked:
        # "why did you pick Express? we standardized on Fastify. remember it": the fact is
        # after the question; not "… use polars? would you actually remember it?"; and
        # before a short one: "X. got it? keep that one for good."
        after = fact[asked[-1].end() :].strip()
        opens = max(fact.rfind(". ", 0, asked[-1].start()), fact.rfind("! ", 0, asked[-1].start()))
        if len(after.split()) < 3 and opens > 0 and len(fact[opens:].split()) <= 4:
            fact = fact[: opens + 1]
        else:
            fact = after
        if ASKS.match(fact) or re.match(r"(?:do|does|did|is|are)\s+you\b", fact, re.I):
            return None
    # "I don't remember" says who remembers; "… always. remember" is a request after a stop.
    joined = not re.match(r"\s*[,;.(\u2013\u2014-]", sentence[back.end("fact") :])
    # (a pointer in another language keeps what the English checks cannot read as said)
    said = _said(fact) or capture_languages.BACK_WORDS.search(sentence[back.end("fact") :])
    if (joined and NOT_BEFORE_BACK.search(fact)) or len(fact.split()) < 3 or not said:
        return None
    return _kept(fact)


def _opened_ahead(sentence: str) -> str | None:
    """The wording after an opening that asks to keep what follows it, before a colon, a dash
    or an arrow ("Burn this into your memory: X", "please store: X", "preference to remember
    -> X"), or None."""
    keep = KEEP_OPENING.match(sentence) or KEEP_DASH.match(sentence)
    if keep is not None and keep.re is KEEP_DASH.compiled and STEP_OPENING.search(keep["open"]):
        keep = None  # "Remember to close the file in the finally block — you didn't"
    if keep is None:
        dash = ANY_DASH.match(sentence)  # "Just so you have it for future sessions - X"
        keep = dash if dash and _keeps_ahead(dash.group("open")) else None
    if keep is None or ASKED_MARK.search(sentence):
        return None
    opening, rest = keep.group("open"), keep.group("rest")
    if DO_THAT_NOW.match(PLEASE.sub("", rest)):
        return None  # "next time the consumer starts, it should resume … — add that logic"
    if (
        _asks_to_keep(opening)
        or (BARE_KEEP.match(opening) and _statement(rest))
        or (keep.re is ANY_DASH.compiled and not THIS_TASK.match(opening))
    ):
        inside = THAT_INSIDE.match(opening)
        if inside is not None and _statement(inside.group("fact")):
            # "It should stay in your memory that we support the browsers of the policy: …":
            # the colon is the fact's own
            return _kept(f"{inside.group('fact')}: {rest}")
        return _kept(rest)
    return None


def _spoken_starts(sentence: str) -> list[int]:
    """Where "remember that" starts a request inside a sentence without a stop before it:
    after a colon ("… sorry, in English: please remember that X") or relayed ("my manager
    told me to tell you to remember that X"); not after words that scope it to this task
    ("For this task: …"), quote it ('The doc says: "Please remember that …'), ask for text
    to be written, or only consider it ("I was going to tell you to remember that …")."""
    starts = []
    for found in SPOKEN_START.finditer(sentence):
        before = sentence[: found.start()]
        colon = sentence[found.start()] == ":"
        relayed = re.search(r"\b(?:tell|ask|remind)\s+(?:you|u)\s+to$", before, re.IGNORECASE)
        if not (colon or relayed):
            continue
        if (
            _quoting(before)
            or before.count('"') % 2
            or THIS_TASK.match(before)
            or THIS_SCOPE.search(before)
            or WRITING_TASK.match(before)
            or PROSE_TASK.match(before)
            or SAID_BY.search(before)
            or TENTATIVE.search(before)
        ):
            continue
        starts.append(found.end())
    return starts


def _standing(sentence: str) -> str | None:
    """An instruction that opens with its verb and is told to last: by time words anywhere
    in it ("stop using moment.js, use date-fns going forward"), by "never … again", by the
    place it holds for ("always use Decimal for money in this project"), or by being one to
    the agent rather than about the code in hand ("always run the e2e suite on Firefox too");
    or one given for every time something is done ("whenever you touch the schema, …")."""
    sentence = TRAILING_SYMBOLS.sub("", sentence)  # "✅ always add a test … from now on ✅"
    whenever = WHENEVER.match(sentence)
    if whenever and not TENTATIVE.search(sentence) and not THIS_SCOPE.search(sentence):
        # "Whenever you touch the GraphQL schema, regenerate the types."
        rest = PLEASE.sub("", whenever.group("rest"))
        if IMPERATIVE.match(rest) or rest.lower().startswith("make sure"):
            return _kept(sentence)
    if not IMPERATIVE.match(sentence) or TENTATIVE.search(sentence) or WRITING_TASK.match(sentence):
        return None
    later = LATER_ANYWHERE.search(sentence)
    placed = ALWAYS_NEVER.match(sentence) and (
        STANDING_PLACE.search(sentence)
        or (STANDING_VERB.match(sentence) and not _names_the_work(sentence))
    )
    if later is None and not NEVER_AGAIN.match(sentence) and not placed:
        return None
    before = sentence[: later.start()] if later else sentence
    if later and SO_THAT.search(before.rstrip(" ,")):
        return None  # "Set the policy so that, going forward, objects expire": behaviour
    if ":" in before or _quoting(before) or before.count("`") % 2:
        return None  # "Use this commit message: `refactor: from now on …`"
    if later and not sentence[later.end() :].strip():
        sentence = before.rstrip(" ,;")  # the time words at its end are not the rule's
    return _kept(sentence)


def _continues(sentence: str) -> bool:
    """Whether ``sentence``, right after a request, goes on with the same rule rather than
    turning to the task: it says what the rule is for, or adds to it ("It is a contract
    requirement.", "No exceptions.", "Only document public APIs.", "PCI scope must stay
    minimal."), in a few words and about no time but for good."""
    if _question(sentence) or len(sentence.split()) > 25 or ":" in sentence:
        return False
    if (
        TASK_NOW.match(sentence)
        or DO_THAT_NOW.match(PLEASE.sub("", sentence))
        or NOW_WORDS.search(sentence)
        or _names_the_work(sentence)
        or TENTATIVE.search(sentence)
    ):
        return False
    return bool(
        GOES_ON_RULE.match(sentence)
        or RULE_ADDS.match(sentence)
        or MUST.search(sentence)
        or (len(sentence.split()) <= 12 and SCOPE_END.search(sentence))
        or RULE_STEP.match(sentence.rstrip(" .!"))
        # "Name every constant.", "Run only the tests for the package you changed."
        or (
            len(sentence.split()) <= 14
            and DIRECTIVE.match(sentence)
            and EVERY_ONLY.search(sentence)
        )
    )


def _labelled(item: tuple[str, tuple[str, ...]]) -> bool:
    """Whether a fact was asked for by a label ending in a colon ("For good: X", "Policy you
    should carry forward: X"): what follows it to the prompt's end is what was labelled."""
    before = _before(*item)
    return before is not None and len(before) == len(item[1]) and before[-1].rstrip().endswith(":")


def _gap(prompt: str, first: str, second: str) -> str:
    """What the prompt holds between two of its sentences (where a line may end)."""
    start = prompt.find(first)
    end = prompt.find(second, start + len(first)) if start >= 0 else -1
    return prompt[start + len(first) : end] if end >= 0 else "\n"


def _ends_rule(sentence: str) -> bool:
    """Whether ``sentence``, the prompt's last after a labelled fact on the same line, goes
    on with it ("For good: tagging releases is manual. I don't want an action that auto-tags
    on merge.") rather than turning to the task, thanking or reacting ("… Rename the field.",
    "Thanks, that fixed it.", "Can you check?", "Revisa el PR porfa.")."""
    return not (
        _question(sentence)
        or len(sentence.split()) > 25
        or TASK_NOW.match(sentence)
        or TASK_VERB.match(sentence)
        or TURNS_BACK.search(sentence)
        or DO_THAT_NOW.match(PLEASE.sub("", sentence))
        or NOW_WORDS.search(sentence)
        or _names_the_work(sentence)
        or TENTATIVE.search(sentence)
        or WRITING_TASK.match(sentence)
    )


def _declares(sentence: str) -> bool:
    """Whether ``sentence``, the prompt's last after a fact asked for without a label, says
    more of it ("Remember that the i18n fallback is en-GB. Editorial is London-based.") rather
    than asking for something: a request of its own ("Add date-fns.", "Submit the job.",
    "Scrivi una migrazione …"), a turn to the task ("Anyway, …", "Then point the build at
    it.") or a need of the moment ("I need the jump to feel snappier."), what the change
    should do ("The build should push both tags.") or a remark on the keeping ("Useful for
    later.")."""
    clauses = [c for c in CLAUSE_OPENS.split(sentence) if c]
    if any(
        (DIRECTIVE.match(c) and not STATES_OPENING.match(c))
        or TASK_NOW.match(c)
        or MOVES_ON.match(c)
        or ASKS_FOR_WORK.match(c)
        for c in clauses
    ):
        return False  # "Ticket is PPRT-2231, upgrade the Swashbuckle package."
    if SHOULD.search(sentence):
        return False  # "The build should push both tags.": what this change is to do
    # A remark on the keeping itself ("Useful for later.", "Lasting rule.", "Applies to all
    # future reviews.") is what asked, not more of the fact.
    # ("We never write items back." opens with its subject: more of the fact)
    return not (
        len(sentence.split()) <= 8
        and (_outlives(sentence) or HOW_LONG.search(sentence) or LASTING.search(sentence))
        and not STATES_OPENING.match(sentence)
    )


def _names_the_work(sentence: str) -> bool:
    """Whether ``sentence`` is about the code or task in hand: "in this function", "here",
    "for this PR", "when you change it"."""
    return bool(
        CODE_SPOT.search(sentence)
        or TASK_HINT.search(sentence)
        or THIS_SCOPE.search(sentence)
        or THIS_WORK.search(sentence)
    )


def _points_forward(sentence: str) -> bool:
    """Whether ``sentence`` asks to keep what comes next: "Can you remember something for
    me?", "New thing to remember.", "Let me give you some context you should keep for future
    sessions." """
    if POINTS_FORWARD.match(sentence):
        return True
    opening = sentence.rstrip().rstrip(".:!?")
    # (asked: "Wil je dit onthouden voor volgende gesprekken? X", "Could you keep this for
    # future sessions? X")
    asked = _question(sentence) and bool(
        ASKS.match(sentence) or capture_languages.ASKS.match(sentence)
    )
    return (
        # ("## Context for you (keep this for every future session)", a heading)
        (sentence.rstrip().endswith((".", ":", ")")) or asked)
        and len(opening.split()) <= 20
        # ("… and I need it to stick beyond today.", "## Context (please remember this
        # permanently)")
        and bool(
            FOR_SESSIONS.search(opening)
            or capture_languages.SESSIONS_WORDS.search(opening)
            or OUTLIVES.search(opening)
            or (sentence.rstrip().endswith(")") and HOW_LONG_STRONG.search(opening))
        )
        and _asks_to_keep(opening)
    )


def _keeps_ahead(opening: str) -> bool:
    """Whether an opening before a dash or an arrow says what follows is to be kept: it names
    later sessions ("Just so you have it for future sessions -"), or it is a few words that
    ask to keep without being an instruction themselves ("preference to remember ->",
    "Quick one for your memory bank -", not "remember to run the tests - they are flaky")."""
    opening = QUOTED.sub("", opening)  # "Write a test for `RememberMeService` — it should …"
    if (
        capture_languages.NOT_LASTING_WORDS.search(opening)
        or WRITING_TASK.match(opening)
        or MADE_PERMANENT.search(opening)
    ):
        # "Denk dran, die Demo ist in einer Stunde –": this task's; "Make the change permanent
        # in the config —": a change to make
        return False
    if FOR_SESSIONS.search(opening):
        return True
    if (
        len(opening.split()) <= 12
        and _asks_to_keep(opening)
        and (HOW_LONG.search(opening) or ASKS.match(opening) or KEEP_AHEAD_END.search(opening))
        and _standing(opening) is None  # not "Whenever you write a shader, keep it … —"
    ):
        # "just so it's on record for next time —", "Can you commit that to memory —",
        # "you'll want to remember this —", "and this is one to keep -"
        return True
    if len(opening.split()) > 8 or THIS_SCOPE.search(opening):
        return False
    if HOW_LONG_STRONG.search(opening):
        return True  # "Another thing, and this is a permanent one -"
    # "preference to remember ->", not "this PR is a draft, remember -" (a statement of its
    # own) nor "remember to run the tests -" (an instruction of its own)
    return (
        bool(KEEP_STRONG.search(opening))
        and not _statement(opening)
        and not STEP_OPENING.search(opening)
    )


def _quoting(text: str) -> bool:
    """Whether ``text`` opens a quotation it does not close (what follows is quoted)."""
    return len(QUOTE_OPENS.findall(text)) > len(QUOTE_CLOSES.findall(text))


def _asks_to_keep(opening: str) -> bool:
    """Whether an opening before a colon asks to keep what follows for good: "I'm going to
    say this once so please remember it", "Here's a preference I want you to keep", "Make
    sure this sticks for next time", "Keep this on file"."""
    opening = QUOTED.sub("", opening)  # "Implement a 'remember last project' feature"
    if (
        _quoting(opening)
        or THIS_SCOPE.search(opening)
        or NOT_KEEP.search(opening)
        or capture_languages.NOT_LASTING_WORDS.search(opening)
    ):
        return False
    if YOUR_MIND.search(opening):
        return True  # "write this on your brain: …" is not a writing task
    if opening.count("`") % 2:
        return False  # "The config has `remember_last_project: true`": a colon inside code
    if WRITING_TASK.match(opening) or BUILD_TASK.match(opening) or ELSEWHERE.search(opening):
        # "Add a long-term memory table for the assistant feature: …", "log this to the audit
        # table as a permanent record: …"
        return False
    if any(THIS_TASK.match(part) for part in re.split(r",\s*", opening)[1:]):
        return False  # "Remember, this is just a spike - no tests needed."
    # "To be clear for future sessions: …", "Außerdem, für alle künftigen Sessions:"
    if FOR_SESSIONS.search(opening) or capture_languages.SESSIONS_WORDS.search(opening):
        return True
    strong = KEEP_STRONG.search(opening)
    verb, noun, long = KEEPISH.search(opening), KEPT_NOUN.search(opening), HOW_LONG.search(opening)
    # "One rule forever:" (a rule with nothing that says for good is often a program's)
    ruled = re.search(r"\brules?\b", opening, re.IGNORECASE) and HOW_LONG_STRONG.search(opening)
    # "lasting context:", "This is a lasting one:", "Permanent context for mobile work:"
    # (not "only the last one is a forever thing:", which says the list below is mostly not)
    lasting = (
        HOW_LONG_STRONG.search(opening)
        and SOFT_NOUN.search(opening)
        and not re.search(r"\bonly\b", opening, re.IGNORECASE)
    )
    # "I'm saying it once and you keep it:"
    ends = KEEP_AHEAD_END.search(opening)
    return bool(strong or (verb and (long or noun)) or (noun and long) or ruled or lasting or ends)


def _asked(sentence: str, depth: int = 0, *, after: bool = False) -> str | None:
    """The wording ``sentence`` asks to keep when it opens with a request (after a short
    opening clause); ``after``: words of the same sentence came before it."""
    if after and _bare_back(sentence, words=16):
        return None  # "X. please remember the convention from now on": it points back at X
    if MANNER.match(sentence):
        return None  # "Permanently delete the branch": how to do it, not for how long
    if UNMARKED_QUESTION.match(sentence):
        return None  # "do you know my userid already or do I have to give it every time"
    if SELF_TODO.match(sentence) or NOTE_TO_OTHERS.match(sentence):
        # "note to self: ask Dana about the staging creds": the person's to-do; "note to the
        # team: …": a message to write
        return None
    other = capture_languages.ASK.match(sentence) or capture_languages.LATER_RULE.match(sentence)
    if other is not None:
        # "Recuerda que …", "Merk dir für die Zukunft, dass …", "N'oublie pas : …", "Ab jetzt
        # bitte immer …"; with neither "that" nor a colon only after a word that leaves the
        # verb ("merk dir mal X"): "Recuerda el bug de ayer" asks nothing
        unmarked = "sep" in other.re.groupindex and not other.group("sep").strip(" ")
        if (unmarked and not other.group("adverbs")) or capture_languages.COURTESY_ONLY.match(
            other.group("fact")
        ):  # ("Pode gravar na memória, por favor?" keeps no "por favor")
            other = None  # (and "Memorise that …" is English's)
        elif (
            _question(sentence) and not capture_languages.ASKS.match(sentence)
        ) or capture_languages.NOT_LASTING_WORDS.search(sentence):
            return None
        else:
            return _kept(other.group("fact").rstrip("?").rstrip())
    match = TRIGGER.match(sentence)
    opened = ""
    if match is None:
        opening = OPENING.match(sentence)
        if opening is None:
            return None
        opened = opening.group(0)
        if THIS_TASK.match(opened) or THIS_SCOPE.search(opened) or WRITING_TASK.match(opened):
            return None  # "this PR is a draft, remember — …", "for this task, remember …"
        if SO_THAT.search(opened.rstrip()):
            return None  # "Set the policy so that, going forward, objects expire": behaviour
        if SAID_BY.search(opened):
            return None  # "Our wiki says: please remember that staging is shared": a quote
        if opened.count("`") % 2 or _quoting(opened):
            # inside inline code or a quotation: "prints `hint: Remember to …`", "a banner
            # saying 'Remember: …'"
            return None
        match = TRIGGER.match(sentence[opening.end() :])
        if match is None:
            return None
    if match.group("tag") is not None:
        return None if _question(sentence) else _tidy(match.group("tag"))
    if THIS_SCOPE.search(sentence[: match.start("plain")] if match.group("plain") else ""):
        return None  # "just for this session remember …"
    weak = match.group("weak")
    if weak is not None:
        # "Memory: the staging DB is read-only on weekends", not "memory: 512Mi"
        weak = weak.strip()
        marked = ASKED_MARK.search(weak)
        return _kept(weak) if len(weak.split()) >= 3 and _said(weak) and not marked else None
    for bare in ("rule", "directed"):
        said = match.group(bare)
        if said is not None:
            said = said.strip()
            when = match.group("when") or ""
            # (not "in this repo: run …", whose opening goes on to a colon: see _request)
            stated = bare == "rule" or bool(
                REFERENCE.match(when)
                or (FOR_SESSIONS.search(when) and not re.match(r"[^:]{0,40}:\s", said))
            )
            spoken = not CODE_WORD.match(said) and (
                (DIRECTIVE.match(said) and not TENTATIVE.search(said))
                or (stated and _statement(said))
            )
            return _kept(said) if spoken and not ASKED_MARK.search(said) else None
    body = (match.group("label") or match.group("paren") or match.group("plain") or "").strip()
    if match.group("plain") is None:
        if depth == 0 and TRIGGER.match(body):
            # "Team rule, please remember it: X" / "In future sessions, remember that X".
            return _asked(body, depth + 1)
        # (a question quoted inside the fact asks nothing: "… is always 'does this change
        # what citizens see?'")
        return None if ASKED_MARK.search(QUOTED.sub("", body)) else _kept(body)
    sep = match.group("sep").strip().rstrip("!")
    if match.group("named"):
        body = f"{match.group('named')}: {body}"  # "remember where the seeds are: db/seeds"
    if sep in ("that", "") and BACK_TAIL.match(body):
        return None  # "that" was the fact before it: "X — remember that for when it breaks"
    if sep in ("that", "") and (opened or after) and OPENING_BACK_TAIL.match(body):
        return None  # "i'm on WSL2, remember that for paths": see ENDS_POINTING_BACK
    if ASKED_MARK.search(QUOTED.sub("", body).rstrip().rstrip("?")):
        return None  # "remember the last command you ran? run it again"
    lasting = _lasts(match, opened, body)
    if _question(sentence):
        # Only a request shaped as a question counts: "can you remember that X uses Y?",
        # never "do you remember…" or "can you remember which flag…".
        said = _statement(body) or (sep == "that" and STATED.match(body))
        asked = match.group("ask") or match.group("ask_mind")
        # "could you remember my handle is @mirek?" leaves out the "that"
        first = body.split(",")[0]
        if not (asked and (sep in (":", "that") or _statement(first)) and said):
            return None
        if OR_ASKS.search(body) or RECALLED.match(body):
            # "Can you remember things between our chats or do I need to …?", "can you
            # remember the exact error we had before the rollback?"
            return None
        body = body.rstrip().rstrip("?")
    if match.group("mind") is not None and not lasting:
        # "note that…", "be aware…": about this task unless told to last; "keep in mind
        # that X" keeps a statement unless it names the work in hand ("… when you change it")
        kept = (
            match.group("kim")
            and _statement(body)
            and not TASK_HINT.search(sentence)
            and not NOW_WORDS.search(body)  # "keep in mind the CI is slow today"
            # "keep in mind the staging account is stricter — if it fails, tell me which":
            # how to report on this task
            and not re.search(r"\b(?:tell|show|ping|let)\s+me\b", body, re.IGNORECASE)
        )
        if not kept:
            return None
    if match.group("memory") is not None and not (
        match.group("your")
        or match.group("long")
        or (sep and (match.group("this") or match.group("saving")))
        or sep == "that"  # "please keep in memory that the client wants CSV"
        # "put it in memory: I like when you summarize …" (a person, not a data structure)
        or (sep == ":" and PERSONAL.match(body))
    ):
        # "store it in memory: a dict is enough" is about RAM; "save this to memory: …",
        # "add to memory: …" and "keep this in your memory" are not.
        return None
    if sep in ("", "that") and re.match(r"and\b", body, re.IGNORECASE):
        return None  # "keep that in mind going forward and redo the diff": the task after it
    if match.group("later") and sep == "" and NEXT_TIME_WHEN.match(body):
        # "Keep this in mind next time you write docs for the other team: X": the when
        body = NEXT_TIME_WHEN.sub("", body)
    if sep == "":
        # "remember X" with neither "that" nor a colon: X must state something lasting,
        # not ask ("how…"), name a thing for this task ("the changelog"), or be a step.
        if NOT_A_FACT.match(body):
            return None
        first = body.split(",")[0]
        if (
            not lasting
            and FORGETS.search(sentence[: match.start("plain")])
            and THE_THING.match(first)
            and not _statement(first)
            and WITHOUT_IT.search(body)
        ):
            # "don't forget the migration for the new column, the deploy will fail without it":
            # what this change is missing
            return None
        if TO.match(body):
            # (how long, said outside code: not "set `restartPolicy: Never` on that Job")
            if not _lasts(match, opened, QUOTED.sub(" ", body)):
                return None
            body = TO.sub("", body)
        elif not (
            _statement(RELATIVE.split(body, maxsplit=1)[0])
            or lasting
            # "remember ask before deleting any file", "remember no jQuery, anywhere"
            or (DIRECTIVE.match(body) and EVERY_WORD.search(body))
            # "remember TP=8 for the 70B", "remember ntp servers = 10.0.0.123 and 10.0.1.123"
            or EQUALS.match(body)
            or (match.group("verb_remember") and LONG_STATEMENT.match(RELATIVE.split(body)[0]))
            # "memorize where X is: Y" names a thing and what it is; "memorize the output
            # of f()" is caching.
            or (match.group("memorize") and DEFINITION.match(body))
        ):
            # The verb must be the statement's own: in "the edge case where X is empty"
            # it belongs to a clause that only describes a thing.
            return None
    return _kept(body)


def _lasts(match: re.Match[str], opened: str, body: str) -> bool:
    """Whether a request's own words say it lasts: its time words, or ``body``'s."""
    return bool(
        match.group("later")
        or match.group("lead_later")
        or LASTING.search(opened)  # "Next time you work in this repo, keep in mind that X"
        or match.group("always")
        or match.group("never")  # "never forget to X" is for every time
        or LASTING.search(body)
    )


def _kept(body: str) -> str | None:
    """The wording to store, unless it names something to find out or to do now rather than
    a fact."""
    body = body.strip()
    if TO_FIND_OUT.match(body) or DO_IT_NOW.search(body) or ELSEWHERE_FIRST.match(body):
        return None  # (… or "note this in the postmortem doc: …": written there, not kept)
    if re.match(r"(?:or|but)\b", body, re.IGNORECASE):
        return None  # "will you remember this next time, or do I need to …?": a second clause
    if THIS_WORK.search(body) and not LASTING.search(body):
        return None  # "remember that the second one uses tabs": the files in hand
    # 'Our wiki says "Note for future developers: …"': cut inside a quotation (an inch mark,
    # 'a 13" laptop', is not one)
    if body.count('"') % 2 and re.sub(r'(?<=\d)"(?=\s+\w)', "", body).count('"') % 2:
        return None
    if THIS_SCOPE.search(QUOTED.sub(" ", body)) or THIS_TASK.match(body):
        # "… right now", "… in this PR", "just so you know, this branch is based on an old
        # main": this task's, whatever words ask to keep it (not "when I say 'this morning'
        # it's Lisbon time": quoted words)
        return None
    return _tidy(body)


def _statement(words: str) -> bool:
    return bool(CLAUSE.search(words) or FACT_VERB.search(words))


def _said(words: str) -> bool:
    """Whether ``words`` could be what a request pointing back at them keeps: a statement,
    an instruction ("always pin actions to a sha") or a definition ("prettier: single
    quotes")."""
    if _statement(words) or IMPERATIVE.match(words) or DEFINITION.match(words):
        return True
    if re.search(r"\b(?:i|we|you|they)\s+(?!to\b)\w+", words, re.IGNORECASE):
        return True  # "For this repo I commit as j@example.com"
    if re.match(r"[a-z]+\s+(?:everything|every|each|all|any|only)\b", LATER_OPENING.sub("", words)):
        return True  # "from now on seed everything with 1337": a verb the lists do not name
    # "TIL our CI restores node_modules by the lockfile hash. remember that"
    return len(words.split()) >= 4 and bool(LOOSE_VERB.search(words))


def _question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?")


#: At most this many words before a closing parenthesis are the request's own ("(remember for
#: next time) X"); more are the fact, in a parenthesis the request opened.
PAREN_WORDS = 5


def _tidy(body: str) -> str | None:
    # "… has to work with a gamepad too. anyway, add the level select screen": the fact ends
    # where a sentence typed in lower case turns back to the task
    body = TURNS_TO_TASK.split(body, maxsplit=1)[0]
    body = TRAILING_SYMBOLS.sub("", re.sub(r"\s+", " ", body)).strip().rstrip(",;:").strip()
    body = body.lstrip("*").strip()  # "**Remember:** X" leaves the closing "**"
    body = body.lstrip(":;, ")  # "Remember pls: X" leaves the colon after "pls"
    body = COURTESY.sub("", body).strip()  # "…, thanks!"
    body = RULE_REMARK.sub("", body).strip()  # "… -- that's a standing rule."
    depth = 0
    for at, char in enumerate(body):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            if len(body[:at].split()) <= PAREN_WORDS and body[at + 1 :].strip(" .!"):
                # "(remember for next time) X", "remember (for real, in memory) that X": the
                # parenthesis held the request's own words, the fact follows it
                body = body[at + 1 :].strip()  # (its "that" goes below)
            else:
                # "(btw remember that X.)", "(and, for later, X).", "(btw remember that X)
                # and add a spec": the parenthesis the request was in closes
                body = body[:at].strip()
            break
    body = LATER_OPENING.sub("", body)  # "remember this going forward: X" keeps X
    body = I_MEAN.sub("", body)  # "remember, and I mean long-term: X" keeps X
    body = PLEASE.sub("", body)  # "going forward, please always run…" keeps "always run…"
    body = ITS_POLICY.sub("", body.lstrip(":;, "))  # "remember, it's policy: X" keeps X
    body = ONE_FOR_LATER.sub("", body)  # "don't forget this one in the future: X" keeps X
    body = ADVERB_THAT.sub("", body)  # "remember, generally, that X" keeps X
    body = KIND_LABEL.sub("", body)  # "Remember my preference for all future sessions: X"
    if body.lower().startswith("that "):
        body = body[5:].lstrip()
    if len(body.split()) < MIN_WORDS or len(body) > MAX_CHARS:
        return None
    return body
