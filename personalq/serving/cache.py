"""A least-recently-used cache of loaded models under a memory budget.

Entries are whatever the engine keeps warm (UNets in full precision or quantized, LoRA state dicts), each
with its size in bytes. Adding an entry first evicts the least recently used ones until it fits; an entry
larger than the whole budget is refused, so the cache never holds more than the budget.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Generic, Hashable, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")
MB = 1024 * 1024


class BudgetError(RuntimeError):
    """One model alone is larger than the memory budget."""


@dataclass
class Entry(Generic[T]):
    value: T
    size: int


class ModelCache:
    def __init__(self, budget_bytes: int):
        self.budget_bytes = budget_bytes
        self.pinned_bytes = 0  # held outside the cache but counted against the budget (a pipeline's text encoder, VAE)
        self._entries: OrderedDict[Hashable, Entry] = OrderedDict()
        self._lock = threading.RLock()

    @property
    def cached_bytes(self) -> int:
        with self._lock:
            return sum(entry.size for entry in self._entries.values())

    @property
    def used_bytes(self) -> int:
        return self.pinned_bytes + self.cached_bytes

    def pin(self, size: int, what: str) -> None:
        """Count ``size`` bytes that are never evicted; refuses when they alone exceed the budget."""
        with self._lock:
            self.reserve(size, what)
            self.pinned_bytes += size

    def keys(self) -> list[Hashable]:
        with self._lock:
            return list(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def set_budget(self, budget_bytes: int) -> None:
        with self._lock:
            self.budget_bytes = budget_bytes
            self._evict_until(0)

    def get(self, key: Hashable):
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry.value

    def reserve(self, size: int, what: str = "model") -> None:
        """Make room for ``size`` more bytes, or refuse when that could never fit."""
        with self._lock:
            room = self.budget_bytes - self.pinned_bytes
            if size > room:
                raise BudgetError(
                    f"{what} needs {size / MB:.1f} MB but only {room / MB:.1f} MB of the "
                    f"{self.budget_bytes / MB:.0f} MB "
                    "memory budget can hold it; raise the budget or pick a lower precision"
                )
            self._evict_until(size)

    def put(self, key: Hashable, value, size: int, what: str = "model") -> None:
        with self._lock:
            self._entries.pop(key, None)
            self.reserve(size, what)
            self._entries[key] = Entry(value, size)

    def get_or_load(self, key: Hashable, load: Callable[[], T], size_of: Callable[[T], int], what: str = "model") -> T:
        with self._lock:
            value = self.get(key)
            if value is None:
                value = load()
                self.put(key, value, size_of(value), what)
            return value

    def _evict_until(self, incoming: int) -> None:
        while self._entries and self.used_bytes + incoming > self.budget_bytes:
            key, entry = self._entries.popitem(last=False)
            log.info("evicted %s (%.1f MB) to stay under the budget", key, entry.size / MB)
