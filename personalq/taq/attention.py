"""The trigger-aware cross-attention processor.

Installed on every ``attn2`` of a ``UNet2DConditionModel``. It quantizes the query, the key and value rows
of every text token except the protected ones, and the attention probabilities except the protected
columns, so the trigger's sub-tokens reach the image through a full-precision pathway while everything
else runs at the target activation precision. Which tokens are protected comes from the shared
:class:`QuantContext` (the trigger span for TAQ, the start token for the BOS baseline, none for plain PTQ).

During calibration the same processor observes instead of quantizing: Q per timestep group, K/V once per
protection mode over the rows that mode would quantize, and the probabilities per timestep group and mode
over the columns that mode would quantize: a range fitted with the protected columns in it would spend the
few levels of a 4-bit grid on values that are never rounded, and round the others more coarsely.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from diffusers.models.attention_processor import Attention

from personalq.taq.activations import ActivationQuantizer
from personalq.taq.context import QuantContext, fit_to_batch


@dataclass
class AttentionQuantizers:
    """One quantizer per cross-attention tensor; ``None`` leaves that tensor in full precision."""

    query: ActivationQuantizer | None = None
    key: ActivationQuantizer | None = None
    value: ActivationQuantizer | None = None
    probs: ActivationQuantizer | None = None


def keep_protected(full: torch.Tensor, rounded: torch.Tensor, protected: torch.Tensor | None) -> torch.Tensor:
    """``rounded`` everywhere except where ``protected`` (broadcast to ``full``) is True: there, ``full`` exactly."""
    return rounded if protected is None else torch.where(protected, full, rounded)


class TriggerAwareAttnProcessor:
    r"""
    Processor for a cross-attention layer (``attn2``) that fake-quantizes everything except the trigger's pathway:
    the query, the key and value rows of every unprotected text token, and the attention probabilities of every
    unprotected token column, while the protected tokens' rows and columns stay exactly as computed in full
    precision. Which tokens are protected is read from ``context`` at every call (the trigger span for TAQ, the
    start token for the BOS baseline, none for plain PTQ; see :meth:`QuantContext.protecting`).

    While ``context.observer`` is set (calibration), the processor records Q per timestep group, and K/V and the
    probabilities for each mode of ``context.observed_masks`` over the rows and columns that mode would quantize.

    Args:
        site (`str`):
            The ``attn2`` module's name in the UNet; the observer keys this layer's ranges by it (``"<site>:q"``,
            ``"<site>:k@taq"``, ...), and quantization looks them up by the same name.
        context (`QuantContext`):
            State shared by every processor of one UNet: the current timestep group, the protected-token mask, and
            during calibration the observer and the masks it observes under.
        quantizers (`AttentionQuantizers`, *optional*):
            One activation quantizer per tensor (query, key, value, probabilities); a tensor without one stays in
            full precision. The default has none: the processor only observes, as during calibration.
    """

    def __init__(self, site: str, context: QuantContext, quantizers: AttentionQuantizers | None = None):
        self.site = site
        self.context = context
        self.quantizers = quantizers or AttentionQuantizers()

    # -- the three quantized stages, separate so tests can check each ------------------------------------------

    def project(self, attn: Attention, hidden_states: torch.Tensor, encoder_hidden_states: torch.Tensor):
        """Q, K, V after quantization (K/V protected rows untouched); also observes during calibration."""
        query = attn.to_q(hidden_states)
        if attn.norm_cross:
            encoder_hidden_states = attn.norm_encoder_hidden_states(encoder_hidden_states)
        key, value = attn.to_k(encoder_hidden_states), attn.to_v(encoder_hidden_states)
        batch, tokens = key.shape[0], key.shape[1]
        context, q = self.context, self.quantizers
        if context.observer is not None:
            context.observer.record(f"{self.site}:q", context.group, query)
            for mode, mask in context.observed_masks.items():
                rows = fit_to_batch(mask, batch, tokens).to(key.device)
                for name, tensor in (("k", key), ("v", value)):
                    context.observer.record(f"{self.site}:{name}@{mode}", 0, tensor[~rows])
        protected = context.protected_rows(batch, tokens, key.device)
        rows = None if protected is None else protected[..., None]
        if q.query is not None:
            query = q.query(query, context.group)
        if q.key is not None:
            key = keep_protected(key, q.key(key, 0), rows)
        if q.value is not None:
            value = keep_protected(value, q.value(value, 0), rows)
        return query, key, value

    def attend(self, attn: Attention, query, key, value, attention_mask=None) -> torch.Tensor:
        batch, tokens = key.shape[0], key.shape[1]
        query, key, value = attn.head_to_batch_dim(query), attn.head_to_batch_dim(key), attn.head_to_batch_dim(value)
        probs = attn.get_attention_scores(query, key, attention_mask)  # (batch * heads, pixels, tokens)
        context = self.context
        if context.observer is not None:  # per mode, over the columns it quantizes, as K/V
            for mode, mask in context.observed_masks.items():
                columns = fit_to_batch(mask, batch, tokens).to(probs.device).repeat_interleave(attn.heads, dim=0)
                context.observer.record(f"{self.site}:p@{mode}", context.group, probs.transpose(1, 2)[~columns])
        if self.quantizers.probs is not None:
            protected = context.protected_rows(batch, tokens, probs.device)
            columns = None if protected is None else protected.repeat_interleave(attn.heads, dim=0)[:, None, :]
            probs = keep_protected(probs, self.quantizers.probs(probs, context.group), columns)
        return attn.batch_to_head_dim(torch.bmm(probs, value))

    def __call__(
        self,
        attn: Attention,
        hidden_states,
        encoder_hidden_states=None,
        attention_mask=None,
        temb=None,
        *args,
        **kwargs,
    ):
        residual = hidden_states
        if attn.spatial_norm is not None:
            hidden_states = attn.spatial_norm(hidden_states, temb)
        input_ndim = hidden_states.ndim
        if input_ndim == 4:
            batch, channels, height, width = hidden_states.shape
            hidden_states = hidden_states.view(batch, channels, height * width).transpose(1, 2)
        if attn.group_norm is not None:
            hidden_states = attn.group_norm(hidden_states.transpose(1, 2)).transpose(1, 2)
        if encoder_hidden_states is None:
            encoder_hidden_states = hidden_states
        if attention_mask is not None:
            attention_mask = attn.prepare_attention_mask(
                attention_mask, encoder_hidden_states.shape[1], hidden_states.shape[0]
            )

        query, key, value = self.project(attn, hidden_states, encoder_hidden_states)
        hidden_states = self.attend(attn, query, key, value, attention_mask)
        hidden_states = attn.to_out[1](attn.to_out[0](hidden_states))

        if input_ndim == 4:
            hidden_states = hidden_states.transpose(-1, -2).reshape(batch, channels, height, width)
        if attn.residual_connection:
            hidden_states = hidden_states + residual
        return hidden_states / attn.rescale_output_factor


def cross_attention_names(unet: torch.nn.Module) -> list[str]:
    """Module names of every cross-attention layer (``attn2``) of a diffusers UNet."""
    return [name for name, module in unet.named_modules() if isinstance(module, Attention) and name.endswith("attn2")]


def install(unet, processors: dict[str, TriggerAwareAttnProcessor]) -> None:
    """Put ``processors`` (keyed by attn2 module name) on their layers; other layers keep what they had."""
    modules = dict(unet.named_modules())
    for name, processor in processors.items():
        modules[name].set_processor(processor)
