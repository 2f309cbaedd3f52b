"""Start-up preparation: what the first requests are likely to need is made ready before they arrive.

A quantized variant's first use calibrates and quantizes it (seconds on the demo, minutes at real size), and even a
stored one, or the float UNet, must be read from disk. At start-up a background thread prepares, in order:

1. the default precision (``PERSONALQ_DEFAULT_PRECISION``) for the most recently used checkpoint (for a full
   precision default with no checkpoint used yet: the bundled base's float UNet), so the first request of the
   default kind waits for nothing;
2. every precision of ``PERSONALQ_WARMUP_PRECISIONS`` for the ``PERSONALQ_WARMUP_CHECKPOINTS`` most recently used
   checkpoints: produced and stored if they never were, loaded into the cache either way.

Each item goes through the engine under its lock, one at a time, so a request arriving meanwhile waits at most for
the item in progress (and finds it done if it wanted the same). A checkpoint that cannot be served (its base is not
configured, its file is gone) is logged and skipped; the others go on.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from personalq.config import Settings
from personalq.repository.card import StoredCheckpoint
from personalq.repository.service import CheckpointNotFound, Repository
from personalq.serving.cache import BudgetError
from personalq.serving.checkpoints import CheckpointLoadError
from personalq.serving.engine import Engine

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WarmItem:
    checkpoint: StoredCheckpoint | None  # None: the bundled base itself (its float UNet)
    precision: str

    def label(self) -> str:
        return f"{self.precision} for {self.checkpoint.id if self.checkpoint else 'the bundled base'}"


def likely_requests(repository: Repository, settings: Settings) -> list[WarmItem]:
    """What to prepare, most likely first: the default precision, then the warm-up precisions of the most recently
    used checkpoints (no checkpoint is repeated at one precision)."""
    recent = []
    for checkpoint_id in repository.newest_ids(by="used", limit=max(settings.warmup_checkpoints, 1)):
        try:
            recent.append(repository.get(checkpoint_id))
        except CheckpointNotFound:  # removed since the query: nothing to prepare
            continue
    items = [WarmItem(recent[0] if recent else None, settings.default_precision)]
    if items[0].checkpoint is None and settings.default_precision != "FP32":
        items = []  # a quantized default needs a checkpoint to quantize; none has been used yet
    for checkpoint in recent[: settings.warmup_checkpoints]:
        items += [WarmItem(checkpoint, precision) for precision in settings.warmup_precisions]
    unique = []
    for item in items:
        if item not in unique:
            unique.append(item)
    return unique


@dataclass
class Warmup:
    """The start-up preparation's thread and progress (what the app's readout shows)."""

    engine: Engine
    items: list[WarmItem]
    done: list[WarmItem] = field(default_factory=list)
    failed: list[tuple[WarmItem, str]] = field(default_factory=list)
    current: WarmItem | None = None
    finished: threading.Event = field(default_factory=threading.Event)

    def start(self) -> "Warmup":
        threading.Thread(target=self.run, name="personalq-warmup", daemon=True).start()
        return self

    def run(self) -> None:
        try:
            for item in self.items:
                self.current = item
                log.info("start-up: preparing %s", item.label())
                error = self._attempt(item)
                if error is None:
                    self.done.append(item)
                else:
                    self.failed.append((item, error))
            if self.done:  # the most likely request used last, so a tight budget evicts the less likely ones first
                self._attempt(self.done[0])
        finally:
            self.current = None
            self.finished.set()

    def _attempt(self, item: WarmItem) -> str | None:
        """Prepare ``item``; the error's message if it could not be (logged, never raised: the rest gets its turn)."""
        try:
            self.engine.prepare(item.checkpoint, item.precision)
        except (BudgetError, CheckpointLoadError, OSError, ValueError) as error:
            log.warning("start-up: could not prepare %s: %s", item.label(), error)
            return str(error)
        except Exception as error:  # anything else (a kernel, say): a background thread must not die silently
            log.exception("start-up: preparing %s failed", item.label())
            return repr(error)
        return None

    def line(self) -> str:
        """One line for the app: what is being prepared, or nothing once it is all done."""
        if self.current is None:
            return ""
        position = len(self.done) + len(self.failed) + 1
        return f"preparing {self.current.label()} at start-up ({position} of {len(self.items)})"


def start_warmup(engine: Engine, repository: Repository) -> Warmup:
    return Warmup(engine, likely_requests(repository, engine.settings)).start()
