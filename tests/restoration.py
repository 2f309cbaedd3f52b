"""What "the adapters came off and the base is exactly restored" is checked against, in the serving tests: every weight
of the text encoders and UNets and the tokenizers' added vocabulary (:class:`Snapshot`), and no peft layer left
behind (:func:`adapter_layers`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from peft.tuners.tuners_utils import BaseTunerLayer


def difference(a: np.ndarray, b: np.ndarray) -> float:
    """Mean absolute difference in 8-bit levels."""
    return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean())


@dataclass
class Snapshot:
    """Every weight of the text encoders and of the given UNets, and the tokenizers' added vocabulary."""

    weights: dict[str, torch.Tensor]
    added_tokens: list[list[str]]

    @classmethod
    def of(cls, pipe, **unets) -> Snapshot:
        models = {name: getattr(pipe, name, None) for name in ("text_encoder", "text_encoder_2")} | unets
        weights = {
            f"{name}.{key}": tensor.detach().clone()
            for name, model in models.items()
            if model is not None
            for key, tensor in model.state_dict().items()
        }
        tokenizers = [t for t in (pipe.tokenizer, getattr(pipe, "tokenizer_2", None)) if t is not None]
        return cls(weights, [sorted(t.get_added_vocab()) + [str(len(t))] for t in tokenizers])

    def assert_same(self, other: Snapshot, when: str) -> None:
        assert other.added_tokens == self.added_tokens, f"{when}: tokens were left in the tokenizers"
        assert sorted(other.weights) == sorted(self.weights), f"{when}: modules were added or removed"
        changed = [key for key, tensor in self.weights.items() if not torch.equal(tensor, other.weights[key])]
        assert not changed, f"{when}: weights changed: {changed[:5]}"


def adapter_layers(pipe, *unets) -> list[str]:
    models = [getattr(pipe, name, None) for name in ("text_encoder", "text_encoder_2")] + list(unets)
    return [
        name
        for model in models
        if model is not None
        for name, module in model.named_modules()
        if isinstance(module, BaseTunerLayer) or "lora_" in name
    ]
