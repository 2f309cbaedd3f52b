"""Integer codes as bytes: one code per byte at 8 bits, two per byte at 4 bits.

Log-quantizer codes are signed (``-L..L``); they are stored offset by ``2**(bits-1)`` so every stored code
is an unsigned nibble or byte.
"""

from __future__ import annotations

import torch


def to_unsigned(codes: torch.Tensor, bits: int, signed: bool) -> torch.Tensor:
    return (codes + 2 ** (bits - 1)) if signed else codes


def from_unsigned(stored: torch.Tensor, bits: int, signed: bool) -> torch.Tensor:
    return (stored.to(torch.int16) - 2 ** (bits - 1)) if signed else stored.to(torch.int16)


def packed_length(length: int, bits: int) -> int:
    """Bytes per row of ``length`` codes once packed."""
    return length if bits == 8 else (length + 1) // 2


def pack(codes: torch.Tensor, bits: int) -> torch.Tensor:
    """Unsigned codes (any integer dtype, values < 2**bits) -> uint8; at 4 bits, (n, m) -> (n, ceil(m/2))."""
    codes = codes.to(torch.uint8)
    if bits == 8:
        return codes.contiguous()
    if bits != 4:
        raise ValueError(f"packing supports 8 and 4 bits, not {bits}")
    if codes.shape[-1] % 2:
        codes = torch.nn.functional.pad(codes, (0, 1))
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).contiguous()


def unpack(packed: torch.Tensor, bits: int, length: int) -> torch.Tensor:
    """Inverse of :func:`pack`; ``length`` is the last dimension before packing."""
    if bits == 8:
        return packed
    low, high = packed & 0x0F, packed >> 4
    return torch.stack((low, high), dim=-1).reshape(*packed.shape[:-1], -1)[..., :length]
