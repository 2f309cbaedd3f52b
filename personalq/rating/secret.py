"""The server's own secret, made once per home folder and readable by its owner only.

Blind pairs key their image names with it (HMAC), so a rater who knows the item and the method names still
cannot compute which image is which. It lives in the home, not in the code or the settings, so every
deployment has its own and a restart keeps it (and the images already generated under its names).
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)
SECRET_BYTES = 32


def home_secret(home: Path) -> bytes:
    """``<home>/secret`` (created on first use, mode 0600) as bytes."""
    path = Path(home) / "secret"
    if not path.exists():
        _create(path)
    _owner_only(path)
    text = path.read_text().strip()
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) != SECRET_BYTES:
        raise RuntimeError(f"{path} is not a secret this program wrote; delete it and a new one is made")
    return secret


def _create(path: Path) -> None:
    """Write the secret to a private temporary file, then link it in place: two processes starting at once
    never see a half-written secret, and the first to link wins (the other reads that one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".secret-")  # mkstemp creates it 0600
    try:
        with os.fdopen(handle, "w") as file:
            file.write(secrets.token_hex(SECRET_BYTES))
        os.link(temporary, path)
        log.info("made a new server secret at %s", path)
    except FileExistsError:
        pass
    finally:
        os.unlink(temporary)


def _owner_only(path: Path) -> None:
    """A secret others can read is no secret: tighten a copied or restored file back to 0600."""
    if stat.S_IMODE(path.stat().st_mode) & 0o077:
        log.warning("%s was readable by others; restricting it to its owner", path)
        path.chmod(0o600)
