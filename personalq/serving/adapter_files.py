"""Reading LoRA and textual-inversion files in the formats people download, into what diffusers applies.

LoRAs: kohya-ss files (``lora_unet_…``/``lora_te…`` with ``.alpha``, LoCon convolutions included, SGM block names
for SDXL), diffusers' ``pytorch_lora_weights.safetensors`` (``unet.…lora_A.weight``, older ``lora.down`` keys, and
the ``lora_adapter_metadata`` header where ``lora_alpha`` lives) and PEFT folders (``adapter_config.json`` +
``adapter_model.safetensors``, ``base_model.model.…`` keys). :func:`read_lora` returns a state dict to hand to
``pipe.load_lora_weights(dict(state_dict), adapter_name=...)``. diffusers converts kohya files itself, alphas
included; an in-memory dict carries no header, so for the other two layouts the scale ``lora_alpha / r`` (from the
config or header metadata, with ``alpha_pattern`` and rsLoRA) is multiplied into the up weights here, as diffusers
does itself when it converts LoKr or Wan files.

Textual inversions: AUTOMATIC1111 / kohya ``emb_params``, flattened ``string_to_param``, diffusers'
``{token: tensor}`` (``learned_embeds.safetensors``, with ``learned_embeds_2.safetensors`` for SDXL's second
encoder) and SDXL's ``clip_l``/``clip_g``. :func:`read_textual_inversion` returns one tensor per text encoder;
:func:`load_textual_inversion` and :func:`unload_textual_inversion` apply it and take every added token off again.

Which base a file was made for is :mod:`personalq.repository.importers.architecture`'s to tell.
Pickled files (``.bin``, ``.pt``, ``.ckpt``…) are refused and never opened.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import torch
from safetensors import SafetensorError

from personalq.repository.importers.base import PICKLE_SUFFIXES, ImportProblem, read_safetensors_header

DIFFUSERS_LORA_FILE = "pytorch_lora_weights.safetensors"
PEFT_CONFIG = "adapter_config.json"
PEFT_WEIGHTS = "adapter_model.safetensors"
EMBEDDING_FILES = ("learned_embeds.safetensors", "learned_embeds_2.safetensors")
MAX_CONFIG_BYTES = 1 << 20
MAX_EMBEDDING_VECTORS = 75  # CLIP's 77 positions less the start and end tokens
PEFT_DEFAULT_ALPHA = 8  # LoraConfig's lora_alpha when a config leaves it out

_KOHYA_PREFIXES = {
    "lora_unet_": "unet",
    "lora_te_": "text_encoder",
    "lora_te1_": "text_encoder",
    "lora_te2_": "text_encoder_2",
}
_COMPONENTS = ("unet", "text_encoder", "text_encoder_2")
# (down, up) suffixes of the LoRA layouts diffusers reads, newest first
_PAIRS = (
    (".lora_A.weight", ".lora_B.weight"),
    (".lora.down.weight", ".lora.up.weight"),
    (".lora_linear_layer.down.weight", ".lora_linear_layer.up.weight"),
    ("_lora.down.weight", "_lora.up.weight"),
    (".lora_down.weight", ".lora_up.weight"),
)
_UNSUPPORTED = {  # marker in a tensor name -> what it is
    "hada_w1": "a LyCORIS LoHa",
    "lokr_w1": "a LyCORIS LoKr",
    "lora_mid": "a LyCORIS LoCon with Tucker decomposition (lora_mid)",
    "dora_scale": "a DoRA (diffusers drops its dora_scale for Stable Diffusion, so it would load wrong)",
    "lora_magnitude_vector": "a DoRA",
}


class AdapterFileError(ValueError):
    """A file that is not a LoRA or embedding this server can apply; the message is shown to the person as-is."""


# --- headers ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Header:
    """A safetensors file's tensor names and shapes and its ``__metadata__``, read without loading any tensor."""

    path: Path
    shapes: dict[str, tuple[int, ...]]
    metadata: dict[str, str] = field(default_factory=dict)


def refuse_pickle(path: Path) -> None:
    if path.suffix.lower() in PICKLE_SUFFIXES:
        raise AdapterFileError(
            f"{path.name} is a pickle file ({path.suffix}), which can run arbitrary code when loaded; it is never "
            "opened here. Convert it to .safetensors and use that."
        )


def read_header(path: Path) -> Header:
    path = Path(path)
    refuse_pickle(path)
    if not path.is_file():
        raise AdapterFileError(f"{path} does not exist or is not a file")
    if path.suffix.lower() != ".safetensors":
        raise AdapterFileError(f"{path.name}: only .safetensors adapter files are read, not {path.suffix or 'no'}")
    try:  # the repository's header reader: pickles renamed .safetensors, lengths and offsets checked, no tensor read
        header = read_safetensors_header(path, path.parent)
    except (ImportProblem, OSError) as exc:
        raise AdapterFileError(f"{path.name} is not a readable safetensors file: {exc}") from exc
    raw = header.pop("__metadata__", None) or {}
    metadata = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
    shapes = {key: tuple(entry.get("shape", ())) for key, entry in header.items() if isinstance(entry, dict)}
    if not shapes:
        raise AdapterFileError(f"{path.name} holds no tensors")
    return Header(path, shapes, dict(metadata))


def _load_tensors(path: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    try:
        return load_file(str(path), device="cpu")
    except (SafetensorError, OSError) as exc:
        raise AdapterFileError(f"{path.name}: cannot read its tensors: {exc}") from exc


def _read_json(path: Path) -> dict:
    refuse_pickle(path)
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise AdapterFileError(f"{path.name} is larger than {MAX_CONFIG_BYTES:,} bytes; not an adapter config")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise AdapterFileError(f"{path.name} is not valid JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise AdapterFileError(f"{path.name} should hold a JSON object")
    return document


def _sample(names, limit: int = 3) -> str:
    names = list(names)
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


# --- LoRA -------------------------------------------------------------------------------------------------------

LoraLayout = Literal["kohya", "diffusers", "peft"]


@dataclass(frozen=True)
class LoraWeights:
    """What diffusers needs to apply a LoRA: ``pipe.load_lora_weights(dict(weights.state_dict), adapter_name=...)``
    (a copy: diffusers consumes the dict), then ``pipe.set_adapters(names, adapter_weights)`` with every adapter of
    the request at its weight (:func:`personalq.serving.checkpoints.set_applied`)."""

    state_dict: dict[str, torch.Tensor]
    layout: LoraLayout
    modules: dict[str, int]  # LoRA modules in the file per component ("unet", "text_encoder", "text_encoder_2")
    alpha_folded: bool  # the scale lora_alpha / r (not 1) was multiplied into the up weights
    metadata: dict[str, str]  # the weights file's header metadata (ss_*, modelspec.*, lora_adapter_metadata)


def lora_weights_file(path: Path) -> tuple[Path, LoraLayout | None]:
    """The safetensors file of a LoRA given as a file or a folder, and the layout the folder's files name."""
    path = Path(path)
    refuse_pickle(path)
    if path.is_dir():
        if (path / PEFT_CONFIG).is_file():
            if not (path / PEFT_WEIGHTS).is_file():
                pickled = (path / "adapter_model.bin").is_file()
                raise AdapterFileError(
                    f"{path.name}: a PEFT folder without {PEFT_WEIGHTS}"
                    + (" (only the pickled adapter_model.bin, which is never opened)" if pickled else "")
                )
            return path / PEFT_WEIGHTS, "peft"
        if (path / DIFFUSERS_LORA_FILE).is_file():
            return path / DIFFUSERS_LORA_FILE, None
        files = sorted(p for p in path.glob("*.safetensors") if p.name not in EMBEDDING_FILES)
        if len(files) == 1:
            return files[0], None
        pickles = sorted(p.name for p in path.iterdir() if p.suffix.lower() in PICKLE_SUFFIXES)
        if not files and pickles:
            refuse_pickle(path / pickles[0])
        raise AdapterFileError(
            f"{path.name}: no LoRA weights found (expected {DIFFUSERS_LORA_FILE}, a PEFT folder with {PEFT_CONFIG}, "
            f"or a single .safetensors file; found {len(files)} .safetensors files)"
        )
    if path.name == PEFT_WEIGHTS and (path.parent / PEFT_CONFIG).is_file():
        return path, "peft"
    return path, None


def lora_layout(header: Header) -> LoraLayout:
    """The layout of a LoRA file, or :class:`AdapterFileError` naming what the file is instead."""
    names = list(header.shapes)
    name = header.path.name
    for marker, what in _UNSUPPORTED.items():
        if any(marker in n for n in names):
            raise AdapterFileError(f"{name} is {what}, which this server does not apply")
    if all(n.startswith(tuple(_KOHYA_PREFIXES)) for n in names):
        odd = [n for n in names if not n.endswith((".lora_down.weight", ".lora_up.weight", ".alpha"))]
        if odd:
            raise AdapterFileError(f"{name}: kohya LoRA with tensors diffusers cannot apply: {_sample(odd)}")
        return "kohya"
    if all(n.startswith("base_model.model.") for n in names) and any(".lora_A." in n for n in names):
        odd = [n for n in names if not n.endswith((".lora_A.weight", ".lora_B.weight"))]
        if odd:
            raise AdapterFileError(f"{name}: PEFT adapter with tensors diffusers cannot apply: {_sample(odd)}")
        return "peft"
    if all(n.split(".", 1)[0] in _COMPONENTS for n in names) and all("lora" in n for n in names):
        return "diffusers"
    raise _not_a_lora(header)


def _not_a_lora(header: Header) -> AdapterFileError:
    names = list(header.shapes)
    kind = _embedding_layout(header)
    if kind:
        return AdapterFileError(f"{header.path.name} is a textual-inversion embedding ({kind}), not a LoRA")
    if any(n.startswith(("model.diffusion_model.", "first_stage_model.", "cond_stage_model.")) for n in names):
        return AdapterFileError(f"{header.path.name} is a full Stable Diffusion checkpoint, not a LoRA")
    if any(n.startswith(("conv_in.", "down_blocks.", "text_model.", "encoder.", "decoder.")) for n in names):
        return AdapterFileError(f"{header.path.name} holds a diffusers model's own weights, not a LoRA")
    if any("lora" in n.lower() for n in names):
        return AdapterFileError(f"{header.path.name}: a LoRA layout this server does not know: {_sample(names)}")
    return AdapterFileError(
        f"{header.path.name} is not a LoRA: none of its {len(names)} tensors is named like one ({_sample(names)})"
    )


def _pairs(names) -> dict[str, tuple[str, str]]:
    """module name (as written, component prefix included) -> (down key, up key)."""
    found = {}
    for name in names:
        for down, up in _PAIRS:
            if name.endswith(down):
                module = name[: -len(down)]
                found[module] = (name, module + up)
                break
    return found


def _component(module: str, layout: LoraLayout) -> str:
    if layout == "kohya":
        return next(c for prefix, c in _KOHYA_PREFIXES.items() if module.startswith(prefix))
    return module.split(".", 1)[0]


def _pattern_value(patterns: dict, module: str, default):
    """peft's ``get_pattern_key``: a pattern applies to a module whose name matches it whole or after a ``.``
    (peft reads patterns as regular expressions; a malformed one matches nothing here)."""
    for key, value in (patterns or {}).items():
        if module == key or module.endswith("." + key):
            return value
        try:
            if re.match(rf"(.*\.)?({key})$", module):
                return value
        except re.error:
            continue
    return default


def _scale(config: dict, module: str, rank: int) -> float:
    """peft's LoRA scaling for one module: ``lora_alpha / r`` (``/ sqrt(r)`` with rsLoRA), patterns applied."""
    alpha = float(_pattern_value(config.get("alpha_pattern"), module, config.get("lora_alpha", PEFT_DEFAULT_ALPHA)))
    return alpha / (rank**0.5 if config.get("use_rslora") else rank)


def _check_config(config: dict, where: str) -> None:
    peft_type = str(config.get("peft_type", "LORA")).upper()
    if peft_type != "LORA":
        raise AdapterFileError(f"{where}: a {peft_type} adapter, not a LoRA")
    if config.get("use_dora"):
        raise AdapterFileError(f"{where}: a DoRA adapter, which this server does not apply")
    for key in ("lora_alpha", "r"):
        value = config.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            raise AdapterFileError(f"{where}: '{key}' should be a positive number, got {value!r}")


def _fold(state_dict: dict[str, torch.Tensor], configs: dict[str, dict]) -> bool:
    """Multiply each module's scale into its up weight, in place; ``configs``: component -> LoraConfig fields."""
    folded = False
    for module, (down, up) in _pairs(state_dict).items():
        component, _, inner = module.partition(".")
        config = configs.get(component)
        if config is None or up not in state_dict:
            continue
        scale = _scale(config, inner, state_dict[down].shape[0])
        if scale != 1.0:
            state_dict[up] = (state_dict[up].float() * scale).to(state_dict[up].dtype)
            folded = True
    return folded


def _diffusers_configs(metadata: dict[str, str], name: str) -> dict[str, dict]:
    """Per component, the ``LoraConfig`` fields ``save_lora_weights`` wrote into the header (``unet.lora_alpha``…)."""
    raw = metadata.get("lora_adapter_metadata")
    if not raw:
        return {}
    try:
        packed = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise AdapterFileError(f"{name}: malformed lora_adapter_metadata in the header: {exc}") from exc
    if not isinstance(packed, dict):
        raise AdapterFileError(f"{name}: lora_adapter_metadata should be a JSON object")
    configs: dict[str, dict] = {}
    for key, value in packed.items():
        component, _, field_name = key.partition(".")
        if component in _COMPONENTS and field_name:
            configs.setdefault(component, {})[field_name] = value
    for component, config in configs.items():
        _check_config(config, f"{name} ({component})")
    return configs


def read_lora(path: Path) -> LoraWeights:
    """A LoRA file or folder, checked from its header first, as the state dict ``load_lora_weights`` takes.

    kohya files pass unchanged (diffusers maps their names, SDXL's SGM blocks and their ``.alpha`` scales itself).
    PEFT folders get diffusers' ``unet.`` prefix in place of ``base_model.model.``; PEFT and diffusers files get
    their ``lora_alpha / r`` scale folded into the up weights, since a dict has no header to carry it.
    """
    file, named = lora_weights_file(Path(path))
    header = read_header(file)
    layout = lora_layout(header)
    if named == "peft" and layout != "peft":
        raise AdapterFileError(f"{file.name}: next to {PEFT_CONFIG} but its tensors are not base_model.model.* LoRA")
    state_dict = _load_tensors(file)
    if layout == "kohya":
        folded = False
        modules = _count(state_dict, layout)
    elif layout == "diffusers":
        folded = _fold(state_dict, _diffusers_configs(header.metadata, file.name))
        modules = _count(state_dict, layout)
    else:
        config_path = file.parent / PEFT_CONFIG
        if not config_path.is_file():
            raise AdapterFileError(f"{file.name}: PEFT weights without the {PEFT_CONFIG} that gives their scale")
        config = _read_json(config_path)
        _check_config(config, PEFT_CONFIG)
        inner = {k.removeprefix("base_model.model."): v for k, v in state_dict.items()}
        component = "text_encoder" if all(k.startswith("text_model.") for k in inner) else "unet"
        state_dict = {f"{component}.{k}": v for k, v in inner.items()}
        folded = _fold(state_dict, {component: config})
        modules = _count(state_dict, "diffusers")
    return LoraWeights(state_dict, layout, modules, folded, header.metadata)


def _count(names, layout: LoraLayout) -> dict[str, int]:
    counts: dict[str, int] = {}
    for module in _pairs(names):
        component = _component(module, layout)
        counts[component] = counts.get(component, 0) + 1
    return counts


# --- textual inversion ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextualInversion:
    """One embedding's vectors per text encoder (``"text_encoder"``, and ``"text_encoder_2"`` for SDXL)."""

    embeddings: dict[str, torch.Tensor]  # component -> [n_vectors, width]
    layout: str  # "emb_params", "string_to_param", "diffusers", "clip_l/clip_g"
    token: str | None = None  # the token the file itself names (diffusers' key, token_identifier.txt)
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def n_vectors(self) -> int:
        return next(iter(self.embeddings.values())).shape[0]

    def tokens(self, token: str) -> list[str]:
        """The tokens ``load_textual_inversion`` adds for ``token``: one per vector (``tok``, ``tok_1``…)."""
        return [token] + [f"{token}_{i}" for i in range(1, self.n_vectors)]


def _embedding_layout(header: Header) -> str | None:
    names = set(header.shapes)
    if names & {"clip_l", "clip_g"} and names <= {"clip_l", "clip_g"}:
        return "clip_l/clip_g"
    if names == {"emb_params"}:
        return "emb_params"
    if names and all(n.startswith("string_to_param") for n in names) and len(names) == 1:
        return "string_to_param"
    if len(names) == 1:
        (shape,) = header.shapes.values()
        (name,) = names
        small = len(shape) == 1 or (len(shape) == 2 and shape[0] <= MAX_EMBEDDING_VECTORS)
        if small and "lora" not in name and not name.endswith((".weight", ".bias")):
            return "diffusers"
    return None


def _vectors(tensor: torch.Tensor, where: str) -> torch.Tensor:
    if tensor.dim() == 1:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() != 2 or not tensor.is_floating_point() or not 1 <= tensor.shape[0] <= MAX_EMBEDDING_VECTORS:
        raise AdapterFileError(f"{where}: expected [vectors, width] floats, got {list(tensor.shape)} {tensor.dtype}")
    return tensor


def read_textual_inversion(path: Path) -> TextualInversion:
    """An embedding file, or a diffusers concept folder (``learned_embeds.safetensors``, ``token_identifier.txt``,
    and ``learned_embeds_2.safetensors`` for SDXL's second encoder), as one tensor per text encoder."""
    path = Path(path)
    refuse_pickle(path)
    token = None
    second = None
    if path.is_dir():
        folder = path
        path = folder / EMBEDDING_FILES[0]
        if not path.is_file():
            pickled = sorted(p.name for p in folder.iterdir() if p.suffix.lower() in PICKLE_SUFFIXES)
            if pickled:
                refuse_pickle(folder / pickled[0])
            raise AdapterFileError(f"{folder.name}: no {EMBEDDING_FILES[0]} in the folder")
        if (folder / "token_identifier.txt").is_file():
            with (folder / "token_identifier.txt").open("rb") as handle:
                token = handle.read(256).decode("utf-8", errors="replace").strip() or None
        if (folder / EMBEDDING_FILES[1]).is_file():
            second = folder / EMBEDDING_FILES[1]
    header = read_header(path)
    layout = _embedding_layout(header)
    if layout is None:
        raise AdapterFileError(
            f"{path.name} is not a textual-inversion embedding: expected emb_params, clip_l/clip_g or one "
            f"[vectors, width] tensor, found {len(header.shapes)} tensors ({_sample(header.shapes)})"
        )
    tensors = _load_tensors(path)
    if layout == "clip_l/clip_g":
        if set(tensors) != {"clip_l", "clip_g"}:
            raise AdapterFileError(f"{path.name}: an SDXL embedding needs both clip_l and clip_g")
        embeddings = {
            "text_encoder": _vectors(tensors["clip_l"], f"{path.name} clip_l"),
            "text_encoder_2": _vectors(tensors["clip_g"], f"{path.name} clip_g"),
        }
        if embeddings["text_encoder"].shape[0] != embeddings["text_encoder_2"].shape[0]:
            raise AdapterFileError(f"{path.name}: clip_l and clip_g have different numbers of vectors")
    else:
        ((key, tensor),) = tensors.items()
        if layout == "diffusers":
            token = token or key
        embeddings = {"text_encoder": _vectors(tensor, f"{path.name} {key}")}
        if second is not None:
            if _embedding_layout(read_header(second)) != "diffusers":
                raise AdapterFileError(f"{second.name}: expected one [vectors, width] tensor")
            (tensor_2,) = _load_tensors(second).values()
            embeddings["text_encoder_2"] = _vectors(tensor_2, second.name)
            if embeddings["text_encoder_2"].shape[0] != embeddings["text_encoder"].shape[0]:
                raise AdapterFileError(f"{path.parent.name}: the two learned_embeds files have different lengths")
            layout = "diffusers (SDXL)"
    return TextualInversion(embeddings, layout, token, header.metadata)


def _encoder_and_tokenizer(pipe, component: str):
    encoder = getattr(pipe, component, None)
    tokenizer = getattr(pipe, "tokenizer" if component == "text_encoder" else "tokenizer_2", None)
    return encoder, tokenizer


def check_textual_inversion(pipe, embedding: TextualInversion) -> None:
    """Refuse an embedding whose encoders or widths are not the pipeline's, with a message for a person."""
    has_second = getattr(pipe, "text_encoder_2", None) is not None
    if has_second != ("text_encoder_2" in embedding.embeddings):
        made = "SDXL" if "text_encoder_2" in embedding.embeddings else "SD 1.x/2.x"
        raise AdapterFileError(f"this embedding ({embedding.layout}) was made for {made}, not for this base")
    for component, tensor in embedding.embeddings.items():
        encoder, _ = _encoder_and_tokenizer(pipe, component)
        width = encoder.get_input_embeddings().weight.shape[1]
        if tensor.shape[1] != width:
            raise AdapterFileError(
                f"this embedding's {component} vectors are {tensor.shape[1]} wide, the base's are {width}: "
                "it was made for another base model"
            )


def load_textual_inversion(pipe, embedding: TextualInversion, token: str) -> list[str]:
    """Add ``token`` (one token per vector) to each text encoder the embedding has; returns the tokens added.

    The token table is grown here first, without transformers' ``mean_resizing``: diffusers grows it with the default,
    which draws the new rows from a normal fitted to the whole vocabulary (a 768x768 covariance over 49,408 rows at
    SD 1.5 size, seconds per request on a CPU) only for diffusers to overwrite them with the embedding's vectors. Its
    own resize to the same size then changes nothing."""
    check_textual_inversion(pipe, embedding)
    for component, tensor in embedding.embeddings.items():
        encoder, tokenizer = _encoder_and_tokenizer(pipe, component)
        before = len(tokenizer)
        encoder.resize_token_embeddings(before + embedding.n_vectors, mean_resizing=False)
        try:
            pipe.load_textual_inversion(tensor, token=token, text_encoder=encoder, tokenizer=tokenizer)
        except Exception:  # refused before any token was added (one already there): the table shrinks back
            encoder.resize_token_embeddings(before, mean_resizing=False)
            raise
    return embedding.tokens(token)


def unload_textual_inversion(pipe, embedding: TextualInversion, token: str) -> None:
    """Take every token :func:`load_textual_inversion` added off each tokenizer and text encoder again
    (diffusers' ``unload_textual_inversion(token)`` alone leaves a multi-vector embedding's ``tok_1``… behind)."""
    for component in embedding.embeddings:
        encoder, tokenizer = _encoder_and_tokenizer(pipe, component)
        pipe.unload_textual_inversion(embedding.tokens(token), tokenizer=tokenizer, text_encoder=encoder)
