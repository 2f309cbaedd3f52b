"""Selection evidence: how strongly a request's words point at each checkpoint, field by field.

A fielded, BM25-style score kept in memory for the whole repository (rebuilt when its card revision moves).
Every card field is tokenized (:mod:`personalq.checkin.tokens`) and weighted by what it says about identity:
the model's name, its creator, its version label and trigger words are strong evidence; tags, subjects and
styles weaker; description words weakest, since real descriptions are long and mostly about what the model
draws. Each token's weight is its inverse family frequency, so "style" or "girl", which hundreds of families
share, add little, while "teaclolormix" or "konyconi" decide. Each request word counts once per card, at its
best field; words a person misspells or runs together still meet the name (typo-tolerant and squashed matches).

Scores are split in two. *Family* evidence is what every version of a model shares (its name, creator,
tags, description); *own* evidence is what only some versions have (a version label, a trigger word, the
words of a name that its siblings lack). Family evidence decides which models a request names; own evidence
decides which of their versions.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA

from personalq.checkin import titles
from personalq.checkin.aliases import description_aliases
from personalq.checkin.roles import ROLE_KINDS
from personalq.checkin.tokens import (
    field_tokens,
    is_coined,
    is_english,
    is_english_pair,
    is_unspaced,
    short_vowels,
    squash,
    words,
)
from personalq.repository.card import StoredCheckpoint
from personalq.repository.importers.civitai import CIVITAI_FAMILY
from personalq.repository.weights_name import weights_name

# how much a match in each field says about which checkpoint is meant
FIELD_WEIGHTS = {
    "name": 1.0,
    "creator": 1.0,
    "trigger": 0.9,
    "version": 0.9,
    "alias": 0.9,
    "subject": 0.6,
    "tag": 0.5,
    "style": 0.4,
    "description": 0.2,
}
# fields whose differences between versions tell the versions apart
VERSION_FIELDS = ("name", "version", "trigger")
FUZZY_MIN_LENGTH = 5
FUZZY_MIN_RATIO = 83.0
FUZZY_SURE_RATIO = 84.0
FUZZY_OTHER_START_RATIO = 90.0  # a near spelling that does not start with the same letter
PREFIX_MIN_LENGTH = 4
PREFIX_SIMILARITY = 0.75
HEARD_SIMILARITY = 0.8  # of a near spelling, for a word to be a misspelling of it rather than another name
LONG_VOWEL_SIMILARITY = 0.75  # "kozuki" of "Kouzuki": the same name, yet one written as said counts more
STRONG_FIELD = FIELD_WEIGHTS["subject"]  # fields at least this strong say who a checkpoint is
MAX_JOINED = 3  # "gost busters" -> "gostbusters"
_ALIASES = re.compile(r"\s*/\s*")  # between the names a card gives one model in several languages
LONE_TITLE_LETTERS = 6  # a one-word title inside a name this long or longer names the model ("ghostdom")
MENTION_BONUS = 4.0  # a whole model name or version label spelled out in the request
MISSPELT_STARTS = 8  # phrase words a misspelt name may start at: a name is said early, and each is a fuzzy search
SPELLED_TITLE_MODELS = 3  # a title inside names spells a model when no more models than this have it
OPENING_TITLE_LETTERS = 6  # a shorter title a name opens with is too often a common word ("Night")
OWN_WORD_FAMILIES = 2  # the most models whose fields may say a trained word that names its own model anywhere
RARE_NAME_WORD = 0.5  # of the rarest word's idf: a word of a name this rare is no common word of a picture
INITIALS_RARITY = 0.5  # of the rarest word's idf: a request word this rare may be a title's initials ("mha")
# of a word another card is named by, what finding only a piece of it ("45" of "ump45") or only its creator's
# name ("yunyun" made other models than Yunyun) covers
PART_SHARE = 0.5
ROLE_SHARE = 0.25  # of a role word's weight in a phrase's coverage, beside words that say which model
# the title a name ends with right after its number in a series ("XSarchitectural-21Futuretechnologycity",
# "XSArchi_108Siza", "XSarchitectural-6Modern small building"; not "Hair Ornament 3 Red Ribbon")
_NUMBERED_TITLE = re.compile(r"(?<=[-_A-Za-z])\d+([A-Za-z][A-Za-z -]*)$")
_FILE_EXTENSION = re.compile(r"(?i)\.(?:safetensors|ckpt|pt|pth|bin)$")
_BARE_VERSION = re.compile(r"^(?:v|ver|version|epoch|e)?\d+[a-z]?$")
_JOINED = re.compile(r"[^\W_][-_][^\W_]")  # a token whose words a hyphen or an underscore joins ("hk-clouds")
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z])(?=[A-Z])")  # where a word written in CamelCase begins the next one
# a version mark a name ends with besides its label: "TwelveDolllikeness_V1", "Asuka-v2"
_TRAILING_VERSION = re.compile(r"(?i)(?<=[a-z])[\s_-]+v\d+(?:\.\d+)*$")
# what may stand before a version label that ends a name: "Gold Ship V2.0" of version "2.0"
_LABEL_MARK = re.compile(r"(?i)(?:^|(?<=[\s\-_:(\[]))(?:v|ver\.?|version)$")


def _version_text(card: StoredCheckpoint) -> str:
    return str(card.version or "")


def unlabelled_name(card: StoredCheckpoint) -> str:
    """The name without the version label it ends with ("Gold Ship V2.0" of version "2.0" -> "Gold Ship")."""
    name, version = card.name, _version_text(card).strip()
    if version and len(name) > len(version) and name.lower().endswith(version.lower()):
        name = _LABEL_MARK.sub("", name[: -len(version)].rstrip(" -_:([")).rstrip(" -_:([")
    return name


def model_name(card: StoredCheckpoint) -> str:
    """The name without a trailing version label or mark ("Hanfu 汉服 v3.0-ming" -> "Hanfu 汉服", "Gold Ship V2.0" of
    version "2.0" -> "Gold Ship", "TwelveDolllikeness_V1 v1.0" -> "TwelveDolllikeness") or file extension."""
    name = _TRAILING_VERSION.sub("", unlabelled_name(card))  # "TwelveDolllikeness_V1" of version "v1.0"
    name = _FILE_EXTENSION.sub("", name)  # a card named after its file: "fixHand2lora.safetensors"
    return name or card.name


def card_fields(card: StoredCheckpoint) -> dict[str, set[str]]:
    """Tokens of each field of ``card``; ``alias`` holds the other names its description gives what it draws."""
    name = field_tokens(model_name(card))
    trigger = set().union(*(field_tokens(t) for t in card.triggers)) if card.triggers else set()
    aliases = description_aliases(card.description, name | trigger) if card.description else []
    return {
        "name": name,
        "creator": field_tokens(card.creator or ""),
        "version": field_tokens(_version_text(card)),
        "trigger": trigger,
        "alias": set().union(*(field_tokens(a) for a in aliases)) if aliases else set(),
        "subject": set().union(*(field_tokens(s) for s in card.subjects)) if card.subjects else set(),
        "tag": set().union(*(field_tokens(t) for t in card.tags)) if card.tags else set(),
        "style": set().union(*(field_tokens(s) for s in card.styles)) if card.styles else set(),
        "description": set(words(card.description)),
    }


@dataclass(frozen=True)
class QueryWord:
    """One word of a request: the forms it may stand for ("NiΘ" and "nith"; "TeaMix", "tea" and "mix"), where
    it stands (runs of one text are numbered in order), and how much a match on it counts."""

    forms: tuple[str, ...]
    position: int
    weight: float = 1.0


# the file a WebUI tag loads: "<lora:IcfgirlLora_v40:1>"
_TAGGED_FILE = re.compile(r"<(?:lora|lyco|locon):([^:<>]+)(?::[^<>]*)?>", re.I)


def _sounded(word: QueryWord, form: str) -> bool:
    """Is ``form`` the romanization of the katakana or hangul ``word`` (a character pair) stands in? A sound is
    matched as written: "wakamo" is no typo of "wakame"."""
    return is_unspaced(word.forms[0]) and not is_unspaced(form)


@dataclass
class Evidence:
    """Per-card scores for one request (arrays aligned with :attr:`SelectionIndex.cards`)."""

    family: np.ndarray  # evidence every version of the card's model shares
    own: np.ndarray  # evidence only this version has (name, version label, trigger)
    matched: dict[int, set[int]]  # card index -> positions of the request words it matched
    coverage: np.ndarray  # share of the reference phrase's weight matched, field strength included
    labelled: dict[int, set[int]]  # card index -> request words found in its version label alone
    strong: np.ndarray  # evidence from identity fields only (name, creator, version, trigger, subject)
    named: dict[int, set[int]]  # card index -> positions of the request words found in its identity fields
    owned: dict[int, set[int]]  # card index -> positions of the request words that are its own evidence
    spelled: frozenset[int] = frozenset()  # card indices whose whole name (or a title in it) the request spells
    # request word x card: the word is in the card's identity fields as written (no near spelling)
    exact: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 0), dtype=bool))

    def exact_words(self, card: int) -> frozenset[int]:
        return frozenset(np.flatnonzero(self.exact[:, card]).tolist()) if self.exact.size else frozenset()


def _repeats_name(card: StoredCheckpoint, fields: dict[str, set[str]]) -> bool:
    """A version label that spells the whole model name ("Fantasy Armors" in "Fantasy Armors"): the default."""
    name_words = set(words(model_name(card)))
    return bool(name_words) and name_words <= fields["version"]


# endings that make a word of a place or a thing ("taiwanese", "cyberpunky"); a stem under five letters is often
# another word ("chin" of "chinese")
_DERIVED = re.compile(r"^(?P<stem>[^\W\d_]{5,}?)(?:ese|ish|esque|ic|y)$")


def numbered_titles(name: str) -> set[str]:
    """The title ``name`` ends with right after its number in a series, squashed, alone and with its number
    ("futuretechnologycity" and "21futuretechnologycity" of "XSarchitectural-21Futuretechnologycity"); none for a
    name without one."""
    found = _NUMBERED_TITLE.search(name.strip())
    return {squash(found.group(1)), squash(found.group(0))} if found else set()


def _derived_from(word: str) -> str:
    """The word ``word`` is made from by a derivational ending, or "" ("taiwanese" -> "taiwan")."""
    found = _DERIVED.match(word)
    return found.group("stem") if found else ""


# inflectional endings, and the shortest stem each leaves a word: a verb's "fixed" is "fix", but a name's final "s"
# leaves another name ("jones" is no "jon")
_ENDINGS = (("ing", 3), ("ed", 3), ("es", 4), ("s", 4), ("d", 4))


def _inflected_stems(word: str) -> set[str]:
    """What ``word`` may be without an inflectional ending ("fixed" -> {"fixe", "fix"}, "flames" -> {"flame",
    "flam"}); none for a word under five letters ("tied" is no "ti")."""
    if len(word) < 5 or not word.isascii() or not word.isalpha():
        return set()
    return {word[: -len(end)] for end, least in _ENDINGS if word.endswith(end) and len(word) - len(end) >= least}


def _idf(families: int, having: int) -> float:
    """BM25's inverse document frequency, over models rather than versions."""
    return math.log(1 + (families - having + 0.5) / (having + 0.5))


# little words that stand inside names and that requests' words leave out ("Dark and Light", "Kill la Kill")
_JOINERS = frozenset("a an and the of n in on to de la le du des del von no et y und e".split())
# the words for a kind of file, which many names carry ("[LoRA] ...", "... | Concept"): no typo stands for them
_KIND_TOKENS = frozenset("lora loras locon lycoris lyco loha embedding embeddings model models style styles".split())

_STYLE_AT_END = re.compile(r"(?i)\W*\bstyle\W*$")  # "Elegant hanfu ruqun style": what its name is besides

# a kind word a name opens or ends with ("SurrealismAI LoRA", "[LoRA] Minchen_Lin"), also as a file writes it
# ("GameIconResearch_omkt_Lora")
_KIND_AT_ENDS = re.compile(
    r"(?i)^\W*(?:lora|locon|lycoris|embedding|ti)\b\W*|(?:\W*\b|_)(?:lora|locon|lycoris|embedding)\W*$"
)


class SelectionIndex:
    """Inverted index of card tokens -> (card, weight), split into family-wide and version-own postings."""

    def __init__(self, cards: list[StoredCheckpoint]):
        self.cards = cards
        self.position = {c.id: i for i, c in enumerate(cards)}
        # a Civitai model's first version by its model id, for links to the model's page
        self.by_civitai_model: dict[str, StoredCheckpoint] = {}
        for card in cards:
            if m := CIVITAI_FAMILY.match(card.family or ""):
                self.by_civitai_model.setdefault(m.group("model"), card)
        # a WebUI tag names its file: "<lora:mochi_corgi_v2:0.8>" is the card whose weights are mochi_corgi_v2.*
        self.by_file_stem: dict[str, list[StoredCheckpoint]] = defaultdict(list)
        for card in cards:
            # its own file, or the file a trained word written as a WebUI tag names ("<lora:IcfgirlLora_v40:1>")
            stems = {weights_name(card.weights).casefold()} if card.weights else set()
            stems |= {m.group(1).casefold() for t in card.triggers for m in _TAGGED_FILE.finditer(t)}
            for stem in stems:
                self.by_file_stem[stem].append(card)
        self.family_of = [c.family or c.id for c in cards]
        per_card = [card_fields(c) for c in cards]
        self._creators = set().union(*(fields["creator"] for fields in per_card))
        self._titles = set().union(*(fields["name"] | fields["trigger"] for fields in per_card))
        common = self._family_common(per_card, self.family_of, VERSION_FIELDS)
        common_label = self._family_common(per_card, self.family_of, ("version",))
        repeats = [_repeats_name(card, fields) for card, fields in zip(cards, per_card)]
        lists_versions = self._names_listing_versions(per_card, repeats, self.family_of, common_label)
        families_with: dict[str, set[str]] = defaultdict(set)
        named_by: dict[str, set[str]] = defaultdict(set)  # families with the token in an identity field
        named_in: dict[str, set[str]] = defaultdict(set)  # families with the token in their name
        for i, fields in enumerate(per_card):
            for field, tokens in fields.items():
                for token in tokens:
                    families_with[token].add(self.family_of[i])
                    if FIELD_WEIGHTS[field] >= STRONG_FIELD:
                        named_by[token].add(self.family_of[i])
                    if field == "name":
                        named_in[token].add(self.family_of[i])
        families = max(1, len(set(self.family_of)))
        # the words of one model's name alone ("sussurro" of "明日方舟-苏苏洛 Arknights-Sussurro 1.0")
        self._sole_name_words = {t for t, f in named_in.items() if len(f) == 1}
        self.idf = {t: _idf(families, len(f)) for t, f in families_with.items()}
        # "painting" names two models and is the style of forty: as a name it is rare, as a style common
        self.name_idf = {t: _idf(families, len(f)) for t, f in named_by.items()}
        self.max_idf = math.log(1 + (families + 0.5) / 1.5)  # a word one model has, counted once more
        self._own_word_idf = _idf(families, OWN_WORD_FAMILIES)
        # tokens of a card's creator: "yunyun" made Angel SleePeace, and "TheAlly's Wholesome Grandpas" says who
        # made it, however its name reads
        made_by: dict[str, list[int]] = defaultdict(list)
        for i, fields in enumerate(per_card):
            for token in fields["creator"]:
                made_by[token].append(i)
        self._made_by = {token: np.array(ids, dtype=np.int64) for token, ids in made_by.items()}
        family_post: dict[str, dict[int, tuple[float, float]]] = defaultdict(dict)
        own_post: dict[str, dict[int, tuple[float, float]]] = defaultdict(dict)
        label_post: dict[str, set[int]] = defaultdict(set)
        for i, fields in enumerate(per_card):
            shared = common[self.family_of[i]]
            for field, tokens in fields.items():
                weight = FIELD_WEIGHTS[field]
                own_field = field in VERSION_FIELDS
                for token in tokens:
                    idf = self.name_idf[token] if weight >= STRONG_FIELD else self.idf[token]
                    target = own_post if own_field and token not in shared else family_post
                    if weight * idf > target[token].get(i, (0.0, 0.0))[0]:
                        target[token][i] = (weight * idf, weight)
            # the words that tell this version from its siblings by its label; a word of the name ("Cutesy V1")
            # names the model, not the version, and so do its words run together ("TronLegacy" of "Tron Legacy Style")
            listing = self.family_of[i] in lists_versions and not repeats[i]
            name_words = set() if listing else fields["name"]
            name = "" if listing else squash(model_name(cards[i]))
            for token in fields["version"] - common_label[self.family_of[i]] - name_words:
                if len(token) < 4 or token not in name:
                    label_post[token].add(i)
        self._family = {t: self._arrays(p) for t, p in family_post.items()}
        self._label = dict(label_post)
        self._mentions = self._spelled_names(cards)
        self._called: dict[int, frozenset[str]] = {}  # card -> the words it is called by, read when first asked
        self._said_around = self._names_without_joiners(cards)
        # the title a name opens with ("SteampunkAI" of "SteampunkAI [10MB] LoRA extraction"), squashed
        self._opening_titles = {
            squash(segments[0]) for card in cards if (segments := titles.segments(model_name(card)))
        } - {""}
        self._inner_titles = self._titles_inside(cards, self.family_of)
        # the title a numbered series' name ends with, squashed ("futuretechnologycity")
        self._numbered_titles = {t for card in cards for t in numbered_titles(model_name(card)) if len(t) >= 4}
        # one-word names a name gives beside others after a slash ("ghostdom" of "彼岸/ghostdom/冥界 Lora"), squashed;
        # not the series a dash or bracket adds ("Cerberus - Helltaker")
        self._lone_titles = {
            title
            for card in cards
            for alias in _ALIASES.split(model_name(card))[1:]
            if len(alias.split()) == 1 and len(title := squash(alias)) >= LONE_TITLE_LETTERS and title.isalpha()
        }
        self._names_by_length: dict[int, list[str]] = defaultdict(list)  # squashed names and titles, for typos
        for whole in {w for w, ids in self._mentions.items() if any(i >= 0 for i in ids)} | set(self._inner_titles):
            self._names_by_length[len(whole)].append(whole)
        self._files = self._file_names(cards, self.family_of)
        self._trained: dict[str, set[str]] = defaultdict(set)  # squashed trained words -> the models trained on them
        self._embeddings: dict[str, list[int]] = defaultdict(list)  # squashed trained words -> embeddings on them
        # trained words written as one joined token, as the concept library names them ("david-moreno-architecture")
        self._joined_trained: set[str] = set()
        for i, (card, family) in enumerate(zip(cards, self.family_of)):
            # a trigger written as a tag list ("yuzu,yuzuhalo") trains each of its tags
            said = card.trigger_words
            self._joined_trained.update(squash(t) for t in said if " " not in t.strip() and _JOINED.search(t))
            tags = (tag for t in said if "," in t for tag in t.split(","))
            for trained in {squash(t) for t in (*said, *tags)} - {""}:
                self._trained[trained].add(family)
                if card.kind == "textual_inversion":
                    self._embeddings[trained].append(i)
        self._own = {t: self._arrays(p) for t, p in own_post.items()}
        self._acronyms, self._initials = self._titles_shortened(cards, self.family_of, families)
        self._initials_called = self._initials_called_by(per_card, self._initials)
        self.vocabulary = sorted(self.idf)
        # a Japanese name's long vowels as the romanizations that drop them write it ("kozuki" of "Kouzuki")
        self._long_vowelled: dict[str, list[str]] = defaultdict(list)
        for token in self.vocabulary:
            if short := short_vowels(token):
                self._long_vowelled[short].append(token)
        self._by_length: dict[int, list[str]] = defaultdict(list)
        self._by_stem: dict[str, list[str]] = defaultdict(list)  # "dither" -> "dithering", "dithered"
        self._label_words = {token for card in cards for token in words(_version_text(card))}
        for token in self.vocabulary:
            if not is_unspaced(token):
                self._by_length[len(token)].append(token)
                for stem in _inflected_stems(token):
                    self._by_stem[stem].append(token)

    @staticmethod
    def _file_names(cards: list[StoredCheckpoint], family_of: list[str]) -> dict[str, set[int]]:
        """Squashed trigger words, version labels and names written as files -> the cards they name alone. One that
        spells the model's name ("Asian-Less" of "Style Asian Less") or begins its siblings' ("Asian-Less-Toon") names
        the model instead."""
        written: dict[int, set[str]] = {}
        for i, card in enumerate(cards):
            # a name written as its file, with the number it ends in ("Concept_Scenery_scene_V4" of version "v2.0")
            named = [name] if _TRAILING_VERSION.search(name := unlabelled_name(card)) else []
            texts = (squash(text) for text in (_version_text(card), *card.triggers, *card.prompt_triggers, *named))
            written[i] = {t for t in texts if len(t) >= 4 and not t.isdigit() and not _BARE_VERSION.match(t)}
        members: dict[str, list[int]] = defaultdict(list)
        for i, family in enumerate(family_of):
            members[family].append(i)
        files: dict[str, set[int]] = defaultdict(set)
        for i, card in enumerate(cards):
            name = squash(model_name(card))
            siblings = [t for j in members[family_of[i]] if j != i for t in written[j]]
            for whole in written[i]:
                if whole not in name and not any(t != whole and t.startswith(whole) for t in siblings):
                    files[whole].add(i)
        return files

    @staticmethod
    def _family_common(
        per_card: list[dict[str, set[str]]], family_of: list[str], names: tuple[str, ...]
    ) -> dict[str, set[str]]:
        """Per family, the tokens of the ``names`` fields every member has: they name the model, not a version."""
        common: dict[str, set[str]] = {}
        for fields, family in zip(per_card, family_of):
            tokens = set().union(*(fields[f] for f in names))
            common[family] = tokens if family not in common else common[family] & tokens
        return common

    @staticmethod
    def _names_listing_versions(
        per_card: list[dict[str, set[str]]],
        repeats: list[bool],
        family_of: list[str],
        common_label: dict[str, set[str]],
    ) -> set[str]:
        """Families whose name lists their versions ("Apoc, Lost, Decay and Ruin", "GDI and NOD"): there a
        word of the name may still name one version. Elsewhere a label word found in the name ("Cutesy V1",
        "Arcade V8") only repeats the model's name."""
        listed: dict[str, list[set[str]]] = defaultdict(list)  # family -> per version, the name words its label has
        for fields, repeated, family in zip(per_card, repeats, family_of):
            found = (fields["version"] - common_label[family]) & fields["name"]
            if found and not repeated:
                listed[family].append(found)
        return {family for family, found in listed.items() if len(found) >= 2 and len(set().union(*found)) >= 2}

    @staticmethod
    def _spelled_names(cards: list[StoredCheckpoint]) -> dict[str, list[int]]:
        """Squashed whole names and version labels -> the cards they name (``-1 - i`` for card i's label)."""
        mentions: dict[str, list[int]] = defaultdict(list)
        for i, card in enumerate(cards):
            name = model_name(card)
            # "SurrealismAI LoRA" is called "surrealismai"; a name of plain words is not ("Glasses LoRA")
            bare = _KIND_AT_ENDS.sub("", name)
            coined = bare != name and len(bare.split()) == 1 and not is_english(bare)
            # "Elegant hanfu ruqun style" is called "elegant hanfu ruqun": words that are a name without the kind
            # word, one of them English lacks ("Big Pixel Style" is no name as "big pixel")
            unstyled = _STYLE_AT_END.sub("", bare)
            titled = (
                unstyled != name
                and len(said := words(unstyled)) >= 2
                and any(w.isalpha() and not is_english(w) for w in said)
            )
            named = [(name, "name"), (_version_text(card), "version")]
            named += [(bare, "name")] if coined else [(unstyled, "name")] if titled else []
            for text, field in named:
                whole = squash(text)
                if len(whole) >= 4 and not whole.isdigit() and not _BARE_VERSION.match(whole):
                    mentions[whole].append(i if field == "name" else -1 - i)
        return dict(mentions)

    @staticmethod
    def _names_without_joiners(cards: list[StoredCheckpoint]) -> dict[str, list[int]]:
        """Squashed whole names without the little words inside them ("darklight" of "Dark and Light", "killlamoon" of
        "Kill la Moon"): a request's words leave those out, so a name said whole is found across them."""
        around: dict[str, list[int]] = defaultdict(list)
        for i, card in enumerate(cards):
            said = words(model_name(card))
            kept = [w for w in said if w not in _JOINERS]
            if 2 <= len(kept) < len(said) and said[0] not in _JOINERS and said[-1] not in _JOINERS:
                around[squash("".join(kept))].append(i)
        return dict(around)

    @staticmethod
    def _titles_inside(cards: list[StoredCheckpoint], family_of: list[str]) -> dict[str, set[int]]:
        """Squashed titles of two words or more inside names ("Offset noise" of "[LoCon/LoRA] Offset noise",
        "Dark dungeon", "ApocalypseEngine" of "[MrOreos] ApocalypseEngine"), when few models have them: a request
        that spells one has spelled the model's name."""
        inside: dict[str, set[int]] = defaultdict(set)
        for i, card in enumerate(cards):
            for segment in titles.segments(model_name(card)):
                spaced = _CAMEL_BOUNDARY.sub(" ", segment)  # "ApocalypseEngine" is two words written together
                named = [w for w in spaced.split() if w.casefold() not in _KIND_TOKENS]
                title = squash(segment)
                if len(named) >= 2 and len(title) >= 6 and not any(c.isdigit() for c in title):
                    inside[title].add(i)
        return {
            title: members
            for title, members in inside.items()
            if len({family_of[i] for i in members}) <= SPELLED_TITLE_MODELS
        }

    @staticmethod
    def _titles_shortened(
        cards: list[StoredCheckpoint], family_of: list[str], families: int
    ) -> tuple[dict[str, tuple[np.ndarray, ...]], dict[str, tuple[np.ndarray, ...]]]:
        """Postings of the acronyms cards write ("OoT") and of the initials of the titles they write ("mha" of "My
        Hero Academia"), at the weight of the field that wrote them (see :mod:`personalq.checkin.titles`)."""
        shortened: tuple[dict, dict] = (defaultdict(dict), defaultdict(dict))
        for i, card in enumerate(cards):
            for field, texts in (
                ("name", [model_name(card)]),
                ("trigger", card.triggers),
                ("subject", card.subjects),
                ("tag", card.tags),
            ):
                weight = FIELD_WEIGHTS[field]
                for postings, found in zip(shortened, (titles.written(texts), titles.initials(texts))):
                    for token in found:
                        postings[token][i] = max(postings[token].get(i, 0.0), weight)
        out: list[dict[str, tuple[np.ndarray, ...]]] = []
        for postings in shortened:
            arrays = {}
            for token, weights in postings.items():
                idf = _idf(families, len({family_of[i] for i in weights}))
                arrays[token] = SelectionIndex._arrays({i: (w * idf, w) for i, w in weights.items()})
            out.append(arrays)
        return out[0], out[1]

    @staticmethod
    def _initials_called_by(
        per_card: list[dict[str, set[str]]], initials: dict[str, tuple[np.ndarray, ...]]
    ) -> set[str]:
        """The initials some card is called by whole that are still the title's: every card called by the word has the
        title ("ngnl" of "ngnl_jibril" and "Jibril | No Game No Life"), so it is no other one's name ("sans")."""
        called: dict[str, set[int]] = defaultdict(set)
        for i, fields in enumerate(per_card):
            for token in (fields["name"] | fields["trigger"]) & initials.keys():
                called[token].add(i)
        return {form for form, ids in called.items() if ids <= set(initials[form][0].tolist())}

    @staticmethod
    def _arrays(postings: dict[int, tuple[float, float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Card indices, their evidence (field weight x idf) and the field weight it came from."""
        values = np.array(list(postings.values()), dtype=np.float64).reshape(-1, 2)
        return np.fromiter(postings, dtype=np.int64), values[:, 0], values[:, 1]

    def _near(
        self, text: str, prefix: bool = True, joined: bool = False, typos: bool = True
    ) -> list[tuple[str, float]]:
        """Vocabulary tokens ``text`` stands for: itself, a typo of it (unless not ``typos``), or a prefix of a
        longer name. Words ``joined`` into one text ("p5makoto") may differ in their first letter from the name they
        spell."""
        found: list[tuple[str, float]] = []
        if text in self.idf:
            found.append((text, 1.0))
        elif typos and len(text) >= FUZZY_MIN_LENGTH and not is_unspaced(text):
            pool = [
                t
                for n in range(len(text) - 2, len(text) + 3)
                for t in self._by_length.get(n, ())
                if t not in _KIND_TOKENS  # "lowra" is a name we lack, not a misspelt "lora"
            ]
            english = is_english(text)
            for token, ratio, _ in process.extract(
                text, pool, scorer=fuzz.ratio, score_cutoff=FUZZY_MIN_RATIO, limit=5
            ):
                # a typo keeps the word's first letter ("maniak" is "maniac"; "escher" is not "becher", "hovercraft"
                # not "lovecraft"), unless nearly all the rest is the same
                same_start = token[0] == text[0] or joined
                # a letter dropped from a five-letter word leaves another word ("spock" is not "sock"), but for
                # a plural's "s" ("robes", "robe")
                plural = text == token + "s" or token == text + "s"
                if not plural and english and (is_english(token) or is_english_pair(token)):
                    continue  # two English words are two words, not one misspelt ("aquarium", "Aquarius"; a
                    # trigger's "light hues" is no "lighthouse")
                sure = FUZZY_OTHER_START_RATIO if len(text) <= FUZZY_MIN_LENGTH and not plural else FUZZY_SURE_RATIO
                if (ratio >= sure and (same_start or ratio >= FUZZY_OTHER_START_RATIO)) or (
                    len(token) == len(text) and same_start
                ):
                    found.append((token, (ratio / 100.0) ** 2))
        for token in self._long_vowelled.get(short_vowels(text) or text, ()):  # "kozuki" of "Kouzuki"
            if token != text:
                found.append((token, LONG_VOWEL_SIMILARITY))
        if (stem := _derived_from(text)) in self.idf:  # "taiwanese" of "Taiwan"
            found.append((stem, PREFIX_SIMILARITY))
        if prefix and len(text) >= PREFIX_MIN_LENGTH and not is_unspaced(text):
            start = bisect.bisect_left(self.vocabulary, text)
            for token in self.vocabulary[start : start + 20]:
                if not token.startswith(text):
                    break
                if token != text and len(text) >= 0.5 * len(token):
                    found.append((token, PREFIX_SIMILARITY))
        # the same word with another ending: "the fixed upload" is "v1.0 (Fix)", "dithered pixels" "dithering"
        # (a word some card has meets its other forms only in version labels: "tables" of a scene is not "table")
        stems = _inflected_stems(text) | ({text} if len(text) >= 5 else set())
        inflected = {token for stem in stems for token in (stem, *self._by_stem.get(stem, ()))}
        if text in self.idf:
            inflected &= self._label_words
        seen = {token for token, _ in found} | {text}
        found.extend((token, PREFIX_SIMILARITY) for token in sorted(inflected - seen) if token in self.idf)
        return found

    def mass(self, word: QueryWord) -> float:
        """How much naming ``word`` says: the inverse family frequency of what it stands for, or, for a word
        the repository has never seen, as much as its rarest word (it names something we do not have)."""
        known = [
            self.name_idf.get(t, self.idf[t]) * s
            for form in word.forms
            for t, s in self._near(form, typos=not _sounded(word, form))
        ]
        if known:
            return max(known)
        return 0.0 if is_unspaced(word.forms[0]) else self.max_idf

    def heard_of(self, word: QueryWord) -> bool:
        """Does some card have ``word`` as written or misspelt: nearly the same ("sweatr" of "sweater"), or two letters
        swapped ("sowrd" of "sword")? Another name one letter apart ("kurokawa", "Kurosawa") is not it."""
        for form in word.forms:
            if any(similarity >= HEARD_SIMILARITY for _, similarity in self._near(form, prefix=False)):
                return True
            one_edit = process.extract(
                form, self._by_length.get(len(form), ()), scorer=OSA.distance, score_cutoff=1, limit=None
            )
            letters = sorted(form)
            if any(sorted(token) == letters for token, _, _ in one_edit):
                return True
        return False

    def rarity(self, word: QueryWord) -> float:
        """The inverse family frequency of ``word`` as written (no near spellings), the rarest word's for one no card
        has: how much it reads as a name rather than a common word ("lilo" against "girl")."""
        known = [self.idf[form] for form in word.forms if form in self.idf]
        return max(known) if known else self.max_idf

    def is_creator(self, word: str) -> bool:
        """Is ``word`` (or a near spelling) a word of some checkpoint's creator?"""
        return any(token in self._creators for token, _ in self._near(word))

    def only_creator(self, word: str) -> bool:
        """Is ``word`` a creator's and no model's name or trained word ("h_madoka", but not "megumin", which names
        a character too)? Then "X's ..." and "by X" say who made the model, which no other evidence outweighs."""
        forms = {squash(word)} if "_" in word else field_tokens(word)  # a handle is one word: "h_madoka"
        return bool(forms & self._creators) and not forms & self._titles

    def _names_whole(self, whole: str) -> bool:
        """Is the squashed text ``whole`` some model's whole name, or the title a name opens with?"""
        return any(i >= 0 for i in self._mentions.get(whole, ())) or (
            len(whole) >= OPENING_TITLE_LETTERS and whole in self._opening_titles
        )

    def spells_name(self, text: str) -> bool:
        """Is ``text`` some model's whole name, or a title inside few models' names, written out?"""
        whole = squash(text)
        return self._names_whole(whole) or whole in self._inner_titles or whole in self._numbered_titles

    def spells_title(self, text: str) -> bool:
        """Is ``text`` a title some card gives, written out or by the acronym a card writes ("tomo-chan is a girl",
        "dead or alive" of "DOA - Ayane")?"""
        said = [w for w in words(text) if w.isascii()]
        return self.spells_name(text) or (titles.of_words(said) or "-") in self._acronyms

    def spells_rare_name(self, text: str) -> bool:
        """Does ``text`` spell a model's whole name, a title inside it written as one word ("apocalypseengine" of
        "[MrOreos] ApocalypseEngine") or a one-word title beside others ("ghostdom") with a word few cards have
        ("glasstech world morph", not "butterfly wings"): a name, never the picture's words? A title said in words
        may only gloss a name ("Tired Eyes (dark circles)")."""
        rare = RARE_NAME_WORD * self.max_idf
        whole = squash(text)
        # a title inside a name written as one word, as a file is named ("apocalypseengine")
        inner = whole in self._inner_titles and len(text.split()) == 1
        spelled = self._names_whole(whole) or inner or whole in self._lone_titles
        return (spelled or whole in self._numbered_titles) and any(
            self.idf.get(t, self.max_idf) >= rare for t in field_tokens(text)
        )

    def made_by(self, forms: tuple[str, ...]) -> list[int]:
        """The positions of the cards a creator made, by the words of their handle ("reevemusk")."""
        return sorted({int(i) for form in forms for i in self._made_by.get(form, ())})

    def says(self, word: str) -> bool:
        """Is ``word`` exactly a word of some card's name, trigger, label, subject or creator (the fields that name a
        model; tags and descriptions do not)?"""
        return word in self.name_idf or word in self._creators

    def names_one_model(self, word: str) -> bool:
        """Is ``word`` a word of one model's name and of no other's ("sussurro", "kogatan")?"""
        return squash(word) in self._sole_name_words

    def called_by(self, i: int) -> frozenset[str]:
        """The words card ``i`` is called by: its name's and its first trained word's (a character's later trained
        words list what it wears: "1girl, dress, gloves"). Read once per card, as a maker's models are read for each
        part of each request."""
        called = self._called.get(i)
        if called is None:
            card = self.cards[i]
            called = frozenset(field_tokens(model_name(card)).union(*(field_tokens(t) for t in card.triggers[:1])))
            self._called[i] = called
        return called

    def names_coined(self, text: str) -> bool:
        """Is the one written word ``text`` a made-up name one model alone is called ("vaporwavev1" of "VaporWaveV1",
        "GameIconResearch_omkt" of "GameIconResearch_omkt_Lora")? Like a trained word, it names that model wherever
        it stands."""
        whole = squash(text)
        named = {self.family_of[i] for i in self._mentions.get(whole, ()) if i >= 0}
        return len(named) == 1 and is_coined(whole)

    def owns_trigger(self, text: str) -> bool:
        """Is ``text`` a trained word written whole that only one model's versions have, and a word hardly any other
        card says ("ddbitlip"; not "lowres", which tag lists share)?"""
        whole = squash(text)
        return len(self._trained.get(whole, ())) == 1 and self.idf.get(whole, self.max_idf) >= self._own_word_idf

    def owns_joined_trigger(self, text: str) -> bool:
        """Is ``text``, written as words, a trained word one model alone has and writes joined ("hk clouds" of
        "hk-clouds", "trash polka artstyle" of "trash-polka-artstyle")? Spaced, it is still that token."""
        return squash(text) in self._joined_trained and self.owns_trigger(text)

    def embeddings_trained_on(self, text: str) -> list[StoredCheckpoint]:
        """The embeddings trained on the word ``text`` is."""
        return [self.cards[i] for i in self._embeddings.get(squash(text), [])]

    def embedding_trained_on(self, text: str) -> StoredCheckpoint | None:
        """The one embedding trained on the word ``text`` is, when one alone is ("ngng00", "dangercrow"): written in
        a negative prompt, that word is how the WebUI uses the embedding."""
        whole = squash(text)
        trained = self._embeddings.get(whole, [])
        return self.cards[trained[0]] if len(trained) == 1 and len(self._trained[whole]) == 1 else None

    def writes_whole(self, text: str) -> bool:
        """Is the one written word ``text`` a file's trigger or label, a model's whole name, or a word of a name or
        trigger as joined there ("ganyu-v2" of "Ganyu-V2", "bad-image-v2-39000")? Then it names, and the version
        mark inside it is no version said."""
        joined = re.search(r"[^\W\d_][-_.][^\W_]", text) is not None  # a word of a name written with its parts
        return self.spells_file(text) or self.spells_name(text) or (joined and squash(text) in self._titles)

    def spells_file(self, text: str) -> bool:
        """Is ``text`` some file's trigger word or version label written whole ("Style-TronLegacy-8v-B")?"""
        return squash(text) in self._files

    def score(
        self, query: list[QueryWord], phrase: set[int] = frozenset(), files: list[tuple[int, int, str]] = ()
    ) -> Evidence:
        """Family and own evidence of every card for the request words ``query``; ``phrase`` are the indices of
        the words the person used to name the model, ``files`` the runs of words (first, past the last, the text)
        that wrote a trigger word or version label whole."""
        n = len(self.cards)
        family_total, own_total = np.zeros(n), np.zeros(n)
        matched: dict[int, set[int]] = defaultdict(set)
        named: dict[int, set[int]] = defaultdict(set)
        owned: dict[int, set[int]] = defaultdict(set)
        # (first word, past the last word, text, whether a longer name may start with it)
        spans = [(i, i + 1, form, k == 0) for i, word in enumerate(query) for k, form in enumerate(word.forms)]
        # a form that is only a piece of its word as written: "ump" and "45" of "ump45", "mix" of "TeaMix"
        pieces = {
            at for at, (i, _, form, _) in enumerate(spans) if form != query[i].forms[0] and form in query[i].forms[0]
        }
        single = len(spans)
        for length in range(2, MAX_JOINED + 1):
            for i in range(len(query) - length + 1):
                group = query[i : i + length]
                if (
                    all(not is_unspaced(w.forms[0]) for w in group)
                    and group[-1].position - group[0].position == length - 1
                ):
                    spans.append((i, i + length, "".join(w.forms[0] for w in group), True))
        # titles shortened: "ocarina of time" meets a card's "OoT", "mha" a card's "My Hero Academia"
        shortened: dict[int, tuple[np.ndarray, ...]] = {}
        for length in range(titles.MIN_LETTERS, titles.MAX_LETTERS + 1):
            for i in range(len(query) - length + 1):
                group = query[i : i + length]
                in_name = not phrase or set(range(i, i + length)) <= phrase  # "dr slump → running" is no "DSR"
                # words that write a file's name whole are that name: "sxz-ashe-ow" spells no "SAO"
                in_file = any(start <= i and i + length <= end for start, end, _ in files)
                if in_name and not in_file and group[-1].position - group[0].position == length - 1:
                    said = titles.of_words([w.forms[0] for w in group])
                    if said in self._acronyms:
                        shortened[len(spans)] = self._acronyms[said]
                        spans.append((i, i + length, said, False))
        for i, word in enumerate(query):
            form = word.forms[0]
            # a word some card is called by whole is that card's name, not another title's initials ("sans"), unless
            # a card writes it as an acronym itself ("Kiri Hano - MSA")
            if (
                titles.may_be(form)
                and form in self._initials
                and (form not in self._titles or form in self._acronyms or form in self._initials_called)
                and self.rarity(word) >= INITIALS_RARITY * self.max_idf
            ):
                shortened[len(spans)] = self._initials[form]
                spans.append((i, i + 1, form, False))
        # per request word: the best family and own contribution for each card
        best_family = np.zeros((len(query), n))
        best_own = np.zeros((len(query), n))
        best_strong = np.zeros((len(query), n))
        # how well each word is found, for coverage: a joined match ("gaslamp fantasy" in "GasLampFantasyAI")
        # finds each of its words whole, though its evidence is shared between them
        best_found = np.zeros((len(query), n))
        found_whole = np.zeros((len(query), n), dtype=bool)  # the word as written, not a piece of it
        found_named = np.zeros((len(query), n), dtype=bool)  # ... in an identity field other than its creator
        identified = np.zeros((len(query), n), dtype=bool)  # ... or a near spelling of it
        written = np.zeros((len(query), n), dtype=bool)  # the word as written in any identity field, creator's too
        pieces_found = np.zeros((len(query), n), dtype=np.int64)  # how many of the word's pieces
        labelled: dict[int, set[int]] = defaultdict(set)
        for at, (start, end, text, prefix) in enumerate(spans):
            having = np.zeros(n, dtype=bool)
            if at in shortened:
                near = [(text, 1.0)]
            else:
                sounded = at < single and _sounded(query[start], text)
                near = self._near(text, prefix and not sounded, joined=at >= single, typos=not sounded)
            for token, similarity in near:
                for i in self._label.get(token, ()) if similarity == 1.0 and at not in shortened else ():
                    labelled[i].update(range(start, end))
                found = similarity * min(w.weight for w in query[start:end])
                value = found / (end - start)
                posted = (
                    ((shortened[at], best_family),)
                    if at in shortened
                    else ((self._family.get(token), best_family), (self._own.get(token), best_own))
                )
                for postings, best in posted:
                    if postings is None:
                        continue
                    ids, evidence, field_weights = postings
                    strong = np.where(field_weights >= STRONG_FIELD, evidence * value, 0.0)
                    for row in range(start, end):
                        best[row, ids] = np.maximum(best[row, ids], evidence * value)
                        best_strong[row, ids] = np.maximum(best_strong[row, ids], strong)
                        best_found[row, ids] = np.maximum(best_found[row, ids], evidence * found)
                    if found <= 0.0:  # another part's words: evidence for another model
                        continue
                    having[ids] = True
                    if at not in pieces:
                        found_whole[start:end, ids] = True
                    if at not in pieces and token not in _KIND_TOKENS:  # "lora" names no model
                        identity = ids[field_weights >= STRONG_FIELD]
                        made = self._made_by.get(token)
                        naming = identity if made is None else identity[~np.isin(identity, made)]
                        identified[start:end, naming] = True
                        if similarity == 1.0:  # spelt out; a near spelling leaves it to the scores
                            found_named[start:end, naming] = True
                            written[start:end, identity] = True
            if at in pieces:
                pieces_found[start:end] += having
        self._found_in_part(
            found_whole, found_named, identified, pieces_found, (best_found, best_family, best_own, best_strong)
        )
        spelled = self._mention_bonus(query, best_family, best_own, best_found) | self._misspelled(query, phrase)
        for start, end, text in files:  # "wcat8-v1-2000": that file's own evidence, as a name spelled out is
            for card in self._files.get(squash(text), ()):
                best_own[start:end, card] += MENTION_BONUS / (end - start)
                best_found[start:end, card] += MENTION_BONUS
        masses = {p: self.mass(query[p]) for p in phrase}
        # a role word beside a name says what kind of model, not which ("lighthouse background lora": a background
        # model without the lighthouse is not it); alone it is the name ("the background lora")
        shares = {p: ROLE_SHARE if query[p].forms[0] in ROLE_KINDS else 1.0 for p in phrase}
        if all(share < 1.0 for share in shares.values()):
            shares = dict.fromkeys(phrase, 1.0)
        coverage = np.ones(n)
        if sum(masses.values()) > 0:
            found = sum(shares[p] * best_found[p] / max(query[p].weight, 1e-9) for p in masses)
            coverage = np.minimum(1.0, found / sum(shares[p] * mass for p, mass in masses.items()))
        for row in range(len(query)):
            # a word counts once per card: at its strongest field, family or own
            family_row, own_row = best_family[row], best_own[row]
            own_wins = own_row > family_row
            family_total += np.where(own_wins, 0.0, family_row)
            own_total += np.where(own_wins, own_row, 0.0)
            for i in np.flatnonzero(family_row + own_row):
                matched[int(i)].add(row)
            for i in np.flatnonzero(own_wins):
                owned[int(i)].add(row)
            for i in np.flatnonzero(best_strong[row]):
                named[int(i)].add(row)
        return Evidence(
            family_total,
            own_total,
            dict(matched),
            coverage,
            dict(labelled),
            best_strong.sum(axis=0),
            dict(named),
            dict(owned),
            frozenset(spelled),
            written,
        )

    @staticmethod
    def _found_in_part(
        found_whole: np.ndarray,
        found_named: np.ndarray,
        identified: np.ndarray,
        pieces_found: np.ndarray,
        scores: tuple[np.ndarray, ...],
    ) -> None:
        """A word some card is named by whole is that card's. The others cover it in part: those that have only
        one piece of it ("45" of "ump45"; "meina" and "v8" of "meinav8" are both its pieces), and those found by
        their creator's name alone ("yunyun" made other models than Yunyun; "konyconi retrofuturism" is by him)."""
        by_maker_alone = ~identified.any(axis=0)
        for row in np.flatnonzero(found_named.any(axis=1)):
            whole = found_whole[row] | (pieces_found[row] >= 2)
            partly = ~whole | by_maker_alone
            share = np.where(partly, PART_SHARE, 1.0)
            for values in scores:
                values[row] *= share

    def names(self, word: str) -> bool:
        """Is ``word`` (or a near spelling) a word of some checkpoint's name, creator, trigger, version or subject?
        A handle joined by underscores ("h_madoka") is one word."""
        word = squash(word) if "_" in word else word
        return any(token in self.name_idf for token, _ in self._near(word))

    def _misspelled(self, query: list[QueryWord], phrase: set[int]) -> set[int]:
        """The cards whose whole name (or a title in it) two to four words of the phrase spell with a typo ("star
        buterfly" of "Star butterfly"): named as surely as spelled right, though the typo earns no bonus."""
        found: set[int] = set()
        for start in sorted(phrase)[:MISSPELT_STARTS]:
            for end in range(start + 2, start + 5):
                run = query[start:end]
                if end > len(query) or not set(range(start, end)) <= phrase:
                    break
                if run[-1].position - run[0].position != end - 1 - start:
                    break
                whole = squash("".join(w.forms[0] for w in run))
                if len(whole) < 8 or whole in self._mentions or whole in self._inner_titles:
                    continue
                pool = [t for n in range(len(whole) - 2, len(whole) + 3) for t in self._names_by_length.get(n, ())]
                for name, _, _ in process.extract(whole, pool, scorer=fuzz.ratio, score_cutoff=FUZZY_SURE_RATIO):
                    if name[0] == whole[0]:
                        found.update(i for i in self._mentions.get(name, ()) if i >= 0)
                        found.update(self._inner_titles.get(name, ()))
        return found

    def _mention_bonus(
        self, query: list[QueryWord], best_family: np.ndarray, best_own: np.ndarray, best_found: np.ndarray
    ) -> set[int]:
        """A run of request words that spells a whole model name or version label ("easynegative",
        "v3.0-ming", "Big Pixel Style") names that card outright, however common its words are. Returns the cards
        whose name, or a title inside it (else a trained word of several words), was spelled."""
        spelled: set[int] = set()
        by_trigger: set[int] = set()  # a trained word of several words written whole ("cammy sf6")
        for start in range(len(query)):
            for end in range(start + 1, min(len(query), start + 6) + 1):
                if end - start > 1 and query[end - 1].position - query[end - 2].position > 2:
                    break  # one little word may stand between two words of a name ("dark and light")
                gapped = query[end - 1].position - query[start].position != end - 1 - start
                whole = squash("".join(w.forms[0] for w in query[start:end]))
                if query[start].weight > 0.0 and not gapped:
                    spelled.update(self._inner_titles.get(whole, ()))
                    if end - start > 1:
                        by_trigger.update(self._files.get(whole, ()))
                for i in self._said_around.get(whole, ()) if gapped else self._mentions.get(whole, ()):
                    best, card = (best_family, i) if i >= 0 else (best_own, -1 - i)
                    if i >= 0 and query[start].weight > 0.0:
                        spelled.add(i)
                    for row in range(start, end):
                        best[row, card] += MENTION_BONUS / (end - start)
                        best_found[row, card] += MENTION_BONUS
        # names it only where no model's name is spelled: "valkyrie armor" is the "Valkyrie" model's name and a word
        # of the picture as much as another's trained word
        return spelled or by_trigger


__all__ = ["Evidence", "QueryWord", "SelectionIndex", "card_fields", "model_name", "unlabelled_name"]
