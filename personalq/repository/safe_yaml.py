"""The one way this package reads YAML it did not write: cards, README front matter, anything from a person.

``yaml.safe_load`` is safe against code execution, not against size or shape. A few hundred bytes of anchors
and aliases expand into billions of references ("billion laughs"), libyaml's composer recurses in C and
crashes the process on a few thousand nested brackets, and the safe constructor raises ValueError or
AttributeError (not YAMLError) on values such as ``2025-13-45``. Every read therefore goes through
:func:`load_yaml`, which checks the event stream first (parsed in C, about a third of the cost of loading)
and reports every failure as :class:`yaml.YAMLError`.
"""

from __future__ import annotations

import yaml

MAX_DEPTH = 64  # real cards and model cards nest a handful of levels; the C composer crashes in the thousands
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when available: parsing is most of a card import


class RefusedYAML(yaml.MarkedYAMLError):
    """YAML that is well formed but refused: aliases, nesting too deep, or a value that cannot be built."""


def _check_shape(text: str) -> None:
    """Refuse anchors, aliases and deep nesting before anything is composed or constructed."""
    depth = 0
    for event in yaml.parse(text, Loader=_LOADER):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise RefusedYAML(None, None, "YAML anchors and aliases are not allowed", event.start_mark)
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise RefusedYAML(None, None, f"nested deeper than {MAX_DEPTH} levels", event.start_mark)
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def load_yaml(text: str) -> object:
    """Parse untrusted YAML (or JSON, a subset of it here) safely; raises :class:`yaml.YAMLError` only."""
    _check_shape(text)
    try:
        return yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError:
        raise
    except Exception as exc:  # the safe constructor's own bugs on odd scalars: a bad value, not a crash
        raise RefusedYAML(None, None, f"unreadable value ({exc})", None) from exc
