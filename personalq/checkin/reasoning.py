"""The local reasoning engine: from scored candidates to select, clarify or no match.

Evidence is a score, not a filter (see :mod:`personalq.checkin.evidence`); only explicit selection
constraints filter: a negation ("not the offset one"), a version number that must exist, a date or usage
window, a base model. The decision then reads the scores:

- *no match* when nothing has real evidence: the best candidate's evidence is below ``MIN_EVIDENCE``, or it
  matches less than ``MIN_COVERAGE`` of the phrase the person used to name the model ("my moomin lora"), or less
  than ``MIN_DESCRIBED_COVERAGE`` of a phrase describing what it draws ("the lora for cute little chibi tanks") or
  ``MIN_UNSPACED_COVERAGE`` of one in Chinese, Japanese or Thai ("用冰箱贴那个lora");
- the *leaders* are the candidates within ``LEAD_RATIO`` of the best; inside one model, the versions with the
  most version evidence ("the heavy one") push out their siblings;
- one leader is *selected*; recency words pick the extreme of what remains; several leaders need a question;
- a request that says who only by a role from a series ("the singer from one piece film red") skips the name's
  evidence: every model of the series fits, narrowed by the role's words (:func:`_role_in_series`).

The constants were set on the blind development set's Check-in rows (see ``benchmarks/README.md``) and
checked on a second blind set that none of this code was tuned on.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Literal

from rapidfuzz import fuzz

from personalq.checkin import titles
from personalq.checkin.evidence import QueryWord, card_fields, model_name, unlabelled_name
from personalq.checkin.intent import VERSION_WORD, Intent, inside_name
from personalq.checkin.lexicon import canonical_style
from personalq.checkin.reference import (
    ANYONE,
    KIND_WORDS,
    PLURAL_ROLES,
    RELATION_NOUNS,
    ROLE_NOUNS,
    STOPWORDS,
    Reference,
    labels_number,
)
from personalq.checkin.retrieval import FULL_COVERAGE, UNSPACED_SERIES_COVERAGE, Ranked, Ranking, maker_made
from personalq.checkin.roles import ROLE_KINDS, STYLE_WORDS, is_character, is_style
from personalq.checkin.tokens import field_tokens, fold, is_english, is_unspaced, squash
from personalq.checkin.tokens import words as words_in
from personalq.checkin.version_notes import by_notes
from personalq.repository.card import StoredCheckpoint
from personalq.repository.versions import parse_version

Status = Literal["selected", "clarify", "no_match"]
Scope = Literal["written", "label", "file", "all"]  # the card fields a word ruled out is read in
# "written": the label and triggers, and a version only as the label writes it; "all": every field
_SCOPE_FIELDS = {
    "written": ("version", "trigger"),
    "label": ("version", "trigger"),
    "file": ("name", "version", "trigger"),
}

MIN_EVIDENCE = 0.25  # of the evidence of one name word that only one model has (a larger repository, a larger idf)
MIN_COVERAGE = 0.5  # of the reference phrase's weight, when the request marks one
MIN_UNSPACED_COVERAGE = 0.3  # of a phrase in a script without spaces, whose pairs across words name nothing
MIN_DESCRIBED_COVERAGE = 0.35  # of a phrase that describes what the model draws: people paraphrase model pages
LEAD_RATIO = 0.8  # a candidate this close to the best still leads
SCATTERED_COVERAGE = 0.75  # below this, a model whose name was not spelled has the words only here and there
CONSTRAINED_RATIO = 0.6  # after a hard constraint, survivors must still be this close to the best before it
NEAR_NAME = 80  # rapidfuzz ratio at which two names are one written differently ("hukee", "huke")
OWN_MARGIN = 0.1  # of a unique word's evidence: version evidence below this does not push siblings out

_TI_WORDS = re.compile(r"(?i)\b(?:embedding|embeddings|embed|emb|ti|textual inversion|эмбеддинг\w*)\b")
_LORA_WORDS = re.compile(r"(?i)\b(?:lora|loras|locon|lycoris|loha|лор\w)\b")


@dataclass(frozen=True)
class CardFeatures:
    styles: frozenset[str]


def features(card: StoredCheckpoint) -> CardFeatures:
    """What a clarification can group candidates by beyond name, version and date."""
    return CardFeatures(frozenset({canonical_style(s) for s in card.styles}))


@dataclass
class Decision:
    status: Status
    remaining: list[StoredCheckpoint]
    reason: str = ""
    alternatives: list[StoredCheckpoint] = field(default_factory=list)
    phrasing: tuple[str, list] | None = None  # an LLM's validated question and options, when it wrote them

    @property
    def chosen(self) -> StoredCheckpoint | None:
        return self.remaining[0] if self.status == "selected" else None


def rank(cards: list[StoredCheckpoint], scores: dict[str, float]) -> list[StoredCheckpoint]:
    return sorted(cards, key=lambda c: (-scores.get(c.id, 0.0), -c.created_at.timestamp(), c.id))


def version_matches(wanted: tuple[int, ...], card: StoredCheckpoint) -> bool:
    """Does the card's version label say ``wanted`` ("v2" matches "v2.0", "v2_offset", "toriyama_akira_2")?"""
    info = parse_version(card.version)
    numbers = [info.parts] if info.parts else []
    label = str(card.version or card.name)
    numbers += [tuple(int(p) for p in n.split(".")) for n in re.findall(r"\d+(?:\.\d+)*", label)]
    # a file's name drops the dots: "realisticVisionV20_v20" is 2.0, "cardosAnimatedv20" 2.0, "revAnimated_v122" 1.2.2
    numbers += [tuple(int(d) for d in n) for n in re.findall(r"(?i)(?<=[^\W\d])v(\d{2,3})(?![\d.])", label)]
    return any(_says_number(parts, wanted) for parts in numbers)


def _says_number(parts: tuple[int, ...], wanted: tuple[int, ...]) -> bool:
    """Is the version number ``parts`` the ``wanted`` one, as written shorter or longer ("2" and "2.0" are 2.0; "2.1"
    is not 2)?"""
    padded = parts + (0,) * max(0, len(wanted) - len(parts))
    return padded[: len(wanted)] == wanted and all(p == 0 for p in parts[len(wanted) :])


def _lettered(card: StoredCheckpoint, letter: str) -> bool:
    """Is the card's version label the one ``letter`` calls ("Version B", "type-b")?"""
    return letter in field_tokens(str(card.version or ""))


def _opens_with(wanted: tuple[int, ...], card: StoredCheckpoint) -> bool:
    """Is ``wanted`` the number the card's version label opens with ("v3" of "v3_no_flip", "v2" of "v2.0-r4")?"""
    parts = parse_version(card.version).parts
    return bool(parts) and _says_number(parts, wanted)


def _excluded(card: StoredCheckpoint, banned: set[str], scope: Scope = "all") -> bool:
    """Does the card have a word the person ruled out? A version word ("not v2") rules out the versions it names
    however they are written ("v2.0", "v2_offset"), and only by the version label: a name such as "Fast Negative
    (+ FastNegativeV2)" does not make every version the v2 one. Other words are read in the fields of ``scope``:
    ``"label"`` the version label and triggers, ``"file"`` the name too, ``"all"`` every field; ``"written"`` reads
    them as ``"label"`` does and a version only as its label writes it ("the v1.0, not the V01")."""
    fields = card_fields(card)
    tokens = set().union(*(fields[f] for f in _SCOPE_FIELDS.get(scope, fields)))
    for word in banned:
        if VERSION_WORD.match(word):
            if field_tokens(word) & fields["version"]:
                return True
            if scope != "written" and card.version and version_matches(parse_version(word).parts, card):
                return True
        elif _word_tokens(word) & tokens and not _says_without(card, word):
            return True
    return False


def _nth_versions(cards: list[StoredCheckpoint], n: int) -> set[str]:
    """The ids of each model's ``n``-th version by date among ``cards`` (where it has that many)."""
    families: dict[str, list[StoredCheckpoint]] = defaultdict(list)
    for card in cards:
        families[card.family or card.id].append(card)
    return {
        sorted(versions, key=lambda c: (c.created_at, c.id))[n - 1].id
        for versions in families.values()
        if 0 < n <= len(versions)
    }


def _says_without(card: StoredCheckpoint, word: str) -> bool:
    """Does the card's name, label or trigger say it is without ``word`` ("Elaina [No Hat]", "no-hat", "hatless"):
    then "the one without the hat" is that one, not one it rules out?"""
    texts = " ".join((card.name, str(card.version or ""), *card.triggers)).casefold()
    said = re.escape(word.casefold())
    return re.search(rf"\b(?:no|without|non)[\s_-]*{said}\b|\b{said}[\s_-]*less\b", texts) is not None


def rules_out(word: str, cards: list[StoredCheckpoint]) -> bool:
    """Does ruling out ``word`` rule out any of ``cards`` (in any field)?"""
    return any(_excluded(card, {word}) for card in cards)


def _word_tokens(word: str) -> set[str]:
    """What a word ruled out matches: a joined one ("ctile-16") whole, as its parts ("ctile") are its siblings'."""
    return {squash(word)} if re.search(r"[^\W_][-_][^\W_]", word) else field_tokens(word)


def _carries(card: StoredCheckpoint, number: str) -> bool:
    """Does the card's version label carry ``number`` as digits of its own ("LORA14DM120realistic..." has 120)?"""
    return labels_number(str(card.version or ""), number)


def _file_words(card: StoredCheckpoint) -> set[str]:
    """Words that describe one file of a model: its name, version label and trigger ("mrblng02-8000")."""
    fields = card_fields(card)
    return fields["name"] | fields["version"] | fields["trigger"]


def _file_texts(card: StoredCheckpoint) -> tuple[str, ...]:
    """The texts that name one file of a model: its name, version label and trigger words."""
    return (card.name, str(card.version or ""), *card.triggers)


def constraints(intent: Intent, cards: list[StoredCheckpoint]) -> list[tuple[str, Callable[[StoredCheckpoint], bool]]]:
    """The request's hard constraints over ``cards`` (the candidates) as (what nothing satisfied, test) pairs, in the
    order they apply.

    A date window that ends long before the oldest candidate describes the picture, not the checkpoint ("a photo as
    if taken on a phone in 2007"), unless the request dates the checkpoint ("from 2021"). A word ruled out is read
    in the narrowest fields where some candidate has it: a version label as written ("the v1.0, not the V01"), a
    version label or trigger ("not the locon version" of
    "[LoCon/LoRA] Airconditioner Style" rules out its "LoCon Version", not the model), then the name, version label
    and trigger (a model page whose description announces its "v2-pynoise" release does not make every version the
    pynoise one), then every field.
    """
    steps: list[tuple[str, Callable[[StoredCheckpoint], bool]]] = []
    oldest = min((c.created_at for c in cards), default=None)
    created = [w for w in intent.created if intent.dated or oldest is None or w.end > oldest - dt.timedelta(days=365)]
    # "caenis, the summer version": a season or month a candidate is called by ("summer caenis") is its version
    created = [w for w in created if intent.dated or not any(_called_by(c, w.label.split()[0]) for c in cards)]
    if intent.excluded:
        banned = set(intent.excluded)
        # a version written as one label writes it rules out that one, not a sibling that numbers it the same
        scope = next((f for f in ("written", "label", "file") if any(_excluded(c, banned, f) for c in cards)), "all")
        # a word only tags or descriptions carry rules out some candidates, never the only ones left: "webcam
        # screenshot lora, not the cctv embedding" rules out another model, not the one tagged "cctv" it names
        if scope != "all" or not all(_excluded(c, banned, scope) for c in cards):
            steps.append(
                (
                    f"every candidate is {' or '.join(sorted(banned))}",
                    lambda c: not _excluded(c, banned, scope),
                )
            )
    if intent.version_parts:
        label = ".".join(str(p) for p in intent.version_parts)
        # a bare decimal may be the name's own ("Hamunaptra Style 2.1"), not a version ("RFKTR's Bontrex v1.5")
        bare = intent.text[slice(*intent.version_span)] if intent.version_bare and intent.version_span else None
        said = re.compile(rf"(?<![\w.]){re.escape(bare)}(?![\w.])") if bare else None
        # unless a sibling's label has it: "RZ - MK Ultra ( 1.5 & 2.1 )" names the versions its labels tell apart
        labelled = {c.family or c.id for c in cards if version_matches(intent.version_parts, c)}
        base = f"sd-{label}"
        spoken = intent.text[slice(*intent.version_span)] if intent.version_span else ""
        for_base = [c.base_model == base for c in cards]
        if not labelled and not re.search(r"(?i)v\s*\d", spoken) and any(for_base) and not all(for_base):
            # "the 1.5 one" of "Winter Style" and "Winter Style SD 2.1": no label has it, a base model does
            steps.append((f"none of them is for {base}", lambda c: c.base_model == base))
        elif intent.version_ordinal == "upload" or (intent.version_ordinal and not labelled):
            # "the third xingqiu upload" of v0.18, v1.0 and v2.0: the third of its model's versions by date
            nth = _nth_versions(cards, intent.version_parts[0])
            steps.append((f"none of them has a version {label}", lambda c: c.id in nth))
        else:
            # a label that opens with the number outdoes a sibling's that carries it later ("v3" is "v3_no_flip",
            # not "v1.0_a3")
            opened = {c.family or c.id for c in cards if _opens_with(intent.version_parts, c)}
            steps.append(
                (
                    f"none of them has a version {label}",
                    lambda c: (
                        _opens_with(intent.version_parts, c)
                        if (c.family or c.id) in opened
                        else version_matches(intent.version_parts, c)
                        or bool(said and said.search(c.name) and (c.family or c.id) not in labelled)
                    ),
                )
            )
    if intent.version_letter and any(_lettered(c, intent.version_letter) for c in cards):
        steps.append(
            (
                f"none of them is version {intent.version_letter.upper()}",
                lambda c: _lettered(c, intent.version_letter),
            )
        )
    written = squash(intent.text[slice(*intent.version_span)]) if intent.version_span else ""
    if re.search(r"\d[a-z]$", written) and not re.match(r"[-_.]\w", intent.text[intent.version_span[1] :]):
        # a release letter said with the number picks that release over its siblings ("v1.2R", not "v1.2"); a
        # number alone fits every label that has it ("v3.0" and "v3.0 (for waifu VAEs)")
        whole = {c.family or c.id for c in cards if squash(str(c.version or "")) == written}
        if whole:
            steps.append(
                (
                    f"none of them is labelled {written}",
                    lambda c: (c.family or c.id) not in whole or squash(str(c.version or "")) == written,
                )
            )
    elif re.search(r"\d$", written):
        # and a number alone picks the release of a model labelled as it is written over those that add a letter or
        # write it otherwise ("v1.0", not "v.1.0b" or "V01")
        plain = {c.family or c.id for c in cards if squash(str(c.version or "")) == written}
        otherwise = {
            c.id
            for c in cards
            if (c.family or c.id) in plain
            and squash(str(c.version or "")) != written
            # a number written otherwise, not "v1.5 (for wd vae)" or "v1.1-17100"
            and re.fullmatch(r"(?i)v?\.?\d+(?:\.\d+)*[a-z]?", str(c.version or "").strip())
        }
        if otherwise:
            as_said = intent.text[slice(*intent.version_span)]
            steps.append((f"none of them is labelled {as_said}", lambda c: c.id not in otherwise))
    if created:
        label = " or ".join(dict.fromkeys(w.label.split()[0] if len(created) > 2 else w.label for w in created))
        steps.append(
            (f"none of them was created in {label}", lambda c: any(w.contains(c.created_at) for w in created))
        )
    if intent.used:
        label = " or ".join(w.label for w in intent.used)
        steps.append(
            (f"none of them was used {label}", lambda c: any(w.contains(c.last_used_at) for w in intent.used))
        )
    for number, unit in intent.quantities:
        forms = {number, number + unit, number + unit + "s"}
        steps.append(
            (
                f"none of them is the {number} {unit} one",
                lambda c, forms=forms, number=number: bool(forms & _file_words(c)) or _carries(c, number),
            )
        )
    # "the 1024 one": a number said of a version, where some candidate's label carries it
    for number in sorted(w for w in intent.version_words if w.isdigit()):
        if any(_carries(c, number) for c in cards):
            steps.append((f"none of them is the {number} one", lambda c, number=number: _carries(c, number)))
    for name, number in intent.numbered:
        shape = re.compile(rf"(?<![^\W_]){re.escape(name)}[-_ ]?0*(\d+)(?!\d)", re.I)
        if any(shape.search(text) for c in cards for text in _file_texts(c)):  # the model numbers its files so
            steps.append(
                (
                    f"none of them is {name}-{number}",
                    lambda c, shape=shape, number=number.lstrip("0") or "0": any(
                        m.group(1) == number for text in _file_texts(c) for m in shape.finditer(text)
                    ),
                )
            )
    bases = set(intent.base_models)
    if bases:
        steps.append(
            (
                f"none of them is for {' or '.join(sorted(bases))}",
                lambda c: any(c.base_model.startswith(b) for b in bases),
            )
        )
    return steps


def _leaders(
    candidates: list[Ranked],
    best: float,
    ratio: float,
    unique_word: float,
    reference: Reference,
    versioned: frozenset[str] = frozenset(),
    chosen: bool = False,
) -> list[Ranked]:
    """The candidates within ``ratio`` of the best, less those another leader outdoes on what names them
    (the words of ``reference``'s phrase; for versions, the words that may name one). A request that ``chosen`` its
    version by date, order or number ("the newest version - a pilot on a hangar deck") is not overruled by the
    picture's words in one version's trigger ("in a viper pilot suit")."""
    phrase, naming, words = reference.phrase, reference.naming, reference.words
    leading = [r for r in candidates if r.total >= ratio * best]
    # the picture's words do not name: past where it begins in the name's clause ("iono livestreaming from her
    # gym": "gym" in one Iono's tags), or in a clause of its own ("quan avatar style v2, profile pic of a boy");
    # words said of the version do ("athena asamiya, the kof 97 one")
    clauses = {reference.clauses[k] for k in phrase}
    naming_words = {
        k for k in range(len(words)) if reference.clauses[k] in clauses or words[k].forms[0] in versioned
    } - reference.after_scene_opens()
    if phrase and leading and leading[0].coverage >= FULL_COVERAGE and leading[0].own == 0.0:
        # another model that has every naming word the leader has leads too, though a name spelled out whole, or
        # the scene's words in its tags ("iono livestreaming from her gym"), score higher ("toph" of "Toph V1" and
        # of "Toph Beifong / Avatar": one character by two creators)
        led = {r.card.id for r in leading}
        leading += [
            r
            for r in candidates
            if r.coverage >= FULL_COVERAGE
            and r.own == 0.0
            and r.matched & naming_words >= leading[0].matched & naming_words
            and r.card.id not in led
        ]
    # a model whose whole name is spelled out outdoes another model's near spelling of it ("dark dungeon" is not
    # "Darkest Dungeon style"), or the same words scattered over a long trigger list ("star buterfly" is not a
    # Quintuplets LoRA's "star hair ornament, ..., butterfly")
    # (or has in two of its titles what the spelled one has in one: "stocking anarchy" is not "Panty Anarchy (Panty &
    # Stocking ...)")
    spelled = [r for r in leading if r.spelled and r.coverage >= FULL_COVERAGE]
    if spelled:
        written = spelled[0].exact & phrase
        said = [words[k] for k in written]
        titled = [r for r in spelled if _one_title_has(r.card, said)]
        families = {r.card.family or r.card.id for r in titled or spelled}
        leading = [
            r
            for r in leading
            if (r.card.family or r.card.id) in families
            or (
                written <= r.exact
                and r.coverage >= SCATTERED_COVERAGE
                and (not titled or _one_title_has(r.card, said, style_trained=False))
            )
        ]
    # a leader that matched only part of the words naming another leader's match is not the one meant
    # ("the half-assed lora that does ice sculptures": the vol. 2 "sculpture" version lacks "ice")
    named = {r.matched & phrase for r in leading}
    outdone = {found for found in named if any(found < other for other in named)}
    leading = [r for r in leading if r.matched & phrase not in outdone]
    # inside one model, the versions with the most version evidence push their siblings out, and among
    # those, the ones whose version label says it ("v3.0-ming" over a v3.0 listing "ming style" in its triggers)
    margin = OWN_MARGIN * unique_word
    families: dict[str, list[Ranked]] = defaultdict(list)
    for r in leading:
        families[r.card.family or r.card.id].append(r)
    own = {r.card.id: 0.0 if chosen and phrase and not r.owned & naming_words else r.own for r in leading}
    kept: set[str] = set()
    for members in families.values():
        most_own = max(own[r.card.id] for r in members)
        if most_own >= margin:
            members = [r for r in members if own[r.card.id] >= most_own - 1e-9]
        label_words = _labelled_words(members, words, lambda k: k in naming)
        if len(set(label_words.values())) == 1 and versioned:  # a tie: "the wood carving version" may still say
            label_words = _labelled_words(members, words, lambda k: words[k].forms[0] in versioned)
        most_labelled = max(label_words.values())
        kept.update(cid for cid, n in label_words.items() if n == most_labelled)
    leading = [r for r in leading if r.card.id in kept]
    if versioned:  # "a-mecha musume, the REN version": across models too, the labels that say the version's words
        said = _labelled_words(leading, words, lambda k: words[k].forms[0] in versioned)
        kinds = versioned & KIND_WORDS
        if kinds and len(set(said.values())) == 1:  # a kind the name says too ("LoRA & LoCon": its "V1.0_LoCon")
            said = {r.card.id: len(kinds & field_tokens(str(r.card.version or ""))) for r in leading}
        most_said = max(said.values(), default=0)
        leading = [r for r in leading if said[r.card.id] == most_said]
    return leading


def _labelled_words(members: list[Ranked], words: list, counted: Callable[[int], bool]) -> dict[str, int]:
    """Per candidate, how many distinct request words (those ``counted``) its version label alone has."""
    return {r.card.id: len({words[k].forms[0] for k in r.labelled if counted(k)}) for r in members}


_NEGATION = re.compile(r"(?i)\b(?:not|no|without|never)\b|n't\b")


def _negated(text: str, at: int) -> bool:
    """Is there a negation earlier in the clause of ``at`` ("the lora, not the TI"), not a Japanese "no" inside a
    name ("Elaina (Majo No Tabitabi) - LoRA")?"""
    start = max(text.rfind(mark, 0, at) for mark in ",;.!?") + 1
    return any(not inside_name(text, m.start()) for m in _NEGATION.finditer(text, start, at))


def kinds_named(text: str) -> tuple[set[str], set[str]]:
    """The kinds of checkpoint ``text`` asks for and those it rules out: "the embedding" asks for a textual
    inversion, "the lora, not the TI" for a LoRA and not a textual inversion."""
    wanted, refused = set(), set()
    for kind, words in (("textual_inversion", _TI_WORDS), ("lora", _LORA_WORDS)):
        for match in words.finditer(text):
            (refused if _negated(text, match.start()) else wanted).add(kind)
    return wanted - refused, refused


def _prefer_kind(intent: Intent, pool: list[Ranked]) -> list[Ranked]:
    """ "the embedding" / "the lora, not the TI": the leaders of the kind asked for (or not of a kind ruled out), when
    some are."""
    wanted, refused = kinds_named(intent.kinds_said)
    if not wanted and not refused:
        return pool
    kept = [r for r in pool if (r.card.kind in wanted if wanted else r.card.kind not in refused)]
    return kept or pool


_WRITTEN_JOINED = re.compile(r"[^\W_]+(?:[_-][^\W_]+)+")  # a word written with its joins, as trained words are


def _prefer_trained_word(intent: Intent, pool: list[Ranked]) -> list[Ranked]:
    """ "corneo_dva": the leaders trained on a word the request writes whole with its joins, when some are and others
    are not ("corneo_black_cat_dva" of the same maker's Black Cat D.va)."""
    written = {squash(m.group()) for m in _WRITTEN_JOINED.finditer(intent.text) if not is_english(squash(m.group()))}
    # not a word the models' names say ("the ink-free embedding" of "Style Ink Free" with one version's "Ink-Free")
    written = {w for w in written if not any(w in squash(model_name(r.card)) for r in pool)}
    if not written:
        return pool
    kept = [r for r in pool if written.intersection(squash(t) for t in r.card.triggers)]
    return kept or pool


def _prefer_written_as_is(intent: Intent, pool: list[Ranked]) -> list[Ranked]:
    """ "tfm_midna", "genshin_yae": the leaders one of whose trained words, name or label is a word the request
    writes with its joins exactly so, when the others only share its letters ("tfmmidna", "miko_genshin")."""
    written = {fold(m.group()) for m in _WRITTEN_JOINED.finditer(intent.part_text or intent.text)}
    if not written:
        return pool

    def calls(card: StoredCheckpoint) -> set[str]:
        texts = [t for trigger in card.triggers for t in trigger.split(",")]
        return {fold(t.strip()) for t in (*texts, model_name(card), unlabelled_name(card), str(card.version or ""))}

    kept = [r for r in pool if written & calls(r.card)]
    # not where another's call goes on from it ("asian-less" of "Asian-Less-Toon") or another's name says it
    # ("senko-san" of "Shiro (Sewayaki kitsune no Senko-san)"): then it names the model, or what both are of
    others = [r.card for r in pool if r not in kept]
    if any(c.startswith(w) for card in others for c in calls(card) for w in written) or any(
        re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", fold(card.name)) for card in others for w in written
    ):
        return pool
    return kept if 0 < len(kept) < len(pool) else pool


def _prefer_style(intent: Intent, pool: list[Ranked]) -> list[Ranked]:
    """ "my anime kale painting", "my newest pixel art dog": the leaders of the style named, when some have it.

    A style word is weak evidence of which model (hundreds share "anime"), but among the leaders it is what
    tells them apart, so it narrows them instead of only adding to their scores.
    """
    if not intent.styles:
        return pool
    wanted = set(intent.styles)
    kept = [r for r in pool if wanted & features(r.card).styles]
    return kept or pool


def _prefer_style_model(reference: Reference, pool: list[Ranked]) -> list[Ranked]:
    """ "lykons botw style": a name said with "style" asks for the style model, when the other leaders are characters
    ("Link (Blue Tunic - Breath of the Wild)", by the same maker)."""
    words = reference.words
    said = any(
        k - 1 in reference.phrase
        and words[k].forms[0] in STYLE_WORDS
        and words[k - 1].position + 1 == words[k].position
        for k in range(1, len(words))
    )
    if not said:
        return pool
    styles = [r for r in pool if is_style(r.card)]
    # only a style against characters: "blade runner 2049 style" may be a film's style or its stills
    others_characters = all(is_character(r.card) for r in pool if r not in styles)
    return styles if styles and others_characters else pool


def _by_order(intent: Intent, cards: list[StoredCheckpoint]) -> list[StoredCheckpoint]:
    """ "the latest version", "the newest", "the first one": the extreme of what remains."""
    if intent.version_order:
        cards = [max(cards, key=lambda c: (parse_version(c.version).parts, c.created_at))]
    if intent.order:
        pick = max if intent.order == "newest" else min
        cards = [pick(cards, key=lambda c: c.created_at)]
    return cards


def _what(ranking: Ranking) -> str:
    reference = ranking.reference
    if reference.phrase:
        return reference.written(reference.phrase)
    return " ".join(dict.fromkeys(w.forms[0] for w in reference.words[:3])) or "that"


def _series_reason(ranking: Ranking, from_series: list[StoredCheckpoint]) -> str:
    """ "No Ezio; from Assassin's Creed there is Altaïr v2.": what the series has, when the character is not there."""
    reference = ranking.reference
    head, series = reference.written(reference.head), reference.written(reference.series)
    names = list(dict.fromkeys(c.name for c in from_series))
    listed = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"No {head} in the repository; from {series} there is {listed}."


_TITLE_ROLE = frozenset("main title protagonist lead".split())  # the one a series is named after


def _titled(card: StoredCheckpoint, series_words: set[str]) -> bool:
    """Is the series named after the card's character: is its name's first word a word of the series?"""
    opening = words_in(model_name(card))[:1]
    return bool(opening) and opening[0] in series_words


def _role_in_series(intent: Intent, ranking: Ranking) -> Decision:
    """ "the singer from one piece film red", "the girl from inside out": who is said only by a role, so every
    model of the series fits, those whose cards say the role's words first; one model is the pick, several a
    question, none after the constraints no match."""
    reference = ranking.reference
    # any field says the series, the description included: "Little Megumin's sister Komekko"
    pool = [r for r in ranking.candidates if r.of_series or r.series >= MIN_COVERAGE]
    most = max((r.series for r in pool), default=0.0)
    pool = [r for r in pool if r.series >= most - 1e-9]  # all of the series: "inside out", not "inside" alone
    head = min(reference.head, default=0)
    owner = {k for k in reference.series if k < head}
    if owner and reference.words[max(reference.head)].forms[0] in RELATION_NOUNS:
        # "megumin's little sister", "vegeta's daughter from GT": not a model named after the owner
        others = [r for r in pool if not _named_after(r.card, [reference.words[k] for k in owner])]
        if not others:
            who, of = reference.written(reference.head), reference.written(owner)
            reason = f"No {who} of {of} in the repository; there is only {of}."
            return Decision("no_match", [], reason, [r.card for r in pool[:3]])
        pool = others
    steps = constraints(intent, [r.card for r in pool])
    kept = _constrained(pool, steps, ranking, 0.0, ranked=False)
    if isinstance(kept, Decision):
        return kept
    pool = [r for r in kept if r.of_series] or kept  # a series its name or tags say over one a description says
    if reference.makers:  # "the sialiasialis soldier from dq3": who made it narrows first
        pool = [r for r in pool if r.strong > 0] or pool
    # the words said of the role narrow next ("the android girl": "android"), then the role itself ("girl")
    words = reference.words
    said = {k for k in reference.head if words[k].forms[0] not in ROLE_NOUNS}
    # "someone" is no one's word, and "one of the ddlc girls" is any of them
    role = {k for k in reference.head - said if words[k].forms[0] not in ANYONE | PLURAL_ROLES}
    for narrowing in (said, role):
        pool = [r for r in pool if r.matched & narrowing] or pool
    if not said and not role:  # "someone from black lagoon: balalaika in her greatcoat": a name said after
        later = set(range(len(words))) - reference.head - reference.series
        pool = [r for r in pool if any(_name_says(r.card, [words[k]]) for k in later)] or pool
        pool = [r for r in pool if any(_triggered(r.card, words[k]) for k in later)] or pool  # its version
    if any(words[k].forms[0] in _TITLE_ROLE for k in reference.head):
        # "the main witch from little witch nobeta": the one the title is named after
        series_words = {form for k in reference.series for form in words[k].forms}
        pool = [r for r in pool if _titled(r.card, series_words)] or pool
    return _pick(intent, ranking, pool)


def _name_says(card: StoredCheckpoint, said: list) -> bool:
    """Does the card's name have every one of the words ``said``?"""
    name = card_fields(card)["name"]
    return all(name.intersection(word.forms) for word in said)


def _triggered(card: StoredCheckpoint, word) -> bool:
    """Is ``word`` one of the card's trained words ("balalaika" of the version that added her)? Of a tag list only
    the identity tag counts: "krul tepes, pink hair, red eyes" does not make "her hair" a name."""
    return bool(set().union(*map(field_tokens, card.prompt_triggers)).intersection(word.forms))


def _named_after(card: StoredCheckpoint, said: list) -> bool:
    """Is the card named after who ``said`` names: does its name open with those words (a character's card opens with
    the character, "Vegeta | Dragon Ball Z"; "Kushina Uzumaki (Naruto)" is not Naruto's, nor "Dexter's Mom"
    Dexter's)?"""
    opening = words_in(card.name)[: len(said)]
    owned = re.match(r"\W*" + r"\W+".join(re.escape(form) for form in opening) + r"['’]s\b", fold(card.name))
    return len(opening) == len(said) and all(form in word.forms for form, word in zip(opening, said)) and not owned


def decide(intent: Intent, ranking: Ranking) -> Decision:
    """Select, clarify or no match from scored candidates (see the module docstring)."""
    if ranking.role_in_series and not ranking.by_time_only:
        return _role_in_series(intent, ranking)
    candidates = _named_candidates(ranking)
    if isinstance(candidates, Decision):
        return candidates
    others = [r for r in candidates if not _someone_else(ranking.reference, r, ranking.unheard)]
    if not others:
        written = ranking.reference.written(ranking.reference.phrase or ranking.reference.head)
        nearest = [r.card for r in candidates[:3]]
        listed = ", ".join(dict.fromkeys(c.name for c in nearest))
        return Decision("no_match", [], f"No {written} in the repository; the nearest are {listed}.", nearest)
    candidates = others
    best = candidates[0].total
    chosen = bool(intent.order or intent.version_order or intent.created or intent.version_parts)
    leaders = (
        _leaders(candidates, best, LEAD_RATIO, ranking.unique_word, ranking.reference, intent.version_words, chosen)
        if not ranking.by_time_only
        else []
    )
    # request words that only a version label has ("heavy", "nai", "strong"): a constraint must not drop them
    labelled = set().union(*(r.labelled for r in leaders))
    if intent.version_parts:  # a version number read as a word of a part ("helena(azur lane) v2 + ...") is a version
        labelled = {k for k in labelled if not VERSION_WORD.match(ranking.reference.words[k].forms[0])}
    steps = constraints(intent, [r.card for r in candidates])
    phrase = [ranking.reference.words[k] for k in ranking.reference.phrase]
    led = {r.card.id for r in leaders}

    def called_by_name(r: Ranked) -> bool:  # read only for a constraint's survivors far behind (a card's fields cost)
        return r.card.id in led and bool(phrase) and _name_says(r.card, phrase)

    candidates = _constrained(candidates, steps, ranking, best, called_by_name, ranked=not ranking.by_time_only)
    if isinstance(candidates, Decision):
        return candidates
    pool = (
        candidates
        if ranking.by_time_only
        else _leaders(
            candidates,
            candidates[0].total,
            LEAD_RATIO,
            ranking.unique_word,
            ranking.reference,
            intent.version_words,
            chosen,
        )
    )
    if not (chosen or intent.version_words):  # a version said picks among what its words name ("the locon one")
        pool += _namesakes(ranking.reference, candidates, pool)
    if steps and labelled - set().union(*(r.matched for r in pool)):
        return Decision(
            "no_match",
            [],
            f"Close candidates exist, but none of them has every version detail you named ({intent.describe()}).",
            [r.card for r in pool[:3]],
        )
    return _pick(intent, ranking, pool)


def _named_candidates(ranking: Ranking) -> list[Ranked] | Decision:
    """The candidates with real evidence of being the one named, or no match (the nearest as alternatives)."""
    candidates = ranking.candidates
    if not ranking.by_time_only:
        if ranking.reference.has_phrase:  # the words that named it must be found
            reference = ranking.reference
            least = MIN_DESCRIBED_COVERAGE if reference.described else MIN_COVERAGE
            if reference.unspaced:
                least = min(least, MIN_UNSPACED_COVERAGE)
            candidates = [r for r in candidates if r.coverage >= least]
        else:  # nothing marked as the name: some identity field must match, tags and descriptions alone do not name
            candidates = [
                r
                for r in candidates
                if r.strong >= MIN_EVIDENCE * ranking.unique_word and not _called_by_the_picture(ranking.reference, r)
            ]
        if not candidates:
            nearest = [r.card for r in ranking.candidates[:3]]
            if ranking.maker_missing:
                reason = f"Close candidates exist, but none of them is by {ranking.maker_missing}."
                return Decision("no_match", [], reason, nearest)
            said = max((r.series for r in ranking.candidates if r.of_series and r.coverage == 0.0), default=0.0)
            series_said = [ranking.reference.words[k].forms[0] for k in ranking.reference.series]
            if all(is_unspaced(form) or form.isdigit() for form in series_said):
                # a few character pairs ("ブル" of "ブルアカ") are in many unrelated names: no card has that series
                said = said if said >= UNSPACED_SERIES_COVERAGE else 0.0
            # the series said whole where some card says it whole: "back to the future", not only its "back"
            from_series = [
                r.card for r in ranking.candidates if r.of_series and r.coverage == 0.0 and 0.0 < said <= r.series
            ]
            if ranking.reference.series and from_series:
                return Decision("no_match", [], _series_reason(ranking, from_series), from_series[:3])
            reference = ranking.reference
            if reference.series and any(reference.words[k].forms[0] in ANYONE for k in reference.head):
                reason = f"No checkpoint from {reference.written(reference.series)} in the repository."
                return Decision("no_match", [], reason, nearest)
            return Decision(
                "no_match", [], f"No checkpoint in the repository is called or about {_what(ranking)}.", nearest
            )
    if not candidates:
        return Decision("no_match", [], "No checkpoint in the repository fits that time.")
    return candidates


def _called_by_the_picture(reference: Reference, candidate: Ranked) -> bool:
    """In a request that names nothing, is ``candidate`` a character called only by English words of the picture,
    each said apart from its other words ("a laundromat at midnight" is no "Midnight [My Hero Academia]")? A character
    is named by a name; a model of what the picture shows may be called by it ("a dog sitting on a sunny beach" of
    a dog model), and words side by side say what a concept draws ("christmas tree ornaments")."""
    if candidate.evidence is None or not is_character(candidate.card):
        return False
    named = set(candidate.evidence.named.get(candidate.position, ()))
    found = {k for k in candidate.matched if reference.words[k].forms[0] not in ROLE_KINDS | KIND_WORDS}
    at = {reference.words[k].position: k for k in found}
    together = any(reference.words[k].position + step in at for k in named for step in (-1, 1))
    return bool(named) and not together and all(is_english(reference.words[k].forms[0]) for k in named)


def _someone_else(reference: Reference, candidate: Ranked, unheard: frozenset[int] = frozenset()) -> bool:
    """Is ``candidate`` called by another name than the request's: a name among the words that name what it wants
    (a word no English text uses) that the candidate lacks, and one in the candidate's own name outside brackets that
    the request lacks ("sasuke uchiha" is not "ItachiUchiha style", nor "colette brunel tales of symphonia" "Presea
    Combatir (Tales of Symphonia)": a surname or the series they share does not make them one)? A word near another
    ("hukee", "Huke"; "konyconis", "konyconi") is the same word. One that has none of the naming words is found by
    other words, and so is one that has only the last word of a thing's two-word name (:func:`_another_compound`).
    A name among the ``unheard`` words, which no card has at all, is another character's (a style's name may hold a
    rare word of the picture: "hedcut stippled portrait")."""
    naming = reference.phrase or reference.head
    if reference.described:
        return False  # a description paraphrases ("the lora for cute little chibi trains")
    if _another_compound(reference, candidate):
        return True
    names = [k for k in naming - candidate.matched if _a_name(reference.words[k].forms[0])]
    if not names:
        return False
    card = candidate.card
    own = [w for w in words_in(_BRACKETED.sub(" ", model_name(card))) if _a_name(w)]
    called = own + words_in(card.creator or "")
    names = [k for k in names if not _near_any(reference.words[k].forms[0], called)]
    if names:  # a title it goes by in initials is its name too: "izuna from ngnl"
        shortened = _shortened_titles(card)
        names = [k for k in names if reference.words[k].forms[0] not in shortened]
    if not names:
        return False
    if unheard.intersection(names) and is_character(card):
        return True  # a name no card has heard of: "nikke privaty" is no other Nikke, "kurokawa akane" no other Akane
    if not naming & candidate.matched:
        return True  # none of the naming words: found by the picture's ("... with angel wings out")
    if not any({k - 1, k + 1} & candidate.matched for k in names):
        return False  # a name beside one it has is the rest of its name; one further off may be the scene's
    said = [form for word in reference.words for form in word.forms]
    return any(not _near_any(w, said) for w in own)


def _shortened_titles(card: StoredCheckpoint) -> set[str]:
    """The acronyms and initials a card's titles go by ("ngnl" of "Hatsuse Izuna | No Game No Life")."""
    texts = (model_name(card), *card.triggers, *card.subjects, *card.tags)
    return titles.written(texts) | titles.initials(texts)


def _another_compound(reference: Reference, candidate: Ranked) -> bool:
    """Does ``candidate`` have, of the whole request, only the last word of a marked two-word name, after another word
    of its own ("snow globe lora" is not a trained "celestial globe")?"""
    phrase = sorted(k for k in reference.phrase if reference.words[k].forms[0] not in STOPWORDS)
    if len(phrase) != 2 or phrase[1] - phrase[0] != 1 or candidate.matched & set(phrase) != {phrase[1]}:
        return False
    head = reference.words[phrase[1]].forms[0]
    if any(reference.words[k].forms[0] not in {*KIND_WORDS, head} for k in candidate.matched):
        return False  # found by more of the request than that word ("passenger seat ... girl ... car")
    modifier = reference.words[phrase[0]]
    if not (is_english(modifier.forms[0]) and is_english(head)):
        return False  # a thing's name in plain words; a name of its own is read by _someone_else
    card = candidate.card
    for text in (*titles.segments(model_name(card)), *card.triggers):
        found = words_in(text)
        for i, word in enumerate(found[1:], 1):
            before = found[i - 1]
            if word == head and before.isalpha() and before not in {*modifier.forms, *STOPWORDS, *KIND_WORDS}:
                return True
    return False


def _near_any(word: str, others: Iterable[str]) -> bool:
    return any(fuzz.ratio(word, other) >= NEAR_NAME for other in others)


@functools.lru_cache(maxsize=65536)
def _a_name(word: str) -> bool:
    """Is ``word`` a name: Latin letters no English text uses ("sasuke", "presea"; not "girl", nor "lora" and its typos
    "embeding")?"""
    if len(word) < 3 or not word.isascii() or not word.isalpha() or is_english(word):
        return False
    return not _near_any(word, KIND_WORDS)


def _namesakes(reference: Reference, candidates: list[Ranked], pool: list[Ranked]) -> list[Ranked]:
    """Other models called by the words that name the one leading model, however far behind: one character or concept
    by two creators fits twice ("iroha from samurai shodown": "Iroha (Samurai Shodown)" and "Iroha (samurai spirits)";
    "erza scarlet": her own LoRA and a girl pack that lists her), though the series as one creator wrote it or a word
    of the scene in one's tags scores one higher. The naming words are the phrase that names the model, else the
    words the request opens with: the namesake says them in one of its names as written ("Colorful Flat Illustration
    mix" is no "colorful mix"), and has any other word the leader is called by ("rin tohsaka in the kaleido ruby
    outfit"); a series said must be its series too, and then a part of the name is enough for a model called by
    nothing else ("mikan" of "mikan yuuki from to love-ru")."""
    if len({r.card.family or r.card.id for r in pool}) != 1:
        return []
    leader = pool[0]
    if reference.makers:  # "top view perspective lora by antonio_riolo2610": who made it is said, theirs are apart
        candidates = [r for r in candidates if any(maker_made(maker, r.card) for maker in reference.makers)]
    naming = {k for k in reference.phrase or reference.head if reference.words[k].forms[0] not in STOPWORDS}
    # the series follows who is from it ("iroha from samurai shodown"); a name that opens with it is all name
    first = min(naming - reference.series, default=len(reference.words))
    series = {k for k in reference.series if k > first} & naming
    named_at = leader.exact & (naming - series)
    if not named_at or any(len(r.exact & naming) > len(leader.exact & naming) for r in candidates):
        return []  # another has more of the name as written than the leader: the one meant is not plain
    # other words the leader is called by ("kaleido ruby" in its trained word) tell it apart from one that lacks them
    called = {k for k in leader.exact - series - named_at if _called_by(leader.card, reference.words[k].forms[0])}
    named = [reference.words[k] for k in sorted(named_at)]
    if len(named) == 1 and is_english(named[0].forms[0]) and not series:
        return []  # one plain word ("chair") calls many things that are not one another's namesakes
    least = MIN_COVERAGE if reference.phrase else 0.0
    said = {form for word in reference.words for form in word.forms}
    whole = squash(model_name(leader.card)) == "".join(w.forms[0] for w in named)  # its whole name, as said
    found = []
    for r in candidates:
        if (r.card.family or r.card.id) == (leader.card.family or leader.card.id) or r.coverage < least:
            continue
        if not called <= r.matched or (series and not r.matched & series):
            continue
        has = named if named_at <= r.exact else []
        if not has and series and named_at & r.exact:
            # "mikan(To Love Ru)" of "mikan yuuki from to love-ru": the series' model called by a part of the name,
            # and by nothing the request does not say
            own = [  # in Latin letters: "mikan / みかん" beside it is the same name in kana
                w
                for w in words_in(_BRACKETED.sub(" ", model_name(r.card)))
                if w.isascii() and w not in STOPWORDS | KIND_WORDS
            ]
            has = [reference.words[k] for k in sorted(named_at & r.exact)] if own and set(own) <= said else []
        texts = _calling_texts(r.card, tagged=len(has) > 1)
        if whole:  # "smol lora": the leader's whole name is no namesake of "Disgaea Style v1.0-Smol"
            texts = [t for t in texts if t != str(r.card.version or "")]
        if has and any(
            _says_in_order(text, has) or _says_in_order(text, has[::-1])  # "Kinomoto Sakura": family name first
            for text in texts
        ):
            found.append(r)
    return found


_BRACKETED = re.compile(r"[\[(（【][^\])）】]*[\])）】]")


def _calling_texts(card: StoredCheckpoint, tagged: bool = False) -> list[str]:
    """What a model is called by: the titles of its name outside brackets (a bracket often says its series, "SXZ
    Goblins [ Warcraft ]" is not called "Warcraft"), its version label, the trained words of a model that is not a
    style (see :func:`_one_title_has`; of a character's, those that say a name, the others being its outfit) and,
    when ``tagged``, the tags of a character model (a pack's tags name its
    characters, "erza scarlet"; a tag of one word is as often its series)."""
    texts = [*titles.segments(_BRACKETED.sub(" | ", model_name(card))), str(card.version or "")]
    if not is_style(card):  # of a tag list its identity tag: "sleeves rolled up" in Ranma's outfit tags is no name
        trained = card.prompt_triggers
        if is_character(card) and len(trained) > 1:  # "nijou aki", then her outfit: "labcoat", "open coat"
            name = field_tokens(model_name(card))
            trained = (
                [
                    t
                    for t in trained
                    if field_tokens(t) & name or any(map(_a_name, words_in(t)))  # "daidouji_tomoyo"
                ]
                or trained[:1]
            )
        texts += trained
    if tagged and is_character(card):
        texts += card.tags
    return texts


def _says_in_order(text: str, said: list[QueryWord]) -> bool:
    """Does ``text`` say the request's words ``said`` as written and in their order: the one word, or each word after
    the one before with at most one word between ("aether foundation employee" of "Pokemon - Aether Foundation Employee
    Female")?"""
    if len(said) == 1:
        return bool(field_tokens(text).intersection(said[0].forms))
    found = words_in(text)
    at = -1
    for word in said:
        following = [
            i for i in range(at + 1, min(len(found), at + 3) if at >= 0 else len(found)) if found[i] in word.forms
        ]
        if not following:
            return False
        at = following[0]
    return True


def _one_title_has(card: StoredCheckpoint, said: list, style_trained: bool = True) -> bool:
    """Does one title of ``card``'s name (or a trained word) have every word ``said``? Without ``style_trained`` a
    style's trained words do not count: they name what it was trained on (the One Piece style's "roronoa zoro" is no
    Zoro LoRA)."""
    trained = card.triggers if style_trained or not is_style(card) else []
    texts = [*titles.segments(model_name(card)), *trained]
    return any(all(field_tokens(text).intersection(word.forms) for word in said) for text in texts)


def _called_by(card: StoredCheckpoint, word: str) -> bool:
    """Does ``card``'s name, version label or a trained word have ``word``? (Its text is searched first: a dated
    request's candidates may be thousands.)"""
    word = word.casefold()
    texts = [card.name, str(card.version or ""), *card.triggers]
    if not any(word in text.casefold() for text in texts):
        return False
    return any(word in field_tokens(text) for text in texts)


def _constrained(
    candidates: list[Ranked],
    steps: list[tuple[str, Callable[[StoredCheckpoint], bool]]],
    ranking: Ranking,
    best: float,
    leader: Callable[[Ranked], bool] = lambda r: False,
    ranked: bool = True,
) -> list[Ranked] | Decision:
    """The candidates every hard constraint keeps, applied in order, or no match with the first that kept none.
    A ``leader`` (one that led before any constraint and is called by the name said, a second creator's model of the
    same name) stays however far behind the best it scored. Candidates that are not ``ranked`` against one another
    (found by time alone, or a role's series) are kept by the constraints alone."""
    naming = ranking.reference.naming
    for reason, keep in steps:
        survivors = [r for r in candidates if keep(r.card)]
        if ranked:
            # what a constraint leaves must still be close to the best, and must not be named by only part
            # of the words that named the best ("gaslamp fantasy, the april one" is not any April "fantasy")
            named = candidates[0].matched & naming
            survivors = [
                r
                for r in survivors
                if (r.total >= CONSTRAINED_RATIO * best or leader(r)) and not (r.matched & naming) < named
            ]
        if not survivors:
            nearest = [r.card for r in candidates[:3]]
            return Decision("no_match", [], f"Close candidates exist, but {reason}.", nearest)
        candidates = survivors
    return candidates


def _pick(intent: Intent, ranking: Ranking, pool: list[Ranked]) -> Decision:
    """Among the leaders: the kind and style named, the one used last, the recency words; one left is selected,
    several are a question."""
    # "okabe as a lora, not the embedding": every leader an embedding is no match ("not the lora" may still be a
    # LoCon, which is a LoRA file too)
    if "textual_inversion" in kinds_named(intent.kinds_said)[1] and all(
        r.card.kind == "textual_inversion" for r in pool
    ):
        reason = "Close candidates exist, but every one is an embedding."
        return Decision("no_match", [], reason, [r.card for r in pool[:3]])
    pool = _prefer_style_model(ranking.reference, _prefer_style(intent, _prefer_kind(intent, pool)))
    pool = _prefer_written_as_is(intent, _prefer_trained_word(intent, pool))
    # "the one without the hat": the leaders that say so ("Elaina [No Hat]"), when some do
    pool = [r for r in pool if any(_says_without(r.card, w) for w in intent.excluded)] or pool
    cards = [r.card for r in pool]
    if intent.used_order:
        used = [c for c in cards if c.last_used_at]
        cards = [max(used, key=lambda c: c.last_used_at)] if used else cards
    cards = _by_order(intent, cards)
    if len(cards) > 1 and len({c.family or c.id for c in cards}) == 1:  # versions of one model
        cards = _labels_written(intent.text, cards) or cards
        if len(cards) > 1 and cards[0].description:
            # what its description says of each may be what the request picks by
            talked = bool(intent.talk_spans) or "版" in intent.text or "バージョン" in intent.text
            cards = by_notes(intent.text, cards, cards[0].description, model_name(cards[0]), talked)
    if len(cards) == 1:
        return Decision("selected", cards)
    return Decision("clarify", cards, f"{len(cards)} checkpoints fit: {intent.describe() or _what(ranking)}")


def _label_form(text: str) -> str:
    """A label as compared with what a request writes: small letters, single spaces, a dash between spaces, no "v"
    before its number."""
    spaced = re.sub(r"\s*-\s*", " - ", text.casefold())  # "2.1-1.1" as "2.1 - 1.1"
    return re.sub(r"(?<![^\W\d_])v(?=\d)", "", " ".join(spaced.split()))


def _told_apart(label: str) -> bool:
    """Is a version label more than one number: two numbers ("2.1 - 1.1") or a number and a word said apart ("v1.0
    (Fix)"; "InkPunk768" is the model's name as its file)?"""
    numbers = re.findall(r"\d+(?:\.\d+)*", label)
    worded = " " in label.strip() and re.search(r"(?<![\w.])[^\W\d_]{2,}", label) is not None
    return len(numbers) >= 2 or (len(numbers) == 1 and worded)


def _labels_written(text: str, cards: list[StoredCheckpoint]) -> list[StoredCheckpoint] | None:
    """The versions among ``cards`` whose label of two numbers, or of a number and a word, the request writes out whole
    ("the 2.1 - 1.1 update" of "2.1 - 1.1" beside "2.1 - 1.0", which the version number read alone takes as "2.1";
    "v1.0 (Fix)" beside "v1.0"), unless that is all; a label of one number is the version number's to read (see
    :func:`constraints`: "v1.2" is the plain release beside "v1.2R")."""
    said = _label_form(text)
    written = [
        c
        for c in cards
        if c.version
        and _told_apart(c.version)
        and re.search(rf"(?<![\w.]){re.escape(_label_form(c.version))}(?!\w|\.\d)", said)
    ]
    return written if 0 < len(written) < len(cards) else None


def narrow(intent: Intent, ranking: Ranking) -> Decision:
    """A clarification answer among the remaining candidates: the best-supported ones, then the constraints
    and recency words; no evidence and no constraint is no match (the caller asks again)."""
    candidates = ranking.candidates
    scored = [r for r in candidates if r.total > 0]
    steps = constraints(intent, [r.card for r in candidates])
    ordered = intent.order or intent.version_order or intent.used_order
    if not scored and not steps and not ordered and not any(kinds_named(intent.kinds_said)):
        return Decision("no_match", [r.card for r in candidates], "The answer fits none of the options.")
    if scored:
        best = max(r.total for r in scored)
        candidates = [r for r in scored if r.total >= best - 1e-9]
        most_own = max(r.own for r in candidates)
        candidates = [r for r in candidates if r.own >= most_own - 1e-9]
    for _, keep in steps:
        survivors = [r for r in candidates if keep(r.card)]
        if survivors:
            candidates = survivors
    cards = _by_order(intent, [r.card for r in _prefer_kind(intent, candidates)])
    return Decision("selected" if len(cards) == 1 else "clarify", cards)


__all__ = ["Decision", "constraints", "decide", "features", "kinds_named", "narrow", "rank", "version_matches"]
