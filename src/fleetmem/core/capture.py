"""What a person asks to be remembered, found in their own prompt as they would say it.

``captured_facts(prompt)`` returns the wording to store for each request to remember, such
as "remember that we never deploy billing on Fridays", "please remember the staging
database is read-only", "I'd like you to remember that …", "don't forget: …", "save this to
your memory: …", "note for next time: …", "lesson learned: …", "remember: …" or
"#remember …". It reads only what a person typed (the caller passes the prompt of a
``UserPromptSubmit``, never text an agent wrote) and skips what a person pasted rather than
said: fenced code blocks and quoted (``>``) lines.

A request counts only at the start of a sentence (after an optional "please", "also",
"btw", "important:" … or a short opening such as "Before you start,"), so "do you remember
how…", "I can't remember where…" and "add a remember-me checkbox" are left alone. "Remember
to …", "don't forget to …", "keep in mind …" and a bare "note …" usually concern this task
("don't forget to add a test", "note that it returns 404"); they count only with a word that
makes them last ("always", "never", "from now on", "next time", …). A sentence that ends in
a question mark is a question, unless it asks "can you remember that <a statement>?".

Pure: no I/O. The measured rates on generated prompts (three halves of templates, one held
out from every change) are in ``tests/facts/test_capture.py`` and docs/facts.md.
"""

from __future__ import annotations

import functools
import re

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

# When it is to last: "for next time", "for future sessions", "going forward", "whenever you
# work in this repo".
_FOR_LATER = (
    r"(?:for\s+(?:next\s+time|the\s+future|the\s+long\s+term|good|always"
    r"|(?:all\s+)?(?:later|next|future|upcoming|coming|subsequent)"
    r"(?:\s+(?!(?:the|a|an|this|that|these|we|i|it|our|my|your|keep|remember)\b)\w+){0,2}"
    r"(?:\s+(?:in|on)\s+(?:this|the|our)\s+(?:repo|repository|project|codebase|code))?"
    r"|(?:every|each|all)\s+(?:future\s+)?(?:session|run|task|time|conversation|chat|project)s?"
    r"(?:\s+of\s+(?:mine|ours))?)"
    r"|going\s+forward|moving\s+forward|forever|permanently|henceforth"
    r"|from\s+(?:now|here)\s+on(?:\s+out)?|from\s+here\s+out|starting\s+(?:now|today)(?:\s+on)?"
    r"|in\s+(?:all\s+)?(?:the\s+)?future(?:\s+(?:runs|sessions|tasks|work|projects|chats"
    r"|conversations|prs|changes))?"
    r"|whenever\s+you(?:'re|\s+are)?\s+(?:\w+\s+){0,2}?(?:in|on|with)\s+(?:this|the|our)\s+"
    r"(?:repo|repository|project|codebase|code))"
)
# Words a sentence may open with before the request itself ("please", "btw", "oh and",
# "important:", "fyi").
_LEAD = (
    r"(?:(?:please|pls|kindly|also|and|oh|ok(?:ay)?|alright|right|well|um+|uh+|yeah|yep|btw|so|but"
    r"|just|hey(?:\s+(?!remember)\w+)?|fyi|nb|p\.?s\.?|por\s+favor|bitte|svp|by\s+the\s+way"
    r"|claude|codex|copilot|cursor|gemini|assistant|buddy|mate"
    r"|one\s+more\s+thing|important|(?:a\s+)?quick(?:\s+note)?|(?:a\s+)?heads[-\s]+up"
    r"|let'?s|here'?s|here\s+is|(?:just\s+)?so\s+you\s+know"
    # Time words before the verb: "from now on remember that …", "going forward, note …".
    rf"|(?P<lead_later>{_FOR_LATER}))\s*[,:;!+&]?\s+)*"
)
# Ways of asking that wrap the verb: "I want you to remember", "make sure you remember",
# "could you please remember", "always remember". ``ask`` marks a question-shaped request.
_FRAME = (
    r"(?:(?P<always>always|never\s+ever|permanently|forever)\s+"
    r"|(?:i\s+(?:want|need|ask)|i'?d\s+like|i\s+would\s+like)\s+you\s+to\s+(?:always\s+)?"
    r"|i\s+want\s+that\s+you\s+|to\s+"
    r"|i'?d\s+(?:appreciate|love|like)\s+it\s+if\s+you\s+(?:could\s+|would\s+)?"
    r"|(?:it'?d|it\s+would)\s+(?:be\s+(?:great|nice|good|helpful|awesome|ideal)|help)\s+if\s+"
    r"you\s+(?:could|would)?"
    r"\s+(?:always\s+)?"
    r"|make\s+sure\s+(?:to|you)\s+|be\s+sure\s+to\s+|try\s+to\s+|do\s+"
    r"|you\s+(?:should|must|need\s+to|have\s+to|can|could|will)?\s*(?:always\s+)?"
    r"|(?:it\s+)?is\s+important\s+(?:that\s+)?you\s+|it'?s\s+important\s+(?:that\s+)?you\s+"
    r"|(?P<ask>(?:can|could|would|will)\s+(?:you|u)(?:\s+please)?(?:\s+always)?)\s+)?"
)
# "remember" as typed in a hurry.
_REMEMBER = (
    r"(?:(?:help\s+me\s+|note\s+and\s+)?(?:remember|remeber|rememeber|remmeber|rember|remembr)"
    r"(?:ed)?)"
)
# Words that name what is to be kept, between "remember" and a colon.
_KEPT_WORDS = (
    r"(?:this|that|it|these|the|my|our|one|following|rules?|preferences?|lessons?|conventions?"
    r"|facts?|details?|once|and|for|all|time|please|well|carefully|too|also|as|a|standing"
    r"|important|thing|things|where|stuff|lives?|goes|go|is|are)"
)
# Verbs whose object is what to keep.
_PLAIN = (
    # "remember it: X" takes "it" only before a colon or a dash: in "remember it is…" the
    # "it" is the fact's own subject.
    # "Remember this rule: X", "remember my preference: X", "remember once and for all: X":
    # a few words naming what is to be kept, then a colon.
    rf"(?P<verb_remember>{_REMEMBER})(?:(?:\s+{_KEPT_WORDS}){{1,4}}(?=\s*:)"
    rf"|\s+this|\s+it(?=\s*(?::|\s[-\u2013\u2014]|\s+{_FOR_LATER}|\s+please))"
    r"|\s+(?:the|this|our)\s+rule"
    # "Remember where the seeds are: db/seeds": the words are kept with the fact.
    r"|\s+(?P<named>(?!that\b|to\b|how\b|why\b|when\b|if\b|whether\b)[\w'*/.-]+"
    r"(?:\s+[\w'*/.-]+){0,4})(?=\s*:\s))?|(?P<memorize>memori[sz]e)(?:\s+this)?"
    r"|learn\s+this|retain(?:\s+this)?|make\s+(?:it\s+)?a\s+rule"
    r"|(?P<ask_mind>(?:would|do)\s+you\s+mind)\s+(?:remembering|noting|keeping\s+in\s+mind)"
    r"|(?:don'?t|do\s+not)\s+(?:you\s+)?(?:ever\s+)?forget(?:\s+this)?"
    r"|(?P<never>never)\s+(?:ever\s+)?forget(?:\s+this)?"
    r"|jot\s+(?:this\s+|it\s+)?down|write\s+(?:this\s+|it\s+)?down"
    r"|(?:make|take|keep)\s+(?:a\s+)?(?:mental\s+)?note(?:\s+of\s+(?:this|that))?"
    r"|note\s+(?:this\s+)?down|note\s+this"
    r"|commit\s+(?:this\s+|it\s+)?to\s+(?:your\s+)?memory"
)
# Verbs that put something in memory also name RAM in a coding prompt ("keep the session in
# memory"): see :func:`_request` for when they count.
_MEMORY = (
    r"(?:(?P<saving>save|add|stash|file|log|record|persist)|store|put|keep|write)\s+"
    r"(?P<this>this\s+)?"
    r"(?:it\s+|that\s+)?"
    r"(?:to|in|into)\s+(?:the\s+)?(?P<your>(?:your|the\s+agent'?s)\s+)?"
    r"(?P<long>(?:long[-\s]term|permanent)"
    r"\s+)?(?:memory|memories|notes|knowledge(?:\s+base)?)"
)
# "keep in mind" and a bare "note" are as often about this task ("keep in mind that the
# endpoint is slow", "note that it returns 404"): they count only when told to last.
_MIND = r"(?:keep|bear)\s+(?:this\s+|that\s+)?in\s+mind|note"
# Labels that open a line or sentence and are followed by a colon, a comma or a dash.
_L = _FOR_LATER
_LABEL = (
    rf"(?:note|memo|reminder|tip|rule)\s+{_L}|(?:notes?|memo)\s+to\s+(?:self|me|you|us)"
    r"(?:\s+and\s+(?:to\s+)?(?:you|me|self))?|(?:a\s+)?mental\s+note"
    r"|for\s+(?:your|the)\s+(?:notes|memory|records|knowledge|reference)"
    rf"|for\s+the\s+record\s+and\s+{_L}|(?:notes?|memo)\s+to\s+memory|memory\s+notes?"
    r"|persist\s+(?:this|that)|i\s+want\s+(?:this|that|it)\s+remembered"
    rf"|lessons?\s+{_L}"
    rf"|(?:new|permanent|standing|golden|general)\s+rules?(?:\s+{_L})?"
    # "Save this as a preference:", "record this as a team convention:", "Save this rule:"
    r"|(?:save|store|record|log|keep|add|file|persist|make|mark|put)\s+(?:(?:this|that|it)\s+)?"
    r"(?:(?:as|in|to|into|for)\s+)?(?:(?:a|an|the|my|our|your|team|new|standing|permanent"
    r"|long[-\s]term|house|general|project|repo)\s+){0,3}"
    r"(?:rules?|conventions?|preferences?|facts?|lessons?|reminders?|standards?|polic(?:y|ies)"
    r"|guidelines?|principles?)"
    rf"(?:\s+{_L})?"
    r"|(?:long[-\s]term|permanent)\s+memory(?:\s+please)?"
    r"|(?:save|store|keep|add|file|record)\s+(?:this|that|it)\s+as\s+(?:a\s+)?"
    r"(?:permanent\s+|standing\s+|lasting\s+)?(?:note|rule|fact|reminder|memory)"
    rf"|(?:[\w'-]+\s+){{0,5}}?(?:to|should|must)\s+(?:always\s+)?(?:remember|keep\s+in\s+mind)"
    rf"(?:\s+(?:{_L}|long[-\s]term))?"
    # "Lesson learned from today's outage:", "Rule of thumb for this repo:".
    rf"|lessons?\s+learn(?:ed|t)(?:\s+{_L}|\s+(?:from|in|on|at|with)\s+[^:,\n]{{1,40}}?)?"
    r"|(?:(?:a|an|one|our|my|new|the)\s+)?(?:(?:new|permanent|important)\s+)?"
    r"(?:(?:house|team|project|repo|standing|golden|general|ground)\s+rules?"
    r"|(?:permanent|standing|lasting)\s+(?:notes?|reminders?))"
    # "new rule for this repo:", "rules for us going forward:" (not "rules for the bracket
    # generator:", which specifies a program)
    r"|(?:(?:new|permanent|standing|house|team|general|golden)\s+)?rules?\s+(?:of\s+thumb\s+)?"
    r"(?:for|in|on)\s+(?:(?:this|our|the|my)\s+(?:repo|repository|project|codebase|code\s*base"
    rf"|team|org|company|monorepo|service|app)|you|us|me|future\s+\w+)\b(?:\s+{_L})?"
    r"|(?:permanent|standing|general|lasting|global)\s+(?:preferences?|conventions?|facts?"
    r"|instructions?)"
    # "for all my assignments from now on:"
    rf"|for\s+(?:all|every|each)\s+(?:(?:of\s+)?(?:my|our)\s+)?[\w-]+(?:\s+[\w-]+)?\s+{_L}"
    # "Ok, noting this for the future so you remember:"
    r"|(?:noting|saving|storing|recording|writing)\s+(?:this|that)\s+(?:down\s+)?"
    rf"(?:{_L})?(?:\s+so\s+(?:that\s+)?you\s+(?:remember|know))?"
    r"|rules?\s+of\s+thumb(?:\s+(?:for|in|on)\s+[^:,\n]{1,40}?)?"
    rf"|(?:one\s+(?:more\s+)?thing|something|things?|a\s+thing)\s+to\s+"
    rf"(?:remember|keep\s+in\s+mind)(?:\s+{_L})?"
    rf"|(?:save|store|keep|file|stash|retain|record|log)\s+(?:this|that)\s+{_L}"
    rf"|(?:just\s+)?so\s+(?:that\s+)?you\s+(?:remember|know)(?:\s+{_L})?"
    r"|(?:remember|know|note)\s+this\s+about\s+(?:me|us|myself|the\s+team|our\s+\w+)"
    rf"|{_L}|(?:next|every)\s+time(?:\s+and\s+every\s+time(?:\s+after(?:wards)?)?)?"
    r"|notes?\s+to\s+(?:future|later)\s+(?:you|me|self|agents?|runs?|sessions?)"
    r"|(?:this\s+is\s+|it'?s\s+)?(?:something\s+|one\s+)?worth\s+"
    rf"(?:remembering|knowing|noting)(?:\s+{_L})?"
)
# A colon, a comma or a dash (hyphen, en or em) after a space.
_MARK = r"[:,]|\s[-\u2013\u2014]"
# "remember!! X" reads like "remember X": what follows must be a statement.
_SEP = rf"\s*(?P<sep>{_MARK}|!+|\s+that\b|\s+(?=\S))\s*"
_TRIGGER = re.compile(
    rf"^{_LEAD}(?:#remember\b\s*:?\s*(?P<tag>.*)"
    rf"|(?:{_LABEL})\s*(?:{_MARK})\s*(?P<label>.*)"
    rf"|{_FRAME}(?:{_PLAIN}|(?P<memory>{_MEMORY})|(?P<mind>{_MIND}))"
    rf"(?P<later>,?\s+{_FOR_LATER}(?=[\s,:]),?|\s+always(?=\s*:))?(?:,?\s+please)?{_SEP}"
    r"(?P<plain>.*)"
    # "Rule: never commit to main" (a bare label pasted tool output also uses: see
    # _request), and "from now on always use pnpm" with no comma after the time words.
    rf"|rules?\s*(?:{_MARK})\s*(?P<rule>.*)"
    rf"|(?P<when>{_FOR_LATER})\s+(?P<directed>.*))$",
    re.IGNORECASE | re.DOTALL,
)
# How a standing instruction opens after "from now on" or "Rule:": a word that makes it
# last, an imperative a person gives an agent, or a subject ("we", "our deploys"). "From now
# on the test should expect 201" opens otherwise: it specifies this change.
_DIRECTIVE = re.compile(
    r"^(?:(?:please|pls|kindly)\s+[a-z]|(?:please\s+|pls\s+)?(?:always|never|only|don'?t|do\s+not|avoid|prefer|use|write|put|"
    r"run|keep|make|add|call|name|reply|respond|answer|ask|check|target|follow|stick|treat|"
    r"default|format|document|log|include|commit|open|send|pin|deploy|test|wrap|return|start|"
    r"sign|tag|squash|rebase|merge|push|review|mention|refer|label|prefix|speak|talk|address|"
    r"stop|skip|leave|assume|expect|require|let|ping|notify|tell|"
    r"when|whenever|if|before|after|once|unless|"
    r"we|i|you|our|all|every|each|no|nothing|nobody|everyone)\b)",
    re.IGNORECASE,
)
# Labels that say "keep this" outright: a statement after them counts even with no comma
# ("also for future reference the API allows 600 requests a minute").
_REFERENCE = re.compile(r"^for\s+(?:future\s+reference|reference|next\s+time|later)$", re.I)
# A plan or a guess is not a standing instruction: "In the future we might move the export".
_TENTATIVE = re.compile(
    r"\b(?:might|may|maybe|perhaps|possibly|probably|could|for\s+now)\b", re.IGNORECASE
)
# A first word that is code, not speech ("Rule: no-unused-vars 'x' is defined…" pasted from
# a linter): it holds a separator or a digit.
_CODE_WORD = re.compile(r"^\S*[-_./:=\d]")
# What a remembered sentence says about this task only: "Remember, this is a draft PR".
_THIS_TASK = re.compile(
    r"^(?:this|it'?s|it\s+is)\s+(?:(?:is|was)\s+)?(?:(?:a|an|just|only|still|the)\s+)*"
    r"(?:draft|wip|prototype|quick|temporary|throwaway|one-off|spike|poc|experiment|pr|"
    r"pull\s+request|branch|task|change|ticket|commit|diff|session|patch|hotfix)\b",
    re.IGNORECASE,
)
# What the person wants done now, inside what reads as a rule: "Going forward, fetch_user
# should raise — please implement that change"; "write this down as a TODO comment".
_DO_IT_NOW = re.compile(
    r"\b(?:implement|apply|make|do)\s+(?:that|this|the)\s+change\b|\bupdate\s+the\s+callers\b"
    r"|\bupdate\s+(?:\S+\s+){0,3}?(?:to\s+match|accordingly)\b"
    r"|^in\s+(?:the|a|this)\s+(?:comment|code|docstring|function|file|test)\b"
    # a plan for this work, not a fact: "Moving forward, the plan is: 1) …"
    r"|^(?:the\s+|our\s+)?(?:plan|next\s+steps?|steps|todo|to-do)\s+(?:is|are|for\s+today)\b"
    r"|^as\s+(?:a|an)\s+(?:todo|fixme|comment|docstring|code\s+comment|issue|ticket|task)\b"
    # "write it down in CLAUDE.md: …" asks for an edit of a file, not for memory
    r"|^(?:in|to|into)\s+(?:the\s+)?(?:\S+\.(?:md|txt|rst|adoc)|readme|docs?|wiki|changelog)\b",
    re.IGNORECASE,
)
# Bullets, emphasis and emoji a person puts before a request: "- remember: …",
# "**Remember:** …", "📌 note for future: …".
_SYMBOLS = "\u2600-\u27bf\U0001f000-\U0001faff\ufe0f\u200d"
_SYMBOLS_TEXT = _SYMBOLS
_DECORATION = re.compile(
    rf"^(?:\s*(?:[-*+\u2022]|\d{{1,2}}[.)])\s+|\s*\[[ xX]?\]\s+|\s*\*{{1,3}}|\s*[{_SYMBOLS}]+\s*)+"
)
_TRAILING_SYMBOLS = re.compile(rf"[\s{_SYMBOLS}]+$")
# Where a second request may start inside one sentence: "ok cool. from now on please…".
_INNER_START = re.compile(r"[.!?;]\s+")
# A request that points back at what was just said: "…, please remember that." /
# "Remember that." after a sentence.
_BACK = (
    r"(?:please\s+|pls\s+|plz\s+|and\s+|so\s+|(?:can|could|will|would)\s+you\s+(?:please\s+)?)*"
    r"(?:(?:(?:remember|memori[sz]e)(?:\s+(?:that|this|it))?"
    r"|(?:don'?t\s+forget|never\s+forget|note|save|store|keep|record)\s+(?:that|this|it))"
    r"(?:\s+(?:in|to|into)\s+(?:your\s+)?(?:memory|notes))?"
    r"|make\s+(?:a\s+)?note\s+of\s+(?:that|this|it)"
    r"|treat\s+(?:that|this|it)\s+as\s+(?:a\s+)?(?:permanent\s+|standing\s+|hard\s+|general\s+)?"
    r"(?:rule|fact|convention|policy)"
    r"|(?:keep|bear)\s+(?:that|this|it)\s+in\s+mind)"
    # what may follow: when it is to last, whom it is for, why
    rf"(?:\s+(?:{_FOR_LATER}|for\s+(?:me|us|later|(?:all\s+)?(?:future|next)\s+[\w\s-]{{1,40}}?)))?"
    r"(?:,?\s+(?:please|pls|plz|thanks|thx))?"
    r"(?:\s+so\s+(?:that\s+)?you\s+(?:can\s+)?remind\s+me[\w\s]*)?"
)
_ASKS = re.compile(r"\b(?:can|could|will|would)\s+you\b", re.IGNORECASE)
# "That's a hard rule, remember it." points back past its own words.
_RULE_WORDS = (
    r"(?:(?:that'?s|this\s+is|it'?s)\s+(?:a|an|the|our)?\s*(?:hard|strict|firm|permanent"
    r"|standing|house|team|general|important|golden)?\s*(?:rule|fact|convention|requirement"
    r"|policy)\s*[,;.]?\s*)?"
)
_BACK_END = rf"{_RULE_WORDS}(?:{_BACK})\s*[.!?]*[\s{_SYMBOLS_TEXT}]*$"
_POINTS_BACK = re.compile(rf"^{_BACK_END}", re.IGNORECASE)
_ENDS_POINTING_BACK = re.compile(
    rf"^(?P<fact>.+?)(?:\s*(?:[,;.]|\s[-\u2013\u2014])\s*{_BACK_END}"
    rf"|\s+(?=(?:please\s+|pls\s+)?(?:remember|note|keep|save)\s+(?:that|this|it)\b){_BACK_END})",
    re.IGNORECASE | re.DOTALL,
)
# "I don't remember.", "we never remember that": the words before say who remembers, not
# what to keep.
_NOT_BEFORE_BACK = re.compile(
    r"\b(?:i|we|you|they|don'?t|do\s+not|can'?t|cannot|never|not|to|always)$", re.IGNORECASE
)
# An opening that keeps what follows to this task: "For this task, remember that the staging
# db is down", "just for this session, remember …".
_THIS_SCOPE = re.compile(
    r"\bfor\s+(?:this|the\s+current)\s+(?:task|session|pr|change|ticket|branch|run|one|fix|bug"
    r"|issue|conversation|chat|commit)\b|\bfor\s+(?:now|today)\b|\bjust\s+today\b|\bright\s+now\b"
    r"|\bin\s+this\s+(?:pr|task|change|session|ticket|branch|commit|answer|reply|response|diff)\b"
    r"|\bstill\s+need\s+to\b|\bbefore\s+we'?re\s+done\b"
    r"|\bfor\s+the\s+rest\s+of\s+(?:this|the)\s+(?:task|session|pr|conversation|chat|day)\b"
    r"|\b(?:of|in|for|from)\s+this\s+(?:pr|task|change|session|ticket|branch|commit|diff)\b"
    r"|(?<!starting\s)(?<!from\s)\btoday\b|\btonight\b"
    r"|\bthis\s+(?:morning|afternoon|evening|week)\b",
    re.IGNORECASE,
)
# A statement after "can you remember that": it opens with a determiner, a possessive, a
# subject or a condition ("can you remember that the gateway drops idle connections?").
_STATED = re.compile(
    r"^(?!\S+\s+(?:we|i|you|they|he|she)\b)\S+\s+\S+\s+\S+\s+\S+",
    re.IGNORECASE,
)
# A statement after a bare "remember" with no "that": a determiner and at least five words
# before any relative clause ("pls remember the auth service issues JWTs that expire…").
_LONG_STATEMENT = re.compile(
    r"^(?=(?:\S+\s+){4}\S)(?:the|our|my|all|every|each|these|those)\s+(?:[\w'-]+\s+){0,3}?"
    r"[a-z]+s(?!\s+(?:for|in|on|of|at|to|from|with|by|and|or)\b)\s+\S+",
    re.IGNORECASE,
)
# A tag question that does not make a request a question: "…, ok?", "…, right?".
_TAG_QUESTION = re.compile(
    r"[,\s]+(?:ok(?:ay)?|right|yeah|yes|alright|got\s+it|understood|deal)\s*\?+\s*$", re.I
)
# Lines of a pasted log: "keepalived[812]: …", "2024-05-01 12:00 …", "[ERROR] …".
_LOG_LINE = re.compile(
    r"^(?:\S+\[\d+\]:|\d{4}-\d\d-\d\d[T ]\d|\[?\d\d:\d\d:\d\d|\[(?:INFO|WARN|WARNING|ERROR"
    r"|DEBUG|TRACE)\]|(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE)\b[:\s])"
)
# Courtesy at the end of a request, not part of the fact: ", thanks!", " thx".
_COURTESY = re.compile(
    r"[\s,;.!-]*\b(?:thanks(?:\s+a\s+lot)?|thank\s+you|thx|ty|cheers|please|pls|ok(?:ay)?)\b"
    r"[\s.!]*$",
    re.IGNORECASE,
)
# Dictation's hesitations.
_FILLER = re.compile(r"(?<![\w-])(?:uh+|um+|erm|uhm)(?![\w-]),?\s*", re.IGNORECASE)
# Any short opening before a colon that asks for something to be kept and says for how long
# or where: "This is important and I want it to stick across sessions: X", "Burn this into
# your memory: X".
_KEEP_OPENING = re.compile(r"^(?P<open>[^:\n]{3,100}?):\s+(?P<rest>\S.*)$", re.DOTALL)
_KEEPISH = re.compile(
    r"\b(?:remember\w*|memori[sz]\w*|stick|keep|note|noting|persist|know|forget|burn|etch)\b",
    re.IGNORECASE,
)
_HOW_LONG = re.compile(
    rf"{_FOR_LATER}|\b(?:your\s+(?:memory|brain|head)|long[-\s]term|permanent(?:ly)?"
    r"|(?:across|between)\s+sessions|every\s+session)\b",
    re.IGNORECASE,
)
# Markdown around a request: a heading's hashes, bold markers.
_HEADING = re.compile(r"^#{1,6}\s+")
_BOLD = re.compile(r"\*\*|__(?=\s)|(?<=\s)__")
# Something to find out, not something known: "check whether this breaks the tests".
_TO_FIND_OUT = re.compile(
    r"^(?:check|see|find\s+out|figure\s+out|verify|test|ask|look\s+into|investigate|confirm)"
    r"\s+(?:whether|if|why|how|what|where|when|which)\b",
    re.IGNORECASE,
)
# A short opening clause before the request: "Before you start, remember that …",
# "Important - don't forget: …". At most six words, ending in a comma, colon or dash.
_OPENING = re.compile(r"^(?:[^\s,:;]+\s+){0,9}[^\s,:;]+\s*(?:[,:;]|\s[-\u2013\u2014])\s+")
# The time words that may open the kept wording: "remember this going forward: X".
_LATER_OPENING = re.compile(rf"^{_FOR_LATER}\s*[:,]?\s*", re.IGNORECASE)
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
_RELATIVE = re.compile(
    r"\b(?:where|when|which|who|whose|that|if|because|while|whenever|unless)\b", re.IGNORECASE
)
# Present-tense verbs a fact states with ("Dana owns billing"), rarely nouns in a prompt;
# counted only after a word that is not a determiner ("the holds" is a noun).
_FACT_VERB = re.compile(
    r"(?<!\bthe )(?<!\ba )(?<!\ban )(?<!\bour )(?<!\bmy )(?<!\byour )(?<!\bthis )(?<!\bthose )"
    r"\b(?:owns|handles|holds|manages|hosts|contains|sends|pays|approves|deploys|rotates|"
    r"expires|depends|stays|follows|supports|likes|hates|knows|says|maintains|sits|restarts|"
    r"resets|syncs|crashes|belongs|lacks|ignores|rejects|accepts|allows|forbids|blocks|"
    r"replaces|wraps|calls\s+\w+|reads\s+from|writes\s+to|points\s+to|times\s+out)\b",
    re.IGNORECASE,
)
_TO = re.compile(r"^to\s+", re.IGNORECASE)
_DEFINITION = re.compile(r"^[^:]{3,80}:\s+\S")
_PLEASE = re.compile(r"^(?:please|pls|kindly)\b[,\s]*", re.IGNORECASE)
# Words that make "remember to …" a standing instruction rather than a step of this task.
_LASTING = re.compile(
    r"\b(?:always|never|every\s+time|each\s+time|whenever|from\s+now\s+on|going\s+forward|"
    r"in\s+(?:the\s+)?future|next\s+time|from\s+here\s+on|any\s+time|anytime|in\s+every|"
    r"forever|permanently|for\s+good)\b",
    re.IGNORECASE,
)
# A sentence ends at . ! ? followed by space and a capital, or at a line's end; dots inside
# names (config.py, e.g.) do not end one.
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)(?<!\bcf\.)\s+(?=[A-Z\"'(#])"
)
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_BULLET = re.compile(r"^(?:[-*\u2022]|\d{1,2}[.)])\s+")
_MARKER = re.compile(r"^(?:#remember\b|remember\s*:)\s*:?\s*(?P<rest>.*)$", re.IGNORECASE)
# A line that is only a label ("## Note for future sessions", "Remember this:"): the next
# line is what it labels.
_LABEL_ONLY = re.compile(
    rf"^{_LEAD}(?:{_LABEL}|{_REMEMBER}(?:\s+{_KEPT_WORDS}){{0,4}}(?:\s+{_FOR_LATER})?"
    r"|memory|notes?\s+for\s+(?:you|the\s+agent|claude|codex|later|future\s+\w+)"
    # "# Preferences (please remember)", "# Notes for you (permanent)"
    r"|[^()\n]{1,40}\((?:please\s+)?(?:remember(?:\s+this)?|permanent|for\s+(?:later|future\s+\w+)"
    r"|keep\s+(?:this|in\s+mind))\))\s*:?\s*$",
    re.IGNORECASE,
)
# A line that introduces pasted text ("the changelog draft says:", "here is the output:"):
# its next paragraph is someone else's words.
_PASTE_INTRO = re.compile(
    r"\b(?:says|said|reads|wrote|writes|draft|message|output|log|logs|below|following"
    r"|looks\s+like|is\s+this)\s*:\s*$"
    r"|\b(?:output|log|logs|error|trace|traceback)\s+(?:i\s+(?:get|got|see|saw)|is|was|below"
    r"|here)\b[^.!?]*$"
    r"|\b(?:this|the|these|following|below|my|our)\s+(?:[\w.-]+\s+){0,3}?(?:changelog|release"
    r"\s+notes|notes|draft|readme|docs?|text|snippet|output|logs?|message|description|spec"
    r"|email|ticket|issue|comment|diff|config|yaml|json|paragraph|section)\b[^:]*:\s*$"
    r"|\b(?:has|have|contains|says|reads)\s+this\s*:\s*$"
    r"|\b(?:proofread|review|check|summari[sz]e|translate|rewrite|fix|explain|improve|tighten"
    r"|edit)\s*:\s*$",
    re.IGNORECASE,
)
# Indented lines are pasted code (a Markdown code block, a docstring), not speech.
_INDENTED = re.compile(r"^(?: {4}|\t)")


def captured_facts(prompt: str) -> list[str]:
    """The wording of each fact ``prompt`` asks to be remembered, in order, without repeats."""
    return list(_captured(prompt))


# A hook asks about one prompt up to three times (does it ask? what to store? what to say
# when it could not be stored?): the rules run once per prompt.
@functools.lru_cache(maxsize=8)
def _captured(prompt: str) -> tuple[str, ...]:
    found: list[str] = []
    before = ""
    for sentence in _searched(_sentences(prompt)):
        back = _plain(sentence)
        if before and _POINTS_BACK.match(back) and (not _question(back) or _ASKS.search(back)):
            # "You should never commit .env.local. Remember that." (also "… Can you
            # remember that for me?": the request is the question, the fact is before it)
            body = None if _question(before) else _kept(_plain(before))
        else:
            body = _request(sentence)
        before = sentence
        if body is not None and body not in found:
            found.append(body)
        if len(found) == MAX_CAPTURES:
            break
    return tuple(found)


def _searched(sentences: list[str]) -> list[str]:
    """The sentences searched for requests: all of them, or in a prompt of more than
    :data:`MAX_SENTENCES` (a paste) the first ones and the last ones, where a person writes."""
    if len(sentences) <= MAX_SENTENCES:
        return sentences
    tail = MAX_SENTENCES // 4
    return sentences[: MAX_SENTENCES - tail] + sentences[-tail:]


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
        if fenced or not stripped or stripped.startswith(">") or _INDENTED.match(line):
            continue
        if (
            _PASTE_INTRO.search(stripped)
            and not _MARKER.match(stripped)
            and not _LABEL_ONLY.match(_plain(stripped))
            and not _request(stripped)
        ):
            # Skip the pasted paragraph: blank lines first, then up to the next blank line.
            while at < len(lines) and not lines[at].strip():
                at += 1
            while at < len(lines) and lines[at].strip():
                at += 1
            continue
        head = _plain(stripped)
        if _LABEL_ONLY.match(head) and not _MARKER.match(stripped):
            below = at
            while below < len(lines) and not lines[below].strip():
                below += 1
            text = lines[below].strip() if below < len(lines) else ""
            if text and not _FENCE.match(lines[below]) and not text.startswith(">"):
                label = "remember: "  # what the label says, in the form the rules read
                if not _BULLET.match(text):
                    out.append(label + text)
                    at = below + 1
                    continue
                # A list under the label: one fact per item.
                while below < len(lines) and _BULLET.match(lines[below].strip()):
                    out.append(label + _BULLET.sub("", lines[below].strip()))
                    below += 1
                at = below
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


def _plain(sentence: str) -> str:
    """``sentence`` without the Markdown, bullets and emoji around a request, and without
    the "uh" and "um" of dictation."""
    sentence = _FILLER.sub("", _BOLD.sub("", _HEADING.sub("", sentence)))
    return _DECORATION.sub("", sentence).lstrip("(")


def _request(sentence: str) -> str | None:
    """The wording ``sentence`` asks to keep, or None when it asks for nothing lasting: the
    sentence itself, or (a sentence split where no capital followed its full stop) a part
    of it after a full stop, or a sentence that ends by asking to remember itself."""
    if len(sentence) > MAX_SENTENCE:
        return None
    sentence = _TAG_QUESTION.sub(".", _plain(sentence))
    if _LOG_LINE.match(sentence):
        return None
    starts = [0, *(m.end() for m in _INNER_START.finditer(sentence))]
    for start in starts[:MAX_CAPTURES]:
        body = _asked(_plain(sentence[start:]))
        if body is not None:
            return body
    keep = _KEEP_OPENING.match(sentence)
    if (
        keep
        and _KEEPISH.search(keep.group("open"))
        and _HOW_LONG.search(keep.group("open"))
        and not _THIS_SCOPE.search(keep.group("open"))
        and "?" not in sentence
    ):
        return _kept(keep.group("rest"))
    back = _ENDS_POINTING_BACK.match(sentence)
    if back is None or (_question(sentence) and not _ASKS.search(sentence)):
        return None
    fact = back.group("fact").strip()
    if _NOT_BEFORE_BACK.search(fact) or len(fact.split()) < 3 or not _statement(fact):
        return None
    return _kept(fact)


def _asked(sentence: str, depth: int = 0) -> str | None:
    match = _TRIGGER.match(sentence)
    if match is None:
        opening = _OPENING.match(sentence)
        if opening is None:
            return None
        if _THIS_TASK.match(opening.group(0)) or _THIS_SCOPE.search(opening.group(0)):
            return None  # "this PR is a draft, remember — …", "for this task, remember …"
        match = _TRIGGER.match(sentence[opening.end() :])
        if match is None:
            return None
    if match.group("tag") is not None:
        return None if _question(sentence) else _tidy(match.group("tag"))
    if _THIS_SCOPE.search(sentence[: match.start("plain")] if match.group("plain") else ""):
        return None  # "just for this session remember …"
    for bare in ("rule", "directed"):
        said = match.group(bare)
        if said is not None:
            said = said.strip()
            stated = bare == "rule" or bool(_REFERENCE.match(match.group("when") or ""))
            spoken = not _CODE_WORD.match(said) and (
                (_DIRECTIVE.match(said) and not _TENTATIVE.search(said))
                or (stated and _statement(said))
            )
            return _kept(said) if spoken and "?" not in said else None
    body = (match.group("label") or match.group("plain") or "").strip()
    if match.group("plain") is None:
        if depth == 0 and _TRIGGER.match(body):
            # "Team rule, please remember it: X" / "In future sessions, remember that X".
            return _asked(body, depth + 1)
        return None if "?" in body else _kept(body)
    sep = match.group("sep").strip().rstrip("!")
    if match.group("named"):
        body = f"{match.group('named')}: {body}"  # "remember where the seeds are: db/seeds"
    if "?" in body.rstrip().rstrip("?") or _THIS_SCOPE.search(body):
        # "remember the last command you ran? run it again"; "… right now", "… in this PR"
        return None
    lasting = bool(
        match.group("later")
        or match.group("lead_later")
        or match.group("always")
        or match.group("never")  # "never forget to X" is for every time
        or _LASTING.search(body)
    )
    if _question(sentence):
        # Only a request shaped as a question counts: "can you remember that X uses Y?",
        # never "do you remember…" or "can you remember which flag…".
        said = _statement(body) or (sep == "that" and _STATED.match(body))
        asked = match.group("ask") or match.group("ask_mind")
        if not (asked and sep in (":", "that") and said):
            return None
        body = body.rstrip().rstrip("?")
    if match.group("mind") is not None and not lasting:
        return None  # "keep in mind that…", "note that…": about this task unless told to last
    if match.group("memory") is not None and not (
        match.group("your")
        or match.group("long")
        or (sep and (match.group("this") or match.group("saving")))
        or sep == "that"  # "please keep in memory that the client wants CSV"
    ):
        # "store it in memory: a dict is enough" is about RAM; "save this to memory: …",
        # "add to memory: …" and "keep this in your memory" are not.
        return None
    if sep == "":
        # "remember X" with neither "that" nor a colon: X must state something lasting,
        # not ask ("how…"), name a thing for this task ("the changelog"), or be a step.
        if _NOT_A_FACT.match(body):
            return None
        if _TO.match(body):
            if not lasting:
                return None
            body = _TO.sub("", body)
        elif not (
            _statement(_RELATIVE.split(body, maxsplit=1)[0])
            or lasting
            or (match.group("verb_remember") and _LONG_STATEMENT.match(_RELATIVE.split(body)[0]))
            # "memorize where X is: Y" names a thing and what it is; "memorize the output
            # of f()" is caching.
            or (match.group("memorize") and _DEFINITION.match(body))
        ):
            # The verb must be the statement's own: in "the edge case where X is empty"
            # it belongs to a clause that only describes a thing.
            return None
    if _THIS_TASK.match(body) and not lasting:
        return None
    return _kept(body)


def _kept(body: str) -> str | None:
    """The wording to store, unless it names something to find out or to do now rather than
    a fact."""
    body = body.strip()
    if _TO_FIND_OUT.match(body) or _DO_IT_NOW.search(body) or _THIS_SCOPE.search(body):
        return None
    return _tidy(body)


def _statement(words: str) -> bool:
    return bool(_CLAUSE.search(words) or _FACT_VERB.search(words))


def _question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?")


def _tidy(body: str) -> str | None:
    body = _TRAILING_SYMBOLS.sub("", re.sub(r"\s+", " ", body)).strip().rstrip(",;:").strip()
    body = body.lstrip("*").strip()  # "**Remember:** X" leaves the closing "**"
    body = _COURTESY.sub("", body).strip()  # "…, thanks!"
    if body.endswith(")") and body.count(")") > body.count("("):
        body = body[:-1].strip()  # "(btw remember that X.)"
    body = _LATER_OPENING.sub("", body)  # "remember this going forward: X" keeps X
    body = _PLEASE.sub("", body)  # "going forward, please always run…" keeps "always run…"
    if body.lower().startswith("that "):
        body = body[5:].lstrip()
    if len(body.split()) < MIN_WORDS or len(body) > MAX_CHARS:
        return None
    return body
