"""How much drawing one request from a visitor who may not write can ask for.

A request's cost grows with its steps times its pixels; anonymous requests are held to ``anonymous_max_steps`` at
the base's native size (20 steps at 512 x 512 for SD 1.5, at 64 x 64 for the demo base), so fewer steps buy a
larger image and no single request holds the one generator for long. Out-of-range and non-numbers are refused
here too, with a sentence a visitor can act on."""

from __future__ import annotations

import math

from pydantic import ValidationError

from personalq.serving.generation import GenerationParams


class Refused(ValueError):
    """A request's settings cannot be drawn; the message says why, in the visitor's terms."""


def params_from(seed: float, steps: float, guidance: float, side: int) -> GenerationParams:
    """The generation settings a chat request gives, or :class:`Refused` for NaN, infinities and out-of-range
    values (pydantic's ranges of :class:`GenerationParams`)."""
    raw = {"seed": seed, "steps": steps, "guidance": guidance}
    bad = [name for name, value in raw.items() if not isinstance(value, (int, float)) or not math.isfinite(value)]
    if bad:
        raise Refused(f"{', '.join(bad)} must be a number")
    try:
        return GenerationParams(steps=int(steps), guidance=float(guidance), seed=int(seed), width=side, height=side)
    except ValidationError as error:
        fields = sorted({str(e["loc"][0]) for e in error.errors()})
        raise Refused(f"{', '.join(fields)} out of range") from None


def check_allowance(params: GenerationParams, native_side: int, max_steps: int) -> None:
    """Raise :class:`Refused` when ``params`` costs more than ``max_steps`` at ``native_side`` x ``native_side``."""
    cost, allowed = params.steps * params.width * params.height, max_steps * native_side * native_side
    if cost > allowed:
        most = max(1, allowed // (params.width * params.height))
        raise Refused(
            f"{params.steps} steps at {params.width} x {params.height} is more than a visitor may ask for "
            f"({max_steps} steps at {native_side} x {native_side}, or fewer steps for a larger image): "
            f"at this size, at most {most} steps"
        )


def check_budget(budget_mb: float, low: int, high: int) -> int:
    """A memory budget from the page, as whole megabytes, or :class:`Refused`."""
    if not isinstance(budget_mb, (int, float)) or not math.isfinite(budget_mb) or not low <= budget_mb <= high:
        raise Refused(f"the memory budget must be between {low} and {high} MB")
    return int(budget_mb)


__all__ = ["Refused", "check_allowance", "check_budget", "params_from"]
