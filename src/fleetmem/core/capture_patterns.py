"""The words of :mod:`fleetmem.core.capture`: how people ask an agent to remember something,
and what looks like it but is not a request (this task's scope, pasted text, questions).

Each pattern's comment says which requests it is for; docs/facts.md lists them in prose.
Pure: regular expressions only.
"""

from __future__ import annotations

import re

from fleetmem.core import capture_languages as other
from fleetmem.core.lazy_pattern import LazyPattern

# Where a thing is kept in the agent's head: "burn this into your memory", "write this on your
# brain" (KEEP_STRONG and YOUR_MIND).
IN_YOUR_MIND = (
    r"(?:in|into|on|onto|to)\s+(?:your|ur)\s+(?:long[-\s]term\s+|persistent\s+|permanent\s+)?"
    r"(?:memory\s+bank|memory|brain|head)"
    r"|to\s+what\s+you\s+(?:remember|know)\s+about\s+(?:me|us)"  # "add this to what you remember …"
)
# A remark that what was said is a rule: "… -- that's a standing rule" (RULE_REMARK and
# STANDING_PLACE).
THATS_A_RULE = (
    r"(?:--|[-\u2013\u2014,;])\s*that'?s\s+(?:a|an|the|our)\s+(?:standing|hard|lasting|permanent"
    r"|house|team|firm|strict|general)?\s*rule"
)
# When it is to last: "for next time", "for future sessions", "going forward", "whenever you
# work in this repo".
FOR_LATER = (
    r"(?:for\s+(?:next\s+time|the\s+future|the\s+long\s+term|good|always"
    r"|(?:your|our)\s+future\s+reference"
    r"|(?:all\s+|any\s+)?(?:the|our|my|your)\s+(?:later|next|future|upcoming|coming|subsequent)"
    r"\s+(?:sessions?|runs?|chats?|conversations?|tasks?|times?|weeks?|months?|projects?|prs?"
    r"|changes?|work|interactions?)"
    r"|ever(?:\s+and\s+ever)?\b"
    r"|(?:all\s+|any\s+)?(?:later|next|futur(?:e)?|upcoming|coming|subsequent)"
    r"(?:\s+(?!(?:the|a|an|this|that|these|we|i|it|our|my|your|keep|remember|in|on|avoid"
    r"|run|always|never|don'?t|do|prefer|make|add|write|put|ask|check|stop|skip|include)\b)\w+){0,2}"
    r"(?:\s+(?:in|on)\s+(?:this|the|our)\s+(?:repo|repository|project|codebase|code))?"
    r"|(?:every|each|all)\s+(?:future\s+)?(?:session|run|task|time|conversation|chat|project)s?"
    r"(?:\s+of\s+(?:mine|ours))?)"
    r"|going\s+fo(?:r)?ward|moving\s+forward|forever|4ever|permanently|henceforth"
    r"|4\s+(?:the\s+)?futur(?:e)?|(?:for\s+)?(?:tomorrow|today|now)\s+and\s+beyond"
    r"|(?:across|between)\s+(?:all\s+)?(?:sessions|chats|conversations|runs)"
    r"|for\s+this\s+and\s+(?:all\s+)?(?:future|next|later)\s+(?:sessions?|chats?|runs?|tasks?)"
    r"|from\s+now(?=\s+(?:you|we|i|please|pls|always|never)\b|\s*,)"
    r"|from\s+(?:now|here)\s+on(?:\s+out)?|from\s+here\s+out|starting\s+(?:now|today)(?:\s+on)?"
    r"|from\s+this\s+point\s+(?:on(?:wards?)?|forward)|as\s+of\s+(?:now|today)"
    r"|for\s+future\s+ref(?:erence)?\b"
    r"|from\s+(?:now|today|here)\s+onwards?"
    r"|from\s+today(?:\s+on)?"
    r"|in\s+(?:every|each|all)\s+(?:future\s+)?(?:sessions?|runs?|chats?|conversations?|tasks?)"
    r"|for\s+the\s+rest\s+of\s+time|for\s+the\s+long\s+(?:haul|run)"
    r"|for\s+the\s+(?:rest|remainder|duration|life)\s+of\s+(?:this|the|our)\s+(?:project|repo"
    r"|repository|codebase|engagement|product)"
    r"|in\s+(?:all\s+)?(?:(?:the|our|my|your)\s+)?(?:later|future|next|upcoming|coming)\s+(?:sessions|runs|chats"
    r"|conversations|tasks|weeks)"
    r"|in\s+(?:all\s+)?(?:(?:the|our|my|your)\s+)?futur(?:e)?(?:\s+(?:runs|sessions|tasks|work|projects|chats"
    r"|conversations|prs|changes))?"
    r"|whenever\s+you(?:'re|\s+are)?\s+(?:\w+\s+){0,2}?(?:in|on|with)\s+(?:this|the|our)\s+"
    r"(?:repo|repository|project|codebase|code))"
)
# Words a sentence may open with before the request itself ("please", "btw", "oh and",
# "important:", "fyi").
LEAD = (
    r"(?:(?:please|plese|pleae|pls|plz|kindly|also|and|oh|ok(?:ay)?|alright|right|well|um+|uh+"
    r"|yeah|yep|yo|k|kk|btw|so|but|this\s+time"
    r"|just|hey(?:\s+(?!remember)\w+)?|heya|hiya|hi|hello|aight|bro|dude|ngl|tbh|honestly"
    r"|fyi|for\s+your\s+(?:information|info|reference)|nb|p\.?s\.?|por\s+favor|bitte|svp"
    r"|by\s+the\s+way"
    r"|@?(?:claude|codex|copilot|cursor|gemini|assistant|agent)|buddy|mate|quick\s+one"
    r"|wait|actually|hold\s+on|ah|nope|no|correction"
    r"|when(?:ever)?\s+possible|if\s+possible|generally|in\s+general"
    r"|one\s+more\s+thing|important|(?:a\s+)?quick(?:\s+note)?|(?:a\s+)?heads[-\s]+up"
    r"|let'?s|here'?s|here\s+is|(?:just\s+)?so\s+you\s+know|(?:a\s+|another\s+)?new\s+rule"
    r"|then|(?:one\s+)?last\s+thing"
    # Time words before the verb: "from now on remember that …", "going forward, note …".
    rf"|(?P<lead_later>{FOR_LATER}))\s*(?:[,:;!+&]|\s[-\u2013\u2014])?\s+)*"
)
# "I'd like you to always …": a wish that opens an instruction.
YOU_TO = r"(?:(?:i'?d\s+like|i\s+want|i\s+need|i'?d\s+love)\s+you\s+to\s+)"
# Ways of asking that wrap the verb: "I want you to remember", "make sure you remember",
# "could you please remember", "always remember". ``ask`` marks a question-shaped request.
FRAME = (
    r"(?:(?P<always>always|never\s+ever|permanently|forever)\s+"
    r"|(?:i\s+(?:really\s+)?(?:want|need|ask)|i'?d\s+(?:really\s+)?like"
    r"|i\s+would\s+(?:really\s+)?like|i'?ll\s+need|i\s+will\s+need"
    r"|i'?m\s+(?:going\s+to|gonna)\s+need)"
    r"\s+(?:you|u)\s+to\s+(?:always\s+)?"
    r"|i\s+want\s+that\s+you\s+|to\s+"
    r"|i'?d\s+(?:appreciate|love|like)\s+(?:it\s+)?if\s+(?:you\s+(?:could\s+|would\s+)?|you'?d\s+)"
    r"|(?:it'?d|it\s+would)\s+(?:really\s+)?(?:be\s+(?:great|nice|good|helpful|awesome|ideal)"
    r"|help(?:\s+me)?(?:\s+(?:a\s+lot|a\s+ton|so\s+much))?)\s+if\s+"
    r"you(?:\s+(?:could|would))?"
    r"\s+(?:always\s+)?"
    r"|make\s+sure\s+(?:to|you)\s+|be\s+sure\s+to\s+|try\s+to\s+|do\s+"
    r"|if\s+you\s+(?:could|would|can)\s+"
    r"|(?:you|u)\s+(?:should|must|need\s+to|have\s+to|can|could|will)?\s*(?:always\s+)?"
    r"|(?:it\s+)?is\s+important\s+(?:that\s+)?you\s+|it'?s\s+important\s+(?:that\s+)?you\s+"
    r"|(?P<ask>(?:(?:can|could|would|will)\s+(?:you|u)(?:\s+be\s+able\s+to)?"
    r"|is\s+it\s+possible\s+(?:for\s+you\s+)?to"
    r"|(?:can|could|may)\s+i\s+ask\s+you\s+to"
    r"|any\s+chance\s+(?:you\s+)?(?:could|can))(?:\s+(?:please|pls|also|maybe|possibly|kindly))*"
    rf"(?:,?\s+{FOR_LATER},?)?"
    r"(?:\s+always)?)\s+){0,2}"
)
# "remember" as typed in a hurry.
REMEMBER = (
    r"(?:(?:help\s+me\s+|note\s+and\s+)?(?:remember"
    # typed in a hurry: "rember", "rmbr", "remebr", "rmemeber", "rememver" (an r, then only
    # the word's letters and its neighbours on the keyboard, with an m and a b or v)
    r"|r(?=[emnbvwr]*m)(?=[emnbvwr]*[bv])[emnbvwr]{2,9}(?:e?d)?(?![a-z])|rememer|rem(?=\s*:))"
    r"(?:ed)?)"
)
# Words that name what is to be kept, between "remember" and a colon.
KEPT_WORDS = (
    r"(?:this|that|it|these|the|my|our|one|following|rules?|preferences?|lessons?|conventions?"
    r"|facts?|details?|once|and|for|all|time|please|well|carefully|too|also|as|a|standing"
    r"|important|thing|things|where|stuff|lives?|goes|go|is|are)"
)
# Verbs whose object is what to keep.
PLAIN = (
    # "Remember this rule: X", "remember my preference: X", "remember once and for all: X":
    # a few words naming what is to be kept, then a colon.
    rf"(?P<verb_remember>{REMEMBER})(?:(?:\s+{KEPT_WORDS}){{1,4}}(?=\s*:)"
    # "remember it: X" takes "it" only before a colon, a dash or time words: in "remember it
    # is…" the "it" is the fact's own subject.
    rf"|\s+this(?:\s+one)?|\s+it(?=\s*(?::|\s[-\u2013\u2014]|\s+{FOR_LATER}|\s+please))"
    r"|\s+me(?=\s+that\b)"
    r"|\s+(?:the|this|our)\s+rule"
    # "Remember where the seeds are: db/seeds": the words are kept with the fact.
    r"|\s+(?P<named>(?!that\b|to\b|how\b|why\b|when\b|if\b|whether\b|what\b)[\w'*/.-]+"
    r"(?:\s+[\w'*/.-]+){0,4})(?=\s*:\s))?|(?P<memorize>memori[sz]e)(?:\s+this)?"
    r"|learn\s+this|retain(?:\s+this(?:\s+(?:preference|rule|fact|one))?)?|make\s+(?:it\s+)?a\s+rule"
    r"|let\s+it\s+be\s+known"
    # "store the fact that X", "save a memory that X", "make it a permanent memory that X"
    r"|(?:store|save|record|note|remember|keep(?:\s+track\s+of)?)\s+the\s+fact"
    r"|(?:save|add|store|create|make)\s+(?:a\s+)?(?:new\s+)?memory"
    r"|make\s+(?:it|this)\s+a\s+(?:permanent\s+|lasting\s+)?(?:memory|rule|note)"
    r"|(?P<ask_mind>(?:(?:would|do)\s+you\s+)?mind)\s+(?:remembering|noting|keeping\s+in\s+mind)"
    # "can you store for future sessions that …": a keeping verb told how long
    rf"|(?:store|save|keep|record|note\s+down)(?=,?\s+(?:{FOR_LATER}|as\s+(?:a\s+)?(?:long[-\s]term"
    r"|permanent|standing|lasting)\s+\w+))"
    r"|(?:don'?t|do\s+not)\s+(?:you\s+)?(?:ever\s+)?forget(?:\s+this)?"
    r"|(?P<never>never)\s+(?:ever\s+)?forget(?:\s+this)?"
    r"|jot\s+(?:this\s+(?:one\s+)?|it\s+)?down|write\s+(?:this\s+(?:one\s+)?|it\s+)?down"
    r"|(?:make|take|keep)\s+(?:a\s+)?(?:mental\s+|permanent\s+|standing\s+|lasting\s+)?note"
    r"(?:\s+of\s+(?:this|that))?(?:\s+somewhere(?:\s+(?:permanent|safe))?)?"
    r"(?:\s+in\s+(?:your|ur)\s+(?:long[-\s]term\s+)?memory)?"
    r"|(?:keep|put)\s+(?:it\s+|this\s+)?on\s+record"
    r"|(?:save|store|record|keep|note)\s+(?:it\s+|this\s+)?as\s+(?:a\s+)?(?:permanent\s+)?"
    r"(?:preference|rule|fact|convention)(?=\s+that\b)"
    r"|note\s+(?:this\s+)?down(?:\s+somewhere(?:\s+(?:permanent|safe))?)?|note\s+this"
    r"|note\s+somewhere(?:\s+(?:permanent|safe))?"
    r"|commit\s+(?:this\s+|it\s+)?to\s+(?:(?:your|ur)\s+)?memory"
    r"|(?:store|save|record|note\s+down)(?=\s+that\s+(?:i|i'm|im|we|we're|you|our|my|the|all|every)\b)"
    r"|(?:save|store|persist)\s+this(?=\s*!+)"
)
# Verbs that put something in memory also name RAM in a coding prompt ("keep the session in
# memory"): see :func:`_request` for when they count.
MEMORY = (
    r"(?:(?P<saving>save|add|stash|file|log|record|persist)|store|put|keep|write)\s+"
    r"(?P<this>this\s+|a\s+(?:rule|fact|note|preference|reminder)\s+)?"
    r"(?:it\s+|that\s+)?"
    r"(?:to|in|into)\s+(?:the\s+)?(?P<your>(?:your|ur|the\s+agent'?s|project|team|shared)\s+)?"
    r"(?P<long>(?:long[-\s]term|permanent)"
    r"\s+)?(?:memory|memories|notes|knowledge(?:\s+base)?)"
)
# "keep in mind" and a bare "note" are as often about this task ("keep in mind that the
# endpoint is slow", "note that it returns 404"): they count only when told to last.
MIND = (
    r"(?P<kim>(?:keep|bear)\s+(?:this\s+|that\s+|it\s+)?in\s+(?:(?:your|ur)\s+)?(?:mind|mnd|mnid)"
    r"(?:,?\s+long[-\s]term,?)?)|note|know|be\s+aware|recall"
)
# Labels that open a line or sentence and are followed by a colon, a comma or a dash.
L = FOR_LATER
# Labels whose words need the time words after them ("note for next time:", "lessons for the
# future:", "knowledge going forward:"), and those that may take them ("make it a habit
# (from now on):"): each list shares one copy of FOR_LATER, which keeps the patterns that
# hold LABEL small enough to compile quickly (a hook compiles them in every process).
NEEDS_LATER = (
    r"(?:note|memo|reminder|tip|rule|psa|fyi|pro\s+tip|heads[-\s]up)"
    r"(?:\s+for\s+(?:you|u|the\s+agent|claude|codex),?)?"
    r"|for\s+the\s+record\s+and|lessons?|(?:something|one\s+thing|a\s+thing)"
    # "for all my assignments from now on:"
    r"|for\s+(?:all|every|each)\s+(?:(?:of\s+)?(?:my|our)\s+)?[\w-]+(?:\s+[\w-]+)?"
    r"|(?:save|store|keep|file|stash|retain|record|log)\s+(?:this|that)|knowledge"
)
MAY_TAKE_LATER = (
    r"make\s+(?:it|this)\s+a\s+habit"
    r"|(?:new|permanent|standing|golden|general)\s+(?:rules?|conventions?|polic(?:y|ies)"
    r"|guidelines?)"
    # "Save this as a preference:", "record this as a team convention:", "Save this rule:"
    r"|(?:save|store|record|log|keep|add|file|persist|make|mark|put|register|take)"
    r"\s+(?:(?:this|that|it)\s+)?"
    r"(?:(?:as|in|to|into|for)\s+)?(?:(?:a|an|the|my|our|your|team|new|standing|permanent"
    r"|long[-\s]term|house|general|project|repo)\s+){0,3}"
    r"(?:rules?|conventions?|preferences?|facts?|lessons?|reminders?|standards?|polic(?:y|ies)"
    r"|guidelines?|principles?|guidance|instructions?)"
    r"|(?:[\w'-]+\s+){0,5}?(?:to|should|must)\s+(?:always\s+)?(?:remember|keep\s+in\s+mind)"
    # "As a general rule for you from today onward, …"
    r"|as\s+(?:a|an|our)\s+(?:(?:standing|permanent|general|hard|house|firm|strict|golden|team"
    r"|lasting|fixed|blanket|long[-\s]standing|ongoing|persistent)\s+)*(?:rule|policy|convention"
    r"|preference|instruction|guidance)(?:\s+for\s+(?:you|us|me))?"
    # "Lesson learned from today's outage:"
    r"|lessons?\s+learn(?:ed|t)"
    # "new rule for this repo:", "rules for us going forward:" (not "rules for the bracket
    # generator:", which specifies a program)
    r"|(?:(?:new|permanent|standing|house|team|general|golden)\s+)?rules?\s+(?:of\s+thumb\s+)?"
    r"(?:for|in|on)\s+(?:(?:this|our|the|my)\s+(?:repo|repository|project|codebase|code\s*base"
    r"|team|org|company|monorepo|service|app)|you|us|me|future\s+\w+)\b"
    r"|(?:one\s+(?:more\s+)?thing|something|things?|(?:a|the)\s+thing)\s+to\s+"
    r"(?:remember|keep\s+in\s+mind)(?:\s+(?:about|regarding|for|on|in)\s+[^:,\n]{1,40}?)?"
    r"|(?:just\s+)?so\s+(?:that\s+)?you\s+(?:remember|know)"
    r"|(?:(?:a|one|another)\s+)?(?:(?:more|small|quick|little|tiny|short)\s+)?(?:note|thing|fact"
    r"|bit|one)\s+to\s+(?:keep|store|save)"
    r"(?:\s+around)?"
    r"|(?:this\s+is\s+|it'?s\s+)?(?:something\s+|one\s+|(?:a|one)\s+(?:fact|thing|note)\s+)?"
    r"worth\s+(?:remembering|knowing|noting"
    r"|persisting|keeping|storing|saving)"
)
LABEL = (
    rf"(?:(?:{NEEDS_LATER})\s+)?{L}|(?:{MAY_TAKE_LATER})(?:\s+{L})?"
    r"|(?:notes?|memos?|reminders?|things?|tips?)\s+(?:for\s+(?:you|u)\s*,?\s*)?(?:long[-\s]term"
    r"|for\s+the\s+long\s+(?:run|term|haul))"
    r"|long[-\s](?:term|lived)\s+(?:thing|note|fact|memo|preference|reminder)"
    # "add this to what you know about me:", "Update your memory about me:"
    r"|(?:(?:i\s+want\s+to\s+)?(?:add|put|save)\s+(?:this|that|something)\s+to|add\s+to|update)\s+"
    r"(?:what\s+you\s+(?:know|remember)|your\s+(?:knowledge|mental\s+model|notes|memory|picture))"
    r"(?:\s+about\s+(?:me|us|myself|the\s+project|this\s+project|this\s+repo|the\s+repo"
    r"|the\s+codebase|this\s+codebase|our\s+\w+|the\s+team))?"
    # "I've told you this before:", "don't make me repeat this:"
    r"|(?:i'?ve|i\s+have)\s+(?:told|said|mentioned|asked)\s+(?:you\s+)?(?:this|that)\s+(?:before"
    r"|already|(?:a\s+)?(?:few|many|several|multiple)\s+times)(?:\s+but\s+it\s+didn'?t\s+stick)?"
    r"(?:,\s+don'?t\s+forget\s+it\s+again)?"
    r"|don'?t\s+make\s+me\s+(?:repeat|say)\s+(?:this|it)(?:\s+again)?"
    r"|(?:one|a|another)\s+(?:more\s+)?(?:lasting|permanent|long[-\s]term|general)\s+(?:thing|note"
    r"|rule|preference|fact)"
    r"|(?:something|one\s+(?:more\s+)?thing|one\s+more|a\s+thing)\s+for\s+(?:your|ur|the)\s+"
    r"(?:memory|notes|records)"
    r"|(?:general\s+)?things?\s+about\s+me\s+you\s+should\s+(?:keep|know|remember)"
    r"|(?:notes?|memo)\s+(?:to|2)\s+(?:self|me|you|us)"
    r"(?:\s*(?:and|&|\+)\s*(?:to\s+)?(?:you|u|me|self|(?:the\s+)?agent|claude|codex))?"
    r"(?:\s+for\s+(?:the\s+)?(?:agent|you|claude|codex|ai))?"
    r"|(?:a\s+)?mental\s+note(?:\s+for\s+(?:you|u|later))?"
    r"|prefs?(?:\s*\((?:permanent|global|always|lasting)\))?|preference"
    r"|(?:save|store|keep|add|log)\s+(?:(?:as|a)\s+)?pref(?:erence)?"
    r"|(?:fyi\s+)?perm(?:anent)?(?:\s+(?:rule|pref|note|fact))?|future\s+ref(?:erence)?"
    r"|(?:fyi\s*)?\((?:save|keep|remember)\s+(?:this|that)\)"
    r"|(?:for|to)\s+(?:your|ur)\s+(?:long[-\s]term\s+)?memory(?:\s+(?:file|bank))?"
    r"|tl;?\s*dr\s+for\s+(?:your|ur)\s+memory"
    r"|(?:note|save|store|put|keep|write|log|record)\s+(?:it|this|that)\s+(?:down\s+)?(?:in|into|to)"
    r"\s+(?:your|ur)\s+(?:long[-\s]term\s+)?(?:memory\s+bank|memory|notes|records)"
    r"|let'?s\s+make\s+(?:this|it)\s+permanent"
    r"|(?:background|context)\s+(?:you\s+should\s+keep|to\s+keep|worth\s+keeping)\s+(?:for\s+later|"
    r"in\s+mind)"
    r"|for\s+(?:your|ur|the)\s+(?:notes|memory|records|knowledge|reference)"
    r"|(?:notes?|memo|reminders?)\s+(?:to|for)\s+(?:your\s+|ur\s+|the\s+)?memory"
    r"|memory\s+(?:notes?|update|item|entry|addition|request)"
    # "as a standing rule: …", "As a permanent rule, never log request bodies"
    r"|as\s+(?:a|an|our)\s+(?:(?:standing|permanent|general|hard|house|firm|strict|golden|team"
    r"|lasting|fixed|blanket)\s+)*(?:rule|policy|convention|preference)"
    r"|persist\s+(?:this|that)(?:,?\s+please)?|i\s+want\s+(?:this|that|it)\s+remembered"
    r"|(?:new|permanent|standing|golden|general)\s+(?:rules?|conventions?|polic(?:y|ies)"
    r"|guidelines?)\s+as\s+of\s+\w+"
    r"|(?:add|save|store|create|make)\s+(?:a\s+)?(?:new\s+)?memory(?:\s+for\s+(?:this|the|our)\s+\w+)?"
    r"|(?:long[-\s]term|permanent)\s+memory(?:\s+please)?"
    r"|(?:save|store|keep|add|file|record)\s+(?:this|that|it)\s+as\s+(?:a\s+)?"
    r"(?:permanent\s+|standing\s+|lasting\s+)?(?:note|rule|fact|reminder|memory)"
    r"|(?:[\w'-]+\s+){0,5}?(?:to|should|must)\s+(?:always\s+)?(?:remember|keep\s+in\s+mind)"
    r"\s+long[-\s]term"
    r"|lessons?\s+learn(?:ed|t)\s+(?:from|in|on|at|with)\s+[^:,\n]{1,40}?"
    r"|(?:(?:a|an|one|our|my|new|the)\s+)?(?:(?:new|permanent|important)\s+)?"
    r"(?:(?:house|team|project|repo|standing|golden|general|ground)\s+rules?"
    r"|(?:permanent|standing|lasting|persistent)\s+(?:notes?|reminders?))"
    r"|(?:(?:a|an|one|my|our)\s+)?(?:permanent|standing|general|lasting|global)\s+(?:prefs?"
    r"|preferences?"
    r"|conventions?|facts?|instructions?|rules?)(?:\s+for\s+(?:you|u|the\s+agent|(?:this|the|our)"
    r"\s+(?:repo|project|codebase|team)))?(?:,?\s*please)?"
    r"|(?:this\s+is\s+)?(?:important\s+and\s+)?(?:permanent|lasting|durable)"
    r"|(?:(?:a|one|another)\s+)?(?:sticky|durable)\s+(?:fact|note|rule|preference)(?:\s+for\s+you)?"
    # "Ok, noting this for the future so you remember:"
    r"|(?:noting|saving|storing|recording|writing)\s+(?:this|that)\s+(?:down\s+)?"
    rf"(?:{L})?(?:\s+so\s+(?:that\s+)?you\s+(?:remember|know))?"
    r"|rules?\s+of\s+thumb(?:\s+(?:for|in|on)\s+[^:,\n]{1,40}?)?"
    r"|(?:remember|know|note|learn)\s+this\s+about\s+(?:me|us|myself|the\s+team|our\s+\w+"
    r"|the\s+\w+(?:\s+team)?)(?:,?\s+please)?"
    r"|update\s+(?:your|ur)\s+(?:memory|notes)|store\s+this"
    r"|corrections?\s+(?:to|for)\s+(?:what\s+you\s+(?:have\s+stored|remember|know)"
    r"|(?:your|ur)\s+(?:memory|notes))"
    r"|(?:next|every)\s+time(?:\s+and\s+every\s+time(?:\s+after(?:wards)?)?)?"
    r"|notes?\s+to\s+(?:future|later)\s+(?:you|me|self|agents?|runs?|sessions?)"
)
# A colon, a comma, a dash (hyphen, en or em) or an arrow ("->", "→") after a space.
ARROW = r"->|=>|[\u2192\u21d2\u27a1]"
MARK = rf"[:,]|\s(?:[-\u2013\u2014]|{ARROW})"
# "remember!! X" reads like "remember X": what follows must be a statement.
SEP = rf"\s*(?P<sep>{MARK}|!+|\.(?=\s)|\s+that\b|\s+(?=\S))\s*"
TRIGGER = LazyPattern(
    rf"^{LEAD}(?:[#/](?:remember|memory)\b\s*:?\s*(?P<tag>.*)"
    rf"|(?:{LABEL})(?:,?\s+(?:please|pls|plz))?\s*(?:{MARK})\s*(?P<label>.*)"
    rf"|{FRAME}(?:{PLAIN}|(?P<memory>{MEMORY})|(?P<mind>{MIND}))"
    rf"(?P<later>,?\s+(?:{FOR_LATER}|next\s+time(?!\s+and\b)|in\s+(?:the\s+)?future)(?=[\s,:])"
    r"(?:\s+(?:too|as\s+well|also))?,?|\s+always(?=\s*:)"
    r"|,?\s+as\s+(?:a\s+)?(?:long[-\s]term|permanent|standing|lasting)\s+(?:preference|rule|fact"
    r"|note|convention|instruction),?"
    rf"|\s+(?:generally|in\s+general)(?=\s+that\b))?(?:,?\s+please)?{SEP}"
    r"(?P<plain>.*)"
    # "Rule: never commit to main" (a bare label pasted tool output also uses: see
    # _request), and "from now on always use pnpm" with no comma after the time words.
    rf"|rules?\s*(?:{MARK})\s*(?P<rule>.*)"
    # "Memory: the staging DB is read-only on weekends" (not "memory: 512Mi")
    rf"|(?:(?:memory|mem|permanent|durable\s+fact|persistent\s+note|lasting\s+fact)"
    rf"(?:\s+(?:please|pls))?\s*(?:{MARK}|\+)"
    rf"|\[(?:memory|remember|permanent)\]\s*(?:{MARK})?)\s*(?P<weak>.*)"
    rf"|(?P<when>{FOR_LATER}),?\s+(?P<directed>.*)"
    r"|\((?:note|reminder|memo|fyi)\s+(?:for\s+(?:later|the\s+future|next\s+time|future\s+\w+|you)"
    r"|to\s+(?:self|you))\)\s*:?\s*(?P<paren>.*))$",
    re.IGNORECASE | re.DOTALL,
)
# How a standing instruction opens after "from now on" or "Rule:": a word that makes it
# last, an imperative a person gives an agent, or a subject ("we", "our deploys"). "From now
# on the test should expect 201" opens otherwise: it specifies this change.
DIRECTIVE = LazyPattern(
    r"^(?:(?:please|pls|kindly)\s+[a-z]"
    # "going forward can you always use async/await" asks as a question without its mark
    r"|(?:(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+|pls\s+)?)?"
    r"(?:please\s+|pls\s+)?(?:always|never|only|don'?t|do\s+not|avoid|prefer|use|write|put|"
    r"run|keep|make|add|call|name|reply|respond|answer|ask|check|target|follow|stick|treat|"
    r"default|format|document|log|include|commit|open|send|pin|deploy|test|wrap|return|start|"
    r"sign|tag|squash|rebase|merge|push|review|mention|refer|label|prefix|speak|talk|address|"
    r"stop|skip|leave|assume|expect|require|let|ping|notify|tell|show|give|explain|suggest|"
    r"create|generate|set|bump|remove|delete|drop|split|group|sort|cite|link|quote|verify|"
    r"confirm|search|read|pick|choose|favou?r|stay|limit|cap|pass|route|store|save|move|place|"
    r"mark|flag|print|emit|raise|handle|retry|wait|pause|assign|escalate|lint|annotate|"
    r"comment|describe|summari[sz]e|batch|prompt|double-check|import|export|inline|extract|"
    r"rename|refactor|reuse|update|regenerate|rebuild|rerun|re-run|refresh|restart|reload|"
    r"when|whenever|if|before|after|once|unless|"
    r"we|i|you|our|all|every|each|no|nothing|nobody|everyone)\b)",
    re.IGNORECASE,
)
# Labels that say "keep this" outright: a statement after them counts even with no comma
# ("also for future reference the API allows 600 requests a minute").
REFERENCE = LazyPattern(
    r"^for\s+(?:future\s+ref(?:e?r[ae]?nce)?|ref(?:e?r[ae]?nce)?|next\s+time|later)$", re.I
)
# A plan or a guess is not a standing instruction: "In the future we might move the export".
TENTATIVE = LazyPattern(
    r"(?<!\bthat\s)(?<!\bwhich\s)(?<!\bwho\s)"  # "any command that could delete data" describes
    r"\b(?:might|may|maybe|perhaps|possibly|probably|could|for\s+now)\b",
    re.IGNORECASE,
)
# A first word that is code, not speech ("Rule: no-unused-vars 'x' is defined…" pasted from
# a linter): it holds a separator or a digit.
CODE_WORD = LazyPattern(r"^\S*[-_./:=\d]")
# What a remembered sentence says about this task only: "Remember, this is a draft PR".
THIS_TASK = LazyPattern(
    r"^(?:this|it'?s|it\s+is)\s+(?:(?:is|was)\s+)?(?:(?:a|an|just|only|still|the)\s+)*"
    r"(?:draft|wip|prototype|quick|temporary|throwaway|one-off|spike|poc|experiment|pr|"
    r"pull\s+request|branch|task|change|ticket|commit|diff|session|patch|hotfix)\b",
    re.IGNORECASE,
)
# What the person wants done now, inside what reads as a rule: "Going forward, fetch_user
# should raise — please implement that change"; "write this down as a TODO comment".
DO_IT_NOW = LazyPattern(
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
SYMBOLS = "\u2600-\u27bf\U0001f000-\U0001faff\ufe0f\u200d"
DECORATION = LazyPattern(
    rf"^(?:\s*(?:[-*+\u2022]|\d{{1,2}}[.)])\s+|\s*\[[ xX]?\]\s+|\s*\*{{1,3}}|\s*[{SYMBOLS}]+\s*)+"
)
TRAILING_SYMBOLS = LazyPattern(rf"[\s{SYMBOLS}]+$")
# Where a second request may start inside one sentence: "ok cool. from now on please…".
INNER_START = LazyPattern(
    r"[.!?;]\s+|\s(?:and|but|also|oh\s+and|plus|so)\s+(?=(?:please\s+|pls\s+|also\s+|kindly\s+)?"
    r"(?:remember|don'?t\s+forget|never\s+forget|keep\s+in\s+mind|bear\s+in\s+mind)\b)"
    # "before you start the refactor — remember, generally, that …"
    r"|\s[\u2013\u2014]\s+(?=(?:please\s+|pls\s+)?(?:remember|don'?t\s+forget|never\s+forget"
    r"|keep\s+in\s+mind|bear\s+in\s+mind)\b"
    # (not a pointer back at what the dash follows: "X — please remember that in future
    # sessions")
    r"(?!\s+(?:that|this|it)\b(?!\s+(?:the|we|our|you|i|an?|my|they|it|there|all|every|no)\b)))"
    # "Write a test for ParseASN (and, for future reference, Velmar's line numbers start at 10)",
    # "Refactor it (btw remember that report cards must show the logo) and add a spec"
    r"|\(\s*(?:(?:and|also|oh|btw),?\s+)?(?=for\s+(?:future|later)\s+(?:ref(?:erence)?|sessions)\b"
    r"|(?:please\s+)?(?:remember|don'?t\s+forget|never\s+forget)\s+that\b)",
    re.IGNORECASE,
)
# A request that points back at what was just said: "…, please remember that." /
# "Remember that." after a sentence.
BACK = (
    # who asks: "please", "can you", "I'd appreciate it if you", "make sure you"
    r"(?:please,?\s+|pls\s+|plz\s+|and\s+|so\s+|(?:can|could|will|would)\s+you\s+(?:please\s+)?"
    r"|i\s+want\s+you\s+to\s+know\s+(?=that)"
    r"|i'?d\s+(?:appreciate\s+it|love\s+it|like\s+it)\s+if\s+you\s+|make\s+sure\s+(?:you\s+)?"
    r"|i'?d\s+like\s+you\s+to\s+|(?:that'?s\s+)?important,?\s+"
    r"|i\s+want\s+you\s+to\s+|actually\s+)*"
    rf"(?:(?:(?:{REMEMBER}|memori[sz]e)(?:\s+(?:that|this|it)(?!['\u2019]\w)(?:\s+(?:one|lesson|fact|rule))?"
    # a bare "remember" followed by a colon or a dash asks ahead: "And remember — X"
    r"|(?!\s*(?:[,:]|\s[-\u2013\u2014])))"
    r"|remember\s+the\s+(?:new\s+|updated\s+)?(?:convention|rule|fact|lesson|preference)"
    r"|update\s+(?:your|ur)\s+(?:memory|notes)"
    # "Please remember all this about the label service for future sessions."
    rf"|(?:{REMEMBER}|memori[sz]e|keep|note|save|store)\s+all\s+(?:of\s+)?(?:this|that)"
    rf"|(?:{REMEMBER}|memori[sz]e)\s+everything\s+(?:above|i\s+(?:just\s+)?(?:said|wrote|told\s+you))"
    r"|(?:don'?t\s+forget|never\s+forget|note|noting|save|store|keep|record|retain"
    r"|hold\s+on(?:\s+to|to)|file)"
    r"(?!\s+(?:that|this|it)\s+(?:as|to|in|into)\s+(?:a\s+|an\s+|the\s+)?(?:[\w-]+\s+){0,2}?"
    r"(?:csv|json|ya?ml|txt|png|pdf|file|seed|fixture|table|folder|dir|directory)s?\b"
    # "…, save it as `docs/modbus_cheatsheet.md`": a file to write
    r"|\s+(?:that|this|it)\s+(?:as|to|in|into)\s+`?[\w./-]+\.[a-z]{1,5}\b)"
    r"\s+(?:that|this|it)(?:\s+(?:one|lesson|fact|rule))?)"
    r"(?:\s+(?:in|to|into)\s+(?:your\s+|ur\s+|the\s+)?(?:long[-\s]term\s+)?(?:memory|notes|mind|head)"
    r"|\s+(?:somewhere(?:\s+(?:safe|permanent))?|here|down))?"
    r"|(?:add|put|commit|write|save)\s+(?:that|this|it)\s+(?:to|in|into)\s+(?:(?:your|ur)\s+)?"
    r"(?:long[-\s]term\s+)?(?:memory|notes)"
    r"|(?:(?:this|that|it)\s+is\s+)?worth\s+(?:remembering|noting|knowing)(?:,?\s+please\s+do)?"
    r"|make\s+(?:a\s+)?(?:durable\s+|permanent\s+|lasting\s+|mental\s+)?note\s+of\s+(?:that|this|it)"
    r"|(?:add|put)\s+(?:that|this|it)\s+to\s+what\s+you\s+(?:know|remember)"
    r"(?:\s+about\s+[^.!?:]{1,40}?)?"
    r"|treat\s+(?:that|this|it)\s+as\s+(?:a\s+)?(?:permanent\s+|standing\s+|hard\s+|general\s+)?"
    r"(?:rule|fact|convention|policy)"
    r"|(?:keep|bear|have)\s+(?:that|this|it)\s+in\s+mind"
    # "Our convention is snake_case. Stick to it." "… Please follow that from now on."
    r"|(?:stick|keep)\s+(?:to|with)\s+(?:that|this|it)|follow\s+(?:that|this|it)"
    r"|make\s+sure\s+of\s+(?:that|this)|(?:that'?s\s+)?good\s+to\s+(?:remember|know)"
    r"|make\s+sure\s+(?:that|this|it)\s+sticks|lock\s+(?:that|this|it)\s+in"
    r"|keep\s+(?:using|doing)\s+(?:that|this|it)|make\s+(?:that|this|it)\s+stick"
    r"|make\s+(?:that|this|it)\s+(?:a\s+)?(?:permanent|lasting|standing|durable)\s+(?:note|rule"
    r"|memory|fact)"
    # "Please make that a standing rule.", "Make that a habit for every session.", "I want that
    # to be your default with me from now on", "I'd like that to stick.", "That's permanent."
    r"|make\s+(?:that|this|it)\s+(?:a|an|the|our|my|your)\s+(?:[\w-]+\s+)?(?:rule|habit|norm"
    r"|default|standard|convention|policy)(?:\s+(?:for|with)\s+(?:us|me))?"
    r"|(?:i'?d\s+like|i\s+want)\s+(?:that|this|it)\s+to\s+(?:stick|last|carry\s+over|be\s+(?:your|the|a"
    r"|our)\s+(?:[\w-]+\s+)?(?:default|rule|habit|norm|standard)(?:\s+with\s+(?:me|us))?)"
    r"|(?:that'?s|this\s+is|it'?s)\s+(?:permanent|for\s+good|forever"
    r"|a\s+(?:permanent|lasting|standing)\s+(?:one|yes|no|thing))"
    r"|(?:burn|etch)\s+(?:that|this|it)\s+(?:into|in|on)\s+(?:your|ur)\s+(?:memory|brain|mind|head)"
    rf"|i\s+want\s+you\s+to\s+know\s+(?:that|this|it)(?=\s+(?:from\s+now\s+on|{FOR_LATER}))"
    r"|(?:something|one|a\s+thing)\s+to\s+(?:keep\s+in\s+mind|remember|keep)"
    r"|write\s+(?:that|this|it)\s+down(?:\s+somewhere[^.!?:]{0,60})?"
    r"|(?:that'?s|this\s+is|it'?s)\s+(?:a|an|the|our)\s+(?:hard|strict|firm|permanent|standing|house"
    r"|team|general|golden|lasting)\s+(?:rule|requirement|policy|convention)"
    r"|keep\s+(?:that|this)\s+(?:fact\s+)?around"
    # "can you hang on to that for future chats?", "Keep that list for later.", "file that
    # away for later"
    r"|hang\s+on\s*to\s+(?:that|this|it)|file\s+(?:that|this|it)\s+away"
    r"|(?:keep|save|store|note)\s+(?:that|this|these|those)\s+(?:list|mapping|table|info|numbers?"
    r"|names?|details?)"
    r"|(?:keep|save|store|note)\s+(?:this|that)\s+(?:info|information|detail)"
    # "Don't lose that.", "log that one in your memory", "keep that in ur brain pls", "stick
    # that in your long-term memory", "Keep that noted permanently.", "this is the one to remember"
    r"|don'?t\s+lose\s+(?:that|this|it)"
    r"|(?:log|stick|put|store|save|file|keep)\s+(?:that|this|it)(?:\s+one)?\s+(?:in|into|on)\s+(?:your|ur)"
    r"\s+(?:long[-\s]term\s+)?(?:memory|brain|head|notes|radar)"
    r"|keep\s+(?:that|this)\s+one\s+around|keep\s+(?:that|this|it)\s+noted"
    r"|(?:this|that)\s+is\s+the\s+one\s+to\s+(?:remember|keep)"
    r"|remember\s+(?:that|this|the|these|those)\s+"
    r"(?:(?!(?:the|a|an|our|my|your|all|every|each|we|i|you)\b)[\w-]+\s+){0,2}?(?:flow|setup|detail|one|bit"
    r"|part|convention|rule|layout|versions?|path|naming|preference|prefix|pattern|fact|host|port"
    # "remember that number", "… that schedule", "… that split", "… those numbers for next time"
    r"|number|value|name|schedule|process|date|id|url|command|step|order|split|list|decision"
    r"|limit|timeout|setting|default|choice|workflow|trick|quirk)s?"
    r"|(?:this|that|it)\s+applies\s+to\s+(?:all|every|each|any)\s+(?:of\s+)?(?:our|my|your|future)?"
    r"\s*[\w-]+(?:\s+[\w-]+)?"
    r"|don'?t\s+mix\s+(?:them|those|these|the\s+two)\s+up"
    r"|(?:that'?s|this\s+is|it'?s)\s+(?:a|an|one)\s+(?:[\w-]+\s+){0,2}?(?:gotcha|rule|fact|thing"
    r"|lesson|detail|preference|convention)\s+(?:to\s+(?:remember|keep\s+in\s+mind|know)"
    rf"|(?:worth\s+)?(?:remembering|keeping))"
    # "That goes for every migration from here on.": only with the time words (see below)
    rf"|{other.BACK}"
    rf"|(?:that|this|it)\s+(?:goes|applies|holds|counts)(?:\s+(?:for|to)\s+(?:every|all|any|each)"
    rf"\s+[\w-]+(?:\s+[\w-]+)?)?(?=\s+{FOR_LATER}))"
    # when it is to last, whom it is for
    rf"(?:\s+(?:{FOR_LATER}|next\s+time|this\s+time|instead|too|as\s+well|from\s+now|again|always"
    r"|(?:every|each)\s+time\b[^.!?:,]{0,40}"
    r"|in\s+general|generally|later"
    r"|about\s+(?:me|us|(?:our|the|this|my|your)\s+[^.!?:]{1,60}?|[\w-]+(?:\s+[\w-]+)?)"
    r"|for\s+(?:me|us|later"
    r"|(?:all\s+|any\s+)?(?:future|next)\s+(?:(?!that\b)[\w\s/-]){1,40}?"
    r"|(?:every|each|all|any)\s+(?:(?!that\b)[^.!?:]){1,60}?))){0,2}"
    r"(?:,?\s+(?:please|pls|plz|thanks|thx))?"
    # why: "…, it'll come up again", "… so you stop inventing keys", "… for when things break"
    r"(?:,?\s*(?:it'?ll|it\s+will|this\s+will|that\s+will|it|this)\s+[\w\s']{1,30}?"
    r"|\s+(?:so|because|since|next\s+time\s+(?:i|we)|when\s+\w+ing"
    r"|as(?!\s+(?:a|an|my|our)\s+(?:[\w-]+\s+)?(?:preference|rule|fact"
    r"|convention|note|standard)\s+that\b)|for\s+when|next\s+time\s+you|when\s+(?:you|we)|if"
    r"|in\s+case"
    r"|whenever)\b(?:[^.!?:]|[.:](?=\S)){0,100}|\s+for\b(?![^.!?:]*\bthat\b)(?:[^.!?:]|[.:](?=\S)){0,100}"
    r"|\s*(?:,|\s[-\u2013\u2014])\s*[^!?:]{0,100}|\s+and\s+(?:[^.!?:]|[.:](?=\S)){0,80})?"
)
ASKS = LazyPattern(r"\b(?:can|could|will|would)\s+you\b", re.IGNORECASE)
# "That's a hard rule, remember it." points back past its own words.
RULE_WORDS = (
    r"(?:(?:that'?s|this\s+is|it'?s)\s+(?:a|an|the|our)?\s*(?:hard|strict|firm|permanent"
    r"|standing|house|team|general|important|golden|lasting|[\w-]+)?\s*(?:rule|fact|convention"
    r"|requirement|policy|preference|gotcha|pattern|standard|approach)(?:\s+of\s+(?:mine|ours))?"
    r"\s*[,;.]?\s*"
    r"|(?:(?:a|an|the|our)\s+)?(?:permanent|standing|hard|house|team|general|golden|lasting)\s+rule"
    r"\s*[,;.]?\s*)?"
)
BACK_END = rf"{RULE_WORDS}(?:{BACK})\s*\)?\s*[.!?]*[\s{SYMBOLS}]*$"
POINTS_BACK = LazyPattern(rf"^{BACK_END}", re.IGNORECASE)
# A remark on what was just said, then the request pointing back at it: "This will come up
# again and again, so please remember it for future sessions." (the remark is not the fact).
REMARK_BACK = LazyPattern(
    r"^(?:this|it|that)(?:'s|\s+(?:is|will|keeps|comes|matters|has|was|happens|bites|breaks))\b"
    r"[^,.;:?!\u2013\u2014]{0,40}?\b(?:again|important|crucial|critical|key|matters?|often"
    r"|recurring|repeatedly|all\s+the\s+time|every\s+time|comes?\s+up|coming\s+up|bites?|bit"
    r"|bitten|burned|burnt|style|decision|rule|convention|preference|policy|keeper|principle"
    r"|standard|point|habit)\b[^,.;:?!\u2013\u2014]{0,20}"
    rf"[,;]?\s+(?:so\s+|and\s+)?{BACK_END}",
    re.IGNORECASE,
)
ENDS_POINTING_BACK = LazyPattern(
    rf"^(?P<fact>.+?)(?:\s*(?:[,;.(]|!+|\s[-\u2013\u2014])\s*{BACK_END}"
    rf"|\s+(?=(?:please\s+|pls\s+)?(?:remember|note|keep|save)\s+(?:that|this|it)\b){BACK_END}"
    # "… our staging URL is https://staging.acmeapp.dev and I'd like you to remember it."
    r"|\s+(?=and\s+(?:i'?d\s+like|i\s+want)\s+you\s+to\s+(?:remember|keep|note)\s+(?:that|this|it)\b)"
    rf"{BACK_END})",
    re.IGNORECASE | re.DOTALL,
)
# "I don't remember.", "we never remember that": the words before say who remembers, not
# what to keep.
NOT_BEFORE_BACK = LazyPattern(
    r"\b(?:i|we|you|they|he|she|don'?t|do\s+not|can'?t|cannot|never|not|to|always|and|or|then"
    r"|should|must|will|would|can|could|i'?ll|we'?ll|you'?ll)$",
    re.IGNORECASE,
)
# An opening that keeps what follows to this task: "For this task, remember that the staging
# db is down", "just for this session, remember …".
THIS_SCOPE = LazyPattern(
    r"\bfor\s+(?:this|the\s+current)\s+(?:task|session|pr|change|ticket|branch|run|one|fix|bug"
    r"|issue|conversation|chat|commit|refactor|rewrite|cleanup|migration|spike|patch|script|file"
    r"|debugging|investigation|experiment|demo|query|report|sample|dataset|analysis|request)\b"
    r"|(?<!\bnot\s)\bonly\s+for\s+this\b"
    r"|(?<!\bnot\s)\bfor\s+(?:now|today)\b|(?<!\bnot\s)\bjust\s+today\b|\bright\s+now\b"
    r"|\bin\s+this\s+(?:pr|task|change|session|ticket|branch|commit|answer|reply|response|diff"
    r"|refactor|rewrite|cleanup|spike|fix|patch)\b"
    # ("dont forget the semicolons this time", not "please remember it this time: …")
    r"|(?<!\bit\s)(?<!\bme\s)(?<!\breal\s)(?<!\bthat\s)(?<!\bthis\s)(?<!\bgood\s)(?<!\bstick\s)"
    r"(?<!\bseriously\s)(?<!\bserious\s)(?<!\bam\s)(?<!\bproperly\s)(?<!\bright\s)\bthis\s+time\b"
    r"(?!\s+(?:of|around|zone)\b)|\b(?:as|while)\s+you\s+\w+\s+(?:this|it)\b"
    r"|\bstill\s+need\s+to\b|\bbefore\s+we'?re\s+done\b"
    r"|\bfor\s+the\s+rest\s+of\s+(?:this|the)\s+(?:task|session|pr|conversation|chat|day)\b"
    r"|\b(?:of|in|for|from)\s+this\s+(?:pr|task|change|session|ticket|branch|commit|diff)\b"
    r"|\bonly\b[^.]{0,60}\btoday\b|\btoday\s+only\b|\btonight\b"
    r"|(?<!\bof\s)(?<!\bfrom\s)(?<!\bstarting\s)(?<!\bdecided\s)(?<!\bthis\s)(?<!\bjust\s)(?<!\bbeyond\s)"
    r"\btoday\s*[.!]*$"
    r"|\bjust\s+(?:what\s+i\s+need\s+)?(?:right\s+)?now\b"
    r"|\b(?:an?|one|two|\d+|few|couple\s+of)\s+(?:minutes?|mins?|hours?)\s+ago\b"
    r"|\bthis\s+(?:morning|afternoon|evening|week)\b"
    r"|\bthe\s+(?:goal|point|idea|aim)\s+(?:here|of\s+this)\b|\bwhen\s+you\s+\w+\s+this\b",
    re.IGNORECASE,
)
# A statement after "can you remember that": it opens with a determiner, a possessive, a
# subject or a condition ("can you remember that the gateway drops idle connections?").
STATED = LazyPattern(
    r"^(?!\S+\s+(?:we|i|you|they|he|she)\b)\S+\s+\S+\s+\S+\s+\S+",
    re.IGNORECASE,
)
# A statement after a bare "remember" with no "that": a determiner and at least five words
# before any relative clause ("pls remember the auth service issues JWTs that expire…").
LONG_STATEMENT = LazyPattern(
    r"^(?=(?:\S+\s+){4}\S)(?:the|our|my|all|every|each|these|those)\s+(?:[\w'-]+\s+){0,4}?"
    r"[a-z]+s(?!\s+(?:for|in|on|of|at|to|from|with|by|and|or)\b)\s+\S+",
    re.IGNORECASE,
)
# A tag question that does not make a request a question: "…, ok?", "…, right?".
TAG_QUESTION = LazyPattern(
    rf"[,\s]+(?:ok(?:ay)?|right|yeah|yes|alright|got\s+it|understood|deal|{other.TAGS})\s*\?+\s*$",
    re.I,
)
# Lines of a pasted log: "keepalived[812]: …", "2024-05-01 12:00 …", "[ERROR] …".
LOG_LINE = LazyPattern(
    r"^(?:\S+\[\d+\]:|\d{4}-\d\d-\d\d[T ]\d|\[?\d\d:\d\d:\d\d|\[(?:INFO|WARN|WARNING|ERROR"
    r"|DEBUG|TRACE)\]|(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE)\b[:\s])"
)
# Courtesy at the end of a request, not part of the fact: ", thanks!", " thx".
COURTESY = LazyPattern(
    r"[\s,;.!-]*\b(?:thanks(?:\s+a\s+lot)?|thank\s+you|thx|ty|cheers|please|pls"
    r"|(?<!\bmy\s)(?<!\byour\s)(?<!\bthe\s)(?<!\ban\s)(?<!'s\s)(?<!\u2019s\s)ok(?:ay)?)\b"
    r"[\s.!]*$",
    re.IGNORECASE,
)
# Words that turn from what was said back to the task: "anyway, add the screen".
TURN_WORDS = r"anyway|anyways|now|ok|okay|alright|next|btw"
# A sentence typed in lower case that turns back to the task: "… too. anyway, add the screen".
TURNS_TO_TASK = LazyPattern(rf"(?<=[.!?])\s+(?=(?:{TURN_WORDS})\b[,\s])")
# Dictation's hesitations.
# (not Portuguese's article: "é um Mac mini", "de um serviço")
FILLER = LazyPattern(
    r"(?<![\w-])(?=[ue])(?:uh+|(?<!\b[ée]\s)(?<!\bde\s)(?<!\bcom\s)(?<!\bem\s)(?<!\bpor\s)(?<!\bpara\s)"
    r"(?<!\bpra\s)(?<!\btem\s)(?<!\bser\s)(?<!\bfoi\s)(?<!\bh[áa]\s)(?<!\bcomo\s)(?<!\bque\s)"
    r"um+|erm|uhm)(?![\w-]),?\s*",
    re.IGNORECASE,
)
# Any short opening before a colon that asks for something to be kept and says for how long
# or where: "This is important and I want it to stick across sessions: X", "Burn this into
# your memory: X".
KEEP_OPENING = LazyPattern(
    r"^(?P<open>[^:\n]{3,120}?)(?::|\s+is\s+that)\s+(?P<rest>\S.*)$", re.DOTALL
)
# An emoji between an opening and its fact, read as a colon: "Keep this for next time 🙏 X"
# (elsewhere emoji between words are dropped, see INNER_SYMBOLS).
EMOJI_OPENING = LazyPattern(
    rf"^(?P<open>[^:\n{SYMBOLS}]{{3,80}}?)\s+[{SYMBOLS}]+\s+(?P<rest>\S.*)$", re.DOTALL
)
# An opening before a dash that ends by asking to keep what follows: "you'll want to remember
# this —", "and this is one to keep -".
KEEP_AHEAD_END = LazyPattern(
    r"(?:\b(?:remember|memori[sz]e|keep)\s+(?:this|that|it)(?:\s+one)?|\bone\s+to\s+keep"
    r"|\b(?:pls|please|plz)\s+(?:remember|memori[sz]e))\s*$",
    re.IGNORECASE,
)
# A dash only after an opening that starts by asking: "Keep this in the back of your mind
# for future tasks — X" (not "If I remember correctly, X — check that").
# The "that" inside an opening before a colon: "It should stay in your memory that we support
# the browsers in the browser policy: …" (what follows "that" is the fact, colon and all).
THAT_INSIDE = LazyPattern(
    r"^(?P<ask>.*?\b(?:memory|mind|head|brain|notes|remember|know)\s+that"
    # "Keep this on file as our standard for 1-GPU serving pods: …"
    r"|.*?\b(?:keep|save|store|note|file|remember)\s+(?:this|it|that)(?:\s+on\s+file)?\s+as"
    r"(?=\s+(?:our|the|my)\s))\s+(?P<fact>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
KEEP_DASH = LazyPattern(
    r"^(?P<open>(?:(?:can|could|would|will)\s+(?:you|u)\s+)?(?:please\s+|pls\s+)?"
    r"(?:keep|remember|hold|store|save|file|note|bookmark|stash)\b"
    # ("Remember—every outbound call …": a long dash needs no spaces)
    rf"[^:\n\u2013\u2014]{{0,100}}?)(?:\s(?:[-\u2013\u2014]|{ARROW})\s+|[\u2013\u2014](?![^\u2013\u2014]*[\u2013\u2014]))(?P<rest>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
# "If I remember correctly", "do you remember", "I can't remember": someone remembering.
NOT_KEEP = LazyPattern(
    r"\b(?:i|if\s+i|we|do\s+you|did\s+you|(?<!\bso\s)(?<!\bsure\s)(?<!\bwhat\s)you|can'?t|don'?t|cannot"
    r"|never|(?<!\byou'll\s)(?<!\byou\s)(?:want|need|have|trying|try|tried|hard|how|easy)\s+to)"
    r"\s+remember\b"
    r"|\bremember\s+what\s+(?:i|we|you)\s+(?:said|told|mentioned|discussed|asked|wrote)\b"
    r"|\bno\s+need\s+to\s+(?:keep|remember|save|store|note)\b"
    r"|\b(?:don'?t|do\s+not)\s+(?:want|need)\s+you\s+to\s+(?:remember|keep|save|store)\b"
    r"|\bnot\s+for\s+(?:your|ur|the)\s+(?:memory|notes)\b"  # "Not for your memory, just context:"
    # "Save yourself the trouble and just use `jq`"
    r"|\bsave\s+yourself\s+(?:the|some|a\s+lot\s+of)\s+(?:trouble|time|effort|hassle|work)\b"
    # "make sure this stays out of any long-term notes"
    r"|\bout\s+of\s+(?:any\s+|your\s+|ur\s+|the\s+)?(?:long[-\s]term\s+)?(?:notes|memory|memories)\b"
    # "I'm not asking you to remember this", "Not sure if this is worth remembering", "don't
    # bother remembering this", "Temporary workaround, NOT a permanent thing:"
    r"|\bnot\s+asking\s+you\s+to\s+(?:remember|keep|save|store|note)"
    r"|\bnot\s+sure\s+(?:if|whether)\s+(?:this|it|that)(?:'s|\s+is)\s+worth"
    r"|\bdon'?t\s+bother\s+(?:remembering|saving|noting|keeping|storing)"
    r"|\bnot\s+(?:a\s+)?(?:permanent|lasting|standing|long[-\s]term)\b|\btemporary\b"
    r"|\b(?:isn'?t|is\s+not|not)\s+(?:something|one|a\s+thing|anything)\s+(?:you\s+need\s+)?to\s+"
    r"(?:keep|remember|save|store|note)\b"
    r"|\b(?:don'?t|dont|do\s+not|never)\s+(?:need\s+to\s+)?(?:keep|save|store|note|add|put|write"
    r"|record|commit|memori[sz]e)\b"
    # "Das musst du dir nicht merken", "no hace falta recordar", "pas besoin de retenir",
    # "não precisa lembrar": the same in the other languages the rules read
    r"|\bnicht\s+(?:zu\s+)?merken\b|\bmerk\s+(?:dir|es)\s+(?:das\s+)?nicht\b"
    r"|\bniet\s+(?:te\s+)?onthouden\b|\bhoef(?:t)?\s+(?:je\s+)?(?:dit\s+|dat\s+)?niet\b"
    r"|\bnon\s+(?:serve|c['\u2019][èe]\s+bisogno\s+di)\s+ricordar|\bnie\s+(?:musisz\s+)?zapami[eę]tywa"
    r"|\bnie\s+zapami[eę]tuj"
    # "Não salva isso em lugar nenhum", "no lo apuntes", "nicht speichern", "ne le note pas"
    r"|\bn[ãa]o\s+(?:salv|guard|anot|grav|registr)\w*|\bno\s+(?:lo\s+)?(?:apuntes|anotes|guardes|grabes)\b"
    r"|\bnicht\s+(?:speichern|notieren|aufschreiben|abspeichern)\b|\bne\s+(?:le\s+|la\s+)?note\s+pas\b"
    r"|\bnon\s+(?:salvare|segnare|annotare)\b|\bniet\s+(?:opslaan|noteren)\b|\bnie\s+(?:zapisuj|notuj)\b"
    r"|\bno\s+(?:hace\s+falta|es\s+necesario|necesitas)\s+(?:recordar|guardar)"
    r"|\bno\s+(?:lo\s+)?(?:recuerdes|guardes)\b|\bpas\s+besoin\s+de\s+(?:le\s+|la\s+)?(?:retenir|garder"
    r"|m[ée]moriser)|\bne\s+(?:le\s+|la\s+)?(?:retiens|garde|m[ée]morise)\s+pas\b"
    r"|\bn[ãa]o\s+(?:precisa\s+(?:de\s+)?|(?:se\s+)?)(?:lembrar|guardar|lembre|guarde)",
    re.IGNORECASE,
)
# Verbs that ask to keep something for good on their own ("I'm going to say this once so
# please remember it:", "Want you to hold onto this:").
KEEP_STRONG = LazyPattern(
    # (not a thing's own: "a table that remembers which files were imported:")
    r"\b(?:(?<!\bthat\s)(?<!\bwhich\s)remembers(?!-)|remember(?!s\b)\w*+(?!-)"
    r"|memori[sz]\w*+(?!-)|retain|hold\s+on(?:to|\s+to)|hang\s+on\s+to"
    r"|carry\s+\w+\s+over|carry\s+(?:\w+\s+)?(?:into|forward)"
    r"|carry\s+over|bookmark(?!-)|file\s+(?:this|it)\s+away|commit\s+\w+\s+to\s+memory|burn|etch"
    r"|lock\s+(?:this|it|that)\s+in|(?:want|like|need)\s+you\s+to\s+keep\s+(?:it|this|that)"
    rf"|make\s+(?:it|this|that)\s+(?:stick|permanent)|{IN_YOUR_MIND}"
    r"|so\s+(?:that\s+)?(?:it|this)\s+sticks|remember-(?:forever|for-good|permanently)"
    r"|(?:should|must|needs?\s+to|has\s+to)\s+(?:stick|persist)"
    r"|(?:want|need|like)\s+(?:this|it|that)\s+(?:to\s+be\s+)?(?:permanent|remembered|kept|retained"
    r"|to\s+stick|to\s+persist)"
    r"|keep\s+(?:\w+\s+){0,2}around|keep\s+in\s+(?:(?:your|ur)\s+)?memory|keep\s+(?:this|it|that)\s+stored"
    # "file under 'things Claude should always know':", "This goes in memory:", "Add this to
    # memory pls:"
    r"|file\s+(?:this\s+|it\s+)?under\b|(?:this|that|it)\s+goes\s+(?:in|into)\s+(?:your\s+)?memory"
    r"|(?:add|put|save|write|commit|stick)\s+(?:this|that|it)\s+(?:to|in|into)\s+(?:your\s+)?memory\b"
    r"|lodge\s+(?:this|that|it)\b"  # "Lodge this somewhere permanent:"
    # "Don't lose this one:", "So that I don't have to say it again next week:"
    r"|(?:don'?t|do\s+not|never)\s+lose\s+(?:this|that|it)\b"
    r"|(?:don'?t|won'?t|never)\s+have\s+to\s+(?:say|repeat|tell|explain)\s+(?:it|this|that|myself|you)"
    r"|(?:for|to|in|into)\s+(?:your|ur)\s+(?:long[-\s]term\s+)?(?:memory\s+bank|memory|memories|records)"
    r"|for\s+the\s+memory|future[-\s](?:you|me|self)"
    # "keep telling you until it sticks:", "the thing you need to internalize:", "general rule
    # to keep:", "quick one you should keep:", "keep knowing", "Make this the norm:", "update
    # your notes about me:"
    r"|memory\s+(?:item|entry)|until\s+it\s+sticks|internali[sz]e"
    # "hang onto this for later:", "memo to yourself for the long run:", "Standing order:",
    # "For posterity:", "Keep this locked in:", "Can you keep track of this long-term?", "and
    # this is forever:", "make it this:", "I'm noting this for you to keep:", "New default for
    # you:", "This is for later, not for now:"
    r"|hang\s+onto|(?:memo|note)\s+to\s+yourself|for\s+posterity|locked\s+in"
    # not the bank's: "a standing order migration plan", "standing order payments"
    r"|standing\s+order(?!s?\s+(?!(?:for|from|to|and|or|that|this|is|here|then|now|you|u|i|we"
    r"|please|pls|btw|of|in|on|the|a|going|until|since|as|which|about|re|regarding)\b)[a-z])"
    r"|keep\s+track\s+of\s+(?:this|that)|(?:this|it)\s+is\s+forever|make\s+it\s+this"
    r"|for\s+you\s+to\s+keep|keep\s+the\s+corrected|new\s+default|default\s+assumption"
    r"|(?:this\s+is|it'?s)\s+for\s+later"
    r"|(?:one|rule|thing|fact|bit|info|information|something)\s+(?:(?:you\s+)?should\s+|to\s+)keep\b"
    # "important for next times!!", "you keep forgetting so:", "Remind yourself next time:",
    # "And don't you forget it next time:", "Putting it here so you have it next time too:"
    r"|important\s+for\s+(?:the\s+)?(?:next|future)\s+\w+|keep\s+forgetting"
    r"|remind\s+yourself|keep\s+reminding|don'?t\s+you\s+(?:ever\s+)?forget"
    r"|you\s+(?:have|know)\s+it\s+(?:next\s+time|later|for\s+(?:later|next\s+time|the\s+future))"
    r"|keep\s+knowing|learn\s+(?:this|that)\s+(?:now|once|by\s+heart)"
    r"|make\s+(?:this|that|it)\s+(?:the|a|our|your)\s+(?:new\s+)?(?:norm|default|habit|standard)\b"
    r"|update\s+(?:your|ur)\s+(?:notes|memory)"
    rf"|(?:{other.VERBS})(?![\w-])"
    r"|merken|merk\s+dir|recuerd[ae]|acu[eé]rdate|record[aá]|retiens|souviens|m[ée]moire"
    r"|lembr(?:a|e|ar)|ricorda|onthoud|zapami[eę]taj|запомни|覚えて|记住|記住"
    r"|(?:establish|set)\s+(?:a|the|this|one)\s+(?:norm|rule|convention|habit|standard)\s+"
    r"(?:with|for)\s+(?:you|us))\b",
    re.IGNORECASE,
)
# Verbs that keep something, for good only when told so ("keep", "save", "store", "stick").
KEEPISH = LazyPattern(
    r"\b(?:keep|kept|stick|sticks|persist|know|save|saved|store|stored|record|recorded|note|noted"
    r"|noting|log|register|registered|remembered|give\s+you|take\s+this|teach|teaching|pin"
    r"|take\s+(?:this\s+|that\s+)?into\s+account|bear\s+in\s+mind"
    # "Para o futuro, guarda:", "Note pour les prochaines sessions :", "Anota aí pra próxima:",
    # "Só pra você guardar pro futuro:", "Para que lo sepas de aquí en adelante:"
    r"|guarda|guarde|apunta|aponta|anota|notiere|segna|notuj|guardar|saber|sepas|merken|retenir|garder"
    r"|onthouden|zapami[eę]ta[ćc]|ricordare|lembrar|gilt|geldt|vale|vaut|fica\s+a\s+dica"
    r"|fica\s+ligado)\b",
    re.IGNORECASE,
)
# Nouns of what is kept for good: "a lasting preference", "team fact", "on file".
KEPT_NOUN = LazyPattern(
    r"\b(?:(?:your|ur)\s+(?:long[-\s]term\s+)?(?:memory|memories|brain|head|mind|notes)"
    r"|(?:your|ur)\s+(?:long[-\s]term\s+|permanent\s+|lasting\s+)?(?:context|records)"
    r"|(?:long[-\s]term|permanent|project|team|shared)\s+memory|preferences?|facts?"
    r"|conventions?|lessons?|knowledge|on\s+file|rules?\s+of\s+the\s+house|instructions?|guidance"
    r"|principles?|guidelines?"
    r"|context"
    r"|(?:permanent|standing|lasting|persistent)\s+(?:rules?|notes?))\b",
    re.IGNORECASE,
)
HOW_LONG = LazyPattern(
    rf"{FOR_LATER}|\b(?:long[-\s]term|permanent(?:ly)?|lasting|for\s+(?:the\s+)?long\s+haul"
    r"|(?:across|between)\s+sessions|every\s+session|next\s+time|later|future|again"
    r"|for\s+good|still\s+know|(?:for\s+)?the\s+long\s+run|whenever\s+(?:you|we)|so\s+we'?re\s+clear"
    r"|ongoing|long[-\s]standing|standing|persistent|outlive\w*|in\s+general|we\s+work\s+together"
    r"|not\s+just\s+(?:today|now|for\s+(?:now|today|this\s+\w+))|subsequent|onwards?"
    # "Keep this one in mind always:", "keep in mind for everything we do here —"
    r"|always\s*$|for\s+(?:everything|anything|all)\s+(?:we|you)\s+do"
    rf"|{other.LATER})\b",
    re.IGNORECASE,
)
# "and I mean long-term:" between a request and its fact.
I_MEAN = LazyPattern(
    r"^(?:and\s+)?i\s+mean\s+(?:it|this|for\s+good|long[-\s]term|permanently|forever)\s*"
    r"(?:[:,]|\s[-\u2013\u2014])\s*",
    re.IGNORECASE,
)
# Words a sentence opens with before a fact ("btw", "also"): dropped around a request in
# parentheses.
LEAD_WORDS = LazyPattern(r"^\s*(?:(?:btw|also|oh|and|so|ok(?:ay)?|fyi)\b[,\s]*)+", re.IGNORECASE)
# A request in parentheses beside its fact: "btw (remember this one) I never want `any`".
PAREN_KEEP = LazyPattern(
    r"\s*\((?:(?:(?:and|also|oh|btw),?\s+)?(?:please\s+)?(?:remember|save|store|keep|note|pin)\s+"
    r"(?:this|that|it)(?:\s+one)?"
    r"(?:\s+for\s+(?:later|(?:all\s+)?(?:future|next|later)\s+(?:sessions?|chats?)|next\s+time)"
    r"|\s+(?:long[-\s]term|permanently|for\s+good"
    r"|forever))?(?:,?\s+please)?"
    r"|for\s+(?:future|later)\s+ref(?:erence)?)\)\s*",
    re.IGNORECASE,
)
# A short sentence that says how far the rule before it goes: "Blameless, systems only.",
# "Mock external APIs, always.", "Ever."
SCOPE_END = LazyPattern(
    r"\b(?:only|always|ever|never|at\s+all|no\s+exceptions?|period)\W*$", re.IGNORECASE
)
# "Permanently delete the branch": a manner, not how long to keep something.
MANNER = LazyPattern(
    r"^(?:please\s+)?(?:permanently|forever)\s+(?!(?:remember|keep|note|store|save|memori[sz]e"
    r"|retain|never|always|don'?t)\b)\w",
    re.IGNORECASE,
)
# Words that make an instruction general: "ask before deleting any file".
EVERY_WORD = LazyPattern(r"\b(?:any|every|all|always|never|no|anywhere|each)\b", re.IGNORECASE)
# The same in a step that goes on with a rule ("Name every constant.", "Run only the fast ones").
EVERY_ONLY = LazyPattern(r"\b(?:any|every|all|each|only)\b", re.IGNORECASE)
# A question mark that ends a question, not one inside a URL or a pattern ("?ref=v1.2").
ASKED_MARK = LazyPattern(r"\?(?=\s|$|[)\"'])")
# What a lasting opening may call what follows: "lasting context:", "a permanent one:".
SOFT_NOUN = LazyPattern(
    rf"\b(?:context|thing|one|info|pref|bit|note|rule|reminder|preference|{other.NOUNS}"
    r"|rappel|importante?|wichtig|notiz|nota|hinweis|aviso|avviso|uwaga)s?\b",
    re.IGNORECASE,
)
# Words that say on their own that something is for good ("this is a permanent one -",
# "lasting pref:"), unlike "later" or "again".
HOW_LONG_STRONG = LazyPattern(
    r"\b(?:long[-\s]term|long[-\s]standing|permanent(?:ly)?(?!-)|lasting|forever|for\s+ever"
    r"|for\s+good|persistent|ongoing|outlives?|4ever|for\s+the\s+long\s+(?:haul|run)"
    rf"|{other.FOREVER})\b",
    re.IGNORECASE,
)
# "note to the team: …": a message for others, to be written, not a fact to keep.
NOTE_TO_OTHERS = LazyPattern(
    r"^(?:(?:a|the)\s+)?(?:notes?|memo|message)\s+(?:to|for)\s+(?:the\s+)?(?:team|everyone|all"
    r"|customers|users|clients|devs|engineers|channel|stakeholders|reviewers)\b",
    re.IGNORECASE,
)
# "Remember to close the file —", "keep in mind to …": an opening that is a step of this task.
STEP_OPENING = LazyPattern(r"\b(?:remember|forget|keep\s+in\s+mind)\s+to\b", re.IGNORECASE)
# A note to oneself that is a to-do: "note to self: ask Dana about the staging creds".
SELF_TODO = LazyPattern(
    r"^(?:(?:a\s+)?notes?|memo|reminder)\s+(?:to|2)\s+(?:self|me|myself)\s*[:,\-\u2013\u2014]\s*"
    r"(?:(?:ask|check|email|call|ping|buy|book|look\s+up|find\s+out|follow\s+up|reply|send|pick\s+up"
    r"|renew|cancel|schedule|read|review|update|fix|finish|submit|tell|learn|try|investigate"
    r"|research|remember\s+to|i\s+(?:should|need\s+to|must|have\s+to|want\s+to|gotta))\b"
    r"|(?:this|it|that)\s+is\s+getting\b)",
    re.IGNORECASE,
)
# Words that say a text is someone else's or only considered: "our doc says:", "she wrote:",
# "I was going to tell you to".
SAID_BY = LazyPattern(
    r"\b(?:says?|said|wrote|writes|reads|replied|posted|quoted?|quotes|going\s+to|never\s*mind)\b",
    re.IGNORECASE,
)
# Where "remember that" starts a request inside a sentence with no stop before it: after a
# colon or a space (see capture._spoken_starts for the words that may not come before).
SPOKEN_START = LazyPattern(
    r"(?::\s+|\s)(?=(?:please\s+|pls\s+|kindly\s+)?remember\s+(?:that|this)\b)", re.IGNORECASE
)
# Openings that ask for writing, whose content is not a request: "Write a Slack announcement:
# from now on, …", "Format this as a quote: remember, remember …".
WRITING_TASK = LazyPattern(
    r"^(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:help\s+me\s+)?(?:write|draft|compose|format|translate"
    r"|summari[sz]e|rewrite|reword|tweet|post|announce|proofread|edit|turn)\b"
    r"|^(?:please\s+)?(?:add|insert|include|put)\s+(?:a|an|the|this|one)\s+(?:[\w-]+\s+){0,2}?"
    r"(?:note|comment|section|paragraph|entry|line|docstring|warning|callout|banner|bullet)\b",
    re.IGNORECASE,
)
# Markdown around a request: a heading's hashes, bold markers.
HEADING = LazyPattern(r"^#{1,6}\s+")
BOLD = LazyPattern(r"\*\*|(?<![\w`])__(?=\s)|(?<=\s)__(?![\w`])")
# "_Memory:_ X": underscores around a word or two, as Markdown italics.
ITALIC = LazyPattern(r"^_([^_\s][^_]{0,40}?)_(?![\w_])")
# Something to find out, not something known: "check whether this breaks the tests".
TO_FIND_OUT = LazyPattern(
    r"^not\s+(?:to|for)\s+(?:you|u|the\s+agent|claude|codex)\b"
    r"|^(?:check|see|find\s+out|figure\s+out|verify|test|ask|look\s+into|investigate|confirm)"
    r"\s+(?:whether|if|why|how|what|where|when|which)\b"
    # a to-do of one's own: "I should ask Ravi about the quota"
    r"|^i\s+(?:should|need\s+to|must|have\s+to|gotta)\s+(?:ask|check|look|find|see|talk|ping"
    r"|email|call|follow\s+up)\b"
    r"|^(?:check|look\s+at|call|email|ping|ask|fix|review|finish|follow\s+up|buy)\b.*"
    r"\b(?:after\s+lunch|later\s+today|tomorrow|tonight|this\s+afternoon|before\s+\w+day)\b",
    re.IGNORECASE,
)
# A short opening clause before the request: "Before you start, remember that …",
# "Important - don't forget: …". At most ten words, ending in a comma, colon or dash.
OPENING = LazyPattern(r"^(?:[^\s,:;]+\s+){0,9}[^\s,:;]+\s*(?:[,:;]|\s[-\u2013\u2014])\s+")
# The time words that may open the kept wording: "remember this going forward: X".
LATER_OPENING = LazyPattern(rf"^(?!whenever\b){FOR_LATER}\s*[:,]?\s*", re.IGNORECASE)
# After "remember" or "don't forget": openings that make a question or a present-task
# instruction rather than something to keep.
NOT_A_FACT = LazyPattern(
    r"^(?:how|why|what|where|when|which|who|whom|whose|if|whether|me|us|him|her|them|"
    r"of|it\b(?!\s+is\b)|doing|seeing|having|being|the\s+(?:time|day|way)\s+when)\b",
    re.IGNORECASE,
)
# A statement rather than a bare name: a subject pronoun first, or a verb a fact would use.
CLAUSE = LazyPattern(
    r"^(?:we|i|im|ive|you|u|they|he|she|our|my|your|their|everyone|nobody|no\s+one)\b"
    r"|\b(?:it|that|there|here|what|who|he|she)'s\b"
    r"|\b(?:is|are|was|were|be|been|has|have|had|must|should|shall|will|would|can|cannot|"
    r"can't|won't|doesn't|don't|isn't|aren't|wasn't|dont|doesnt|isnt|arent|cant|wont|needs?|uses?"
    r"|runs?|lives?|goes|takes|means?|"
    r"means|expects|requires|prefers|wants|belongs|breaks|only)\b",
    re.IGNORECASE,
)
RELATIVE = LazyPattern(
    r"\b(?:where|when|which|who|whose|that|if|because|while|whenever|unless|so)\b", re.IGNORECASE
)
# Present-tense verbs a fact states with ("Dana owns billing"), rarely nouns in a prompt;
# counted only after a word that is not a determiner ("the holds" is a noun).
FACT_VERB = LazyPattern(
    r"(?<!\bthe )(?<!\ba )(?<!\ban )(?<!\bour )(?<!\bmy )(?<!\byour )(?<!\bthis )(?<!\bthose )"
    r"(?<![./\\-])"  # "main.go", "src/live" are names, not verbs
    r"\b(?:owns|handles|holds|manages|hosts|contains|sends|pays|approves|deploys|rotates|"
    r"expires|depends|stays|follows|supports|likes|hates|knows|says|maintains|sits|restarts|"
    r"resets|syncs|crashes|belongs|lacks|ignores|rejects|accepts|allows|forbids|blocks|"
    r"replaces|wraps|calls\s+\w+|reads\s+from|writes\s+to|points\s+to|times\s+out|"
    r"gets|got|does|makes|works|fails|returns|starts|stops|ends|leaves|happens|comes|lands|"
    r"ships|triggers|produces|generates|creates|lasts|costs|refers|applies|counts|get|"
    r"flips|changes|moves|turns|shows|prints|opens|closes|loads|saves|waits|drops|skips|"
    r"retries|falls|switches|rolls|fires|kicks|boots|reboots|rebuilds|refreshes|updates|renews|"
    r"lives|listens|serves|talks|speaks|prefers|reviews|signs|merges|builds|go|live|stay|"
    r"belong|sit|come|moved|switched|migrated|changed|left|joined|renamed|retired|replaced|upgraded|"
    r"decided|agreed|landed|dropped|expire|rotate|require|break|fail)\b",
    re.IGNORECASE,
)
TO = LazyPattern(r"^to\s+", re.IGNORECASE)
DEFINITION = LazyPattern(r"^[^:]{3,80}:\s+\S")
PLEASE = LazyPattern(r"^(?:please|pls|kindly)\b[,\s]*", re.IGNORECASE)
# Words that make "remember to …" a standing instruction rather than a step of this task.
LASTING = LazyPattern(
    r"\b(?:always|never|every\s+time|each\s+time|whenever|from\s+now\s+on|going\s+forward|"
    r"in\s+(?:the\s+)?future|next\s+time|from\s+here\s+on|any\s+time|anytime|in\s+every|"
    r"forever|permanently|for\s+good|future\s+reference|long[-\s]term)\b",
    re.IGNORECASE,
)
# A sentence ends at . ! ? followed by space and a capital, or at a line's end; dots inside
# names (config.py, e.g.) do not end one.
SENTENCE_END = LazyPattern(
    r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)(?<!\bcf\.)(?<!\bMr\.)(?<!\bMs\.)"
    r"(?<!\bMrs\.)(?<!\bDr\.)(?<!\bSt\.)\s+(?=[A-Z\"'(#])"
)
# A full stop before a sentence typed in lower case (see capture._lower_sentences).
LOWER_END = LazyPattern(
    r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\betc\.)(?<!\bvs\.)(?<!\bcf\.)\s+(?=[a-z])"
)
FENCE = LazyPattern(r"^\s*(?:```|~~~)")
BULLET = LazyPattern(r"^(?:[-*\u2022]|\d{1,2}[.)])\s+")
MARKER = LazyPattern(rf"^(?:#remember\b|{REMEMBER}\s*:)\s*:?\s*(?P<rest>.*)$", re.IGNORECASE)
# A line that is only a label ("## Note for future sessions", "Remember this:"): the next
# line is what it labels.
LABEL_ONLY = LazyPattern(
    rf"^{LEAD}(?:{LABEL}|{REMEMBER}(?:\s+{KEPT_WORDS}){{0,4}}(?:\s+{FOR_LATER})?"
    r"|memory|notes?\s+for\s+(?:you|the\s+agent|claude|codex|later|future\s+\w+)"
    r"(?:\s*\([^()\n]{1,30}\))?"
    # "# Preferences (please remember)", "# Notes for you (permanent)"
    r"|[^()\n]{1,60}\((?:please\s+)?(?:remember(?:\s+(?:this|it|these|them|that))?|permanent"
    r"|long[-\s]term"
    r"|for\s+(?:later|future\s+\w+)"
    r"|keep\s+(?:this|in\s+mind))\))\s*:?\s*$",
    re.IGNORECASE,
)
# A line that introduces pasted text ("the changelog draft says:", "here is the output:"):
# its next paragraph is someone else's words.
PASTE_INTRO = LazyPattern(
    r"\b(?:says|said|reads|wrote|writes|draft|message|output|log|logs|below|following"
    r"|looks\s+like|is\s+this)\s*:\s*$"
    r"|\b(?:output|log|logs|error|trace|traceback)\s+(?:i\s+(?:get|got|see|saw)|is|was|below"
    r"|here)\b[^.!?]*$"
    r"|\b(?:this|the|these|following|below|my|our)\s+(?:[\w.-]+\s+){0,3}?(?:changelog|release"
    r"\s+notes|notes|draft|readme|docs?|text|snippet|output|logs?|message|description|spec"
    r"|email|ticket|issue|comment|diff|config|yaml|json|paragraph|section|function|class"
    r"|method|code|script|snippet|query|component|module|thread|conversation)\b[^:]*:\s*$"
    # a question about a text ("Is this paragraph clear?", "This is the CLAUDE.md section
    # someone wrote — is it still accurate?")
    r"|^(?=.*\b(?:this|the|these|our|my)\s+(?:[\w.-]+\s+){0,3}?(?:paragraph|section|prompt|text"
    r"|docs?|guide|snippet|instructions|rules|policy|page|post|memo|readme|email|message"
    r"|[\w-]+\.md)\b)"
    r".*\b(?:(?:is|are|does|do)\s+(?:this|it|these|they)|if\s+it'?s|whether)\b[^?]*\?\s*$"
    r"|^(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:summari[sz]e|explain|analy[sz]e|critique"
    r"|simplify|improve|turn)\b[^:]*:\s*$"
    r"|\b(?:with|containing)\s+(?:these|the\s+following)(?:\s+\w+)?\s*:\s*$"
    r"|^(?:the\s+)?(?:spec|specification|requirements?|acceptance\s+criteria|steps|plan|todo"
    r"|checklist)\b[^:]*:\s*$"
    r"|\b(?:has|have|contains|says|reads|looks\s+like)\s+(?:this|these\s+\w+|the\s+following"
    r"(?:\s+\w+)?)\b[^:]*[:?]\s*$"
    r"|^(?:please\s+)?(?:edit|update|fix|change|rewrite|review|proofread|reword|shorten|tidy"
    r"|translate|locali[sz]e|convert"
    r"|clean\s+up)\b[^:]*:\s*$"
    r"|^(?:here'?s|here\s+is|below\s+is)\s+(?:the|a|an|my|our|some|their)\b[^.]*?"
    r"\b(?:wrote|written|says|description|draft|text|message|email|doc|notes|copy|thread"
    r"|conversation|chat|transcript|excerpt|quote|reply|comment|review|feedback)\b[^:]*[:?]\s*$"
    r"|\S\.(?:toml|ya?ml|json|ini|cfg|conf|py|js|ts|tsx|go|rs|java|kt|rb|sh|env|xml|properties"
    r"|gradle|tf|sql|diff|patch|log)\s*:\s*$"
    r"|\b(?:proofread|review|check|summari[sz]e|translate|rewrite|fix|explain|improve|tighten"
    r"|edit)\s*:\s*$",
    re.IGNORECASE,
)
# Indented lines are pasted code (a Markdown code block, a docstring), not speech.
INDENTED = LazyPattern(r"^(?: {4}|\t)")
# A request whose fact comes next: "Can you remember something for me? The VPN config is…",
# "New thing to remember.", "remember this!!!".
POINTS_FORWARD = LazyPattern(
    rf"^{LEAD}(?:{REMEMBER}\s*!+\s*$"  # "Remember! The legacy_ tables are read-only."
    rf"|(?:(?:can|could|will|would)\s+you\s+(?:please\s+)?)?{REMEMBER}\s+"
    r"(?:this|something|a\s+thing|one\s+thing)(?:\s+for\s+(?:me|us|later))?"
    r"(?:\s+(?:going\s+forward|from\s+now\s+on|for\s+good|for\s+next\s+time|for\s+the\s+future))?"
    r"(?:\s+about\s+[^?.:]{1,60})?"
    r"|(?:can|could|may)\s+i\s+ask\s+you\s+to\s+remember\s+(?:a|an|one|something)(?:\s+[\w-]+){0,3}"
    r"|(?:can|could)\s+(?:this|that|it)\s+be\s+(?:saved|stored|remembered|kept)"
    r"(?:\s+for\s+(?:next\s+time|later|the\s+future|future\s+sessions))?"
    r"|(?:(?:can|could|will|would)\s+you\s+)?(?:please\s+)?(?:save|store)\s+(?:this|a)\s+preference"
    r"(?:\s+for\s+me)?"
    r"|i'?d\s+like\s+to\s+(?:set|add|save)\s+(?:a|one)\s+(?:lasting\s+|permanent\s+|standing\s+)?"
    r"(?:preference|rule|fact)"
    r"|(?:(?:a|one|another|new)\s+)*(?:new\s+)?(?:thing|fact|rule)\s+to\s+remember"
    rf"(?:\s+{FOR_LATER})?"
    r"|(?:(?:can|could|will|would)\s+you\s+(?:please\s+)?)?(?:save|store|note|keep|remember)\s+"
    r"(?:a|one|another)\s+(?:new\s+)?(?:preference|fact|rule|thing|note)(?:\s+for\s+(?:me|us|later))?"
    r"|(?:(?:can|could|will|would)\s+you\s+(?:please\s+)?)?(?:never\s+forget|retain|keep|save"
    r"|store|hang\s+on\s+to|hold\s+on(?:\s+to|to))\s+this(?:\s+one)?"
    rf"(?:\s+{FOR_LATER})?)(?:,?\s+ok(?:ay)?)?\s*[.!?:]*[\s{SYMBOLS}]*$",
    re.IGNORECASE,
)
# What asks for something to be done now, right after what looked like a rule: "Going forward,
# the scheduler should skip weekends. Implement that in next_run()."
DO_THAT_NOW = LazyPattern(
    r"^(?:please\s+)?(?:implement|apply|do|make|add|code|write|build|handle|deal\s+with"
    r"|account\s+for)\s+(?:that|this|it)\b",
    re.IGNORECASE,
)
# A trailing remark that the words before are a rule: "… -- that's a standing rule.", or the
# request itself after its fact: "…, remember that".
RULE_REMARK = LazyPattern(
    rf"\s*{THATS_A_RULE}\.?$"
    r"|\s*[,;]\s*(?:please\s+|pls\s+)?remember\s+(?:that|this|it)\s*[.!]*$",
    re.IGNORECASE,
)
# Added or removed lines of pasted code outside a diff's hunk (which DIFF_START skips whole):
# "+        # Keep in mind: …".
DIFF_LINE = LazyPattern(r"^(?:[+-](?:\s{2,}|\t)|---\s)")
# A question or an ask about material pasted after it, in any of the languages the rules
# read: "Can you explain this PowerShell?", "I copied them. Can you turn them into CSS?",
# "Here are Expo's release notes, what affects us?", "Lee estas notas y dime …:" (unlike
# PASTE_INTRO, the paragraph after it is the person's when it opens with a request).
PASTE_ASK = LazyPattern(
    r"^(?!.*\b(?:remember|keep|memori[sz]e|save|store|note\s+for)\b)(?:"
    r".*\b(?:explain|translate|turn|convert|extract|summari[sz]e|read|review|rewrite|format"
    r"|understand|lee|explica|traduce|traduz|resume|l[eê]|erkl[äa]r\w*|[üu]bersetz\w*|fasse"
    r"|explique|traduis|r[ée]sume|spiega|traduci|riassumi|leggi|vertaal|lees)\s+(?:(?:the|all|of)\s+)?"
    r"(?:this|these|those|them|the\s+following|estas?|estos?|estes|essas?|esses|diese[nrs]?"
    r"|ces|cette|questi|queste|questo|deze|dit)\b"
    r"|(?:here\s+(?:is|are)|.*\b(?:pasted|copied)\b.*\b(?:below|them|it)\b)"
    r").*[?:]\s*$",
    re.IGNORECASE,
)
# How a person turns from pasted material back to their own words: "FYI …", "Also, …", "PS …".
TURNS_AWAY = LazyPattern(
    r"^(?:fyi|also|and|btw|by\s+the\s+way|p\.?s\.?|oh\s+and|one\s+more\s+thing|separately"
    r"|unrelated(?:ly)?|side\s+note|another\s+thing|plus)\b",
    re.IGNORECASE,
)
# Where a pasted diff starts: its following "+", "-" and " " lines are not the person's.
DIFF_START = LazyPattern(r"^(?:@@\s|\+\+\+\s|---\s+a/|diff\s+--git\s)")
# Comment lines of pasted code: "// Remember: …", "/* … */", "-- note: …".
CODE_COMMENT = LazyPattern(r"^\s*(?://|/\*|\*/|--\s|;;)")
# Where a quotation opens: "a banner saying 'Remember: …'" (not the apostrophe of "don't").
QUOTE_OPENS = LazyPattern(r"(?:^|[\s(\[])['\u2018]|[\"\u201c]")
QUOTE_CLOSES = LazyPattern(r"['\u2019](?=[\s.,;:!?)\]]|$)|[\"\u201d]")
# What follows "remember that" when "that" points back, not ahead: "… — remember that for
# when things break", "… make sure you remember that next time you suggest …".
BACK_TAIL = LazyPattern(
    r"^(?:for\s+when|next\s+time\b|when\s+you\b|so\s+(?:that\s+)?you\b|because\b|since\b"
    r"|about\b(?![^:]*:)"
    r"|too\b|for\s+(?:me|us|later)\b(?!,\s*\S)|in\s+the\s+coming\b|this\s+time\b"
    rf"|{FOR_LATER}\s*(?:this\s+time|too|as\s+well)?\s*[.!]*$)",
    re.IGNORECASE,
)
# What names the work in hand, not something lasting: "the second one uses tabs", "the file
# you're editing is imported by the worker" (unless told to last: "whenever you're editing…").
THIS_WORK = LazyPattern(
    r"\bthe\s+(?:first|second|third|last|other)\s+(?:one|file|test|function|place|case|step)s?\b"
    r"(?!\s+to\s+(?:look|check|start|go))|\bboth\s+(?:files|functions|places)\b"
    r"|\b(?:you(?:'re|\s+are)|you'?ve\s+been)\s+(?:editing|changing|touching|fixing|writing|adding"
    r"|refactoring|reviewing|looking\s+at)\b|\byou\s+just\s+(?:wrote|added|changed|edited|made)\b"
    r"|\b(?:i|you)\s+(?:just\s+)?(?:pasted|attached|shared|uploaded|sent)\b"
    r"|\bthe\s+(?:attached|pasted|uploaded|enclosed)\b",
    re.IGNORECASE,
)
# "Save this: the deep link scheme is acme://" keeps a statement; "Save this: {json}" is a
# file to write, so the wording after it must read as a statement.
BARE_KEEP = LazyPattern(
    r"^(?:(?:ok(?:ay)?|so|and|also|btw|please|pls|hey|oh|right|you\s+can|feel\s+free\s+to"
    r"|go\s+ahead\s+and)[,\s]+)*(?:(?:save|store|keep|note|log|record"
    r"|stash|persist)\s+(?:this|that|it)"
    r"(?:\s+one)?(?:\s+for\s+(?:me|us|later))?|(?:save|store|stash|record|persist|keep)"
    # "bake this in:", "lock that in:"
    r"|(?:bake|burn|lock|etch|hammer|drill)\s+(?:this|that|it)(?:\s+one)?\s+in)"
    r"(?:,?\s+(?:please|pls))?$",
    re.IGNORECASE,
)
# Writing of prose for others: the sentences after "Draft the release notes." are its content.
PROSE_TASK = LazyPattern(
    r"^(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:write|draft|compose|prepare|update|edit)\s+"
    r"(?:(?:a|an|the|our|my|this|some)\s+)?(?:[\w-]+\s+){0,2}?(?:release\s+notes|notes|changelog"
    r"|announcement|email|message|post|memo|summary|docs?|documentation|readme|newsletter"
    r"|description|blurb|faq|guide|update)\b",
    re.IGNORECASE,
)
# Words that ask to keep something outright, whatever text is being written around them.
EXPLICIT_KEEP = LazyPattern(
    rf"\b(?:{REMEMBER}|memori[sz]e|forget|memory|keep\s+in\s+mind\s+that|for\s+future\s+reference"
    r"|(?:future|next|later|upcoming|all)\s+(?:sessions?|runs?|chats?|conversations?|tasks?)"
    r"|notes?\s+(?:for|to)\s+(?:future|later|next|self|you|yourself))\b",
    re.IGNORECASE,
)
# An instruction to the agent that opens with its verb (or "never", "no", "always"): with time
# words anywhere ("stop using moment.js, use date-fns going forward") or "never … again" it
# is a standing rule.
IMPERATIVE = LazyPattern(
    rf"^(?:(?:please|pls|plz|kindly)\s+)?{YOU_TO}?(?:always|never|only|no|don'?t|do\s+not|dont|avoid"
    r"|prefer"
    r"|use|write|put|run|keep|make|add|call|name|reply|respond|answer|ask|check|target|follow"
    r"|stick|treat|default|format|document|log|include|commit|open|send|pin|deploy|test|wrap"
    r"|return|start|sign|tag|squash|rebase|merge|push|review|mention|refer|label|prefix|stop"
    r"|quit|skip|leave|assume|expect|require|ping|notify|tell|show|give|explain|suggest|create"
    r"|generate|set|bump|remove|delete|drop|split|group|sort|cite|link|verify|confirm|pick"
    r"|choose|favou?r|stay|limit|cap|pass|route|store|save|move|place|mark|flag|print|emit"
    # (not one-off edits such as "update", "rename", "refactor": "Update the price — going
    # forward, Pro costs $24" specifies a change)
    r"|raise|handle|retry|wait|lint|annotate|comment|describe|batch|prompt|double-check|import"
    r"|reuse|regenerate|rebuild|rerun|re-run|refresh|restart|reload|also\s+\w+)\b",
    re.IGNORECASE,
)
# The time words that make such an instruction last, standing at a clause's start or end
# ("…, use date-fns going forward", "default to 3.11 from here on, …"), not inside a clause
# that describes behaviour ("make it so that from now on new users get …").
LATER_ANYWHERE = LazyPattern(
    r"(?:^|[,;]\s*|\s)(?:going\s+forward|moving\s+forward|from\s+(?:now|here|today)\s+on(?:\s+out)?"
    r"|from\s+here\s+out|henceforth|in\s+(?:the\s+)?future|for\s+(?:the\s+)?future|for\s+good"
    r"|from\s+this\s+point\s+(?:on|forward))(?:\s*(?:[,.;!]|$))",
    re.IGNORECASE,
)
NEVER_AGAIN = LazyPattern(
    r"^(?:(?:please|pls)\s+)?never\s+(?:ever\s+)?"
    r"(?!(?:ever|do|did|does|will|would|have|had|has|want|wanted|is|was|am|are|can|could|i|we)\b)"
    r"\w+\b.*\bagain\b",
    re.IGNORECASE,
)
# What follows "remember that" when "that" pointed back at a statement before it: "i'm on
# WSL2, remember that for paths and stuff", "…, remember that, some compose flags don't work".
OPENING_BACK_TAIL = LazyPattern(
    r"^(?:$|[,;]|(?:for|if|in\s+case|whenever|when|because|since|so|as|too|instead)\b)",
    re.IGNORECASE,
)
# Emoji between words ("pls remember 🙏 our designers want …") are not part of the wording.
INNER_SYMBOLS = LazyPattern(rf"(?<=\s)[{SYMBOLS}]+\s+")
# Where a request to keep something names the mind it is kept in: "write this on your brain:"
# asks to keep even though it opens like a writing task.
YOUR_MIND = LazyPattern(rf"\b{IN_YOUR_MIND}\b", re.IGNORECASE)
# Quoted text inside a line: "captured_facts("Remember that …") returns []" quotes a request.
CODE_SPAN_SOURCE = r"`[^`\n]*`"
QUOTED = LazyPattern(
    rf"\"[^\"\n]*\"|\u201c[^\u201d\n]*\u201d|{CODE_SPAN_SOURCE}"
    r"|(?<!\w)['\u2018][^'\u2019\n]*['\u2019](?!\w)"
)
# What keeps "keep in mind that X" to the work in hand: "… when you change the signature",
# "while you test this", "for now", "the demo is in an hour", "this is a prototype".
TASK_HINT = LazyPattern(
    r"\b(?:while|when)\s+(?:you|you're|doing|writing|fixing|refactoring|parsing|testing|working)\b"
    r"|\bfor\s+now\b|\bprototype\b|\bdemo\b|\bhot\s+(?:path|loop)\b|\bpresenting\b"
    r"|\bthe\s+(?:file|csv|input|function|fixture|script|signature|parser|output)\b"
    r"|\bthis\s+(?:file|csv|function|script|refactor|one|particular|migration|test|code|change"
    r"|sample|dataset|query|data|example|spreadsheet|export|dump)\b"
    r"|\bin\s+(?:an?|\d+)\s+(?:minutes?|hours?)\b|\bnext\s+hour\b|\btomorrow\b|\btonight\b"
    # "… when this runs", "I have only 20 minutes before the meeting"
    r"|\bwhen\s+this\s+\w+|\b\d+\s*(?:minutes?|mins?|hours?|hrs?)\s+(?:before|until|left)\b"
    r"|\bbefore\s+(?:the|my|our)\s+(?:meeting|call|demo|standup|review|release)\b"
    r"|\bshort\s+on\s+time\b|\bquick\s+fix\b|\balready\b|\b(?:rough\s+)?draft\b"
    r"|\b(?:i|we)(?:'ve|\s+have)\s+(?:just\s+)?(?:run|ran|done|made|changed|pushed|merged|fixed"
    r"|deleted|added|updated|started|tried)\b"
    r"|\bthe\s+(?:fix|patch|bug|ticket|pr)\b|;\s*(?:please\s+)?\w+\s+(?:it|this|that)\b",
    re.IGNORECASE,
)
# "Whenever you touch the schema, regenerate the types": a standing instruction.
WHENEVER = LazyPattern(
    r"^(?:(?:please|pls|also|and)\s+)?(?:whenever|every\s+time|each\s+time|any\s*time)\s+"
    r"(?:you|we|i)\s+(?!(?:are|'re|get\s+a\s+chance|have\s+a\s+(?:moment|minute|sec)|can|want"
    r"|like|feel\s+like)\b)(?P<when>[^,;:]{1,80}?)(?:,\s*|\s+(?=make\s+sure\b))(?P<rest>\S.*)$",
    re.IGNORECASE,
)
# The opening of a sentence that describes behaviour: "… so that, going forward, objects …".
SO_THAT = LazyPattern(
    r"\b(?:so\s+that|such\s+that|so|(?:saying|telling\s+\w+|stating|announcing|explaining|means?)"
    r"\s+that)\s*[,:]?\s*$",
    re.IGNORECASE,
)
# What makes an instruction opening with "always" or "never" last without time words: the
# place it holds for ("Always use Decimal for money in this project"), or a remark that it is
# a rule ("… — that's a permanent rule").
STANDING_PLACE = LazyPattern(
    r"\bin\s+(?:this|our|the)\s+(?:repo|repository|project|codebase|solution|org|team|monorepo"
    rf"|workspace)\b|{THATS_A_RULE}\b",
    re.IGNORECASE,
)
ALWAYS_NEVER = LazyPattern(
    rf"(?:please\s+)?{YOU_TO}?(?:always|never|(?:don'?t|do\s+not)\s+ever)\b(?!\s+mind\b)",
    re.IGNORECASE,
)
# An opening that asks to build something, not to keep it: "Add a long-term memory table for
# the assistant feature: user_id, key, value".
BUILD_TASK = LazyPattern(
    r"^(?:please\s+)?(?:add|create|implement|build|design|make|set\s+up|define|introduce|scaffold)"
    r"\s+(?:a|an|the|new|some)\s+(?!(?:(?:new|permanent|standing|mental|quick)\s+)?(?:note|rule"
    r"|preference|fact|reminder|memory\b(?!\s+\w)))",
    re.IGNORECASE,
)
# An opening before a colon or a dash that says the text is for later sessions: "To be clear
# for future sessions:", "So we're clear for the future:", "Just so you have it for future
# sessions -".
FOR_SESSIONS = LazyPattern(
    r"(?:\b(?:future|next|later|coming|upcoming)\s+(?:\w+\s+)?"
    r"|\b(?:all|every|across|between)\s+(?:(?:all|your|our|my|the|future|of\s+(?:your|our|my))\s+){0,2})"
    r"(?:sessions?|chats?|conversations?|answers|replies|responses|prs|reviews|projects|work"
    r"|interactions?)\b"
    r"|\bfor\s+the\s+future\b"
    r"|\blong[-\s]term\b",
    re.IGNORECASE,
)
ANY_DASH = LazyPattern(
    rf"^(?P<open>[^:\n\u2013\u2014]{{3,100}}?)\s(?:[-\u2013\u2014]|{ARROW})\s+(?P<rest>\S.*)$",
    re.DOTALL,
)
# A sentence that goes on from the one before it: "It has to stay runtime-agnostic."
GOES_ON = LazyPattern(r"^(?:it|this|that|they|so|because|otherwise|the\s+reason)\b", re.IGNORECASE)
# A sentence that says more about the rule just asked to be kept (capture._continues): why it
# holds ("It is a contract requirement."), what it rules out ("No exceptions.", "Only document
# public APIs.", "There is no staging."), or what it requires ("PCI scope must stay minimal").
GOES_ON_RULE = LazyPattern(
    r"^(?!that'?s\s+(?:it|all)\b)(?:it|this|that|they|these|those)(?:'s|'re|'ll|\s+(?:is|are|was|has|have"
    r"|must|should|can'?t|cannot"
    r"|won'?t|will|needs?|applies|means|comes|keeps|breaks))\b",
    re.IGNORECASE,
)
RULE_ADDS = LazyPattern(
    r"^(?:always|never|only|no|not|don'?t|do\s+not|avoid|nothing|anything|everything|every|all"
    r"|each|any|even|there\s+(?:is|are)\s+no|no\s+exceptions?)\b",
    re.IGNORECASE,
)
# A short step of the rule just kept ("Mask them.", "Split it.", "Even generated ones."), its
# exception ("If you really need it, use `unknown` and narrow.") or what it rules out
# ("Bullet points, no essays."): the rule goes on (capture._continues).
RULE_STEP = LazyPattern(
    r"^(?:just\s+)?(?!(?:run|rerun|commit|push|merge|deploy|try|check|test|do|send|show|tell|revert"
    r"|delete|remove|ship|open|close|review|read|finish|start|stop|undo|redo|fix|see|ask|ping|switch"
    r"|change|move|rename|put|set|wire|hook|flip|rewrite|replace|bump|drop|clean|format|lint|build"
    r"|install|upgrade|downgrade|keep|leave|get|do|pull|rebase|squash|tag|release|publish|approve"
    r"|land|kill|restart|reboot|rollback|roll|apply|message|email|call|text|post|clear|flush|reset"
    r"|refresh|retry|rename|regenerate|rebuild|redeploy|reinstall|delete|copy|paste|send)\b)"
    r"[a-z]+\s+(?:it|them|those|these)\s*[.!]*$"
    r"|^if\s+[^,]{3,60},\s*(?:just\s+|then\s+)?[a-z]+\b"
    r"|^[^,]{2,40},\s*(?:no|not|never)\s+[^,]{1,30}$",
    re.IGNORECASE,
)
MUST = LazyPattern(
    r"\b(?:must|mustn'?t|shall|has\s+to|have\s+to|needs?\s+to"
    # "Joins need a cast.", "Paths and commands should work inside WSL" (not "I need the jump
    # to feel snappier" nor "The retry should back off": this task's wishes)
    r"|(?<!\bi\s)(?<!\bwe\s)(?<!\byou\s)(?<!\bu\s)needs?\s+(?:a|an)"
    r"|^(?!(?:the|this|that|it|its|my|i|we|you)\b)[^,]{0,40}\bshould(?:n'?t)?"
    r"|is\s+(?:required|mandatory|forbidden|not\s+allowed|deprecated|being\s+(?:removed|phased\s+out)))\b",
    re.IGNORECASE,
)
# Words about now rather than for good: "the deadline is today", "the CI is slow right now".
NOW_WORDS = LazyPattern(
    r"\b(?:today|tonight|tomorrow|yesterday|right\s+now|now|currently|at\s+the\s+moment"
    r"|in\s+(?:a\s+few|\d+)\s*(?:min|mins|minutes|hours?|hrs?)|until\s+(?:i|we)\s+(?:say|tell)\b"
    r"|yet"
    r"|this\s+(?:morning|afternoon|evening|week|sprint|time))\b",
    re.IGNORECASE,
)
# A verb in the third person, loosely: what a sentence a request points back at says.
LOOSE_VERB = LazyPattern(
    r"\b(?!(?:its|this|is|was|has|as|us|yes|thus|always|perhaps|does|his|hers|ours|yours"
    r"|theirs|less|unless|across|process|access|address|class|status|alias|bus|plus)\b)"
    r"[a-z]{3,}s\b"
)
# Instructions to the agent (not the code's behaviour) that "always" or "never" make standing:
# "Always test on the iPhone SE simulator too", "Never use `any` in our TypeScript".
STANDING_VERB = LazyPattern(
    rf"^(?:please\s+)?{YOU_TO}?(?:always|never)\s+(?:ever\s+)?(?:use|put|test|set|run|write|add|ask"
    r"|commit"
    r"|prefer|follow|check|pin|format|name|document|include|tag|sign|squash|rebase|target|stick"
    r"|treat|default|avoid|import|create|open|reply|respond|answer|explain|mention|push|merge"
    r"|deploy|install|upgrade|bump|call|cite|link|lint|type|keep|leave|give|show\s+me|tell\s+me"
    r"|ping|review|start|structure|organi[sz]e|prefix|suffix|label|respect)\b",
    re.IGNORECASE,
)
# Where the code in hand is named: "in this function", "here", "in handle_webhook()".
CODE_SPOT = LazyPattern(
    r"\b(?:this|that|the)\s+(?:function|method|class|module|file|script|component|endpoint"
    r"|handler|query|loop|test|change|pr|branch|commit|exercise|snippet|block|wrapper|view|page"
    r"|route|one|diff|notebook|cell|readme|makefile|migration|dockerfile)\b|\bhere\b|\b\w+\(\)"
    r"|[\w/-]+\.(?:py|ts|tsx|js|jsx|go|rs|rb|java|kt|swift|md|sh|ya?ml|json|toml|sql|css|html)\b",
    re.IGNORECASE,
)
# A line of pasted code or shell beside a "#" comment line: "RUN pip install", "x = 1",
# "if [[ … ]]; then", "#!/bin/bash".
CODE_LINE = LazyPattern(
    r"^\s*(?:#!|[A-Z]{2,}\s+\S|\w[\w.]*\s*[-+*/]?=\s*\S|(?:if|for|while|def|class|import|from"
    r"|return|fn|let|const|var|func|echo|export|set)\b.*[^.]$|\$\s|[{}\[\]();]|.*[;{}]\s*$"
    r"|\w+\(.*\)\s*;?\s*$)"
)
# A "#" comment in the style of code rather than a Markdown heading: "# NOTE: …", "# TODO".
COMMENT_TAG = LazyPattern(r"^#\s*(?:NOTE|TODO|FIXME|XXX|HACK|WARNING|IMPORTANT)\b")
# How some code is to behave from now on ("From now on, the logger should redact JWTs"): with
# the change asked next ("Update the signup handler."), it specifies this task.
LATER_SHOULD = (
    rf"^{LEAD}(?:from\s+(?:now|here)\s+on|going\s+forward|moving\s+forward|henceforth)\s*[,:]?\s+"
    r"(?!(?:we|i|you|our|my)\b)(?:[\w'/.%`-]+\s+){1,6}?should\b"
)
LATER_SPEC = LazyPattern(LATER_SHOULD, re.IGNORECASE)
# A sentence asking for a change now: "Write the migration.", "Add the check to CI."
TASK_NOW = LazyPattern(
    r"^(?:please\s+|now\s+|then\s+)?(?:update|write|implement|add|use|make|fix|change|create|build"
    r"|wire|handle|refactor|migrate|put|set|apply|adjust|modify)\b",
    re.IGNORECASE,
)
# How some code is to behave at run time from now on, with or without the change asked next:
# "from now on, failed deliveries should be stored in a dead-letter table".
RUNTIME_SPEC = LazyPattern(
    rf"{LATER_SHOULD}\s+(?:also\s+)?(?:not\s+|never\s+|always\s+)?"
    r"(?:be\s+)?(?:treat|ignore|parse|catch|detect|match|flag|skip|default|raise|validate|redact"
    r"|stay|fail|return|respond|retry|reject|accept"
    r"|allow|block|expire|log|send|show|display|render|emit|cache|dedupe|drop|delete|archive"
    r"|notify|sort|paginate|round|trim|truncate|stored|dropped|deleted|numbered|sorted|cached"
    r"|logged|rejected|retried|hidden|shown|displayed|sent|redirect|redirected|get|receive"
    r"|say|read|appear|look|open|link|point|wrap|align|contain)\b",
    re.IGNORECASE,
)
# A prompt of one line that opens with "# " and states a fact: Claude Code's memory shortcut
# ("# our staging API base URL is https://…").
HASH_NOTE = LazyPattern(r"^#\s+(?!#)(?P<note>[^\n]{8,})$")
PRONOUN = LazyPattern(r"\b(?:it|that|them|this|those)\b", re.IGNORECASE)
# A word without which no rule above can find a request: a prompt that has none is answered
# without compiling the rules (most prompts of a session; a hook process saves about 0.1 s).
# Broad on purpose; tests/facts/test_capture_corpora.py checks that the rules with and without
# this gate find the same in every corpus prompt.
HINT = LazyPattern(
    r"r(?=[emnbvwr]*m)(?=[emnbvwr]*[bv])[emnbvwr]{2,9}|\brem\b|memor|forget|mind|mnd"
    r"|\bnot(?:e|ing)|memo|keep|kept|\bsav|\bstor|record"
    r"|persist|retain|rule|always|never|futur|forward|foward|\bnow\b|henceforth|permanent"
    r"|recall|subsequent|ever\b|ongoing|outliv|register|establish|\bnorm\b|guidance"
    r"|запомн|覚え|记住|記住|\bpref\b|\bperm\b|\bref\b|rest\s+of\s+time|all\s+time|m[ée]moire|posterity|gu[aá]rd|zapomi|beyond|\b4\s|\bmem\b|\bhaul\b"
    r"|\b(?:sessions?|chats?|conversations?|interactions?)\b"
    r"|standing|lasting|durable|\bfacts?\b|\bpref|when\s?ever|every|each\s+time|any\s*time|lesson"
    r"|convention|\bknow|learn|stick|told|habit|later|next|long|jot|write|\bfile|stash|bookmark"
    r"|burn|etch|tattoo|lock|carry|hold|hang|commit|psa|fyi|heads|tip|remind|instruct|polic"
    r"|guideline|reference|correct|update|onward|good|repeat|context|background|^\s*#"
    r"|\[memory\]|golden|house|important|ground|worth|again|from\s+(?:here|today)|starting"
    r"|as\s+of|across|between|so\s+you|thing\s+to|add\s+(?:this|to)|clear|have\s+it"
    r"|\bin\s+(?:this|our|the)\s+(?:repo|project|codebase|solution|org|team|monorepo|workspace)"
    r"|internali[sz]|\bdefault\b|\bpoint\s+(?:on|forward)|\bpin\s+(?:this|that|it)\b"
    r"|\b(?:lose|bake)\s+(?:this|that|it)\b"
    rf"|{other.HINT}",
    re.IGNORECASE | re.MULTILINE,
)

# Used by the learned second reading's vetoes (fleetmem.core.capture.learned_veto).
# Courtesy about when to do this task: "Whenever you're ready, …", "when you get a chance".
WHEN_READY = LazyPattern(
    r"\b(?:whenever|when)\s+you(?:'re|\s+are|\s+get)\s+(?:ready|a\s+(?:chance|moment|sec(?:ond)?|minute))"
    r"|\bwhen(?:ever)?\s+you\s+can\b",
    re.IGNORECASE,
)
# An edit to make: "Update the fee in `fees.yaml` …" (a fact opening so is this task's unless
# told to last).
EDIT_NOW = LazyPattern(
    r"(?:please\s+)?(?:update|fix|change|edit|rename|bump|refactor|remove|delete|replace|move"
    r"|migrate|upgrade|revert)\b",
    re.IGNORECASE,
)
# A specified behaviour, beside a task to build it: "Going forward, X should …".
SHOULD = LazyPattern(r"\bshould\b", re.IGNORECASE)
# A program's memory, not the agent's: "store it in memory", "keep the map in-memory".
IN_RAM = LazyPattern(
    r"\b(?:in|into)[-\s](?:process\s+)?(?:memory|ram)\b(?!\s+(?:for|across|between|from))",
    re.IGNORECASE,
)
# RAM kept for a stretch of run time: "Keep it in memory for the day, evict at midnight."
IN_RAM_FOR = LazyPattern(
    r"\b(?:in|into)[-\s](?:process\s+)?(?:memory|ram)\s+for\s+(?:the\s+(?:day|night|hour|request"
    r"|process|lifetime)|an?\s+(?:hour|day|minute)|a\s+(?:few\s+)?(?:minutes|hours|seconds)"
    r"|\d+\s*(?:s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?|days?))\b",
    re.IGNORECASE,
)
# A request to keep what follows, in memory's other sense: "store in memory:", "save this into
# memory —" (not "store it in memory: a dict is enough", which keeps data in RAM).
STORE_IN_MEMORY = LazyPattern(
    r"^(?:please\s+|pls\s+)?(?:store|save|keep|put|add|write|commit|file|log)\s+(?:this\s+|that\s+)?"
    r"(?:in|into|to)\s+memory(?:\s+(?:pls|please|plz))?\s*(?:[:\u2013\u2014-]|$)",
    re.IGNORECASE,
)
# What a program keeps in RAM: "Store in memory: a dict keyed by id is fine here."
RAM_CHOICE = LazyPattern(
    r"^(?:an?|the|one)\s+(?:\w+\s+)?(?:dict(?:ionary)?|map|hash\s*map|list|array|set|cache|lru"
    r"|buffer|queue|struct|object|slice|vector|tree)\b|\b(?:is|are)\s+(?:fine|enough|ok)\s+here\b",
    re.IGNORECASE,
)
# A colon with words after it inside a cue: what follows the colon is what is asked about.
CUE_OPENS_A_FACT = LazyPattern(r":\s+\S+\s+\S+\s+\S+")
# A report on this task's state, not a fact to keep: "… was already broken before my change".
STATE_NOW = LazyPattern(
    r"\balready\b|\bbefore\s+(?:my|your|this|the)\s+(?:change|fix|commit|pr|refactor|edit)\b",
    re.IGNORECASE,
)
# The person's purpose right now: "…, pass -v so I can see the output".
SO_I_CAN = LazyPattern(r"\bso\s+(?:that\s+)?(?:i|we)\s+can\b", re.IGNORECASE)
# "Going forward from the migration, trace …": a direction in the code, not in time.
FORWARD_FROM = LazyPattern(
    r"\b(?:forward|onwards?)\s+from\s+(?:the|a|an|this|that|my|our|where)\b", re.IGNORECASE
)
# A fact that opens with a question word is something to find out: "(Ich hab vergessen,) wie
# man einen Commit rückgängig macht".
FACT_ASKS = LazyPattern(
    r"^(?:how|why|wie|warum|comment|pourquoi|c[oó]mo|por\s*qu[eé]|come|perch[eé]|hoe|waarom"
    r"|jak|dlaczego)\b",
    re.IGNORECASE,
)
# "Can you implement that?": what asks for it, taken off before DO_THAT_NOW is tried.
ASKING = LazyPattern(r"^(?:can|could|will|would)\s+you\s+", re.IGNORECASE)
# "I don't want you to memorize my style, …", "no need to save it": asked not to keep (not
# "not just today", not "don't forget").
NOT_TO_KEEP = LazyPattern(
    r"\b(?:don['\u2019]?t|do\s+not|doesn['\u2019]?t|no\s+need|not)\b(?!\s+(?:just|only)\b)"
    r"[^.;:!?]{0,30}?\b(?:remember|memori[sz]e|keep|save|store|retain|persist|note)\b",
    re.IGNORECASE,
)
# A fact ending at a closing quote is the end of a quotation: "… will use this form.'"
QUOTE_END = LazyPattern(r"[.!?,]['\"\u2019\u201d]\s*$")
# The piece of work in hand, named: "from now on in this class, …", "remember that the mock
# server starts before the tests in this run", "don't forget the null check in the new
# method", "keep in mind for this refactoring: …" (not "beyond this task", not "this repo";
# other languages' in capture_languages.WORK_IN_HAND). A fact tied to it is this task's.
WORK_IN_HAND = LazyPattern(
    r"(?<!\bbeyond\s)(?<!\bjust\s)(?<!\bonly\s)(?<!\boutlive\s)(?<!\bsurvives\s)"
    r"(?<!\bhave\s)(?<!\bhaving\s)(?<!\bhad\s)"  # "so we don't have this conversation again"
    r"\b(?:this|these|the\s+new)\s+(?:class|file|function|method|module|parser|script|notebook"
    r"|query|migration|refactor(?:ing)?|pr|change|fix|run|calculation|cell|loop|snippet|diff"
    r"|patch|commit|ticket|demo|tests?|doc|document|task|session|conversation|chat|answer|reply"
    r"|response|question|exercise|experiment|program|validator|handler|case|incident|alert"
    r"|investigation|hunt|outage|widget|screen|layout|controller|component|view|endpoint|route"
    r"|serializer|column|field|form|button|page|template|job|worker)\b|\bthis\s+feature\b"
    r"|\bin\s+your\s+(?:next\s+)?(?:answer|reply|response)\s*,"  # "In your answer, remember …"
    r"|\bthese\s+(?:numbers|results|figures|timings)\b"  # what was pasted
    rf"|{other.WORK_IN_HAND}",
    re.IGNORECASE,
)
# What says a fact outlives the session even so: "for the long run: this script runs as root".
OUTLIVES = LazyPattern(
    r"\blong\s+run\b|\bbeyond\b|\boutlive|\bsurviv|\bnot\s+(?:just|only)\b", re.IGNORECASE
)
# This conversation or this task's clock, whatever else is said: "I asked you for the
# rollback script too", "I just showed you", "if I told you …", "I need this by 5pm", "we have
# only 2 days for this", "just for the demo", "I want the answer as a diff".
NOW_ONLY = LazyPattern(
    r"\bi\s+asked\s+(?:you\s+)?(?:for|to)\b|\bi\s+(?:just\s+)?showed\s+you\b"
    r"|\bif\s+i\s+(?:just\s+)?(?:said\s+it|told\s+you)\b"
    r"|\bby\s+(?:\d{1,2}(?::\d\d)?\s*(?:am|pm)\b|eod\b|end\s+of\s+(?:the\s+)?day\b|tonight\b"
    r"|tomorrow\b)"
    r"|\bonly\s+\d+\s+(?:days?|hours?|minutes?)\s+for\s+this\b"
    r"|\b(?:just|only)\s+for\s+the\s+(?:demo|test|poc|prototype|presentation)\b"
    r"|\bthe\s+answer\s+as\b|\bthis\s+is\s+(?:only|just)\s+for\b"
    # "for the next few questions", "the file I'm pasting next", "memorize nothing here"
    r"|\bnext\s+(?:few|couple\s+of|\d+|two|three)\s+(?:questions?|answers?|messages?|prompts?"
    r"|minutes?|hours?|days?)\b"
    r"|\bi(?:'?m|\s+am)\s+(?:about\s+to\s+|going\s+to\s+)?(?:pasting|attaching|sharing|sending"
    r"|uploading|paste|attach|share|send|upload)\b"
    r"|\bi(?:'ll|\s+will)\s+be\s+(?:pasting|attaching|sharing|sending|uploading)\b"
    # "I'll paste the second half in the next message", "the JSON you just gave me"
    r"|\bi(?:'ll|\s+will)\s+(?:paste|attach|upload)\s+(?:the|it|them|this|that|an?|some|more|rest)\b"
    r"|\b(?:in|with)\s+(?:the|my)\s+next\s+(?:message|prompt|reply)\b"
    # "I'm asking about staging, not prod", "I mistyped", "lol that's for me", "I'm going to
    # demo this at 3pm", "this is a test. Generate …", "the test below is flaky"
    r"|\bi(?:'m|\s+am)\s+(?:asking|talking)\s+about\b|\bi\s+(?:mistyped|misspelled|made\s+a\s+typo)\b"
    r"|\bthat'?s\s+(?:for\s+me|a\s+note\s+to\s+(?:my)?self|not\s+for\s+you)\b"
    r"|\bdemo(?:ing)?\s+(?:this|it)\b"
    r"|\bthis\s+is\s+(?:only\s+|just\s+)?a\s+test\s*[.!]"
    # "the flags I gave you earlier", "we need this merged before Thursday's CAB"
    r"|\bi\s+(?:gave|sent|showed|pasted)\s+you\s+(?:earlier|just\s+now|above)\b"
    r"|\bbefore\s+(?:(?:this|next)\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day(?:['\u2019]s)?\b"
    r"|\bnot\s+(?:making|setting|creating|adding)\s+(?:a|any|it\s+a)\s+(?:rule|preference|policy)\b"
    # "the thing you remembered wrong earlier", "lower the batch and see if the OOM goes away"
    r"|\byou\s+remembered\s+(?:\w+\s+)?wrong\b|\b(?:and|to)\s+see\s+(?:if|whether)\b"
    r"|\byou\s+just\s+(?:gave|wrote|sent|showed|generated|made|produced|suggested|proposed"
    r"|returned|printed|posted|pasted)\b"
    # "the quiz you're about to give me", "this is a code review, not a rewrite", "this is for
    # the demo on Tuesday"
    r"|\byou(?:'re|\s+are)\s+about\s+to\b"
    r"|\bthis\s+is\s+(?:only\s+|just\s+)?an?\s+(?:code\s+review|review|spike|hotfix|quick\s+fix"
    r"|one-off|poc|draft|dry\s+run|demo)\b"
    r"|\bthis\s+is\s+(?:only\s+|just\s+)?for\s+(?:the|a|my|our)\s+(?:demo|presentation|meeting|call"
    r"|workshop|talk|interview|pitch)\b"
    # "for the next step", "memorize… nah, just write it", "the demo is in 20 minutes", "in
    # the last patch", "you left it out", "let's remember this moment"
    r"|\bfor\s+the\s+next\s+(?:step|question|answer|message|prompt|part)\b"
    r"|\b(?:remember|memori[sz]e|note|save|keep|store)\b[^.?!\n]{0,40}?[.\u2026?!\u2014-]+\s*"
    r"(?:nah|jk|lol\s+no|just\s+kidding|(?:no,?\s+)?i'?m\s+kidding)\b|\bscratch\s+that\b"
    r"|\bis\s+in\s+(?:\d+|a\s+few|an?)\s*(?:min|mins|minutes?|hours?|hrs?)\b"
    r"|\bin\s+(?:the|your)\s+(?:last|previous)\s+(?:patch|change|diff|commit|answer|reply|response"
    r"|command|run|query|step"
    r"|version|attempt|snippet)\b|\byou\s+left\s+(?:it|that|them)\s+out\b"
    r"|\bremember\s+this\s+(?:moment|day)\b"
    # the person keeps it: "I'll keep it in mind for next time, thanks.", "lesson learned, I'll …"
    r"|\bi(?:'ll|\s+will)\s+(?:keep\s+(?:it|that|this)\s+in\s+mind|remember\s+(?:it|that|this))\b"
    r"|\blesson\s+learned,?\s+i(?:'ll|\s+will)\b"
    r"|\b(?:remember|memori[sz]e|keep|save|store|note)\s+nothing\b"
    # "for the next few steps", "for the next hour", "the deadline for this is 16:00 today",
    # "I'm on my phone", "as I mentioned in the previous message", "throwaway code for the demo"
    r"|\bnext\s+(?:few|couple\s+of|\d+|two|three)\s+(?:steps?|tasks?|changes?|commits?)\b"
    r"|\bfor\s+the\s+next\s+(?:hour|few\s+hours|\d+\s+(?:minutes|hours))\b"
    r"|\bdeadline\s+for\s+this\b|\b\d{1,2}:\d{2}\s+today\b"
    r"|\bi'?m\s+(?:on\s+my\s+(?:phone|mobile)|in\s+a\s+(?:meeting|hurry|rush))\b"
    r"|\bin\s+(?:the|my)\s+(?:previous|last)\s+message\b|\bthrowaway\s+code\s+for\s+the\b"
    # "te pasé el log hace un rato", "it's only a prototype", "never mind", "the report is due
    # Friday", "the reviewer is Lukas"
    r"|\bhace\s+(?:un\s+)?rato\b|\bh[áa]\s+pouco\b|\bil\s+y\s+a\s+(?:un\s+instant|peu)\b"
    r"|\bpoco\s+fa\b|\bzojuist\b|\bprzed\s+chwil[ąa]\b|\bvorhin\b|\bgerade\s+eben\b"
    r"|\ba\s+(?:few\s+minutes|while)\s+ago\b"
    r"|\b(?:just|only|tylko|solo|s[óo]lo|nur|seulement|alleen|apenas)\s+(?:a\s+|un\s+|une\s+|uno\s+"
    r"|een\s+|um\s+|ein\s+)?(?:prototyp|poc\b|spike\b)"
    # "we're only changing the staging config here", "the PR also needs the migration script"
    r"|\b(?:we'?re|we\s+are|i'?m|i\s+am)\s+only\s+\w+ing\b"
    r"|\bthe\s+(?:pr|mr|diff|patch|branch)\s+(?:also\s+|still\s+)?(?:needs|is\s+missing|lacks)\b"
    r"|\bnever\s*mind\b|\bthe\s+reviewer\s+is\b"
    r"|\bis\s+due\s+(?:(?:today|tonight|tomorrow)\b|(?:(?:this|next|by|on)\s+)?(?:mon|tues|wednes"
    r"|thurs|fri|satur|sun)day\b)"
    rf"|{other.THIS_TIME}|{other.NEXT_QUESTIONS}",
    re.IGNORECASE,
)
# A last clause that sets a piece of work now: "the pointer could be null here, add a check",
# "…, list them all so I can send them to Lotte" (capture._for_the_work_in_hand reads it only
# where nothing in the request makes a rule of it: see RULE_MARK).
TASK_CLAUSE = LazyPattern(
    r"[,;]\s*(?:then\s+)?(?:please\s+|pls\s+)?(?:add|list|fix|write|implement|rewrite|rename"
    r"|remove|delete|update|create|generate|send|refactor)\s+(?:a|an|the|them|it|this|that|those"
    r"|these|me)\b[^,;.]*[.!]*$",
    re.IGNORECASE,
)
# Words that make a rule of a request's last clause: a condition, a time to come, every case,
# a standing name ("…, if you need them, add them by hand", "note (permanent): …, write the
# downgrade too", "…, write the test plan yourself", "don't add `# type: ignore` comments, fix
# the types instead").
RULE_MARK = LazyPattern(
    r"\b(?:when|whenever|if|unless|every|each|always|never|from\s+now|going\s+forward|future"
    r"|next\s+time|permanent\w*|habit|rule|standing|norm|yourself|too|also|instead"
    r"|(?:don'?t|do\s+not)(?!\s+forget)|no)\b",
    re.IGNORECASE,
)
# An opening that makes a setting last, a change to make: "Make the change permanent in the
# config —" (not "make it permanent in your memory").
MADE_PERMANENT = LazyPattern(
    r"\b(?:make|set|keep)\s+(?:it|this|that|the\s+[\w-]+(?:\s+[\w-]+)?)\s+(?:permanent|persistent)"
    r"\s+(?:in|on|via|through|by)\b(?!\s+(?:your|ur)\b)",
    re.IGNORECASE,
)
# Keeping somewhere else than the agent's memory: "log this to the audit table as a permanent
# record:", "save this output somewhere so I can diff it later:".
# (WRITTEN_IN: what a person writes in; ELSEWHERE also names where a program stores)
WRITTEN_IN = (
    r"doc|document|runbook|postmortem|changelog|readme|wiki|ticket|file|table|sheet|spreadsheet"
)
ELSEWHERE = LazyPattern(
    r"\b(?:to|in|into)\s+(?:the|a|an|our|my)\s+(?:[\w-]+\s+)?(?:db|database|log|bucket|queue|topic"
    rf"|index|channel|{WRITTEN_IN})\b"
    r"|\b(?:output|result|response|diff|logs?|dump)s?\s+somewhere\b",
    re.IGNORECASE,
)
# A question with a second choice asks about the memory, not to keep: "Can you remember
# things between our chats or do I need to paste context every time?"
OR_ASKS = LazyPattern(
    r"\bor\s+(?:do|does|should|will|would|can|must|is|are|am)\s+(?:i|we|you|it|u)\b", re.IGNORECASE
)
# A definite thing, not a statement, before a comma: "don't forget the migration for the new
# column, the deploy will fail without it" names what this change is missing.
THE_THING = LazyPattern(r"^(?:the|this|that|these|those|your|my|a|an)\s", re.IGNORECASE)
# What happens now without it: "…, the deploy will fail without it", "…, or the load fails",
# "…, this is a network device".
WITHOUT_IT = LazyPattern(
    r",\s*(?:or\s+(?:else\s+)?(?:the|it|we|you)\b|(?:the|it|we)\b[^,.]*\bwithout\s+(?:it|them|that"
    r"|this)\b|this\s+is\s+an?\b|otherwise\b|(?:the|it)\b[^,.]*\bneeds\s+(?:it|them|that)\b)",
    re.IGNORECASE,
)
# A clause that opens with its subject or a condition states something rather than asking for
# it: "We never write items back.", "If you see UPS in old code it's dead." (capture._declares).
# (not the person on their own asking: "I keep having to look it up.", "We'll need it a lot.",
# "I'll push.")
STATES_OPENING = LazyPattern(
    r"^(?:we|we're|our|all|every|each|no|nothing|nobody|everyone|if|unless)\b"
    r"(?!'|\s+(?:will|would|had|need|keep|got|should|must|have\s+to)\b)",
    re.IGNORECASE,
)
# A pointer back at several sentences: "remember all this", "remember everything above".
ALL_BACK = LazyPattern(
    r"\ball\s+(?:of\s+)?(?:this|that)\b|\beverything\s+(?:above|i\s)", re.IGNORECASE
)
# "Remember my preference for all future sessions: X" keeps X.
# (not one that names what it is about: "my preference for logs in production: X" keeps it)
KIND_LABEL = LazyPattern(
    r"^(?:my|our|the|a|this)\s+(?:(?:standing|house|team)\s+)?(?:preference|rule|convention|policy"
    r"|principle)s?(?:\s+for\s+(?:all\s+|the\s+)?(?:future|later|next|upcoming|coming)\s+"
    r"(?:sessions?|chats?|conversations?|times?))?\s*:\s+(?=\S)",
    re.IGNORECASE,
)
# "Keep this in mind next time you write docs for the other team: X" keeps X.
NEXT_TIME_WHEN = LazyPattern(r"^(?:you|we|i)\s+[^:]{3,80}:\s+(?=\S)", re.IGNORECASE)
# A thing recalled from before, asked about: "can you remember the exact error we had before
# the rollback?"
RECALLED = LazyPattern(
    r"^(?:the|that|those|what)\s+(?:[\w-]+\s+){0,3}(?:that\s+)?(?:we|you|i)\s+(?:had|used|saw|gave"
    r"|wrote|ran|sent|did|made|tried|got|discussed|mentioned|picked|chose)\b",
    re.IGNORECASE,
)
# Where the fact is to be written, said first: "note this in the postmortem doc: …".
ELSEWHERE_FIRST = LazyPattern(
    rf"^(?:to|in|into)\s+(?:the|a|an|our|my)\s+(?:[\w-]+\s+){{0,2}}?(?:{WRITTEN_IN})\b[^:]{{0,30}}:",
    re.IGNORECASE,
)
# "remember, generally, that X" keeps X.
ADVERB_THAT = LazyPattern(
    r"^(?:generally|in\s+general|as\s+a\s+rule|always|also|long[-\s]term|permanently|forever"
    r"|for\s+good|across\s+sessions),?\s+that\s+",
    re.IGNORECASE,
)
# "don't forget this one in the future: X" keeps X.
ONE_FOR_LATER = LazyPattern(
    r"^(?:this\s+|that\s+)?one\s+(?:(?:in\s+the\s+)?future|for\s+(?:later|good|next\s+time"
    r"|the\s+future)|forever|going\s+forward)\s*:\s*",
    re.IGNORECASE,
)
# A definition by an equals sign: "TP=8 for the 70B", "ntp servers = 10.0.0.123 and …".
EQUALS = LazyPattern(r"^[\w][\w .-]{0,40}?\s*=\s*[\w`'\"]", re.IGNORECASE)
# What a person says of themselves or their team: "I like when you summarize …", "we …".
PERSONAL = LazyPattern(r"^(?:i|i'm|i've|we|we're|my|our)\b", re.IGNORECASE)
# "remember it'll be null for existing rows": "it" opens a statement, it points at nothing.
IT_WILL = LazyPattern(r"\b(?:remember|note|keep)\s+it['\u2019](?:ll|s|d)\b", re.IGNORECASE)
# "remember, it's policy: X" keeps X.
ITS_POLICY = LazyPattern(
    r"^(?:it'?s|this\s+is|that'?s)\s+(?:a\s+|the\s+|our\s+)?(?:policy|rule|law|standard"
    r"|convention|requirement)\s*:\s*",
    re.IGNORECASE,
)
# Asked while the work is being done: "As you write the module, keep in mind …" (a cue).
WHILE_YOU = LazyPattern(
    r"\b(?:as|while)\s+you\s+\w+(?:\s+(?:through|over|into|at|on|up))?\s+(?:the|this|that|these)\b"
    r"|\b(?:as|while)\s+you(?:'re|\s+are)\s+\w+ing\b",  # "While you're refactoring, remember …"
    re.IGNORECASE,
)
# A fact that is a step of this task: "Pamiętaj, żeby … uruchomić pytest" ("remember to …"),
# "Vergiss nicht, … zu markieren",
# "keep in mind the player can be mid-air when the cutscene starts, handle that".
STEP_NOW = LazyPattern(
    # how this answer is to be given, where this work runs: "output as JSON, I'm piping it to
    # jq", "the output should be a markdown table", "this is prod. double-check …"
    r"^(?:the\s+)?output\s+(?:as|should|must|in|has)\b"
    r"|^(?:this|it)\s+is\s+(?:prod|production|staging|live)\b|^to\s+jest\s+produkcj"
    r"|\bfor\s+this\s*[.!]*$"  # "we agreed on using the existing `Money` class for this"
    # (the pronoun is what the step is for, not part of a rule: "…, add a down() that actually
    # reverses it" is one)
    r"|^(?:żeby|zeby|aby)\b|[,;]\s*(?:so\s+)?(?:please\s+)?(?:handle|add|account\s+for|deal\s+with"
    r"|cover|validate|check|enforce|test|fix|implement|guard\s+against)\b(?:[^,.;]*\bfor)?\s+"
    r"(?:that|it|this)\s*[.!]*$"
    # a paste it introduces: "… returns 422. here's the body: {…}"
    r"|\bhere(?:'s|\s+is|\s+are)\s+(?:the|my|a|an)\b"
    # something to find out: "remember— I mean memory: how do I graph RSS …"
    r"|^(?:how|why)\s+(?:do|does|did|can|could|should|to|is|are)\b"
    # what this prompt holds, in the fact's first sentence: "the test below is flaky on CI only"
    r"|^[^.!?]*\bthe\s+(?:[\w-]+\s+){0,2}(?:tests?|logs?|errors?|traces?|output|code|snippet|diff|file|config"
    r"|table|query|alerts?|list|message|json|yaml|data|function|class|example|screenshot)"
    r"\s+(?:below|above)\b"
    rf"|{other.STEP}",
    re.IGNORECASE,
)
# Where the words that asked for a fact begin: after a sentence's end, a line break, ", and"
# or a semicolon.
CLAUSE_BREAK = LazyPattern(r"[.?!]\s|\n|,\s+and\s|;")
# Code spans, taken out before a fact is read for a question mark ("use `?`, not unwrap").
CODE_SPAN = LazyPattern(CODE_SPAN_SOURCE)
# A writing verb aimed at the agent's memory: "write it to memory:", "add a durable note:".
TO_MEMORY = LazyPattern(
    r"\b(?:to|in|into)\s+(?:your\s+)?memory\b|\b(?:durable|permanent|lasting|standing|mental)\s+note\b",
    re.IGNORECASE,
)
# A sentence that turns to the task: "Now go split `core.rs`.", "Let's start with the parser."
TASK_VERB = LazyPattern(
    r"^(?:(?:please|pls|now|then|also|and|ok|okay|so)[,\s]+)*(?:run|rerun|commit|push|merge|deploy|try"
    r"|check|test|do|send|show|tell|revert|delete|remove|ship|open|close|review|read|finish|start"
    r"|stop|fix|look|find|explain|debug|write|implement|add|create|build|refactor|update|generate"
    r"|help|give|split|go|continue|let'?s|can|could|would|will|improve|rename|bump|clean|undo"
    r"|switch|rip|redo|move|carry|keep|extract|mock|return|first|next|after|what|thanks?|great"
    r"|cool|nice|perfect|lol|sorry|gracias|danke|merci|grazie|obrigad[oa]|revisa|haz(?:me)?|faz"
    r"|aggiungi|mach|bitte|erst|dann|luego|despu[ée]s|ahora|agora|maintenant|ora|jetzt|nu|teraz"
    r"|yes|no\s+worries|that'?s\s+(?:it|all))\b",
    re.IGNORECASE,
)
# An English imperative that asks for work (beyond DIRECTIVE's and TASK_NOW's verbs): "Upgrade
# the Swashbuckle package.", "Submit the fine-tuning job.", "Decode the SOC from PGN 0xFEF7."
ASKS_FOR_WORK = LazyPattern(
    r"^(?:upgrade|downgrade|submit|recompute|compute|calculate|convert|decode|encode|cut|patch"
    r"|point|say|install|uninstall|configure|hook|port|backport|translate|draft|rewrite|replace"
    r"|benchmark|profile|plot|draw|compare|analy[sz]e|investigate|figure|get|grab|fetch|pull"
    r"|clone|restart|reboot|kill|scale|provision|spin|tear|seed|load|parse|dump|diff|list|count"
    r"|estimate|fill|revert|sync|upload|download|attach|paste|copy|resize|polish|tweak|tidy"
    r"|simplify|optimi[sz]e|speed|reduce|increase|lower|deduplicate|dedupe|reformat"
    r"|regenerate|recreate|rebuild|retrain|train|evaluate|score|rank|tune|measure|time|trace"
    r"|print|echo|cat|tail|grep|open|edit|modify|adjust|align|center|style|color|colour)\b"
    # any verb done to what was just said: "Clear it.", "Bump them."
    r"|^[a-z]+\s+(?:it|them|that|this|those|these)\b(?!\s+(?:is|are|was|were|has|have)\b)",
    re.IGNORECASE,
)
# "forget" as a word: what "don't forget" and "never forget" ask with.
FORGETS = LazyPattern(r"\bforget\b", re.IGNORECASE)
# Where a clause of a sentence opens: after a comma, a semicolon or a dash.
CLAUSE_OPENS = LazyPattern(r"\s*(?:[,;]|\s[\u2013\u2014-])\s*")
# A question asked without its mark: "do you know my userid already or …", "did you
# remember the flag I mentioned".
UNMARKED_QUESTION = LazyPattern(
    r"^(?:do|did|does|have|has|are|were)\s+(?:you|u|ya)\s+(?:still\s+|already\s+)?"
    r"(?:know|remember|recall|have|keep|save|store)\b",
    re.IGNORECASE,
)
# "Note it, …": what comes after the comma says what noting it is for.
NOTED_THEN = LazyPattern(
    r"^(?:please\s+|pls\s+)?note\s+(?:it|that|this)\s*[,;]\s*(?P<rest>.+)", re.IGNORECASE
)
# A sentence that turns from what was said to what is to be done now: a discourse marker
# ("Anyway, …", "Then …", "ok so …"), a need or a question of the moment ("I need the jump to
# feel snappier", "help me …", "why are my citations …"), or a task in another language.
MOVES_ON = LazyPattern(
    rf"^(?:(?:{TURN_WORDS}|anyhow|then|so|also|but|and|meanwhile|first|just|please|pls)"
    r"\b[,:\s]*)+\w"
    r"|^(?:i\s+need|i\s+want|i'?d\s+like|help\s+me|let\s+me|let'?s|can\s+you|could\s+you"
    r"|would\s+you|why|how|what|where|which|who|is\s+there|are\s+there|do\s+you|did\s+you)\b"
    rf"|{other.TASK}",
    re.IGNORECASE,
)
# A last sentence that speaks of this session's exchange: "I saw you run npm install again",
# "You suggested GORM tags last time", "…, take a look", "porfa", "carry on".
TURNS_BACK = LazyPattern(
    r"\bagain\b|\btake\s+a\s+look\b|\bporfa\b|\bpor\s+favor\b|\bbitte\b|\bper\s+favore\b"
    r"|\bcarry\s+on\b|\byou\s+(?:suggested|did|wrote|ran|run|used|added|gave|made)\b",
    re.IGNORECASE,
)
