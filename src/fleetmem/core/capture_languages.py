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

# Imperatives that ask to keep something (second person, formal or not), and the requests
# people shape as one ("Quero que te lembres", "Kannst du dir merken", "Il faut que tu te
# souviennes"). "Recuerdas …?" and "Lembra do bug de ontem?" are questions and are left to
# the question check.
VERBS = (
    # Spanish
    r"recu[eé]rda(?:lo|me)?|record[aá]|acu[eé]rdate(?:\s+de)?|ac[oó]rdate(?:\s+de)?"
    r"|no\s+(?:te\s+)?olvides(?:\s+de)?|que\s+no\s+se\s+te\s+olvide|nunca\s+(?:te\s+)?olvides(?:\s+de)?"
    r"|ten(?:lo|ga)?\s+(?:en\s+cuenta|presente)|qu[eé]date\s+con\s+esto"
    r"|ap[uú]nta(?:te|lo)?(?:\s+(?:esto|eso))?|gu[aá]rda(?:te)?\s+(?:esto|eso)(?:\s+en\s+(?:la\s+|tu\s+)?memoria)?"
    r"|gu[aá]rda(?:lo|la)\s+en\s+(?:la\s+|tu\s+)?memoria"
    r"|an[oó]ta(?:te|lo)?(?:\s+(?:esto|eso))?|memor[ií]za(?:lo)?(?:\s+(?:esto|eso))?"
    r"|graba(?:\s+(?:esto|eso))?\s+en\s+tu\s+memoria|(?:puedes|podr[ií]as)\s+recordar"
    # the Río de la Plata's and Mexico's: "acordate de eso", "anotá", "guardá esto",
    # "grabátelo", "que se te quede", "metete esto en la cabeza", "tené en cuenta"
    r"|ac[oó]rdate\s+de\s+eso|an[oó]t[aá]|guard[á](?:te(?:lo)?)?(?:\s+(?:esto|eso|este\s+dato))?"
    r"|guard[aá]te(?:lo)?(?:\s+(?:esto|eso|este\s+dato))?|guarda\s+(?:esto|eso|este\s+dato)"
    r"|guard[aá]\s+en\s+tu\s+memoria|gr[aá]b[aá]te(?:lo)?(?:\s+a\s+fuego)?(?:\s+esto)?"
    r"|que\s+(?:no\s+)?se\s+te\s+(?:quede|olvide|pase)(?:\s+otra\s+vez)?"
    r"|qu[eé]date\s+con\s+(?:este\s+dato|eso)|met[eé]te\s+esto\s+en\s+la\s+cabeza"
    r"|ten[eé]\s+en\s+cuenta|te\s+pido\s+que\s+te\s+acuerdes|hazme\s+el\s+favor\s+de\s+recordar"
    r"|para\s+que\s+lo\s+sepas|para\s+que\s+l[oa]\s+tengas\s+(?:presente|en\s+cuenta)"
    # Portuguese
    r"|lembr[ae](?:-(?:se|te))?(?:\s+(?:disso|disto))?|n[ãa]o\s+(?:se\s+|te\s+)?esque(?:ce|[çc]a|[çc]as)"
    r"(?:\s+(?:disso|disto|nunca))?|n[ãa]o\s+vai\s+esquecer|nunca\s+esque(?:ce|[çc]a)(?:\s+(?:disso|disto|isso))?"
    r"|guard[ae]\s+(?:isso|isto|a[ií])(?:\s+na\s+(?:mem[óo]ria|cabe[çc]a))?|salv[ae]\s+(?:isso|isto)"
    r"|anot[ae]\s+(?:a[ií]|isso|isto)|tenha\s+em\s+mente|tem\s+presente|fica\s+(?:sabendo|a\s+saber)"
    r"|grav[ae]\s+(?:isso|isto|a[ií])|memoriz[ae](?:\s+(?:isso|isto))?|toma\s+nota(?:\s+permanente)?"
    r"|fix[ae]\s+(?:bem\s+)?(?:isso|isto)|regist[ae]\s+(?:a[ií]|isso|isto)|aponta\s+(?:a[ií]|isso|isto)"
    r"|quero\s+que\s+(?:te\s+lembres|voc[êe]\s+(?:se\s+)?lembre)|(?:podes|pode)\s+(?:fixar|guardar|lembrar)"
    r"|guarda\s+essa|fica\s+registrad[oa]|salva\s+na\s+mem[óo]ria|lembrando\s+p(?:a)?r[ao]\s+o?\s*futuro"
    r"|(?:pode\s+)?grava(?:r)?\s+na\s+mem[óo]ria"
    # Nigerian Pidgin: "make you no forget this one", "make you remember am"
    r"|make\s+you\s+(?:no\s+forget|remember)(?:\s+am)?"
    # German
    r"|merk(?:e)?\s+dir(?:\s+(?:das|dies|folgendes))?|vergiss\s+(?:das\s+|bitte\s+)?nicht"
    r"|nicht\s+vergessen|denk(?:e)?\s+(?:bitte\s+)?(?:in\s+zukunft\s+)?(?:daran|dran)"
    r"|behalte?\s+(?:das|dies|bitte)?\s*im\s+(?:kopf|hinterkopf|ged[äa]chtnis)"
    r"|notier(?:e)?\s+dir(?:\s+(?:das|dies))?|bitte\s+merken|schreib\s+dir\s+(?:das\s+)?auf"
    r"|speicher(?:e)?\s+dir(?:\s+das)?\s+ab|pr[äa]g\s+dir(?:\s+das)?\s+ein|kannst\s+du\s+dir\s+(?:(?:das|dies|bitte|mal|dauerhaft|f[üu]r\s+immer)\s+){0,3}merken"
    # French
    r"|retiens(?:\s+(?:[çc]a|bien|cela))?|souviens-toi|rappelle-toi|n['\u2019]oublie\s+(?:pas|jamais)"
    r"|garde[sz]?(?:-le)?\s+(?:[çc]a\s+|cela\s+|bien\s+)?en\s+(?:t[êe]te|m[ée]moire)"
    r"|m[ée]morise(?:\s+(?:[çc]a|cela))?|note\s+(?:bien|[çc]a)|note-le(?:\s+bien)?|[àa]\s+retenir"
    r"|prends\s+note|il\s+faut\s+que\s+tu\s+te\s+souviennes(?:\s+de\s+[çc]a)?"
    # Italian
    r"|ricorda(?:ti|telo)?|non\s+dimenticar(?:e|ti)|non\s+scordar(?:ti|e)|tieni(?:lo)?\s+(?:a\s+mente|presente)"
    r"|memorizza(?:lo)?|segna(?:ti|telo)|annota(?:ti)?|salvati(?:\s+questa\s+info|\s+questo)?(?:\s+in\s+memoria)?"
    r"|voglio\s+che\s+ti\s+ricordi"
    # Dutch
    r"|onthou(?:d|den)?|vergeet\s+(?:het\s+)?niet|niet\s+vergeten|denk\s+eraan|houd\s+in\s+gedachten"
    r"|hou(?:d)?\s+er\s+(?:\w+\s+){0,4}rekening\s+mee|noteer|sla\s+(?:dit|dat)\s+op"
    r"|prent\s+(?:dit|dat)\s+in\s+je\s+geheugen|zet\s+(?:dit\s+|dat\s+)?in\s+je\s+geheugen"
    r"|knoop\s+(?:dit|dat)\s+in\s+je\s+oren|graag\s+onthouden|(?:kun|wil)\s+je\s+(?:\w+\s+){0,2}onthouden"
    # Polish
    r"|zapami[eę]?n?taj|pami[eę]taj|nie\s+zapomnij|nie\s+zapominaj|miej\s+na\s+uwadze|zanotuj"
    r"|zapisz\s+sobie|wrzu[ćc]\s+sobie\s+do\s+pami[eę]ci|wbij\s+sobie\s+do\s+g[łl]owy|zakoduj\s+sobie|zachowaj\s+to\s+w\s+pami[eę]ci"
)
# Word stems without which none of the patterns here can match (the rules' word gate).
HINT = (
    r"onthou|vergeten|zapisz|wbij|zakoduj|prent|knoop|sla\s+d|graba|qu[eé]date|salv|toma\s+nota"
    r"|fix[ae]|regist|aponta|scordar|annota|prends\s+note|schreib|speicher|pr[äa]g|ab\s+jetzt"
    r"|ab\s+sofort|vanaf\s+nu|od\s+teraz|d['\u2019]ora|da\s+(?:ora|adesso)|[àa]\s+partir|a\s+partir"
    r"|desde\s+ahora|daqui|en\s+adelante|toekomst|zukunft|futuro|avenir|przysz|rekening|geheugen"
    r"|pami[eę]|zapam|vergiss|vergeet|oubli|olvid|esque|dimentic|ricord|retien|souvien|rappelle"
    r"|merk|lembr|recu[eé]rd|acu[eé]rd|ac[oó]rd|record|memor|m[ée]mor|notier|noteer|zanotuj|note-le"
    r"|tenlo|tienilo|garde|presente|cuenta|mente|sabendo|ligado|saber|gilt|geldt|vale|vaut"
    r"|acord|an[oó]t|gr[aá]b|qued|pase|metete|sepas|tengas|dica|registrad|lembrando|forget|futuro"
    r"|ap[uú]nt|ahora\s+en|adelante|m[aá]s\s+adelante|otras\s+veces|partir\s+de|grav[ae]"
    r"|vergessen|zapomn|guard|denk|behalt|retenir|gedachten|uwadze|sempre|siempre|immer|toujours"
    r"|pr[oó]xim|prochaine|prossim|volgende|nast[eę]pn|frente|d[ée]sormais|dor[ée]navant|voortaan"
    r"|k[üu]nftig|segna|dauerhaft|altijd|zawsze|diante|alle\s+mal|por\s+todas|pour\s+toutes"
    r"|per\s+tutte|ged[äa]chtnis|wrzu"
)
# How long, in the same languages: "para siempre", "pra próxima", "für die Zukunft", …
LATER = (
    r"para\s+siempre|para\s+la\s+pr[oó]xima(?:\s+vez)?|para\s+(?:las\s+)?(?:pr[oó]ximas|futuras)"
    r"(?:\s+(?:veces|sesiones|conversaciones))?|en\s+futuras\s+(?:sesiones|conversaciones)"
    r"|de\s+(?:aqu[ií]|ahora)\s+en\s+adelante|en\s+adelante|para\s+el\s+futuro"
    r"|para\s+otras\s+veces|a\s+futuro|de\s+cara\s+al\s+futuro|para\s+m[aá]s\s+adelante"
    r"|de\s+ahora\s+en\s+m[aá]s|a\s+partir\s+de\s+hoy|para\s+la\s+pr[oó]xima\s+sesi[oó]n"
    r"|pras?\s+outras(?:\s+vezes)?|pras?\s+(?:as\s+)?pr[oó]ximas"
    r"|a\s+partir\s+de\s+ahora|desde\s+ahora"
    r"|p(?:a)?r[ao]\s+sempre|p(?:a)?r[ao]s?\s+(?:a\s+|as\s+)?pr[oó]xim[ao]s?(?:\s+(?:vez|vezes|sess[õo]es|conversas))?"
    r"|nas\s+pr[oó]ximas(?:\s+(?:vezes|sess[õo]es|conversas))?|daqui\s+(?:pra|para|em)\s+(?:frente|diante)"
    r"|a\s+partir\s+de\s+agora|p(?:a)?r[ao]\s+o\s+futuro|pro\s+futuro|de\s+agora\s+em\s+diante"
    r"|f[üu]r\s+die\s+zukunft|f[üu]r\s+immer|ab\s+jetzt|ab\s+sofort|(?:auch\s+)?beim\s+n[äa]chsten\s+mal"
    r"|f[üu]r\s+n[äa]chstes\s+mal|k[üu]nftig|in\s+zukunft|dauerhaft"
    r"|f[üu]r\s+alle\s+(?:weiteren|k[üu]nftigen|zuk[üu]nftigen)\s+(?:sitzungen|sessions|chats)"
    r"|pour\s+la\s+suite|pour\s+toujours|pour\s+(?:toutes\s+)?(?:les\s+)?prochaines?\s+(?:fois|sessions?)"
    r"|pour\s+la\s+prochaine\s+fois|pour\s+plus\s+tard|d[ée]sormais|[àa]\s+l['\u2019]avenir|dor[ée]navant"
    r"|[àa]\s+partir\s+de\s+maintenant|une\s+fois\s+pour\s+toutes"
    r"|per\s+sempre|per\s+la\s+prossima(?:\s+volta)?|per\s+le\s+prossime\s+(?:volte|sessioni)"
    r"|anche\s+le\s+prossime\s+volte|per\s+il\s+futuro|una\s+volta\s+per\s+tutte"
    r"|d['\u2019]ora\s+in\s+(?:poi|avanti)|da\s+(?:ora|adesso)\s+in\s+(?:poi|avanti)|in\s+futuro"
    r"|voor\s+altijd|voortaan|vanaf\s+nu|voor\s+de\s+volgende\s+(?:keer|keren|sessies)|in\s+het\s+vervolg"
    r"|(?:voor|in)\s+de\s+toekomst|voor\s+latere\s+sessies|ook\s+niet\s+in\s+de\s+volgende\s+sessies"
    r"|ein\s+f[üu]r\s+alle\s+mal|de\s+una\s+vez\s+por\s+todas|de\s+uma\s+vez\s+por\s+todas"
    r"|voor\s+eens\s+en\s+altijd|na\s+zawsze|raz\s+na\s+zawsze|na\s+przysz[łl]o[śs][ćc]|od\s+teraz|nast[eę]pnym\s+razem"
    r"|na\s+(?:nast[eę]pne|kolejne|przysz[łl]e)\s+(?:sesje|razy|rozmowy)"
)
# "For future sessions" in those languages: on its own, an opening asks to keep what follows.
SESSIONS = (
    r"f[üu]rs\s+ged[äa]chtnis|f[üu]r\s+dein(?:\s+langzeit)?\s*ged[äa]chtnis|"
    r"f[üu]r\s+alle\s+(?:weiteren|k[üu]nftigen|zuk[üu]nftigen|n[äa]chsten)\s+(?:sitzungen|sessions|chats)"
    r"|(?:para|en)\s+(?:las\s+)?(?:pr[oó]ximas|futuras)\s+(?:sesiones|conversaciones)"
    r"|(?:nas|p(?:a)?r[ao]s?\s+as)\s+pr[oó]ximas\s+(?:sess[õo]es|conversas)"
    r"|pour\s+(?:toutes\s+)?les\s+(?:prochaines|futures)\s+(?:sessions|conversations)"
    r"|per\s+le\s+(?:prossime|future)\s+(?:sessioni|conversazioni)"
    r"|voor\s+(?:de\s+)?(?:volgende|latere|toekomstige)\s+(?:sessies|gesprekken)"
    r"|na\s+(?:nast[eę]pne|kolejne|przysz[łl]e)\s+(?:sesje|rozmowy)"
)
# Adverbs between the verb and what it keeps: "acuérdate siempre de que", "merk dir mal".
ALWAYS = (
    r"siempre|sempre|immer|toujours|zawsze|altijd|bem|bien|bitte|mal|ff|prosz[eę]|endlich|nunca"
    r"|d[ée]finitivement"
)
# "For good" on its own, as "permanent" is in English ("uma regra pra sempre:").
FOREVER = (
    r"p(?:a)?r[ao]\s+sempre|para\s+siempre|f[üu]r\s+immer|pour\s+toujours|per\s+sempre"
    r"|voor\s+altijd|na\s+zawsze"
)
# What a lasting opening may call what follows: "uma regra", "eine Sache", "une chose".
NOUNS = r"regra|regla|regel|r[èe]gle|regola|coisa|cosa|chose|sache|ding|rzecz|zasada|nota|notiz"
# Courtesy around the request: "por favor", "bitte", "s'il te plaît", …
PLEASE = (
    r"por\s+favor|bitte|s['\u2019]il\s+te\s+pla[iî]t|s['\u2019]il\s+vous\s+pla[iî]t|per\s+favore"
    r"|prosz[eę]|pfv|pf|porfa|plis|por\s+fa"
)
# The question tag that ends a request without asking anything: "…, beleza?", "…, vale?".
TAGS = (
    r"beleza|vale|dale|d['\u2019]accord|oké|goed|klar|verstanden|capito|va\s+bene|dobrze|jasne|certo"
    r"|entendido|t[áa]|combinado|ja|n[ée]|tamam"
)
# Pointing back at what was just said: "… Bitte merken.", "… Tenlo presente en futuras
# conversaciones.", "… Zapamiętaj to na kolejne razy.".
BACK = (
    r"(?:bitte\s+merken|das\s+bitte\s+(?:f[üu]r\s+immer\s+)?merken|merk\s+dir\s+das|vergiss\s+das\s+nicht"
    r"|tenlo\s+(?:presente|en\s+cuenta)|recu[eé]rdalo|no\s+lo\s+olvides|ac(?:[uo]?[eé]?|ó)rdate\s+de\s+eso"
    r"|guarda\s+isto"
    r"|lembr[ae](?:-se)?\s+disso|guarda\s+isso|n[ãa]o\s+esque(?:[çc]a|ce)\s+disso"
    r"|retiens(?:-le|\s+[çc]a)|n['\u2019]oublie\s+pas\s+[çc]a|garde-le\s+en\s+t[êe]te|note-le(?:\s+bien)?"
    r"|ricordatelo|tienilo\s+a\s+mente|onthoud\s+dat|graag\s+onthouden|zapami[eę]taj(?:\s+to)?)"
    rf"(?:\s+(?:{ALWAYS}))*(?:,?\s+(?:{LATER}))?(?:,?\s+(?:{PLEASE}))?(?:,?\s+(?:{TAGS})\??)?"
)
# This task's time or the past, not for good: "gilt nur heute", "solo por ahora", "ontem".
NOT_LASTING = (
    r"\b(?:hoy|heute|aujourd['\u2019]hui|oggi|hoje|vandaag|dzisiaj|dzi[śs]|ayer|gestern|hier"
    r"|ieri|ontem|gisteren|wczoraj|por\s+ahora|por\s+enquanto|vorerst|pour\s+l['\u2019]instant"
    r"|per\s+ora|voorlopig|na\s+razie|esta\s+tarea|diese\s+aufgabe|cette\s+t[âa]che"
    r"|este\s+pr|diesen\s+pr|cette\s+pr|eenmalig|einmalig|pontual|puntual|ponctuel|una\s+tantum"
    # "now" (not "from now on"): "il DB di test adesso è vuoto", "o banco agora tá vazio"
    r"|(?<!\bda\s)adesso|(?<!\bde\s)agora|(?<!\bde\s)(?<!\bdesde\s)ahora(?!\s+en\s)"
    r"|(?<!\bab\s)jetzt|(?<!\bde\s)maintenant|(?<!\bvanaf\s)nu|(?<!\bod\s)teraz"
    r"|jednorazow\w*"
    # while you do it: "mentre riscrivi la funzione", "während du …", "pendant que tu …"
    r"|mentre\s+\w+i|mientras\s+\w+(?:as|es)|w[äa]hrend\s+du|pendant\s+que\s+tu|terwijl\s+j(?:e|ij)"
    r"|podczas\s+gdy"
    # "im PR", "bij deze wijziging", "bei dieser Änderung"
    r"|im\s+pr|bij\s+deze\s+(?:wijziging|pr|taak|refactor|commit|fix|migratie)"
    r"|bei\s+(?:dieser|diesem)\s+(?:[äa]nderung|pr|aufgabe|refactoring|commit|fix|migration)"
    # "pour ce playbook seulement", "solo para este script", "nur für diese Datei"
    r"|(?:pour|para|per|f[üu]r|voor)\s+(?:ce|cet|cette|este|esta|esse|essa|questo|questa|diese[nsm]?"
    r"|deze|dit)\s+[\w-]+\s+(?:seulement|uniquement|solamente|somente|apenas|soltanto|solo|nur|alleen)"
    r"|(?:seulement|uniquement|s[óo]lo|s[óo]|apenas|somente|solamente|soltanto|nur|alleen)\s+(?:pour|para"
    r"|pra|per|f[üu]r|voor)\s+(?:ce|cet|cette|este|esta|esse|essa|questo|questa|diese[nsm]?|deze|dit)"
    # "Merk dir kurz die ID …", "… die brauchen wir gleich für den Test" (soon; not "gleich
    # behandelt", equally)
    r"|(?<=\bdir\s)kurz|gleich\s+(?:auch|noch|danach|mal|f[üu]r\s+den|im\s+n[äa]chsten)"
    # the work in hand: "in diesem PR", "la demo es en media hora", "solo el arreglo rápido"
    r"|(?:in|en|neste|nesse|dans|in|w)\s+(?:diesem|este|esta|cette|ce|questa|questo|deze|dit|tym)\s+"
    r"(?:pr|branch|ticket|commit|task|tarea|tarefa|t[âa]che|aufgabe|compito|taak|zadaniu)"
    r"|d[ée]mo|in\s+(?:einer|zwei|\d+)\s+(?:stunden?|minuten)|en\s+(?:media|una|\d+)\s+(?:hora|horas|minutos)"
    r"|daqui\s+a\s+(?:uma|\d+)|dans\s+(?:une|\d+)\s+(?:heures?|minutes)|tra\s+(?:un['\u2019]ora|\d+\s+minuti)"
    r"|za\s+(?:godzin[ęe]|\d+\s+minut)|binnen\s+(?:een|\d+)\s+(?:uur|minuten)"
    r"|schnelle[nr]?\s+fix|arreglo\s+r[áa]pido|fix\s+r[áa]pido|correctif\s+rapide"
    r"|correzione\s+veloce|szybka\s+poprawka|snelle\s+fix)\b"
)
# Words before the request: "Olha,", "Por cierto,", "Übrigens", "Mi raccomando", …
LEAD = (
    r"(?:(?:ok(?:ay)?|e|y|und|et|oh|ah|olha|mira|hey|ei|bueno|bom|pues|dann|alors|allora|also"
    r"|se\s+liga|escuta|ouve|[ée]coute|h[öo]r\s+zu|senti|luister|s[łl]uchaj"
    r"|mi\s+raccomando|importante|wichtig|ojo|attenzione|uwaga|let\s+op|achtung|aten[çc][ãa]o"
    r"|cuidado|che|oye|ecco|tiens|bon|na\s+ja|nou"
    r"|btw|a\s+prop[óo]sito|por\s+cierto|[üu]brigens|au\s+fait|comunque|trouwens|ali[áa]s"
    rf"|{PLEASE}|{LATER})\s*[,!:;]?\s+)*"
)
# The commonest shape, read whole: the imperative, how long, a "that" or a colon, the fact.
ASK = LazyPattern(
    rf"^{LEAD}(?:{VERBS})(?P<adverbs>(?:,?\s+(?:{ALWAYS}|{LATER}|{PLEASE}))*)"
    r"(?P<sep>,?\s+(?:de\s+)?(?:(?:que|q|dass|che|dat|że|ze)\b|qu['\u2019])\s*|\s*[:\-\u2013\u2014]\s*|,\s+|\s+)"
    r"(?P<fact>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
# A time word that opens the sentence and is followed by the rule itself: "Ab jetzt bitte
# immer …", "De ahora en adelante, …", "Voortaan geldt: …", "Für die Zukunft gilt: …".
LATER_RULE = LazyPattern(
    rf"^{LEAD}(?:{LATER})(?:\s+(?:gilt|geldt|vale|vaut))?\s*[,:]?\s+(?:(?:{PLEASE})\s+)?"
    r"(?P<fact>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
# Where a request starts inside a sentence, after the task: "…, et retiens pour la suite que …",
# "… e ricordati per il futuro che …", "… i zapamiętaj na przyszłość, że …".
INNER = LazyPattern(
    r"(?:,|\s(?:e|y|und|et|en|i|ed|oraz))\s+(?:(?:poi|dopo|luego|despu[ée]s|dann|danach|ensuite"
    r"|puis|depois|daarna|potem)\s+)?(?:(?:por\s+cierto|j[áa]\s+agora|au\s+fait|[üu]brigens"
    rf"|trouwens|tamb[ée]m|aussi|auch),?\s+)?(?=(?:{VERBS})\b)",
    re.IGNORECASE,
)
NOT_LASTING_WORDS = LazyPattern(NOT_LASTING, re.IGNORECASE)
COURTESY_ONLY = LazyPattern(rf"^(?:{PLEASE}|{TAGS})\W*$", re.IGNORECASE)
SESSIONS_WORDS = LazyPattern(SESSIONS, re.IGNORECASE)
BACK_WORDS = LazyPattern(BACK, re.IGNORECASE)
# A request asked as a question: "Kannst du dir merken, dass …?", "¿Puedes recordar …?"
ASKS = LazyPattern(
    r"^\W*(?:kannst\s+du|k[öo]nntest\s+du|puedes|podr[ií]as|podes|pode|peux-tu|pourrais-tu"
    r"|puoi|potresti|kun\s+je|zou\s+je|wil\s+je|mo[żz]esz|oye,?\s+[¿]?puedes)\b",
    re.IGNORECASE,
)
# The piece of work in hand named in another language: "in questo file", "bij deze refactor",
# "w tym skrypcie", "en este método", "neste arquivo", "pour cette correction", "in dieser
# Klasse" (capture_patterns.WORK_IN_HAND has the English).
WORK_IN_HAND = (
    r"\b(?:in\s+)?quest[oa]\s+(?:file|classe|metodo|funzione|script|refactoring|query|modulo"
    r"|test|migrazione|pr|commit|ticket|compito|esercizio|risposta|sessione|esperimento|chat"
    r"|conversazione)\b"
    r"|\b(?:in\s+|bij\s+)?(?:dit|deze)\s+(?:bestand|klasse|methode|functie|script|refactor|query"
    r"|module|test|migratie|pr|commit|ticket|taak|oefening|antwoord|sessie|experiment|chat"
    r"|gesprek)\b"
    r"|\b(?:w\s+)?(?:tym|tej|tego|ten|ta)\s+(?:pliku|plik|skrypcie|skrypt|notebooku|notatniku"
    r"|klasie|klasa|metodzie|funkcji|zapytaniu|module|te[śs]cie|migracji|pr|commicie|tickecie"
    r"|zadaniu|[ćc]wiczeniu|odpowiedzi|sesji|eksperymencie|czacie|rozmowie)\b"
    r"|\b(?:en\s+)?(?:este|esta|ese|esa)\s+(?:archivo|fichero|m[ée]todo|clase|funci[óo]n|script"
    r"|consulta|migraci[óo]n|cambio|ticket|pr|commit|refactor|tarea|ejercicio|respuesta|sesi[óo]n"
    r"|experimento|chat|conversaci[óo]n)\b"
    r"|\b(?:neste|nesta|nesse|nessa)\s+(?:arquivo|ficheiro|playbook|m[ée]todo|classe|fun[çc][ãa]o|script|consulta"
    r"|migra[çc][ãa]o|mudan[çc]a|ticket|pr|commit|refactor|tarefa|exerc[íi]cio|resposta|sess[ãa]o"
    r"|experimento|chat|conversa)\b"
    r"|\b(?:dans\s+|pour\s+)?(?:ce|cet|cette)\s+(?:fichier|m[ée]thode|classe|fonction|script"
    r"|requ[êe]te|migration|correction|changement|ticket|pr|commit|refactor(?:ing)?|t[âa]che|exercice"
    r"|r[ée]ponse|session|exp[ée]rience|chat|conversation|discussion)\b"
    r"|\b(?:in\s+)?(?:dieser|diesem|diese|dieses)\s+(?:datei|klasse|methode|funktion|skript"
    r"|abfrage|migration|[äa]nderung|ticket|pr|commit|refactoring|patch|aufgabe|[üu]bung|antwort"
    r"|sitzung|experiment|programm|code|chat|gespr[äa]ch|unterhaltung)\b"
    # this conversation: "je t'ai montré … tout à l'heure"
    r"|\bje\s+t['\u2019]ai\s+montr|\btout\s+[àa]\s+l['\u2019]heure\b"
)
# "this time" in other languages: "Denk dran, diesmal erst … laufen zu lassen".
THIS_TIME = (
    r"\b(?:diesmal|dieses\s+mal|esta\s+vez|cette\s+fois|questa\s+volta|deze\s+keer|tym\s+razem"
    r"|desta\s+vez|dessa\s+vez)\b"
)
# "for the next questions" in other languages: "für die nächsten Fragen", "para las próximas
# preguntas", "pour les prochaines questions".
NEXT_QUESTIONS = (
    r"\bf[üu]r\s+die\s+n[äa]chsten\s+(?:fragen|antworten|schritte|minuten|stunden)\b"
    r"|\bpara\s+(?:las|as)\s+pr[óo]ximas\s+(?:preguntas|perguntas|respuestas|respostas)\b"
    r"|\bpour\s+les\s+prochaines\s+(?:questions|r[ée]ponses|minutes|heures)\b"
    r"|\bper\s+le\s+prossime\s+(?:domande|risposte)\b"
    r"|\bvoor\s+de\s+volgende\s+(?:vragen|antwoorden)\b"
    r"|\b(?:na|dla)\s+(?:nast[ęe]pne|kolejne|nast[ęe]pnych|kolejnych)\s+(?:pytania|pyta[ńn]|odpowiedzi)\b"
)
# A German step to take: an infinitive with "zu" and no subject of its own ("Vergiss nicht, die
# alte Option als deprecated zu markieren", "… im Changelog einzutragen"), not a statement
# ("Merk dir: wir nutzen uv, um Builds reproduzierbar zu machen", "…, dass wir …").
STEP = (
    r"^(?![^.]*\b(?:dass|wir|ich|(?<!bevor\s)(?<!wenn\s)(?<!nachdem\s)(?<!sobald\s)du|er|man|ihr"
    r"|um)\b)[^.]*(?:\bzu\s+\w+(?:en|ern|eln)\b"
    # a separable verb takes it inside: "die Änderungen im Changelog einzutragen"
    r"|\b(?:an|auf|aus|ein|mit|nach|vor|zu|ab|um|weg|zur[üu]ck|hin|her|fest|frei|dar|bei|los|hoch"
    r"|runter|rein|raus|weiter|zusammen|durch|hinzu|dazu)zu\w+en\b)"
)
# A task asked in another language, by its imperative: "Scrivi una migrazione Flyway …",
# "Añade un test …", "Schreib mir …", "Ajoute …", "Voeg … toe", "Dodaj …", "Adicione …".
TASK = (
    r"^(?:scrivi|aggiungi|crea|correggi|fai|controlla|sistema|rimuovi|aggiorna|escribe|escribir"
    r"|añade|agrega|corrige|arregla|revisa|quita|actualiza|haz|schreib|schreibe|füg|erstell"
    r"|erstelle|korrigier|mach|prüf|pr[üu]fe|entfern|aktualisier|écris|ajoute|crée"
    r"|fais|vérifie|supprime|mets|schrijf|voeg|maak|controleer|verwijder|pas|napisz|dodaj"
    r"|popraw|zrób|sprawdź|usuń|zaktualizuj|escreva|escreve|adicione|adiciona|crie|cria"
    r"|corrija|faça|faz|verifique|remova|atualize)\b"
)
