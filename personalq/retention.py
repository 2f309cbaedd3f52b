"""What a deployment keeps, and for how long: generated images and Check-in sessions older than
``Settings.retention_hours`` are deleted, so a public app's disk and database do not grow with every visitor."""

from __future__ import annotations

import datetime as dt
import logging
import shutil
import threading
import time
from dataclasses import dataclass

from personalq.checkin.sessions import SessionStore
from personalq.config import Settings
from personalq.repository.service import Repository

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Pruned:
    output_folders: int
    sessions: int


def prune(settings: Settings, repository: Repository, now: float | None = None) -> Pruned:
    """Delete chat output folders (one per chat session) and Check-in sessions older than the retention."""
    max_age_s = settings.retention_hours * 3600
    now = time.time() if now is None else now
    folders = 0
    if settings.outputs_dir.is_dir():
        for folder in settings.outputs_dir.iterdir():
            if folder.is_dir() and not folder.is_symlink() and now - folder.stat().st_mtime > max_age_s:
                shutil.rmtree(folder, ignore_errors=True)
                folders += 1
    utc_now = dt.datetime.fromtimestamp(now, dt.timezone.utc).replace(tzinfo=None)
    sessions = SessionStore(repository).purge(dt.timedelta(seconds=max_age_s), utc_now)
    if folders or sessions:
        log.info(
            "retention: deleted %d output folders and %d Check-in sessions older than %g h",
            folders,
            sessions,
            settings.retention_hours,
        )
    return Pruned(folders, sessions)


def prune_periodically(settings: Settings, repository: Repository, every_s: float = 3600.0) -> threading.Thread:
    """Prune now and then every ``every_s`` in a daemon thread (it dies with the app)."""

    def loop() -> None:
        while True:
            try:
                prune(settings, repository)
            except Exception:  # a failed sweep must not stop the next one
                log.exception("retention sweep failed")
            time.sleep(every_s)

    thread = threading.Thread(target=loop, name="personalq-retention", daemon=True)
    thread.start()
    return thread


__all__ = ["Pruned", "prune", "prune_periodically"]
