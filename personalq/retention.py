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
EMPTY_FOLDER_S = 60.0  # an empty output folder untouched this long is removed


@dataclass(frozen=True)
class Pruned:
    output_files: int
    sessions: int


def prune(settings: Settings, repository: Repository, now: float | None = None) -> Pruned:
    """Delete generated images and Check-in sessions older than the retention.

    Each image goes by its own age, not its folder's: a folder's date moves with every image added, so a chat
    session that keeps drawing would keep its oldest images for ever. Folders left empty go at a later sweep."""
    max_age_s = settings.retention_hours * 3600
    now = time.time() if now is None else now
    files = 0
    if settings.outputs_dir.is_dir():
        for folder in settings.outputs_dir.iterdir():
            if not folder.is_dir() or folder.is_symlink():
                continue
            for path in folder.iterdir():
                if path.is_file() and not path.is_symlink() and now - path.stat().st_mtime > max_age_s:
                    path.unlink(missing_ok=True)
                    files += 1
            if not any(folder.iterdir()) and now - folder.stat().st_mtime > EMPTY_FOLDER_S:
                shutil.rmtree(folder, ignore_errors=True)  # a session's folder is made just before its first image
    utc_now = dt.datetime.fromtimestamp(now, dt.timezone.utc).replace(tzinfo=None)
    sessions = SessionStore(repository).purge(dt.timedelta(seconds=max_age_s), utc_now)
    if files or sessions:
        log.info(
            "retention: deleted %d generated images and %d Check-in sessions older than %g h",
            files,
            sessions,
            settings.retention_hours,
        )
    return Pruned(files, sessions)


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
