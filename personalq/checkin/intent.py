"""The intent record: what a request asks of a checkpoint, separated from what it asks of the image.

Selection phrases (time, version, usage, negation, "my ... model") are recorded with their spans, so the
same parse yields both the constraints for reasoning and the cleaned prompt for generation.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from dataclasses import dataclass, field
from typing import Callable, Literal, Sequence

from wordfreq import zipf_frequency

from personalq.checkin.lexicon import (
    ASKING_PHRASES,
    DRAW_ME,
    FIELD_BREAK,
    FIELD_LABEL,
    MODEL_COMPOUNDS,
    MODEL_DOING,
    STYLE_PATTERNS,
    SUBJECT_PATTERNS,
    canonical_style,
    singular,
)
from personalq.checkin.strength import Strength, read_strengths
from personalq.checkin.timeparse import Window, find_times
from personalq.checkin.tokens import REQUEST_LANGUAGES

Order = Literal["newest", "oldest"]

_ORDINALS = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "1st": 1,
    "2nd": 2,
    "3rd": 3,
    "4th": 4,
    "5th": 5,
    "6th": 6,
    "7th": 7,
    "8th": 8,
    "9th": 9,
    "10th": 10,
    # Spanish, Italian, Portuguese, French: "la segunda versión", "la terza versione", "la deuxième version"
    "primera": 1,
    "segunda": 2,
    "tercera": 3,
    "cuarta": 4,
    "quinta": 5,
    "prima": 1,
    "seconda": 2,
    "terza": 3,
    "primeira": 1,
    "terceira": 3,
    "première": 1,
    "deuxième": 2,
    "troisième": 3,
    # German, Russian, Indonesian: "die zweite Version", "вторая версия", "versi kedua"
    "erste": 1,
    "zweite": 2,
    "dritte": 3,
    "первая": 1,
    "вторая": 2,
    "третья": 3,
    "первую": 1,
    "вторую": 2,
    "третью": 3,
    "pertama": 1,
    "kedua": 2,
    "ketiga": 3,
}
_CJK_NUMBERS = {c: n for n, c in enumerate("一二三四五六七八九十", start=1)}
# "第二版", "第3版": the n-th version in Chinese and Japanese
_CJK_ORDINAL_VERSION = re.compile(r"第(?P<n>[一二三四五六七八九十]|\d+)(?:个|個)?(?:版本?|バージョン)")
VERSION_WORD = re.compile(r"(?i)^(?:v\.?\d+(?:\.\d+)*|\d+(?:\.\d+)+)$")  # a version said alone: "v2", "0.5"
_VERSION = re.compile(
    r"(?:(?<![a-z0-9])(?:v\.?|ver\.?\s*|version\s*|versi[oó]n[e]?\s*|vers[ãa]o\s*|versi\s*|epoch\s*|ep\s*|верси[яиюей]\s*)"
    r"(?P<n>\d+(?:\.\d+)*)"
    r"(?:[a-z](?![a-z0-9]))?"  # a release letter after the number: "v1.2R", "v3b"
    r"(?P<qual>(?:[\s_-]+(?:dim|rank|alpha)\d+)*)(?![a-z0-9])"
    # "2.0版", "2.0那版", "2.0那个"
    r"|(?P<n2>\d+(?:\.\d+)*)\s*(?:[那这那個这個的の]\s*)?(?:版本?|バージョン|号|个|個|ほう|方))",
    re.I,
)
# a kind said of every part: in the plural, or refused ("both as embeddings", "no loras please")
_KINDS_FOR_ALL = re.compile(
    r"(?i)\b(?:loras|locons|lycoris|embeddings|tis|models|checkpoints)\b|\b(?:no|not|without)\s+(?:the\s+)?"
    r"(?:lora|locon|embedding|ti)s?\b|\bboth\b|\ball\s+(?:as\s+)?(?:loras?|embeddings?)\b"
)
# a name with a number joined to it ("oot-32", "negmutation-2500"): one of a model's numbered files
_NUMBERED = re.compile(r"(?<![\w.])(?P<name>[^\W\d_][^\W_]*)[-_](?P<n>\d+)(?![\w.])")
# up to three words said of a version ("the wood carving version")
# "the caftan armor one" too
_VERSION_WORDS = re.compile(
    r"(?P<what>(?:[^\W_][\w'-]*\s+){0,2}[^\W_][\w'-]*)\s+(?:version|edition|ver|build)\b"
    r"|\bthe\s+(?P<one>(?:[^\W_][\w'-]*\s+){0,2}[^\W_][\w'-]*)\s+(?:one|upload|file)\b(?!\s+(?:of|who|that|which)\b)"
    # the word after it in the languages that say it so: "versão locon", "la versión chibi" (no article after it)
    r"|\b(?:vers[ãa]o|versi[óo]n|versione)\s+(?!(?:de|do|da|di|del|della|des|du|la|le|el|il|o|a)\b)"
    r"(?P<after>[^\W\d_][\w'-]*)",
    re.I,
)
# sizes, dims and step counts that name one file of a model ("the 9MB one", "64 dims", "8000 steps")
QUANTITY = re.compile(r"(?<![\w.])(?P<n>\d+)[\s-]*(?P<unit>mb|dims?|steps?|epochs?)(?![a-z])", re.I)
# a bare decimal after a name is its version ("namoridane 5.0"), unless a base model's ("sd 1.5", "for 2.1"); after a
# kind word, in brackets, of up to three numbers ("(embedding 2.0.0)", "makima embedding (1.1)"), never a date
_DECIMAL_VERSION = re.compile(r"(?P<pre>[^\W\d_]+)\s+(?P<n>\d+\.\d+)(?![\w.%]|\s*(?:mb|m|cm|x|kg)\b)", re.I)
_KIND_VERSION = re.compile(
    r"(?i)(?P<pre>lora|locon|lycoris|embedding|embed|emb|ti|model)\s+\(?(?P<n>\d{1,2}(?:\.\d{1,2}){1,2})\)"
)
_NOT_A_NAME = frozenset("sd sdxl xl for my stable diffusion at by of about and or to from in on version v ver".split())
_BASE_MODEL = re.compile(
    r"(?<![\w.])(?:sd\s*-?\s*|for\s+(?:my\s+|the\s+)?(?:sd\s*-?\s*)?|stable diffusion\s+)(?P<v>1\.[45]|2\.[01]|2|1|xl)"
    r"(?!\w|\.\d)",
    re.I,
)


def says_base(text: str) -> bool:
    """Is ``text`` a base model said whole ("sd1.5", "SD 2.1"): a constraint, whatever version label spells it too."""
    return _BASE_MODEL.fullmatch(text.strip()) is not None


_ORDINAL_VERSION = re.compile(
    r"(?P<lead>\b(?:the\s+|la\s+|die\s+)?(?:very\s+)?(?P<o>" + "|".join(_ORDINALS) + r")\s+)"
    r"(?P<name>[^\W\d_]+\s+)?"  # the model's name may stand between: "the third xingqiu upload"
    r"(?P<noun>version|iteration|release|build|upload|versi[oó]n[e]?|vers[ãa]o|верси[яиюей])(?!\w)"
    r"(?:\s+of(?:\s+(?:the|my|her|his|their))?(?=\s))?"  # "the first upload of the shuten douji lora"
    r"|\bversi\s+(?P<o2>" + "|".join(_ORDINALS) + r")\b",
    re.I,
)
_LATEST_VERSION = re.compile(
    r"\b(?:the\s+)?(?:latest|newest|last|most recent|highest)\s+(?:version|iteration|release|build)\b", re.I
)
# "whichever of her loras is newer": the whole clause picks the version
_WHICHEVER = r"\bwhichever(?:\s+of\s+(?:her|his|its|their|the|my|your)\s+\w+)?\s+(?:one\s+)?(?:is|was)\s+(?:the\s+)?"
_NEWEST = re.compile(
    _WHICHEVER + r"(?:newer|newest|latest|more\s+recent)\b"
    r"|\b(?:most\s+)?(?:latest|newest|newer|later|recent(?:ly)?(?:\s+(?:created|made|trained|uploaded|added))?|freshest|new)\b"
    r"|最新|一番新しい|新しい方|новейш\w*|последн\w*|самая новая|самую новую"
    # Spanish, French, Portuguese, Italian, German, Indonesian
    r"|\b(?:más|mais|più|plus)\s+(?:reciente|recente|récente|nuev[oa]|nov[oa]|nuov[oa])\b|\bderni[eè]re?\b|\búltim[oa]\b"
    r"|\bneuere?\w*|\bneueste\w*|\baktuellste\w*|\bterbaru\b|新しいほう",
    re.I,
)
_OLDEST = re.compile(
    _WHICHEVER + r"(?:older|oldest|earlier)\b"
    r"|\b(?:oldest|older|earlier|earliest|very first|first)\b"
    r"|\bold(?=\s+(?:ones?|versions?|v\d[\w.]*)\b)"  # "the old v1", "the old one"; not "an old man"
    r"|最早|最初|一番古い|古い方|古いほう|самая старая|перв\w*"
    r"|\b(?:primera|première|premier|primeira|erste\w*|pertama|ältere\w*|älteste\w*)\b"
    r"|\b(?:más|mais|più|plus)\s+(?:antigu[oa]|antig[oa]|vecchi[oa]|ancienne?)\b",
    re.I,
)
_USED = re.compile(r"\b(?:i\s+)?(?:used|ran|tried|generated with|worked with|played with)\b", re.I)
_LAST_USED = re.compile(
    r"\b(?:last|most recently|recently)\s+used\b|\bused\s+(?:it\s+)?(?:last|most recently)\b", re.I
)
_NEGATION = re.compile(
    # (Portuguese "no estilo do ..." is "in the style of ...")
    r"\b(?:not|no(?!\s+(?:estilo|fundo|meio|topo)\b)|without|except|excluding|other than|but not|anything but"
    r"|isn't|n't)\s+"
    r"(?:the\s+|a\s+|an\s+|my\s+|her\s+|his\s+|their\s+)?"  # "lana (not her mom)"
    r"(?P<what>[\w.-]*\w(?:\s+(?!one\b|model\b|version\b)[\w.-]*\w)?)(?:\s+(?:one|model|version|ones))?",
    re.I,
)
# where the person keeps the checkpoints: "in my collection", "from the repo" say nothing of the picture
_COLLECTION_TALK = re.compile(
    r"(?i)\b(?:in|from|of)\s+(?:my|the|your)\s+(?:collection|repo|repository|models|loras)\b"
    r"(?!\s+(?:lora|style|model|embedding)\b)"
)
# words that make a negation one about files: "not the anime one", "no lora", "without the offset version"
_MODEL_TALK = re.compile(
    r"(?i)\b(?:one|ones|model|models|version|versions|lora|loras|embedding|file|files|upload|uploads|ti|locon)\b"
)
TRAILING_FOREIGN = (
    "de|del|des|du|da|di|con|avec|com|mit|der|die|das|dengan|pakai|usando|el|la|le|il|lo|im|beim|zum|zur|nel|nella|dans"
    "|sur|em|в|во|с|со|로|으로|를|을|에|도|은|는"
)
# what may follow a "one" that stands for a checkpoint ("the one from april", "one i used"); before any other word
# it counts or stands for what is drawn ("one attendant", "holding one leg", "a silver one drifting")
_AFTER_ONE = "from|by|with|for|i|you|that|which|in|on|at|pls|please|lora|model|version|v\\d+"
_FILLER = re.compile(  # bounded by ASCII letters only: "那个embedding画" says "embedding" between Chinese words
    r"(?<![A-Za-z0-9-])(?:please|pls|plz|use|using|load|pick|the one|ones|"
    r"one(?=\s*(?:$|[^\w\s]|\b(?:" + _AFTER_ONE + r")\b))|"
    # "model" where it stands for the checkpoint, not before what it is a model of ("a model kit", "model train")
    r"models?(?!\s+(?:" + "|".join(sorted(MODEL_COMPOUNDS)) + r"|of|" + MODEL_DOING + r")\b)|"
    r"checkpoint|checkpoints|"
    r"lora|loras|dreambooth|embedding|i used|lol|lmao|thx|thanks|bitte|por favor|porfa|per favore|"
    r"merci|valeu|gracias|grazie|danke|obrigad[oa]|terima kasih|(?:malen|zeichnen)(?=\s*\?)|"
    r"s'il (?:te|vous) pla[iî]t|svp|stp|tolong|dong|usa|usar|usando|utilise|utilisez|benutze|nutze|pakai|"
    r"пожалуйста)(?![A-Za-z0-9-])"
    r"|お願いします|お願い|ください|부탁해요|부탁합니다|부탁해|주세요",  # "please" in Japanese and Korean
    re.I,
)
# the label before what to draw in a request pasted from a tool ("loras: ..., celtpunk. prompt: dancing ...")
_PROMPT_LABEL = re.compile(r"(?i)(?<![\w-])(?:prompt|positive|scene)\s*:\s*")
# words before a date that make it the checkpoint's, whatever the year ("my logo from 2021")
_PROVENANCE = re.compile(
    r"\b(?:from|since|(?:created|made|trained|uploaded|downloaded|added|got|bought)(?:\s+(?:in|on|during))?)\s+(?:the\s+)?$",
    re.I,
)
# words that only belong to a selection phrase they precede ("created in April", "from 2025", "of my teddy")
_DANGLING = re.compile(
    r"(?:\b(?:i\s+)?(?:created|made|trained|built|used)\s+)?"
    r"(?:\b(?:in|from|on|during|since|of|at|de|des|du|da|di|del|aus|von|dari|из|от|в|во|na|no|em|en|nel|nella|im)\s+)?"
    r"(?:\b(?:the|my|la|el|le|o|der|die|das)\s+)?$",
    re.I,
)
# Chinese and Japanese, written without spaces (Korean and Thai space their words)
_HAN_KANA = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_LEADING_DETERMINER = re.compile(r"^(?:the|my|that|this|el|la|le|il|o|der|die|das)\s+", re.I)
_LEAD = re.compile(
    r"^[\s¿¡]*(?:(?:ok(?:ay)?|so|hey|hi|hello|yo|um|uh|ugh|hmm|welp|oh|ah|well|alright|got|(?:do\s+)?(?:you|u)\s+(?:have|got)"
    # greetings of other languages ("hola!", "salut,", "oi!")
    r"|hola|salut|oi|ol[áa]|hallo|ciao|halo|hai|привет)\b[\s,.!]*)*"
    r"(?:(?:please|pls|plz)\s+)?"
    r"(?:(?:can|could|would) (?:you|u)\s+)?(?:(?:please|pls|plz)\s+)?"
    r"(?:generate|make|create|render|draw|paint|do|show me|give me|gimme|pull up|i want|i'd like|i would like|i need"
    r"|need|do i have|is there|are there|(?:can|could|may) (?:i|we) (?:get|have|see)|i'?d love|i would love|id like"
    r"|quiero|quer[ií]a|quero|je voudrais|voudrais|je veux|ich m[öo]chte|m[öo]chte|vorrei|voglio|aku mau|saya mau"
    r"|(?:kannst|k[öo]nntest)(?: du)?(?: mir)?"  # "kannst du ... malen?": its verb ends the sentence (see _FILLER)
    # the same requests in other languages: "dibuja", "dessine-moi", "zeichne bitte", "gambarkan", "нарисуй"
    r"|zeichne(?:\s+bitte)?"
    r"|tolong\s+gambar(?:kan)?|"
    + "|".join(map(re.escape, sorted(DRAW_ME | set(ASKING_PHRASES), key=len, reverse=True)))
    + r")\s+(?:me\s+|moi\s+|mir\s+|a\s+(?=[A-ZÀ-Ý]))?",
    re.I,
)
# the subject said again as a pronoun where a sentence of the picture begins ("... lora? i want her smirking beside a
# torii gate", "she should be swinging her naginata"): the trigger stands for her
_RESTATED_SUBJECT = re.compile(
    r"(?i)(?:^|(?<=[.!?;]\s))(?:(?:and\s+|so\s+)?(?:i\s+)?(?:want|need|'d\s+like|would\s+like|wanna\s+see)"
    r"\s+(?:her|him|them)(?:\s+to\s+be)?|(?:she|he|they)\s+(?:should|could|can|will|would|must)\s+be)\s+(?=\w)"
)
_STOP = frozenset(
    "a an the my me i you it its of on in at to for with from by and or but is was be one ones model models "
    "checkpoint checkpoints lora loras version please some any that this those these which what who where when used "
    "use using made created trained build built new old latest newest recent recently oldest earliest first last most "
    "style styled look looking like".split()
)
_WORD = re.compile(r"[a-z0-9][a-z0-9'+.-]*[a-z0-9]|[a-z0-9]", re.I)
# a scene or action phrase: what the image should show around the subject, not which checkpoint to use
_CONTEXT = re.compile(
    r"\b(?:on|in|at|near|under|over|by|beside|inside|against|during|wearing|holding|sitting|standing|running|"
    r"eating|playing|riding|walking|flying|swimming|sleeping|with)\b.*$",
    re.I,
)


# talk about which version, said around a version's words: "the reanime version", "the version that has ...",
# "the halloween version of"; the words stay evidence, the talk leaves the prompt
_NOT_A_LABEL_WORD = r"(?!(?:a|an|in|on|at|with|of|and|to|for|from|by|is|it|my)\b)"
_VERSION_TALK = re.compile(
    rf"(?:\bthe\s+)?(?:{_NOT_A_LABEL_WORD}[^\W_][\w'-]*\s+){{0,2}}(?:version|edition|variant|build|upload)s?"
    r"(?:\s+(?:of|that\s+(?:has|have|does|is|can)|which\s+(?:has|is)|with))?\b"
    r"|\b(?:the\s+)?(?:version|edition|variant)\s+(?:that|which)\s+(?:has|have|does|is|can)\b"
    r"|\bthe\s+original\b(?=\s*(?:[,.;:!?]|$|,?\s+not\b))"
    # "версия под AoM3", "la versión para anime": the version and what it is for, in other languages
    r"|\b(?:верси[яиюей]|versi[oó]n[e]?|vers[ãa]o)(?:\s+(?:под|для|para|per|pour)\s+[^\s,.;:!?]+)?"
    # "the flat-color one", "the 6500 steps one", "the guts_05 file"
    rf"|\bthe\s+(?:{_NOT_A_LABEL_WORD}[^\W_][\w'.-]*\s+){{1,3}}one\b(?!\s+(?:of|who|that|which)\b)"
    r"|\bthe\s+[^\W_][\w.-]*\s+file\b",
    re.I,
)
# what a version is said to be, to the clause's end: "the version the card says blends more easily with other stuff",
# "the one that was trained on official art", "the version trained on niji 5 generations" ("the newer version with
# a castle behind her" keeps the castle)
_VERSION_CLAUSE = re.compile(
    r"\bthe\s+(?:version|one|build|upload)\s+"
    r"(?:(?:that|which|where|whose|trained|made|based|tuned|meant|labell?ed|marked|called|named|uploaded)\s+"
    r"|(?=the\s+(?:card|page|author|creator|description)\b))[^,.;:!?—–()]+",
    re.I,
)
# a negative embedding's placement: "put X in the negatives", "X as negative", "in the neg"
_NEGATIVE_TALK = re.compile(
    r"\b(?:put\s+(?:[\w.-]+\s+){0,3}?)?"
    r"(?:in(?:to)?\s+(?:the\s+|my\s+)?neg(?:ative)?s?(?:\s+prompt)?|as\s+(?:a\s+)?neg(?:ative)?(?:\s+(?:embedding|prompt))?)\b",
    re.I,
)


@dataclass
class Intent:
    text: str
    now: dt.datetime
    subjects: list[str] = field(default_factory=list)  # canonical subjects recognised from the lexicon
    terms: list[str] = field(default_factory=list)  # content words that are not lexicon subjects (names, scenes ...)
    words: list[str] = field(default_factory=list)  # every content word, subject words included, for name matching
    context: list[str] = field(default_factory=list)  # words of scene phrases ("on a beach", "wearing a hat")
    styles: list[str] = field(default_factory=list)
    created: list[Window] = field(default_factory=list)  # alternatives; empty = no constraint
    used: list[Window] = field(default_factory=list)
    order: Order | None = None  # by creation date
    used_order: bool = False  # "the one I used last"
    version: float | None = None
    version_parts: tuple[int, ...] = ()
    # said as "the third version": where no label numbers it, the third by date; "the third upload": by date always
    version_ordinal: Literal["label", "upload"] | None = None
    version_qualifiers: list[str] = field(default_factory=list)
    version_order: Order | None = None  # "latest version", "first version"
    version_words: frozenset[str] = frozenset()  # words said of a version: "the wood carving version"
    version_word_spans: list[tuple[int, int]] = field(default_factory=list)  # where they were said
    version_bare: bool = False  # a decimal without "v" ("namoridane 5.0"): a model's name may say it too
    version_letter: str = ""  # a version called by a letter: "version B"
    excluded: list[str] = field(default_factory=list)  # negated words (styles, qualifiers, names)
    # where each was ruled out ("not the anime one"), and the word: a negation that rules out no candidate
    # describes the picture ("a street without cars") and goes back into the prompt (see keep_scene_negations)
    negations: list[tuple[tuple[int, int], str]] = field(default_factory=list)
    quantities: list[tuple[str, str]] = field(default_factory=list)  # "9MB", "64 dims", "8000 steps": (number, unit)
    numbered: list[tuple[str, str]] = field(default_factory=list)  # "oot-32": (name, number)
    base_models: list[str] = field(default_factory=list)  # "for 2.1", "the SD 1.5 one": sd-2.1, sd-1.5
    base_span: tuple[int, int] | None = None  # where the first was said: like a version, it follows the name
    selection_spans: list[tuple[int, int]] = field(default_factory=list)
    talk_spans: list[tuple[int, int]] = field(default_factory=list)  # selection talk still read as evidence
    style_spans: list[tuple[int, int]] = field(default_factory=list)  # where the styles were named
    version_span: tuple[int, int] | None = None  # where a version number was named ("hanfu lora v3.0-ming")
    # every version number said, with where ("mint v2.0 at 0.8, ..., bisonham v2 style"): each of a composition's
    # parts takes the one said right after it
    version_marks: list[tuple[tuple[int, ...], tuple[int, int]]] = field(default_factory=list)
    dated: bool = False  # a date said of the checkpoint ("from 2021", "trained in May"), not of the picture
    strengths: list[Strength] = field(default_factory=list)  # "at 0.6", "a little of": how strongly, where said
    # a composed part's own words, its name and its clause ("genshin_yae at 0.9"), where what it asks of its own
    # model is read; None for a single pick
    part_text: str | None = None

    @property
    def kinds_said(self) -> str:
        """Where the kind of model asked for is read: a part's own words, unless the request says kinds for all its
        parts ("nico robin and weiss schnee loras", "no embeddings: ...")."""
        if self.part_text is None or _KINDS_FOR_ALL.search(self.text):
            return self.text
        return self.part_text

    def describe(self) -> str:
        bits = []
        if self.subjects or self.terms:
            bits.append("subject " + ", ".join(self.subjects + self.terms[:3]))
        if self.styles:
            bits.append("style " + ", ".join(self.styles))
        if self.created:
            bits.append("created " + " or ".join(w.label for w in self.created[-3:]))
        if self.used:
            bits.append("used " + " or ".join(w.label for w in self.used))
        if self.version is not None or self.version_qualifiers:
            bits.append(
                "version "
                + " ".join([f"{self.version:g}" if self.version is not None else "", *self.version_qualifiers]).strip()
            )
        if self.excluded:
            bits.append("not " + ", ".join(self.excluded))
        if self.order:
            bits.append(f"{self.order} first")
        return "; ".join(bits)


def overlaps(span: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    return any(span[0] < e and s < span[1] for s, e in spans)


@functools.lru_cache(maxsize=8)
def _qualifier_pattern(qualifiers: frozenset[str]) -> re.Pattern:
    """One alternation for the repository's whole qualifier vocabulary (hundreds of words on real repositories:
    a pattern per word per request would recompile them all through ``re``'s bounded cache)."""
    words = sorted(qualifiers, key=lambda w: (-len(w), w))
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b")


def parse_intent(
    text: str, now: dt.datetime, qualifiers: frozenset[str] = frozenset(), files: list[tuple[int, int]] = ()
) -> Intent:
    """Parse ``text``; ``qualifiers`` are version qualifiers known in the repository ("pruned", "offset"), ``files``
    the spans that write a file's trigger word or version label whole ("wcat8-v1-2000": no year 2000, no v1).

    Each step records the phrases it reads in ``selection_spans``, and a later step skips what overlaps them:
    strengths first ("at 0.6"), then negations, dates, versions, quantities and base models, qualifiers, recency
    words; styles and subjects are read around all of those, and the remaining words are the request's content.
    """
    intent = Intent(text=text, now=now)
    intent.strengths = read_strengths(text)
    intent.selection_spans.extend(s.span for s in intent.strengths)  # "at 0.6" is no version and no scene
    _read_negations(intent)
    files = [span for span in files if not overlaps(span, intent.selection_spans)]
    intent.selection_spans.extend(files)  # a name, read as words: no step reads a date or a version inside it
    _read_times(intent)
    _read_versions(intent)
    _read_file_details(intent)
    _read_version_words(intent)
    _read_qualifiers(intent, qualifiers)
    _read_order(intent)
    _read_styles(intent)
    subject_spans = _read_subjects(intent)
    intent.selection_spans = [span for span in intent.selection_spans if span not in files]
    _read_words(intent, subject_spans)
    _read_talk(intent)
    return intent


def _read_talk(intent: Intent) -> None:
    """Phrases that only talk about which file ("the reanime version", "in the negatives"): the prompt leaves
    them out, though their words still say which checkpoint."""
    for pattern in (_VERSION_TALK, _NEGATIVE_TALK, _VERSION_CLAUSE):
        intent.talk_spans.extend(m.span() for m in pattern.finditer(intent.text))
    intent.talk_spans.extend(span for _, span in intent.version_marks[1:])  # the versions of a composition's parts
    intent.selection_spans.extend(m.span() for m in _COLLECTION_TALK.finditer(intent.text))


_WORDS_BEFORE = 40  # how far before a "no" the word it follows is looked for


_DESCRIBING_ORDER = {"new", "newer", "newest", "old", "older", "oldest", "latest", "earlier", "later", "first", "last"}


def inside_name(text: str, start: int) -> bool:
    """ "toyosatomimi no miko", "Majo No Tabitabi": a Japanese "no" at ``start`` between two words of a name, not
    "no offset"."""
    before = text[max(0, start - _WORDS_BEFORE) : start]
    return (
        text[start : start + 3].lower() == "no "
        and bool(re.search(r"[^\W\d_]{2,}\s+$", before))
        and not bool(
            re.search(r"(?i)\b(?:but|and|with|or|please|pls|one|lora|model|version|style|embedding)\s+$", before)
        )
    )


def _read_negations(intent: Intent) -> None:
    """ "not the offset one", "without anime", "not the newer v2": the words ruled out (an order word before another
    word only describes it)."""
    for m in _NEGATION.finditer(intent.text):
        if inside_name(intent.text, m.start()):
            continue
        what = m.group("what").lower()
        words = what.split()
        if len(words) > 1 and words[0] in _DESCRIBING_ORDER:
            what, words = words[1], words[1:]
        # keep only the first word unless the pair is a known style phrase ("oil painting"), or the second is a
        # version the first describes ("not the deprecated v1")
        style = canonical_style(what)
        if style == what and len(words) > 1:
            what = words[1] if VERSION_WORD.match(words[1]) else words[0]
        intent.excluded.append(canonical_style(what))
        intent.selection_spans.append(m.span())
        aside = intent.text[: m.start()].rstrip().endswith("(")  # "(not star rail)": said of the checkpoint
        if not _MODEL_TALK.search(m.group(0)) and not aside:  # so is "not the anime one"
            intent.negations.append((m.span(), canonical_style(what)))


def keep_scene_negations(intent: Intent, ruled_out: Callable[[str], bool]) -> None:
    """Give the prompt back each negation whose word rules out no candidate (``ruled_out`` says which do): "a
    street without cars", "except the whole family is robots" describe the picture, not the checkpoint."""
    scene = {span for span, word in intent.negations if not ruled_out(word)}
    intent.selection_spans = [span for span in intent.selection_spans if span not in scene]
    intent.negations = [(span, word) for span, word in intent.negations if span not in scene]


def _read_times(intent: Intent) -> None:
    """Dates: windows of use near a usage verb ("the one I used yesterday"), of creation otherwise; and "the one
    I used last"."""
    text, spans = intent.text, intent.selection_spans
    used_context = bool(_USED.search(text))
    for found in find_times(text, intent.now):
        if overlaps(found.span, spans):
            continue
        if used_context and _USED.search(text[max(0, found.span[0] - 30) : found.span[1] + 30]):
            intent.used.extend(found.windows)
        else:
            intent.created.extend(found.windows)
            lead = re.match(r"(?i)(?:(?:from|since|in|on|during)\s+)*", text[found.span[0] :]).group(0)
            intent.dated = intent.dated or bool(_PROVENANCE.search(text[: found.span[0]] + lead))
        spans.append(found.span)
    if _LAST_USED.search(text):
        intent.used_order = True
        spans.append(_LAST_USED.search(text).span())


# a version called by a letter, said alone before a stop: "inner thigh vents, version B, on a girl"
_LETTER_VERSION = re.compile(r"\b(?:version|ver\.?|variant|type)\s+(?P<letter>[a-z])(?=\s*(?:[,.;:!?)—–-]|$))", re.I)
# a clause that says what a version is, right after it: "the v3 where flip aug was turned off", up to a stop
_SAID_OF_VERSION = re.compile(r"\s+(?:where|that|which|whose)\s+[^,.;:!?—–()]+", re.I)


def version_number(parts: tuple[int, ...]) -> float:
    """A version's parts as one number: (2, 1) -> 2.1, (3,) -> 3.0."""
    return float(f"{parts[0]}.{''.join(str(p) for p in parts[1:]) or 0}")


def _read_versions(intent: Intent) -> None:
    """The first version number ("v3.0-ming", "epoch 8"), an ordinal version ("the second version") and "the
    latest version"."""
    text, spans = intent.text, intent.selection_spans
    said = [m for m in _VERSION.finditer(text) if not overlaps(m.span(), spans)]
    intent.version_marks = [
        (tuple(int(p) for p in (m.group("n") or m.group("n2")).split(".")), m.span()) for m in said
    ]
    if said:
        m, (parts, _) = said[0], intent.version_marks[0]
        intent.version_parts = parts
        intent.version = version_number(parts)
        intent.version_qualifiers += [q.lower() for q in re.split(r"[\s_-]+", m.group("qual") or "") if q]
        spans.append(m.span())
        intent.version_span = m.span()
        if said_of := _SAID_OF_VERSION.match(text, m.end()):  # "the v3 where flip aug was turned off"
            spans.append(said_of.span())
    else:
        for m in sorted([*_DECIMAL_VERSION.finditer(text), *_KIND_VERSION.finditer(text)], key=lambda m: m.start()):
            if m.group("pre").lower() not in _NOT_A_NAME and not overlaps(m.span("n"), spans):
                intent.version_parts = tuple(int(p) for p in m.group("n").split("."))
                intent.version = version_number(intent.version_parts)
                intent.version_bare = True
                spans.append(m.span("n"))
                intent.version_span = m.span("n")
                break
    if not said and (m := _LETTER_VERSION.search(text)) and not overlaps(m.span(), spans):
        intent.version_letter = m.group("letter").lower()
        spans.append(m.span())
    if (m := _ORDINAL_VERSION.search(text)) and not overlaps(m.span(), spans):
        intent.version = float(_ORDINALS[(m.group("o") or m.group("o2")).lower()])
        intent.version_parts = (int(intent.version),)
        intent.version_ordinal = "upload" if (m.group("noun") or "").lower() == "upload" else "label"
        if m.group("name"):  # the name between is the model's, not talk of which version
            spans.extend([(m.start(), m.end("lead")), (m.start("noun"), m.end())])
        else:
            spans.append(m.span())
    elif (m := _CJK_ORDINAL_VERSION.search(text)) and not overlaps(m.span(), spans):
        n = m.group("n")
        intent.version = float(_CJK_NUMBERS.get(n) or int(n))
        intent.version_parts, intent.version_ordinal = (int(intent.version),), "label"
        spans.append(m.span())
    if (m := _LATEST_VERSION.search(text)) and not overlaps(m.span(), spans):
        intent.version_order = "newest"
        spans.append(m.span())


def _read_version_words(intent: Intent) -> None:
    """The words a request says of the version it wants, before "version" or "edition" ("the wood carving
    version", "the light version") or between "the" and "one" ("the caftan armor one")."""
    said = list(_VERSION_WORDS.finditer(intent.text))
    intent.version_words = frozenset(
        word.lower()
        for m in said
        for word in re.findall(r"[^\W_]+", m.group("what") or m.group("one") or m.group("after"))
    )
    intent.version_word_spans = [m.span() for m in said]


def _read_file_details(intent: Intent) -> None:
    """What names one file of a model: quantities ("the 9MB one", "64 dims"), base models ("for SD 1.5") and
    numbered names ("oot-32"; kept as words too, since they also name the model)."""
    text, spans = intent.text, intent.selection_spans
    intent.numbered = [
        (m.group("name").lower(), m.group("n")) for m in _NUMBERED.finditer(text) if not overlaps(m.span(), spans)
    ]
    for m in QUANTITY.finditer(text):
        if not overlaps(m.span(), spans):
            intent.quantities.append((m.group("n"), m.group("unit").lower().rstrip("s")))
            spans.append(m.span())
    for m in _BASE_MODEL.finditer(text):
        if not overlaps(m.span(), spans):
            v = m.group("v").lower()
            intent.base_models.append({"xl": "sdxl", "2": "sd-2", "1": "sd-1"}.get(v, f"sd-{v}"))
            spans.append(m.span())
            intent.base_span = intent.base_span or m.span()


def _read_qualifiers(intent: Intent, qualifiers: frozenset[str]) -> None:
    """The repository's version qualifiers named anywhere in the request ("the pruned one")."""
    if qualifiers:
        spans = intent.selection_spans
        for m in _qualifier_pattern(qualifiers).finditer(intent.text.lower()):
            if not overlaps(m.span(), spans):
                intent.version_qualifiers.append(m.group())
                spans.append(m.span())


# "on new year's morning", "in new york": a place or a time of the picture, not the newest model
_PLACED_NEW = re.compile(r"(?i)\b(?:on|in|at|of|from|to|into|during|for)\s+new$")


def _read_order(intent: Intent) -> None:
    """Recency words: "the newest", "my first". Newest is not read when the request asks for the one used last
    ("the one I used most recently": its recency is about use)."""
    text, spans = intent.text, intent.selection_spans
    newest = (
        m for m in _NEWEST.finditer(text) if m.group().lower() != "new" or not _PLACED_NEW.search(text, 0, m.end())
    )
    if not intent.used_order and (m := next(newest, None)) and not overlaps(m.span(), spans):
        intent.order = "newest"
        spans.append(m.span())
    elif (m := _OLDEST.search(text)) and not overlaps(m.span(), spans):
        intent.order = "oldest"
        spans.append(m.span())


def _read_styles(intent: Intent) -> None:
    """The lexicon's styles outside the selection phrases, each once, in the lexicon's order."""
    spans, style_spans = intent.selection_spans, intent.style_spans
    for pattern, canonical, _ in STYLE_PATTERNS:
        for m in pattern.finditer(intent.text):
            if not overlaps(m.span(), spans + style_spans):
                if canonical not in intent.styles:
                    intent.styles.append(canonical)
                style_spans.append(m.span())


def _read_subjects(intent: Intent) -> list[tuple[int, int]]:
    """The lexicon's subjects outside the selection and style phrases, in the order the request names them;
    returns where they were named."""
    spans, style_spans = intent.selection_spans, intent.style_spans
    subject_spans: list[tuple[int, int]] = []
    for pattern, canonical, _ in SUBJECT_PATTERNS:
        for m in pattern.finditer(intent.text):
            if not overlaps(m.span(), spans + style_spans + subject_spans):
                subject_spans.append(m.span())
                intent.subjects.append((m.start(), canonical))  # type: ignore[arg-type]
    intent.subjects = list(dict.fromkeys(c for _, c in sorted(intent.subjects)))  # type: ignore[misc]
    return subject_spans


def _read_words(intent: Intent, subject_spans: list[tuple[int, int]]) -> None:
    """The content words left: ``words`` (every one, for name matching), ``terms`` (those that are not lexicon
    subjects) and ``context`` (words of the scene phrase, "on a beach", that are not subjects)."""
    text = intent.text
    covered = intent.selection_spans + intent.style_spans
    scene = _CONTEXT.search(text)
    scene_start = scene.start() if scene else len(text)
    for m in _WORD.finditer(text):
        if overlaps(m.span(), covered):
            continue
        # "oot-64" is matched as "oot" + "64": card names are split the same way
        for part in dict.fromkeys([m.group(0).lower().strip("'"), *re.split(r"[-_.]", m.group(0).lower())]):
            if not part or part in _STOP or (part.isdigit() and "-" not in m.group(0)):
                continue
            term = singular(part) if not part.isdigit() else part
            if m.start() >= scene_start and not overlaps(m.span(), subject_spans):
                if term not in intent.context:
                    intent.context.append(term)
                continue
            if term not in intent.words:
                intent.words.append(term)
            if not overlaps(m.span(), subject_spans) and term not in intent.terms:
                intent.terms.append(term)


_OPTION = re.compile(
    r"^\s*(?:the\s+)?(?:(?P<o>" + "|".join(_ORDINALS) + r")|(?:option|number|no\.?|#)\s*(?P<n>\d+)|(?P<d>\d))"
    r"(?:\s+(?:one|option|choice))?\s*[.!]?\s*$",
    re.I,
)


def option_position(text: str) -> int | None:
    """The 0-based option an answer points at by position ("the second one", "option 2", "3"), if it does."""
    m = _OPTION.match(text)
    if not m:
        return None
    number = _ORDINALS[m.group("o").lower()] if m.group("o") else int(m.group("n") or m.group("d"))
    return number - 1 if number >= 1 else None


def _merge(spans: list[tuple[int, int]], text: str = "") -> list[tuple[int, int]]:
    """Overlapping spans as one, and spans only an "x" apart ("spy x family": a title's words) or a joining mark
    ("ganyu" and "v2" of "ganyu-v2": one written word)."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        between = text[merged[-1][1] : start] if merged else ""
        if merged and (start <= merged[-1][1] or between.strip().lower() == "x" or re.fullmatch(r"[-_.]+", between)):
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _joined(text: str, spans: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` with those an underscore or a dot joins made one ("fallen" and "down" of "use fallen_down", "no" and
    "505" of "No.505": the whole word named the model)."""
    joined: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if joined and text[joined[-1][1] : start] in ("_", "."):
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
    return joined


def _inside_compound(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is part of a word joined by underscores ("xl" of "frostnymph_xl", a trigger the
    prompt keeps whole)."""
    return (start > 0 and text[start - 1] == "_") or text[end : end + 1] == "_"


def _lead_in(text: str, start: int, keep_determiner: bool) -> str:
    """The words before ``start`` that only lead into the span there ("created in", "of my"); but before the name
    the trigger replaces they stay, its determiner ("my dog" -> "a <biscuit-v2>") and what leads into it ("a horde of
    <kkw-demons>", "in the <alleyway>")."""
    return "" if keep_determiner else _DANGLING.search(text[:start]).group(0)


# where the words that named a checkpoint stood: its trigger goes there; one mark per checkpoint of a composed
# picture, from Unicode's private use area, which no request keeps (Check-in's cleaner blanks the range)
SLOTS = tuple(chr(0xE000 + i) for i in range(16))
SLOT = SLOTS[0]
SLOT_RANGE = re.compile("[\ue000-\ue00f]")


# words a sentence of chat is made of ("i think the <lora> would fit.", "ok so i have this idea."): a sentence of
# nothing else says nothing of the picture
_CHAT_WORDS = frozenset(
    "i i'm im me my we us you u it it's this that that's these the a an so ok okay yeah yes well um uh hmm and then "
    "also just all ugh oh ah welp "
    "think guess reckon suppose believe feel thought thinking have had got idea would will should could might must "
    "fit fits work works do does be is was good great perfect best nice fine cool right here there maybe probably "
    "definitely want wanted like love prefer go going let's lets try with for use using one".split()
)
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")


_BRACKETED = re.compile(r"\(([^()]*)\)")
_LITTLE_ZIPF = 6.0  # as frequent as a language's articles and prepositions ("le", "das", "by")
_CUT_LEFT = frozenset("lora loras locon lycoris embedding ti model".split())  # kind words a cut may leave


def _only_little_words(inside: str) -> bool:
    """Is a bracket's inside, once the model's name was cut from it, only articles, prepositions and kind words ("le
    by", "das TI")?"""
    said = re.findall(r"[^\W\d_]+", inside.lower())
    return bool(said) and all(
        w in _CUT_LEFT or any(zipf_frequency(w, lang) >= _LITTLE_ZIPF for lang in ("en", *REQUEST_LANGUAGES))
        for w in said
    )


def _unopened_closed(text: str, cut: int) -> str:
    """``text`` without the first ``cut`` round closing brackets that close nothing: those whose opening was cut with
    a name ("Pokemon LoRA (Ken Sugimori style) v2"), not a smiley's or a list's ("a 1) cat 2) dog")."""
    kept, depth = [], 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0 and cut > 0:
                cut -= 1
                continue
            depth = max(depth - 1, 0)
        kept.append(char)
    return "".join(kept)


def _without_chat(text: str) -> str:
    """``text`` without its sentences of chat; one that held where a model was named keeps only that mark."""
    kept, sentences = [], _SENTENCE.findall(text)
    for sentence in sentences:
        said = re.findall(r"[^\W\d_][\w'’]*", SLOT_RANGE.sub(" ", sentence).lower())
        if said and all(w in _CHAT_WORDS for w in said) and len(sentences) > 1:
            marks = "".join(SLOT_RANGE.findall(sentence))
            if marks:
                kept.append(f" {marks}.")
            continue
        kept.append(sentence)
    return "".join(kept)


_TRAILING = re.compile(rf"(?i)(?:\b(?:of|from|in|on|at|with|using|by|the|an?|{TRAILING_FOREIGN})\s*)+$")
# a last clause that comments on the picture or on what happens to it next: ", it'll be hilarious", "i'll upscale it"
_ASIDE = re.compile(
    r"(?i)[,;:.!?—–]\s*(?:"
    r"(?:it|that|this)(?:['’]ll|['’]d|\s+will|\s+would)\s+be\s+(?:so\s+|really\s+|very\s+|pretty\s+)?"
    r"(?:hilarious|funny|fun|cool|great|awesome|amazing|perfect|epic|cute|lovely|nice|sick)"
    r"|i(?:['’]ll|\s+will|['’]m\s+gonna)\s+(?:upscale|fix|edit|inpaint|touch\s+up|clean\s+up|crop)\b"
    r")[^,;:.!?]*[.!?]*\s*$"
)


def _words_end(text: str, words: str) -> bool:
    """Does ``text`` end with ``words`` (case and the punctuation after them aside)?"""
    return bool(re.search(rf"(?i)\b{re.escape(words.strip())}[\s.!?,;:)]*$", text))


def prompt_text(intent: Intent, naming: list[tuple[int, int]] = (), slots: Sequence[int] = ()) -> str:
    """The request with its selection phrases (and the ``naming`` spans: the words that named the
    checkpoints) removed: what the image should show. The cut that holds character ``slots[i]`` leaves
    ``SLOTS[i]`` in its place, for checkpoint i's trigger to stand where the person named it ("my dog on a beach"
    -> "a SLOT on a beach"); a cut holding several keeps them in order."""
    text = intent.text

    def held(start: int, end: int) -> list[int]:
        return [i for i, at in enumerate(slots) if start <= at < end]

    spans = sorted(
        (start, end)
        for start, end in [*intent.selection_spans, *intent.talk_spans, *_joined(text, naming)]
        if not _inside_compound(text, start, end)
    )

    def reach(start: int, end: int) -> int:  # an owner's, through the name it owns ("ishawn944's jkskirt")
        if not re.search(r"['’]s$", text[start:end]):
            return end
        for at, later in spans:
            if end <= at and not text[end:at].strip():
                end = max(end, later)
        return end

    # each span takes the words that only lead into it ("created in", "of my"), measured on the original text; not
    # those before where a trigger goes ("a girl in <maker's> <name>": "in" stays for the trigger)
    cuts = [
        (start - len(_lead_in(text, start, keep_determiner=bool(held(start, reach(start, end))))), end)
        for start, end in spans
    ]
    for start, end in reversed(_merge(cuts, text)):
        marks = " ".join(SLOTS[i] for i in held(start, end))
        text = text[:start] + f" {marks} " + text[end:]
    text = _LEAD.sub("", text)
    text = re.sub(r"(?i)^\s*(?:ok(?:ay)?\s+)?so\s+(?=\S)", "", text)  # "so <name> at a cafe": a filler opens it
    text = _RESTATED_SUBJECT.sub("", text)
    text = _FILLER.sub(" ", text)
    text = _PROMPT_LABEL.sub(" ", text)
    if len(FIELD_LABEL.findall(intent.text)) >= 2:  # "character: ... / style: ... / scene: ...": the labels go too
        text = FIELD_BREAK.sub(" ", FIELD_LABEL.sub(" ", text))
    text = _ASIDE.sub("", _without_chat(text))
    text = re.sub(r"^\s*(?:of|for|from)\s+", "", text, flags=re.I)
    text = re.sub(r"\bmost\s+", "", text, flags=re.I)
    text = re.sub(r"(?<![\w])['\"‘’“”](?![\w])", " ", text)  # quotes left around a cut name ("the 'other style'")
    text = re.sub(r"([(\[])\s*[,;]\s*|\s*[,;]\s*([)\]])", r"\1\2", text)  # "(justTNP, FFXIII)": a maker was cut
    text = re.sub(r"[(\[]\s*[)\]]", " ", text)  # brackets left around a cut phrase ("(the kozue one)")
    # "... LoRA (Ken Sugimori style) v2": the bracket's inside was cut with its opening
    text = _unopened_closed(text, intent.text.count("(") - text.count("("))
    # "(le LoRA de L_A_X)" left as "(le by)": a bracket a cut left with little words goes ("(come with me)" as written
    # stays)
    said = intent.text.casefold()
    text = _BRACKETED.sub(
        lambda m: " " if _only_little_words(m.group(1)) and m.group(0).casefold() not in said else m.group(0), text
    )
    text = re.sub(r"\s+([,.!?])", r"\1", re.sub(r"\s+", " ", text)).strip(" ,.;:-–—")
    text = re.sub(r"\s+[-–—]+(?=\s*[,;:.]|$)", "", text)  # "<trigger> -, red fox": a dash left before a break
    text = re.sub(r"([,;:])(?:\s*[,;:\-–—])+(?=\s)", r"\1", text)  # "mirelle,, dancing": the clause between was cut
    text = re.sub(r"(?<=\s)([-–—])(?:\s+[-–—])+(?=\s)", r"\1", text)  # "<trigger> — — at her desk": an aside was cut
    text = re.sub(r"(?<!\.)\.\s*\.(?!\.)", ".", text)  # "<trigger>.. warm light": the sentence between was cut
    text = re.sub(r"[,;:]\s*\.(?=\s|$)|\.\s*[,;:](?=\s)", ".", text)  # "<trigger>,. soldier": "pls" was cut
    text = re.sub(rf"(?<=[{_HAN_KANA}])\s+(?=[{_HAN_KANA}])", "", text)  # a cut between Chinese words leaves no space
    # words left leading into nothing, in any language ("..., mit der", "... pakai"); the person's own last words
    # stay ("with the headlights on")
    dangling = _TRAILING.search(text)
    if dangling and not _words_end(intent.text, dangling.group(0)):
        text = text[: dangling.start()].strip(" ,.;:-")
    # a connector whose words after it were cut ("<trigger> but, at a cafe" from "... but the older one plz, at a
    # cafe"); one the person ended a clause with stays
    text = re.sub(
        r"(?i)\s+\b(but|and|or|plus)\b(?=\s*(?:[,;.]|$))",
        lambda m: m.group(0) if re.search(rf"(?i)\b{m.group(1)}\s*(?:[,;.]|$)", intent.text) else "",
        text,
    )
    text = re.sub(r"([,;:])(?:\s*[,;:])+(?=\s)", r"\1", text)
    text = re.sub(r"^(?:of|for|from)\s+", "", text, flags=re.I)
    text = _LEADING_DETERMINER.sub("a ", text)
    text = re.sub(r"(?i)^an?\s*[,;:—–-]+\s*", "", text)  # "the lora by x from march 6: a woman ...": its article
    first = text.split()[0].lower() if text else ""
    plural = singular(first) != first  # "skyscrapers in the rain" takes no article
    names_thing = not plural and (bool(intent.subjects) or singular(first) in intent.terms)
    if (
        text
        and not SLOT_RANGE.match(text)
        and not re.match(r"(?i)^(?:a|an|the|some|two|three|\d+|there|it|she|he|they|his|her|their|this|that)\b", text)
        and names_thing
        and first not in intent.styles
    ):
        text = "a " + text
    return text
