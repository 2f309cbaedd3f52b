"""A fair share of the generation queue for every visitor.

Gradio's queue is first come, first served and bounded only in total: one script that joins 64 times holds every
place, and jobs nobody listens to still run. Gradio has no per-visitor limit, so this adds three things to the
queue of one concurrency id (the chat's generations), through a wrapper on the queue's ``push`` and ``get_events``:

- **a cap**: a visitor with ``limit`` generations waiting or running is refused at once, with a message saying so;
- **interleaving**: a new job goes behind the jobs of visitors who have fewer waiting, not behind one visitor's
  whole backlog (round robin by how many each visitor has in the queue);
- **gone clients are dropped**: a job whose visitor has no open event stream when its turn comes (and joined more
  than ``grace_s`` ago) is removed instead of run. Gradio already drops the jobs of a stream that closes; this
  covers the client that never opened one.

A visitor is its Gradio session, and also its address when the address is a real one (a trusted proxy names it);
a request without a session (the ``/call`` REST route) counts by address.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from urllib.parse import parse_qs

log = logging.getLogger(__name__)
GRACE_S = 5.0  # a client joins, then opens its stream: this long it may run before listening
REFUSED = (
    "You already have {limit} pictures waiting or drawing: wait for one to finish, then send again "
    "(every visitor gets a fair share of the one generator)."
)


class Listeners:
    """Open event streams per Gradio session (and per event id, for the ``/call`` route), counted by
    :class:`ListenerTracker`."""

    def __init__(self):
        self._open: Counter[str] = Counter()

    def enter(self, key: str) -> None:
        self._open[key] += 1

    def leave(self, key: str) -> None:
        self._open[key] -= 1
        if self._open[key] <= 0:
            del self._open[key]

    def listening(self, *keys: str) -> bool:
        return any(self._open.get(key) for key in keys)


class ListenerTracker:
    """ASGI middleware: counts a stream from when its request arrives until its response ends."""

    def __init__(self, app, listeners: Listeners):
        self.app = app
        self.listeners = listeners

    async def __call__(self, scope, receive, send):
        key = self._key(scope) if scope["type"] == "http" and scope.get("method") == "GET" else None
        if key is None:
            return await self.app(scope, receive, send)
        self.listeners.enter(key)
        try:
            await self.app(scope, receive, send)
        finally:
            self.listeners.leave(key)

    @staticmethod
    def _key(scope) -> str | None:
        path = scope.get("path", "")
        if path.endswith("/queue/data"):
            return parse_qs(scope.get("query_string", b"").decode()).get("session_hash", [None])[0]
        parts = path.rstrip("/").split("/")
        if len(parts) >= 3 and "call" in parts[:-2]:  # /gradio_api/call[/v2]/<api>/<event id>
            return parts[-1]
        return None


class FairShare:
    def __init__(
        self, concurrency_id: str, limit: int, listeners: Listeners, by_address: bool, grace_s: float = GRACE_S
    ):
        self.concurrency_id = concurrency_id
        self.limit = limit
        self.listeners = listeners
        self.by_address = by_address  # the address is the visitor's own (a trusted proxy forwards it)
        self.grace_s = grace_s
        self.refused: Counter[str] = Counter()  # per visitor, for the logs and the benchmark
        self.dropped = 0

    def install(self, blocks) -> None:
        """Wrap the queue of ``blocks`` (after ``blocks.queue()``, before ``launch``)."""
        queue = blocks._queue
        push, get_events = queue.push, queue.get_events
        from gradio import route_utils

        async def fair_push(body, request, username):
            try:
                fn = route_utils.get_fn(blocks, None, body)
            except Exception:  # an unknown function: Gradio answers it
                return await push(body, request, username)
            if fn.concurrency_id != self.concurrency_id:
                return await push(body, request, username)
            keys = self._keys(body.session_hash, request)
            if self._pending(queue, keys) >= self.limit:
                self.refused[keys[0]] += 1
                log.info("refused a generation from %s: %d already pending", keys[0], self.limit)
                return False, REFUSED.format(limit=self.limit), "error"
            success, event_id, state = await push(body, request, username)
            if success:
                event = queue.event_ids_to_events.get(event_id)
                if event is not None:
                    event.personalq_visitor = keys
                    self._interleave(queue.event_queue_per_concurrency_id[self.concurrency_id].queue, event, queue)
            return success, event_id, state

        def fair_get_events():
            waiting = queue.event_queue_per_concurrency_id.get(self.concurrency_id)
            if waiting is not None:
                self._drop_unheard(waiting.queue, queue)
            return get_events()

        queue.push = fair_push
        queue.get_events = fair_get_events

    def _keys(self, session_hash: str | None, request) -> tuple[str, ...]:
        address = getattr(getattr(request, "client", None), "host", None) or "unknown"
        if not session_hash:
            return (f"address {address}",)
        return (f"session {session_hash}", f"address {address}") if self.by_address else (f"session {session_hash}",)

    @staticmethod
    def _visitor(event) -> tuple[str, ...]:
        return getattr(event, "personalq_visitor", (f"session {event.session_hash}",))

    def _running(self, queue) -> list:
        return [
            event
            for job in queue.active_jobs
            if job
            for event in job
            if event.concurrency_id == self.concurrency_id and event.alive
        ]

    def _pending(self, queue, keys: tuple[str, ...]) -> int:
        waiting = queue.event_queue_per_concurrency_id.get(self.concurrency_id)
        events = (waiting.queue if waiting else []) + self._running(queue)
        return max(sum(1 for e in events if key in self._visitor(e)) for key in keys)

    def _interleave(self, events: list, new, queue) -> None:
        """Move ``new`` (just appended) ahead of every job that is a later round of its visitor's than ``new`` is
        of its own: each visitor's first waiting job comes before anyone's second."""
        if not events or events[-1] is not new:
            return
        running = Counter(self._visitor(e)[0] for e in self._running(queue))
        seen: Counter[str] = Counter()
        rounds = []
        for event in events[:-1]:
            visitor = self._visitor(event)[0]
            rounds.append(seen[visitor] + running[visitor])
            seen[visitor] += 1
        mine = self._visitor(new)[0]
        my_round = seen[mine] + running[mine]
        position = next((i for i, r in enumerate(rounds) if r > my_round), len(rounds))
        events.insert(position, events.pop())

    def _drop_unheard(self, events: list, queue) -> None:
        now = time.monotonic()
        for event in list(events):
            if now - event.enqueue_time > self.grace_s and not self.listeners.listening(event.session_hash, event._id):
                events.remove(event)
                queue.event_ids_to_events.pop(event._id, None)
                pending = queue.pending_event_ids_session.get(event.session_hash)
                if pending is not None:
                    pending.discard(event._id)
                self.dropped += 1
                log.info("dropped a generation from %s: nobody is listening for it", self._visitor(event)[0])


__all__ = ["FairShare", "ListenerTracker", "Listeners"]
