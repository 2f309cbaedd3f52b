"""Check-in: request -> intent -> candidates -> decision -> question or rewritten prompt.

This is the Python API the UI and the CLI call. The reasoning engine is pluggable: the local deterministic
engine by default, or an LLM backend that falls back to it on any failure.
"""

from __future__ import annotations

import datetime as dt
import itertools
import logging
import re
import time
import unicodedata
from typing import Callable, Literal, Protocol

from pydantic import BaseModel, Field
from rapidfuzz import fuzz, process

from personalq.checkin.clarify import Option, ask, pick_by_words
from personalq.checkin.composition import Composition, Part, compose, span_of
from personalq.checkin.evidence import SelectionIndex, model_name
from personalq.checkin.intent import (
    SLOT_RANGE,
    SLOTS,
    TRAILING_FOREIGN,
    VERSION_WORD,
    Intent,
    keep_scene_negations,
    option_position,
    overlaps,
    parse_intent,
    prompt_text,
    says_base,
)
from personalq.checkin.reasoning import Decision, decide, narrow, rank, rules_out
from personalq.checkin.reference import (
    KIND_WORDS,
    Reference,
    makers_in_english,
    name_as_said,
    name_position,
    naming_spans,
    origin_first,
    read_reference,
    reference_spans,
)
from personalq.checkin.retrieval import CardCache, Ranking, among, named_by, retrieve
from personalq.checkin.rewrite import is_negative_embedding, prompt_trigger_for, rewrite_prompt, with_negative
from personalq.checkin.roles import role_of
from personalq.checkin.sessions import PartState, SessionState, SessionStore
from personalq.checkin.small_talk import without_small_talk
from personalq.checkin.spelling import Fix, as_typed, mend
from personalq.checkin.strength import STRENGTH_KEY
from personalq.checkin.tokens import field_tokens, squash, words
from personalq.repository.card import GENERIC_TAGS, WEBUI_EMPHASIS
from personalq.repository.service import Repository, StoredCheckpoint
from personalq.repository.weighted import DEFAULT_WEIGHT, MAX_CHECKPOINTS, MAX_WEIGHT, MIN_WEIGHT, WeightedId

log = logging.getLogger(__name__)
MAX_QUERY_CHARS = 2000
# a run of the request between spaces and punctuation, hyphens, underscores and dots kept ("Style-TronLegacy-8v-B")
_CHUNK = re.compile(r"[^\W_](?:[\w.-]*[^\W_])?")
# a run that reads as a file's own name rather than a word: joined parts, digits or inner capitals ("wcat8-v1-2000",
# "oot64", "DaveSpaceFour")
_IDENTIFIER = re.compile(r"[^\W_][-_.][^\W_]|\d|[a-z][A-Z]")


_VERSION_WORD = re.compile(r"(?i)v(?:er)?\.?\d+(?:\.\d+)*")
NUMBERED_NAME_WORDS = 3  # the most words of a name with a number in it read as a name ("march 7th", "2b", "tf2 heavy")


# a version's label said after what introduces one: "the one labeled first release", "the build marked sd 1.5"
_LABELLED = re.compile(r"(?i)\b(?:labell?ed|marked|called|named|tagged)\s+['\"“]?")
LABEL_WORDS = 4  # the most words a label said so is read over


def _labels_said(text: str, spells_file: Callable[[str], bool]) -> list[tuple[int, int]]:
    """The spans of version labels said after "labeled", "marked" ... that some file is labelled with whole, the
    longest first: such a label is that file, not an ordinal to read ("first release"); a base said so ("marked sd
    1.5") stays the base it says."""
    found = []
    for m in _LABELLED.finditer(text):
        chunks = list(itertools.islice(_CHUNK.finditer(text, m.end()), LABEL_WORDS))
        chunks = [c for c in chunks if not re.search(r"[,.;:!?—–()\"”]", text[m.end() : c.start()])]
        for last in reversed(chunks):
            if spells_file(said := text[m.end() : last.end()]) and not says_base(said):
                found.append((m.end(), last.end()))
                break
    return found


def _numbered_names(text: str, spells: Callable[[str], bool]) -> list[tuple[int, int]]:
    """Runs of two or more words with a number that spell a model's whole name or a title in it ("march 7th taking a
    selfie": March 7th of Honkai Star Rail, no date): no step reads a date or a version inside them."""
    chunks = list(_CHUNK.finditer(text))
    found: list[tuple[int, int]] = []
    for i in range(len(chunks)):
        for j in range(i + 1, min(i + NUMBERED_NAME_WORDS, len(chunks))):
            if text[chunks[j - 1].end() : chunks[j].start()].strip():
                break
            said = text[chunks[i].start() : chunks[j].end()]
            versioned = any(_VERSION_WORD.fullmatch(c.group()) for c in chunks[i : j + 1])  # "the V3 final" is one
            if any(c.isdigit() for c in said) and not versioned and spells(said):
                found.append((chunks[i].start(), chunks[j].end()))
    return found


_TAG_ITEM = re.compile(r"[^,]+")  # one item of a tag prompt


def _boilerplate(text: str) -> list[tuple[int, int]]:
    """The items of a pasted tag prompt that only ask for quality or a plain framing ("masterpiece", "best quality",
    "1girl"): the picture's, never a model's name, though a tag-list trigger may list them."""
    found = []
    for item in _TAG_ITEM.finditer(text):
        m = WEBUI_EMPHASIS.match(item.group())
        if m and GENERIC_TAGS.match(" ".join(m.group("tag").split())):
            found.append(item.span())
    return found


class Alternative(BaseModel):
    checkpoint_id: str
    name: str
    created_at: dt.datetime


class CheckinResult(BaseModel):
    status: Literal["selected", "clarify", "no_match"]
    checkpoint_id: str | None = None  # the first of ``checkpoints``: the model the request is about
    checkpoints: list[WeightedId] = Field(default_factory=list)  # every checkpoint of the image, at its weight
    prompt: str | None = None
    negative_prompt: str = ""
    question: str | None = None
    options: list[Option] = Field(default_factory=list)
    session: str | None = None
    reason: str = ""
    alternatives: list[Alternative] = Field(default_factory=list)
    engine: str = "local"
    intent: str = ""
    latency_ms: float = 0.0

    def contract(self) -> dict:
        """The JSON object of ``personalq checkin --json`` (DESIGN.md)."""
        return {
            "status": self.status,
            "checkpoint_id": self.checkpoint_id,
            "checkpoints": [c.model_dump() for c in self.checkpoints],
            "prompt": self.prompt,
            "negative_prompt": self.negative_prompt,
            "question": self.question,
            "options": [o.model_dump() for o in self.options],
            "session": self.session,
            "reason": self.reason,
            "alternatives": [a.model_dump(mode="json") for a in self.alternatives],
        }


class Reasoner(Protocol):
    name: str

    def decide(self, intent: Intent, ranking: Ranking) -> Decision: ...


class LocalReasoner:
    name = "local"

    def decide(self, intent: Intent, ranking: Ranking) -> Decision:
        return decide(intent, ranking)


class InvalidRequest(ValueError):
    """A request Check-in cannot work with (empty, absurdly long); the message is for the person."""


# a WebUI network tag in a request: "<lora:mochiCorgi_v2:0.8> mochicorgi sitting in a park"
_WEBUI_NETWORK = re.compile(r"<(?:lora|lyco|locon):(?P<name>[^:<>]+)(?::(?P<weight>[^<>:]*))?(?::[^<>]*)?>", re.I)
# a name with a WebUI weight joined to it and no brackets: "kanzaki kaori, baroqueai:0.6, holding a katana"; in
# round brackets it is the WebUI's emphasis of words of the picture ("(pink hair:1.1)"), which stays as written
_BARE_NETWORK = re.compile(
    r"(?<![\w:/<.'’])(?P<name>(?:[\w.-]+['’]s\s+)?[^\W\d_][\w.-]*[^\W_]):(?P<weight>[01]?\.\d+|[01])(?![\w.:])"
    r"(?!\s*\))",  # with its owner: "pikkiwynn's rem:0.9"
    re.I,
)
# the WebUI's second prompt written into a request: "a corgi in the rain, negative: blurry, lowres"
_NEGATIVE = re.compile(r"(?i)(?:^|[\s,.;(])(?:negative(?:\s+prompt)?|negatives|neg)\s*[:=]\s*(?P<negative>.*)$", re.S)


def _network(tag: re.Match) -> str:
    """A network tag named as "NAME lora" is: selection reads the name, the prompt drops it with its kind word and
    its strength ("at 0.8", which :mod:`~personalq.checkin.strength` reads), and nothing half-cut reaches the
    picture."""
    name = " ".join(re.sub(r"[-–—|/_]", " ", tag.group("name")).split())  # "3Shot_-_Style": one run of words
    weight = (tag.group("weight") or "").strip()
    strength = f" at {float(weight):.2f}" if re.fullmatch(r"-?\d*\.?\d+", weight) else ""
    return f", {name} lora{strength}, "


# a link to a model's page ("https://civitai.com/models/13813/bard-fashion?modelVersionId=16263")
_CIVITAI_LINK = re.compile(
    r"(?i)(?:https?://)?(?:www\.)?civitai\.com/models/(?P<model>\d+)[^\s?#,]*(?:\?[^\s#,]*?modelVersionId=(?P<version>\d+))?"
    r"[^\s,]*"
)


def _plain(name: str) -> str:
    """A card's name as one run of words: no punctuation to end a clause, no kind word to end a phrase."""
    said = re.sub(r"[^\w\s.]|_", " ", name).split()
    return " ".join(w for w in said if w.lower() not in KIND_WORDS)


def linked_models(text: str, index: SelectionIndex) -> str:
    """Each Civitai link read in place as the name of what it links to ("NAME VERSION lora"), so the link selects
    the model (and the version, when it says one) and leaves the picture; a model the repository lacks is named by
    its number, which no card is called by."""
    if "civitai.com" not in text.lower():
        return text

    def named(link: re.Match) -> str:
        model, version = link.group("model"), link.group("version")
        if version and (at := index.position.get(f"civitai-{version}")) is not None:
            card = index.cards[at]
            return f", {_plain(model_name(card))} {_plain(card.version or '')} lora, "
        if card := index.by_civitai_model.get(model):
            return f", {_plain(model_name(card))} lora, "
        return f", civitai model {model} lora, "

    return _CIVITAI_LINK.sub(named, text)


def split_negative(text: str) -> tuple[str, str]:
    """The request and the negative prompt it carries after "negative:" (the WebUI's "Negative prompt:" line)."""
    m = _NEGATIVE.search(text or "")
    if m is None:
        return text, ""
    return text[: m.start()].strip(" ,;"), " ".join(m.group("negative").split()).strip(" ,;)")


# an item of a negative prompt that calls an embedding by its trained word and kind, rather than writing the word
# alone: "civitai's greyscale embedding", "the line-art embedding from civitai", "summer4love263's gross embedding"
_CALLED_EMBEDDING = re.compile(
    r"(?i)^(?:(?:the|my|a|an|that)\s)?(?:(?P<owner>[^\s'’]+)['’]s\s)?(?P<name>\S+(?:\s\S+)*?)\s(?:negative\s)?"
    r"(?:embedding|embed|ti|textual inversion)"
    r"(?:\s(?:from|by|von|van|od|par|door|de|di|da|du|do|por)\s(?P<maker>\S+))?$"
)


def negative_item(item: str, index: SelectionIndex) -> tuple[StoredCheckpoint | None, str]:
    """The embedding an item of a negative prompt names, and the item as the prompt writes it: its trained word alone
    ("blurry, ngng00": the one embedding trained on "ngng00"), or called by that word, its kind and maker if said
    ("civitai's greyscale embedding": civitai's embedding trained on "greyscale", written "greyscale"); said so, an
    everyday word names the embedding trained on it."""
    plain = " ".join(WEBUI_EMPHASIS.sub(r"\g<tag>", item).split())
    if card := index.embedding_trained_on(plain):
        return card, item
    m = _CALLED_EMBEDDING.match(plain)
    if m is None:
        return None, item
    maker = m.group("owner") or m.group("maker")
    cards = [
        c for c in index.embeddings_trained_on(m.group("name")) if not maker or squash(maker) == squash(c.creator)
    ]
    if len(cards) != 1:
        return None, item
    return cards[0], item.replace(item.strip(), m.group("name"))


def trained_words_in_negative(negative: str, index: SelectionIndex) -> str:
    """``negative`` with each item that calls an embedding (see :func:`negative_item`) written as its trained word
    alone ("civitai's greyscale embedding" -> "greyscale"): the word is how the pipeline applies the embedding."""
    return ",".join(negative_item(item, index)[1] for item in negative.split(",")) if negative else negative


# the connector that lists a name after another: "lyra venn and the ink wash lora", "tatsumaki + my stained glass"
_JOINED_BEFORE = re.compile(
    r"(?i)\s*(?:\band|\bwith|\bplus|\bx|\bw/|\+|&)\s*(?:(?:the|my|your)\s+)?(?:[\w.-]+['’]s\s+)?"  # "+ manamomo's"
    r"(?:(?:lora|locon|lycoris|embedding|model)\s+(?:that|which)\s+)?$"  # "+ the lora that swaps ..."
)


# "weight:0.6", "cfg:7": a setting said with a value, not a name; "bartolomeobari style:0.65": the strength of the
# name the kind word ends
_KEYED = re.compile(rf"(?i){STRENGTH_KEY}|neg|negative|cfg|steps|seed|lora|lyco|locon|style|artstyle|embedding")


# an embedding called by its token, as sd-concepts-library writes it: "tylee in ba sing se, <kojima-ayami> style"
_EMBEDDING_TOKEN = re.compile(r"<(?P<name>[^\W_][\w.'-]*[^\W_]|[^\W_])>(?:\s+(?:style|embedding|ti)\b)?", re.I)


# where a list item of a prompt begins
_ITEM_START = re.compile(r"[,;!?()\n]|\.\s")


def _bare_weight(piece: str, m: re.Match) -> str:
    """``name:0.6`` read as the tag it stands for, ``<lora:name:0.6>``; a weight after a name of several words is the
    strength of the whole list item ("koyama yuzu:0.8, black and white comics:0.55, ..."), not of its last word; a
    setting ("weight:0.6", "cfg:7") or a kind word ("ink wash style:0.5") keeps its colon for the strength reader."""
    if _KEYED.fullmatch(m.group("name")):
        return m.group(0)
    item_start = max((s.end() for s in _ITEM_START.finditer(piece, 0, m.start())), default=0)
    if piece[item_start : m.start()].strip():
        return f"{m.group('name')} lora at {m.group('weight')}"
    return f"<lora:{m.group(0)}>"


def _bracketed(text: str) -> str:
    """``name:0.6`` outside a tag written as the tag it stands for (:func:`_bare_weight`), ``<lora:name:0.6>``, and an
    embedding's ``<token>`` too, with the kind word said after it ("<kojima-ayami> style")."""
    text = _EMBEDDING_TOKEN.sub(lambda m: f"<lora:{m.group('name')}>", text)
    pieces, last = [], 0
    for tag in _WEBUI_NETWORK.finditer(text):
        pieces += [text[last : tag.start()], tag.group(0)]
        last = tag.end()
    pieces.append(text[last:])
    return "".join(
        piece if k % 2 else _BARE_NETWORK.sub(lambda m, piece=piece: _bare_weight(piece, m), piece)
        for k, piece in enumerate(pieces)
    )


def network_tags(text: str) -> tuple[str, list[tuple[str, float | None]]]:
    """A request's WebUI tags: two or more are taken out and returned as (file name, weight), each to be found on
    its own (a tag's name is one name, "sitting_backwards_on_chair"); one is read in place as "NAME lora"."""
    text = _bracketed(text)
    tags = list(_WEBUI_NETWORK.finditer(text))
    if len(tags) < 2:
        return _WEBUI_NETWORK.sub(_network, text), []
    found = []
    for tag in tags:
        weight = (tag.group("weight") or "").strip()
        value = float(weight) if re.fullmatch(r"-?\d*\.?\d+", weight) else None
        found.append(
            (tag.group("name").strip(), value if value is None or MIN_WEIGHT <= value <= MAX_WEIGHT else None)
        )
    return _WEBUI_NETWORK.sub(" , ", text), found


# a title's period ends no clause: "mr. incredible" is one name
_TITLE_PERIOD = re.compile(r"(?i)\b(mr|mrs|ms|dr|st|jr|sr|prof|capt|sgt|lt|col)\.(?=\s)")


def _transposed(word: str) -> set[str]:
    return {word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(len(word) - 1)} - {word}


# connectors and kind words typed with two letters swapped ("acerola wiht the smug face lora", "usign western ink",
# "tsukishiro hana lroa"): no name reads so
_CONNECTOR_TYPOS = {
    typo: word
    for word in ("with", "using", "plus", "and", "wearing", "lora", "embedding")
    for typo in _transposed(word)
}
_CONNECTOR_TYPOS.pop("suing")
_CONNECTOR_TYPO = re.compile(r"(?i)\b(?:" + "|".join(sorted(_CONNECTOR_TYPOS, key=len, reverse=True)) + r")\b")


_AT_SHORT = re.compile(r"(?<!\S)@(?=\s)")  # "lyra @ a cafe"; "@handle" is a handle


# words that only lead into a part, left at the end when its name went and no trigger came
_LEADING_INTO = rf"(?:in|on|at|with|of|by|using|the|an?|{TRAILING_FOREIGN})"
_LEFT_LEADING = re.compile(rf"(?i)\s+{_LEADING_INTO}$")
# a possessive particle between a bracketed series and the Latin kind word after it
_BRACKET_PARTICLE = re.compile(r"([)\]])\s*[の的]\s*(?=[A-Za-z])")


SHOUTED_SHARE = 0.8  # of a request's cased letters in capitals: it is typed in capitals, which tell nothing


def _unshouted(text: str) -> str:
    """A request typed in capitals read in small letters: capitals there mark neither names, possessives ("EDG'S
    NANOSUIT") nor CamelCase words, and CLIP reads the prompt in small letters anyway."""
    cased = [c for c in text if c.isupper() or c.islower()]
    upper = sum(c.isupper() for c in cased)
    return text.lower() if len(cased) >= 12 and upper >= SHOUTED_SHARE * len(cased) else text


def _clean(text: str) -> str:
    # the prompt writer marks where a name stood with SLOT, so no request may carry one of its own
    text = " ".join(SLOT_RANGE.sub(" ", unicodedata.normalize("NFKC", text or "")).split())
    text = _unshouted(text)
    text = _TITLE_PERIOD.sub(r"\1", text)
    text = _CONNECTOR_TYPO.sub(lambda m: _CONNECTOR_TYPOS[m.group().lower()], text)
    text = _AT_SHORT.sub("at", text)
    text = _BRACKET_PARTICLE.sub(r"\1 ", text)  # "ローン(アズールレーン)のlora" reads as "roon (azur lane) lora"
    text = re.sub(r"\s*,(?:\s*,)+", ",", " ".join(text.split())).strip(" ,")
    if not text:
        raise InvalidRequest("Tell me what you would like to make, for example 'my April dog model on a beach'.")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidRequest(
            f"That request is {len(text):,} characters long; please keep it under {MAX_QUERY_CHARS:,}."
        )
    return text


class CheckIn:
    def __init__(self, repository: Repository, reasoner: Reasoner | None = None):
        self.repository = repository
        self.reasoner = reasoner or LocalReasoner()
        self.cache = CardCache(repository)
        self.store = SessionStore(repository)

    def _understand(self, text: str, now: dt.datetime, tagged: bool = False) -> tuple[Intent, Reference]:
        """The intent record (constraints) and the reference words (evidence) of one message; ``tagged`` when the
        message named a model by a WebUI tag too (the name it opens with may then be another model's)."""
        index = self.cache.index()
        files = [
            m.span()
            for m in _CHUNK.finditer(text)
            if _IDENTIFIER.search(m.group())
            and index.writes_whole(m.group())
            and not says_base(m.group())
            and not VERSION_WORD.match(m.group())  # "v.1.0" is a version, however a label writes it
        ]
        files += _numbered_names(text, index.spells_name) + _labels_said(text, index.spells_file)
        boilerplate = _boilerplate(text)
        files = [span for span in files if not overlaps(span, boilerplate)]
        intent = parse_intent(text, now, files=files)
        excluded = {w for phrase in intent.excluded for w in words(phrase)}
        return intent, read_reference(
            text,
            [*intent.selection_spans, *boilerplate],
            excluded,
            intent.style_spans,
            intent.version_span,
            intent.base_span,
            names=index.names,
            spells=index.spells_name,
            spells_title=index.spells_title,
            spells_rare=index.spells_rare_name,
            owns_trigger=index.owns_trigger,
            beside_tags=tagged,
            creators=index.is_creator,
            only_creators=index.only_creator,
            files=files,
            strengths=[s.span for s in intent.strengths],
        )

    def ask(self, query: str, now: dt.datetime | None = None) -> CheckinResult:
        started = time.perf_counter()
        query, negative = split_negative(_clean(query))
        query = without_small_talk(query)
        if not query:
            raise InvalidRequest(
                "Tell me what to draw before the negative prompt, for example 'a corgi, negative: blurry'."
            )
        query = _bracketed(query)
        named_by_tag = bool(_WEBUI_NETWORK.search(query))
        query, tags = network_tags(query)
        if len(tags) > MAX_CHECKPOINTS:
            raise InvalidRequest(
                f"An image takes at most {MAX_CHECKPOINTS} checkpoints; this request names {len(tags)}."
            )
        now = now or dt.datetime.now()
        self.cache.refresh()
        index = self.cache.index()
        query, mended = mend(query, index.says)
        query = re.sub(r"\s*,(?:\s*,)+", ",", " ".join(query.split())).strip(" ,")
        query = origin_first(query)
        query = makers_in_english(query, index.is_creator, index.only_creator)
        query = linked_models(query, index)
        intent, reference = self._understand(query, now, tagged=named_by_tag)
        tagged = [self._tag_part(name, weight, now) for name, weight in tags]
        composition = compose(self.cache, intent, reference, self._decide, tagged)
        if composition is not None:
            result = self._finish_composition(query, now, intent, reference, composition, negative, mended)
        else:
            ranking = retrieve(self.cache, intent, reference)
            decision = self._decide(intent, ranking)
            if intent.negations:  # only a request that rules something out asks which candidates it was about
                contenders = _contenders(ranking)
                keep_scene_negations(intent, lambda word: rules_out(word, contenders))
            scores = {r.card.id: r.total for r in ranking.candidates}
            said = intent.strengths[0].weight if intent.strengths else None
            in_negative = self._named_in_negative(negative)
            if in_negative and decision.status != "selected" and not ranking.reference.has_phrase and not named_by_tag:
                # nothing in the picture's words is marked as a model: the embedding the negative prompt names is
                # the one ("a witch stirring a cauldron, negative: ngng00")
                decision = Decision("selected", in_negative[:1])
            result = self._finish(
                query,
                now,
                intent,
                decision,
                scores,
                session_id=None,
                reading=(intent, ranking.reference),
                weight=said,
                negative=negative,
                typed=mended,
            )
        result = self._as_typed(result, mended)
        result.latency_ms = (time.perf_counter() - started) * 1000
        return result

    @staticmethod
    def _as_typed(result: CheckinResult, typed: list[Fix]) -> CheckinResult:
        """``result`` with its prompt saying the words read mended as the person typed them (a question's session
        keeps them, :attr:`SessionState.typed`, for the prompt its answer gets)."""
        if typed and result.prompt:
            result.prompt = as_typed(result.prompt, typed)
        return result

    def answer(self, session_id: str, text: str) -> CheckinResult:
        """Continue a clarification: an option's label or position, or free text that narrows the candidates
        ("the heavy one", "v2", "the newest", "the one by konyconi")."""
        started = time.perf_counter()
        text = network_tags(without_small_talk(_clean(text)))[0]
        row, state = self.store.load(session_id)
        self.cache.refresh()
        text = mend(text, self.cache.index().says)[0]  # the answer picks; the prompt is the request's
        remaining = self.cache.get_many(state.candidate_ids)
        chosen_ids = self._match_option(text, state.options)
        intent, reference = self._understand(text, row.now)
        if chosen_ids is not None:
            narrowed = [c for c in remaining if c.id in chosen_ids]
            decision = Decision("selected" if len(narrowed) == 1 else "clarify", rank(narrowed, state.scores))
            if len(narrowed) > 1:  # "the arh+ one, v2": the option picks the model, the rest of the answer its version
                within = narrow(intent, among(self.cache, narrowed, reference))
                if within.status != "no_match" and len(within.remaining) < len(narrowed):
                    decision = within
        else:
            decision = narrow(intent, among(self.cache, remaining, reference))
            if decision.status == "no_match" or len(decision.remaining) == len(remaining):
                options = ", ".join(o.label for o in state.options)
                result = CheckinResult(
                    status="clarify",
                    question=f"Sorry, I could not tell which one from that. Please choose one of: {options}.",
                    options=state.options,
                    session=session_id,
                    reason=decision.reason,
                )
                result.latency_ms = (time.perf_counter() - started) * 1000
                return result
        if decision.status == "clarify" and len({c.family or c.id for c in decision.remaining}) == 1:
            # the answer picked the model: what the request said picks its version ("someone from ojamajo doremi,
            # witch apprentice uniform" -> "hazuki" -> her "Witch Outfit" version)
            asked = self._understand(row.query, row.now)
            within = narrow(asked[0], among(self.cache, decision.remaining, asked[1]))
            if within.status == "selected":
                decision = within
        if state.parts:
            result = self._answer_part(row.query, row.now, state, decision, session_id, intent)
        else:
            result = self._finish(
                row.query,
                row.now,
                intent,
                decision,
                state.scores,
                session_id=session_id,
                weight=state.weight,
                negative=state.negative,
                contenders=remaining,
                typed=state.typed,
            )
        result = self._as_typed(result, state.typed)
        result.latency_ms = (time.perf_counter() - started) * 1000
        return result

    # -- internals -------------------------------------------------------------------------------------

    def _named_in_negative(self, negative: str) -> list[StoredCheckpoint]:
        """The embeddings a negative prompt names by their trained word, each an item of its own ("blurry, ngng00"), or
        calls so ("civitai's greyscale embedding"): written there, the word is how the WebUI applies the embedding, so
        it is part of the picture's set."""
        index = self.cache.index()
        found = (negative_item(item, index)[0] for item in negative.split(","))
        return list({card.id: card for card in found if card is not None}.values())

    @staticmethod
    def _with_named_in_negative(picks: list[WeightedId], named: list[StoredCheckpoint]) -> list[WeightedId]:
        """``picks`` and, after them, each embedding the negative prompt ``named`` that they lack."""
        chosen = {p.checkpoint_id for p in picks}
        return picks + [
            WeightedId(checkpoint_id=card.id, weight=DEFAULT_WEIGHT, role=role_of(card))
            for card in named
            if card.id not in chosen
        ]

    def _decide(self, intent: Intent, ranking: Ranking) -> Decision:
        try:
            return self.reasoner.decide(intent, ranking)
        except Exception as exc:  # an LLM backend failing must never cost the person an answer
            log.warning("%s reasoning failed (%s); using the local engine", self.reasoner.name, exc)
            return decide(intent, ranking)

    @staticmethod
    def _match_option(text: str, options: list[Option]) -> list[str] | None:
        if not options:
            return None
        if (position := option_position(text)) is not None and position < len(options):
            return options[position].checkpoint_ids
        labels = [o.label for o in options]
        for option in options:
            if option.label.lower() == text.lower().strip():
                return option.checkpoint_ids
        # the words that tell the options apart before a fuzzy match, which scores "gushu, not the gushuman one"
        # highest for "gushuman"; the fuzzy match then forgives typos
        if (named := pick_by_words(text, options)) is not None:
            return named
        best = process.extractOne(text, labels, scorer=fuzz.WRatio, score_cutoff=86)
        if best is not None and len(text) >= 3:
            return options[best[2]].checkpoint_ids
        return None

    def _prompt(
        self,
        query: str,
        now: dt.datetime,
        card: StoredCheckpoint | None,
        reading: tuple[Intent, Reference] | None = None,
        contenders: list[StoredCheckpoint] = (),
    ) -> str:
        """What the first message asks to draw: without its selection phrases and the words that named
        ``card``, with the card's trigger put in. ``reading`` is the intent and the reference selection read in
        ``query``, when they were just read (an answer to a question reads the first message again, its negations
        judged against ``contenders``, the checkpoints the question offered)."""
        if reading is not None:
            intent, reference = reading
        else:
            intent, reference = self._understand(query, now)
            keep_scene_negations(intent, lambda word: rules_out(word, [*contenders, *([card] if card else [])]))
            if reference.words:
                reference, _ = named_by(self.cache.index(), reference)
        if card is None:
            return prompt_text(intent, reference_spans(reference))
        # a style named with the model ("my watercolor corgi") is how to draw it: it stays in the picture
        cut = [span for span in naming_spans(reference, card) if not overlaps(span, intent.style_spans)]
        if is_negative_embedding(card):  # its trigger goes in the negative prompt
            return prompt_text(intent, cut)
        position = name_position(reference, cut, card)
        text = prompt_text(intent, cut, () if position is None else (position,))
        return rewrite_prompt(text, card, request=query, stand_in=name_as_said(reference, card, cut))

    def _finish(
        self,
        query: str,
        now: dt.datetime,
        intent: Intent,
        decision: Decision,
        scores: dict[str, float],
        session_id: str | None,
        reading: tuple[Intent, Reference] | None = None,
        weight: float | None = None,
        negative: str = "",
        contenders: list[StoredCheckpoint] = (),
        typed: list[Fix] = (),
    ) -> CheckinResult:
        engine = self.reasoner.name
        if decision.status == "selected":
            card = decision.chosen
            # an embedding the negative prompt names stays there alone: the picture's words are all the prompt's
            named = self._named_in_negative(negative)
            in_negative = card.id in {c.id for c in named}
            prompt = self._prompt(query, now, None if in_negative else card, reading, contenders)
            negative = trained_words_in_negative(negative, self.cache.index())
            if is_negative_embedding(card):
                negative = with_negative(negative, card, query)
            result = CheckinResult(
                status="selected",
                checkpoint_id=card.id,
                checkpoints=self._with_named_in_negative(
                    [WeightedId(checkpoint_id=card.id, weight=_or_default(weight), role=role_of(card))], named
                ),
                prompt=prompt,
                negative_prompt=negative,
                session=session_id,
                engine=engine,
                intent=intent.describe(),
            )
            if session_id:
                self.store.update(
                    session_id, "selected", SessionState(prompt=prompt, candidate_ids=[card.id], options=[])
                )
            return result
        if decision.status == "no_match":
            return CheckinResult(
                status="no_match",
                reason=decision.reason,
                session=session_id,
                engine=engine,
                intent=intent.describe(),
                alternatives=_alternatives(decision.alternatives),
            )
        if decision.phrasing:
            text, options = decision.phrasing
        else:
            question = ask(decision.remaining)
            text, options = question.text, question.options
        state = SessionState(
            prompt=self._prompt(query, now, None, reading),
            candidate_ids=[c.id for c in decision.remaining],
            options=options,
            scores={c.id: scores.get(c.id, 0.0) for c in decision.remaining},
            weight=weight,
            negative=negative,
            typed=list(typed),
        )
        session_id = self._keep_question(session_id, query, now, state)
        return CheckinResult(
            status="clarify",
            question=text,
            options=options,
            session=session_id,
            reason=decision.reason,
            engine=engine,
            intent=intent.describe(),
        )

    def _keep_question(self, session_id: str | None, query: str, now: dt.datetime, state: SessionState) -> str:
        """Store a question's state in its session, a new one for a first question; returns the session's id."""
        if session_id:
            self.store.update(session_id, "clarify", state)
            return session_id
        return self.store.create(query, now, "clarify", state)

    # -- several checkpoints in one image ----------------------------------------------------------------

    def _finish_composition(
        self,
        query: str,
        now: dt.datetime,
        intent: Intent,
        reference: Reference,
        composition: Composition,
        negative: str,
        typed: list[Fix] = (),
    ) -> CheckinResult:
        """A request naming several models: refused with the reason, a question about its first open part, or
        every part's checkpoint with the prompt that carries all their triggers."""
        if composition.refusal:
            missing = composition.missing
            offered = missing.decision.alternatives if missing else [p.decision.chosen for p in composition.parts]
            return CheckinResult(
                status="no_match",
                reason=composition.refusal,
                engine=self.reasoner.name,
                intent=intent.describe(),
                alternatives=_alternatives([c for c in offered if c]),
            )
        parts = [
            PartState(
                words=sorted(p.words),
                label=p.label(),
                weight=p.weight,
                candidate_ids=[c.id for c in p.decision.remaining],
                chosen=p.decision.chosen.id if p.decision.status == "selected" else None,
            )
            for p in composition.parts
        ]
        scores = {r.card.id: r.total for p in composition.parts for r in p.ranking.candidates}
        state = SessionState(
            prompt="", candidate_ids=[], options=[], scores=scores, negative=negative, parts=parts, typed=list(typed)
        )
        return self._composed(query, now, state, None, intent, reading=(intent, reference))

    def _tag_part(self, name: str, weight: float | None, now: dt.datetime) -> Part:
        """The checkpoint a WebUI tag names: the one whose weights file it names, else one called by it."""
        files = self.cache.index().by_file_stem.get(name.casefold(), [])
        intent, reference = self._understand(f"{name.replace('_', ' ')} lora", now)
        if len(files) == 1:  # no search: the file names it
            return Part(set(), Ranking([], reference), Decision("selected", files), weight, name=name)
        ranking = retrieve(self.cache, intent, reference)
        decision = self._decide(intent, ranking)
        # of several that fit, the one the tag's name is whole is the one its file is named for ("Pop_-_Style" is
        # "Pop - Style", not "Japanese pop art style"), else the one named by all its words ("kanata_konoe" is
        # "Konoe Kanata", not a pack trained on it)
        if decision.status == "clarify":
            said = set(words(name))
            for named in (
                [card for card in decision.remaining if squash(model_name(card)) == squash(name)],
                [card for card in decision.remaining if said <= field_tokens(model_name(card))],
            ):
                if len(named) == 1:
                    decision = Decision("selected", named, decision.reason)
                    break
        return Part(set(), ranking, decision, weight, name=name)

    def _answer_part(
        self,
        query: str,
        now: dt.datetime,
        state: SessionState,
        decision: Decision,
        session_id: str,
        intent: Intent,
    ) -> CheckinResult:
        """An answer about one part of a composed picture: that part narrowed or decided, then the next open part's
        question or the whole set."""
        asked = next(p for p in state.parts if p.chosen is None)
        asked.candidate_ids = [c.id for c in decision.remaining]
        if decision.status == "selected":
            asked.chosen = decision.chosen.id
        return self._composed(query, now, state, session_id, intent)

    def _composed(
        self,
        query: str,
        now: dt.datetime,
        state: SessionState,
        session_id: str | None,
        intent: Intent,
        reading: tuple[Intent, Reference] | None = None,
    ) -> CheckinResult:
        engine = self.reasoner.name
        open_part = next((p for p in state.parts if p.chosen is None), None)
        if open_part is not None:
            cards = rank(self.cache.get_many(open_part.candidate_ids), state.scores)
            question = ask(cards)
            state.candidate_ids, state.options = [c.id for c in cards], question.options
            text = f"For {open_part.label}: {question.text[0].lower()}{question.text[1:]}"
            session_id = self._keep_question(session_id, query, now, state)
            return CheckinResult(
                status="clarify",
                question=text,
                options=question.options,
                session=session_id,
                reason=f"{len(cards)} checkpoints fit {open_part.label}",
                engine=engine,
                intent=intent.describe(),
            )
        cards = self.cache.get_many([p.chosen for p in state.parts])
        if len(cards) != len(state.parts):  # one was removed while the person answered
            return CheckinResult(status="no_match", reason="A checkpoint chosen earlier is gone.", engine=engine)
        picks = [
            WeightedId(checkpoint_id=card.id, weight=_or_default(part.weight), role=role_of(card))
            for part, card in zip(state.parts, cards)
        ]
        picks = self._with_named_in_negative(picks, self._named_in_negative(state.negative))
        prompt = self._composed_prompt(query, now, [(set(p.words), c) for p, c in zip(state.parts, cards)], reading)
        negative = trained_words_in_negative(state.negative, self.cache.index())
        for card in cards:
            if is_negative_embedding(card):
                negative = with_negative(negative, card, query)
        if session_id:
            self.store.update(
                session_id, "selected", SessionState(prompt=prompt, candidate_ids=[c.id for c in cards], options=[])
            )
        return CheckinResult(
            status="selected",
            checkpoint_id=picks[0].checkpoint_id,
            checkpoints=picks,
            prompt=prompt,
            negative_prompt=negative,
            session=session_id,
            engine=engine,
            intent=intent.describe(),
        )

    def _composed_prompt(
        self,
        query: str,
        now: dt.datetime,
        named: list[tuple[set[int], StoredCheckpoint]],
        reading: tuple[Intent, Reference] | None = None,
    ) -> str:
        """The picture with every part's naming words cut and each checkpoint's trigger where its part stood."""
        intent, reference = reading if reading is not None else self._understand(query, now)
        cuts: list[tuple[int, int]] = []
        slots: list[int] = []
        listed: list[str] = []  # the slots of parts a connector listed after another
        stand_ins: list[str] = []
        for positions, card in named:
            if not positions:  # named by a WebUI tag, taken out of the text: its trigger goes in front
                slots.append(-1)
                stand_ins.append("")
                continue
            part = reference.with_phrase(positions)
            cuts += [span for span in naming_spans(part, card) if not overlaps(span, intent.style_spans)]
            start, end = span_of(reference, positions)
            if not overlaps((start, end), intent.style_spans):
                cuts.append((start, end))  # a name joined by a connector goes whole ("simple light and shadow")
            joined = _JOINED_BEFORE.search(intent.text[:start])
            if joined and positions != named[0][0]:
                cuts.append((joined.start(), start))  # "... and the", "+ my": what listed it goes with it
                listed.append(SLOTS[len(slots)])
            slots.append(start)
            stand_ins.append(name_as_said(reference, card, [(start, end)]))
        text = prompt_text(intent, cuts, slots)
        for mark in listed:  # "... after dark + eisthol's cyberpunk elements": the list's comma stands for the "+"
            text = re.sub(rf"(?<=\w)\s+{mark}", f", {mark}", text)
        # names said one after another ("lyra venn in my ink wash lora") leave their triggers as a list
        text = re.sub(rf"({SLOT_RANGE.pattern})\s+(?={SLOT_RANGE.pattern})", r"\1, ", text)
        last = re.search(rf"(?i)\b{_LEADING_INTO}\s+({SLOT_RANGE.pattern})[\s,.]*$", text)
        emptied = False  # the part named last leaves nothing in its place
        for mark, (_, card), stand_in in reversed(list(zip(SLOTS, named, stand_ins))):  # no place: in front
            put = not is_negative_embedding(card)  # a negative embedding's trigger goes in the negative prompt
            if last and last.group(1) == mark:
                emptied = not (put and (prompt_trigger_for(card, query) or stand_in))
            if put:
                text = rewrite_prompt(text, card, request=query, mark=mark, stand_in=stand_in)
        # a trigger-less part leaves its comma, brackets, or the word that led into it ("by the fire in")
        text = re.sub(r"\s*,(?:\s*,)+", ",", SLOT_RANGE.sub("", text)).strip(" ,")
        text = re.sub(r"\s*,\s*(?=[:;.!?](?:\s|$))", "", text)  # "makima,: drizzling": a last part's empty slot
        text = re.sub(r"([(\[])\s+|\s+([)\]])", r"\1\2", text)
        return _LEFT_LEADING.sub("", text).rstrip(" ,;") if emptied else text


def _or_default(weight: float | None) -> float:
    return DEFAULT_WEIGHT if weight is None else weight


# the candidates a negation is judged against: those within this share of the best score, at most this many
CONTENDER_SHARE = 0.5
MAX_CONTENDERS = 20


def _contenders(ranking: Ranking) -> list[StoredCheckpoint]:
    """The candidates still in the running, whose fields say whether a negated word was about them."""
    best = ranking.candidates[0].total if ranking.candidates else 0.0
    return [r.card for r in ranking.candidates[:MAX_CONTENDERS] if r.total >= CONTENDER_SHARE * best]


def _alternatives(cards: list[StoredCheckpoint]) -> list[Alternative]:
    """The nearest checkpoints a no match offers."""
    return [Alternative(checkpoint_id=c.id, name=c.name, created_at=c.created_at) for c in cards]
