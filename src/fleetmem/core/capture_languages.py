"""Requests to remember in Spanish, Portuguese, German, French, Italian, Dutch and Polish.

People who work in another language ask an agent to keep something the way they would ask a
colleague: "Recuerda que los precios se guardan en céntimos", "Merk dir für die Zukunft, dass
…", "Lembra pra sempre que …", "N'oublie pas pour la prochaine fois : …", "X. Bitte merken.".
These fragments are the verbs, time words and pointers of those languages; the English rules
of :mod:`fleetmem.core.capture_patterns` splice them into theirs, and :data:`ASK` reads the
commonest shape whole: an imperative to remember, how long, then "que" / "dass" / "che" /
"dat" / "że" or a colon, then the fact. Pure: no I/O.
"""

from __future__ import annotations

import re

from fleetmem.core.lazy_pattern import LazyPattern

# Imperatives that ask to keep something (second person, formal or not). "Recuerdas …?" and
# "Lembra do bug de ontem?" are questions and are left to the question check.
VERBS = (
    # Spanish
    r"recu[eé]rda(?:lo|me)?|record[aá]|acu[eé]rdate(?:\s+de)?|no\s+(?:te\s+)?olvides(?:\s+de)?"
    r"|nunca\s+(?:te\s+)?olvides(?:\s+de)?|ten(?:lo|ga)?\s+(?:en\s+cuenta|presente)"
    r"|ap[uú]nta(?:te|lo)?(?:\s+(?:esto|eso))?|gu[aá]rda(?:te)?\s+(?:esto|eso)(?:\s+en\s+(?:la\s+)?memoria)?"
    r"|an[oó]ta(?:te|lo)?(?:\s+(?:esto|eso))?|memor[ií]za(?:lo)?(?:\s+(?:esto|eso))?"
    # Portuguese
    r"|lembr[ae](?:-se)?(?:\s+(?:disso|disto))?|n[ãa]o\s+(?:se\s+)?esque(?:ce|[çc]a|[çc]as)(?:\s+(?:disso|disto))?"
    r"|nunca\s+esque(?:ce|[çc]a)(?:\s+(?:disso|disto|isso))?"
    r"|guard[ae]\s+(?:isso|isto|a[ií])(?:\s+na\s+(?:mem[óo]ria|cabe[çc]a))?"
    r"|anot[ae]\s+(?:a[ií]|isso|isto)|tenha\s+em\s+mente|fica\s+sabendo|grav[ae]\s+(?:isso|isto|a[ií])"
    r"|memoriz[ae](?:\s+(?:isso|isto))?"
    # German
    r"|merk(?:e)?\s+dir(?:\s+(?:das|dies|folgendes|bitte))?|vergiss\s+(?:das\s+|bitte\s+)?nicht"
    r"|nicht\s+vergessen|denk(?:e)?\s+(?:bitte\s+)?(?:daran|dran)"
    r"|behalte?\s+(?:das|dies|bitte)?\s*im\s+(?:kopf|hinterkopf|ged[äa]chtnis)"
    r"|notier(?:e)?\s+dir(?:\s+(?:das|dies))?|bitte\s+merken"
    # French
    r"|retiens(?:\s+(?:[çc]a|bien|cela))?|souviens-toi|rappelle-toi|n['\u2019]oublie\s+(?:pas|jamais)"
    r"|garde\s+(?:[çc]a|cela|bien)\s+en\s+(?:t[êe]te|m[ée]moire)|m[ée]morise(?:\s+(?:[çc]a|cela))?"
    r"|note\s+(?:bien|[çc]a)|[àa]\s+retenir"
    # Italian
    r"|ricorda(?:ti|telo)?|non\s+dimenticar(?:e|ti)|tieni(?:lo)?\s+(?:a\s+mente|presente)"
    r"|memorizza(?:lo)?|segna(?:ti|telo)"
    # Dutch
    r"|onthoud|vergeet\s+(?:het\s+)?niet|denk\s+eraan|houd\s+in\s+gedachten|noteer"
    # Polish
    r"|zapami[eę]taj|pami[eę]taj|nie\s+zapomnij|miej\s+na\s+uwadze|zanotuj"
)
# How long, in the same languages: "para siempre", "pra próxima", "für die Zukunft", …
LATER = (
    r"para\s+siempre|para\s+la\s+pr[oó]xima(?:\s+vez)?|para\s+(?:las\s+)?(?:pr[oó]ximas|futuras)"
    r"(?:\s+(?:veces|sesiones|conversaciones))?|de\s+aqu[ií]\s+en\s+adelante|en\s+adelante"
    r"|a\s+partir\s+de\s+ahora|desde\s+ahora"
    r"|p(?:a)?r[ao]\s+sempre|p(?:a)?r[ao]\s+(?:a\s+|as\s+)?pr[oó]xim[ao]s?(?:\s+(?:vez|vezes|sess[õo]es))?"
    r"|nas\s+pr[oó]ximas(?:\s+(?:vezes|sess[õo]es))?|daqui\s+(?:pra|para)\s+frente"
    r"|a\s+partir\s+de\s+agora|p(?:a)?r[ao]\s+o\s+futuro|de\s+agora\s+em\s+diante"
    r"|f[üu]r\s+die\s+zukunft|f[üu]r\s+immer|ab\s+jetzt|ab\s+sofort|(?:auch\s+)?beim\s+n[äa]chsten\s+mal"
    r"|k[üu]nftig|in\s+zukunft|dauerhaft"
    r"|pour\s+la\s+suite|pour\s+toujours|pour\s+(?:toutes\s+)?(?:les\s+)?prochaines?\s+(?:fois|sessions?)"
    r"|pour\s+la\s+prochaine\s+fois|d[ée]sormais|[àa]\s+l['\u2019]avenir|dor[ée]navant"
    r"|per\s+sempre|per\s+la\s+prossima\s+volta|per\s+le\s+prossime\s+(?:volte|sessioni)"
    r"|d['\u2019]ora\s+in\s+poi|da\s+ora\s+in\s+poi|in\s+futuro"
    r"|voor\s+altijd|voortaan|vanaf\s+nu|voor\s+de\s+volgende\s+keer|in\s+het\s+vervolg"
    r"|na\s+zawsze|na\s+przysz[łl]o[śs][ćc]|od\s+teraz|nast[eę]pnym\s+razem"
)
# "For good" on its own, as "permanent" is in English ("uma regra pra sempre:").
FOREVER = (
    r"p(?:a)?r[ao]\s+sempre|para\s+siempre|f[üu]r\s+immer|pour\s+toujours|per\s+sempre"
    r"|voor\s+altijd|na\s+zawsze"
)
# What a lasting opening may call what follows: "uma regra", "eine Sache", "une chose".
NOUNS = r"regra|regla|regel|r[èe]gle|regola|coisa|cosa|chose|sache|ding|rzecz|zasada|nota|notiz"
# Pointing back at what was just said: "… Bitte merken.", "… Tenlo presente.".
BACK = (
    r"bitte\s+merken|merk\s+dir\s+das|vergiss\s+das\s+nicht|tenlo\s+(?:presente|en\s+cuenta)"
    r"|recu[eé]rdalo|no\s+lo\s+olvides|lembr[ae](?:-se)?\s+disso|guarda\s+isso|n[ãa]o\s+esque[çc]a\s+disso"
    r"|retiens(?:-le|\s+[çc]a)|n['\u2019]oublie\s+pas\s+[çc]a|ricordatelo|tienilo\s+a\s+mente"
    r"|onthoud\s+dat|zapami[eę]taj\s+to"
)
# This task's time or the past, not for good: "gilt nur heute", "solo por ahora", "ontem".
NOT_LASTING = (
    r"\b(?:hoy|heute|aujourd['\u2019]hui|oggi|hoje|vandaag|dzisiaj|dzi[śs]|ayer|gestern|hier"
    r"|ieri|ontem|gisteren|wczoraj|por\s+ahora|por\s+enquanto|vorerst|pour\s+l['\u2019]instant"
    r"|per\s+ora|voorlopig|na\s+razie|esta\s+tarea|diese\s+aufgabe|cette\s+t[âa]che"
    r"|este\s+pr|diesen\s+pr|cette\s+pr)\b"
)
# Courtesy around the request: "por favor", "bitte", "s'il te plaît", …
PLEASE = (
    r"por\s+favor|bitte|s['\u2019]il\s+te\s+pla[iî]t|s['\u2019]il\s+vous\s+pla[iî]t|per\s+favore"
    r"|prosz[eę]|pfv|pf"
)
# Words before the request: "Olha,", "Por cierto,", "Übrigens", …
LEAD = (
    r"(?:(?:ok(?:ay)?|e|y|und|et|oh|ah|olha|mira|hey|ei|bueno|bom|pues|dann|alors|allora|also"
    r"|btw|a\s+prop[óo]sito|por\s+cierto|[üu]brigens|au\s+fait|comunque|trouwens|ali[áa]s"
    rf"|{PLEASE}|{LATER})\s*[,!:;]?\s+)*"
)
# The commonest shape, read whole: the imperative, how long, a "that" or a colon, the fact.
ASK = LazyPattern(
    rf"^{LEAD}(?:{VERBS})(?:,?\s+(?:{LATER}))?(?:,?\s+(?:{PLEASE}))?"
    r"(?:,?\s+(?:de\s+)?(?:que|dass|che|dat|że|qu['\u2019])\s*|\s*[:\-\u2013\u2014]\s*|,\s+)"
    r"(?P<fact>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
NOT_LASTING_WORDS = LazyPattern(NOT_LASTING, re.IGNORECASE)
