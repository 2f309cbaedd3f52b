"""Every adapter format people download, end to end: written by :mod:`personalq.standin.formats` for a tiny SD 1.5 /
SDXL pipeline, read by :mod:`personalq.serving.adapter_files`, applied with diffusers.

For each file: the picture changes, every LoRA module in the file is wrapped by peft (none silently dropped) and
computes ``W + (alpha / rank) * up @ down`` exactly as the file defines it (alphas read from the file here, not
through the reader), and after unloading the output is bit-identical to the base's again. The writers' layouts are
checked against the real producers (peft's ``save_pretrained``, diffusers' ``get_peft_model_state_dict``) and
against kohya-ss's names at real size (built on the ``meta`` device); the architecture detector is checked on all.
"""

from __future__ import annotations

import collections
import copy
import json
import logging
import math
import types
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from diffusers import UNet2DConditionModel
from peft import LoraConfig, get_peft_model, get_peft_model_state_dict
from peft.tuners.tuners_utils import BaseTunerLayer
from safetensors import safe_open
from safetensors.torch import load_file, save_file
from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

from personalq.repository.importers.architecture import weights_architecture
from personalq.serving import adapter_files as af
from personalq.standin import formats
from personalq.standin.bases import ARCHITECTURES, build_pipeline
from personalq.standin.clip_vocab import write_clip_tokenizer_files

ADAPTER = "under_test"


@pytest.fixture(scope="module")
def vocab(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("clip-vocab")
    write_clip_tokenizer_files(folder)
    return folder


@pytest.fixture(params=["sd15", "sdxl"])
def pipe(request, vocab):
    pipeline = build_pipeline(request.param, "tiny", vocab_dir=vocab)
    pipeline.set_progress_bar_config(disable=True)
    return pipeline


@pytest.fixture
def sd15(vocab):
    pipeline = build_pipeline("sd15", "tiny", vocab_dir=vocab)
    pipeline.set_progress_bar_config(disable=True)
    return pipeline


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


@pytest.fixture
def warnings_of_loaders():
    """Warnings diffusers, peft and transformers log while loading (diffusers' own loggers do not propagate)."""
    handler = _Records()
    loggers = [logging.getLogger(name) for name in ("diffusers", "peft", "transformers")]
    for logger in loggers:
        logger.addHandler(handler)
    yield handler.messages
    for logger in loggers:
        logger.removeHandler(handler)


def latents(pipe, prompt: str = "a photo of sks") -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    return pipe(prompt, num_inference_steps=2, height=64, width=64, generator=generator, output_type="latent").images


def is_xl(pipe) -> bool:
    return getattr(pipe, "text_encoder_2", None) is not None


def wrapped(pipe) -> dict[str, int]:
    """peft LoRA layers holding the adapter under test, per component."""
    counts = {}
    for component in ("unet", "text_encoder", "text_encoder_2"):
        model = getattr(pipe, component, None)
        if model is None:
            continue
        n = sum(1 for m in model.modules() if isinstance(m, BaseTunerLayer) and ADAPTER in getattr(m, "lora_A", {}))
        if n:
            counts[component] = n
    return counts


def assert_effective_weight(layer, down: torch.Tensor, up: torch.Tensor, scale: float) -> None:
    """The wrapped layer computes with ``W + scale * up @ down`` (for a convolution: ``up`` 1x1 after ``down``)."""
    assert isinstance(layer, BaseTunerLayer), f"{type(layer).__name__} is not wrapped by peft"
    base = layer.get_base_layer()
    down, up = down.float(), up.float()
    delta = scale * torch.einsum("or,ri...->oi...", up.flatten(1), down)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        if isinstance(base, torch.nn.Conv2d):
            x = torch.randn((1, base.in_channels, 6, 6), generator=generator)
            expected = F.conv2d(x, base.weight + delta, base.bias, base.stride, base.padding, base.dilation)
        else:
            x = torch.randn((3, base.in_features), generator=generator)
            expected = F.linear(x, base.weight + delta, base.bias)
        got = layer(x)
        plain = base(x)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
    assert (got - plain).abs().max() > 1e-3 * plain.abs().max(), "the LoRA changes nothing in this layer"


_DROPPED = ("unexpected key", "missing key", "not correctly renamed", ".lora_a", ".lora_b", "lora_down", "lora.down")


def apply_lora(pipe, weights: af.LoraWeights, messages: list[str]) -> None:
    pipe.load_lora_weights(dict(weights.state_dict), adapter_name=ADAPTER)
    pipe.set_adapters([ADAPTER], adapter_weights=[1.0])
    # diffusers and peft name the LoRA keys they could not place ("unexpected keys ... lora_A"); a component the file
    # has no keys for only gets "No LoRA keys associated to ...", which the module counts check instead
    dropped = [m for m in messages if any(word in m.lower() for word in _DROPPED)]
    assert not dropped, dropped


def check_lora_round_trip(pipe, weights: af.LoraWeights, expected_modules: dict[str, int], messages, check_layers):
    base = latents(pipe)
    apply_lora(pipe, weights, messages)
    assert wrapped(pipe) == expected_modules  # every module in the file, no more, no fewer
    assert weights.modules == expected_modules
    check_layers()
    with_lora = latents(pipe)
    assert (with_lora - base).abs().max() > 0.05 * base.abs().max(), "the LoRA does not change the picture"
    pipe.unload_lora_weights()
    assert not wrapped(pipe)
    assert torch.equal(latents(pipe), base), "unloading did not restore the base exactly"


# --- kohya-ss ---------------------------------------------------------------------------------------------------


def kohya_counts(path: Path) -> dict[str, int]:
    prefixes = {
        "lora_unet_": "unet",
        "lora_te_": "text_encoder",
        "lora_te1_": "text_encoder",
        "lora_te2_": "text_encoder_2",
    }
    counts: dict[str, int] = {}
    with safe_open(str(path), "pt") as handle:
        for key in handle.keys():
            if key.endswith(".lora_down.weight"):
                component = next(c for p, c in prefixes.items() if key.startswith(p))
                counts[component] = counts.get(component, 0) + 1
    return counts


@pytest.mark.parametrize("conv_rank", [None, 4], ids=["lora", "locon"])
def test_kohya_lora_applies_exactly(pipe, conv_rank, tmp_path, warnings_of_loaders):
    rank, alpha, conv_alpha = 8, 4.0, 2.0
    path = formats.write_kohya_lora(
        pipe, tmp_path / "style_v1.safetensors", rank=rank, alpha=alpha, conv_rank=conv_rank, conv_alpha=conv_alpha
    )
    modules = formats.kohya_modules(pipe, rank, alpha, conv_rank, conv_alpha)
    convs = [m for m in modules if m.module.weight.dim() == 4 and m.module.kernel_size != (1, 1)]
    assert bool(convs) == bool(conv_rank)
    tensors = load_file(str(path))
    assert all(t.dtype == torch.float16 for t in tensors.values())

    weights = af.read_lora(path)
    assert weights.layout == "kohya" and not weights.alpha_folded
    assert weights_architecture(path) == ("sdxl" if is_xl(pipe) else "sd1")

    def check_layers():
        for m in modules:  # alpha as the file stores it, rank from the down weight's shape
            down, up = tensors[f"{m.lora_name}.lora_down.weight"], tensors[f"{m.lora_name}.lora_up.weight"]
            scale = tensors[f"{m.lora_name}.alpha"].item() / down.shape[0]
            layer = getattr(pipe, m.component).get_submodule(m.path)
            assert_effective_weight(layer, down, up, scale)

    check_lora_round_trip(pipe, weights, kohya_counts(path), warnings_of_loaders, check_layers)


def test_kohya_metadata_is_train_network_s(sd15, tmp_path):
    path = formats.write_kohya_lora(
        sd15, tmp_path / "sks_dog.safetensors", rank=4, alpha=1, conv_rank=2, conv_alpha=1, trigger="sks dog"
    )
    with safe_open(str(path), "pt") as handle:
        meta = handle.metadata()
    assert meta["ss_network_module"] == "networks.lora"
    assert (meta["ss_network_dim"], meta["ss_network_alpha"]) == ("4", "1.0")
    assert json.loads(meta["ss_network_args"]) == {"conv_dim": "2", "conv_alpha": "1", "dropout": None}
    assert (meta["ss_base_model_version"], meta["ss_v2"], meta["ss_output_name"]) == ("sd_v1", "False", "sks_dog")
    assert json.loads(meta["ss_tag_frequency"])["10_sks dog"]["sks dog"] == 20
    assert float(meta["ss_training_started_at"]) < float(meta["ss_training_finished_at"])
    assert meta["modelspec.architecture"] == "stable-diffusion-v1/lora"
    assert meta["modelspec.sai_model_spec"] == "1.0.1" and meta["modelspec.title"] == "sks_dog"
    assert len(meta["sshs_model_hash"]) == 64 and len(meta["sshs_legacy_hash"]) == 8
    assert all(isinstance(v, str) for v in meta.values())


# --- diffusers and PEFT -----------------------------------------------------------------------------------------


def peft_module_scales(path: Path, config_by_component: dict[str, dict]):
    """(component, module path, down, up, scale) per module of a diffusers / PEFT file, the scale from the config
    the file carries (read here independently of the reader)."""
    tensors = load_file(str(path))
    for key, down in tensors.items():
        if not key.endswith(".lora_A.weight"):
            continue
        module = key.removesuffix(".lora_A.weight")
        if module.startswith("base_model.model."):
            component, inner = "unet", module.removeprefix("base_model.model.")
        else:
            component, _, inner = module.partition(".")
        config = config_by_component[component]
        alpha = config.get("alpha_pattern", {}).get(inner.rsplit(".", 1)[-1], config["lora_alpha"])
        yield component, inner, down, tensors[module + ".lora_B.weight"], alpha / down.shape[0]


def submodule(pipe, component: str, path: str):
    model = getattr(pipe, component)
    if not hasattr(model, "text_model"):
        path = path.removeprefix("text_model.")  # transformers 5's CLIPTextModel has no text_model level
    return model.get_submodule(path)


@pytest.mark.parametrize("text_encoder", [False, True], ids=["unet", "unet+text"])
def test_diffusers_lora_file_applies_exactly(pipe, text_encoder, tmp_path, warnings_of_loaders):
    path = formats.write_diffusers_lora(pipe, tmp_path / "lora", rank=4, alpha=12, text_encoder=text_encoder)
    assert path.name == "pytorch_lora_weights.safetensors"
    with safe_open(str(path), "pt") as handle:
        packed = json.loads(handle.metadata()["lora_adapter_metadata"])
    configs: dict[str, dict] = {}
    for key, value in packed.items():
        component, _, field = key.partition(".")
        configs.setdefault(component, {})[field] = value
    assert configs["unet"]["lora_alpha"] == 12 and configs["unet"]["r"] == 4

    weights = af.read_lora(path.parent)  # the folder, as a card points at it
    assert weights.layout == "diffusers" and weights.alpha_folded
    expected: dict[str, int] = {}
    for component, *_ in peft_module_scales(path, configs):
        expected[component] = expected.get(component, 0) + 1
    encoders = ["text_encoder", "text_encoder_2"] if is_xl(pipe) else ["text_encoder"]
    assert set(expected) == {"unet", *(encoders if text_encoder else [])}

    def check_layers():
        for component, inner, down, up, scale in peft_module_scales(path, configs):
            assert_effective_weight(submodule(pipe, component, inner), down, up, scale)

    check_lora_round_trip(pipe, weights, expected, warnings_of_loaders, check_layers)
    detected = weights_architecture(path)
    assert detected == ("sdxl" if is_xl(pipe) else None)  # tiny SD 1.5 attention-only: width 32 tells nothing


def test_diffusers_lora_with_older_key_names(sd15, tmp_path, warnings_of_loaders):
    """``convert_state_dict_to_diffusers`` keys (``…to_q.lora.down.weight``), as the older training scripts wrote."""
    path = formats.write_diffusers_lora(
        sd15, tmp_path / "lora", rank=2, alpha=2, text_encoder=True, key_style="diffusers", adapter_metadata=False
    )
    names = list(load_file(str(path)))
    assert any(n.endswith("to_q.lora.down.weight") for n in names)
    assert any(n.endswith("q_proj.lora_linear_layer.down.weight") for n in names)
    weights = af.read_lora(path)
    assert weights.layout == "diffusers" and not weights.alpha_folded
    counts = {"unet": sum(n.startswith("unet.") for n in names) // 2}
    counts["text_encoder"] = sum(n.startswith("text_encoder.") for n in names) // 2
    check_lora_round_trip(sd15, weights, counts, warnings_of_loaders, lambda: None)


def test_peft_folder_scales_lora_alpha(pipe, tmp_path, warnings_of_loaders):
    folder = formats.write_peft_folder(pipe, tmp_path / "peft", rank=4, alpha=16)  # scale 4, not 1
    config = json.loads((folder / "adapter_config.json").read_text())
    assert (config["r"], config["lora_alpha"], config["peft_type"]) == (4, 16, "LORA")
    weights = af.read_lora(folder)
    assert weights.layout == "peft" and weights.alpha_folded
    assert all(k.startswith("unet.") for k in weights.state_dict)
    files = folder / "adapter_model.safetensors"
    n = sum(1 for _ in peft_module_scales(files, {"unet": config}))

    def check_layers():
        for component, inner, down, up, scale in peft_module_scales(files, {"unet": config}):
            assert scale == 4.0
            assert_effective_weight(submodule(pipe, component, inner), down, up, scale)

    check_lora_round_trip(pipe, weights, {"unet": n}, warnings_of_loaders, check_layers)
    assert weights_architecture(folder) == ("sdxl" if is_xl(pipe) else None)


def test_peft_alpha_pattern_and_rslora(sd15, tmp_path):
    folder = formats.write_peft_folder(sd15, tmp_path / "peft", rank=4, alpha=8)
    config = json.loads((folder / "adapter_config.json").read_text())
    config.update(alpha_pattern={"to_q": 2}, use_rslora=True)
    (folder / "adapter_config.json").write_text(json.dumps(config))
    raw = load_file(str(folder / "adapter_model.safetensors"))
    weights = af.read_lora(folder)
    for key, tensor in raw.items():
        if key.endswith("lora_B.weight"):
            scale = (2 if ".to_q." in key else 8) / math.sqrt(4)
            folded = weights.state_dict["unet." + key.removeprefix("base_model.model.")]
            torch.testing.assert_close(folded, tensor * scale)


def test_writers_match_the_real_producers(pipe, tmp_path):
    """Key names, shapes and config as peft's ``save_pretrained`` and diffusers' peft integration write them."""
    config = LoraConfig(
        r=4, lora_alpha=8, init_lora_weights="gaussian", target_modules=list(formats.DIFFUSERS_UNET_TARGETS)
    )
    get_peft_model(copy.deepcopy(pipe.unet), config).save_pretrained(str(tmp_path / "real"))
    formats.write_peft_folder(pipe, tmp_path / "ours", rank=4, alpha=8)
    real = json.loads((tmp_path / "real" / "adapter_config.json").read_text())
    ours = json.loads((tmp_path / "ours" / "adapter_config.json").read_text())
    assert ours == real

    def header(path):
        with safe_open(str(path), "pt") as handle:
            return {k: tuple(handle.get_slice(k).get_shape()) for k in handle.keys()}, handle.metadata()

    assert header(tmp_path / "ours" / "adapter_model.safetensors") == header(
        tmp_path / "real" / "adapter_model.safetensors"
    )

    unet = copy.deepcopy(pipe.unet)
    unet.add_adapter(config)
    real_keys = {f"unet.{k}": tuple(v.shape) for k, v in get_peft_model_state_dict(unet).items()}
    ours_keys, _ = header(formats.write_diffusers_lora(pipe, tmp_path / "diffusers", rank=4, alpha=8))
    assert ours_keys == real_keys


# --- textual inversion ------------------------------------------------------------------------------------------


def check_embedding_round_trip(pipe, embedding: af.TextualInversion, token: str) -> None:
    prompt = f"a photo of {token}"
    base = latents(pipe, prompt)
    added = af.load_textual_inversion(pipe, embedding, token)
    assert added == [token] + [f"{token}_{i}" for i in range(1, embedding.n_vectors)]
    for component, tensor in embedding.embeddings.items():
        tokenizer = pipe.tokenizer if component == "text_encoder" else pipe.tokenizer_2
        table = getattr(pipe, component).get_input_embeddings().weight
        ids = tokenizer.convert_tokens_to_ids(added)
        torch.testing.assert_close(table[ids].detach(), tensor.float())
    with_embedding = latents(pipe, prompt)
    assert (with_embedding - base).abs().max() > 0.01 * base.abs().max(), "the embedding does not change the picture"
    af.unload_textual_inversion(pipe, embedding, token)
    for component in embedding.embeddings:
        tokenizer = pipe.tokenizer if component == "text_encoder" else pipe.tokenizer_2
        assert not set(added) & set(tokenizer.get_vocab())
    assert torch.equal(latents(pipe, prompt), base), "unloading did not restore the base exactly"


def test_a1111_emb_params(sd15, tmp_path):
    path = formats.write_a1111_embedding(sd15, tmp_path / "bad_hands.safetensors", n_vectors=3, seed=1)
    with safe_open(str(path), "pt") as handle:
        assert list(handle.keys()) == ["emb_params"]
        assert handle.metadata()["modelspec.architecture"] == "stable-diffusion-v1/textual-inversion"
    embedding = af.read_textual_inversion(path)
    assert embedding.layout == "emb_params" and embedding.token is None and embedding.n_vectors == 3
    assert set(embedding.embeddings) == {"text_encoder"}
    check_embedding_round_trip(sd15, embedding, "bad_hands")
    assert weights_architecture(path) is None  # 32 wide: no real model's width


def test_sdxl_clip_l_clip_g(vocab, tmp_path):
    pipe = build_pipeline("sdxl", "tiny", vocab_dir=vocab)
    pipe.set_progress_bar_config(disable=True)
    path = formats.write_sdxl_embedding(pipe, tmp_path / "xl_style.safetensors", n_vectors=2)
    embedding = af.read_textual_inversion(path)
    assert embedding.layout == "clip_l/clip_g" and set(embedding.embeddings) == {"text_encoder", "text_encoder_2"}
    check_embedding_round_trip(pipe, embedding, "xl_style")
    assert weights_architecture(path) == "sdxl"


def test_diffusers_concept_folder(pipe, tmp_path):
    folder = formats.write_diffusers_embedding(pipe, tmp_path / "cat-toy", token="<cat-toy>", n_vectors=2)
    assert (folder / "token_identifier.txt").read_text() == "<cat-toy>"
    assert (folder / "type_of_concept.txt").read_text() == "object"
    assert (folder / "learned_embeds_2.safetensors").is_file() == is_xl(pipe)
    embedding = af.read_textual_inversion(folder)
    assert embedding.token == "<cat-toy>" and embedding.layout.startswith("diffusers")
    check_embedding_round_trip(pipe, embedding, embedding.token)
    assert weights_architecture(folder) == ("sdxl" if is_xl(pipe) else None)


def test_embedding_for_another_base_is_refused(vocab, sd15, tmp_path):
    xl = build_pipeline("sdxl", "tiny", vocab_dir=vocab)
    sd1_embedding = af.read_textual_inversion(formats.write_a1111_embedding(sd15, tmp_path / "a.safetensors"))
    xl_embedding = af.read_textual_inversion(formats.write_sdxl_embedding(xl, tmp_path / "b.safetensors"))
    with pytest.raises(af.AdapterFileError, match="made for SD 1.x/2.x"):
        af.load_textual_inversion(xl, sd1_embedding, "a")
    with pytest.raises(af.AdapterFileError, match="made for SDXL"):
        af.load_textual_inversion(sd15, xl_embedding, "b")
    wide = af.TextualInversion({"text_encoder": torch.zeros(1, 768)}, "emb_params")
    with pytest.raises(af.AdapterFileError, match="768 wide, the base's are 32"):
        af.load_textual_inversion(sd15, wide, "c")


# --- real sizes, on the meta device -----------------------------------------------------------------------------


def meta_pipeline(unet: dict, text_encoders: tuple[dict, ...]):
    """Only the modules the writers read, with real shapes and no memory behind them."""
    with torch.device("meta"):
        parts = {
            "unet": UNet2DConditionModel(**unet),
            "text_encoder": CLIPTextModel(CLIPTextConfig(**text_encoders[0])),
        }
        if len(text_encoders) > 1:
            parts["text_encoder_2"] = CLIPTextModelWithProjection(CLIPTextConfig(**text_encoders[1]))
    return types.SimpleNamespace(**parts)


def header_of(path: Path) -> dict[str, tuple[int, ...]]:
    with safe_open(str(path), "pt") as handle:
        return {k: tuple(handle.get_slice(k).get_shape()) for k in handle.keys()}


def test_real_size_sd15_kohya_rank_32(tmp_path):
    spec = ARCHITECTURES[("sd15", "real")]
    pipe = meta_pipeline(spec.unet, spec.text_encoders)
    path = formats.write_kohya_lora(pipe, tmp_path / "real_sd15.safetensors", rank=32, alpha=16)
    shapes = header_of(path)
    assert kohya_counts(path) == {"unet": 192, "text_encoder": 72}  # every SD 1.5 kohya LoRA: 16 x 12 and 12 x 6
    assert shapes["lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn1_to_q.lora_down.weight"] == (32, 320)
    assert shapes["lora_unet_down_blocks_0_attentions_0_proj_in.lora_down.weight"] == (32, 320, 1, 1)
    assert shapes["lora_unet_mid_block_attentions_0_transformer_blocks_0_attn2_to_k.lora_down.weight"] == (32, 768)
    assert shapes["lora_te_text_model_encoder_layers_11_mlp_fc2.lora_up.weight"] == (768, 32)
    assert weights_architecture(path) == "sd1"
    assert weights_architecture(formats.write_diffusers_lora(pipe, tmp_path / "diffusers")) == "sd1"
    assert weights_architecture(formats.write_peft_folder(pipe, tmp_path / "peft")) == "sd1"
    assert weights_architecture(formats.write_a1111_embedding(pipe, tmp_path / "emb.safetensors")) == "sd1"
    assert weights_architecture(formats.write_diffusers_embedding(pipe, tmp_path / "concept")) == "sd1"


def test_real_size_sdxl_kohya_names(tmp_path):
    spec = ARCHITECTURES[("sdxl", "real")]
    pipe = meta_pipeline(spec.unet, spec.text_encoders)
    path = formats.write_kohya_lora(pipe, tmp_path / "real_xl.safetensors", rank=1, conv_rank=1)
    shapes = header_of(path)
    counts = kohya_counts(path)
    assert (counts["text_encoder"], counts["text_encoder_2"]) == (72, 192)
    for name in (  # SGM names, as sd-scripts' SDXL UNet (library/sdxl_original_unet.py) names its modules
        "lora_unet_input_blocks_4_1_transformer_blocks_0_attn1_to_q",
        "lora_unet_input_blocks_8_1_transformer_blocks_9_ff_net_2",
        "lora_unet_input_blocks_3_0_op",
        "lora_unet_middle_block_1_proj_in",
        "lora_unet_middle_block_2_emb_layers_1",
        "lora_unet_output_blocks_0_0_in_layers_2",
        "lora_unet_output_blocks_0_0_skip_connection",
        "lora_unet_output_blocks_5_2_conv",
        "lora_unet_output_blocks_8_0_out_layers_3",
        "lora_te1_text_model_encoder_layers_11_self_attn_q_proj",
        "lora_te2_text_model_encoder_layers_31_mlp_fc2",
    ):
        assert f"{name}.lora_down.weight" in shapes, name
    assert shapes["lora_unet_middle_block_1_transformer_blocks_0_attn2_to_k.lora_down.weight"] == (1, 2048)
    kinds = collections.Counter(
        "linear" if len(shape) == 2 else "1x1" if shape[2:] == (1, 1) else "3x3"
        for key, shape in shapes.items()
        if key.startswith("lora_unet") and key.endswith(".lora_down.weight")
    )
    # 722 in the transformers (70 layers x 10, + 11 proj_in/out pairs) + 17 ResNet time embeddings; 11 skip
    # connections; with LoCon, 17 x 2 ResNet convolutions + 2 downsamplers + 2 upsamplers
    assert kinds == {"linear": 739, "1x1": 11, "3x3": 38}
    assert kohya_counts(formats.write_kohya_lora(pipe, tmp_path / "plain.safetensors", rank=1))["unet"] == 722
    assert weights_architecture(path) == "sdxl"
    assert weights_architecture(formats.write_sdxl_embedding(pipe, tmp_path / "emb.safetensors")) == "sdxl"
    embedding = header_of(tmp_path / "emb.safetensors")
    assert (embedding["clip_l"], embedding["clip_g"]) == ((2, 768), (2, 1280))


def test_detects_sd2_by_width(tmp_path):
    sd2_unet = {
        **ARCHITECTURES[("sd15", "real")].unet,
        "attention_head_dim": [5, 10, 20, 20],
        "cross_attention_dim": 1024,
        "use_linear_projection": True,
    }
    open_clip_h = {**ARCHITECTURES[("sd15", "real")].text_encoders[0], "hidden_size": 1024, "num_hidden_layers": 2}
    open_clip_h.update(intermediate_size=4096, num_attention_heads=16, hidden_act="gelu", projection_dim=512)
    pipe = meta_pipeline(sd2_unet, (open_clip_h,))
    assert weights_architecture(formats.write_kohya_lora(pipe, tmp_path / "sd2.safetensors", rank=1)) == "sd2"
    assert weights_architecture(formats.write_a1111_embedding(pipe, tmp_path / "emb.safetensors")) == "sd2"
    unet_only = formats.write_kohya_lora(pipe, tmp_path / "unet.safetensors", rank=1, text_encoder=False)
    assert weights_architecture(unet_only) == "sd2"


# --- refusals ---------------------------------------------------------------------------------------------------


def test_pickles_are_refused_unopened(tmp_path):
    for name in ("lora.pt", "lora.ckpt", "learned_embeds.bin"):
        path = tmp_path / name
        path.write_bytes(b"\x80\x04 not really a pickle")
        for reader in (af.read_lora, af.read_textual_inversion):
            with pytest.raises(af.AdapterFileError, match="pickle"):
                reader(path)
    renamed = tmp_path / "renamed.safetensors"
    renamed.write_bytes(b"PK\x03\x04" + b"\0" * 64)
    with pytest.raises(af.AdapterFileError, match="pickle/zip"):
        af.read_lora(renamed)
    concept = tmp_path / "concept"
    concept.mkdir()
    (concept / "learned_embeds.bin").write_bytes(b"\x80\x04")
    with pytest.raises(af.AdapterFileError, match="pickle"):
        af.read_textual_inversion(concept)


def test_files_that_are_not_adapters(sd15, tmp_path):
    embedding = formats.write_a1111_embedding(sd15, tmp_path / "emb.safetensors")
    with pytest.raises(af.AdapterFileError, match="textual-inversion embedding"):
        af.read_lora(embedding)
    lora = formats.write_kohya_lora(sd15, tmp_path / "lora.safetensors")
    with pytest.raises(af.AdapterFileError, match="not a textual-inversion embedding"):
        af.read_textual_inversion(lora)
    checkpoint = tmp_path / "model.safetensors"
    save_file({"model.diffusion_model.input_blocks.0.0.weight": torch.zeros(4, 4)}, str(checkpoint))
    with pytest.raises(af.AdapterFileError, match="full Stable Diffusion checkpoint"):
        af.read_lora(checkpoint)
    loha = tmp_path / "loha.safetensors"
    save_file({"lora_unet_x.hada_w1_a": torch.zeros(2, 2), "lora_unet_x.alpha": torch.tensor(1.0)}, str(loha))
    with pytest.raises(af.AdapterFileError, match="LoHa"):
        af.read_lora(loha)
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"\xff" * 100)
    with pytest.raises(af.AdapterFileError, match="not a readable safetensors"):
        af.read_lora(garbage)
    other = tmp_path / "other.safetensors"
    save_file({"a": torch.zeros(200, 3), "b": torch.zeros(1)}, str(other))
    with pytest.raises(af.AdapterFileError, match="is not a LoRA"):
        af.read_lora(other)
    assert weights_architecture(other) is None
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(af.AdapterFileError, match="no LoRA weights"):
        af.read_lora(empty)
    peft = formats.write_peft_folder(sd15, tmp_path / "peft", rank=2)
    (peft / "adapter_config.json").write_text(json.dumps({"peft_type": "LOHA", "r": 2}))
    with pytest.raises(af.AdapterFileError, match="LOHA adapter"):
        af.read_lora(peft)
