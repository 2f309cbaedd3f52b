"""TAQ: trigger-aware post-training quantization of a diffusion UNet with real packed low-bit weights."""
