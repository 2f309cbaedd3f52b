"""Several checkpoints in one image: a request that names a model in more than one place.

"hu tao in my ghibli background lora", "the corgi lora with the pixel art style lora at 0.6", "malenia with the
claymation lora", two WebUI tags: each place the request names a model is a *part*, read and decided as a request
naming one model is, and the image takes one checkpoint per part. A part is a phrase the request calls a model (a
kind word, "my", a WebUI tag), or a name listed beside one with a connector that a card is called by in nearly all
its words; scene words never make one ("tracer by a window" with a window-light LoRA is Tracer alone). A part that
is ambiguous gets its own question; a part the repository lacks is an honest no match; checkpoints of different
bases, or two full models, are refused with both named.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from typing import Callable

from anyascii import anyascii

from personalq.checkin.evidence import SelectionIndex, card_fields, model_name, numbered_titles
from personalq.checkin.intent import QUANTITY, VERSION_WORD, Intent, version_number
from personalq.checkin.lexicon import ASKING, DRAW_ME, FIELD_LABEL, MODEL_COMPOUNDS
from personalq.checkin.reasoning import MIN_COVERAGE, Decision, kinds_named
from personalq.checkin.reference import (
    CLAUSE_BREAK,
    KIND_WORDS,
    LISTING,
    LONE_WORD_LETTERS,
    SETTING_WORDS,
    STOPWORDS,
    UNSPACED_KINDS,
    Reference,
    in_brackets,
    opens_scene,
    wanting_words,
)
from personalq.checkin.retrieval import (
    HEAD_COVERAGE,
    NAME_RARITY,
    SHORT_HEAD,
    CardCache,
    Ranking,
    is_unheard,
    retrieve,
)
from personalq.checkin.rewrite import variants
from personalq.checkin.roles import ROLE_KINDS
from personalq.checkin.titles import segments
from personalq.checkin.tokens import COMMON_ZIPF, field_tokens, is_coined, is_english, is_word, squash
from personalq.checkin.tokens import words as words_in
from personalq.repository.base_models import architecture_of, describe
from personalq.repository.card import StoredCheckpoint
from personalq.repository.weighted import MAX_CHECKPOINTS

MAX_LISTED = 3 * MAX_CHECKPOINTS  # names a request may list (some are the picture's) before it is refused unread

_KIND_WORD = "|".join(sorted(KIND_WORDS, key=len, reverse=True))  # a kind word as a regex, longest first
# what may stand inside one name between two of its words ("simple light and shadow", "tom & jerry")
_JOINING = re.compile(r"(?i)\s*(?:and|&|n|'n'|of|the|of the|x|plus|with|[-_:])?\s*")
# the words that join two names in a list, in the languages requests come in ("w/" is "with", not "w/o")
_CONNECTING = r"\bw/(?!o)|\b(?:and|with|plus|und|mit|et|avec|y|con|e)\b"
# what separates two names inside the words a request marks: a kind word closing the first ("the corgi lora with
# the pixel art style lora"), a comma, "and", "with", "+"
_BETWEEN_NAMES = re.compile(
    rf"(?i)[,;+&!?]|\.(?=\s)|(?<=\s)/(?=\s)|{_CONNECTING}|\b(?:in|im|using|wearing|x)\b|\b(?:"
    + _KIND_WORD
    + r")\b|"
    + "|".join(UNSPACED_KINDS)  # "wlsdnjs950 스타일에 gameiconresearch_3d_lora도": particles follow them
)
# a card called by this much of some words is named by them: two parts' words together are one model named with a
# connector ("tom and jerry lora"), and words the request does not call a model are a model's name all the same
ONE_MODEL_COVERAGE = 0.75
NAMED_AMONG = 5  # best candidates of unmarked words, one of which must be called by them
FULL_MODELS = ("dreambooth", "checkpoint")  # kinds that replace the UNet: an image can use one


@dataclass
class Part:
    """One place the request names a model: its words, their candidates and the decision over them."""

    words: set[int]
    ranking: Ranking
    decision: Decision
    weight: float | None = None  # said in the request ("at 0.6"), else the default
    name: str = ""  # a WebUI tag's file name: the part has no words in the request's text
    marked: bool = True  # the request calls it a model ("... lora", "my ..."), not only names it

    def label(self) -> str:
        words = self.ranking.reference.words
        return self.name or " ".join(words[k].forms[0] for k in sorted(self.words))


@dataclass
class Composition:
    """The parts of a request that names several models, or why they cannot be drawn together."""

    parts: list[Part]
    refusal: str = ""  # the status is no match with this reason (mixed bases, two full models, a missing part)
    missing: Part | None = None  # the part no checkpoint fits, when that is the refusal


def _inside(span: tuple[int, int], outer: tuple[int, int]) -> bool:
    return outer[0] <= span[0] and span[1] <= outer[1]


def span_of(reference: Reference, words: set[int]) -> tuple[int, int]:
    """Where ``words`` stand in the request: from the first one's start to the last one's end, with the bracket that
    closes one they opened ("helena(azur lane)")."""
    start, end = min(reference.spans[k][0] for k in words), max(reference.spans[k][1] for k in words)
    said = reference.text[start:end]
    if said.count("(") > said.count(")") and reference.text[end : end + 1] == ")":
        end += 1
    return start, end


def marked_parts(text: str, reference: Reference) -> list[set[int]]:
    """The request's marked words split where a kind word, a comma or a connector stands between two names, and
    the names it lists beside them unmarked, in the request's order."""
    groups: list[set[int]] = []
    after_connector = False
    for k in sorted(reference.phrase):
        start, end = reference.spans[k]
        # "ema aizawa plus the bard fashion lora": a connector ("girl model kit": a "model" of something is a word)
        of_something = k + 1 < len(reference.words) and reference.words[k + 1].forms[0] in MODEL_COMPOUNDS
        # (a kind word the reading kept in the phrase is a word of a name: "the medieval style armor suit")
        inside = text[start:end].casefold() in KIND_WORDS
        if _BETWEEN_NAMES.fullmatch(text[start:end]) and not of_something and not inside:
            after_connector = True  # read as a word of the phrase stands between two names
            continue
        if groups and not after_connector:
            previous = max(groups[-1])
            between = text[reference.spans[previous][1] : start]  # "" between a CJK run's character pairs
            # "the vtubermaker lora that spits out ...": what a model is said to do describes it, no second model;
            # a clause of the picture between two is no connector but parts them all the same ("anri v1.3 reading
            # a map by candlelight - make it look like inzaniak's summer style")
            parted = k - previous > 2 and CLAUSE_BREAK.search(between) is not None
            if (not _BETWEEN_NAMES.search(between) and not parted) or _DESCRIBING_KIND.fullmatch(between):
                groups[-1].add(k)
                continue
        groups.append({k})
        after_connector = False
    groups += [set(names) for names in reference.listed]
    return _with_bracketed(text, reference, sorted(groups, key=min))


def _up_to_named(
    cache: CardCache, intent: Intent, reference: Reference, words: set[int], groups: list[set[int]], ranking: Ranking
) -> tuple[set[int], Ranking]:
    """``words`` up to the last one the best candidate matched, with their ranking; as they are when that is all."""
    matched = ranking.candidates[0].matched & words if ranking.candidates else set()
    kept = {k for k in words if matched and k <= max(matched)}
    if not kept or kept == words:
        return words, ranking
    as_kept = [kept if group == words else group for group in groups]
    return kept, retrieve(cache, intent, _part_reference(cache.index(), reference, kept, as_kept))


def _with_bracketed(text: str, reference: Reference, groups: list[set[int]]) -> list[set[int]]:
    """``groups`` with one said in brackets right after another made part of it: "Kanna (Kobayashi-san LoRA)" names
    one model by its character and where she is from; and a name in brackets right after a group's words, which no
    group holds, taken into it ("雷電将軍(Raiden Shogun)LoRA": the name in Latin letters beside the kanji)."""
    merged: list[set[int]] = []
    for group in groups:
        if merged:
            end = reference.spans[max(merged[-1])][1]
            start, stop = reference.spans[min(group)][0], reference.spans[max(group)][1]
            opened = _OPENED.fullmatch(text[end:start].strip())
            closed = _CLOSED.match(text, stop)
            # not a second model named in brackets after the first: "kimono clothes lora (turtle school uniform lora)"
            both_kinds = bool(opened and opened.group(1)) and bool(closed and closed.group(1))
            if opened and closed and "(" not in text[start:stop] and not both_kinds:
                merged[-1] = merged[-1] | group
                continue
        merged.append(set(group) | _name_in_brackets_after(text, reference, group, groups))
    return merged


# a bracket opened right after a name, or after the kind word that closes it ("Pokemon LoRA (Ken Sugimori style)")
_MODEL_KINDS = r"lora|locon|lycoris|lyco|loha|embedding|embed|emb|ti|model"
_OPENED = re.compile(rf"(?i)(?:({_MODEL_KINDS})\s*)?\(")
_CLOSED = re.compile(rf"(?i)\s*(?:({_MODEL_KINDS})\b|[\w-]+)?\s*\)")  # "... LoRA)", "... style)", ")"
_NAME_IN_BRACKETS = re.compile(r"\s*[(（]([^()（）]{1,40})[)）]")


def _name_in_brackets_after(text: str, reference: Reference, group: set[int], groups: list[set[int]]) -> set[int]:
    """The words of a bracket right after ``group``'s last word when they are a name: up to four words no group and
    no maker holds, none a kind or function word."""
    bracket = _NAME_IN_BRACKETS.match(text, reference.spans[max(group)][1])
    if bracket is None:
        return set()
    inside = {
        k for k, (start, end) in enumerate(reference.spans) if bracket.start(1) <= start and end <= bracket.end(1)
    }
    said = [reference.words[k].forms[0] for k in inside]
    written = squash(bracket.group(1))
    name = (
        0 < len(inside) <= 4
        and not inside & set().union(*groups)
        and not any(squash(maker.forms[0]) in written for maker in reference.makers)  # "(the kozue one)"
        and all(w.isalpha() and w not in STOPWORDS and w not in KIND_WORDS for w in said)
    )
    return inside if name else set()


# what stands between a part's name and the handle of who made it: "carrot style by inzaniak", "4shot-stil von
# inzaniak", "the ink lora from someone"; a Romance "de" after the one kind word that closes the name ("Gothic Style de
# HADES06"), not after a kind word that opens another name ("makima lora estilo de mistoon": Mistoon's style)
_MADE_BY = re.compile(
    rf"(?i)^(?:(?:[\s-]*(?:{_KIND_WORD})\b)*\s*(?:by|from|von|van|od|par|door)|[\s-]*(?:(?:{_KIND_WORD})\b)?\s*"
    r"(?:de|di|da|du|do|por))\s+$"
)


def _without_makers_after(
    text: str, reference: Reference, groups: list[set[int]], is_creator: Callable[[str], bool]
) -> list[set[int]]:
    """``groups`` less each one-word group that is a creator's handle said after another part as who made it ("carrot
    style by inzaniak": Inzaniak's own "Lazy Textual Inversions" are no part of it)."""
    kept: list[set[int]] = []
    for words in sorted(groups, key=min):
        k = min(words)
        before = text[reference.spans[max(kept[-1])][1] : reference.spans[k][0]] if kept else ""
        if len(words) == 1 and _MADE_BY.match(before) and is_creator(reference.words[k].forms[0]):
            continue
        kept.append(words)
    return kept


# "v1.0 (Fix)", "(v2 Medium)": the rest of a version's label, a word or two (not "(with Puffy Smoke at 0.5)")
_LABEL_AFTER_VERSION = re.compile(r"\s*\(([^\W\d_][\w'-]*(?:\s[^\W\d_][\w'-]*)?)\)")
_LABEL_IN_BRACKET = re.compile(r"\s*([^\W\d_][\w'-]*(?:\s[^\W\d_][\w'-]*)?)\s*\)")


_NOT_A_LABEL = re.compile(rf"(?i)\b(?:{_KIND_WORD}|and|with|plus|at|by|from|for)\b")


def _with_version_labels(intent: Intent, reference: Reference, groups: list[set[int]]) -> list[set[int]]:
    """``groups`` with one said in brackets right after a version number, or after one that opens a bracket, made part
    of the group before it: "Serval Landau v1.0 (Fix)" and "Protogen LoRA (v2 Medium)" name one model's version."""
    text = intent.text
    labels = [m.span(1) for _, (_, end) in intent.version_marks if (m := _LABEL_AFTER_VERSION.match(text, end))]
    # "Protogen LoRA (v2 Medium)": the words after a version number that opens a bracket, up to where it closes
    labels += [
        m.span(1)
        for _, (start, end) in intent.version_marks
        if text[:start].rstrip().endswith("(") and (m := _LABEL_IN_BRACKET.match(text, end))
    ]
    labels = [span for span in labels if not _NOT_A_LABEL.search(text[slice(*span)])]
    merged: list[set[int]] = []
    for group in sorted(groups, key=min):
        if merged and any(_inside(span_of(reference, group), label) for label in labels):
            merged[-1] = merged[-1] | group
            continue
        merged.append(set(group))
    return merged


def _split_at_owners(
    text: str, reference: Reference, groups: list[set[int]], is_creator: Callable[[str], bool]
) -> list[set[int]]:
    """``groups`` split where a creator's possessive opens a second name inside one ("Yuki Mori에 badbro's
    modernized hanbok 로라": a particle, not a connector, stands between them)."""
    split: list[set[int]] = []
    for words in groups:
        ordered = sorted(words)
        opens = [
            k
            for k in ordered[1:]
            if _OWNER_OPENS.match(text, reference.spans[k][0]) and is_creator(reference.words[k].forms[0])
        ]
        for k in reversed(opens):
            split.append({j for j in ordered if j >= k})
            ordered = [j for j in ordered if j < k]
        split.append(set(ordered))
    return sorted(split, key=min)


def _part_reference(index: SelectionIndex, reference: Reference, words: set[int], groups: list[set[int]]) -> Reference:
    """The request read for one part: its words are the name, the scene's words still weigh as content, and the
    other parts' words count for nothing (they are evidence for other models)."""
    others = set().union(*groups) - words
    part = replace(reference.with_phrase(words), makers=_makers_of(index, reference, words, groups))
    if reference.described and words <= reference.phrase:  # "the lora that swaps the lower jaw ...": described
        part = replace(part, described=True)
    return replace(part, words=[replace(w, weight=0.0) if k in others else w for k, w in enumerate(part.words)])


def _makers_of(index: SelectionIndex, reference: Reference, words: set[int], groups: list[set[int]]) -> list:
    """The creators said of the part named by ``words``: each maker goes with the name nearest it ("laika_slime_300
    wearing zhuym's lolita dress lora": zhuym made the dress, not Laika), unless they made nothing that name calls
    and something another name calls ("Ms. Fortune de Skullgirls ..., décor : Fitting Room de rulles": rulles
    made the fitting room)."""

    # a maker in brackets was said of the name before them ("Skadi ... (le LoRA de L_A_X) ..., GHIBLI_Background")
    said = reference.text.casefold()
    bracketed = {
        m.position for m in reference.makers if (at := said.find(m.forms[0])) >= 0 and in_brackets(reference.text, at)
    }

    spans_at: dict[int, list[tuple[int, int]]] = {}  # a maker's position -> the spans of the words it is written as
    for word, span in zip(reference.words, reference.spans):
        spans_at.setdefault(word.position, []).append(span)

    def distance(maker_at: int, group: set[int]) -> tuple[bool, bool, int, bool]:
        at = [reference.words[k].position for k in group]
        near = 0 if min(at) <= maker_at <= max(at) else min(abs(maker_at - a) for a in at)
        aside = maker_at in bracketed and min(at) > maker_at
        # between two names, an owner's goes with the one after it ("otzk + manamomo's jitome"), and a maker goes
        # with the name no comma or connector parts it from ("kaltsit + impossiblebearcl4060 scouttrooper suit lora",
        # "KDA Kai'sa Popstar v2.2 by Sasukelric, <lora:...>")
        return aside, parted(maker_at, group), near, not (owning(maker_at) and min(at) > maker_at)

    def parted(maker_at: int, group: set[int]) -> bool:
        spans = spans_at.get(maker_at)
        at = [reference.words[k].position for k in group]
        if not spans or min(at) <= maker_at <= max(at):
            return False
        if min(at) > maker_at:
            between = reference.text[spans[-1][1] : reference.spans[min(group)][0]]
        else:
            between = reference.text[reference.spans[max(group)][1] : spans[0][0]]
        return _BETWEEN_NAMES.search(_MADE_BY.sub(" ", between)) is not None  # not " style by "

    def owning(maker_at: int) -> bool:
        spans = spans_at.get(maker_at)
        return bool(spans) and re.match(r"['’]s\b", reference.text[spans[-1][1] - 2 : spans[-1][1] + 2]) is not None

    def theirs(maker, group: set[int]) -> bool:  # did the maker make a model these words call by name or trigger?
        forms = {form for k in group for form in reference.words[k].forms} - _NOT_NAMING
        return any(forms & index.called_by(i) for i in index.made_by(maker.forms))

    def goes_with(maker) -> set[int]:
        by_distance = sorted(groups, key=lambda g: distance(maker.position, g))
        if not _name_words(reference.written(by_distance[0])):
            return by_distance[0]  # "thesauceer uploaded a style lora that ...": the kind their model is
        return next((g for g in by_distance if theirs(maker, g)), by_distance[0])

    return [m for m in reference.makers if goes_with(m) == words]


def _names_model(cache: CardCache, ranking: Ranking, words: set[int]) -> bool:
    """Are words the request does not call a model a model's name all the same: the best candidate for them is
    *called* by nearly all of them (its name or first trigger, not the subjects or tags it was trained on: "desert
    canyon" of a landscapes LoRA is the picture, "the captain's chair" is not Captain Picard), and one of them is
    rare enough to be a name?"""
    index = cache.index()
    reference = ranking.reference
    rare = any(index.rarity(reference.words[k]) >= NAME_RARITY * index.max_idf for k in words)
    # common words name a model only together and all of them ("sadako + nebula magic style": "Style Nebula Magic")
    least = ONE_MODEL_COVERAGE if rare else 1.0
    if not rare and len(words) < 2:
        return False

    foreign = rare and not all(is_english(reference.words[k].forms[0]) for k in words)
    joined = "".join(reference.words[k].forms[0] for k in sorted(words))

    def called(card: StoredCheckpoint) -> bool:
        # the name and the first trained word: a long trained-word list ("alien landscape, desert, canyon, ...")
        # describes the training images
        # (a name whose words its version label holds, "Style" + "Nebula Magic", is called by them too)
        # (with a word English lacks, every trained word of a pack's: "nonomi (blue archive)" as well as "shiroko
        # (...)", and one the words spell whole, "saten ruiko" of "misaka_mikoto, ..., saten_ruiko"; "soft light"
        # of a lighting pack's is the picture's)
        named = card_fields(card)
        if foreign and any(squash(trigger) == joined for trigger in card.triggers):
            return True
        calling = card.triggers if foreign and variants(card.triggers) else card.triggers[:1]
        # (and by its maker's handle said beside the name: "konan darkest dungeon style")
        fields = named["name"] | named["version"] | named["creator"] | set().union(*map(field_tokens, calling))
        return sum(_calls(fields, reference.words[k].forms) for k in words) >= least * len(words)

    # or by all of them run together in its name ("future technology city": "XSarchitectural-21Futuretechnologycity")
    covering = [r for r in ranking.candidates if r.coverage >= HEAD_COVERAGE][:NAMED_AMONG]
    return any(called(r.card) or (len(words) >= 2 and _run_together_in(r.card, joined)) for r in covering)


def _run_together_in(card: StoredCheckpoint, joined: str) -> bool:
    """Is ``joined`` a word of the card's name, or the title its name ends with after a number, with the number or
    not ("futuretechnologycity" of "XSarchitectural-21Futuretechnologycity", "nightmoonscifi" of
    "...-12NightMoonsci-fi")?"""
    name = model_name(card)
    return joined in field_tokens(name) or joined in numbered_titles(name)


TRIMMED_WORDS = 2  # the most last words of a listed name read as the picture's instead ("... asleep")
LEADING_WORDS = 2  # the most first words of a listed name read as the request's own ("kannst du saten ruiko ...")


def _named_opening(
    cache: CardCache, intent: Intent, reference: Reference, words: set[int], groups: list[set[int]]
) -> tuple[set[int], Ranking] | None:
    """The words of unmarked ``words`` that name a model when the whole does not: their first words, two or more,
    each rare among cards and no English word ("kanbe kotori asleep": Kanbe Kotori, and "asleep" is the picture's),
    or any run of two or more near their start spelling a model's whole name or title, or the first word alone
    spelling one, the rest the picture or the asking in any language ("haru urara juichend bij de finish", "kannst
    du saten ruiko zeichnen", "tomcat persiguiendo un ovillo"), or a trained word of one model alone; with their
    ranking, longest first, or None."""
    ordered = sorted(words)
    index = cache.index()
    runs = [
        (start, start + length)
        for length in range(len(ordered) - 1, 0, -1)
        for start in range(min(LEADING_WORDS, len(ordered) - length) + 1)
    ]
    for start, stop in runs:
        kept = set(ordered[start:stop])
        said = [reference.words[k] for k in kept]
        rare = (
            len(kept) > 1
            and start == 0
            and len(ordered) - stop <= TRIMMED_WORDS
            and all(index.rarity(w) >= NAME_RARITY * index.max_idf and not is_english(w.forms[0]) for w in said)
        )
        # or a model's whole name, title or trained word ("saten ruiko" of a pack's "saten_ruiko")
        text = intent.text[span_of(reference, kept)[0] : span_of(reference, kept)[1]]
        if len(kept) == 1:  # a name, or the trained word of one model alone ("yingbody portrait by a window")
            at = span_of(reference, kept)[0]
            alone = (
                index.spells_rare_name(text)
                or (index.owns_trigger(text) and is_coined(squash(text)))
                or (index.names_one_model(text) and _said_as_name(intent.text, at))
            )
            # (a creator's possessive before it says a model's name opens there: "dksdkffiwna's laffey half asleep")
            owned = _OWNER_BEFORE.search(intent.text, 0, at)
            made = owned is not None and _a_handle(index, owned.group(1))
            spelled = start == 0 and alone and (made or _opens_alone(reference, ordered, text))
        else:
            spelled = index.spells_name(text) or index.spells_file(text)
        if not (rare or spelled):
            continue  # a name's words only: "cowgirl sheriff", "sticker of a chibi fox" are the picture's
        # the part is its kept words now: the maker said beside them is theirs ("la arix by mochainkz ...")
        as_kept = [kept if group == words else group for group in groups]
        part = _part_reference(cache.index(), reference, kept, as_kept)
        # and a handle left over is who made it ("la mash kyrielight de justTNP qui ...")
        handles = [reference.words[k] for k in sorted(words - kept) if _a_handle(index, reference.words[k].forms[0])]
        ranking = retrieve(cache, intent, replace(part, makers=part.makers + handles))
        if _names_model(cache, ranking, kept):
            return kept, ranking
    return None


def _a_handle(index: SelectionIndex, said: str) -> bool:
    """Is ``said`` (as written) a creator's handle and no word of any language ("justtnp", "dksdkffiwna"; not "art",
    "tom")?"""
    handle = squash(said)
    return bool(index.made_by((handle,))) and is_coined(handle)


TRAINED_RUN_WORDS = 4  # the most words a joined trained word may be written as ("david moreno architecture")


def _trained_words(cache: CardCache, reference: Reference, groups: list[set[int]]) -> list[set[int]]:
    """The words outside ``groups`` written as one model's made-up trained word, as a prompt writes it ("yuzu,
    yuzuhalo gaming in a dark room, 4shot style"): each names that model, wherever it stands but in the series a name
    is said to be from ("kestrel vane from starknightz"). A trained word one model writes joined may be spelled as
    words where a clause or list item opens with it ("..., trash polka artstyle and ...", "... + hk clouds sky")."""
    index, taken = cache.index(), set().union(*groups, reference.series)
    found: list[set[int]] = []
    k = 0
    while k < len(reference.words):
        # a run may take in a group it holds whole ("+ marbling art": "art" was listed alone)
        ahead = set(range(k, k + TRAINED_RUN_WORDS))
        run = _joined_trigger_at(index, reference, k, taken - set().union(*(g for g in groups if g <= ahead)))
        if run:
            found.append(run)
            k = max(run) + 1
            continue
        start, end = reference.spans[k]
        written = reference.text[start:end]
        if k not in taken and len(written) >= LONE_WORD_LETTERS and is_coined(squash(written)):
            # a word an article leads to is a thing in the picture ("in a warm genkan"), not a trained word used
            owned = index.owns_trigger(written) or index.names_coined(written)
            if owned and not _ARTICLE_BEFORE.search(reference.text, 0, start):
                found.append({k})
        k += 1
    return found


MAKER_REACH = 3  # the most words between a maker said and the name of their model they are said of


def _makers_named(index: SelectionIndex, reference: Reference, groups: list[set[int]]) -> list[set[int]]:
    """The words outside ``groups`` beside a maker said that are one of their models' names, for a maker none of the
    groups names a model of ("..., background: Fitting Room made by rulles", "Chut thai do Pondloso"): said
    with its maker, a name of plain words is that model's, not the picture's."""
    taken = set().union(*groups, reference.series)  # (the series a name is from is no model: "from star rail")
    found: list[set[int]] = []
    # (by the words as written: "elementalmagicai" is no "Quiz Magic Academy" of theirs)
    said = [{reference.words[k].forms[0] for k in g} - _NOT_NAMING for g in groups]
    for maker in reference.makers:
        made = index.made_by(maker.forms)
        if any(words & index.called_by(i) for words in said for i in made):
            continue  # the maker's model is named already
        at = [k for k, w in enumerate(reference.words) if w.position == maker.position]
        if not at or any(
            min(g) == max(at) + 1 or _MADE_BY_BEFORE.search(_said_before(reference, at, g)) for g in groups
        ):
            # none said, or said as the owner of the name right after it ("pumpkinhn's fu xuan from ...") or as who
            # made the name right before it ("kanatta by h_madoka as sailor moon": a name misspelled is still theirs)
            continue
        near = [
            k
            for k in range(max(0, min(at) - MAKER_REACH - 2), min(len(reference.words), max(at) + MAKER_REACH + 3))
            if k not in taken and k not in at and not any(k in run for run in found)
        ]
        runs = []
        for card in (index.cards[i] for i in made):
            # its words as written and as joined ("lo fi aesthetic" and "lofi" of "Lo-Fi Aesthetic")
            written = set(words_in(model_name(card))) | field_tokens(model_name(card))
            name = {
                t
                for t in written - _NOT_NAMING - set(words_in(card.creator or ""))
                if not VERSION_WORD.match(t) and not t.isdigit()
            }
            for run in _runs(k for k in near if name & set(reference.words[k].forms)):
                spoken = name & {f for k in run for f in reference.words[k].forms}
                if len(spoken) < 2 and (spoken != name or all(is_english(w, COMMON_ZIPF) for w in spoken)):
                    continue  # not its name: two words of it ("axebro sticker effect"), or the whole of a rarer one
                first, last = min(run), max(run)
                between = reference.text[
                    reference.spans[min(last, max(at))][1] : reference.spans[max(first, min(at))][0]
                ]
                # beside the maker: "Komi Shuuko (1cupColdBrew's)", "Lo-Fi Aesthetic (Beta) from duskfallcrew", but
                # not across a clause
                if (
                    not CLAUSE_BREAK.search(_A_BRACKET.sub(" ", between).strip(" ()"))
                    and min(abs(first - max(at)), abs(last - min(at))) <= MAKER_REACH
                ):
                    runs.append(run)
        if runs:
            found.append(max(runs, key=len))
    return found


_A_BRACKET = re.compile(r"\([^()]*\)")  # a bracket and what it holds
_MADE_BY_BEFORE = re.compile(r"(?i)^\s*(?:by|from|de|do|von|di|dari|od)\s*$")


def _said_before(reference: Reference, at: list[int], group: set[int]) -> str:
    """The text between a name and the maker said right after it, or a sign that the name is not right before."""
    if max(group) >= min(at) or max(group) < min(at) - 1:
        return "-"
    return reference.text[reference.spans[max(group)][1] : reference.spans[min(at)][0]]


def _runs(positions) -> list[set[int]]:
    """Word positions in runs written together: next to each other, or one word apart."""
    runs: list[set[int]] = []
    for k in sorted(positions):
        if runs and k - max(runs[-1]) <= 2:
            runs[-1].add(k)
        else:
            runs.append({k})
    return runs


_OPENS_ITEM = re.compile(r"(?i)(?:^|[,;:+&]|\.\s|\b(?:and|with|plus)\s)\s*$")


def _joined_trigger_at(index: SelectionIndex, reference: Reference, k: int, taken: set[int]) -> set[int]:
    """The words from ``k`` that spell a joined trained word of one model, two or more, opening a clause or a list
    item, longest first; none otherwise."""
    if k in taken or not _OPENS_ITEM.search(reference.text, 0, reference.spans[k][0]):
        return set()
    for stop in range(min(len(reference.words), k + TRAINED_RUN_WORDS), k + 1, -1):
        run = range(k, stop)
        gaps = [reference.text[reference.spans[j - 1][1] : reference.spans[j][0]] for j in run[1:]]
        if taken.intersection(run) or not all(re.fullmatch(r"[\s_-]+", gap) for gap in gaps):
            continue
        said = [reference.words[j].forms[0] for j in run]
        if all(is_english(w, COMMON_ZIPF) for w in said) or (
            all(gap == "-" for gap in gaps) and all(is_english(w) for w in said)
        ):
            continue  # words the picture has ("..., anime girl at a festival", "..., red-eye"), not a trained word
        if index.owns_joined_trigger(reference.text[reference.spans[k][0] : reference.spans[stop - 1][1]]):
            return set(run)
    return set()


# where the picture places something, or the part someone plays in it: "at midnight", "on the school rooftop", "as
# the flower girl" ("in pastel glow" is how to draw it, "in the scorching-hot training outfit" what is worn)
_ARTICLE = r"(?:a|an|the|this|that|her|his|their|its)\s+"
# nouns that give a name its part in the look, as a kind word does: "velvetnouveau look"
_LOOKS = frozenset("look looks vibe vibes aesthetic feel theme effect effects filter palette lighting".split())
_PLACED = re.compile(
    rf"(?i)(?:\b(?:at|on|under|near|into|inside|behind|beside)\s+(?:{_ARTICLE})?|\bas\s+{_ARTICLE})"
    r"(?:[^\W\d_]+\s+)?$"
)
_ARTICLE_BEFORE = re.compile(rf"(?i)\b(?:{_ARTICLE}|my\s+)(?:[^\W\d_]+\s+)?$")


def _opens_alone(reference: Reference, ordered: list[int], said: str) -> bool:
    """May the first of ``ordered`` words, written ``said``, be a name alone: a word made up for a model, or one
    English lacks before a word English lacks too or before what someone does ("alloutna'vi hunter crouching",
    "tomcat persiguiendo un ovillo", "frieza knocked out in a crater"; "cowgirl sheriff on a porch" is the picture)?"""
    if len(said) < LONE_WORD_LETTERS or is_english(squash(said)):
        return False
    following = reference.words[ordered[1]].forms[0] if len(ordered) > 1 else ""
    doing = following.endswith(("ing", "ed")) and is_english(following)
    return is_coined(squash(said)) or not is_english(following) or doing


def _said_as_name(text: str, start: int) -> bool:
    """Is the word at ``start`` written as a name: one no language has ("kogatan"), or one in no request language
    ("elbing"), or capitalised inside its sentence ("quiero a Sussurro sentada ...": "sussurro" is Italian too)?"""
    word = re.match(r"[^\W_]+", text[start:])
    if word is None:
        return False
    said = word.group()
    opens_sentence = re.search(r"(?:^|[.!?:;]\s*)$", text[:start]) is not None
    return not is_word(said.casefold()) or (said[0].isupper() and not said.isupper() and not opens_sentence)


def _calls(fields: set[str], forms: tuple[str, ...]) -> bool:
    """Is a word one of a card's name words, or the start of one ("celtpunk" of "CeltPunkAI")?"""
    return bool(fields.intersection(forms)) or any(
        len(form) >= 4 and token.startswith(form) and len(form) >= len(token) / 2 for form in forms for token in fields
    )


def _scoped(intent: Intent, owner: bool) -> Intent:
    """The intent for one part: the part nearest where a version or date was said keeps those constraints, the
    others none ("the corgi lora v2 with the ink style" asks nothing of the style's versions)."""
    if owner:
        return intent
    return replace(
        intent,
        created=[],
        used=[],
        order=None,
        used_order=False,
        version=None,
        version_parts=(),
        version_qualifiers=[],
        version_order=None,
        version_words=frozenset(),
        version_word_spans=[],
        version_bare=False,
        numbered=[],
        quantities=[],
        dated=False,
        base_models=[],  # "mem-cho with the sd2 papercut embedding": the base said is the papercut's
        base_span=None,
    )


# what may stand between a part's name and the version said of it: "bisonham v2", "short hair style v2.0 lora",
# "ancient-ruin TI v1.0", "Corneo's Mercy (embedding 2.0.0)", "the LASER 镭射衣 outfit v1.0"
_ROLE_WORD = "|".join(sorted(ROLE_KINDS, key=len, reverse=True))
_BEFORE_VERSION = re.compile(rf"(?i)(?:\s*(?:\(\s*)?(?:{_KIND_WORD}|{_ROLE_WORD})\b)*\s*(?:\()?")


def _with_own_version(scoped: Intent, span: tuple[int, int], said: Intent) -> Intent:
    """A part's intent with the version said right after its name ("arknights_mint v2.0 at 0.8, ..., bisonham v2
    style at 60%": each part its own; "EDG's Fantasy Armors (Goth Armor version)"), when there is one; ``said`` is
    the whole request's."""
    after = _BEFORE_VERSION.match(scoped.text, span[1]).end()
    for parts, (start, end) in scoped.version_marks:
        if span[0] < start <= after:  # after the name, or read as a word of it ("bisonham v2 style")
            scoped = replace(scoped, version=version_number(parts), version_parts=parts, version_span=(start, end))
            break
    for start, end in said.version_word_spans:
        if span[1] <= start <= after:
            own = frozenset(words_in(said.text[start:end])) & said.version_words
            return replace(scoped, version_words=own, version_word_spans=[(start, end)])
    return scoped


def _quantities_after(text: str, span: tuple[int, int]) -> list[tuple[str, str]]:
    """The quantity said right after a part's name, past its kind word and bracket ("(500 Steps)")."""
    m = QUANTITY.match(text, _BEFORE_VERSION.match(text, span[1]).end())
    return [(m.group("n"), m.group("unit").lower().rstrip("s"))] if m else []


def _owner(intent: Intent, spans: list[tuple[int, int]]) -> int:
    """The part a version (or a base: "the sd2 papercut embedding") was said of: the one it stands in or after,
    nearest; the first part otherwise."""
    said = intent.version_span or intent.base_span
    if said is None:
        return 0
    if intent.version_span is None:  # a base may come first: "the sd2 papercut embedding"
        following = [i for i, (start, _) in enumerate(spans) if 0 <= start - said[1] <= 2]
        if following:
            return following[0]
    at = said[0]
    before = [i for i, (start, _) in enumerate(spans) if start <= at]
    return before[-1] if before else 0


def _strengths(intent: Intent, spans: list[tuple[int, int]]) -> list[float | None]:
    """Each part's strength: one said after it ("the ink lora at 0.4") or before it ("a little of the grain lora")."""
    weights: list[float | None] = [None] * len(spans)
    # a number said beats "a little of" said of the same part ("a little bit of the pastel lora (0.3)")
    for strength in sorted(intent.strengths, key=lambda s: s.forward):
        if strength.forward:
            after = [i for i, (start, _) in enumerate(spans) if start >= strength.span[1]]
            target = after[0] if after else None
        else:
            before = [i for i, (_, end) in enumerate(spans) if end <= strength.span[0]]
            target = before[-1] if before else None
        if target is not None and weights[target] is None:
            weights[target] = strength.weight
    return weights


def _joined_names(cache: CardCache, text: str, reference: Reference, groups: list[set[int]]) -> list[set[int]]:
    """Neighbouring names with only a connector between them are one when a card is called by both together
    ("simple light and shadow", "tom and jerry"); not by a word both say ("Corneo's Brigitte and corneo_dva": two
    of one maker's models)."""
    index = cache.index()
    joined: list[set[int]] = []

    def forms(found: set[int]) -> set[str]:
        return {reference.words[k].forms[0] for k in found}

    for words in groups:
        if joined:
            between = reference.spans[max(joined[-1])][1], reference.spans[min(words)][0]
            union = joined[-1] | words
            if _JOINING.fullmatch(text[between[0] : between[1]]):
                evidence = index.score(reference.with_phrase(union).words, union)
                both = [
                    i
                    for i, found in evidence.matched.items()
                    if forms(found & joined[-1]) - forms(words)
                    and forms(found & words) - forms(joined[-1])
                    and evidence.coverage[i] >= ONE_MODEL_COVERAGE
                ]
                said_again = forms(words) <= forms(joined[-1]) or forms(joined[-1]) <= forms(words)
                # "SALAMANDER's Arknights Saga and SALAMANDER's La-Pluma": an owner said again opens another name
                owned_again = _OWNER_OPENS.match(text, reference.spans[min(words)][0]) is not None
                if (both and not owned_again) or said_again:
                    joined[-1] = union
                    continue
        joined.append(set(words))
    return joined


_MODEL_WORDS = re.compile(
    rf"(?i)^(?:\s*(?:\w+\s+)?|[\s,]*)(?:loras|{_MODEL_KINDS}|checkpoint|dreambooth)"
    r"(?:\b|(?=[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]))"  # "LoRAに", "LoRA로": a particle follows
)
# a model said by what it does: "the lora that swaps the lower jaw for cybernetic parts"
_DESCRIBED_KINDS = r"(?:lora|locon|lycoris|embedding|model)"
_DESCRIBING_KIND = re.compile(rf"(?i)\s+{_DESCRIBED_KINDS}\s+(?:that|which)\s+")
_DESCRIBED = re.compile(rf"(?i)\b{_DESCRIBED_KINDS}\s+(?:that|which|for|to)\s+$")
_OWNER_OPENS = re.compile(r"(\S+?)['’]s\s+\S")
_OWNER_BEFORE = re.compile(r"([^\s'’]+)['’]s\s+$")
_OWNED = re.compile(r"(?i)\b(?:my|your|our|use|using)\s+(?:the\s+)?(?:\w+\s+){0,3}$")
# a kind word before the name, as Romance languages put it: "con el lora de european towns", "le lora du ..."
_KIND_OF = re.compile(
    r"(?i)\b(?:lora|loras|locon|lycoris|embedding|modelo|mod[eè]le|modello)\s+(?:de|del|du|des|di|della|do|da)\s+$"
)


# between a name and the model listed with it: "+", "&", "with (the)", "and", "x", "mit", "con", "avec"
_LISTED_WITH = re.compile(
    r"(?i)\s*(?:[+&]|\b(?:" + "|".join(sorted(LISTING - {"w", "using"})) + r")\b)(?:\s+(?:the|my|a|der|la|le|el))?\s*"
)


def _unheard_name(
    cache: CardCache, text: str, reference: Reference, words: set[int], following: set[int] | None
) -> bool:
    """Are ``words`` a short name, words English lacks and one no card has ("frieren"; not "pouty girl"), at the
    request's start, beside the ``following`` part, said with no series (a name from a series is the single pick's
    to answer, offering what it has of it)? Listed with it ("frieren + aetherpunk lora") any such word is a name;
    before the picture ("misato katsuragi on a rooftop, konoshige lora") only words no language has are
    ("mittelalterlicher marktplatz, ... die pillory lora" is German)."""
    if following is None:
        return False
    # the request may open by asking, in any language ("нарисуй triss merigold ...")
    opening = 0
    while opening < len(reference.words) and reference.words[opening].forms[0] in DRAW_ME | ASKING:
        opening += 1
    ordered = [k for k in sorted(words) if k >= opening]
    said = [reference.words[k].forms for k in ordered]
    between = text[span_of(reference, words)[1] : span_of(reference, following)[0]]
    listed = _LISTED_WITH.fullmatch(between) is not None
    return (
        not reference.series
        and ordered[:1] == [opening]
        and len(ordered) <= SHORT_HEAD
        and not any(is_english(forms[0]) for forms in said)
        and any(is_unheard(cache.index(), forms) for forms in said)
        and (listed or not any(is_word(forms[0]) for forms in said) or _in_english(reference, words))
    )


ENGLISH_SHARE = 0.75  # of a request's other words in Latin letters, when it is written in English


def _in_english(reference: Reference, words: set[int]) -> bool:
    """Is the request around ``words`` written in English ("frieren casting a flower spell ..."): then a word of
    another language opening it is a name, not that language's word ("frieren" is German for "to freeze")?"""
    others = [
        w.forms[0]
        for k, w in enumerate(reference.words)
        if k not in words and w.forms[0].isascii() and w.forms[0].isalpha()
    ]
    return bool(others) and sum(map(is_english, others)) >= ENGLISH_SHARE * len(others)


def _called_a_model(text: str, reference: Reference, words: set[int], is_creator: Callable[[str], bool]) -> bool:
    """Does the request call these words a model ("my ghibli", "ghibli lora", "the ghibli style lora", "el lora de
    ghibli", a field "style: ghibli", "the lora that swaps ..."), not only a style ("in sketch style")?"""
    start, end = span_of(reference, words)
    labelled = any(label.end() == start for label in FIELD_LABEL.finditer(text, 0, start))  # "style: nodes tech"
    before = text[:start]
    owner = _OWNER_OPENS.match(text, start, end)
    return (
        # "beelze's gerph style", "inzaniak's 2shot style": a creator's style is a model (a handle, no English word)
        bool(owner and is_creator(handle := squash(owner.group(1))) and not is_english(handle))
        or bool(
            _MODEL_WORDS.match(text[end:])
            or _OWNED.search(before)
            or _KIND_OF.search(before)
            or _DESCRIBED.search(before)
        )
        or labelled
    )


def _families(part: Part) -> set[str]:
    """The models a part names: its decision's, or, when it decided none, every candidate its words cover."""
    if part.decision.remaining:
        return {c.family or c.id for c in part.decision.remaining}
    return {r.card.family or r.card.id for r in part.ranking.candidates if r.coverage >= MIN_COVERAGE}


def _one_part_per_model(parts: list[Part], reference: Reference) -> list[Part]:
    """Parts that name the same model are one ("specter, ..., <lora:arknights_specter:0.8>"; "corgi in sketch
    style" of a corgi LoRA with a sketch version): the marked one stays, else one decided ("kiri, kirihalo ...": the
    trained word pins the Kiri that "kiri" asks about), else the first."""
    kept: list[Part] = []
    for part in sorted(parts, key=lambda p: (not p.marked, p.decision.status != "selected")):
        if not any(_families(part) & _families(other) for other in kept):
            kept.append(part)
    return sorted(kept, key=lambda p: min(p.words, default=len(reference.words)))


def _refusal(decided: list[Part]) -> str:
    """Why the chosen checkpoints cannot make one image, or ""."""
    chosen = [p.decision.chosen for p in decided if p.decision.status == "selected"]
    bases: dict[str, StoredCheckpoint] = {}
    for card in chosen:
        if (architecture := architecture_of(card.base_model)) is not None:  # Civitai's "Other" may be any of them
            bases.setdefault(architecture, card)
    if len(bases) > 1:
        first, second = list(bases.values())[:2]
        return (
            f"{first.name} is for {describe(first.base_model)} and {second.name} for {describe(second.base_model)}: "
            "one image cannot combine checkpoints of different bases."
        )
    full = [card for card in chosen if card.kind in FULL_MODELS]
    if len(full) > 1:
        return (
            f"{full[0].name} and {full[1].name} are both full models; an image can use one, with LoRAs and "
            "embeddings on it."
        )
    return ""


def _same_base(part: Part, base: str | None) -> Part:
    """An open part narrowed to the base the decided parts share; no match when none of its candidates is on it."""
    if base is None or part.decision.status != "clarify":
        return part
    fitting = [c for c in part.decision.remaining if architecture_of(c.base_model) == base]
    if len(fitting) == len(part.decision.remaining) or not fitting:
        return part
    status = "selected" if len(fitting) == 1 else "clarify"
    return replace(part, decision=Decision(status, fitting, part.decision.reason))


def compose(
    cache: CardCache,
    intent: Intent,
    reference: Reference,
    decide: Callable[[Intent, Ranking], Decision],
    tagged: list[Part] = (),
) -> Composition | None:
    """The parts of a request that names two or more models, each decided, with the ``tagged`` parts its WebUI
    tags named; None when it names one (the single pick's path then stands)."""
    groups = marked_parts(intent.text, reference)
    # "march 7th ..., use the face version": words said of a version name a version of another part, not a model
    # ("aa's astolfo, the AA_Astolfo_v4 file": the same words said elsewhere still name one)
    groups = [g for g in groups if not any(_inside(span_of(reference, g), said) for said in intent.version_word_spans)]
    # "yam negative in the negative prompt": words that say where a file goes name no second model
    groups = [g for g in groups if not any(_inside(span_of(reference, g), talk) for talk in intent.talk_spans)]
    # "caenis (sialiasialis, v.1.0)": a version said is no name
    groups = [g for g in groups if not any(_inside(span_of(reference, g), said) for _, said in intent.version_marks)]
    groups = _with_version_labels(intent, reference, groups)
    is_creator = cache.index().is_creator
    groups = _without_makers_after(intent.text, reference, groups, is_creator)
    groups = _split_at_owners(intent.text, reference, groups, is_creator)
    wanting = wanting_words(reference)  # "quiero a la yoruichi ...": "I want" is no word of the name
    groups = [g - wanting for g in groups if g - wanting]
    trained = _trained_words(cache, reference, groups)
    trained += _makers_named(cache.index(), reference, groups + trained)
    groups = [g for g in groups if not any(g < run for run in trained)] + trained
    head = reference.head - set().union(*groups)
    if trained and head and min(head) == min(reference.head):
        groups.append(head)  # "memnarch looming ..., david moreno architecture ...": the name it opens with
    groups = sorted(groups, key=min)
    if len(groups) + len(tagged) < 2:
        return None
    if len(groups) > MAX_LISTED:  # each name is a search: a request listing dozens is refused before any
        return Composition(
            [],
            refusal=f"That request lists {len(groups)} names; an image takes at most {MAX_CHECKPOINTS} checkpoints.",
        )
    groups = _joined_names(cache, intent.text, reference, groups)
    if len(groups) + len(tagged) < 2:
        return None
    spans = [span_of(reference, words) for words in groups]
    owner = _owner(intent, spans)
    weights = _strengths(intent, spans)
    quantities = [_quantities_after(intent.text, span) for span in spans]
    unclaimed = [q for q in intent.quantities if not any(q in said for said in quantities)]
    parts: list[Part] = []
    for i, words in enumerate(groups):
        scoped = _with_own_version(_scoped(intent, i == owner), spans[i], intent) if i != owner else intent
        # "Neon Diffusion TI (500 Steps)": a file's quantity said right after a part is that part's
        scoped = replace(scoped, quantities=quantities[i] or (unclaimed if i == owner else []))
        # the kind said of another part is not this one's ("genshin_yae with the gongbi lora": an embedding may be it)
        scoped = replace(scoped, part_text=_own_clause(intent.text, spans, i))
        ranking = retrieve(cache, scoped, _part_reference(cache.index(), reference, words, groups))
        said = words <= reference.phrase or words in reference.listed  # listed: a labelled field ("style: ...")
        marked = said and _called_a_model(intent.text, reference, words, is_creator)
        if not marked and not _names_model(cache, ranking, words):
            # "kanbe kotori asleep at her desk, ...": a listed name's last words may be the picture's
            named = _named_opening(cache, scoped, reference, words, groups)
            following = groups[1] if len(groups) > 1 else None  # (or a WebUI tag: then no name is listed)
            if named is None and i == 0 and _unheard_name(cache, intent.text, reference, words, following):
                marked = True  # "frieren + aetherpunk lora": the name it opens with is one we lack
            elif named is None and said and ranking.reference.makers:
                # "Tomas_Aguilar's D&D Isometric Tower map as bg": someone made what the words name, up to the last
                # word its best candidate is called by ("kozueの三峰真白がシャボン玉を吹いてる絵": the rest is drawn)
                marked = True
                words, ranking = _up_to_named(cache, scoped, reference, words, groups, ranking)
            elif named is None:
                continue  # not called a model, and no model is called so: the picture ("the captain's chair")
            else:
                words, ranking = named
        decision = decide(scoped, ranking)
        if marked or len(words) > 1:  # one plain word several models fit may be the picture's ("in summer")
            following = spans[i + 1][0] if i + 1 < len(spans) else len(intent.text)
            after = intent.text[span_of(reference, words)[1] : following]
            decision = _answered_by_part(decision, reference, words, after)
        parts.append(Part(words, ranking, decision, weights[i], marked=marked))
    if tagged:  # "<lora:hm2b:0.7>, <lora:egirl:0.6>, streaming setup, gaming chair, ...": the rest is the prompt
        parts = [p for p in parts if p.marked or not _written_plain(reference, p.words)]
    parts += tagged
    if len(parts) < 2:
        return None
    parts = _one_part_per_model(parts, reference)
    # a part nothing fits is a model the repository lacks when the request calls it one ("my ghibli lora"); "in
    # sketch style" with no sketch-style model is how to draw the picture
    parts = [p for p in parts if p.decision.status != "no_match" or p.marked]
    found = [p for p in parts if p.decision.status != "no_match"]
    if len(parts) < 2 or not found:
        return None
    if len(found) < len(parts):
        missing = next(p for p in parts if p.decision.status == "no_match")
        return Composition(parts, refusal=missing.decision.reason, missing=missing)
    if len(parts) > MAX_CHECKPOINTS:
        return Composition(
            parts, refusal=f"An image takes at most {MAX_CHECKPOINTS} checkpoints; this names {len(parts)}."
        )
    bases = {architecture_of(p.decision.chosen.base_model) for p in parts if p.decision.status == "selected"} - {None}
    parts = [_same_base(p, next(iter(bases)) if len(bases) == 1 else None) for p in parts]
    parts = [p for p in parts if not _plain_words_of_many(p, reference, cache.index().spells_name)]
    if len(parts) < 2:
        return None
    return Composition(parts, refusal=_refusal(parts))


_NOT_NAMING = KIND_WORDS | STOPWORDS  # words that name no model: "lora", "the", "my"
_WHOLE_NUMBER = re.compile(r"(?<![\d.])\d+(?![\d.])")  # "0" of "Level 0", "2000"; not the parts of "1.5"


def _name_words(text: str) -> frozenset[str]:
    """The words that name something in ``text``: no kind, function or version words ("the offset noise lora v2" ->
    {"offset", "noise"})."""
    return frozenset(w for w in words_in(text) if w not in _NOT_NAMING and not VERSION_WORD.match(w))


def _run(text: str) -> str:
    """``text`` run together in ASCII: what another name holds when it says the same words in a row ("gustavedore"
    of "Paradise Lost Gustave Dore 1866")."""
    return squash(anyascii(text))


def _said_run(text: str) -> str:
    """The run (see :func:`_run`) of a part's words less kind and version words and the function words around them
    ("in a Gustave Doré style v2" -> "gustavedore")."""
    said = [w for w in re.findall(r"\w+", text.casefold()) if w not in KIND_WORDS and not VERSION_WORD.match(w)]
    while said and said[0] in STOPWORDS:
        said.pop(0)
    while said and said[-1] in STOPWORDS:
        said.pop()
    return _run(" ".join(said))


def _answered_by_part(decision: Decision, reference: Reference, words: set[int], after: str) -> Decision:
    """A part's question among models, answered by what the part itself says of its model: a number its name holds
    (:func:`_numbered`), the kind said right ``after`` it (:func:`_of_kind_said`), a version's label in its bracket
    (:func:`_labelled_in_bracket`), its name said whole (:func:`_named_whole`, :func:`_named_most`)."""
    if decision.status != "clarify":
        return decision
    start, end = span_of(reference, words)
    remaining = _of_kind_said(_numbered(decision.remaining, reference.text[start:end]), after)
    remaining = _labelled_in_bracket(remaining, reference.text, end)
    if len(remaining) == 1:
        return Decision("selected", remaining)
    if len(remaining) < len(decision.remaining):
        decision = replace(decision, remaining=remaining, reason=f"{len(remaining)} checkpoints fit")
    clause = CLAUSE_BREAK.split(reference.text[:start])[-1] + reference.text[start:end]
    clause += _PART_CLAUSE.split(after, maxsplit=1)[0]
    return _named_most(_named_whole(decision, reference, words), reference.text[start:end], clause)


_PART_CLAUSE = re.compile(r"[,;:.!?+]|\s[-–—/]\s")  # where the clause of a part's name ends
_PART_OPENS = re.compile(rf"(?i)[,;:!?+&]|\.(?=\s)|\s[-–—/]\s|{_CONNECTING}")


_BRACKET_AFTER = re.compile(rf"(?i)(?:\s*(?:{_KIND_WORD})\b)*\s*\(([^()]*)\)")


def _labelled_in_bracket(cards: list[StoredCheckpoint], text: str, end: int) -> list[StoredCheckpoint]:
    """The ``cards`` whose version label the bracket right after a part writes as a word ("Meenow's Aerith lora (file
    tifa_v1, ...)": the version labelled "tifa_v1"), when some are."""
    bracket = _BRACKET_AFTER.match(text, end)
    if bracket is None:
        return cards
    said = {squash(w) for w in re.findall(r"[^\s,;()]+", bracket.group(1))}
    labelled = [c for c in cards if c.version and squash(c.version) in said and not squash(c.version).isdigit()]
    return labelled or cards


def _numbered(cards: list[StoredCheckpoint], said: str) -> list[StoredCheckpoint]:
    """The ``cards`` whose model name holds every whole number ``said`` holds ("the Backrooms Level 0 LoRA", not
    "Level 2"; "isometric dreams 2000"), when some do."""
    numbers = set(_WHOLE_NUMBER.findall(said))
    if not numbers:
        return cards
    return [c for c in cards if numbers <= set(_WHOLE_NUMBER.findall(model_name(c)))] or cards


def _own_clause(text: str, spans: list[tuple[int, int]], i: int) -> str:
    """Part ``i``'s words with what stands before them since a connector ("décor : l'embedding Magical Interior")
    and after them in their clause, up to the next part: where its own kind is said."""
    (start, end), before = spans[i], spans[i - 1][1] if i else 0
    after = spans[i + 1][0] if i + 1 < len(spans) else len(text)
    lead = _PART_OPENS.split(text[before:start])[-1]
    return lead + text[start:end] + _PART_CLAUSE.split(text[end:after], maxsplit=1)[0]


def _of_kind_said(cards: list[StoredCheckpoint], after: str) -> list[StoredCheckpoint]:
    """The ``cards`` of the kind said right ``after`` a part, in its clause ("Lucy Heartfilia LoRA ..., with the Flower
    girl embedding": the LoRA, though the request says "embedding" too), when some are."""
    kinds = kinds_named(_PART_CLAUSE.split(after, maxsplit=1)[0])[0]
    return [c for c in cards if c.kind in kinds] or cards if kinds else cards


def _named_whole(decision: Decision, reference: Reference, words: set[int]) -> Decision:
    """A part's question among models, one of which a part's words name whole, is answered by that one: a request
    that lists several models writes each by its name ("the offset noise lora": "[LoCon/LoRA] Offset noise", not
    "rMadArt3_NoiseOffset"; "Star Trek Uniforms", not "Star Trek TNG uniforms"). It stays a question where another
    model says the same words in a row inside a longer name ("Gothic Horror Style" and "GothicHorrorAI") or shares a
    proper name with it ("Higuchi Madoka" and "character-Madoka"): those are the same thing by two makers."""
    if decision.status != "clarify":
        return decision
    start, end = span_of(reference, words)
    said, run = _name_words(reference.text[start:end]), _said_run(reference.text[start:end])
    if not said or not run:
        return decision

    def named_by(card: StoredCheckpoint) -> bool:  # some title of its name is the words said, less its maker's
        name, maker = model_name(card), _name_words(card.creator or "")
        return any(_name_words(title) - maker == said - maker for title in (name, *segments(name)))

    named = [c for c in decision.remaining if named_by(c)]
    models = {c.family or c.id for c in named}
    others = [c for c in decision.remaining if (c.family or c.id) not in models]
    proper = {w for w in said if not is_english(w)}
    if len(models) != 1 or not others or any(run in _run(c.name) or proper & _name_words(c.name) for c in others):
        return decision
    if len(named) == 1:
        return Decision("selected", named)
    return replace(decision, remaining=named, reason=f"{len(named)} versions of {model_name(named[0])} fit")


_LATIN = re.compile(r"[0-9a-zà-ɏ]")  # a word in the Latin script (or a number)


def _folded(said: frozenset[str]) -> set[str]:
    """Words without their accents and plural ("dore" of "doré", "marker" of "markers"), as names are written
    either way."""
    bare = (unicodedata.normalize("NFKD", w).encode("ascii", "ignore").decode() or w for w in said)
    return {w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in bare}


def _named_most(decision: Decision, part: str, clause: str) -> Decision:
    """A part's question among models, one of which the part says every name word of, is answered by that one when
    each other is either named by fewer of those same words ("girls und panzer kay": "Girls und Panzer Kay", not
    "Girls und Panzer") or hardly named at all ("the table rpg / d&d maps #10 - cities lora": not "FF14 Landscape and
    Cities"), in the ``part``'s clause. Another model most of whose name is said too, or whose name says all the
    part's words, is a real question ("nhat binh dress" of two such, "Gustave Doré style" of "Paradise Lost Gustave
    Dore 1866")."""
    if decision.status != "clarify":
        return decision
    said, named = _folded(_name_words(clause)), _folded(_name_words(part))
    # a name's words in another script than the request's are its gloss ("明日方舟-夕 Arknights-dusk")
    latin = all(_LATIN.match(w) for w in said)
    names = {
        c.family or c.id: {w for w in _folded(_name_words(model_name(c))) if not latin or _LATIN.match(w)}
        for c in decision.remaining
    }
    whole = [family for family, name in names.items() if name and name <= said]
    if not whole:
        return decision
    most = max(whole, key=lambda family: len(names[family]))
    if not all(
        name < names[most] or (len(name & said) < len(name) / 2 and not (len(named) > 1 and named <= name))
        for f, name in names.items()
        if f != most
    ):
        return decision
    chosen = [c for c in decision.remaining if (c.family or c.id) == most]
    if len(chosen) == 1:
        return Decision("selected", chosen)
    return replace(decision, remaining=chosen, reason=f"{len(chosen)} versions of {model_name(chosen[0])} fit")


def _written_plain(reference: Reference, words: set[int]) -> bool:
    """Are ``words`` everyday English written in lower case, as a prompt's tags are ("gaming chair")?"""
    start, end = span_of(reference, words)
    return reference.text[start:end].islower() and all(
        is_english(reference.words[k].forms[0], COMMON_ZIPF) for k in words
    )


def _plain_words_of_many(part: Part, reference: Reference, spells: Callable[[str], bool]) -> bool:
    """Is ``part`` the picture's words after all: one unmarked plain word that several models still fit ("...,
    sunset, splashing water, ..." of a tag prompt), unmarked plain words said where the picture places something
    ("at midnight", "on the school rooftop"), or a name said of a thing of the picture ("liyue harbor at dusk";
    ``spells`` says whether words spell a model's name)? Scene words never make a part unless the request marks
    them; nor does a name someone is said to have made ("dksdkffiwna's laffey half asleep")."""
    if part.marked or part.decision.status == "no_match" or part.ranking.reference.makers:
        return False
    first, last = min(part.words), max(part.words)
    start, end = reference.spans[first][0], reference.spans[last][1]
    following = reference.spans[last + 1] if last + 1 < len(reference.words) else None
    joined = following is not None and reference.text[end : following[0]] in ("", " ", "-")
    # "gothic style" (the reading already tells "a western-style mansion" apart: no kind word there)
    called = following is not None and reference.words[last + 1].forms[0] in KIND_WORDS
    # a name said of a thing of the picture after the subject: "..., liyue harbor at dusk"; not the subject itself
    # ("yingxbody portrait"), what someone does ("kirihalo gaming") or a role ("cyberworld background", "... look")
    noun = reference.words[last + 1].forms[0] if following is not None else ""
    after = reference.words[last + 2].forms[0] if last + 2 < len(reference.words) else ""
    modifier = (
        len(part.words) == 1
        and first > 0
        and joined
        and not called
        and len(noun) > 2
        and not any(c.isdigit() for c in reference.words[first].forms[0])  # "the bunka10taku apartments": a file's
        and is_english(noun, COMMON_ZIPF)
        and noun not in KIND_WORDS | SETTING_WORDS | _LOOKS
        and not opens_scene(noun, after)
        and not any(
            spells(reference.text[start : reference.spans[k][1]])
            for k in range(last + 1, last + 3)
            if k < len(reference.words)
        )
        # nor its model's trained words said together ("yuhuo fire magic" of one trained on "yuhuo" and "fire")
        and noun not in {w for card in part.decision.remaining for t in card.triggers for w in words_in(t)}
    )
    if modifier:
        return True
    english = all(is_english(reference.words[k].forms[0]) for k in part.words)
    models = {c.family or c.id for c in part.decision.remaining}
    # or English words said where the picture places something: "... at midnight" of a "Midnight" LoRA, "catching a
    # baseball on the school rooftop" of a "School rooftop" one
    titled = any(c.isupper() for c in reference.text[start:end])  # "lyra venn in Velvet Maid Dress" names it
    placed = _PLACED.search(reference.text, 0, start) is not None and not titled
    return ((len(part.words) == 1 and len(models) > 1) or placed) and english and not called


__all__ = ["Composition", "Part", "compose", "marked_parts", "span_of"]
