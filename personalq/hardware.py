"""What this machine's processor can do natively, for choices that are only wins where it can."""

from __future__ import annotations

import functools
from pathlib import Path


@functools.lru_cache(maxsize=1)
def native_bf16() -> bool:
    """Whether the CPU has bfloat16 matrix units (AVX512-BF16 or AMX).

    Without them PyTorch emulates bfloat16 and it is slower than float32, not faster; with them it is faster
    (the evaluator's training step, both ways: benchmarks/README.md, demo zoo).
    """
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


@functools.lru_cache(maxsize=1)
def int8_units() -> str | None:
    """The processor's int8 dot-product units, which make int8 matrix products several times faster than float32
    ones (AMX tiles, AVX512-VNNI or AVX-VNNI); None when it has none and int8 would only be emulated."""
    try:
        flags = set(Path("/proc/cpuinfo").read_text().split())
    except OSError:
        return None
    for flag, name in (("amx_int8", "AMX"), ("avx512_vnni", "AVX512-VNNI"), ("avx_vnni", "AVX-VNNI")):
        if flag in flags:
            return name
    return None
