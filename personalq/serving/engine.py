"""The serving engine: base pipelines, the model cache under a memory budget, and streamed generation.

One pipeline per base model holds the parts every checkpoint shares (text encoder, VAE, tokenizer,
scheduler); its UNet slot is filled per request from the cache with the UNet the checkpoint runs on at the
chosen precision: the float base, a float DreamBooth fine-tune, or a quantized variant (loaded from its
file, or produced once and stored). LoRA adapters (whose tensors the cache keeps too) and textual
inversions go on top for the request and come off afterwards. One generation at a time per engine: requests
queue in the app (Gradio's queue) and here (a lock), so no request ever sees another's adapters.

A request names one checkpoint or a set at weights (:mod:`personalq.serving.composition`): the image runs on the
UNet of the set's anchor (its full UNet, else its first checkpoint) and every LoRA and embedding of the set goes on
top at its weight, on the float and the quantized UNet alike.

Checkpoint entries are keyed by content (the weights' digest, a variant's file name), not by id, so new
weights imported under an old id never meet the old entries. A set adds no key of its own: its UNet is its anchor's
entry, each LoRA's tensors its own entry, and the weights are set per request (:mod:`composition` says why).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import torch
from diffusers import DiffusionPipeline, UNet2DConditionModel

from personalq.compute import on_compute_thread
from personalq.config import Settings
from personalq.repository.card import StoredCheckpoint
from personalq.serving.adapter_files import LoraWeights
from personalq.serving.allocator import reuse_freed_memory
from personalq.serving.bases import served_base
from personalq.serving.cache import MB, ModelCache
from personalq.serving.checkpoints import (
    load_base,
    load_dreambooth_unet,
    read_adapter,
    replaces_unet,
    set_applied,
)
from personalq.serving.composition import Composition, Uses
from personalq.serving.float_type import float_dtype, type_name
from personalq.serving.generation import Frame, GenerationParams, stream
from personalq.serving.png_parameters import ImageParameters
from personalq.serving.previews import LatentRGB, fit_latent_rgb, preview_image
from personalq.serving.variants import precision_config, produce_variant, variant_name, variant_path, weights_key
from personalq.serving.webui_parameters import image_parameters, sampler_name, stored_scheduler
from personalq.taq.kernels import KernelSupport, integer_support
from personalq.taq.layers import weights_read_repeatedly
from personalq.taq.masks import token_mask
from personalq.taq.quantize import (
    QuantizedUNet,
    TAQConfig,
    allow_integer_kernels,
    load_quantized,
    match_float_dtype,
    quantized_bytes,
    save_quantized,
    weight_bytes,
)

log = logging.getLogger(__name__)


@dataclass
class MemoryReport:
    budget_bytes: int
    pipeline_bytes: int  # text encoders and VAEs of loaded bases (always resident)
    cached_bytes: int  # UNets in the cache
    unet_bytes: int  # the UNet the last generation ran on

    @property
    def used_bytes(self) -> int:
        return self.pipeline_bytes + self.cached_bytes

    @property
    def fields(self) -> dict:
        return {
            "budget_mb": self.budget_bytes / MB,
            "in_use_mb": self.used_bytes / MB,
            "unet_mb": self.unet_bytes / MB,
        }

    def line(self) -> str:
        return (
            f"UNet {self.unet_bytes / MB:.1f} MB · cache {self.cached_bytes / MB:.1f} MB · "
            f"in use {self.used_bytes / MB:.1f} of {self.budget_bytes / MB:.0f} MB"
        )


class Engine:
    """Loads, quantizes and caches a base's models and generates with them. Every method that loads or computes with
    a model runs on the process's compute thread (:mod:`personalq.compute`), whichever thread calls it."""

    def __init__(self, settings: Settings, calibration_captions: int = 64, calibration_steps: int = 10):
        self.settings = settings
        reuse_freed_memory()
        self.device = settings.resolved_device()
        self.calibration_captions = calibration_captions
        self.calibration_steps = calibration_steps
        self._pipelines: dict[str, DiffusionPipeline] = {}
        self._latent_rgb: dict[str, LatentRGB] = {}
        self.cache = ModelCache(settings.memory_budget_mb * MB)
        self._lock = threading.Lock()
        self._last_unet_bytes = 0

    # -- resolution -----------------------------------------------------------------------------------------------

    def base_location(self, checkpoint: StoredCheckpoint) -> str:
        """The base pipeline ``checkpoint`` runs on; raises ``BaseMismatch`` (naming both bases) when its base is not
        configured or its weights were made for another architecture."""
        return served_base(self.settings, checkpoint).location

    def float_dtype(self, base: str) -> torch.dtype:
        """The float type ``base`` computes in here (:mod:`personalq.serving.float_type`)."""
        return float_dtype(self.settings, base)

    def float_line(self, base: str | None = None) -> str:
        """The float type in words for the readout, where it is not plain float32; by default the demo base's."""
        dtype = self.float_dtype(base or served_base(self.settings).location)
        return "" if dtype == torch.float32 else f"float layers in {type_name(dtype)}"

    @on_compute_thread
    def pipeline(self, base: str) -> DiffusionPipeline:
        if base not in self._pipelines:
            dtype = self.float_dtype(base)
            log.info("%s computes in %s", base, type_name(dtype))
            local = Path(base).exists()
            pipe = load_base(Path(base), self.device, dtype, False) if local else self._hub_pipeline(base, dtype)
            shared = [m for m in pipe.components.values() if isinstance(m, torch.nn.Module)]
            self.cache.pin(sum(weight_bytes(m) for m in shared), f"the text encoders and VAE of {base}")
            self._pipelines[base] = pipe
        return self._pipelines[base]

    def _hub_pipeline(self, repo_id: str, dtype: torch.dtype) -> DiffusionPipeline:
        """A Hub base (SD 1.5, SDXL, ...): ``DiffusionPipeline`` picks the pipeline class from its model index."""
        pipe = DiffusionPipeline.from_pretrained(repo_id, dtype=dtype, unet=None)
        pipe.set_progress_bar_config(disable=True)
        return pipe.to(self.device)

    @property
    def kernels(self) -> KernelSupport:
        """How quantized layers compute in this process: integer kernels where settings, device and processor allow
        and (``auto``) where they are the faster path, else by dequantizing their weights.

        On CUDA, ``torch._int_mm`` runs the Linear layers, but outside a compiled graph its extra elementwise passes
        made every measured UNet step slower than dequantizing (``benchmarks/results/gpu-kernels.md``), so ``auto``
        dequantizes there and ``integer`` asks for it."""
        if self.settings.kernels == "dequantize":
            return KernelSupport(False, None, "chosen in settings")
        device_type = torch.device(self.device).type
        if device_type not in ("cpu", "cuda"):
            return KernelSupport(False, None, f"integer kernels run on the CPU or CUDA, not {self.device}")
        support = integer_support(device_type)
        if device_type == "cuda" and self.settings.kernels == "auto" and support.available:
            reason = "faster than int8 Linear layers on CUDA; PERSONALQ_KERNELS=integer uses them"
            return KernelSupport(False, support.units, reason, support.library, support.convolutions)
        return support

    # -- the UNet a request runs on -------------------------------------------------------------------------------

    @on_compute_thread
    def float_unet(self, base: str, checkpoint: StoredCheckpoint | None = None):
        """The float UNet of the base, or of a DreamBooth checkpoint; reloaded from disk when it was evicted."""
        if checkpoint is not None and replaces_unet(checkpoint):
            return self.cache.get_or_load(
                ("unet", weights_key(checkpoint), "FP32"),
                lambda: load_dreambooth_unet(checkpoint, self.float_dtype(base), self.device, base),
                weight_bytes,
                f"the fine-tuned UNet of {checkpoint.id}",
            )
        return self.cache.get_or_load(
            ("unet", base, "FP32"), lambda: self._load_float_unet(base), weight_bytes, f"the float UNet of {base}"
        )

    def _load_float_unet(self, base: str) -> UNet2DConditionModel:
        """The base's float UNet alone (the rest of its pipeline stays resident); loaded on first use, so a process
        that serves only quantized variants never holds it."""
        dtype = self.float_dtype(base)
        return UNet2DConditionModel.from_pretrained(base, subfolder="unet", dtype=dtype, low_cpu_mem_usage=False).to(
            self.device
        )

    @on_compute_thread
    def quantized_unet(self, checkpoint: StoredCheckpoint, config: TAQConfig) -> QuantizedUNet:
        key = ("unet", variant_name(checkpoint, config))
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        path = variant_path(checkpoint, config, self.settings.home / "taq")
        base = self.base_location(checkpoint)
        if path.exists():
            variant = load_quantized(path, self.device)
        else:
            pipe = self.pipeline(base)
            pipe.unet = self.float_unet(base)
            variant = produce_variant(
                pipe,
                checkpoint,
                config,
                self.calibration_captions,
                self.calibration_steps,
                self.settings.calibration_size,
            )
            save_quantized(variant, path)
            log.info("stored %s", path)
        match_float_dtype(variant, self.float_dtype(base))
        if self.kernels.available:
            layers = allow_integer_kernels(variant)
            log.info("%s: %d layers may use %s", variant.config.tag, layers, self.kernels.describe())
        self.cache.put(key, variant, weight_bytes(variant.unet), f"the {config.tag} variant of {checkpoint.id}")
        return variant

    def composition_base(self, composition: Composition) -> str:
        """The base pipeline a set runs on: every checkpoint's base checked (``BaseMismatch`` names the one that does
        not fit); :class:`Composition` has already refused a set whose cards name different bases."""
        locations = [self.base_location(checkpoint) for checkpoint in composition.checkpoints]
        return locations[0]  # one base key, so one location

    @on_compute_thread
    def prepare(self, uses: Uses | None, precision: str, trigger_aware: bool = True, float_kv: bool = False) -> None:
        """Make ``precision`` ready for a checkpoint or a set without generating: its base pipeline, the anchor's UNet
        at that precision (a new variant is produced and stored) and every LoRA's tensors, all in the cache.
        ``None``: the bundled base's float UNet. What start-up warm-up and Ray Serve's replicas call."""
        config = precision_config(precision, trigger_aware, float_kv=float_kv)
        with self._lock:
            if uses is None:
                base = served_base(self.settings).location
                self.pipeline(base)
                self.float_unet(base)
                return
            composition = Composition.of(uses)
            base = self.composition_base(composition)
            self.pipeline(base)
            if config is None:
                self.float_unet(base, composition.anchor)
            else:
                self.quantized_unet(composition.anchor, config)
            for use in composition.loras:
                self.adapter(use.checkpoint)

    def adapter(self, checkpoint: StoredCheckpoint) -> LoraWeights | None:
        """A LoRA adapter as read from its file, kept in the cache beside the UNets (None for other kinds)."""
        if checkpoint.kind != "lora":
            return None
        return self.cache.get_or_load(
            ("adapter", weights_key(checkpoint)),
            lambda: read_adapter(checkpoint),
            lambda lora: sum(t.numel() * t.element_size() for t in lora.state_dict.values()),
            f"the LoRA adapter {checkpoint.id}",
        )

    @on_compute_thread
    def latent_rgb(self, base: str) -> LatentRGB:
        """The base VAE's latent-to-RGB preview factors, fitted on first use (a few small encodes)."""
        if base not in self._latent_rgb:
            self._latent_rgb[base] = fit_latent_rgb(self.pipeline(base).vae)
        return self._latent_rgb[base]

    @on_compute_thread
    def native_size(self, uses: Uses) -> int:
        """The image side the checkpoint's (or set's) base was trained at (64 for the demo, 512 for SD 1.5, 1024 for
        SDXL)."""
        with self._lock:
            base = self.composition_base(Composition.of(uses))
            pipe = self.pipeline(base)
        return UNet2DConditionModel.load_config(base, subfolder="unet")["sample_size"] * pipe.vae_scale_factor

    def variant_is_stored(
        self, uses: Uses, precision: str, trigger_aware: bool = True, float_kv: bool = False
    ) -> bool:
        """Whether ``precision`` needs no quantization for this checkpoint or set (full precision, or the anchor's
        variant cached or stored)."""
        config = precision_config(precision, trigger_aware, float_kv=float_kv)
        checkpoint = Composition.of(uses).anchor
        if config is None or self.cache.get(("unet", variant_name(checkpoint, config))) is not None:
            return True
        return variant_path(checkpoint, config, self.settings.home / "taq").exists()

    @on_compute_thread
    def unet_bytes_at(
        self, precision: str, base: str | None = None, trigger_aware: bool = True, float_kv: bool = False
    ) -> int:
        """The resident size of the base's UNet at ``precision`` (from its shapes; nothing is quantized); by default
        the bundled demo base."""
        base = base or served_base(self.settings).location
        config = precision_config(precision, trigger_aware, float_kv=float_kv)
        with self._lock:
            self.pipeline(base)
            unet = self.float_unet(base)
        return weight_bytes(unet) if config is None else quantized_bytes(unet, config)

    def image_parameters(self, uses: Uses, prompt: str, params: GenerationParams) -> ImageParameters:
        """What the image ``generate(uses, prompt, params=params)`` draws says about itself in its PNG: the WebUI's
        ``parameters`` chunk (:func:`personalq.serving.png_parameters.save_png` writes it). The sampler is read from
        the base's pipeline when this process holds it, else from its folder (an app serving on Ray holds none)."""
        composition = Composition.of(uses)
        base = self.composition_base(composition)
        pipe = self._pipelines.get(base)
        scheduler = (type(pipe.scheduler).__name__, dict(pipe.scheduler.config)) if pipe else stored_scheduler(base)
        return image_parameters(composition, prompt, params, sampler_name(*scheduler), base)

    def memory(self) -> MemoryReport:
        return MemoryReport(
            self.cache.budget_bytes, self.cache.pinned_bytes, self.cache.cached_bytes, self._last_unet_bytes
        )

    def set_budget_mb(self, megabytes: int) -> None:
        self.cache.set_budget(megabytes * MB)

    def serving_line(self) -> str:
        """Where generation runs, when not in this process (``RemoteEngine``: the Ray Serve replicas)."""
        return ""

    # -- generation -----------------------------------------------------------------------------------------------

    def generate(
        self,
        uses: Uses,
        prompt: str,
        precision: str = "FP32",
        trigger_aware: bool = True,
        params: GenerationParams | None = None,
        cancel: threading.Event | None = None,
        float_kv: bool = False,
        previews: bool = True,
    ) -> Iterator[Frame]:
        """Stream previews (``previews=False``: progress only) and the final image of ``prompt`` with ``uses`` (one
        checkpoint, or a sequence of :class:`Weighted` checkpoints applied together at their weights) at
        ``precision``: a frame per step, with a preview on the first and then at most one per
        ``Settings.preview_interval_s``.

        The set and its base are checked first: a set mixing bases or holding two full UNets raises
        ``CompositionError``, a checkpoint whose base is not configured, or whose weights do not fit it,
        ``BaseMismatch``, both before anything loads.
        """
        params = params or GenerationParams()
        for frames in self.generate_many(
            uses, [prompt], precision, trigger_aware, [params], cancel, float_kv, previews
        ):
            yield frames[0]

    def generate_many(
        self,
        uses: Uses,
        prompts: list[str],
        precision: str,
        trigger_aware: bool,
        params: list[GenerationParams],
        cancel: threading.Event | None = None,
        float_kv: bool = False,
        previews: bool = True,
    ) -> Iterator[list[Frame]]:
        """Several prompts for one checkpoint or set in one pipeline call (a batch), streamed as one frame per prompt
        and step. Each prompt keeps its own seed and negative prompt, so its image is the one :meth:`generate` draws;
        they must share steps, guidance and size (:func:`batch_shape`)."""
        shared = params[0]
        if len(prompts) != len(params) or any(batch_shape(p) != batch_shape(shared) for p in params):
            raise ValueError(
                "a batch needs one GenerationParams per prompt, all with the same steps, guidance and size"
            )
        config = precision_config(precision, trigger_aware, float_kv=float_kv)
        composition = Composition.of(uses)
        anchor = composition.anchor
        base = self.composition_base(composition)
        negatives = [p.negative_prompt for p in params]

        def run(callback) -> list:
            with self._lock:
                pipe = self.pipeline(base)
                variant = None if config is None else self.quantized_unet(anchor, config)
                pipe.unet = self.float_unet(base, anchor) if variant is None else variant.unet
                self._last_unet_bytes = weight_bytes(pipe.unet)
                loras = {use.id: self.adapter(use.checkpoint) for use in composition.loras}
                generators = [torch.Generator(self.device).manual_seed(p.seed) for p in params]
                single = len(prompts) == 1
                with contextlib.ExitStack() as adapters:
                    with weights_read_repeatedly():  # only while the adapters attach
                        adapters.enter_context(set_applied(pipe, composition.applied, loras))
                    # after the embeddings' tokens are in the tokenizer: the mask's positions are the prompt's tokens
                    mask = (
                        None
                        if variant is None
                        else token_mask(
                            pipe.tokenizer, negatives + prompts, composition.trigger_words, variant.config.mode
                        )
                    )
                    started = time.perf_counter()
                    with _protecting(variant, mask):
                        result = pipe(
                            prompts[0] if single else prompts,
                            negative_prompt=(negatives[0] if single else negatives) if any(negatives) else None,
                            num_inference_steps=shared.steps,
                            guidance_scale=shared.guidance,
                            width=shared.width,
                            height=shared.height,
                            generator=generators[0] if single else generators,
                            callback_on_step_end=callback,
                            callback_on_step_end_tensor_inputs=["latents"],
                        )
                    log.info(
                        "generated %d image(s) of %s at %s in %.2f s",
                        len(prompts),
                        composition.describe(),
                        precision,
                        time.perf_counter() - started,
                    )
                return result.images

        def preview(latents) -> list:
            factors = self.latent_rgb(base)
            return [preview_image(latents, factors, index=i) for i in range(len(prompts))]

        drawn = preview if previews else None
        for frame in stream(run, shared.steps, cancel, drawn, self.settings.preview_interval_s):
            images = frame.image if frame.image is not None else [None] * len(prompts)
            yield [Frame(image, frame.step, frame.total, frame.seconds, frame.final) for image in images]


def batch_shape(params: GenerationParams) -> tuple:
    """What requests must share to run in one pipeline call: steps, guidance and image size."""
    return params.steps, params.guidance, params.width, params.height


def _protecting(variant: QuantizedUNet | None, mask):
    return contextlib.nullcontext() if variant is None else variant.context.protecting(mask)
