"""Stand-in pipelines written as WebUI single-file checkpoints (original LDM / SGM key names) load back in diffusers
bit for bit, and at real size carry the key names and shapes of the published SD 1.5 / SDXL files."""

from types import SimpleNamespace

import pytest
import torch
from diffusers import AutoencoderKL, StableDiffusionPipeline, StableDiffusionXLPipeline, UNet2DConditionModel
from diffusers.loaders import single_file_utils as diffusers_single_file
from safetensors import safe_open
from safetensors.torch import load_file
from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

from personalq.standin.bases import ARCHITECTURES, write_stand_in
from personalq.standin.ldm import pipeline_to_ldm, write_ldm_checkpoint

PIPELINES = {"sd15": StableDiffusionPipeline, "sdxl": StableDiffusionXLPipeline}
PREFIXES = {
    "sd15": ("model.diffusion_model.", "first_stage_model.", "cond_stage_model.transformer.text_model."),
    "sdxl": (
        "model.diffusion_model.",
        "first_stage_model.",
        "conditioner.embedders.0.transformer.text_model.",
        "conditioner.embedders.1.model.",
    ),
}
OPEN_CLIP = "conditioner.embedders.1.model."


def _assert_same_weights(original: torch.nn.Module, loaded: torch.nn.Module) -> None:
    expected, actual = original.state_dict(), loaded.state_dict()
    assert expected.keys() == actual.keys()
    for key, tensor in expected.items():
        assert actual[key].dtype == tensor.dtype and torch.equal(actual[key], tensor), key


# ------------------------------------------------------------------------------------------- tiny: round trip


@pytest.mark.parametrize("arch", ["sd15", "sdxl"])
def test_a_tiny_stand_in_written_as_one_ldm_file_loads_back_bit_for_bit(arch, tmp_path):
    base = write_stand_in(arch, tmp_path / "base", size="tiny", dtype=torch.float32)
    pipeline_class = PIPELINES[arch]
    original = pipeline_class.from_pretrained(base, local_files_only=True)
    file = write_ldm_checkpoint(original, tmp_path / "model.safetensors")

    with safe_open(str(file), framework="pt") as f:
        keys, metadata = set(f.keys()), f.metadata()
    assert metadata == {"format": "pt"}
    assert all(key.startswith(PREFIXES[arch]) for key in keys)
    assert all(any(key.startswith(prefix) for key in keys) for prefix in PREFIXES[arch])
    assert "model.diffusion_model.input_blocks.0.0.weight" in keys
    assert "first_stage_model.decoder.mid.attn_1.proj_out.weight" in keys
    diffusers_names = ("down_blocks", "up_blocks", "mid_block", "resnets", "attentions", "conv_shortcut", "group_norm")
    assert not [key for key in keys if any(name in key for name in diffusers_names)]

    unet = UNet2DConditionModel.from_single_file(str(file), config=str(base), subfolder="unet", local_files_only=True)
    _assert_same_weights(original.unet, unet)

    loaded = pipeline_class.from_single_file(str(file), config=str(base), local_files_only=True)
    for name in ("unet", "vae", "text_encoder", "text_encoder_2"):
        if hasattr(original, name):
            _assert_same_weights(getattr(original, name), getattr(loaded, name))
    assert type(loaded.scheduler) is type(original.scheduler)
    assert loaded.tokenizer.get_vocab() == original.tokenizer.get_vocab()


def test_the_tiny_file_carries_the_original_layout(tmp_path):
    base = write_stand_in("sdxl", tmp_path / "base", size="tiny", dtype=torch.float32)
    pipe = StableDiffusionXLPipeline.from_pretrained(base, local_files_only=True)
    file = write_ldm_checkpoint(pipe, tmp_path / "model.safetensors", dtype=torch.float16, metadata={"a": "b"})
    state = load_file(file)
    with safe_open(str(file), framework="pt") as f:
        assert f.metadata() == {"format": "pt", "a": "b"}

    position_ids = state["conditioner.embedders.0.transformer.text_model.embeddings.position_ids"]
    assert position_ids.dtype == torch.int64 and position_ids.tolist() == [list(range(77))]
    assert {t.dtype for key, t in state.items() if "position_ids" not in key} == {torch.float16}

    # SDXL level 1 has two transformer blocks per attention: input_blocks.4/5, output_blocks.0/1/2, middle_block.1
    unet = "model.diffusion_model."
    for block in ("input_blocks.4.1", "input_blocks.5.1", "middle_block.1", "output_blocks.2.1"):
        assert f"{unet}{block}.transformer_blocks.1.attn2.to_k.weight" in state
        assert f"{unet}{block}.transformer_blocks.2.attn2.to_k.weight" not in state
    assert f"{unet}input_blocks.3.0.op.weight" in state and f"{unet}output_blocks.2.2.conv.weight" in state
    assert f"{unet}label_emb.0.0.weight" in state and f"{unet}label_emb.0.2.weight" in state

    layer = pipe.text_encoder_2.text_model.encoder.layers[0].self_attn
    fused = torch.cat([layer.q_proj.weight, layer.k_proj.weight, layer.v_proj.weight]).half()
    assert torch.equal(state[f"{OPEN_CLIP}transformer.resblocks.0.attn.in_proj_weight"], fused)
    projection = pipe.text_encoder_2.text_projection.weight.half()
    assert torch.equal(state[f"{OPEN_CLIP}text_projection"], projection.T)
    assert state[f"{OPEN_CLIP}logit_scale"].shape == ()
    assert state["first_stage_model.encoder.mid.attn_1.q.weight"].shape == (64, 64, 1, 1)


# --------------------------------------------------------------------------------- real size, on the meta device


def _meta_models(arch: str) -> SimpleNamespace:
    spec = ARCHITECTURES[(arch, "real")]
    with torch.device("meta"):
        models = SimpleNamespace(
            unet=UNet2DConditionModel(**spec.unet),
            vae=AutoencoderKL(**spec.vae),
            text_encoder=CLIPTextModel(CLIPTextConfig(**spec.text_encoders[0])),
        )
        if spec.is_xl:
            models.text_encoder_2 = CLIPTextModelWithProjection(CLIPTextConfig(**spec.text_encoders[1]))
    return models


REAL_KEYS = {
    "sd15": {
        "model.diffusion_model.input_blocks.1.1.transformer_blocks.0.attn2.to_k.weight": (320, 768),
        "model.diffusion_model.input_blocks.1.1.proj_in.weight": (320, 320, 1, 1),
        "model.diffusion_model.input_blocks.3.0.op.weight": (320, 320, 3, 3),
        "model.diffusion_model.middle_block.1.transformer_blocks.0.attn1.to_q.weight": (1280, 1280),
        "model.diffusion_model.output_blocks.2.1.conv.weight": (1280, 1280, 3, 3),
        "model.diffusion_model.output_blocks.5.2.conv.weight": (1280, 1280, 3, 3),
        "model.diffusion_model.output_blocks.11.0.skip_connection.weight": (320, 640, 1, 1),
        "model.diffusion_model.time_embed.0.weight": (1280, 320),
        "model.diffusion_model.out.2.weight": (4, 320, 3, 3),
        "first_stage_model.encoder.down.0.block.0.conv1.weight": (128, 128, 3, 3),
        "first_stage_model.decoder.up.0.block.0.nin_shortcut.weight": (128, 256, 1, 1),
        "first_stage_model.decoder.up.3.upsample.conv.weight": (512, 512, 3, 3),
        "first_stage_model.decoder.mid.attn_1.q.weight": (512, 512, 1, 1),
        "first_stage_model.quant_conv.weight": (8, 8, 1, 1),
        "cond_stage_model.transformer.text_model.embeddings.position_embedding.weight": (77, 768),
        "cond_stage_model.transformer.text_model.encoder.layers.11.mlp.fc2.weight": (768, 3072),
        "cond_stage_model.transformer.text_model.embeddings.position_ids": (1, 77),
    },
    "sdxl": {
        "model.diffusion_model.label_emb.0.0.weight": (1280, 2816),
        "model.diffusion_model.label_emb.0.2.weight": (1280, 1280),
        "model.diffusion_model.input_blocks.4.1.transformer_blocks.1.attn2.to_k.weight": (640, 2048),
        "model.diffusion_model.input_blocks.8.1.transformer_blocks.9.attn2.to_k.weight": (1280, 2048),
        "model.diffusion_model.input_blocks.4.1.proj_in.weight": (640, 640),
        "model.diffusion_model.middle_block.1.transformer_blocks.9.ff.net.0.proj.weight": (10240, 1280),
        "model.diffusion_model.output_blocks.2.2.conv.weight": (1280, 1280, 3, 3),
        "model.diffusion_model.output_blocks.8.0.skip_connection.weight": (320, 640, 1, 1),
        "first_stage_model.decoder.mid.attn_1.proj_out.weight": (512, 512, 1, 1),
        "conditioner.embedders.0.transformer.text_model.encoder.layers.11.self_attn.q_proj.weight": (768, 768),
        "conditioner.embedders.1.model.transformer.resblocks.31.attn.in_proj_weight": (3840, 1280),
        "conditioner.embedders.1.model.transformer.resblocks.31.attn.in_proj_bias": (3840,),
        "conditioner.embedders.1.model.transformer.resblocks.9.mlp.c_proj.bias": (1280,),
        "conditioner.embedders.1.model.transformer.resblocks.0.mlp.c_fc.weight": (5120, 1280),
        "conditioner.embedders.1.model.positional_embedding": (77, 1280),
        "conditioner.embedders.1.model.token_embedding.weight": (49408, 1280),
        "conditioner.embedders.1.model.ln_final.weight": (1280,),
        "conditioner.embedders.1.model.text_projection": (1280, 1280),
        "conditioner.embedders.1.model.logit_scale": (),
    },
}
# tensors per component in the published files: UNet, VAE, CLIP-L (with position_ids), OpenCLIP bigG (with logit_scale)
REAL_COUNTS = {"sd15": (686, 248, 197), "sdxl": (1680, 248, 197, 390)}
DIFFUSERS_MODEL_TYPE = {"sd15": "v1", "sdxl": "xl_base"}


@pytest.mark.parametrize("arch", ["sd15", "sdxl"])
def test_real_size_key_names_and_shapes(arch):
    models = _meta_models(arch)
    state = pipeline_to_ldm(models)

    counts = tuple(sum(key.startswith(prefix) for key in state) for prefix in PREFIXES[arch])
    assert counts == REAL_COUNTS[arch] and sum(counts) == len(state)
    for key, shape in REAL_KEYS[arch].items():
        assert tuple(state[key].shape) == shape, key
    assert diffusers_single_file.infer_diffusers_model_type(state) == DIFFUSERS_MODEL_TYPE[arch]

    # diffusers' own conversion back gives exactly the models' parameter names and shapes
    def same_keys_and_shapes(converted: dict, model: torch.nn.Module) -> None:
        expected = model.state_dict()
        assert converted.keys() == expected.keys()
        assert all(converted[key].shape == expected[key].shape for key in expected)

    same_keys_and_shapes(diffusers_single_file.convert_ldm_unet_checkpoint(state, models.unet.config), models.unet)
    same_keys_and_shapes(diffusers_single_file.convert_ldm_vae_checkpoint(state, models.vae.config), models.vae)
    clip = diffusers_single_file.convert_ldm_clip_checkpoint(state)
    clip = {key.removeprefix("text_model."): value for key, value in clip.items() if "position_ids" not in key}
    same_keys_and_shapes(clip, models.text_encoder)
    if arch == "sdxl":
        open_clip = diffusers_single_file.convert_open_clip_checkpoint(models.text_encoder_2, state, prefix=OPEN_CLIP)
        same_keys_and_shapes(open_clip, models.text_encoder_2)
