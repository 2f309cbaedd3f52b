"""``personalq bench taq``: the paper's TAQ analyses on the demo zoo's personalized checkpoints.

1. Per-token sensitivity (Figure 2): quantize only one text token's K/V rows to 4 bits in every
   cross-attention layer, everything else in full precision; image MSE to the full-precision image and the
   drop in variant fidelity, averaged over checkpoints and grouped by what the token is.
2. The quality table (Tables 1 and 4): FP32 and W8A8, W4A8, W8A4, W4A4 x {plain, BOS, TAQ} x {linear, log}:
   domain FID, prompt alignment, variant fidelity, MSE to the FP32 image at the same seed, UNet weight
   bytes, peak process memory while generating, seconds per image.
3. On request (``precisions``), the ablation rows xattn-A8 / xattn-A4: full-precision weights and layers, only
   the cross-attention activations quantized, so that the separations differ in nothing else.

Every configuration of a checkpoint is calibrated from one observation pass and generates from the same
seeds, so the columns differ only by the quantization. With ``calibrations`` > 1 each checkpoint is calibrated
that many times (other captions, other observer draws) and every row is generated under each calibration: a
single calibration's ranges can favour either separation by as much as the separations differ, so the paired
comparison averages each image over calibrations and shows the per-calibration differences beside it.
"""

from __future__ import annotations

import copy
import logging
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import psutil
import torch
from PIL import Image, ImageDraw
from tqdm.auto import tqdm

from personalq.eval.image_metrics import MIN_FRECHET_SAMPLES, frechet_distance, recognised
from personalq.eval.step_error import EVERY, recording_calls, step_error
from personalq.serving.cache import MB
from personalq.serving.checkpoints import adapters_applied, applied, load_base, replaces_unet
from personalq.serving.variants import QUANTIZED_PRECISIONS
from personalq.stats import MeanInterval, mean_interval
from personalq.taq.activations import ActivationQuantizer
from personalq.taq.attention import AttentionQuantizers, TriggerAwareAttnProcessor, cross_attention_names, install
from personalq.taq.calibration import calibrate, calibration_prompts
from personalq.taq.context import QuantContext
from personalq.taq.headroom import PARTS, RangeRatios, range_ratios
from personalq.taq.masks import MODES, token_mask
from personalq.taq.quantize import TAQConfig, quantize_cross_attention, quantize_unet, weight_bytes
from personalq.taq.quantizers import QuantSpec
from personalq.zoo.build import stored_checkpoint
from personalq.zoo.catalog import SCENE_NAMES
from personalq.zoo.concepts import Concept, concepts
from personalq.zoo.data import render_set
from personalq.zoo.evaluate import GUIDANCE, generate
from personalq.zoo.evaluator import Evaluator

log = logging.getLogger(__name__)
CROSS_ATTENTION_ONLY = {"xattn-A8": 8, "xattn-A4": 4}  # ablation rows: see quantize_cross_attention
ALL_PRECISIONS = (*QUANTIZED_PRECISIONS, *CROSS_ATTENTION_ONLY)
ADAROUND = "linear+adaround"
FLOAT_KV = "linear+float-kv"
QUANTIZER_ROWS = {  # a row's quantizer label -> the TAQConfig fields it sets
    "linear": {"quantizer": "linear"},
    "log": {"quantizer": "log"},
    ADAROUND: {"quantizer": "linear", "rounding": "adaround"},
    FLOAT_KV: {"quantizer": "linear", "protect_weights": True},
}


@dataclass
class ConfigResult:
    precision: str
    mode: str
    quantizer: str
    weight_bytes: int
    mse: list[float] = field(default_factory=list)
    step_mse: list[float] = field(
        default_factory=list
    )  # per image: the guided noise prediction's error on the FP32 path
    images: list[str] = field(default_factory=list)  # which prompt and seed each entry is, "checkpoint/index"
    calibration: list[int] = field(default_factory=list)  # which calibration each entry was quantized with
    fidelity: list[bool] = field(default_factory=list)
    alignment: list[float] = field(default_factory=list)
    features: list[np.ndarray] = field(default_factory=list)
    seconds_per_image: list[float] = field(default_factory=list)
    peak_rss: int = 0


@dataclass(frozen=True)
class PairedComparison:
    """One separation against another at the same precision and quantizer, image by image (same prompts, seeds).

    Differences are ``mode`` minus ``baseline``: a negative MSE difference means ``mode`` stays closer to FP32.
    Paired, because most of an image's error comes from its prompt and seed, not from the separation. Under
    several calibrations an image's difference is its mean over them, and ``per_calibration`` holds each
    calibration's mean difference: their spread is the calibration noise the interval over images leaves out.
    """

    precision: str
    quantizer: str
    mode: str
    baseline: str
    mse: MeanInterval
    fidelity: MeanInterval | None
    closer: float  # share of images where ``mode``'s MSE is the lower one
    per_calibration: tuple[float, ...] = ()
    step: MeanInterval | None = None  # the same difference in per-step noise-prediction error on the FP32 path

    @property
    def verdict(self) -> str:
        return self._verdict(self.mse)

    @property
    def step_verdict(self) -> str:
        return self._verdict(self.step) if self.step is not None else "n/a"

    def _verdict(self, difference: MeanInterval) -> str:
        if not difference.excludes(0.0):
            return "no significant difference"
        return f"{self.mode} closer to FP32" if difference.high < 0 else f"{self.baseline} closer to FP32"


@dataclass
class TokenEffect:
    role: str  # start, trigger, class, other, end, padding
    token: str
    mse: float
    fidelity_drop: float


@dataclass
class TaqReport:
    results: dict[tuple[str, str, str], ConfigResult]
    real_features: np.ndarray | None
    tokens: list[TokenEffect]
    checkpoints: list[str]
    images_per_checkpoint: int
    calibrations: int = 1
    headroom: dict[tuple[int, str, str], list[RangeRatios]] = field(
        default_factory=dict
    )  # (abits, quantizer, mode) -> per calibration

    def table(self) -> str:
        head = (
            "| precision | separation | quantizer | domain FID | alignment | variant fidelity | MSE to FP32 | "
            "step error | "
            "UNet weights (MB) | x FP32 | peak RSS (MB) | s / image |\n|" + " --- |" * 12
        )
        fp_bytes = self.results[("FP32", "-", "-")].weight_bytes
        lines = [head]
        precisions, modes = ["FP32", *ALL_PRECISIONS], ["-", *MODES]
        rows = sorted(
            self.results.items(), key=lambda item: (precisions.index(item[0][0]), modes.index(item[0][1]), item[0][2])
        )
        for (precision, mode, quantizer), r in rows:
            generated = np.concatenate(r.features) if r.features else None
            measurable = (
                generated is not None
                and self.real_features is not None
                and min(len(generated), len(self.real_features)) >= MIN_FRECHET_SAMPLES
            )
            fid = f"{frechet_distance(generated, self.real_features):.2f}" if measurable else "n/a"
            fidelity = f"{np.mean(r.fidelity):.1%}" if r.fidelity else "n/a"
            alignment = f"{np.mean(r.alignment):.3f}" if r.alignment else "n/a"
            step = f"{np.mean(r.step_mse):.2e}" if r.step_mse else "n/a"
            lines.append(
                f"| {precision} | {mode} | {quantizer} | {fid} | {alignment} | {fidelity} | {np.mean(r.mse):.2e} | "
                f"{step} | "
                f"{r.weight_bytes / MB:.2f} | {r.weight_bytes / fp_bytes:.3f} | {r.peak_rss / MB:.0f} | "
                f"{statistics.median(r.seconds_per_image):.3f} |"
            )
        return "\n".join(lines) + (
            f"\n\nStep error: the classifier-free-guided noise prediction's MSE to the FP32 one on the FP32 "
            f"trajectory's own inputs (every {EVERY}th step), which nothing compounds."
            f"\n{len(self.checkpoints)} checkpoints ({', '.join(self.checkpoints)}), {self.images_per_checkpoint} "
            f"images each, {self.calibrations} calibration(s) per checkpoint."
        )

    def paired(self, mode: str = "taq", baseline: str = "plain") -> list[PairedComparison]:
        out = []
        for (precision, row_mode, quantizer), result in self.results.items():
            other = self.results.get((precision, baseline, quantizer))
            if row_mode != mode or other is None or not result.mse:
                continue
            difference = np.array(result.mse) - np.array(other.mse)
            mse = _per_image(result, difference)
            fidelity = (
                mean_interval(
                    _per_image(result, np.array(result.fidelity, dtype=float) - np.array(other.fidelity, dtype=float))
                )
                if result.fidelity and other.fidelity
                else None
            )
            calibrations = np.array(result.calibration or [0] * len(result.mse))
            per_calibration = tuple(
                float(difference[calibrations == c].mean()) for c in sorted(set(calibrations.tolist()))
            )
            step = (
                mean_interval(_per_image(result, np.array(result.step_mse) - np.array(other.step_mse)))
                if result.step_mse and other.step_mse
                else None
            )
            out.append(
                PairedComparison(
                    precision,
                    quantizer,
                    mode,
                    baseline,
                    mean_interval(mse),
                    fidelity,
                    float(np.mean(mse < 0)),
                    per_calibration,
                    step,
                )
            )
        return out

    def paired_table(self) -> str:
        lines = [
            "| precision | quantizer | comparison | MSE difference [95% CI] | per calibration | closer in "
            "| variant fidelity difference [95% CI] | verdict | step error difference [95% CI] | step verdict |",
            "|" + " --- |" * 10,
        ]
        for baseline in ("plain", "bos"):
            for c in self.paired("taq", baseline):
                fidelity = (
                    f"{c.fidelity.mean:+.1%} [{c.fidelity.low:+.1%}, {c.fidelity.high:+.1%}]" if c.fidelity else "n/a"
                )
                spread = " / ".join(f"{d:+.1e}" for d in c.per_calibration)
                step = f"{c.step.mean:+.2e} [{c.step.low:+.2e}, {c.step.high:+.2e}]" if c.step else "n/a"
                lines.append(
                    f"| {c.precision} | {c.quantizer} | {c.mode} - {c.baseline} | {c.mse.mean:+.2e} "
                    f"[{c.mse.low:+.2e}, {c.mse.high:+.2e}] | {spread} | {c.closer:.0%} | {fidelity} | {c.verdict} | "
                    f"{step} | {c.step_verdict} |"
                )
        return "\n".join(lines)

    def headroom_table(self) -> str:
        """How far each separation narrows the ranges of the tokens it still rounds, pooled over checkpoints."""
        lines = [
            "| activations | quantizer | separation | "
            + " | ".join(f"{name}: range / plain's, median (least)" for name in PARTS.values())
            + " |",
            "|" + " --- |" * (3 + len(PARTS)),
        ]
        for (abits, quantizer, mode), measured in sorted(
            self.headroom.items(), key=lambda item: (-item[0][0], *item[0][1:])
        ):
            cells = []
            for part in PARTS:
                pooled = [ratio for ratios in measured for ratio in ratios.by_part[part]]
                cells.append(f"{statistics.median(pooled):.3f} ({min(pooled):.3f})")
            lines.append(f"| A{abits} | {quantizer} | {mode} | " + " | ".join(cells) + " |")
        return "\n".join(lines) + (
            "\n\nOne entry per cross-attention layer (and timestep group, for the probabilities), checkpoint and "
            "calibration; each range is searched for the least round-trip error as in quantization. About 1: "
            "the protected values lay inside the others' range, and protection saves only their own rounding."
        )

    def sensitivity_by_role(self) -> dict[str, tuple[float, float, int]]:
        roles: dict[str, list[TokenEffect]] = {}
        for effect in self.tokens:
            roles.setdefault(effect.role, []).append(effect)
        return {
            role: (
                float(np.mean([e.mse for e in effects])),
                float(np.mean([e.fidelity_drop for e in effects])),
                len(effects),
            )
            for role, effects in sorted(roles.items(), key=lambda item: -np.mean([e.mse for e in item[1]]))
        }

    def sensitivity_table(self) -> str:
        lines = [
            "| token role | mean image MSE when only its K/V rows are 4-bit | variant fidelity drop | tokens |",
            "| --- | --- | --- | --- |",
        ]
        for role, (mse, drop, count) in self.sensitivity_by_role().items():
            lines.append(f"| {role} | {mse:.6f} | {drop:+.1%} | {count} |")
        top = sorted(self.tokens, key=lambda e: -e.mse)[:8]
        lines.append(
            "\nMost sensitive single tokens: " + ", ".join(f"`{e.token}` ({e.role}, {e.mse:.6f})" for e in top)
        )
        ranked = list(self.sensitivity_by_role())
        verdict = "are" if ranked and ranked[0] == "trigger" else "are not"
        lines.append(
            f"\nBy mean MSE the trigger sub-tokens {verdict} the most sensitive role (ranking: {', '.join(ranked)})."
        )
        return "\n".join(lines)

    def plot(self, path: Path) -> Path:
        """A bar chart of mean MSE per token role (drawn with Pillow: no plotting dependency for one figure)."""
        roles = self.sensitivity_by_role()
        width, height, margin = 640, 320, 40
        image = Image.new("RGB", (width, height), "white")
        draw = ImageDraw.Draw(image)
        peak = max((v[0] for v in roles.values()), default=1.0) or 1.0
        bar = (width - 2 * margin) // max(len(roles), 1)
        for i, (role, (mse, _, _)) in enumerate(roles.items()):
            top = height - margin - int((height - 2 * margin) * mse / peak)
            x = margin + i * bar
            draw.rectangle(
                [x + 8, top, x + bar - 8, height - margin], fill="#d9534f" if role == "trigger" else "#5b8def"
            )
            draw.text((x + 8, height - margin + 6), role, fill="black")
            draw.text((x + 8, top - 14), f"{mse:.1e}", fill="black")
        draw.text((margin, 10), "image MSE when one token's K/V rows are 4-bit (mean over checkpoints)", fill="black")
        path.parent.mkdir(parents=True, exist_ok=True)
        image.save(path)
        return path


class PeakMemory:
    """Samples this process's resident memory in a background thread while the block runs."""

    def __init__(self, interval_s: float = 0.005):
        self.interval_s = interval_s
        self.peak = 0
        self._stop = threading.Event()

    def __enter__(self) -> "PeakMemory":
        process = psutil.Process()

        def sample():
            while not self._stop.is_set():
                self.peak = max(self.peak, process.memory_info().rss)
                time.sleep(self.interval_s)

        self._thread = threading.Thread(target=sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _per_image(result: ConfigResult, values: np.ndarray) -> np.ndarray:
    """``values`` (one per entry of ``result``) averaged over the calibrations of each image, in first-seen order."""
    if not result.images:
        return values
    index = {image: i for i, image in enumerate(dict.fromkeys(result.images))}
    where = np.array([index[image] for image in result.images])
    return np.array([values[where == i].mean() for i in range(len(index))])


def pick_concepts(count: int) -> list[Concept]:
    """Spread over categories and kinds: the DreamBooth and textual-inversion checkpoints first, then LoRAs."""
    everything = concepts()
    special = [c for c in everything if c.kind != "lora"][:2]
    loras = [c for c in everything if c.kind == "lora" and c.version == 2]
    picked = special + loras[:: max(len(loras) // max(count - len(special), 1), 1)]
    return picked[:count]


def bench_scenes(concept: Concept, images: int) -> list[str]:
    """The scenes of a checkpoint's bench prompts: its habitual scene (textual inversion), else every third one."""
    return [concept.scene or SCENE_NAMES[(i * 3) % len(SCENE_NAMES)] for i in range(images)]


def _pixels(images) -> np.ndarray:
    return np.stack([np.asarray(i, dtype=np.float32) / 255.0 for i in images])


def _token_roles(tokenizer, prompt: str, trigger: str, category: str) -> list[tuple[int, str, str]]:
    ids = tokenizer(prompt, padding="max_length", max_length=tokenizer.model_max_length, truncation=True)["input_ids"]
    tokens = tokenizer.convert_ids_to_tokens(ids)
    trigger_mask = token_mask(tokenizer, [prompt], [trigger], "taq")[0].tolist()
    roles, ended = [], False
    for position, token in enumerate(tokens):
        if position == 0:
            role = "start"
        elif token == tokenizer.sep_token and not ended:
            role, ended = "end", True
        elif ended:
            role = "padding"
        elif trigger_mask[position]:
            role = "trigger"
        elif token == category:
            role = "class"
        else:
            role = "other"
        roles.append((position, role, token))
    # one padding position stands for all of them (they share one embedding up to position)
    first_pad = next((i for i, (_, role, _) in enumerate(roles) if role == "padding"), None)
    return [r for i, r in enumerate(roles) if r[1] != "padding" or i == first_pad]


def run_taq_bench(
    zoo: Path,
    checkpoints: int = 6,
    images: int = 8,
    captions: int = 64,
    calibration_steps: int = 10,
    sensitivity: bool = True,
    quantizers: tuple[str, ...] = ("linear", "log"),
    adaround: bool = False,
    float_kv: bool = False,
    calibrations: int = 1,
    precisions: tuple[str, ...] = tuple(QUANTIZED_PRECISIONS),
    seed: int = 11,
    recipe: dict | None = None,
) -> TaqReport:
    """``recipe``: ``TAQConfig`` fields every quantized row shares (smoothing, first_last_8bit); default the
    config's."""
    recipe = recipe or {}
    if unknown := set(precisions) - set(ALL_PRECISIONS):
        raise ValueError(f"unknown precisions {sorted(unknown)}; known: {', '.join(ALL_PRECISIONS)}")
    zoo = Path(zoo)
    pipe = load_base(zoo / "base")
    evaluator_path = zoo / "evaluator.safetensors"
    evaluator = Evaluator.load(evaluator_path) if evaluator_path.exists() else None
    if evaluator is None:
        log.warning("%s is missing: FID, alignment and fidelity are reported as n/a", evaluator_path)
    picked = pick_concepts(checkpoints)
    bench = _Bench(
        zoo,
        pipe,
        pipe.unet,
        evaluator,
        _empty_results(weight_bytes(pipe.unet), precisions, quantizers, adaround, float_kv),
        images,
        captions,
        calibration_steps,
        calibrations,
        sensitivity,
        quantizers,
        precisions,
        adaround,
        seed,
        recipe,
    )
    for concept in tqdm(picked, desc="checkpoints", unit=" ckpt"):
        bench.checkpoint(concept)
    real = (
        evaluator.recognise(list(render_set(bench.real_subjects, seed + 1).images)).features
        if evaluator is not None
        else None
    )
    return TaqReport(bench.results, real, bench.tokens, [c.id for c in picked], images, calibrations, bench.headroom)


def _empty_results(
    fp32_bytes: int, precisions: tuple[str, ...], quantizers: tuple[str, ...], adaround: bool, float_kv: bool
) -> dict[tuple[str, str, str], ConfigResult]:
    """The table's rows, FP32 first: every precision x separation x quantizer, and the optional AdaRound and float
    K/V rows."""
    results = {("FP32", "-", "-"): ConfigResult("FP32", "-", "-", fp32_bytes)}
    for precision in precisions:
        for mode in MODES:
            for quantizer in quantizers:
                results[(precision, mode, quantizer)] = ConfigResult(precision, mode, quantizer, 0)
    if adaround:  # learned rounding where rounding matters most: 4-bit weights
        for precision in {"W4A8", "W4A4"} & set(precisions):
            results[(precision, "taq", ADAROUND)] = ConfigResult(precision, "taq", ADAROUND, 0)
    if float_kv:  # protected rows through float K/V weights: for the separations that protect something
        for precision in set(QUANTIZED_PRECISIONS) & set(precisions):
            for mode in ("bos", "taq"):
                results[(precision, mode, FLOAT_KV)] = ConfigResult(precision, mode, FLOAT_KV, 0)
    return results


def _judge(
    concept: Concept,
    scenes: list[str],
    evaluator: Evaluator | None,
    result: ConfigResult,
    generated,
    reference,
    calibration: int,
) -> None:
    """Add one row's images of ``concept`` to ``result``: MSE to the FP32 images (``reference``; none for the FP32
    row itself) and, with an evaluator, variant fidelity, prompt alignment and the features FID is computed on."""
    if reference is not None:
        result.mse += ((_pixels(generated) - _pixels(reference)) ** 2).mean(axis=(1, 2, 3)).tolist()
        result.images += [f"{concept.id}/{i}" for i in range(len(generated))]
        result.calibration += [calibration] * len(generated)
    if evaluator is not None:
        seen = evaluator.recognise(generated)
        result.fidelity += recognised(seen, concept.variant).tolist()
        result.alignment += [
            ((seen.labels["category"][i] == concept.category) + (seen.labels["scene"][i] == s)) / 2
            for i, s in enumerate(scenes)
        ]
        result.features.append(seen.features)


@dataclass
class _Reference:
    """What a checkpoint's full-precision pass leaves for its quantized rows."""

    images: list  # the FP32 images, which every row's MSE is measured against
    calls: list  # the FP32 UNet's recorded calls (see recording_calls), for the step error
    observers: list  # one calibration each
    source_unet: torch.nn.Module  # the UNet the rows quantize: the checkpoint's own when it replaces the base's


@dataclass
class _Bench:
    """One bench run's settings and what it gathers, checkpoint by checkpoint."""

    zoo: Path
    pipe: object
    base_unet: torch.nn.Module
    evaluator: Evaluator | None
    results: dict[tuple[str, str, str], ConfigResult]
    images: int
    captions: int
    calibration_steps: int
    calibrations: int
    sensitivity: bool
    quantizers: tuple[str, ...]
    precisions: tuple[str, ...]
    adaround: bool
    seed: int
    recipe: dict
    real_subjects: list[str] = field(default_factory=list)
    tokens: list[TokenEffect] = field(default_factory=list)
    headroom: dict[tuple[int, str, str], list[RangeRatios]] = field(default_factory=dict)

    def checkpoint(self, concept: Concept) -> None:
        """The FP32 row, calibration and sensitivity of one checkpoint, then every quantized row under each
        calibration."""
        card = stored_checkpoint(concept, self.zoo / "repository" / "weights" / concept.id)
        scenes = bench_scenes(concept, self.images)
        prompts = [concept.prompt(scene) for scene in scenes]
        self.real_subjects += [concept.subject(scene, style=concept.style) for scene in scenes]

        def judge(result: ConfigResult, generated, reference, calibration: int) -> None:
            _judge(concept, scenes, self.evaluator, result, generated, reference, calibration)

        reference = self._full_precision(concept, card, prompts, judge)
        rows = [(c, key, result) for c in range(self.calibrations) for key, result in list(self.results.items())[1:]]
        for calibration, (precision, mode, quantizer), result in tqdm(rows, desc=concept.id, leave=False):
            self._quantized_row(
                concept, card, prompts, judge, reference, calibration, precision, mode, quantizer, result
            )

    def _full_precision(self, concept: Concept, card, prompts: list[str], judge) -> _Reference:
        """Generate the FP32 images (timed, memory sampled, the UNet's calls recorded), calibrate, and measure the
        per-token sensitivity on the first calibration."""
        seed = self.seed
        with applied(self.pipe, card) as p:
            fp_unet = p.unet
            with PeakMemory() as peak, recording_calls(p.unet) as calls:
                started = time.perf_counter()
                reference = generate(p, prompts, seed)
                elapsed = time.perf_counter() - started
            fp = self.results[("FP32", "-", "-")]
            fp.seconds_per_image.append(elapsed / len(prompts))
            fp.peak_rss = max(fp.peak_rss, peak.peak)
            judge(fp, reference, None, 0)
            fp.mse += [0.0] * len(prompts)
            fp.step_mse += [0.0] * len(prompts)
            observers = [
                calibrate(
                    p,
                    calibration_prompts(concept.trigger, concept.category, self.captions, seed=c),
                    [concept.trigger],
                    steps=self.calibration_steps,
                    seed=c,
                    keep_inputs=8 if self.adaround else 0,
                )
                for c in range(self.calibrations)
            ]
            for observer in observers:
                for key, config in _headroom_configs(self.precisions, self.quantizers).items():
                    self.headroom.setdefault(key, []).append(range_ratios(observer, config))
            if self.sensitivity:
                self.tokens += _sensitivity(p, prompts[0], concept, observers[0], self.evaluator, seed)
            source_unet = copy.deepcopy(fp_unet) if replaces_unet(card) else None
        if source_unet is None:
            source_unet = self.base_unet
        return _Reference(reference, calls, observers, source_unet)

    def _quantized_row(
        self,
        concept: Concept,
        card,
        prompts: list[str],
        judge,
        reference: _Reference,
        calibration: int,
        precision: str,
        mode: str,
        quantizer: str,
        result: ConfigResult,
    ) -> None:
        """Quantize the checkpoint's UNet for one row and calibration, generate with its trigger protected as the
        row's separation says, and add the images, step error, time and memory to ``result``."""
        pipe = self.pipe
        observer = reference.observers[calibration]
        if precision in CROSS_ATTENTION_ONLY:
            config = TAQConfig(
                abits=CROSS_ATTENTION_ONLY[precision], mode=mode, **QUANTIZER_ROWS[quantizer], **self.recipe
            )
            quantized = quantize_cross_attention(copy.deepcopy(reference.source_unet), config, observer)
        else:
            wbits, abits = QUANTIZED_PRECISIONS[precision]
            config = TAQConfig(wbits=wbits, abits=abits, mode=mode, **QUANTIZER_ROWS[quantizer], **self.recipe)
            quantized = quantize_unet(copy.deepcopy(reference.source_unet), config, observer)
        result.weight_bytes = weight_bytes(quantized.unet)
        pipe.unet = quantized.unet
        mask = token_mask(pipe.tokenizer, [""] * len(prompts) + prompts, [concept.trigger], mode)
        with adapters_applied(pipe, card), quantized.context.protecting(mask):
            with PeakMemory() as peak:
                started = time.perf_counter()
                generated = generate(pipe, prompts, self.seed)
                result.seconds_per_image.append((time.perf_counter() - started) / len(prompts))
            result.step_mse += step_error(pipe.unet, reference.calls, GUIDANCE).tolist()
        result.peak_rss = max(result.peak_rss, peak.peak)
        judge(result, generated, reference.images, calibration)
        pipe.unet = self.base_unet
        del quantized


def _headroom_configs(
    precisions: tuple[str, ...], quantizers: tuple[str, ...]
) -> dict[tuple[int, str, str], TAQConfig]:
    """The activation precisions and quantizers the bench's rows use, for each separation that protects something."""
    bits = {QUANTIZED_PRECISIONS[p][1] if p in QUANTIZED_PRECISIONS else CROSS_ATTENTION_ONLY[p] for p in precisions}
    return {
        (abits, quantizer, mode): TAQConfig(abits=abits, quantizer=quantizer, mode=mode)
        for abits in bits
        for quantizer in quantizers
        for mode in MODES
        if mode != "plain"
    }


def _sensitivity(pipe, prompt: str, concept: Concept, observer, evaluator, seed: int) -> list[TokenEffect]:
    """Quantize one token's K/V rows (4-bit, calibrated range) at a time; everything else stays full precision."""
    reference = generate(pipe, [prompt], seed)[0]
    unet = pipe.unet
    originals = unet.attn_processors
    context = QuantContext()
    spec = QuantSpec(4, "linear", "tensor")
    processors = {}
    for name in cross_attention_names(unet):
        key = ActivationQuantizer(spec, observer.ranges(f"{name}:k@plain", 1, spec))
        value = ActivationQuantizer(spec, observer.ranges(f"{name}:v@plain", 1, spec))
        processors[name] = TriggerAwareAttnProcessor(name, context, AttentionQuantizers(key=key, value=value))
    install(unet, processors)
    effects = []
    reference_pixels = _pixels([reference])
    reference_hit = (
        recognised(evaluator.recognise([reference]), concept.variant)[0] if evaluator is not None else False
    )
    try:
        for position, role, token in _token_roles(pipe.tokenizer, prompt, concept.trigger, concept.category):
            protected = torch.ones(2, pipe.tokenizer.model_max_length, dtype=torch.bool)
            protected[1, position] = False
            if role == "padding":
                protected[1, position:] = False  # every padding row together
            with context.protecting(protected):
                image = generate(pipe, [prompt], seed)[0]
            hit = recognised(evaluator.recognise([image]), concept.variant)[0] if evaluator is not None else False
            effects.append(
                TokenEffect(
                    role,
                    token,
                    float(((_pixels([image]) - reference_pixels) ** 2).mean()),
                    float(reference_hit) - float(hit),
                )
            )
    finally:
        unet.set_attn_processor(originals)
    return effects
