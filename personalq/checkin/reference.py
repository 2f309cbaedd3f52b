"""Which words of a request refer to a checkpoint, and which describe the picture.

"a lighthouse at dusk with Big Pixel Style": the picture is a lighthouse; the checkpoint is "Big Pixel Style".
People mark the reference with a kind word ("... lora", "... embedding", "... style"), a possessive
("konyconi's ..."), "use / using / with my ...", or a descriptive clause ("the lora that makes ..."). Words
inside such a *reference phrase* are selection evidence at full weight; the other words may still help (many
requests name the model without any marker) but count for less, so a content word that happens to be some
model's name does not outvote the model the person named. Words the repository has never seen do not vanish:
inside a phrase they are the reason a request names nothing we have ("my moomin lora").
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from bm25s.stopwords import STOPWORDS_EN
from wordfreq import zipf_frequency

from personalq.checkin.evidence import QueryWord, card_fields
from personalq.checkin.lexicon import ASKING, DRAW_ME, FIELD_BREAK, FIELD_LABEL, a_model_of
from personalq.checkin.roles import is_character, is_style
from personalq.checkin.tokens import (
    COMMON_ZIPF,
    REQUEST_LANGUAGES,
    everyday_in,
    fold,
    is_coined,
    is_english,
    is_unspaced,
    pair_sounds,
    spans,
    squash,
)
from personalq.checkin.tokens import words as words_in
from personalq.repository.card import StoredCheckpoint

# a request word outside any reference phrase, when the request has one
CONTENT_WEIGHT = 0.5
# kind words in Russian, in the cases a request puts them ("с лорой", "лору"), and "style" in Spanish, Portuguese
# and Italian ("estilo morino-hon"): the model's name follows them
# ("style" in Russian names the model after it only when that is written in Latin letters, "стиль toxxy": "в стиле
# Дмитрия Сергеева" says the artist's name inflected, as the picture's words would)
_STYLE_IN_RUSSIAN = frozenset("стиль стиле стилем стиля".split())
_FOLLOWED_BY_NAME = (
    frozenset(
        "лора лору лоры лорой лоре эмбеддинг эмбеддинга эмбеддингом модель модели моделью estilo stile façon".split()
    )
    | _STYLE_IN_RUSSIAN
)
# the kind words that call a model, not a way to draw ("style"): one may open a clause before its name
_MODEL_KIND_WORDS = frozenset("lora loras locon lycoris loha lyco embedding embeddings".split())  # not "Model Anna"
_DRESSING = frozenset("wearing using".split())  # verbs whose object may be a model ("wearing floral bow heels")
_FRENCH_THE = frozenset("le du au".split())  # "dans le style warcraft": French says the style before its name
# words that name a kind of checkpoint: the phrase before them (and the clause after some) is the reference
KIND_WORDS = (
    frozenset(
        "lora loras locon lycoris loha lyco embedding embeddings embed emb ti checkpoint model models style styles "
        "stil stijl "
        "finetune dreambooth extract extraction textual inversion".split()  # "the deliberate v2 lora extract"
    )
    | _FOLLOWED_BY_NAME
)
# kind words of scripts written without spaces, as the run they open ("hex_d 스타일로", "jazz jack 风格", "neko girl
# 로라로"), with the particles Korean and Japanese put after them: before these the model's name stands before
# the kind word, as in English; after a topic particle ("스타일은 arttoru 로") it follows, as after "estilo"
UNSPACED_KINDS = {"로라": "lora", "스타일": "style", "화풍": "style", "임베딩": "embedding", "风格": "style",
                   "画风": "style", "スタイル": "style", "ロラ": "lora"}  # fmt: skip
_KIND_PARTICLES = "로|으로|를|을|에|에서|도|랑|와|과|의|이|가|で|を|が|に|も|の"
_TOPIC_PARTICLES = "은|는|は"
_UNSPACED_KIND = re.compile(
    rf"^(?P<kind>{'|'.join(UNSPACED_KINDS)})(?:(?P<topic>{_TOPIC_PARTICLES})|(?:{_KIND_PARTICLES}))?$"
)


def _unspaced_kind(run: str) -> str | None:
    """The kind word a run of an unspaced script says, read as its English (or, before the name, its Spanish) word
    so that the reading treats it as it treats those; None when it says none."""
    m = _UNSPACED_KIND.match(run)
    if m is None:
        return None
    return (
        "estilo"
        if m.group("topic") and UNSPACED_KINDS[m.group("kind")] == "style"
        else UNSPACED_KINDS[m.group("kind")]
    )


# "that (one)", "this" in scripts other than English ("(suijing)那个embedding")
_DEMONSTRATIVES = frozenset("那个 这个 那個 這個 该 この その あの это этот эта эту тот та ту".split())
# the articles, prepositions and conjunctions of the other languages requests come in (Spanish, French, Portuguese,
# Italian, German, Indonesian, Russian): like English ones they name nothing, and a name never reaches over them
_CYRILLIC = re.compile(r"[\u0400-\u04ff]")
_FUNCTION_WORDS_BY_LANGUAGE = {
    "es": "el la los las lo un una unos unas de del al con en para por y",
    "fr": "le les une des du au aux avec dans sur pour et ou",
    "pt": "os um uma da dos das nos nas em com",
    "it": "il gli di della dello dei delle nel nella per",
    "de": "der die das den dem ein eine einen einem einer mit und oder im am auf von aus zu für",
    "id": "yang dan atau dengan di ke dari pada untuk ini itu",
    "ru": "с со и в во на из от для по",
    "ko": "로 으로 를 을 에 도 의 은 는 이 가",  # particles, when written apart from the word they follow
    "ja": "の が を に で へ と は も",  # particles, when a name in Latin letters stands before them ("Daisyの")
}
FUNCTION_WORDS = frozenset(w for words in _FUNCTION_WORDS_BY_LANGUAGE.values() for w in words.split())
# "please" as people write it in one word, in several languages ("лору sxz пожалуйста": the name is "sxz")
PLEASE = frozenset("please pls plz svp stp porfa bitte пожалуйста пжлст proszę prosze lütfen".split())
# a reference phrase never reaches back over these (ACTION_VERBS used as verbs are blanked to "")
_PHRASE_STOPS = (
    frozenset(
        "a an the my your our his her their this that these those with using use used in on at of for by and or "
        "to from into i me it its is was be please like "
        "as but not no without some any regular normal standard plain usual "
        "usa usar usando utilise utiliser utilisez benutze nutze pakai do".split()  # "use" in other languages
    )
    | PLEASE
    | FUNCTION_WORDS
    | {""}
    | _DEMONSTRATIVES
)  # "": an action verb
TITLE_WORDS_ON = 4  # the most words a series' title runs on past a word that would open the scene ("is a girl")
# a kind word that points back at who the request named: "misuzu ..., whichever of her loras is newer"
_ANAPHORIC_KIND = re.compile(r"(?i)\b(?:her|his|its|their)\s+(?:lora|loras|models?|embeddings?|versions?|ones)\b")
# words after a kind word that open a description of the model ("the lora that makes cyborg zombies")
_DESCRIBING = frozenset("that which for with of called named trained based för für pour para per dla для".split())
# what a description says of any model ("the lora that makes backlighting look better"): no evidence of which
_DESCRIPTION_FILLER = frozenset(
    "makes make making made look looks looking better good nice great everything anything things stuff gives give "
    "adds add turns turn trained lets let helps help really very trigger triggers keyword keywords word words "
    "activation token".split()
)
_FOR_PICTURE = frozenset("for with of".split())  # after a named kind word these open the picture, not a description
# words after which the model is named ("use ArtDecoAI", "using the amano lora", "by tokoat")
_NAMING = frozenset("use using by utilise utiliser utilisez benutze nutze pakai".split())
_ONE = frozenset("one version".split())  # "the h_madoka one": the version a creator made
# what a creator did to a model, said after their handle ("alicefir made a ... lora", "den2 did a chibi lora")
_MADE_IT = frozenset("made did trained created uploaded posted released shared".split())
# what was done to the picture's things before "by" ("lit by blue flames", "surrounded by wolves"): what did it is
# in the picture, not a creator; making verbs keep theirs ("trained by", "drawn by")
_DONE_IRREGULAR = frozenset("lit shot seen held worn hit struck caught ridden driven eaten bitten cut torn".split())
_MAKING = frozenset("made created trained uploaded posted published released shared merged finetuned tuned".split())
_WITH = frozenset("with con avec com mit dengan".split())  # "with my wano style lora", "mit der LoRA"
_DETERMINERS = frozenset(
    "my the your this that these those el la le il lo der die das den mi mon ma mein meine".split()
)
# words that open what the picture shows around its subject: a request that marks no name opens with it before them
SCENE_OPENERS = frozenset(
    "on in at by under over near beside inside outside against during through across around behind into onto above "
    "below along among between beneath within toward towards while as with without wearing holding who that which "
    "is are was doing and or but than like beyond past amid amidst atop "
    # the same prepositions in the other languages requests come in ("en la playa", "sur une plage", "am Strand")
    # (not Portuguese "no" and "na": Japanese names hold them, "tamamo no mae")
    "en sur dans sous avec em com con sobre bajo entre sotto nel nella am im auf unter mit pada dengan "
    "на в во под с со qui que num numa".split()
)
_INDEFINITE = frozenset("a an some".split())
# words for who someone is to others: beside a name they describe, they do not name ("goku's wife chichi")
# who someone is to another ("megumin's little sister"): never that other one
RELATION_NOUNS = frozenset(
    "wife husband mom mother dad father daughter son sister brother aunt uncle cousin girlfriend boyfriend friend "
    "rival".split()
)
# who, said of no one in particular: "someone from teen titans", "a genshin character" is any of the series' models
ANYONE = frozenset("someone somebody anyone anybody anything something character characters".split())
ROLE_NOUNS = (
    RELATION_NOUNS
    | ANYONE
    | frozenset(
        "teacher student girl boy man woman lady guy kid child princess prince queen king "
        # what a character is in their story: "the singer from one piece film red", "the villain from kim possible"
        "singer idol witch wizard mage knight villain villainess hero heroine protagonist antagonist "
        "attendant maid butler cop detective pilot captain soldier nurse doctor leader boss mascot "
        # the same people in the other languages requests come in ("una chica centauro")
        "chica chico mujer hombre niña niño garota menina mulher homem ragazza ragazzo donna uomo fille garçon femme "
        "homme mädchen junge frau mann".split()
    )
)
# "one of the ddlc girls", "one of the quintuplets": a role said in the plural, any one of a group
PLURAL_ROLES = frozenset(noun + "s" for noun in ROLE_NOUNS) | frozenset("twins triplets quintuplets members".split())
ROLE_NOUNS = ROLE_NOUNS | PLURAL_ROLES
# words for the picture itself: a request opening with one describes the picture first ("photo of my kitchen ...")
PICTURE_NOUNS = frozenset(
    "photo photograph picture pic portrait image painting drawing illustration sketch shot closeup close poster "
    "wallpaper selfie scene view render "
    "retrato foto fotografía fotografia imagen imagem dibujo desenho dessin bild porträt zeichnung gambar lukisan "
    "ritratto immagine disegno картинка портрет фото рисунок изображение".split()
)
# words that say where a character is from: the series follows ("albedo from genshin", "anya de spy x family")
_ORIGIN = frozenset("from de des du da di del aus von dari của из от".split())
# words ending in "-ing" that are nouns of names rather than what a subject does
_ING_NOUNS = frozenset(
    "king viking ring wing thing string spring sterling darling sling morning evening "
    "anything something nothing everything".split()
)
# words that may stand inside a name ("ghost in the shell", "lord of the rings")
_CONNECTORS = frozenset("in of the and".split())
# "el lora de merida", "le lora du ...", "il lora di ...": the name follows the kind word and "of"
_ROMANCE_OF = frozenset("de del du des di della dello do da".split())
STOPWORDS = (
    frozenset(STOPWORDS_EN)
    | frozenset(
        "one ones version versions build builds upload uploads use using want like need "
        "put add got get downloaded file files thing whatever whichever used made created trained uploaded tried ran "
        "over under across through around behind between inside outside near above below beside along toward towards "
        "onto upon against among beneath within from about after before during until while "
        "i me my mine we us our you your he him his she her it its they them their which what who whom whose "
        "do does did doing have has had am were been being can could would should shall may might must "
        "than both either".split()
    )
    | PLEASE
    | FUNCTION_WORDS
    | _DEMONSTRATIVES
)
# verbs that ask for the picture ("paint a fox", "draw me ..."); as nouns they may name a version ("V9 paint")
ACTION_VERBS = frozenset("draw make paint render generate create give show mix combine blend".split())
# words that open a request before it names anything ("can you draw me ...", "pls")
# greetings and the words a request asks with, in several languages ("ok so i want", "gimme", "pull up", "do i have",
# "is there", "hola! quiero", "salut, je voudrais"): they name nothing
# "I want" in other languages: a word no name is ("quiero a la yoruichi ...")
_WANT = frozenset("quiero queria quería quero veux voudrais möchte mochte vorrei voglio".split())
_ASKED_WITH = (
    frozenset(
        "can could would you u pls plz please want need id i'd have got do is are there gimme give me pull up "
        "ok okay so hey hi hello yo hola salut oi olá ola hallo ciao halo hai привет ugh um uh hmm welp oh ah alright "
        "je mau aku saya".split()
    )
    | _WANT
    | ASKING
)
# "use" in several languages, said before what to use ("usa l'embedding di coraline")
_USE = frozenset("use usa usar utilizza utiliza utilise nimm benutze nutze pakai".split())
_HANDLE_END = re.compile(r"_*(?:(?:가|이|의|が|の|的)(?!\w))?")  # a handle's underscores, or the particle on it
# articles ("usando a lora ...", "finns det en embedding ...": no English "a", and no word of a name)
_ARTICLES = frozenset("a o un una uno une um uma en ett ein eine einen een".split())
_TAKEN_ARTICLES = _DETERMINERS | _ARTICLES
_USING = _USE | frozenset("using usando utilizando utilizzando".split())  # "usando a lora better pantyhose"
# what a request may open with before its name ("ok so momiji from ninja gaiden ...": "so" only after one of them;
# "so my friend runs ..." opens the picture)
_FILLERS = frozenset("um uh hmm well alright ok okay".split())
# the words before the noun phrase a request opens with: asking, hesitating, and "draw me" in other languages
_LEADING = (
    ACTION_VERBS
    | _ASKED_WITH
    | frozenset(
        "love like just "  # "um well i'd love ...", "got anything ..."
        # "please", "can you" and the English-looking "draw me"s of other languages ("zeichne bitte ...")
        "genera mach male bitte kannst könntest tolong mohon пожалуйста хочу moi mir mi favor".split()
    )
    | DRAW_ME
    | _FILLERS
)
# the words a request asks with before the name it marks ("gimme the ... lora", "can u pull up the ... embedding")
_ASKING = ACTION_VERBS | _ASKED_WITH | _USE | frozenset("i ich".split())
_AFTER_VERB = frozenset("a an the me my some this that it them us".split())
_ASKED = frozenset("you u to please pls plz just".split())  # "can you make ...", "please draw ..."
# a version number marks the words before it as the name ("klockworkspider v2 ...") and a short clause
# tail after it as the version's label ("tekakutli dinosaurs V9 paint")
LABEL_TAIL = 2
MIN_HANDLE = 4  # characters of the shortest creator's handle read as one wherever it stands ("zakp", not "ai")
VERB_NAME_WORDS = 3  # the most words of a model's name that may open with an action word ("mix pattern")
_BOUNDARY = re.compile(r"[,.;:!?()\[\]|+\-–—/\\\n，。、；：！？（）「」]")
# between clauses: punctuation, or a dash set apart by spaces (not the hyphens inside "wcat8-v1-2000")
CLAUSE_BREAK = re.compile(r"[,;:!?()\[\]|\n，。、；：！？（）「」]|\.(?=\s|$)|\s[-–—]+\s|[–—]")


@dataclass
class Reference:
    """The request's words as evidence: :attr:`words` for scoring, :attr:`phrase` the positions inside a
    reference phrase (empty when the request marks none)."""

    words: list[QueryWord] = field(default_factory=list)
    phrase: set[int] = field(default_factory=set)
    names_nothing: bool = False  # a kind word with no name before it or anywhere: "the lora I got last week"
    spans: list[tuple[int, int]] = field(default_factory=list)  # character span of each word
    phrase_spans: list[tuple[int, int]] = field(default_factory=list)  # the kind and naming words around the phrases
    clauses: list[int] = field(default_factory=list)  # the clause (between commas, dashes, ...) of each word
    files: list[tuple[int, int, str]] = field(default_factory=list)  # words that wrote a trigger or label whole
    described: bool = False  # the phrase describes what the model draws ("the lora for chibi tanks"), not its name
    makers: list[QueryWord] = field(default_factory=list)  # creators said ("h_madoka's nahida", "by zakp")
    head: set[int] = field(default_factory=set)  # the words before the scene begins ("toph" of "toph bending ...")
    series: set[int] = field(default_factory=set)  # the words after "from" that say where the head is from
    # names listed beside the marked ones, unmarked ("malenia" of "malenia with the claymation lora", both of
    # "kcutetanks and cosmic landscapes, ...") and the name the request opens with ("ritsuko akagi in a lab coat, ...
    # <lora:...>"): another model's name only where a card is called by it (composition)
    listed: list[set[int]] = field(default_factory=list)
    text: str = ""  # the request read
    label_tail: set[int] = field(default_factory=set)  # words after a version number read as its label ("V9 paint")

    def written(self, positions: set[int]) -> str:
        """The words at ``positions`` as the request wrote them ("芙宁娜", not its pairs "芙宁 宁娜")."""
        spans_ = sorted({self.spans[k] for k in positions})
        return " ".join(self.text[start:end] for start, end in spans_)

    def after_scene_opens(self) -> set[int]:
        """The words past where the picture begins after the phrase: a preposition or a verb ("iono livestreaming
        from her gym": "gym"), not selection talk ("athena asamiya, the kof 97 one": "97")."""
        if not self.phrase:
            return set()
        end = max(self.spans[k][1] for k in self.phrase)
        tail = [(m.start() + end, m.group().casefold()) for m in re.finditer(r"[^\W_][\w'-]*", self.text[end:])]
        opened = next(
            (
                at
                for i, (at, w) in enumerate(tail)
                if w not in KIND_WORDS and opens_scene(w, tail[i + 1][1] if i + 1 < len(tail) else "")
            ),
            None,
        )  # "the moon embedding from the sun moon and star pack": a kind word ending in -ing opens nothing
        return set() if opened is None else {k for k, (start, _) in enumerate(self.spans) if start > opened}

    @property
    def has_phrase(self) -> bool:
        return bool(self.phrase)

    @property
    def unspaced(self) -> bool:
        """Is the phrase mostly character pairs of a script written without spaces ("用冰箱贴那个")? Its pairs that
        straddle words ("用冰", "贴那") name nothing, so less of it is found."""
        pairs = sum(is_unspaced(self.words[k].forms[0]) for k in self.phrase)
        return 2 * pairs > len(self.phrase)

    def with_phrase(self, phrase: set[int]) -> Reference:
        """The same words with ``phrase`` as the reference phrase, the others weighted as content."""
        words = [
            w if k in phrase else replace(w, weight=min(w.weight, CONTENT_WEIGHT)) for k, w in enumerate(self.words)
        ]
        return replace(self, words=words, phrase=set(phrase), described=False)

    @property
    def head_phrase(self) -> set[int]:
        """The words a request that marks no name most likely names its model with: the noun phrase it opens
        with, and where that is from ("ryo yamada from bocchi the rock playing bass on stage")."""
        return self.head | self.series

    @property
    def naming(self) -> set[int]:
        """The words that may name a model or version: the phrase, or, when there is none, all but kind words."""
        return self.phrase or {k for k, w in enumerate(self.words) if w.forms[0] not in KIND_WORDS}


def wanting_words(reference: Reference) -> set[int]:
    """The words a request opens with that say "I want" in another language ("quiero", "vorrei"): English's "want"
    is a stopword and no word at all, theirs name nothing either."""
    leading: set[int] = set()
    for k, word in enumerate(reference.words):
        if word.forms[0] not in _ASKING:
            break
        if word.forms[0] in _WANT:
            leading.add(k)
    return leading


def _covered(start: int, end: int, spans_: list[tuple[int, int]]) -> bool:
    return any(start < e and s < end for s, e in spans_)


def _names_not_function_words(lowered: list[str], written: list[str], spells: Callable[[str], bool]) -> list[str]:
    """In a request in English, another language's function word is a word like any other: "yang xiao long" is a
    name, not Indonesian "which". A request is in another language when it has two of that language's function
    words, or two of its everyday words (wordfreq's, no common English word: "gibt es", "tu as"), or Cyrillic; then
    every listed function word stays one (the languages share words: "du", "de") and the everyday words name nothing
    ("es" is no "Es (BlazBlue)"). In an English request the word is written in capitals, which no word list holds, so
    that nothing reads it as a function word. An everyday word written as the first of a capitalised name some card
    spells ("Mai Natsume qui révise ...": French "mai" is May) is the name's ("Ahora Kanna ..." is "now")."""
    said = set(lowered)
    languages = [
        lang
        for lang in (*REQUEST_LANGUAGES, "ru", "vi", "sv", "tr")
        if len(said.intersection(_FUNCTION_WORDS_BY_LANGUAGE.get(lang, "").split())) >= 2
        or sum(everyday_in(w, lang) for w in said) >= 2
    ]
    if languages:  # and the language's other everyday words name nothing either ("gibt es eine lora für ...")

        def named(i: int) -> bool:
            following = written[i + 1] if i + 1 < len(written) else ""
            return _capitalised(written[i]) and _capitalised(following) and spells(f"{written[i]} {following}")

        return ["" if _everyday(w, languages) and not named(i) else w for i, w in enumerate(lowered)]
    if any(_CYRILLIC.search(w) for w in said):
        return lowered
    return [w.upper() if w in FUNCTION_WORDS and w not in STOPWORDS_EN else w for w in lowered]


_LATIN_IN_BRACKETS = re.compile(r"\s*[(（]([A-Za-z][A-Za-z\s'-]{0,38})[)）]")


def _name_in_latin_after(text: str, runs: list, lowered: list[str], phrase: set[int], makers: set[int]) -> set[int]:
    """The runs of a name in Latin letters in brackets right after a phrase written in kanji or hangul
    ("雷電将軍(Raiden Shogun)LoRA"): the same name in the script most cards write it in; up to four words, no maker,
    function or kind word among them."""
    unspaced = [i for i in phrase if is_unspaced(lowered[i])]
    if not unspaced:
        return set()
    bracket = _LATIN_IN_BRACKETS.match(text, runs[max(unspaced)][1])
    if bracket is None:
        return set()
    inside = {i for i, (s, e, _) in enumerate(runs) if bracket.start(1) <= s and e <= bracket.end(1)}
    plain = all(lowered[i] not in STOPWORDS and lowered[i] not in KIND_WORDS for i in inside)
    return inside if 0 < len(inside) <= 4 and plain and not inside & makers else set()


def _capitalised(word: str) -> bool:
    return word[:1].isupper() and word[1:2].islower()


def _everyday(word: str, languages: list[str]) -> bool:
    """Is ``word`` one of the everyday words of a language the request is written in, and no word the other lists
    keep (those keep their roles: "el lora de merida", "pyra qui lit un livre")?"""
    listed = word in STOPWORDS or word in SCENE_OPENERS or word in _LEADING or word in _ORIGIN
    return not listed and any(everyday_in(word, lang) for lang in languages)


def read_reference(
    text: str,
    skip: list[tuple[int, int]] = (),
    excluded: set[str] = frozenset(),
    styles: list[tuple[int, int]] = (),
    version: tuple[int, int] | None = None,
    base: tuple[int, int] | None = None,
    names: Callable[[str], bool] = lambda word: True,
    files: list[tuple[int, int]] = (),
    creators: Callable[[str], bool] = lambda word: True,
    only_creators: Callable[[str], bool] = lambda word: False,
    strengths: list[tuple[int, int]] = (),
    spells: Callable[[str], bool] = lambda text: False,
    spells_title: Callable[[str], bool] = lambda text: False,
    spells_rare: Callable[[str], bool] = lambda text: False,
    owns_trigger: Callable[[str], bool] = lambda text: False,
    beside_tags: bool = False,
) -> Reference:
    """The words of ``text`` (NFKC-normalized) outside the ``skip`` spans (versions, dates, negations, which
    the intent record handles), with their reference phrases. Words of a style phrase (``styles``: "oil
    painting", "3d render") say how to draw, so outside a reference phrase they count as content; the
    ``version`` span, a version number, marks a phrase as a kind word does, and so does the ``base`` span of a
    request that says no kind word ("z_phyr insanity negative for my 2.1 gens"). A possessive marks one only when
    ``names`` knows its owner as a name or creator: "hahafofo's big head helper", not "farmer's market"; "by" marks
    one only before a word ``creators`` knows: "by tokoat", not "surrounded by zombies". An owner or "by" word that
    ``only_creators`` knows as a creator and as nothing else is a maker the model must have, not part of its name.
    ``files``
    are the spans that write a file's trigger word or version label whole ("wcat8-v1-2000"); ``strengths`` those that
    say how strongly to apply a model ("at 60 percent"), which makes the words before them a model's name; ``spells``
    says whether a text spells some model's whole name ("the pink nurse uniform" after "wearing"), ``spells_title``
    a title some card gives, as written or by its acronym ("from dead or alive" of "DOA"), ``spells_rare``
    one with a word few cards have ("with glasstech world morph", not "with butterfly wings"); ``owns_trigger``
    whether a text is a trained word of one model alone ("ddbitlip"); ``beside_tags`` when the request named a model
    by a WebUI tag too."""
    tokenized = spans(text, cut=skip)
    runs = [(s, e, forms) for s, e, forms in tokenized if not _covered(s, e, list(skip))]
    lowered = [
        (_unspaced_kind(fold(text[s:e])) or forms[0]) if is_unspaced(forms[0]) else forms[0] for s, e, forms in runs
    ]
    lowered = [
        w.upper() if w in _STYLE_IN_RUSSIAN and not (i + 1 < len(runs) and lowered[i + 1].isascii()) else w
        for i, w in enumerate(lowered)
    ]  # (in capitals, which no word list holds)
    # "I'd like ...", "we're": a pronoun with its verb written on names nothing (the tokens read them "id", "were")
    lowered = ["i" if _CONTRACTED.fullmatch(text[s:e]) else w for w, (s, e, _) in zip(lowered, runs)]
    # "w/" is "with" written short, and stays so in the prompt ("fumi arata w/ mood-marionette")
    lowered = ["with" if w == "w" and text[e : e + 1] == "/" else w for w, (_, e, _) in zip(lowered, runs)]

    def opens_name(i: int) -> bool:  # "..., mix pattern lora": the verb is the first word of a model's name
        return any(spells(text[runs[i][0] : runs[j][1]]) for j in range(i + 1, min(i + VERB_NAME_WORDS, len(runs))))

    lowered = [
        w if w not in ACTION_VERBS or not (_is_verb(lowered, i) or _break(text, runs, i)) or opens_name(i) else ""
        for i, w in enumerate(lowered)
    ]  # a verb that opens a sentence asks ("... her face. mix mayuzumi fuyuko and ...")
    lowered = _names_not_function_words(lowered, [text[s:e] for s, e, _ in runs], spells)
    # German "du" after its verb ("kannst du ... malen?") is "you", not French "from"
    lowered = ["you" if w == "du" and i > 0 and lowered[i - 1].endswith("st") else w for i, w in enumerate(lowered)]
    # "girl model kit lora": "model" before what it is a model of is a word of the name, and "a model strutting down
    # a runway" someone in the picture: no kind word (in capitals, which no word list holds)
    lowered = [
        w.upper()
        if w in ("model", "models")
        and i + 1 < len(lowered)
        and text[runs[i][1] : runs[i + 1][0]].isspace()
        and a_model_of(lowered[i + 1])
        else w
        for i, w in enumerate(lowered)
    ]
    # "the Medieval Style Armor Suit v1.0": "style" inside a name spelled whole is a word of it
    lowered = [
        w.upper() if w in _STYLE_WORDS and _inside_a_name(text, runs, i, spells) else w for i, w in enumerate(lowered)
    ]

    def boundary_between(i: int, j: int) -> bool:  # runs i < j; a hyphen joins ("sheet-metal", "cross-legged"), and
        gap = text[runs[i][1] : runs[j][0]]  # so does a dot before a number ("No.505")
        return gap != "-" and not (gap == "." and lowered[j][:1].isdigit()) and bool(_BOUNDARY.search(gap))

    phrase: set[int] = set()
    markers: set[int] = set()  # kind and naming words that belong to a phrase
    described: set[int] = set()  # phrase words of a description after a kind word
    kinds = 0
    makers: set[int] = set()  # runs naming who made the model

    def numbering(j: int) -> bool:  # "No.505 fallen_down": "no" that numbers a name, not a negation
        return (
            lowered[j] in ("no", "nr")
            and j + 1 < len(runs)
            and text[runs[j][1] : runs[j + 1][0]] == "."
            and lowered[j + 1].isdigit()
        )

    def forward(i: int) -> None:
        """Collect the name after run ``i`` ("use ArtDecoAI", "with my wano style lora", "hahafofo's big head"), up
        to where the scene begins ("murky's cammy doing pushups"); "by the window" names no creator."""
        j = i + 1
        if j < len(runs) and lowered[j] in _DETERMINERS and not boundary_between(i, j):
            if lowered[i] == "by":
                return
            j += 1
        elif lowered[i] in _FOLLOWED_BY_NAME and j < len(runs) and lowered[j] in _ROMANCE_OF:
            j += 1  # "no estilo do mogi yuusuke": of the one named
        named = False
        while (
            j < len(runs)
            and not boundary_between(j - 1, j)
            and (lowered[j] not in _PHRASE_STOPS or numbering(j))
            and not (j > i + 1 and opens_scene(lowered[j], lowered[j + 1] if j + 1 < len(runs) else ""))
        ):
            if lowered[j] in KIND_WORDS:
                markers.add(j)
                j += 1  # "use the starfire lora from teen titans": where it is from follows the kind word
                break
            if numbering(j):
                markers.add(j)
                j += 1
                continue
            phrase.add(j)
            markers.add(i)
            named = True
            j += 1
        if named:
            origin(j)

    def origin(j: int) -> None:
        """Mark where a named model is from as selection talk ("la lora de starfire de teen titans en la playa"):
        the origin word at run ``j`` and the series after it, up to where the scene begins."""
        if j >= len(runs) or lowered[j] not in _ORIGIN or boundary_between(j - 1, j):
            return
        k = j + 1
        while (
            k < len(runs)
            and not boundary_between(k - 1, k)
            and lowered[k] not in _ORIGIN
            and not (k > j + 1 and opens_scene(lowered[k], lowered[k + 1] if k + 1 < len(runs) else ""))
        ):
            k += 1
        if k > j + 1:  # a title holds scene words too: "from dead or alive", "from tomo-chan is a girl"
            k = _title_run(text, runs, list(range(j + 1, k)), boundary_between, spells_title)[-1] + 1
        if k > j + 1:
            markers.update(range(j, k))

    def with_before(i: int) -> int | None:
        """Where a "with" in another language, or a "use", "draw", "I want" or "do you have", with its article, leads
        straight into the kind word at run ``i``, the name following it as the language orders them ("avec l'embedding
        ...", "con la lora ...", "usando a lora better pantyhose", "cerco il lora pin-up"); None when none does."""
        j = i - 1
        if j >= 0 and lowered[j] in _DETERMINERS | _ARTICLES and not boundary_between(j, i):
            j -= 1
        leads = (
            j >= 0
            and lowered[j] in (_WITH | _USING | ASKING | DRAW_ME | _WANT) - {"with"}
            and not boundary_between(j, j + 1)
            and i + 1 < len(runs)
            and not boundary_between(i, i + 1)
            and lowered[i + 1] not in _ROMANCE_OF  # "con el lora de ...": read below
        )
        return j if leads else None

    def opens_clause_before_name(i: int) -> int | None:
        """Where the model kind word at run ``i`` opens its clause, with its article, and a name follows it
        ("décor : l'embedding Magical Interior de Peaksel", ", the embedding Magical Interior by Peaksel"); None
        when it does not."""
        j = i - 1 if i > 0 and lowered[i - 1] in _DETERMINERS | _ARTICLES and not boundary_between(i - 1, i) else i
        return (
            j
            if lowered[i] in _MODEL_KIND_WORDS
            and (j == 0 or boundary_between(j - 1, j))
            and i + 1 < len(runs)
            and not boundary_between(i, i + 1)
            and lowered[i + 1] not in STOPWORDS | _PHRASE_STOPS | _ROMANCE_OF | KIND_WORDS
            # a name, not what the model does ("the lora makes her glow")
            and (_capitalised(text[slice(*runs[i + 1][:2])]) or not is_english(lowered[i + 1], COMMON_ZIPF))
            else None
        )

    def as_setting(i: int) -> list[int]:
        """The runs of "as the background" from run ``i`` ("sarrow as the background", "with syfyeye1 as the
        backdrop", "crv architecture for the background"): a role given to the name before it, which marks it as a
        kind word does; none otherwise."""
        if lowered[i] not in ("as", "for") or i == 0:
            return []
        j = i + 1 + (i + 1 < len(runs) and lowered[i + 1] in _DETERMINERS)
        if (
            j >= len(runs)
            or lowered[j] not in SETTING_WORDS
            or any(boundary_between(k, k + 1) for k in range(i - 1, j))
        ):
            return []
        ends = j + 1 == len(runs) or boundary_between(j, j + 1) or lowered[j + 1] in _PHRASE_STOPS
        return list(range(i, j + 1)) if ends else []  # "as the background character" is someone in the picture

    def compound(i: int) -> bool:  # "a western-style mansion": the words before a noun say what it is like
        return (
            0 < i < len(runs) - 1
            and text[runs[i - 1][1] : runs[i][0]] == "-"
            and text[runs[i][1] : runs[i + 1][0]] == " "
            and lowered[i + 1] not in KIND_WORDS | _PHRASE_STOPS
            and is_english(lowered[i + 1], COMMON_ZIPF)
        )

    def kinds_ahead(i: int) -> bool:  # a kind word follows run ``i`` in its clause ("did a girls' frontline lora")
        j = i + 1
        while j < len(runs) and not boundary_between(j - 1, j):
            if lowered[j] in KIND_WORDS:
                return True
            j += 1
        return False

    def made_by(i: int) -> None:  # "by" or "from" run ``i`` and the maker's whole handle after it
        handle_runs = _joined_runs_on(text, runs, i + 1)
        makers.update(handle_runs)
        markers.update((i, *handle_runs))

    for i, word in enumerate(lowered):
        if (word in KIND_WORDS and not compound(i)) or (setting := as_setting(i)):
            if word not in KIND_WORDS:
                markers.update(setting)
            kinds += 1
            before = set(phrase)
            j = i - 1  # back over the name before the kind word, through "in the" / "of" inside it
            while j >= 0 and not boundary_between(j, j + 1):
                if _styled_after(text, runs, lowered, j):
                    break  # "lyra in the manner of ink wash style": the style's name starts after "of"
                if (
                    lowered[j] in _CONNECTORS
                    and phrase & {j + 1, j + 2}
                    and j > 0
                    and (lowered[j - 1] not in _PHRASE_STOPS or lowered[j - 1] in _CONNECTORS)
                    # "at dusk in the ditko style", "at a night festival in the ...": where or when is the picture's
                    and not _said_where(lowered, j)
                    and not (lowered[j] == "in" and _done(lowered[j - 1]))  # "painted in kimhongdo style"
                ):
                    j -= 1
                    continue
                if (
                    lowered[j] in _PHRASE_STOPS
                    or lowered[j] in ASKING | DRAW_ME | _ARTICLES
                    or _acts_on(lowered, j)
                    or _article_after_a_word(lowered, j, boundary_between)
                ):
                    # "martha wearing the maid dress lora": what she does is no word of the name, unless a name
                    # spells the words through it ("angle from back lora")
                    through = _spelled_through(text, runs, j, i, spells, boundary_between)
                    if through is None:
                        break
                    phrase.update(k for k in through if lowered[k] not in _PHRASE_STOPS)
                    markers.add(i)
                    j = min(through) - 1
                    break
                phrase.add(j)
                markers.add(i)
                j -= 1
                if _possessive(text, runs[j + 1]):
                    break  # "laika_slime_300 wearing zhuym's lolita dress lora": the owner opens the name
            if j >= 0 and j + 1 < i and lowered[j].lower() in _DETERMINERS and not boundary_between(j, j + 1):
                markers.add(j)
                if j >= 1 and lowered[j - 1] in _NAMING | _WITH and not boundary_between(j - 1, j):
                    markers.add(j - 1)
            if phrase - before:
                origin(i + 1)  # "the starfire lora from teen titans, on a beach"
            leading = with_before(i) if word in KIND_WORDS and not phrase - before else None
            if leading is None and word in KIND_WORDS and not phrase - before:
                leading = opens_clause_before_name(i)
            if (
                word in _FOLLOWED_BY_NAME
                or leading is not None
                or (word == "style" and i > 0 and lowered[i - 1] in _FRENCH_THE and not boundary_between(i - 1, i))
            ):
                forward(i)  # "avec l'embedding architectural magazine", "con la lora ...", "dans le style warcraft"
                if leading is not None and phrase - before and lowered[leading] in _WITH | _USING | _TAKEN_ARTICLES:
                    markers.update(range(leading, i))  # "usando a", "the": selection talk, cut from the prompt
            elif i + 1 < len(runs) and lowered[i + 1] in _ROMANCE_OF and not boundary_between(i, i + 1):
                forward(i + 1)
                markers.add(i)
                if i > 0 and lowered[i - 1] in _DETERMINERS and not boundary_between(i - 1, i):
                    markers.add(i - 1)  # "la lora de ...": its article goes with it
            elif (
                i + 1 < len(runs)
                and lowered[i + 1] in _DESCRIBING
                and not boundary_between(i, i + 1)
                # "etrian odyssey lora for a party of adventurers": named already, what follows "for" is the picture
                and not (phrase - before and lowered[i + 1] in _FOR_PICTURE)
            ):
                j = i + 2  # "the lora that makes cyborg zombies": the description to its end
                while j < len(runs) and not boundary_between(j - 1, j):
                    if lowered[j] not in _PHRASE_STOPS | _DESCRIBING | _DESCRIPTION_FILLER:
                        phrase.add(j)
                        markers.add(i)
                        described.add(j)
                    j += 1
                if i in markers:  # the whole description picks the model: none of it is the picture
                    markers.update(range(i + 1, j))
                if i in markers and lowered[i + 1] not in STOPWORDS:
                    markers.add(i + 1)  # "una lora para ...": another language's "for" is selection talk
                    if i > 0 and lowered[i - 1] in _ARTICLES and not boundary_between(i - 1, i):
                        markers.add(i - 1)  # and so is its article
        elif word in _NAMING and (
            word != "by"
            or (
                _said_next(text, runs, i)
                and creators(handle := _joined_on(text, runs, i + 1))
                and not _done_to(lowered, i)
            )
        ):
            if word == "by" and only_creators(handle):
                # who made it ("by h_madoka": the handle whole); nothing after it is a name ("by leirbag421 che ...")
                made_by(i)
            else:
                forward(i)
        elif (
            word == "from"
            and i > 0
            and lowered[i - 1] in KIND_WORDS
            and _said_next(text, runs, i)
            and only_creators(handle := _joined_on(text, runs, i + 1))
        ):
            made_by(i)  # "the character embedding from hotfantasy_ai": someone who only makes models
        elif word == "with" and i + 1 < len(runs) and lowered[i + 1] in ("my", "your"):
            forward(i)
        elif styled := _styled_after(text, runs, lowered, i):  # "drawn by katsura masakazu", "in the manner of ..."
            forward(i)
            markers.update(range(styled, i + 1))
        elif (
            word in _MADE_IT
            and i > 0
            and _said_next(text, runs, i - 1)
            and only_creators(_joined(text, runs, i - 1))
            and kinds_ahead(i)
        ):
            handle = _joined_runs(text, runs, i - 1)
            makers.update(handle)  # "alicefir did a girls' frontline lora": who made the model the request names
            markers.update((*handle, i))
        elif word in _ONE and _made_by(text, runs, lowered, i - 1, only_creators):
            handle = _joined_runs(text, runs, i - 1)
            makers.update(handle)  # "android 18 (the h_madoka one)": who made it
            markers.update({handle[0] - 1, i})  # "the" and "one" go with it
        elif (
            # "in ishawn944's jkskirt": a handle only a creator has owns the words after it wherever it stands
            (
                _owner(text, runs, lowered, i, boundary_between)
                or _handle_owns(text, runs, i, boundary_between, only_creators)
            )
            and names(owner := _joined(text, runs, i))
            # a common English word owns a model only as a creator's handle: "the station's observation deck" is a
            # place ("goku's turtle school uniform" is his)
            and (not is_english(owner, COMMON_ZIPF) or creators(owner))
            and not _owns_a_role(runs, lowered, i, boundary_between)
        ):
            phrase.add(i)
            forward(i)
            if only_creators(owner) and phrase - {i}:
                makers.update(_joined_runs(text, runs, i))  # "h_madoka's": the whole handle made it
    for i in range(len(runs)):
        # a handle only a creator has, however it is said ("SRestia가 올린 Eula 로라로", "eula (JackSpring)", "bulma
        # (zetaworks's lora)"): who made the model, never a word of its name; a word of any language ("alchemist's
        # shop") is the picture's, and an owner outside brackets is read above ("konyconi's 9MB lora"); in brackets
        # after a name, a creator's handle is theirs even where they write it into their models' names too
        # ("Lightning (justTNP, FFXIII)" of "[justTNP] Makima")
        if i in makers or (i > 0 and text[runs[i - 1][1] : runs[i][0]] == "_"):
            continue
        handle_runs = _joined_runs_on(text, runs, i)
        handle = _joined_on(text, runs, i)
        bracketed = in_brackets(text, runs[i][0])
        owned = _possessive(text, runs[handle_runs[-1]])
        # "hex maniac (murky's lora)", "amane kanata — h_madoka's lora, v2 — ...": a bracket or an aside between
        # dashes that says whose model it is names its maker, whatever the handle
        aside = bracketed or _DASH_OPENS.search(text, 0, runs[handle_runs[0]][0]) is not None
        glossed = (
            aside
            and owned
            and creators(_joined(text, runs, i))
            and handle_runs[-1] + 1 < len(runs)
            and lowered[handle_runs[-1] + 1] in KIND_WORDS
            and _ASIDE_CLOSES.match(text[runs[handle_runs[-1] + 1][1] :].lstrip()) is not None
        )
        if len(handle) >= MIN_HANDLE and (
            glossed
            or (
                (only_creators(handle) or (bracketed and creators(handle)))
                and is_coined(handle)
                and (bracketed or not owned)
            )
        ):
            makers.update(handle_runs)
    phrase |= _named_before_makers(text, runs, lowered, makers, phrase, boundary_between)
    if version is None and base is not None and not any(KIND_WORDS.intersection(f) for _, _, f in tokenized):
        version = base
    label_runs: set[int] = set()
    if version is not None:
        label_runs = _version_phrase(text, runs, lowered, version, phrase)
    phrase = {i for i in phrase if lowered[i] not in STOPWORDS and lowered[i] not in KIND_WORDS}
    asking = 0  # "gimme the sitting yoga pose lora", "can u pull up the ... embedding": the asking names nothing
    while asking < len(runs) and (lowered[asking] in _ASKING or lowered[asking] in _PHRASE_STOPS):
        asking += 1
    if phrase - set(range(asking)):
        phrase -= set(range(asking))
    phrase -= makers  # a maker is a constraint, not words of the name to find
    phrase |= _name_in_latin_after(text, runs, lowered, phrase, makers)

    head_runs, series_runs = (
        (set(), set()) if phrase else _head(text, runs, lowered, boundary_between, names, spells_title=spells_title)
    )
    while series_runs and lowered[max(series_runs)] in _SIGN_OFF:  # "someone from urusei yatsura pls, ..."
        series_runs.discard(max(series_runs))
    style_phrases = [span for span in styles if " " in text[span[0] : span[1]].strip()]
    words: list[QueryWord] = []
    word_spans: list[tuple[int, int]] = []
    positions: set[int] = set()
    latin = {form for _, _, forms in runs if not is_unspaced(forms[0]) for form in forms}
    for i, (start, end, forms) in enumerate(runs):
        # a stopword stays inside a series a name spells whole ("from inside out")
        stop = (
            lowered[i] in STOPWORDS
            and not _compound(text, runs, i)
            and i not in series_runs
            and not (i in head_runs and lowered[i] in ANYONE)  # "anything from doraemon"
        )
        if not lowered[i] or stop or lowered[i] in excluded:
            continue
        if len(lowered[i]) < 2 and not lowered[i].isdigit() and not is_unspaced(lowered[i]):
            continue
        if _lettered(text, runs, i):  # "T-pose", "x-ray", "v-neck": the letter is part of the word
            start, forms = runs[i - 1][0], [lowered[i - 1] + forms[0], *forms]
        elif _letter_after(text, runs, i):  # "hex_d": a file's letter is part of its name
            end, forms = runs[i + 1][1], [forms[0] + lowered[i + 1], *forms]
        in_style = _covered(start, end, style_phrases)
        weight = 1.0 if i in phrase or not (phrase or in_style) else CONTENT_WEIGHT
        first = len(words)
        if is_unspaced(forms[0]):  # character pairs are evidence each, a sounded name's pairs its romanization too
            for pair in pair_sounds(text[start:end]):
                # a sound the request also writes in Latin letters only glosses it ("maria マリア")
                words.append(QueryWord(pair if pair[-1] not in latin else pair[:1], i, weight))
                word_spans.append((start, end))
        else:
            words.append(QueryWord(tuple(forms), i, weight))
            word_spans.append((start, end))
        if i in phrase:
            positions.update(range(first, len(words)))
    run_to_words: dict[int, list[int]] = defaultdict(list)
    for k, word in enumerate(words):
        run_to_words[word.position].append(k)
    head_runs -= makers
    head = {k for i in head_runs for k in run_to_words.get(i, ())}
    named_runs = (
        _labelled_fields(text, runs)
        or _labelled_list(text, runs, lowered)
        or _listed(text, runs, lowered, phrase | markers | makers, strengths, spells_rare)
    )
    taken = phrase | markers | makers | set().union(*named_runs)
    definite = _definite_names(text, runs, lowered, spells, taken)
    definite += _listed_rare_names(text, runs, lowered, spells_rare, taken | set().union(*definite))
    definite += _rare_names_inside(
        text, runs, lowered, spells, spells_rare, taken | set().union(*definite), phrase | markers, owns_trigger
    )
    definite += _weighted_clauses(text, runs, lowered, strengths, taken | set().union(*definite))
    definite += _written_files(text, runs, files, taken | set().union(*definite))
    named_runs += definite
    # "ritsuko akagi in a lab coat, <lora:...>", "utsumi erice wearing the jirai kei fashion dress": the name a
    # request opens with, before its scene, beside a model it marks, tags or names whole
    if phrase or definite or beside_tags:
        opening = set().union(*_head(text, runs, lowered, boundary_between, names)) - markers - makers
        if beside_tags and opening & phrase:  # "<lora:...> cassandra alexandra as a technical drawing": the tag's
            model_end = max(opening & phrase)  # clause is the tagged model's, the next one opens with the name
            later = next((j for j in range(model_end + 1, len(runs)) if _break(text, runs, j)), None)
            if later is not None:
                opening = set().union(*_head(text, runs, lowered, boundary_between, names, later)) - markers - makers
        named = {i for i in opening if lowered[i] not in ROLE_NOUNS}  # "woman playing guzheng" names no one
        if named and not opening & (phrase | markers) and not any(opening & runs_ for runs_ in named_runs):
            named_runs.insert(0, opening)
    listed = [found for runs_ in named_runs if (found := {k for i in runs_ for k in run_to_words.get(i, ())})]
    series = {k for i in series_runs for k in run_to_words.get(i, ())}
    label_tail = {k for i in label_runs for k in run_to_words.get(i, ())}
    phrase_spans = [runs[i][:2] for i in sorted(markers - phrase - makers)]
    # each handle whole: "h_madoka's", "hikki_" with the underscore it ends in, "SRestia가" with its particle
    phrase_spans += [(runs[min(g)][0], _HANDLE_END.match(text, runs[max(g)][1]).end()) for g in _groups(makers)]
    maker_words = [  # each handle whole, as written and squashed ("h_madoka", "hmadoka")
        QueryWord((handle, squash(handle), *words_in(handle)), group[-1], CONTENT_WEIGHT)
        for group in _groups(makers)
        if (handle := _joined(text, runs, group[-1]))
    ]
    clauses = [len(CLAUSE_BREAK.findall(text, 0, start)) for start, _ in word_spans]
    written = []
    for start, end in files:
        inside = [k for k, span in enumerate(word_spans) if start <= span[0] and span[1] <= end]
        if inside:
            written.append((inside[0], inside[-1] + 1, text[start:end]))
    return Reference(
        words,
        positions,
        kinds > 0 and not phrase and not (head and _ANAPHORIC_KIND.search(text)),
        word_spans,
        phrase_spans,
        clauses,
        written,
        described=bool(phrase) and phrase <= described,
        makers=maker_words,
        head=head,
        series=series,
        listed=listed,
        text=unicodedata.normalize("NFKC", text),  # what the spans index
        label_tail=label_tail,
    )


# a request opening with "<series>的<name>" / "<series>の<name>" and a comma: who, from where ("原神的派蒙，...")
_CJK = r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uff66-\uff9f]"
_CJK_ORIGIN = re.compile(rf"^(?P<series>{_CJK}{{2,}}?)[的の](?P<name>{_CJK}{{2,}})(?=\s*[,，、。])")


def origin_first(text: str) -> str:
    """ "原神的芙宁娜，在歌剧院里唱歌" read as "芙宁娜 from 原神，...": the name and its series, each found on its own,
    as "furina from genshin" is (a series present without the name is then an honest no match that offers it)."""
    m = _CJK_ORIGIN.match(text)
    return f"{m.group('name')} from {m.group('series')}{text[m.end() :]}" if m else text


# who made a model, said as other languages say it: "la ashley de lmja", "mami tomoe von cubby_ai", "umi sonoda van
# hikki_", "raphtalia od sysdeep", "le soldat par frogthejam", "kozueのtohsaka rin", "akii的doa honoka", "hikki_의 nico
# yazawa"
_HANDLE = r"[A-Za-z0-9][A-Za-z0-9_.-]*?[A-Za-z0-9_]"  # in Latin letters: "画gunshipwu123的" is "gunshipwu123"
_BY_IN_OTHER_LANGUAGES = "de di du do da von van od z của от par por door".split()
_MAKER_AFTER = re.compile(
    rf"(?i)(?<!\S)(?:{'|'.join(_BY_IN_OTHER_LANGUAGES)})\s+(?P<handle>{_HANDLE})(?=[\s,.;:!?)）]|$)"
)
# a handle before "of" ("kozueのtohsaka rin"), or honoured or said to have made it, before anything ("shurikさんの球体
# 関節lora", "xpramt做的布洛妮娅", "justsunny가 만든 ... 로라")
_HONORIFIC = "さん|さま|様|氏|くん|君|ちゃん|先生|老师|大佬|님"
_MADE = r"做的|制作的|画的|出的|が作った|[가이]\s*만든"
_MAKER_BEFORE = re.compile(
    rf"(?<![A-Za-z0-9_'’])(?P<handle>{_HANDLE})\s*(?P<honored>{_HONORIFIC})?\s*(?:(?P<made>{_MADE})|[的の의])\s*"
    r"(?=(?P<latin>[A-Za-z])?\S)"
)

# a kind word written right after a particle ("DaisyのLoRA"): the handle before it names the model
_KIND_NEXT = re.compile(r"(?i)(?:lora|locon|lycoris|embedding|ti|model)\b")


def makers_in_english(text: str, creator: Callable[[str], bool], only_creator: Callable[[str], bool]) -> str:
    """A creator's handle said with another language's "of" ("de lmja", "kozueの") read as "by lmja" and "kozue's":
    who made the model, as the request would say it in English. After "of", only a handle that is a creator's and
    no model's (``only_creator``) is read so ("la lora de merida" keeps its series); before a particle, a handle in
    Latin letters that is some ``creator``'s ("justtnpの", not "ウマ娘の"), with its honorific ("shurikさんの") or
    said to have made it ("xpramt做的", "the one velvetnib made"); a handle with an "s" stuck on, as the possessive
    typed in a hurry."""

    def after(m: re.Match) -> str:
        handle = m.group("handle")
        return f"by {handle}" if handle.isascii() and only_creator(handle.casefold()) else m[0]

    def before(m: re.Match) -> str:
        handle = m.group("handle")
        # before a name in Latin letters, any creator's; before one in another script, a creator's and no model's
        # unless honoured or said to have made it ("veryverybtの食蜂操祈", not "ウマ娘の")
        known = creator if m.group("latin") or m.group("honored") or m.group("made") else only_creator
        # before a kind word the handle is the model's name unless it names no model ("DaisyのLoRAで": Daisy's LoRA)
        if _KIND_NEXT.match(m.string, m.end()) and not (m.group("honored") or m.group("made")):
            known = only_creator
        return f"{handle}'s " if handle.isascii() and known(handle.casefold()) else m[0]

    def unmarked(m: re.Match) -> str:  # "velvetnibs lyra venn": the possessive typed without its apostrophe
        handle, word = m.group("handle"), m[0]
        plain = not only_creator(word.casefold()) and not is_english(word, COMMON_ZIPF)
        return f"{handle}'s" if plain and only_creator(handle.casefold()) else word

    def made(m: re.Match) -> str:  # "the one velvetnib made"
        handle = m.group("handle")
        named = creator(handle.casefold()) and not is_english(handle)  # "that was trained" says no one
        return f"{m.group('what')} by {handle}" if named else m[0]

    def underscored(m: re.Match) -> str:  # "wiz_'s marin": the handle's underscore before its possessive
        return f"{m.group('handle')}{m.group('s')}" if creator(m.group("handle").casefold()) else m[0]

    def s_ended(m: re.Match) -> str:  # "rulles' Preist Pack": a handle ending in "s", its possessive an apostrophe
        # a creator's and no model's, no English word ("James' dog", "the girls' locker room"), before a name (not
        # "in Kyros' workshop")
        handle, owned = m.group("handle"), m.group("owned")
        named = owned[:1].isupper() or not is_english(owned)
        return f"{handle}'s" if named and only_creator(handle.casefold()) and not is_english(handle) else m[0]

    text = _S_ENDED_POSSESSIVE.sub(s_ended, text)
    text = _MAKER_BEFORE.sub(before, _MAKER_AFTER.sub(after, _MADE_BY_HANDLE.sub(made, text)))
    return _UNMARKED_POSSESSIVE.sub(unmarked, _UNDERSCORED_POSSESSIVE.sub(underscored, text))


# a handle said to have made the model, after it: "the one velvetnib made", "the lora ormondfan trained"
_MADE_BY_HANDLE = re.compile(
    rf"(?i)(?P<what>\b(?:one|lora|model|version|embedding|that|the))\s+(?P<handle>{_HANDLE})"
    r"\s+(?:made|trained|did|uploaded|posted)\b"
)
# a handle ending in underscores, with its possessive, before a name: "wiz_'s marin kitagawa"
_UNDERSCORED_POSSESSIVE = re.compile(
    r"(?<![\w'’])(?P<handle>[^\W_][\w.-]*?[^\W_])_+(?P<s>['’]s)\b(?!\s*(?:lora|model|embedding|style)\b)"
)  # "(hikki_'s lora)" after a name glosses it, as it is
# a handle ending in "s" with the apostrophe of its possessive, before a name: "rulles' Preist Pack"
_S_ENDED_POSSESSIVE = re.compile(r"(?<![\w'’])(?P<handle>[^\W_][\w.-]*s)['’](?=\s+(?P<owned>[^\W\d_][\w-]*))")
# a handle with an "s" and no apostrophe before a name: "velvetnibs lyra venn"
_UNMARKED_POSSESSIVE = re.compile(r"(?<![\w'’])(?P<handle>[^\W\d_][\w.-]{2,}?)s'?(?=\s+[^\W\d_])")


def opens_scene(word: str, following: str = "") -> bool:
    """Does ``word`` open what the picture shows: a preposition, what the subject is doing ("bending"), or what is
    done to it before a preposition ("surrounded by zombies", "buried in paperwork")? Not a preposition before a
    bare number: "extract at 320" says which file."""
    return (
        (word in SCENE_OPENERS and not following.isdigit())
        or (word == "next" and following == "to")
        or (len(word) > 4 and word.endswith("ing") and word not in _ING_NOUNS)
        # the same in Spanish, Portuguese and Italian ("tocando violino", "bebiendo té"), no English word
        or (len(word) > 5 and word.endswith(("ando", "endo", "indo")) and not is_english(word))
        or (len(word) > 4 and word.endswith("ed") and following in SCENE_OPENERS)
        # a Japanese sentence going on after a name, from its particle ("tohsaka rinが雨上がりの商店街を...")
        or (is_unspaced(word) and word[:1] in _PARTICLES)
        # how the subject does it, before what it does ("toriel gently shooing ...", "frieza smugly sipping ...")
        or (_adverb(word) and following != word and opens_scene(following))
    )


def _adverb(word: str) -> bool:
    """Is ``word`` an English adverb made from an adjective ("gently", "smugly", "happily"), not a name that ends
    the same way ("holly", "emily")?"""
    if len(word) < 5 or not word.endswith("ly"):
        return False
    stem = word[:-2]  # "smug" of "smugly", "gentle" of "gently", "happy" of "happily"
    made_from = (stem, word[:-1] + "e", stem[:-1] + "y" if stem.endswith("i") else stem)
    return len(stem) >= 4 and any(is_english(form) for form in made_from)


_PARTICLES = frozenset("がをにでへとはも")


# between names listed together ("qiyana x viking punk lora": the "x" of a crossover)
LISTING = frozenset("and with w plus using x und mit et avec y con".split())
_AND = frozenset("and plus und et y".split())  # between names listed with no kind word said: a list, not "with"
_LIST_MARK = re.compile(r"[,+&;]|\bw/|\s/\s")  # "hoshimi miyabi / tropical-island": a slash set apart
_JOINED_BY = re.compile(r"[+&]|\bw/")  # marks that join two names as a connector word does
_FILE_LIKE = re.compile(r"[^\W_][_-][^\W_]|\d|[a-z][A-Z]")  # joined parts, digits, inner capitals


def _listed(
    text: str,
    runs: list,
    lowered: list[str],
    marked: set[int],
    strengths: list[tuple[int, int]] = (),
    spells_rare: Callable[[str], bool] = lambda text: False,
) -> list[set[int]]:
    """The names a request lists beside the ones it marks, before its picture: "malenia" of "malenia with the
    claymation lora", "tatsumaki + my stained glass lora", both of "kcutetanks and cosmic landscapes, a tank ...".
    Each starts after a connector and runs to the next one, "from" and its series included ("freya from danmachi
    with the mononoke lora"); the list ends where the scene begins ("fox statue at a shrine gate, swingwings shrine
    lora": the statue is the picture). A request that marks no name lists with "and" only, in its first clause,
    and "with" only before a file's name ("malenia with epi_noiseoffset") or a model's whole name with a rare word
    ("fumina with glasstech world morph"; "lilo with butterfly wings" is Lilo). A
    name given a strength is a model's, wherever it stands ("maki with bubble drip at 60 percent", "..., hairdetailer
    0.4"), and a word in -ing that ends a name listed after "+" before a comma is that name's ("+ better portrait
    lighting, close-up"). Words in a script written without spaces are left to the marked phrase."""
    kinds = [i for i in marked if lowered[i] in KIND_WORDS]
    listing = LISTING if kinds else _AND
    # a bracket around a name's series ends no clause: "europa (granblue) + hellscape768, ..."
    breaks = [i for i in range(1, len(runs)) if _break(text, runs, i, brackets=False)] + [len(runs)]
    end = len(runs) if kinds else breaks[0]
    # "the gameiconresearch scroll lora: ancient sealed scroll with red ribbon": after a named kind word's colon,
    # the picture
    end = min([end] + [k + 1 for k in kinds if _LIST_LABEL.match(text[runs[k][1] :])])

    def file_name(j: int) -> bool:  # "epi_noiseoffset", "emotion-puppeteer", "lora4cats": a file's name, not a word
        return j < len(runs) and bool(_FILE_LIKE.search(text[runs[j][0] : runs[j][1] + 2]))

    last_kind = max(kinds, default=-1)

    def weighted(j: int) -> bool:  # a strength follows run j: "bubble drip at about 60 percent", "hairdetailer 0.4"
        return any(0 <= start - runs[j][1] <= 2 and not text[runs[j][1] : start].strip(" :") for start, _ in strengths)

    # with no kind word the list is the first clause, and each next one that is a name given a strength
    # ("tsukioka kogane 0.8, plastic clothes 0.4 - posing ..."; "..., holding her wand" is the picture)
    for at, following in zip(breaks, breaks[1:]):
        if kinds or end != at or not weighted(following - 1):
            break
        end = following

    def titled(j: int) -> bool:  # "... in Star Trek Uniforms, standing ...": two words or more, each capitalised
        words = []
        while j < end and not (words and _parted(text[runs[j - 1][1] : runs[j][0]])):
            if lowered[j] in LISTING:
                break
            words.append(text[runs[j][0] : runs[j][1]])
            j += 1
        return len(words) >= 2 and all(w[:1].isupper() for w in words)

    def named_to_strength(j: int) -> bool:  # the words from run j to the next break end with a strength
        while j < end and not opens_scene(lowered[j], lowered[j + 1] if j + 1 < len(runs) else ""):
            if weighted(j):
                return True
            if j + 1 < len(runs) and _parted(text[runs[j][1] : runs[j + 1][0]]):
                return False
            j += 1
        return False

    def spelled_rare(said: str, _count: int) -> bool:
        return spells_rare(said)

    def rare_name_at(j: int) -> bool:  # runs from j spell a model's whole name with a rare word, in one clause
        return j < end and _longest_name(text, runs[:end], j, DEFINITE_NAME_WORDS[1], set(), spelled_rare) is not None

    def joins(j: int) -> bool:  # run j continues the list: a connector, a mark, a clause break, a kind word
        if j >= end or lowered[j] in listing or lowered[j] in KIND_WORDS:
            return True
        if _parted(text[runs[j - 1][1] : runs[j][0]]):
            return True
        if not kinds and lowered[j] == "in":  # a name said in title case after "in" is a model's, not a place
            return titled(j + 1)
        if not kinds and lowered[j] in _WITH:  # "with", and as other languages say it ("mostima mit ghostdom")
            return (
                file_name(j + 1)
                or (j + 2 < len(runs) and lowered[j + 1] in _DETERMINERS and file_name(j + 2))
                or named_to_strength(j + 1)
                or rare_name_at(j + 1 + (j + 1 < len(runs) and lowered[j + 1] in _DETERMINERS))
            )
        return bool(kinds) and lowered[j] in SCENE_OPENERS and bool({j + 1, j + 2} & marked)

    names: list[set[int]] = []
    before: set[int] = set()  # the name before this one, listed or marked ("lolcharacters' Ashe and ...")
    in_scene = False  # past a word of what the picture does, with no connector since
    i, carried = 0, False  # carried: the run before i was a connector word
    # "usa l'embedding di ...", "vocês têm o embedding ...": "use" and "do you have" name nothing
    while i < end and (
        lowered[i] in _USE
        or lowered[i] in ASKING
        or lowered[i] in _FILLERS
        or (i and lowered[i] == "so" and lowered[i - 1] in _FILLERS)
    ):
        i += 1
    while i < end:
        connected = carried or (i > 0 and bool(_JOINED_BY.search(text[runs[i - 1][1] : runs[i][0]])))
        carried = False
        while i < end and (lowered[i] in _DETERMINERS or lowered[i] in listing or lowered[i] in _WITH):
            connected = connected or lowered[i] in listing or lowered[i] in _WITH
            i += 1
        if i < end and lowered[i] in _INDEFINITE:  # "a knight with ...": the picture, to the next connector
            i += 1
            while i < end and not joins(i):
                i += 1
            continue
        j, taken = i, set()

        def ends_name(j: int) -> bool:  # "+ better portrait lighting, close-up": the -ing word ends the name
            closes = j + 1 >= end or _parted(text[runs[j][1] : runs[j + 1][0]])
            return connected and bool(taken) and closes and lowered[j].endswith("ing")

        while (
            j < end
            and lowered[j] not in KIND_WORDS
            and lowered[j] not in LISTING
            and lowered[j] not in _ORIGIN
            and (not opens_scene(lowered[j], lowered[j + 1] if j + 1 < len(runs) else "") or ends_name(j))
            and not (taken and _parted(text[runs[j - 1][1] : runs[j][0]]))
        ):
            taken.add(j)
            j += 1
        if taken and j < end and lowered[j] in _ORIGIN:  # "freya from danmachi": where she is from, not her name
            j += 1
            while j < end and not (joins(j) or opens_scene(lowered[j], lowered[j + 1] if j + 1 < len(runs) else "")):
                j += 1
        if not taken:
            if i < end and not (lowered[i] in KIND_WORDS or joins(i)):
                break  # the scene began
            # after a bracket the scene may begin too: what it does to its things names no model, until a connector
            # ("hex maniac (murky's lora) reading fortune cards by candlelight"; "..., plus the menma style")
            doing = (
                i < end
                and lowered[i] not in listing
                and opens_scene(lowered[i], lowered[i + 1] if i + 1 < len(runs) else "")
            )
            in_scene = doing or (in_scene and not _parted(text[runs[i - 1][1] : runs[i][0]]))
            i += 1
            continue
        if not joins(j):
            # the scene began after this name: it is the picture's subject; so is a name listed with it ("Sans and
            # Toriel telling knock-knock jokes"), said as names are: no English word alone, or words each capitalised
            # ("Ashe and Star Guardian Lux having a picnic")
            # (in a request written in title case, capitals say nothing: "Makima And Red Umbrella Standing In ...")
            capitalised = (
                len(taken) > 1 and all(text[runs[k][0]].isupper() for k in taken) and text[runs[j][0]].islower()
            )
            named = capitalised or not all(is_english(lowered[k]) for k in taken)
            if connected and before and lowered[i - 1] in _AND and named:
                names.append(taken)
            break
        # after the last kind word only a connector lists a name: "the alleyway lora, rainy night" is the picture
        if (
            (not kinds or min(taken) < last_kind or connected or weighted(max(taken)))
            and (connected or not in_scene)
            and not taken & marked
            and not any(is_unspaced(lowered[k]) for k in taken)
        ):
            names.append(taken)
        carried = j < end and lowered[j] in listing
        before, in_scene = taken, in_scene and not connected
        i = j + 1 if j < end and (lowered[j] in listing or lowered[j] in KIND_WORDS) else j
    return names


def _written_files(text: str, runs: list, files: list[tuple[int, int]], taken: set[int]) -> list[set[int]]:
    """The names written as their files, pieces joined by underscores ("bg = mccc Concept_Scenery_scene_V1"), which no
    other reading took: a model's name wherever it stands ("t-shirt" and "concept-art" are words as written)."""
    found = []
    for start, end in files:
        inside = {i for i, (s, e, _) in enumerate(runs) if start <= s and e <= end}
        written = text[start:end]
        # a file's name, with a capital or a number ("Concept_Scenery_scene_V1"), not a tag ("looking_at_viewer") nor
        # a version's label ("(v2_offset)")
        if (
            len(inside) > 1
            and not inside & taken
            and re.search(r"[^\W_]_[^\W_]", written)
            and re.search(r"[A-Z\d]", written)
            and not re.match(r"(?i)v\d", written)
        ):
            found.append(inside)
    return found


def _labelled_fields(text: str, runs: list) -> list[set[int]]:
    """The names a request gives as labelled fields, two or more ("character: dehya / style: kenshin187 art style /
    outfit: nijiarmor / scene: kneeling in sand"): each field's words to where the next begins; a scene field is the
    picture."""
    labels = list(FIELD_LABEL.finditer(text))
    if len(labels) < 2:
        return []
    names: list[set[int]] = []
    for label in labels:
        stop = FIELD_BREAK.search(text, label.end())
        end = stop.start() if stop else len(text)
        if found := {j for j, (start, finish, _) in enumerate(runs) if label.end() <= start and finish <= end}:
            names.append(found)
    return names


_LIST_LABEL = re.compile(r"^\s*:")
_LIST_END = re.compile(r"[.;!?\n]|\b(?:prompt|scene)\s*:")
_LABEL_LEAD = frozenset("my the use using with".split())  # what may stand before a list's kind word


def _labelled_list(text: str, runs: list, lowered: list[str]) -> list[set[int]]:
    """The names a kind word with a colon lists, as people paste them from their tools: "loras: moona hoshinova,
    celtpunk, stripey thigh high socks. prompt: dancing around a bonfire". Each item, between commas or "and", is a
    name, to the sentence's end."""

    def opens_clause(i: int) -> bool:  # "loras: ...", "my loras: ..."; "horikoshi kohei's style: ..." names one
        while i > 0 and not _break(text, runs, i) and lowered[i - 1] in _LABEL_LEAD:
            i -= 1
        return i == 0 or _break(text, runs, i)

    for i, word in enumerate(lowered[:-1]):
        if word in KIND_WORDS and _LIST_LABEL.match(text[runs[i][1] :]) and opens_clause(i):
            names: list[set[int]] = [set()]
            for j in range(i + 1, len(runs)):
                gap = text[runs[j - 1][1] : runs[j][0]]
                if j > i + 1 and _LIST_END.search(gap):
                    break
                if j > i + 1 and (_LIST_MARK.search(gap) or lowered[j] in _AND):
                    names.append(set())
                if lowered[j] not in _AND:
                    names[-1].add(j)
            return [found for found in names if found] if len(names) >= 2 else []
    return []


DEFINITE_NAME_WORDS = (2, 4)  # how many words a name said after "the" may have, fewest and most
INSIDE_NAME_WORDS = 5  # the most words of a whole name said inside a request ("floral bow crystal pointy heels")
LONE_NAME_LETTERS = 8  # a one-word name listed as a clause of its own is at least this long


def _longest_name(
    text: str,
    runs: list,
    start: int,
    most: int,
    taken: set[int],
    accepts: Callable[[str, int], bool],
    closes: bool = False,
) -> range | None:
    """The longest run of at most ``most`` words from run ``start``, inside one clause and clear of ``taken``, whose
    text ``accepts`` (given the text and its word count); with ``closes``, only one its clause ends with."""
    for length in range(most, 0, -1):
        group = range(start, start + length)
        if group.stop > len(runs) or taken.intersection(group) or any(_break(text, runs, j) for j in group[1:]):
            continue
        if closes and group.stop < len(runs) and not _parted(text[runs[group.stop - 1][1] : runs[group.stop][0]]):
            continue
        if accepts(text[runs[start][0] : runs[group.stop - 1][1]], length):
            return group
    return None


def _definite_names(
    text: str, runs: list, lowered: list[str], spells: Callable[[str], bool], taken: set[int]
) -> list[set[int]]:
    """Whole model names of two words or more said after "the" in one clause ("wearing the pink nurse uniform", "in
    the Sin Red Dress"): the article points at a thing the person has, a model named as surely as by a kind word.
    The longest name at each "the" counts."""
    fewest, most = DEFINITE_NAME_WORDS

    def after_the(i: int) -> range | None:
        if lowered[i] != "the":
            return None
        return _longest_name(text, runs, i + 1, most, taken, lambda said, n: n >= fewest and spells(said))

    return _each_name(len(runs), after_the)


def _each_name(count: int, find: Callable[[int], range | None], start: int = 0) -> list[set[int]]:
    """The names ``find`` reads at each of ``count`` runs from ``start``, each next search past the last found."""
    found: list[set[int]] = []
    i = start
    while i < count:
        if group := find(i):
            found.append(set(group))
            i = group.stop
        else:
            i += 1
    return found


def _plain_word(said: str) -> bool:
    """Is a one-word name too short or too plain in shape to be a name alone ("smoking", "cats")?"""
    return len(said) < LONE_NAME_LETTERS or said.lower().endswith(("ing", "ed", "s"))


# what a model may be given as in a picture ("... as the background"): the words before are its name
SETTING_WORDS = frozenset("background backdrop bg backgrounds setting scenery hintergrund fondo fond fundo".split())
# what a clause of a whole name ends with when it gives the model's role: a setting, a concept, a kind
_SET_APART = SETTING_WORDS | KIND_WORDS | {"concept"}
# what may stand between a name and the setting it is given as ("ghostdom als hintergrund", "as the background")
_AS = frozenset("as als como comme come the de di en".split())


RARE_ENGLISH_ZIPF = 2.5  # an English word, however rare ("runes"); a made-up one is rarer ("claymation")
LONE_WORD_LETTERS = 4  # a made-up word this long that spells a model's name is that name wherever it stands


_WORD_JOINERS = re.compile(r"[-_'’.]+")  # what joins the pieces of one written word ("shitu-mecha", "alloutna'vi")


def _written_word(text: str, runs: list, i: int) -> range:
    """The runs of the word written from run ``i`` with no space, to its last piece ("shitu-mecha"), or none when
    run ``i`` continues a word written before it."""
    if i > 0 and _WORD_JOINERS.fullmatch(text[runs[i - 1][1] : runs[i][0]]):
        return range(i, i)
    stop = i + 1
    while stop < len(runs) and _WORD_JOINERS.fullmatch(text[runs[stop - 1][1] : runs[stop][0]]):
        stop += 1
    return range(i, stop)


def _lone_name(
    text: str,
    runs: list,
    word: range,
    taken: set[int],
    spells_rare: Callable[[str], bool],
    owns_trigger: Callable[[str], bool],
) -> bool:
    """Is one written word, clear of ``taken``, a model's name wherever the request says it: a word made up for a
    model, which no language has, that spells a model's whole name or is the trained word of one model alone
    ("cosmicnouveau look", "with arachnophobiaai", "exodus-styling at 0.6", "..., ddbitlip"; not "a qipao")? As in
    the WebUI, where an embedding's name anywhere in a prompt applies it."""
    if not word or taken.intersection(word):
        return False
    said = text[runs[word.start][0] : runs[word.stop - 1][1]]
    # a trained word after "a" is a thing of the picture, however few cards say it ("in a warm genkan")
    described = bool(
        _INDEFINITE.intersection(text[s:e].casefold() for s, e, _ in runs[max(0, word.start - 2) : word.start])
    )
    named = spells_rare(said) or (owns_trigger(said) and not described)
    return len(said) >= LONE_WORD_LETTERS and named and is_coined(squash(said))


def _listed_rare_names(
    text: str, runs: list, lowered: list[str], spells_rare: Callable[[str], bool], taken: set[int]
) -> list[set[int]]:
    """Whole model names with a word few cards have, each a clause of its own in a list ("cirno, steampunkai,
    standing on a frozen lake", "hoshimi miyabi / tropical-island"): models named as surely as by a kind word. The
    longest name at each clause's start counts, and only one that the clause ends with."""

    def named(said: str, count: int) -> bool:
        # one word alone is a name only when long and not a plain word's shape ("steampunkai", not "smoking")
        return not (count == 1 and _plain_word(said)) and spells_rare(said)

    found: list[set[int]] = []
    for i in range(len(runs)):
        if i in taken or (i > 0 and not _parted(text[runs[i - 1][1] : runs[i][0]])):
            continue
        if group := _longest_name(text, runs, i, DEFINITE_NAME_WORDS[1], taken, named, closes=True):
            found.append(set(group))
    return found


def _rare_names_inside(
    text: str,
    runs: list,
    lowered: list[str],
    spells: Callable[[str], bool],
    spells_rare: Callable[[str], bool],
    taken: set[int],
    marked: set[int],
    owns_trigger: Callable[[str], bool] = lambda text: False,
) -> list[set[int]]:
    """Whole model names with a word few cards have that end a clause (or come before a kind or setting word), said
    past the request's opening, not as a place, nor after "a"/"an" unless English lacks one of its words ("kanbe
    kotori asleep at her desk using drooling on sleep", "swire at a food stall, cyberworld background", "hitomi in a
    zhongguo jacket, ..."; "standing behind broken glass" is the picture), in a clause that marks no other name
    ("pose lora where ... index fingers together" names one model). A clause that is only a whole name and the
    setting or kind it is given ("..., future technology city background") names it, however common its words."""
    clause = [0] * len(runs)  # parts of the request between list marks and clause breaks ("nonomi + ... style + ...")
    for j in range(1, len(runs)):
        clause[j] = clause[j - 1] + _parted(text[runs[j - 1][1] : runs[j][0]])
    marked_clauses = {clause[j] for j in marked}

    def named(said: str, count: int) -> bool:  # one word alone: as a listed name, and no English word either
        return not (count == 1 and (_plain_word(said) or is_english(said))) and spells_rare(said)

    def called(stop: int) -> bool:  # a kind or setting word follows: "cyberworld background", "... als hintergrund"
        while stop < len(runs) and lowered[stop] in _AS and not _break(text, runs, stop):
            stop += 1
        return stop < len(runs) and lowered[stop] in _SET_APART

    def closes(stop: int) -> bool:  # the clause ends there
        return stop >= len(runs) or _parted(text[runs[stop - 1][1] : runs[stop][0]])

    def placed(i: int) -> bool:  # "standing behind broken glass", "sweeping autumn leaves": the picture's things
        before = lowered[i - 2] if i >= 2 and lowered[i - 1] in _DETERMINERS else lowered[i - 1]
        acting = len(before) > 4 and before.endswith("ing") and before not in _ING_NOUNS | _DRESSING
        return before in _WHERE or acting

    def set_apart_name(said: str, count: int) -> bool:  # one word alone, a name English does not have ("siza")
        return spells(said) if count >= 2 else spells_rare(said) and not is_english(said)

    def set_apart(i: int, group: range) -> bool:  # a clause of its own: ", future technology city background"
        stop = group.stop
        if not (_parted(text[runs[i - 1][1] : runs[i][0]]) and stop < len(runs) and lowered[stop] in _SET_APART):
            return False
        return stop + 1 >= len(runs) or _parted(text[runs[stop][1] : runs[stop + 1][0]])

    def name_at(i: int) -> range | None:
        lone = _written_word(text, runs, i)
        # "specter from arknights", "mumei lora (hololive council)": where a name is from ("backdrop from
        # apocalypseengine" names a model's role)
        after_from = lowered[i - 1] in _ORIGIN and not (i >= 2 and lowered[i - 2] in _SET_APART)
        bracketed = in_brackets(text, runs[i][0])
        # in brackets a name may be where one is from ("(hololive council)"); a trained word never is ("(bodygrammps)")
        rare = (lambda said: False) if bracketed else spells_rare
        if not after_from and _lone_name(text, runs, lone, taken, rare, owns_trigger):  # marked clauses too
            longer = _longest_name(text, runs, i, INSIDE_NAME_WORDS, taken, named)
            return longer if longer is not None and len(longer) > len(lone) else lone
        if i in taken or clause[i] in marked_clauses or after_from:
            return None
        group = _longest_name(text, runs, i, INSIDE_NAME_WORDS, taken, named)
        if group is None or not called(group.stop):  # any whole name in a clause of its own with what it is
            apart = _longest_name(text, runs, i, INSIDE_NAME_WORDS, taken, set_apart_name)
            if apart is not None and set_apart(i, apart):
                return apart
        if group is None or not (called(group.stop) or (closes(group.stop) and not placed(i))):
            return None
        # after "a", only a name of two words or more with one English does not have ("in a zhongguo jacket", not "a
        # night market" nor "an alleyway")
        if lowered[i - 1] in _INDEFINITE and (len(group) < 2 or all(is_english(lowered[k]) for k in group)):
            return None
        # after "with", what a picture's subject has, in any English word ("a sorceress with glowing runes")
        if lowered[i - 1] in _WITH and all(is_english(lowered[k], RARE_ENGLISH_ZIPF) for k in group):
            return None
        return group

    return _each_name(len(runs), name_at, start=1)


def _weighted_clauses(
    text: str, runs: list, lowered: list[str], strengths: list[tuple[int, int]], taken: set[int]
) -> list[set[int]]:
    """Clauses that are only a name and the strength it is given, wherever they stand ("..., indian watercolor at
    half strength", "..., hair detailer 0.4, ..."): a strength is said of a model, so the words it ends a clause
    with name one."""
    found: list[set[int]] = []
    for start, end in strengths:
        before = [j for j, run in enumerate(runs) if run[1] <= start]
        after = next((j for j, run in enumerate(runs) if run[0] >= end), None)
        if not before or text[runs[before[-1]][1] : start].strip(" :"):
            continue  # the strength follows no word of a name
        if after is not None and not _parted(text[end : runs[after][0]]):
            continue  # the clause goes on past the strength: "... at 0.5 standing in ..."
        first = last = before[-1]
        while first > 0 and not _parted(text[runs[first - 1][1] : runs[first][0]]):
            first -= 1
        while first <= last and (lowered[first] in _DETERMINERS or lowered[first] in LISTING or not lowered[first]):
            first += 1
        group = set(range(first, last + 1))
        if group and len(group) <= INSIDE_NAME_WORDS and not group & taken:
            found.append(group)
    return found


# words before the name of a style, said as a style is: "drawn by katsura masakazu", "in the manner of marcel
# marlier", "look like the pulp art lora", "done in animepunk"
_STYLED = (
    ("drawn", "by"),
    ("painted", "by"),
    ("drawn", "like"),
    ("painted", "like"),
    ("manner", "of"),
    ("look", "like"),
    ("looks", "like"),
    ("done", "in"),
    # and in the other languages requests come in: "im Stil von ZFTLYs xmx", "no estilo sugimori ken", "nello stile
    # di ...", "dans le style de ...", "al estilo de ..."
    ("stil", "von"),
    ("im", "stil"),
    ("no", "estilo"),
    ("estilo", "de"),
    ("stile", "di"),
    ("style", "de"),
)


def _article_after_a_word(lowered: list[str], j: int, boundary_between) -> bool:
    """Is run ``j`` another language's article said after a word of that language ("dazu die ink wash lora", "y la
    acuarela lora")? It opens the name then; after a name ("arknights la pluma") it is the name's."""
    return (
        lowered[j].lower() in _DETERMINERS  # in capitals where the request reads as English
        and j > 0
        and not boundary_between(j - 1, j)
        and not is_english(lowered[j - 1], COMMON_ZIPF)
        and any(zipf_frequency(lowered[j - 1], language) >= COMMON_ZIPF for language in REQUEST_LANGUAGES)
    )


def _styled_after(text: str, runs: list, lowered: list[str], i: int) -> int:
    """The run where a phrase that says a style's name comes next ends at run ``i`` begins (0 is never one: a
    request does not open so), or 0."""
    for first, last in _STYLED:
        named_next = i + 1 < len(runs) and lowered[i + 1] not in ("a", "an")  # "drawn by a child" is the picture
        if named_next and i >= 1 and lowered[i] == last and lowered[i - 1] == first and not _break(text, runs, i):
            start = i - 1
            if first == "manner" and start >= 2 and lowered[start - 1] == "the" and lowered[start - 2] == "in":
                start -= 2
            return start if start > 0 else 0
    return 0


def _parted(gap: str) -> bool:
    """Does ``gap`` between two words end a name: a list mark or a clause break, but not the bracket that opens a
    name's series ("herta (star rail)")?"""
    return bool(_LIST_MARK.search(gap) or (CLAUSE_BREAK.search(gap) and gap.strip() != "("))


def _break(text: str, runs: list, j: int, brackets: bool = True) -> bool:
    """Does a clause break stand before run ``j`` (a bracket counting as one unless ``brackets`` is false)?"""
    gap = text[runs[j - 1][1] : runs[j][0]] if j > 0 else ""
    return j > 0 and bool(CLAUSE_BREAK.search(gap if brackets else re.sub(r"[()\[\]]", " ", gap)))


def _head(
    text: str,
    runs: list,
    lowered: list[str],
    boundary_between: Callable[[int, int], bool],
    names: Callable[[str], bool] = lambda word: False,
    start: int = 0,
    spells_title: Callable[[str], bool] = lambda text: False,
) -> tuple[set[int], set[int]]:
    """The runs of the noun phrase a request opens with (at run ``start``), up to where the scene begins, and those
    of the series after "from" ("ryo yamada from bocchi the rock playing bass on stage": "ryo yamada", "bocchi the
    rock"; "ayane from dead or alive", a title ``spells_title`` knows, runs on over "or")."""

    def run_until_scene(start: int, title: bool = False) -> list[int]:
        """The runs from ``start`` to where the scene opens; a ``title``'s first word opens nothing ("from breaking
        bad"), nor a word that is a clause of its own ("keqing, the locon version": a name, not a verb), nor one a
        name spells on with the next words ("stocking anarchy eating cake")."""
        taken: list[int] = []
        j = start
        named = any(names("".join(lowered[start : start + n])) for n in (2, 3) if start + n <= len(runs))
        while (
            j < len(runs)
            and (
                not opens_scene(lowered[j], lowered[j + 1] if j + 1 < len(runs) else "")
                or (
                    j == start
                    and lowered[j] not in SCENE_OPENERS
                    and (title or named or (j + 1 < len(runs) and _break(text, runs, j + 1)))
                )
            )
            and lowered[j] not in _ORIGIN
        ):
            gap = text[runs[j - 1][1] : runs[j][0]]
            if taken and gap != ":" and CLAUSE_BREAK.search(gap):
                break  # a clause ends the phrase; "half-elf" and "re:zero" are one word each
            taken.append(j)
            j += 1
        return taken

    def names_next(i: int) -> bool:  # "lora koharu", not "the lora that makes ..."
        return i + 1 < len(runs) and lowered[i + 1] not in STOPWORDS | _PHRASE_STOPS

    i = start
    # the kind word a request asks with leads into the name: "có lora koharu của blue archive không?"
    while (
        i < len(runs)
        and (lowered[i] in _PHRASE_STOPS or lowered[i] in _LEADING or (lowered[i] in KIND_WORDS and names_next(i)))
        and lowered[i] not in _ORIGIN
    ):
        # "a violinist in front of ...": the picture comes first, not a name; but "a genshin character" is a role
        # ("gera a athenams ...", "dibuja a geralt ...": after "draw" in another language, "a" is no indefinite)
        foreign_verb = i > 0 and lowered[i - 1] in _LEADING and not is_english(lowered[i - 1])
        if (
            lowered[i] in _INDEFINITE
            and not (lowered[i] == "a" and foreign_verb)
            and not _ends_in_anyone(run_until_scene(i + 1), lowered)
        ):
            return set(), set()
        i += 1
    if i < len(runs) and lowered[i] in PICTURE_NOUNS:  # "photo of my kitchen ...", "portrait of a girl ..."
        return set(), set()
    head = run_until_scene(i)
    if len(head) > 3 and lowered[head[0]] == "one" and lowered[head[1]] == "of":
        # "one of the ddlc girls reading poetry": the role is the group's last word, the words before it its series
        group = [j for j in head[2:] if lowered[j] not in _PHRASE_STOPS]
        if len(group) >= 2 and lowered[group[-1]] in ROLE_NOUNS:
            return {group[-1]}, set(group[:-1])
    if _ends_in_anyone(head, lowered) and len(head) > 1:
        # "a genshin character", "any teen titans character": the words before the role are its series
        return {head[-1]}, {j for j in head[:-1] if lowered[j] not in _PHRASE_STOPS | {"random", "one"}}
    owners = [k for k, j in enumerate(head[:-1]) if _possessive(text, runs[j])]
    owner: list[int] = []
    if owners:  # "goku's wife chichi": the one owned is the subject, the owner only describes her
        owner, head = head[: owners[-1] + 1], head[owners[-1] + 1 :]
    after = (head[-1] + 1) if head else i  # "from" follows the whole phrase: "the main witch from ..."
    if head[-1:] and lowered[head[-1]] not in ROLE_NOUNS:
        # "wife chichi" is named by "chichi"; "the girl from ..." and "the main witch from ..." by the role only; a
        # role inside a word written whole stays ("princess-knight-art")
        written = {k for j in head if len(word := _written_word(text, runs, j)) > 1 for k in word}
        head = [j for j in head if lowered[j] not in ROLE_NOUNS or j in written] or head
    series: list[int] = []
    if after < len(runs) and lowered[after] in _ORIGIN and not (head and boundary_between(head[-1], after)):
        # a title's first word may be a verb ("from breaking bad"), not where a date was cut ("from july tinkering")
        joined = after + 1 < len(runs) and not text[runs[after][1] : runs[after + 1][0]].strip()
        series = run_until_scene(after + 1, title=joined)
        # "the girl from inside out": a title of words that open scenes, which some name spells whole
        for length in (3, 2) if not series else ():
            taken = list(range(after + 1, after + 1 + length))
            if taken[-1] < len(runs) and names("".join(lowered[j] for j in taken)):
                series = taken
                break
        series = _title_run(text, runs, series, boundary_between, spells_title) if series else series
    if owner and head and lowered[head[-1]] in ROLE_NOUNS:
        # "megumin's little sister", "kim possible's green villain lady": someone of the owner's story
        series = sorted(set(series) | {j for j in owner if lowered[j] not in _PHRASE_STOPS})
    if not series and all(lowered[j] in ANYONE for j in head):
        return set(), set()  # "something that paints like frazetta": anyone from nowhere names no one
    return set(head), set(series)


def _title_run(
    text: str, runs: list, taken: list[int], boundary_between: Callable[[int, int], bool], spells_title: Callable
) -> list[int]:
    """The runs ``taken`` of a series, run on over a little word that would open a scene ("or", "is", "and") when the
    longer run spells a title (``spells_title``) in one clause: "dead" of "from dead or alive", "tomo-chan" of
    "tomo-chan is a girl"; not over what the scene does ("dr slump → running" is no "DSR")."""
    start, stop = taken[0], taken[-1] + 1
    if stop >= len(runs) or fold(text[runs[stop][0] : runs[stop][1]]) not in SCENE_OPENERS:
        return taken
    for end in range(min(len(runs), stop + TITLE_WORDS_ON), stop, -1):
        if not any(boundary_between(i, i + 1) for i in range(stop - 1, end - 1)) and spells_title(
            text[runs[start][0] : runs[end - 1][1]]
        ):
            return list(range(start, end))
    return taken


def _ends_in_anyone(taken: list[int], lowered: list[str]) -> bool:
    return bool(taken) and lowered[taken[-1]] in ANYONE


def naming_spans(reference: Reference, card: StoredCheckpoint) -> list[tuple[int, int]]:
    """Where the request named ``card``: its reference phrase with the kind and naming words around it, and the
    card's creator anywhere; the phrase's other words stay ("doing homework by the window" is the picture even
    when the card's tags say "window"). A request that marks no phrase loses the words of the card's name, version
    or trigger that no English text uses ("yoruichi by justTNP racing across rooftops"): English ones may be what
    it draws ("a tuba player in a marching band" of a marching band uniform LoRA)."""
    fields = card_fields(card)
    naming = set(fields["creator"])
    if not reference.phrase:
        naming |= {w for w in fields["name"] | fields["version"] | fields["trigger"] if not is_english(w)}
    spans_ = list(reference.phrase_spans)
    clauses = {reference.clauses[k] for k in reference.phrase}
    label = str(card.version or "")
    labelled = fields["version"] | fields["name"] | fields["trigger"]
    drawn = _drawn_after_name(reference, labelled | fields["creator"], {squash(t) for t in card.triggers})
    for k, (word, span) in enumerate(zip(reference.words, reference.spans)):
        if k in reference.label_tail and not labelled.intersection(word.forms):
            continue  # read as the version's label, but not the chosen one's: "steampunk clothing v2 inventor"
        if k in drawn:
            continue
        if k in reference.phrase or (not is_unspaced(word.forms[0]) and naming.intersection(word.forms)):
            spans_.append(span)
        elif reference.clauses[k] in clauses and len(word.forms[0]) >= 2 and labels_number(label, word.forms[0]):
            spans_.append(span)  # "deliberate v2 lora extract at 320": the dims its file's label carries
    if reference.phrase:
        spans_ += _name_run(reference, sorted(reference.phrase), fields["name"] | fields["trigger"])
        # the whole word a phrase word stands in: "in-container" names it, though its "in" reads as a stopword
        spans_ += [whole for span in spans_ if (whole := _whole_word(reference.text, span)) != span]
    # the little word between two words that named it goes with them ("dark and light style, ...")
    ordered = sorted(spans_)
    spans_ += [
        (before[1], after[0])
        for before, after in zip(ordered, ordered[1:])
        if before[1] < after[0] and _INSIDE_NAME.fullmatch(reference.text[before[1] : after[0]])
    ]
    return spans_


def _whole_word(text: str, span: tuple[int, int]) -> tuple[int, int]:
    """``span`` widened over the letters a hyphen joins to it ("in-" of "in-container")."""
    start, end = span
    while start > 1 and text[start - 1] == "-" and text[start - 2].isalnum():
        start -= 1
        while start > 0 and text[start - 1].isalnum():
            start -= 1
    while end + 1 < len(text) and text[end] == "-" and text[end + 1].isalnum():
        end += 1
        while end < len(text) and text[end].isalnum():
            end += 1
    return start, end


def _drawn_after_name(reference: Reference, called: set[str], trained: set[str]) -> set[int]:
    """In a request that names its model only by the words it opens with, those after the last one the card is
    called by: "crpht-4300 red vintage roadster on a coastal highway" names the embedding by its trained word, and
    the roadster is the picture's."""
    if reference.phrase_spans or not reference.phrase or reference.phrase != reference.head_phrase:
        return set()
    head = sorted(reference.head)
    named = [k for k in head if called.intersection(reference.words[k].forms)]
    if not named or named[0] != head[0]:
        return set()
    # only after a trained word written whole, and no word: "alyx vance", "mikasa akerman" and "android girl" are
    # all name
    opening = squash(reference.text[reference.spans[head[0]][0] : reference.spans[named[-1]][1]])
    return {k for k in head if k > named[-1]} if opening in trained and not is_english(opening) else set()


_LITTLE = r"(?:and|&|of|the|n|'n'|de|la|le|no|that|which)"
_INSIDE_NAME = re.compile(rf"(?i)\s+{_LITTLE}\s+")
# what may stand between the words of one name: "maurice quentin de la tour", "koxia (virtuareal)"
_INSIDE_RUN = re.compile(rf"(?i)(?:\s+{_LITTLE}){{0,2}}\s+|\s*[(\[]|[)\]]\s*")


def _name_run(reference: Reference, phrase: list[int], name: set[str]) -> list[tuple[int, int]]:
    """The words of the chosen card's name said right before or after its phrase, in the same clause and joined by
    spaces or a little word ("maurice quentin de la tour style lora" whose phrase read only "tour style"): the rest
    of the name, so no half of it reaches the picture."""
    words, spans, text = reference.words, reference.spans, reference.text
    found: list[tuple[int, int]] = []
    for step, k in ((-1, phrase[0]), (1, phrase[-1])):
        while 0 <= k + step < len(words):
            nxt = k + step
            left, right = (nxt, k) if step < 0 else (k, nxt)
            between = text[spans[left][1] : spans[right][0]]
            joined = _INSIDE_RUN.fullmatch(between)
            # a bracket opens a clause of its own, and the series said in it after the name is the name's
            other_clause = reference.clauses[nxt] != reference.clauses[k] and not re.search(r"[()\[\]]", between)
            if not joined or other_clause or not name.intersection(words[nxt].forms):
                break
            found.append(spans[nxt])
            k = nxt
    return found


def name_as_said(reference: Reference, card: StoredCheckpoint, cut: list[tuple[int, int]]) -> str:
    """The words among the ``cut`` spans that spelled ``card``'s name, as the request wrote them ("baicugirl"),
    when the card has no trained word to take their place and is a character with a made-up name: put back, they keep
    who the picture shows ("tokai teio striking a pose" is not "striking a pose"). A style's or a concept's name, or
    one in plain words, names only the model, so nothing stands in for it."""
    squashed = squash(card.name)
    if card.prompt_triggers or not is_character(card) or is_style(card) or "style" in squashed:
        return ""
    name = card_fields(card)["name"]
    said = {
        k
        for k, word in enumerate(reference.words)
        if any(_covered(*reference.spans[k], [span]) for span in cut)
        and word.forms[0] not in KIND_WORDS
        and (name.intersection(word.forms) or (len(word.forms[0]) >= 4 and squash(word.forms[0]) in squashed))
    }
    if not said or all(is_english(reference.words[k].forms[0]) for k in said):
        return ""
    return reference.written(said)


def labels_number(label: str, number: str) -> bool:
    """Does a version ``label`` carry ``number`` as a run of digits of its own ("LORA14DM120realistic..." carries
    120: a file's name runs its dims and sizes into its words)?"""
    return number.isdigit() and re.search(rf"(?<!\d){number}(?!\d)", label) is not None


def name_position(reference: Reference, cut: list[tuple[int, int]], card: StoredCheckpoint) -> int | None:
    """Where the phrase that named ``card`` begins among the ``cut`` spans (the trigger goes there), if the
    request marks one. Its creator's words are no place in the picture ("yoruichi by justTNP racing ...": the trigger
    takes the place of "yoruichi", not of "by justTNP")."""
    creator = card_fields(card)["creator"]
    return min(
        (
            reference.spans[k][0]
            for k in reference.phrase
            if reference.spans[k] in cut and not creator.intersection(reference.words[k].forms)
        ),
        default=None,
    )


def reference_spans(reference: Reference) -> list[tuple[int, int]]:
    """Every span of the reference phrases, before a checkpoint is chosen."""
    return [*reference.phrase_spans, *(reference.spans[k] for k in reference.phrase)]


def _groups(indices: set[int]) -> list[list[int]]:
    """Consecutive runs of ``indices``: {3, 4, 7} -> [[3, 4], [7]]."""
    groups: list[list[int]] = []
    for i in sorted(indices):
        if groups and groups[-1][-1] == i - 1:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def _made_by(text: str, runs: list, lowered: list[str], i: int, only_creators: Callable[[str], bool]) -> bool:
    """Is run ``i`` the end of "the <creator>" ("the h_madoka one", "the kozue version"), a handle known only as
    a creator?"""
    if i < 1:
        return False
    first = _joined_runs(text, runs, i)[0]
    return first >= 1 and lowered[first - 1] == "the" and only_creators(_joined(text, runs, i))


def _joined_runs(text: str, runs: list, i: int) -> list[int]:
    """The runs of the word joined by underscores that run ``i`` ends ("h", "madoka" of "h_madoka's")."""
    first = i
    while first > 0 and text[runs[first - 1][1] : runs[first][0]] == "_":
        first -= 1
    return list(range(first, i + 1))


_CONTRACTED = re.compile(r"(?i)(?:i|you|we|they|he|she|it|that|there)['’](?:d|m|ll|ve|re|s)")
_STYLE_WORDS = frozenset("style styles".split())
_AROUND = 3  # the most words of a name on either side of a word inside it


def _inside_a_name(text: str, runs: list, i: int, spells: Callable[[str], bool]) -> bool:
    """Is run ``i`` inside the words of a model's name, spelled whole with words before and after it and only
    spaces between ("medieval style armor suit")?"""

    def spaced(k: int) -> bool:  # only a space between runs k and k + 1
        return text[runs[k][1] : runs[k + 1][0]] == " "

    for first in range(max(0, i - _AROUND), i):
        for last in range(i + 1, min(len(runs), i + _AROUND + 1)):
            if runs[last][2][0] in KIND_WORDS:
                break  # "tokiame style lora": the name ends at the kind words
            if all(map(spaced, range(first, last))) and spells(text[runs[first][0] : runs[last][1]]):
                return True
    return False


def _said_next(text: str, runs: list, i: int) -> bool:
    """Is run ``i + 1`` the word said right after run ``i``, not one after a date or version the reading cut between
    them ("lora from apr 23, guy licking ...")?"""
    return i + 1 < len(runs) and text[runs[i][1] : runs[i + 1][0]].isspace()


def _joined_runs_on(text: str, runs: list, i: int) -> list[int]:
    """The runs of the word joined by underscores that run ``i`` begins ("h", "madoka" of "by h_madoka")."""
    last = i
    while last + 1 < len(runs) and text[runs[last][1] : runs[last + 1][0]] == "_":
        last += 1
    return list(range(i, last + 1))


def _joined_on(text: str, runs: list, i: int) -> str:
    """The word joined by underscores that run ``i`` begins, as written ("h_madoka" of "by h_madoka")."""
    return text[runs[i][0] : runs[_joined_runs_on(text, runs, i)[-1]][1]].casefold()


def _joined(text: str, runs: list, i: int) -> str:
    """The word joined by underscores that run ``i`` ends, as written ("h_madoka" of "h_madoka's"), or the run."""
    first = _joined_runs(text, runs, i)[0]
    return text[runs[first][0] : runs[i][1]].removesuffix("'s").removesuffix("’s").casefold()


def _compound(text: str, runs: list, i: int) -> bool:
    """Is run ``i`` part of a word joined by an underscore ("falling_above")?"""
    before = i > 0 and text[runs[i - 1][1] : runs[i][0]] == "_"
    after = i + 1 < len(runs) and text[runs[i][1] : runs[i + 1][0]] == "_"
    return before or after


def _acts_on(lowered: list[str], j: int) -> bool:
    """Is run ``j`` a verb acting on what follows ("wearing the", "holding a"), not a word of a name ("the walking
    dead")?"""
    return (
        j + 1 < len(lowered)
        and opens_scene(lowered[j], lowered[j + 1])
        and lowered[j] not in _CONNECTORS
        and lowered[j + 1] in _DETERMINERS | _INDEFINITE | {"her", "his", "their"}
    )


def _is_verb(lowered: list[str], i: int) -> bool:
    """An action word at the start, after who is asked ("can you make ouro kronii ...", "please draw"), or before an
    object ("paint a fox", "draw me"), not a name ("V9 paint")."""
    return i == 0 or lowered[i - 1] in _ASKED or (i + 1 < len(lowered) and lowered[i + 1] in _AFTER_VERB)


_VERSION_NOUNS = frozenset("version versão versao versión versione versi версия версии версию".split())


def _version_phrase(text: str, runs: list, lowered: list[str], version: tuple[int, int], phrase: set[int]) -> set[int]:
    """The words a version number belongs to: back to the clause's start ("command and conquer NOD v2"),
    and a clause tail of at most ``LABEL_TAIL`` words after it ("V9 paint", "v3.0-ming"), which it returns."""
    start, end = version
    before = [i for i, run in enumerate(runs) if run[1] <= start]
    if before and lowered[before[-1]] not in KIND_WORDS and not _BOUNDARY.search(text[runs[before[-1]][1] : start]):
        j = before[-1]
        if lowered[j] in _VERSION_NOUNS:  # "fast food cashier na versão 1.0": the name is before "in the version"
            j -= 1
            while j > 0 and lowered[j] in _PHRASE_STOPS and not _BOUNDARY.search(text[runs[j][1] : runs[j + 1][0]]):
                j -= 1
        named: set[int] = set()
        while j >= 0 and lowered[j] not in _PHRASE_STOPS and lowered[j] not in KIND_WORDS:
            named.add(j)
            if j == 0 or _BOUNDARY.search(text[runs[j - 1][1] : runs[j][0]]):
                break
            j -= 1
        # "serval from star rail v2": the label is the version of the name said with where it is from, not of "star
        # rail"; the head and its series are read as without the label
        if not (0 < j and lowered[j] in _ORIGIN and not _BOUNDARY.search(text[runs[j - 1][1] : runs[j][0]])):
            phrase.update(named)
    after = [i for i, run in enumerate(runs) if run[0] >= end]
    if not after:
        return set()
    tail: list[int] = []
    closes = True  # the tail runs to the end of the text or of its clause
    for i in after:
        gap = text[runs[tail[-1]][1] if tail else end : runs[i][0]]
        attached = not tail and gap in ("-", "_")
        if (_BOUNDARY.search(gap) and not attached) or lowered[i] in _PHRASE_STOPS:
            closes = lowered[i] not in _PHRASE_STOPS or bool(_BOUNDARY.search(gap))
            break
        tail.append(i)
    # A run of an unspaced script ("ผู้ชายเดินในตลาดนัด") is a sentence, not one word: count its character pairs.
    length = sum(len(runs[i][2]) if is_unspaced(runs[i][2][0]) else 1 for i in tail)
    if tail and ((closes and length <= LABEL_TAIL) or text[end : runs[tail[0]][0]] in ("-", "_")):
        phrase.update(tail[:LABEL_TAIL])
        return set(tail[:LABEL_TAIL])
    return set()


SPELLED_THROUGH = 2  # words before a little word that a name may reach back over ("angle from back")


def _spelled_through(
    text: str, runs: list, stop: int, kind: int, spells: Callable[[str], bool], boundary_between: Callable
) -> range | None:
    """The runs from up to ``SPELLED_THROUGH`` words before the little word at ``stop`` to the kind word at
    ``kind``, when they spell a model's whole name ("angle from back" before "lora"); None otherwise."""
    if stop + 1 >= kind:
        return None
    for start in range(max(0, stop - SPELLED_THROUGH), stop):
        if not any(boundary_between(k, k + 1) for k in range(start, kind - 1)) and spells(
            text[runs[start][0] : runs[kind - 1][1]]
        ):
            return range(start, kind)
    return None


def _done_to(lowered: list[str], i: int) -> bool:
    """Does "by" at ``i`` follow what was done to something in the picture ("lit by", "surrounded by")?"""
    return i > 0 and lowered[i - 1] not in _MAKING and _done(lowered[i - 1])


def _done(word: str) -> bool:
    """Does ``word`` say what was done ("lit", "painted"), a participle, not a name's word?"""
    return word in _DONE_IRREGULAR or (len(word) > 4 and word.endswith("ed"))


_MODEL_NOTE = re.compile(r"(?i)\bv(?:er(?:sion)?)?\.?\s*\d|\b(?:lora|locon|lycoris|embedding|ti)\b")


def _named_before_makers(
    text: str,
    runs: list,
    lowered: list[str],
    makers: set[int],
    phrase: set[int],
    boundary_between: Callable[[int, int], bool],
) -> set[int]:
    """The words right before "by" and a maker ("décor : Fitting Room de rulles (v2.0)", read "by rulles"), and, in a
    request that marks other names, before a bracket that gives a maker with a version or kind ("wearing a Vision Pro
    headset (LogicAI, v2.0)", though an article put it in the picture): a model's name."""
    named: set[int] = set()
    for i in sorted(makers):
        if i > 1 and lowered[i - 1] == "by" and not boundary_between(i - 2, i):
            last = i - 2  # the word before "by"
        elif phrase and (opened := _model_note_before(text, runs[i])) is not None:
            before = [j for j in range(len(runs)) if runs[j][1] <= opened]
            if not before or text[runs[before[-1]][1] : opened].strip():
                continue
            last = before[-1]
        else:
            continue
        j, taken = last, []
        while (
            j >= 0
            and j not in makers
            and lowered[j] not in STOPWORDS | _PHRASE_STOPS | SCENE_OPENERS | KIND_WORDS
            and not (taken and boundary_between(j, j + 1))
        ):
            taken.append(j)
            j -= 1
        # "saratoga from warship girls (tlfz's, v1.2)": the series of a name said before it, not a name (a picture
        # "of" someone is: "ein Bild von Mami Tomoe (die LoRA von cubby_ai)")
        series = j > 0 and lowered[j] in _ORIGIN and lowered[j - 1] not in PICTURE_NOUNS
        if taken and not phrase & set(taken) and not series:
            named.update(taken)
    return named


def _model_note_before(text: str, run: tuple) -> int | None:
    """Where the bracket opens that ``run`` stands in, when it says a version or kind ("(LogicAI, v2.0)")."""
    opened, closed = text.rfind("(", 0, run[0]), text.find(")", run[1])
    if opened < 0 or opened < text.rfind(")", 0, run[0]) or closed < 0:
        return None
    return opened if _MODEL_NOTE.search(text, opened, closed) else None


_DASH_OPENS = re.compile(r"\s[-–—]+\s*$")  # an aside opening with a dash, right before a word
_ASIDE_CLOSES = re.compile(r"[)–—,;]|-\s|$")  # what ends an aside: its bracket or dash, or a comma in it


def in_brackets(text: str, at: int) -> bool:
    """Does position ``at`` of ``text`` stand inside round brackets ("mumei lora (hololive council)")?"""
    return text.rfind("(", 0, at) > text.rfind(")", 0, at)


def _possessive(text: str, run: tuple[int, int, list[str]]) -> bool:
    end = run[1]
    return text[end - 2 : end].lower() in ("'s", "’s")


def _owns_a_role(runs: list, lowered: list[str], i: int, boundary_between: Callable[[int, int], bool]) -> bool:
    """Does the possessive run ``i`` own a role ("megumin's little sister", "kim possible's green villain lady")?
    Then the owner is who the subject is of, not whose model it is."""
    j = i + 1
    while j < len(runs) and not boundary_between(j - 1, j) and lowered[j] not in _PHRASE_STOPS:
        if opens_scene(lowered[j], lowered[j + 1] if j + 1 < len(runs) else ""):
            break
        j += 1
    return j > i + 1 and lowered[j - 1] in ROLE_NOUNS


def _lettered(text: str, runs: list, i: int) -> bool:
    """Is run ``i`` a word a single letter opens with a hyphen ("T-pose", "x-ray")?"""
    return (
        i > 0
        and len(runs[i - 1][2][0]) == 1
        and runs[i - 1][2][0].isalpha()
        and text[runs[i - 1][1] : runs[i][0]] == "-"
    )


def _letter_after(text: str, runs: list, i: int) -> bool:
    """Is run ``i`` a word an underscore joins to a single letter after it ("hex_d"), as files are named?"""
    return (
        i + 1 < len(runs)
        and len(runs[i + 1][2][0]) == 1
        and runs[i + 1][2][0].isalpha()
        and text[runs[i][1] : runs[i + 1][0]] == "_"
        and not is_unspaced(runs[i][2][0])
    )


_PLACE_WORDS = 3  # the most words of a place said before a name ("at a busy night market in the ...")


def _said_where(lowered: list[str], j: int) -> bool:
    """Do the words before run ``j`` say where or when the picture is: a place preposition, an article perhaps,
    then English words ("at dusk", "at a night festival")? A name never reaches back over them."""
    k = j - 1
    while k >= 0 and j - 1 - k < _PLACE_WORDS and lowered[k] not in STOPWORDS and is_english(lowered[k]):
        k -= 1
    if k == j - 1:
        return False
    if k >= 0 and lowered[k] in _ARTICLES | {"the"}:
        k -= 1
    return k >= 0 and lowered[k] in _PLACES


# prepositions of place: a possessive after one is where the picture is ("floating over summoner's rift")
_PLACES = frozenset(
    "on in at under over near beside inside outside across around behind into onto above below along among "
    "between beneath within through".split()
)
# places a name said after is where the picture is ("behind broken glass"); "in"/"on" may say what is worn or drawn
# ("in dark knight fashion", "marblesh:0.5 on elizabeth bathory")
_WHERE = _PLACES - {"in", "on"}


_SIGN_OFF = PLEASE | {"thx", "thanks"}  # said after a name, part of none ("lol" is a game too)
_ANYBODY = frozenset("someone somebody anyone anybody everyone everybody nobody".split())


def _handle_owns(
    text: str, runs: list, i: int, boundary_between: Callable[[int, int], bool], only_creators: Callable[[str], bool]
) -> bool:
    """Is run ``i`` the possessive of a handle only a creator has, said before more words ("in ishawn944's jkskirt"):
    whose model, even after a place's preposition?"""
    handle = _joined(text, runs, i)
    return (
        _possessive(text, runs[i])
        and i + 1 < len(runs)
        and not boundary_between(i, i + 1)
        and not is_english(handle)  # "someone's hands": a word, whoever has it as a handle
        and only_creators(handle)
    )


def _owner(text: str, runs: list, lowered: list[str], i: int, boundary_between: Callable[[int, int], bool]) -> bool:
    """Is run ``i`` a possessive that owns the words after it ("hahafofo's big head")? Not one that ends its clause
    or follows "a" or a place's preposition: "eating at a wendy's" and "over summoner's rift" say where, not whose
    model; nor a pronoun's "'s", which is "is"."""
    return (
        _possessive(text, runs[i])
        and lowered[i] not in STOPWORDS  # "she's levitating", "it's raining": a verb, not an owner
        and lowered[i] not in _ANYBODY  # "someone's hands squishing her face": no one's model
        and i + 1 < len(runs)
        and not boundary_between(i, i + 1)
        and not (i > 0 and lowered[i - 1] in _INDEFINITE | _PLACES)
        and not (i > 1 and lowered[i - 2] in _INDEFINITE)  # "holding a big guy's hand"
        # "at the ship's wheel", "on her captain's chair": where, as after the preposition alone
        and not (i > 1 and lowered[i - 1] in _DETERMINERS | {"her", "his", "their"} and lowered[i - 2] in _PLACES)
    )


__all__ = [
    "ANYONE",
    "CONTENT_WEIGHT",
    "FUNCTION_WORDS",
    "KIND_WORDS",
    "PLURAL_ROLES",
    "RELATION_NOUNS",
    "ROLE_NOUNS",
    "Reference",
    "name_as_said",
    "STOPWORDS",
    "in_brackets",
    "labels_number",
    "makers_in_english",
    "name_position",
    "naming_spans",
    "origin_first",
    "read_reference",
    "reference_spans",
    "wanting_words",
]
