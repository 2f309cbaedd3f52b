"""Hostile files for every importer, shared by the import tests, the property-based fuzz test and
``benchmarks/fuzz_import.py``.

Everything is written as raw bytes (no torch, no safetensors library), so a generator can produce what no
well-behaved writer would: headers with strings for offsets, metadata that is not text, JSON nested a hundred
thousand deep, YAML alias bombs, and symlinks that lead out of the imported folder into ``outside/``.

The generators take a :class:`random.Random`. Hypothesis passes one it controls (``st.randoms()``), so failures
shrink; the benchmark passes a seeded one, so its figures are reproducible.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

SECRET = "OUTSIDE-SECRET"  # written only into files outside the imported folder
_serial = itertools.count()


# -- raw writers ---------------------------------------------------------------------------------------


def safetensors_bytes(header: object, data: bytes = b"", raw_header: bytes | None = None) -> bytes:
    """A safetensors file: 8-byte little-endian header length, the JSON header, then the tensor data."""
    raw = raw_header if raw_header is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


def lora_header(metadata: dict | None = None, size: int = 64, offsets: object = None) -> dict:
    """A header in kohya-ss LoRA key layout with one F32 tensor of ``size`` bytes."""
    header: dict = {
        "lora_unet_down_blocks_0_attn2_to_k.lora_down.weight": {
            "dtype": "F32",
            "shape": [size // 4],
            "data_offsets": offsets if offsets is not None else [0, size],
        }
    }
    if metadata is not None:
        header["__metadata__"] = metadata
    return header


def write_safetensors(
    path: Path,
    metadata: dict | None = None,
    offsets: object = None,
    raw_header: bytes | None = None,
    data: bytes | None = None,
) -> Path:
    data = os.urandom(64) if data is None else data  # random weights: every file has its own digest
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(safetensors_bytes(lora_header(metadata, len(data), offsets), data, raw_header))
    return path


def write_diffusers_folder(folder: Path, front_matter: str | None = None) -> Path:
    """A diffusers pipeline folder as far as the importer reads it: model_index.json, unet weights, README."""
    (folder / "unet").mkdir(parents=True, exist_ok=True)
    (folder / "model_index.json").write_text(
        json.dumps({"_class_name": "StableDiffusionPipeline", "_diffusers_version": "0.35.0"})
    )
    write_safetensors(folder / "unet" / "diffusion_pytorch_model.safetensors")
    if front_matter is not None:
        (folder / "README.md").write_text(f"---\n{front_matter}\n---\n# DreamBooth - {folder.name}\n")
    return folder


def write_textual_inversion(folder: Path, token: str = "<cat-toy>", concept: str = "object") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = os.urandom(64)
    header = {token: {"dtype": "F32", "shape": [16], "data_offsets": [0, len(data)]}}
    (folder / "learned_embeds.safetensors").write_bytes(safetensors_bytes(header, data))
    (folder / "token_identifier.txt").write_text(token)
    (folder / "type_of_concept.txt").write_text(concept)
    return folder


def civitai_version(version_id: int, model_id: int = 7, name: str = "v1.0") -> dict:
    """A model-version object as the Civitai Helper extension saves it next to the model file."""
    return {
        "id": version_id,
        "modelId": model_id,
        "name": name,
        "createdAt": "2023-04-02T10:11:12.000Z",
        "baseModel": "SD 1.5",
        "trainedWords": ["ghibli style"],
        "description": "<p>A <b>good</b> one.</p>",
        "model": {"name": f"Model {model_id}", "type": "LORA", "tags": ["anime"], "creator": {"username": "someone"}},
    }


def write_outside_secrets(outside: Path) -> dict[str, Path]:
    """Files outside the imported folder that hostile links point at; their content must never be read."""
    outside.mkdir(parents=True, exist_ok=True)
    secrets = {
        "text": outside / "secret.txt",
        "card": outside / "secret.yaml",
        "json": outside / "secret.json",
        "weights": outside / "secret.safetensors",
    }
    secrets["text"].write_text(f"<{SECRET}>")
    secrets["card"].write_text(f"id: {SECRET.lower()}\nname: {SECRET}\ncreated_at: 2025-01-01\ntriggers: [{SECRET}]\n")
    secrets["json"].write_text(json.dumps({**civitai_version(999_999_999), "trainedWords": [SECRET]}))
    write_safetensors(secrets["weights"], {"ss_output_name": SECRET, "modelspec.title": SECRET})
    (outside / "folder").mkdir(exist_ok=True)
    write_safetensors(outside / "folder" / "diffusion_pytorch_model.safetensors", {"modelspec.title": SECRET})
    return secrets


# -- values a stranger's file may hold -------------------------------------------------------------------

EXTREME_TEXT: tuple = (  # the right type, so it passes type checks and reaches the code behind them
    "",
    " ",
    ",",
    "<>",
    "nan",
    "1e20",
    "-inf",
    "2025-13-45",
    "0001-01-01T00:00:00+05:00",
    "9999-12-31T23:59:59-05:00",
    "../../outside/secret.txt",
    "/etc/passwd",
    "\x00",
    "\u202e",
    "\ud800",
    "<script>alert(1)</script>",
    "x" * 300,
    "a" * 5000,
    "\U0001f4a5" * 50,
    "v" + "9" * 5000,
    "9" * 5000,
    "v1." + ".".join(["9"] * 2000),
    "LORA",
    "SDXL 1.0",
)
HOSTILE_SCALARS: tuple = (None, True, False, 0, -1, 2**64, 10**300, 1e20, -1e20, float("nan"), float("inf"), -0.0)
CARD_KEYS = (
    "id",
    "name",
    "family",
    "version",
    "kind",
    "base_model",
    "creator",
    "triggers",
    "subjects",
    "styles",
    "tags",
    "description",
    "created_at",
    "last_used_at",
    "weights",
    "preview",
)
CIVITAI_KEYS = (
    "id",
    "modelId",
    "name",
    "createdAt",
    "publishedAt",
    "baseModel",
    "trainedWords",
    "description",
    "model",
)
CIVITAI_MODEL_KEYS = ("id", "name", "type", "tags", "creator", "description")
KOHYA_KEYS = (
    "ss_output_name",
    "ss_tag_frequency",
    "ss_training_started_at",
    "ss_training_finished_at",
    "ss_sd_model_name",
    "ss_base_model_version",
    "ss_network_module",
    "modelspec.title",
    "modelspec.date",
    "modelspec.trigger_phrase",
    "modelspec.tags",
    "modelspec.author",
    "modelspec.description",
    "modelspec.architecture",
)
README_KEYS = ("instance_prompt", "tags", "base_model", "license")


def nested(depth: int, leaf: object = 1) -> object:
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def hostile_value(rng: random.Random, depth: int = 0) -> object:
    """A value of the wrong type, size, shape or range for whatever field it lands in."""
    roll = rng.random()
    if roll < 0.4:
        return rng.choice(EXTREME_TEXT)
    if roll < 0.6 or depth > 2:
        return rng.choice(HOSTILE_SCALARS)
    if roll < 0.75:
        return [hostile_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if roll < 0.9:
        return {rng.choice(("name", "username", "id", "k")): hostile_value(rng, depth + 1)}
    return nested(rng.choice((3, 70, 300)))


def yaml_alias_bomb(levels: int, key: str = "instance_prompt") -> str:
    """A few hundred bytes that expand to 9**levels strings when a loader follows the aliases."""
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + f"\n{key}: *l{levels - 1}"


HOSTILE_YAML_TEXTS: tuple = (
    "id: x\nname: [unclosed\n",
    "- just\n- a list\n",
    "id: !!python/object/apply:os.system [echo pwned]\n",
    "id: x\nname: y\ncreated_at: 2025-13-45\n",
    "id: x\nname: y\ncreated_at: !!timestamp 2025-01-01 99:99\n",
    "id: x\nname: !!binary '@@@'\n",
    "? [a, b]\n: c\n",
    "id: x\n---\nid: y\n",
    "id: " + "9" * 5000 + "\n",
    "id: x\nname:\t\ty\n",
    "id: x\nname: y\nname: z\ncreated_at: 2025-01-01\n",
    "\ufeffid: bom\nname: bom\ncreated_at: 2025-01-01\n",
)


def hostile_yaml_text(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.3:
        return yaml_alias_bomb(rng.randint(2, 9), rng.choice(("name", "triggers", "instance_prompt", "tags")))
    if roll < 0.5:
        depth = rng.choice((65, 2000, 50_000))
        return "id: deep\nname: " + rng.choice(("[" * depth, "{a: " * depth, "- " * depth + "x"))
    return rng.choice(HOSTILE_YAML_TEXTS)


def hostile_json_text(rng: random.Random, document: object) -> str:
    """``document`` as JSON, or (one time in five) JSON that no parser should survive unguarded."""
    roll = rng.random()
    if roll < 0.08:
        return "[" * rng.choice((999, 100_000))
    if roll < 0.14:
        return '{"id": ' + "9" * 5000 + "}"
    if roll < 0.2:
        return json.dumps(document)[: rng.randint(0, 40)]
    return json.dumps(document)


def mutate(document: dict, keys: tuple[str, ...], rng: random.Random, count: int | None = None) -> dict:
    """``document`` with a few of ``keys`` given hostile values (or removed); mostly just one, so that the
    rest of the document stays valid and the hostile value reaches the code behind validation."""
    document = dict(document)
    count = count or (1 if rng.random() < 0.8 else rng.randint(2, 3))
    for key in rng.sample(keys, min(len(keys), count)):
        if rng.random() < 0.15:
            document.pop(key, None)
        else:
            document[key] = hostile_value(rng)
    return document


# -- a batch of samples: hostile files next to good ones -------------------------------------------------


@dataclass
class Sample:
    """One entry written into the imported folder: what the import report will name, and whether it is a
    well-formed file that must import whatever surrounds it."""

    path: Path
    generator: str
    good: bool = False


@dataclass
class Batch:
    """One imported folder, and the folder outside it that hostile links point into."""

    folder: Path
    outside: Path
    secrets: dict[str, Path] = field(default_factory=dict)
    samples: list[Sample] = field(default_factory=list)

    @classmethod
    def create(cls, base: Path) -> "Batch":
        base = base / f"batch-{next(_serial)}"
        (base / "import").mkdir(parents=True)
        return cls(base / "import", base / "outside", write_outside_secrets(base / "outside"))

    def name(self, kind: str) -> str:
        """A name no other sample in this process uses, so good files never collide across batches."""
        return f"{kind}-{next(_serial)}"

    def link_outside(self, path: Path, rng: random.Random) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        path.symlink_to(rng.choice(list(self.secrets.values())))
        return path

    def files(self) -> int:
        return sum(1 for _ in self.folder.rglob("*"))


def good_card(rng: random.Random, batch: Batch) -> Sample:
    card_id = batch.name("good-card")
    card = {
        "id": card_id,
        "name": f"good card {card_id}",
        "created_at": "2025-04-11",
        "triggers": [f"<{card_id}>"],
        "tags": ["plush", "bear"],
        "description": "A well-formed card.",
    }
    if rng.random() < 0.4:
        write_safetensors(batch.folder / "weights" / f"{card_id}.safetensors", {"ss_output_name": card_id})
        card["weights"] = f"weights/{card_id}.safetensors"
    suffix = rng.choice((".yaml", ".json"))
    path = batch.folder / f"{card_id}{suffix}"
    path.write_text(json.dumps(card))
    return Sample(path, "card", good=True)


def good_kohya(rng: random.Random, batch: Batch) -> Sample:
    name = batch.name("good-kohya")
    meta = {
        "ss_output_name": name,
        "ss_training_started_at": "1712822400.5",
        "ss_tag_frequency": json.dumps({"10_bear": {f"trg{name}": 24, "plush": 11}}),
    }
    return Sample(write_safetensors(batch.folder / f"{name}.safetensors", meta), "kohya", good=True)


def good_civitai(rng: random.Random, batch: Batch) -> Sample:
    name = batch.name("good-civitai")
    model = write_safetensors(batch.folder / f"{name}.safetensors", {"ss_output_name": name})
    path = model.with_name(f"{name}.civitai.info")
    path.write_text(json.dumps(civitai_version(next(_serial) + 10_000_000, name=f"v{rng.randint(1, 9)}.0")))
    return Sample(path, "civitai", good=True)


def good_diffusers(rng: random.Random, batch: Batch) -> Sample:
    folder = write_diffusers_folder(
        batch.folder / batch.name("good-pipeline"),
        "base_model: runwayml/stable-diffusion-v1-5\ninstance_prompt: a photo of sks dog\ntags:\n- corgi",
    )
    return Sample(folder, "diffusers", good=True)


def good_textual_inversion(rng: random.Random, batch: Batch) -> Sample:
    name = batch.name("good-concept")
    return Sample(write_textual_inversion(batch.folder / name, f"<{name}>"), "textual_inversion", good=True)


def hostile_card(rng: random.Random, batch: Batch) -> Sample:
    card_id = batch.name("hostile-card")
    path = batch.folder / f"{card_id}{rng.choice(('.yaml', '.yml', '.json'))}"
    roll = rng.random()
    if roll < 0.2:
        path.write_text(hostile_yaml_text(rng))
    elif roll < 0.23:
        path.write_bytes(b"id: \xff\xfe\nname: x\n")
    else:
        card = mutate({"id": card_id, "name": card_id, "created_at": "2025-01-01", "triggers": ["x"]}, CARD_KEYS, rng)
        if rng.random() < 0.3:
            card[rng.choice(("weights", "preview"))] = rng.choice(
                (
                    "../outside/secret.safetensors",
                    str(batch.secrets["weights"]),
                    f"{card_id}-link.safetensors",
                    "missing.safetensors",
                )
            )
            batch.link_outside(batch.folder / f"{card_id}-link.safetensors", rng)
        path.write_text(hostile_json_text(rng, card))
    return Sample(path, "card")


def hostile_civitai(rng: random.Random, batch: Batch) -> Sample:
    name = batch.name("hostile-civitai")
    version = civitai_version(next(_serial) + 20_000_000)
    roll = rng.random()
    if roll < 0.5:
        document: object = mutate(version, CIVITAI_KEYS, rng)
    elif roll < 0.75:
        document = {**version, "model": mutate(version["model"], CIVITAI_MODEL_KEYS, rng)}
    else:
        document = {
            "id": next(_serial),
            "name": name,
            "modelVersions": rng.choice((hostile_value(rng), [hostile_value(rng), version])),
        }
    suffix = ".civitai.info" if rng.random() < 0.7 else ".json"
    path = batch.folder / f"{name}{suffix}"
    path.write_text(hostile_json_text(rng, document))
    model = batch.folder / f"{name}.safetensors"
    kind = rng.choice(("none", "weights", "link", "pickle", "dangling"))
    if kind == "weights":
        write_safetensors(model)
    elif kind == "link":
        batch.link_outside(model, rng)
    elif kind == "pickle":
        (batch.folder / f"{name}.ckpt").write_bytes(b"\x80\x04K\x01.")
    elif kind == "dangling":
        model.symlink_to(batch.outside / "gone.safetensors")
    return Sample(path, "civitai")


def hostile_kohya(rng: random.Random, batch: Batch) -> Sample:
    path = batch.folder / f"{batch.name('hostile-kohya')}.safetensors"
    roll = rng.random()
    if roll < 0.45:
        meta = mutate(
            {"ss_output_name": path.stem, "ss_training_started_at": "1712822400"}, KOHYA_KEYS, rng, rng.randint(1, 5)
        )
        if rng.random() < 0.5:
            meta = {k: v if isinstance(v, str) else json.dumps(v) for k, v in meta.items()}  # text, as the format says
        write_safetensors(path, meta)
    elif roll < 0.6:
        write_safetensors(
            path,
            {"ss_output_name": path.stem},
            offsets=rng.choice(
                (["0", "64"], [64, 0], [-1, 64], [0, 2**70], [0.5, 64], [True, 64], [0], None, "0-64", {"a": 1})
            ),
        )
    elif roll < 0.8:
        write_safetensors(
            path,
            raw_header=rng.choice(
                (
                    b"[" * 100_000,
                    b'{"a": ' + b"9" * 5000 + b"}",
                    b"\xff\xfe",
                    b"[]",
                    b'"text"',
                    b"{}",
                    b'{"__metadata__": 5}',
                    b'{"__metadata__": {"ss_output_name": 5}}',
                    b'{"t": {"data_offsets": [0, 64]}, "__metadata__": [1]}',
                )
            ),
        )
    else:
        path.write_bytes(
            rng.choice(
                (
                    b"",
                    b"\x01\x02",
                    struct.pack("<Q", 2**63) + b"{}",
                    struct.pack("<Q", 0),
                    b"PK\x03\x04" + os.urandom(8),
                    b"\x80\x04K\x01." + os.urandom(8),
                )
            )
        )
    return Sample(path, "kohya")


def hostile_diffusers(rng: random.Random, batch: Batch) -> Sample:
    folder = batch.folder / batch.name("hostile-pipeline")
    roll = rng.random()
    if roll < 0.35:
        front = rng.choice(
            (hostile_yaml_text(rng), json.dumps(mutate({"instance_prompt": "a photo of sks dog"}, README_KEYS, rng)))
        )
        write_diffusers_folder(folder, front)
        return Sample(folder, "diffusers")
    write_diffusers_folder(folder, "instance_prompt: a photo of sks dog")
    target = rng.choice(
        (
            "README.md",
            "model_index.json",
            "unet/diffusion_pytorch_model.safetensors",
            "text_encoder/model.safetensors",
            "unet",
            "index-content",
            "bin-only",
        )
    )
    if target == "index-content":
        (folder / "model_index.json").write_text(
            hostile_json_text(rng, mutate({"_class_name": "StableDiffusionPipeline"}, ("_class_name",), rng))
        )
    elif target == "bin-only":
        (folder / "unet" / "diffusion_pytorch_model.safetensors").unlink()
        (folder / "unet" / "diffusion_pytorch_model.bin").write_bytes(b"\x80\x04K\x01.")
    elif target == "unet":
        for child in (folder / "unet").iterdir():
            child.unlink()
        (folder / "unet").rmdir()
        (folder / "unet").symlink_to(batch.outside / "folder", target_is_directory=True)
    else:
        batch.link_outside(folder / target, rng)
    return Sample(folder, "diffusers")


def hostile_textual_inversion(rng: random.Random, batch: Batch) -> Sample:
    name = batch.name("hostile-concept")
    folder = write_textual_inversion(batch.folder / name, f"<{name}>")
    target = rng.choice(
        (
            "token_identifier.txt",
            "type_of_concept.txt",
            "learned_embeds.safetensors",
            "token-content",
            "embeds-content",
        )
    )
    if target == "token-content":
        (folder / "token_identifier.txt").write_bytes(
            rng.choice((b"", b"   ", b"\xff\xfe", b"x" * 5000, b"<" + b"\x00" * 10 + b">"))
        )
    elif target == "embeds-content":
        write_safetensors(
            folder / "learned_embeds.safetensors",
            raw_header=rng.choice((b"{}", b"[" * 100_000, b'{"__metadata__": {}}')),
        )
    else:
        batch.link_outside(folder / target, rng)
    return Sample(folder, "textual_inversion")


def hostile_links(rng: random.Random, batch: Batch) -> Sample:
    """Bare links in the imported folder: out of it, to themselves, to nothing."""
    name = batch.name("hostile-link")
    kind = rng.choice(("file", "dir", "loop", "dangling"))
    path = batch.folder / f"{name}{rng.choice(('.safetensors', '.yaml', '.json', '.civitai.info', '.txt', ''))}"
    if kind == "file":
        batch.link_outside(path, rng)
    elif kind == "dir":
        path.symlink_to(batch.outside, target_is_directory=True)
    elif kind == "loop":
        path.symlink_to(path)
    else:
        path.symlink_to(batch.outside / "gone")
    return Sample(path, "links")


GOOD: tuple[Callable[[random.Random, Batch], Sample], ...] = (
    good_card,
    good_kohya,
    good_civitai,
    good_diffusers,
    good_textual_inversion,
)
HOSTILE: tuple[Callable[[random.Random, Batch], Sample], ...] = (
    hostile_card,
    hostile_civitai,
    hostile_kohya,
    hostile_diffusers,
    hostile_textual_inversion,
    hostile_links,
)


def write_batch(rng: random.Random, base: Path, hostile: int, good: int) -> Batch:
    """A folder of ``hostile`` hostile samples and ``good`` well-formed ones, shuffled by name."""
    batch = Batch.create(base)
    makers = [rng.choice(HOSTILE) for _ in range(hostile)] + [rng.choice(GOOD) for _ in range(good)]
    rng.shuffle(makers)
    batch.samples = [make(rng, batch) for make in makers]
    return batch


# -- what an import may change -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    rows: dict[str, tuple[str, str]]  # id -> (content hash, family)
    families: frozenset[str]
    indexed: frozenset[str]
    secret_rows: frozenset[str]  # ids whose card mentions the outside secret


def snapshot(repository) -> Snapshot:
    from sqlalchemy import select

    from personalq.repository.orm import Checkpoint, Family

    with repository.sessions() as session:
        rows = session.execute(
            select(Checkpoint.id, Checkpoint.content_hash, Checkpoint.family_id, Checkpoint.card_json)
        ).all()
        families = frozenset(session.scalars(select(Family.id)))
    return Snapshot(
        {r.id: (r.content_hash, r.family_id) for r in rows},
        families,
        frozenset(repository.dense.fingerprints()),
        frozenset(r.id for r in rows if SECRET in r.card_json),
    )


def unexplained_changes(before: Snapshot, after: Snapshot, report) -> list[str]:
    """Changes to the repository that no imported or updated outcome accounts for: what refused files left."""
    explained = {o.checkpoint_id for o in report.outcomes if o.status in ("imported", "updated")}
    changed = {i for i in before.rows.keys() | after.rows.keys() if before.rows.get(i) != after.rows.get(i)}
    problems = [f"row {i} changed by no successful entry" for i in sorted(changed - explained)]
    used = {family for _, family in after.rows.values()}
    problems += [f"family {f} added with no checkpoint" for f in sorted(after.families - before.families - used)]
    if after.indexed != set(after.rows):
        problems.append(f"dense index disagrees with SQLite on {sorted(after.indexed ^ set(after.rows))[:5]}")
    problems += [f"row {i} holds text read from outside the folder" for i in sorted(after.secret_rows)]
    return problems


# -- watching reads --------------------------------------------------------------------------------------


class ReadWatch:
    """Records every file Python opens under a folder while active, through an audit hook (PEP 578).

    Audit hooks cannot be removed, so one hook is installed per process and switched on and off.
    """

    _installed: "ReadWatch | None" = None

    def __init__(self) -> None:
        self.watched: Path | None = None
        self.opened: list[str] = []

    @classmethod
    def instance(cls) -> "ReadWatch":
        if cls._installed is None:
            cls._installed = cls()
            sys.addaudithook(cls._installed._hook)
        return cls._installed

    def _hook(self, event: str, args: tuple) -> None:
        if self.watched is None or event != "open" or not isinstance(args[0], (str, bytes, os.PathLike)):
            return
        path = os.fsdecode(args[0])
        try:
            resolved = Path(path).resolve()
        except (OSError, RuntimeError):
            return
        if resolved == self.watched or self.watched in resolved.parents:
            self.opened.append(path)

    def watch(self, folder: Path) -> "ReadWatch":
        self.watched, self.opened = folder.resolve(), []
        return self

    def __enter__(self) -> "ReadWatch":
        return self

    def __exit__(self, *exc) -> None:
        self.watched = None
