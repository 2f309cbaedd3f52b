"""The checkpoint card: the one schema every importer produces and everything downstream reads."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from personalq.repository.base_models import DEFAULT_BASE, normalise_base_model
from personalq.repository.versions import family_stem, parse_version

Kind = Literal["lora", "dreambooth", "textual_inversion", "checkpoint"]
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,127}$")
_WORD = re.compile(r"[a-z][a-z'-]+")
_TOKEN = re.compile(r"[^\W_]+")  # letters and digits in any script
_STOPWORDS = frozenset(
    "a an the of and or for with in on at by to from my your this that model lora style version v sd xl "
    "pruned offset final fp16 fp32 safetensors ckpt dreambooth embedding textual inversion concept".split()
)


def _as_list(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [v for v in re.split(r"[,;]", value)]
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"expected a list of strings, got {type(value).__name__}")
    out: list[str] = []
    for item in value:
        if not isinstance(item, (str, int, float)):
            raise ValueError(f"expected strings, got {type(item).__name__}")
        text = str(item).strip()
        if text and text not in out:
            out.append(text)
    return out


def _as_datetime(value: object) -> dt.datetime | None:
    if value is None or value == "":
        return None
    try:
        parsed = _parse_datetime(value)
        # Stored naive in UTC: SQLite has no time zones, and cards mostly carry plain dates.
        if parsed.tzinfo is not None:
            parsed = parsed.astimezone(dt.timezone.utc).replace(tzinfo=None)
    except (OverflowError, OSError) as exc:  # pydantic reports only ValueError as a field error
        raise ValueError(f"date out of range ({exc})") from exc
    return parsed


def _parse_datetime(value: object) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return dt.datetime.fromtimestamp(float(value), tz=dt.timezone.utc)
    if isinstance(value, str):
        return dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    raise ValueError(f"expected a date, got {type(value).__name__}")


def derive_subjects(name: str, tags: list[str], description: str) -> list[str]:
    """Subjects for cards that do not list them: tags first, then the content words of the name."""
    words = [t.lower() for t in tags]
    words += [w for w in _WORD.findall(name.lower()) if w not in _STOPWORDS]
    out: list[str] = []
    for w in words:
        if w not in out and w not in _STOPWORDS:
            out.append(w)
    return out[:12]


_WEBUI_NETWORK = re.compile(r"<(?:lora|lyco|hypernet|embedding):(?P<name>[^:>]*)[^>]*>", re.I)
_WEBUI_ESCAPE = re.compile(r"\\([()\[\]{}:])")
# booru tags that say what the training images showed, or how good a picture should be, not who: never the identity
# of a tag list, and in a request never a model's name ("masterpiece, best quality, 1girl, rebeccaop, ...")
GENERIC_TAGS = re.compile(
    r"^(?:\d+\+?(?:girls?|boys?|others?)|solo|solo focus|masterpiece|best quality|high quality|highres|absurdres|"
    r"(?:ultra|extremely|highly)[ -]detailed|[48]k|official art|"
    r"looking at viewer|simple background|white background|upper body|full body|portrait|smile|open mouth)$",
    re.I,
)


# one tag out of the WebUI emphasis around it: "(masterpiece:1.2)", "((eula))", "[eula]" are "masterpiece", "eula"
WEBUI_EMPHASIS = re.compile(r"^[\s(\[{]*(?P<tag>[^():\[\]{}]*?)(?::\s*[\d.]+)?[\s)\]}]*$")


def _unwrapped(tag: str) -> str:
    """A tag out of the WebUI emphasis a tag list put it in ("(eula:1.2)"; "(eula" where the brackets wrapped the whole
    list, "(eula, youla, /genshin impact/)"); "sugimori ken (style)" keeps its own brackets."""
    return m.group("tag").strip() if (m := WEBUI_EMPHASIS.match(tag)) else tag


def prompt_trigger(trained: str) -> str:
    """One trained word as an image prompt takes it: WebUI network tags (``<lora:name:1>``) dropped, WebUI escapes
    undone (``sugimori ken \\(style\\)`` -> ``sugimori ken (style)``), and of a tag list ("hmmisaki, 1girl, long hair,
    pleated skirt, ...") its identity tag, the first that is not generic: the other tags describe the training
    images and would contradict the outfit or scene a person asks for. A trained word that is only a network tag
    (``<lora:qiyana>``) gives the name it loads when that is a word, the one word that says who (a file's name
    with a step count, ``hilda1-000010``, is no word the model learned)."""
    text = _WEBUI_ESCAPE.sub(r"\1", _WEBUI_NETWORK.sub(" ", trained or ""))
    tag = _WEBUI_NETWORK.search(trained or "")
    if not text.strip() and tag and re.fullmatch(r"[^\W\d_]+(?:[ _][^\W\d_]+)*", tag.group("name").strip()):
        text = tag.group("name").replace("_", " ")
    tags = [_unwrapped(" ".join(tag.split())) for tag in text.split(",")]
    tags = [tag for tag in tags if tag]
    return next((tag for tag in tags if not GENERIC_TAGS.match(tag)), tags[0] if tags else "")


class Card(BaseModel):
    """A checkpoint card as described in DESIGN.md; validation errors name the offending field."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    id: str
    name: str = Field(min_length=1, max_length=300)
    family: str | None = None
    version: str | None = Field(default=None, max_length=200)  # the column's width; longer labels are no versions
    kind: Kind = "lora"
    base_model: str = DEFAULT_BASE
    creator: str | None = Field(default=None, max_length=200)  # who trained it: Civitai user, modelspec.author
    triggers: list[str] = Field(default_factory=list)
    subjects: list[str] = Field(default_factory=list)
    styles: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    description: str = Field(default="", max_length=20000)
    created_at: dt.datetime
    last_used_at: dt.datetime | None = None
    weights: str | None = None
    preview: str | None = None

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError("id must be 1-128 characters of letters, digits and . _ : + - (no spaces or slashes)")
        return value

    @field_validator("version", "creator", mode="before")
    @classmethod
    def _optional_text(cls, value: object) -> str | None:
        return None if value is None or value == "" else str(value)

    @field_validator("triggers", "subjects", "styles", "tags", mode="before")
    @classmethod
    def _lists(cls, value: object) -> list[str]:
        return _as_list(value)

    @field_validator("base_model", mode="before")
    @classmethod
    def _base_key(cls, value: object) -> str:
        return normalise_base_model(None if value is None else str(value))

    @field_validator("created_at", "last_used_at", mode="before")
    @classmethod
    def _dates(cls, value: object) -> dt.datetime | None:
        return _as_datetime(value)

    @field_validator("kind", mode="before")
    @classmethod
    def _kind(cls, value: object) -> object:
        aliases = {
            "ti": "textual_inversion",
            "embedding": "textual_inversion",
            "textualinversion": "textual_inversion",
            "locon": "lora",
            "lycoris": "lora",
            "loha": "lora",
        }
        if isinstance(value, str):
            key = value.strip().lower().replace("-", "_").replace(" ", "_")
            return aliases.get(key.replace("_", ""), aliases.get(key, key))
        return value

    @model_validator(mode="after")
    def _derived(self) -> "Card":
        if not self.subjects:
            self.subjects = derive_subjects(self.name, self.tags, self.description)
        if not self.family:
            self.family = family_stem(self.name)
        return self

    @property
    def canonical_trigger(self) -> str | None:
        return self.triggers[0] if self.triggers else None

    @property
    def prompt_triggers(self) -> list[str]:
        """The trained words as an image prompt takes them (see :func:`prompt_trigger`), in card order, each once."""
        return list(dict.fromkeys(w for w in (prompt_trigger(t) for t in self.triggers) if w))

    @property
    def trigger_words(self) -> list[str]:
        """Every text that marks this checkpoint in a prompt: the trained words as written and as prompts take them
        (what TAQ keeps in full precision)."""
        return list(dict.fromkeys([*self.triggers, *self.prompt_triggers]))

    @property
    def version_info(self):
        return parse_version(self.version)

    def content_hash(self) -> str:
        """Stable hash of the card's content; two imports of the same card hash alike."""
        payload = self.model_dump(mode="json", exclude={"last_used_at"})
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def identity_text(self) -> str:
        """What dense retrieval embeds: which concept the checkpoint is (name without its version label, then
        the main subjects and styles that the name does not already say).

        Descriptions are long and mostly boilerplate on real repositories; leaving them to BM25 (which sees the
        full :meth:`index_text`) makes embedding several times cheaper. The version label is left out because
        Check-in widens every retrieved checkpoint to its whole family and lets versions compete on metadata,
        so versions of one concept can share one text and one embedding; words the name already has are not
        repeated. What each of these saves on real Civitai cards: benchmarks/README.md, import.
        """
        name = self.name
        if self.version and len(name) > len(self.version) and name.lower().endswith(self.version.lower()):
            name = name[: -len(self.version)].rstrip(" -_:([") or name
        said = set(_TOKEN.findall(name.lower()))
        parts = [name]
        for values in (self.subjects[:4], self.styles[:2]):
            fresh = []
            for value in values:
                words = set(_TOKEN.findall(value.lower()))
                if words and not words <= said:
                    fresh.append(value)
                    said |= words
            if fresh:
                parts.append(", ".join(fresh))
        return ". ".join(parts)

    def index_text(self) -> str:
        """The text that dense and sparse retrieval see: what a person might say about this checkpoint."""
        parts = [self.name]
        if self.description:
            parts.append(self.description)
        for label, values in (
            ("subjects", self.subjects),
            ("styles", self.styles),
            ("tags", self.tags),
            ("triggers", self.triggers),
        ):
            if values:
                parts.append(f"{label}: {', '.join(values)}")
        if self.version:
            parts.append(f"version {self.version}")
        if self.creator:
            parts.append(f"by {self.creator}")
        parts.append(f"{self.kind.replace('_', ' ')} for {self.base_model}")
        return ". ".join(parts)


class StoredCheckpoint(Card):
    """A card as the repository holds it: with resolved paths, weights digest and provenance."""

    weights_path: str | None = None
    weights_sha256: str | None = None
    preview_path: str | None = None
    source_format: str = "card"
    source_path: str = ""
    version_number: float | None = None
    imported_at: dt.datetime | None = None
    edited: list[str] = Field(default_factory=list)  # fields the person overrode (see repository.overrides)
