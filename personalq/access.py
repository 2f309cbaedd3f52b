"""Who may change things from the web app: token checks in constant time, a per-client attempt limit, and the
write policy that follows from where the app listens and what is configured.

Reading is open to every visitor (chat, browse, rate). Writes (import, remove, reindex, the engine-wide memory
budget, quantized-variant warm-up) change what every visitor gets, so:

- on loopback with neither an admin token nor Gradio sign-in configured, the machine's owner is the only
  visitor: writes are open;
- with an admin token, a session writes after signing in with it; with Gradio sign-in (``auth``), every
  signed-in user writes;
- listening beyond loopback with neither configured, writes are off and the app says why.
"""

from __future__ import annotations

import hmac
import ipaddress
import threading
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Callable

from pydantic import SecretStr

MAX_FAILURES = 5  # wrong tokens from one client inside the window before it is locked
MAX_FAILURES_EVERYONE = 50  # wrong tokens from all clients together before every attempt is slowed
FAILURE_WINDOW_S = 300.0
LOCKED_SLOT_S = 10.0  # a locked client has one attempt compared per this many seconds; the rest wait


_EVERYONE = "\0everyone"  # the key of every client's failures together (no address looks like it)


def secret_value(secret: SecretStr | str | None) -> str | None:
    if isinstance(secret, SecretStr):
        return secret.get_secret_value()
    return secret


def token_matches(given: str | None, expected: SecretStr | str | None) -> bool:
    """Constant-time comparison, so response times say nothing about how much of a guess was right."""
    wanted = secret_value(expected)
    if not wanted or not given:
        return False
    return hmac.compare_digest(given.encode(), wanted.encode())


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class TooManyAttempts(Exception):
    """A client (or everyone together) guessed wrong too often; it may try again after ``wait_s``."""

    def __init__(self, wait_s: float, everyone: bool = False):
        source = "lately" if everyone else "from this address"
        super().__init__(f"Too many wrong tokens {source}. Try again in {wait_s:.0f} s.")
        self.wait_s = wait_s


@dataclass
class AttemptLimiter:
    """Wrong tokens counted per client (its address) and for everyone together; thread-safe (Gradio runs
    callbacks in threads).

    After ``limit`` failures inside ``window_s`` the client is locked: it has one attempt compared per ``slot_s``
    and every other attempt is refused unread. The lock slows the attempts, it does not shut out the token: where
    visitors share an address (a proxy nobody declared), a burst of wrong tokens from anyone would otherwise keep
    the real admin out for the whole window, while here the right token works at the next slot. After
    ``everyone_limit`` failures from all clients together, every client is slowed so: guesses spread over many
    addresses (behind a trusted proxy) count against the token too."""

    limit: int = MAX_FAILURES
    everyone_limit: int = MAX_FAILURES_EVERYONE
    window_s: float = FAILURE_WINDOW_S
    clock: Callable[[], float] = time.monotonic
    slot_s: float = LOCKED_SLOT_S
    _failures: dict[str, deque] = field(default_factory=lambda: defaultdict(deque))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def check(self, client: str) -> None:
        """Raise :class:`TooManyAttempts` when ``client`` is locked and its next compared attempt is not due."""
        with self._lock:
            for key, limit in ((client, self.limit), (_EVERYONE, self.everyone_limit)):
                recent = self._recent(key)
                if len(recent) < limit:
                    continue
                since_last = self.clock() - recent[-1]  # the last attempt compared (and wrong)
                if since_last < self.slot_s:
                    raise TooManyAttempts(self.slot_s - since_last, everyone=key == _EVERYONE)

    def failed(self, client: str) -> None:
        with self._lock:
            self._recent(client).append(self.clock())
            self._recent(_EVERYONE).append(self.clock())

    def _recent(self, client: str) -> deque:
        recent = self._failures[client]
        while recent and self.clock() - recent[0] > self.window_s:
            recent.popleft()
        return recent


class WriteRefused(Exception):
    """A write from a session that may not write; the message says what would allow it."""


@dataclass
class WriteAccess:
    """The web app's write policy (see the module docstring)."""

    admin_token: SecretStr | str | None
    signed_in_users: bool  # Gradio sign-in is configured
    public: bool  # listening beyond loopback
    limiter: AttemptLimiter = field(default_factory=AttemptLimiter)

    @property
    def open(self) -> bool:
        """Writes need no sign-in at all."""
        return not self.public and not secret_value(self.admin_token) and not self.signed_in_users

    @property
    def disabled_reason(self) -> str | None:
        """Why no one can write, or None when someone can."""
        if self.public and not secret_value(self.admin_token) and not self.signed_in_users:
            return (
                "Changes are disabled: this app listens beyond this machine and neither an admin token "
                "(PERSONALQ_ADMIN_TOKEN) nor sign-in (PERSONALQ_AUTH) is configured."
            )
        return None

    def sign_in(self, token: str, client: str) -> bool:
        """Check an admin token from ``client``; raises :class:`TooManyAttempts` after repeated failures."""
        self.limiter.check(client)
        if token_matches(token.strip(), self.admin_token):
            return True
        self.limiter.failed(client)
        return False

    def allows(self, admin: bool, username: str | None) -> bool:
        """May this session write (``admin``: it signed in with the token; ``username``: Gradio's sign-in)?"""
        return self.open or admin or bool(self.signed_in_users and username)

    def require(self, admin: bool, username: str | None) -> None:
        """Raise :class:`WriteRefused`, saying what would allow it, unless this session may write."""
        if self.allows(admin, username):
            return
        raise WriteRefused(self.disabled_reason or "Sign in with the admin token first (Repository tab, Admin).")


__all__ = [
    "AttemptLimiter",
    "TooManyAttempts",
    "WriteAccess",
    "WriteRefused",
    "is_loopback",
    "secret_value",
    "token_matches",
]
