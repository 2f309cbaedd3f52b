"""``spaces.GPU`` on a ZeroGPU Space, the function itself everywhere else.

ZeroGPU attaches a GPU only for the duration of a call decorated with ``spaces.GPU``; the ``spaces``
package exists only on Hugging Face, so the decorator is applied only when the settings say we run there.
"""

from __future__ import annotations

import logging
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)
log = logging.getLogger(__name__)


def on_gpu(function: F, enabled: bool, duration_s: int = 60) -> F:
    if not enabled:
        return function
    try:
        import spaces
    except ImportError:
        log.warning("ZeroGPU requested but the spaces package is missing; running %s without it", function.__name__)
        return function
    return spaces.GPU(duration=duration_s)(function)
