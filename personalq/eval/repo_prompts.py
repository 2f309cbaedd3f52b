"""Repo-Prompts: a seeded, deterministic repository of 1,000 checkpoints and 500 requests with ground truth.

The paper's layout: 20 concept categories x 50 versions (here 5 families x 10 versions each), dates over two
years, style tags and descriptions; 350 single-match, 100 ambiguous and 50 no-match requests in the
temporal, version, style, usage, recency, ambiguous and no-match categories.

Ground truth is computed from structured constraints on the generator's own records (an oracle that never
reads the request text), then the constraint is worded as a person would say it.
"""

from __future__ import annotations

import calendar
import datetime as dt
import json
import random
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import yaml

CATEGORIES = (
    "dog",
    "cat",
    "person",
    "bear",
    "horse",
    "car",
    "toy",
    "watch",
    "bag",
    "chair",
    "house",
    "building",
    "bridge",
    "flower",
    "tree",
    "mountain",
    "painting",
    "drawing",
    "logo",
    "shoe",
)
CODENAMES = (
    "aurora",
    "biscuit",
    "comet",
    "dusty",
    "echo",
    "fable",
    "ginger",
    "harbor",
    "indigo",
    "juniper",
    "kestrel",
    "lumen",
    "maple",
    "nimbus",
    "onyx",
    "pepper",
    "quill",
    "rustic",
    "saffron",
    "tango",
    "umber",
    "velvet",
    "willow",
    "xenon",
    "yonder",
    "zephyr",
    "acorn",
    "bramble",
    "cinder",
    "dapple",
    "ember",
    "fjord",
    "gale",
    "hollow",
    "ivory",
    "jasper",
    "kiwi",
    "lagoon",
    "mosaic",
    "nectar",
    "orchid",
    "pebble",
    "quartz",
    "raven",
    "sable",
    "thistle",
    "ultra",
    "vesper",
    "wren",
    "yarrow",
    "zinnia",
    "alder",
    "basil",
    "cobalt",
    "delta",
    "elm",
    "fennel",
    "garnet",
    "hazel",
    "iris",
    "jade",
    "kelp",
    "linen",
    "mango",
    "nutmeg",
    "opal",
    "plum",
    "quince",
    "rosa",
    "sorrel",
    "topaz",
    "urchin",
    "violet",
    "walnut",
    "yucca",
    "zest",
    "amber",
    "birch",
    "cedar",
    "dune",
    "flint",
    "grove",
    "heath",
    "isle",
    "jet",
    "kale",
    "loch",
    "moss",
    "nova",
    "oak",
    "pine",
    "quest",
    "ridge",
    "slate",
    "tide",
    "vale",
    "wisp",
    "yew",
    "zen",
    "ash",
)
STYLES = ("photo", "anime", "sketch", "watercolor", "pixel", "oil painting", "polaroid", "3d")
STYLE_WORDS = {
    "photo": "realistic",
    "anime": "anime",
    "sketch": "sketch",
    "watercolor": "watercolor",
    "pixel": "pixel art",
    "oil painting": "oil painting",
    "polaroid": "vintage polaroid",
    "3d": "3d render",
}
ABSENT_SUBJECTS = (
    "giraffe",
    "dragon",
    "robot",
    "octopus",
    "spaceship",
    "penguin",
    "guitar",
    "lighthouse",
    "sushi",
    "dinosaur",
)
NOW = dt.datetime(2026, 11, 22, 12, 0)
START = dt.datetime(2024, 11, 25)


@dataclass
class Record:
    id: str
    category: str
    codename: str
    version: int
    style: str
    created_at: dt.datetime
    last_used_at: dt.datetime | None = None

    @property
    def family(self) -> str:
        return f"{self.codename}-{self.category}"

    @property
    def trigger(self) -> str:
        return f"<{self.codename}-{self.category}-v{self.version}>"

    def card(self) -> dict:
        name = f"{self.codename.title()} {self.category} v{self.version}"
        return {
            "id": self.id,
            "name": name,
            "family": self.family,
            "version": f"v{self.version}",
            "kind": "lora",
            "base_model": "sd-1.5",
            "triggers": [self.trigger],
            "subjects": [self.category],
            "styles": [self.style],
            "tags": [self.codename],
            "description": f"{self.codename.title()}, a {self.category}, trained on {STYLE_WORDS[self.style]} images",
            "created_at": self.created_at.isoformat(timespec="minutes"),
            "last_used_at": self.last_used_at.isoformat(timespec="minutes") if self.last_used_at else None,
        }


@dataclass
class Instance:
    instance_id: str
    query: str
    kind: str  # single | ambiguous | no_match
    category: str  # temporal | version | style | usage | recency | ambiguous | no_match
    subject: str | None
    ground_truth: dict
    now: str = NOW.date().isoformat()
    followup: dict | None = None
    constraints: dict = field(default_factory=dict)  # what the request asks, for the rubric judge


def build_repository(seed: int = 0, families_per_category: int = 5, versions: int = 10) -> list[Record]:
    rng = random.Random(seed)
    names = list(CODENAMES)
    rng.shuffle(names)
    records = []
    span = (NOW - START).days
    for c, category in enumerate(CATEGORIES):
        for f in range(families_per_category):
            codename = names[(c * families_per_category + f) % len(names)]
            days = sorted(rng.sample(range(span - 2), versions))
            for v, day in enumerate(days, start=1):
                created = START + dt.timedelta(days=day, hours=rng.randint(8, 20), minutes=rng.randint(0, 59))
                records.append(
                    Record(f"{codename}-{category}-v{v}", category, codename, v, rng.choice(STYLES), created)
                )
    # usage history: a third were used in the last two months, never two of one category on the same day
    for record in rng.sample(records, len(records) // 3):
        record.last_used_at = NOW - dt.timedelta(days=rng.randint(3, 60), hours=rng.randint(0, 10))
    return records


def distractor_records(count: int, seed: int = 0) -> list[Record]:
    """``count`` more checkpoints in the same shape (families of ten versions, two-word codenames that never
    collide with the Repo-Prompts families), for measuring how Check-in scales with repository size."""
    rng = random.Random(seed + 1)
    span = (NOW - START).days
    records: list[Record] = []
    pairs = ((a, b) for a in CODENAMES for b in CODENAMES if a != b)
    while len(records) < count:
        first, second = next(pairs)
        for category in CATEGORIES:
            codename = f"{first}-{second}"
            for v, day in enumerate(sorted(rng.sample(range(span - 2), 10)), start=1):
                created = START + dt.timedelta(days=day, hours=rng.randint(8, 20), minutes=rng.randint(0, 59))
                records.append(
                    Record(f"{codename}-{category}-v{v}", category, codename, v, rng.choice(STYLES), created)
                )
    return records[:count]


def write_cards(records: list[Record], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for record in records:
        (folder / f"{record.id}.yaml").write_text(yaml.safe_dump(record.card(), sort_keys=False))
    return folder


def _month_label(when: dt.datetime, with_year: bool = True) -> str:
    return f"{calendar.month_name[when.month]} {when.year}" if with_year else calendar.month_name[when.month]


def _same_month(a: dt.datetime, b: dt.datetime, with_year: bool = True) -> bool:
    return a.month == b.month and (a.year == b.year or not with_year)


class Generator:
    def __init__(self, records: list[Record], seed: int):
        self.records = records
        self.rng = random.Random(seed + 1)
        self.by_category: dict[str, list[Record]] = {}
        for r in records:
            self.by_category.setdefault(r.category, []).append(r)
        self.count = 0

    def _id(self) -> str:
        self.count += 1
        return f"rp-{self.count:04d}"

    def _match(self, pool: list[Record], *conditions: Callable[[Record], bool]) -> list[Record]:
        return [r for r in pool if all(cond(r) for cond in conditions)]

    def single(self, kind: str) -> Instance | None:
        r = self.rng.choice(self.records)
        cat_pool = self.by_category[r.category]
        fam_pool = [x for x in cat_pool if x.codename == r.codename]
        rng = self.rng
        if kind == "temporal":
            with_year = rng.random() < 0.7
            if rng.random() < 0.5:
                match = self._match(cat_pool, lambda x: _same_month(x.created_at, r.created_at, with_year))
                subject_text, subject = r.category, r.category
            else:
                match = self._match(fam_pool, lambda x: _same_month(x.created_at, r.created_at, with_year))
                subject_text, subject = f"{r.codename} {r.category}", r.category
            if match != [r]:
                return None
            month = _month_label(r.created_at, with_year)
            template = rng.choice(
                [
                    "the {m} {s} model on a beach",
                    "my {s} from {m}",
                    "use the {s} I trained in {m}, in a park",
                    "{s} created in {m}, sitting in the snow",
                ]
            )
            query = template.format(m=month, s=subject_text)
            constraints = {"subject": subject, "created": month}
        elif kind == "version":
            query = rng.choice(
                [
                    "{c} {s} v{n} on a beach",
                    "version {n} of my {c} {s}",
                    "the v{n} {c} {s} model",
                    "{c} {s} version {n} at night",
                ]
            ).format(c=r.codename, s=r.category, n=r.version)
            constraints = {"subject": r.category, "version": r.version}
            subject = r.category
        elif kind == "style":
            match = self._match(fam_pool, lambda x: x.style == r.style)
            if match != [r]:
                return None
            query = rng.choice(
                ["my {st} {c} {s}", "the {c} {s} {st} model in a forest", "a {st} of my {c} {s}"]
            ).format(st=STYLE_WORDS[r.style], c=r.codename, s=r.category)
            constraints = {"subject": r.category, "style": r.style}
            subject = r.category
        elif kind == "usage":
            if r.last_used_at is None:
                return None
            day = r.last_used_at.date()
            if sum(1 for x in cat_pool if x.last_used_at and x.last_used_at.date() == day) != 1:
                return None
            ago = (NOW.date() - day).days
            when = rng.choice([f"{ago} days ago", f"on {calendar.month_name[day.month]} {day.day}"])
            query = rng.choice(["the {s} I used {w}", "the {s} model I used {w}, on a rooftop"]).format(
                s=r.category, w=when
            )
            constraints = {"subject": r.category, "used": when}
            subject = r.category
        elif kind == "recency":
            newest = rng.random() < 0.6
            pick = max if newest else min
            if rng.random() < 0.5:
                target = pick(fam_pool, key=lambda x: x.created_at)
                subject_text = f"{r.codename} {r.category}"
            else:
                styled = [x for x in cat_pool if x.style == r.style]
                target = pick(styled, key=lambda x: x.created_at)
                subject_text = f"{STYLE_WORDS[r.style]} {r.category}"
            r = target
            word = rng.choice(["latest", "newest", "most recent"]) if newest else rng.choice(["oldest", "earliest"])
            query = f"my {word} {subject_text}" + rng.choice(["", " on a beach", " in the rain"])
            constraints = {
                "subject": r.category,
                "order": "newest" if newest else "oldest",
                "style": r.style if "style" in subject_text or subject_text.startswith(STYLE_WORDS[r.style]) else None,
            }
            subject = r.category
        else:
            raise ValueError(kind)
        return Instance(
            self._id(),
            query,
            "single",
            kind,
            subject,
            {"status": "selected", "checkpoint_id": r.id},
            constraints=constraints,
        )

    def ambiguous(self) -> Instance | None:
        r = self.rng.choice(self.records)
        cat_pool = self.by_category[r.category]
        fam_pool = [x for x in cat_pool if x.codename == r.codename]
        rng = self.rng
        shape = rng.choice(["month", "season", "family_year", "family_style"])
        if shape == "month":
            match = self._match(cat_pool, lambda x: _same_month(x.created_at, r.created_at, False))
            query = f"my {r.category} from {calendar.month_name[r.created_at.month]}"
        elif shape == "season":
            season = {
                3: "spring",
                4: "spring",
                5: "spring",
                6: "summer",
                7: "summer",
                8: "summer",
                9: "autumn",
                10: "autumn",
                11: "autumn",
            }.get(r.created_at.month)
            if season is None:
                return None
            months = {"spring": (3, 4, 5), "summer": (6, 7, 8), "autumn": (9, 10, 11)}[season]
            match = self._match(
                cat_pool, lambda x: x.created_at.year == r.created_at.year and x.created_at.month in months
            )
            query = f"the {season} {r.created_at.year} {r.category} model"
        elif shape == "family_year":
            match = self._match(fam_pool, lambda x: x.created_at.year == r.created_at.year)
            query = f"{r.codename} {r.category} from {r.created_at.year}"
        else:
            match = self._match(fam_pool, lambda x: x.style == r.style)
            query = f"the {STYLE_WORDS[r.style]} {r.codename} {r.category}"
        if not 2 <= len(match) <= 5:
            return None
        target = rng.choice(match)
        # the answer names an attribute that singles out the target among the plausible ones
        if sum(_same_month(x.created_at, target.created_at) for x in match) == 1:
            answer = f"the {_month_label(target.created_at)} one"
        elif sum(x.style == target.style for x in match) == 1:
            answer = f"the {STYLE_WORDS[target.style]} one"
        elif sum(x.codename == target.codename and x.version == target.version for x in match) == 1:
            answer = f"{target.codename} v{target.version}"
        else:
            return None
        return Instance(
            self._id(),
            query,
            "ambiguous",
            "ambiguous",
            r.category,
            {"status": "clarify", "candidate_ids": sorted(x.id for x in match), "checkpoint_id": target.id},
            followup={"answer": answer},
            constraints={"subject": r.category},
        )

    def no_match(self) -> Instance | None:
        rng = self.rng
        shape = rng.choice(["absent", "month", "version", "old"])
        if shape == "absent":
            thing = rng.choice(ABSENT_SUBJECTS)
            query = rng.choice(["my {t} model on a beach", "the {t} lora", "a {t} in space"]).format(t=thing)
            return Instance(
                self._id(), query, "no_match", "no_match", None, {"status": "no_match"}, constraints={"subject": thing}
            )
        r = rng.choice(self.records)
        cat_pool = self.by_category[r.category]
        if shape == "month":
            month = rng.randint(1, 12)
            if any(x.created_at.month == month for x in cat_pool):
                return None
            query = f"the {calendar.month_name[month]} {r.category} model"
        elif shape == "version":
            query = f"{r.codename} {r.category} v{rng.randint(11, 19)}"
        else:
            query = f"my {r.category} from {rng.choice([2021, 2022, 2023])}"
        return Instance(
            self._id(),
            query,
            "no_match",
            "no_match",
            r.category,
            {"status": "no_match"},
            constraints={"subject": r.category},
        )


def generate(
    seed: int = 0, single: int = 350, ambiguous: int = 100, no_match: int = 50
) -> tuple[list[Record], list[Instance]]:
    records = build_repository(seed)
    gen = Generator(records, seed)
    instances: list[Instance] = []
    kinds = ["temporal", "version", "style", "usage", "recency"]
    quota = {"temporal": 0.28, "version": 0.22, "style": 0.2, "usage": 0.05, "recency": 0.25}
    for kind in kinds:
        wanted = (
            round(single * quota[kind])
            if kind != kinds[-1]
            else single - sum(1 for i in instances if i.kind == "single")
        )
        made = 0
        for _ in range(wanted * 400):
            if made >= wanted:
                break
            inst = gen.single(kind)
            if inst and inst.query not in {i.query for i in instances}:
                instances.append(inst)
                made += 1
    for make, n in ((gen.ambiguous, ambiguous), (gen.no_match, no_match)):
        made = 0
        for _ in range(n * 400):
            if made >= n:
                break
            inst = make()
            if inst and inst.query not in {i.query for i in instances}:
                instances.append(inst)
                made += 1
    return records, instances


def write(out: Path, seed: int = 0) -> tuple[Path, Path]:
    records, instances = generate(seed)
    cards = write_cards(records, out / "cards")
    prompts = out / "repo-prompts.jsonl"
    with prompts.open("w") as handle:
        for inst in instances:
            handle.write(json.dumps(asdict(inst)) + "\n")
    return cards, prompts
