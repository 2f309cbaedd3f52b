"""Generation on Ray Serve: replicas that each hold an :class:`Engine`, requests routed to the replica holding their
variant.

Ray Serve's model multiplexing does the routing: every request names the variant it needs (:func:`variant_id`: the
weights digest of the checkpoint whose UNet it runs on, the precision, trigger-aware or plain), and Serve sends it to
a replica that already
loaded that id, loading it on the least busy one otherwise and unloading each replica's least recently used ids past
``ray_models_per_replica``. A replica is one ``Engine`` with its own memory budget, so the cache decides what
stays resident, as in a single process. The app stays the ingress: Check-in runs there (milliseconds), and the chat
and rater tabs call the deployment through a ``DeploymentHandle`` via :class:`RemoteEngine`, which streams the
frames back with Serve's streaming responses.

Replicas report what they hold to a named actor (:class:`StatusBoard`), which the app's readout and
``personalq serve --status`` read. Ray is an optional extra (``pip install 'personalq[ray]'``); nothing else
imports this module.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Iterator

import ray
from ray import serve

from personalq.config import Settings
from personalq.repository.weighted import Weighted
from personalq.serving.composition import Composition, Uses
from personalq.serving.engine import Engine, batch_shape
from personalq.serving.generation import Frame, GenerationParams
from personalq.serving.variants import precision_config, variant_key

log = logging.getLogger(__name__)

NAMESPACE = "personalq"
APPLICATION = "personalq"
BOARD = "personalq-status-board"


def variant_id(uses: Uses, precision: str, trigger_aware: bool = True, float_kv: bool = False) -> str:
    """The multiplexed model id of a request: what a replica must hold to serve it without loading (the digest of
    everything the variant is made from: weights, kind, base, triggers; then precision and protection).

    For a set of checkpoints that is its anchor's variant alone (:mod:`personalq.serving.composition`): the other
    LoRAs and embeddings go on at request time at their weights onto the same UNet, their tensors read once into
    the replica's cache (a few MB each, against hundreds for a UNet), so a replica holding the anchor serves any set
    around it, and the sets of one subject do not crowd each other out of ``ray_models_per_replica``."""
    config = precision_config(precision, trigger_aware, float_kv=float_kv)
    checkpoint = Composition.of(uses).anchor
    name = f"{checkpoint.id}@{variant_key(checkpoint)[:12]} {precision}"
    if config is not None:
        name += ("" if trigger_aware else " plain") + (" float-K/V" if config.keeps_float_kv else "")
    return name


@dataclass(frozen=True)
class GenerationRequest:
    """One generation, as it crosses from the app to a replica (pickled by Ray)."""

    uses: tuple[Weighted, ...]
    prompt: str
    precision: str = "FP32"
    trigger_aware: bool = True
    params: GenerationParams = field(default_factory=GenerationParams)
    float_kv: bool = False
    previews: bool = True

    @classmethod
    def of(cls, uses: Uses, prompt: str, *args, **kwargs) -> GenerationRequest:
        """A request for one checkpoint or a set (checked here, in the app, before it travels)."""
        return cls(Composition.of(uses).uses, prompt, *args, **kwargs)

    @functools.cached_property
    def variant(self) -> str:
        return variant_id(self.uses, self.precision, self.trigger_aware, self.float_kv)

    @functools.cached_property
    def batch_key(self) -> tuple:
        """What requests must share to run in one pipeline call: variant, adapters at their weights, shape."""
        return self.variant, Composition(self.uses).adapters, batch_shape(self.params), self.previews


@dataclass(frozen=True)
class Placement:
    """Where a request ran: the first item of every stream, before its frames."""

    replica: str
    resident: bool  # the replica held the variant when the request arrived (no load)
    batch: int = 1  # images in the pipeline call that draws it


class Queued:
    """A batched request's item while another group of its batch runs (skipped by :class:`RemoteEngine`)."""


QUEUED = Queued()


@dataclass(frozen=True)
class ReplicaStatus:
    replica: str
    resident: tuple[str, ...]  # multiplexed variant ids, least recently used first
    requests: int
    loads: int
    memory: str
    updated: float


@ray.remote(num_cpus=0)
class StatusBoard:
    """What each replica holds, as the replicas last reported it."""

    def __init__(self):
        self.replicas: dict[str, ReplicaStatus] = {}

    def report(self, status: ReplicaStatus) -> None:
        self.replicas[status.replica] = status

    def leave(self, replica: str) -> None:
        self.replicas.pop(replica, None)

    def snapshot(self) -> list[ReplicaStatus]:
        return sorted(self.replicas.values(), key=lambda s: s.replica)


class _Replica:
    """The deployment's body; :func:`replica_deployment` adds the multiplexed loader and the batched endpoint, whose
    limits come from settings."""

    def __init__(self, settings: Settings):
        self.engine = Engine(settings)
        self.replica = serve.get_replica_context().replica_id.unique_id
        self.board = ray.get_actor(BOARD, namespace=NAMESPACE)
        self.loading: dict[str, GenerationRequest] = {}  # a request behind each id Serve may ask the loader for
        self.held: list[str] = []
        self.requests = 0
        self.loads = 0
        self._report()

    def _report(self) -> None:
        status = ReplicaStatus(
            self.replica, tuple(self.held), self.requests, self.loads, self.engine.memory().line(), time.time()
        )
        self.board.report.remote(status)

    async def _load(self, variant: str) -> "_Held":
        """Make ``variant`` resident: base, UNet at its precision (quantized and stored on first use), adapter."""
        request = self.loading[variant]
        await asyncio.to_thread(
            self.engine.prepare, list(request.uses), request.precision, request.trigger_aware, request.float_kv
        )
        self.loads += 1
        self.held.append(variant)
        self._report()
        return _Held(variant, self)

    async def _enter(self, request: GenerationRequest) -> Placement:
        variant = request.variant  # what the handle sent as the multiplexed model id
        resident = variant in self.held
        self.loading[variant] = request
        try:
            await self.variant(variant)
        finally:
            self.loading.pop(variant, None)
        if variant in self.held:  # most recently used last
            self.held.remove(variant)
            self.held.append(variant)
        self.requests += 1
        return Placement(self.replica, resident)

    async def generate(self, request: GenerationRequest):
        """Stream a :class:`Placement`, then the engine's frames: a batch of one, whose cancelled response stops the
        denoising at the next step."""
        async for outputs in self._batched([request]):
            yield outputs[0]

    async def _batched(self, requests: list[GenerationRequest]):
        """The body of both endpoints: a :class:`Placement` per request, then one frame per request and step.

        Requests that need the same variant, adapters at the same weights, batch shape and previews run in one
        pipeline call
        (:meth:`Engine.generate_many`); several such groups run one after another, and a request whose group is not
        running gets :data:`QUEUED` until its turn (``@serve.batch`` takes one item per request at every step). A
        request whose variant fails to load, or whose group fails, gets its exception as its item and ends; the
        others go on. The pipeline stops early only when every caller of the batch has gone."""
        outputs: list = []
        for request in requests:
            try:
                outputs.append(await self._enter(request))
            except Exception as error:  # handed to that request's caller, which re-raises it
                outputs.append(error)
        finished = {i for i, item in enumerate(outputs) if isinstance(item, Exception)}
        groups: dict[tuple, list[int]] = {}
        for i, request in enumerate(requests):
            if i not in finished:
                groups.setdefault(request.batch_key, []).append(i)
        sizes = {i: len(members) for members in groups.values() for i in members}
        yield [dataclasses.replace(item, batch=sizes[i]) if i in sizes else item for i, item in enumerate(outputs)]
        cancel = threading.Event()
        try:
            for members in groups.values():
                first = requests[members[0]]
                steps = self.engine.generate_many(
                    list(first.uses),
                    [requests[i].prompt for i in members],
                    first.precision,
                    first.trigger_aware,
                    [requests[i].params for i in members],
                    cancel,
                    first.float_kv,
                    first.previews,
                )
                while True:
                    outputs = [StopIteration if i in finished else QUEUED for i in range(len(requests))]
                    try:
                        frames = await asyncio.to_thread(next, steps, None)
                    except Exception as error:
                        frames = [error] * len(members)
                    if frames is None:
                        break
                    for i, frame in zip(members, frames):
                        outputs[i] = frame
                    yield outputs
                    if isinstance(frames[0], Exception):
                        break
                finished.update(members)
        finally:
            cancel.set()  # every caller has gone, or all are served: stop the pipeline at its next step
            self._report()

    async def prepare(self, request: GenerationRequest) -> Placement:
        placement = await self._enter(request)
        self._report()
        return placement

    def __del__(self):
        try:
            self.board.leave.remote(self.replica)
        except Exception:  # Ray may already be shutting down
            pass


class _Held:
    """A loaded variant as Serve's multiplexer holds it; unloading it (LRU past the per-replica limit) forgets it.

    Serve calls ``__del__`` when it unloads; the garbage collector calls it again later, perhaps after the same
    variant was loaded anew, so only the first call counts."""

    def __init__(self, variant: str, replica: _Replica):
        self.variant, self.replica = variant, replica
        self.released = False

    def __del__(self):
        if self.released:
            return
        self.released = True
        if self.variant in self.replica.held:
            self.replica.held.remove(self.variant)
            self.replica._report()


def replica_deployment(settings: Settings):
    """The deployment class for these settings: multiplexing limit, autoscaling bounds, CPUs per replica."""

    class GenerationReplica(_Replica):
        @serve.multiplexed(max_num_models_per_replica=settings.ray_models_per_replica)
        async def variant(self, variant: str) -> _Held:
            return await self._load(variant)

        @serve.batch(max_batch_size=settings.ray_max_batch_size, batch_wait_timeout_s=settings.ray_batch_wait_s)
        async def generate_batched(self, requests: list[GenerationRequest]):
            async for outputs in self._batched(requests):
                yield outputs

    if settings.ray_min_replicas == settings.ray_max_replicas:
        scaling = {"num_replicas": settings.ray_min_replicas}
    else:
        scaling = {
            "autoscaling_config": {
                "min_replicas": settings.ray_min_replicas,
                "max_replicas": settings.ray_max_replicas,
                "target_ongoing_requests": settings.ray_target_ongoing_requests,
            }
        }
    return serve.deployment(
        GenerationReplica,
        name="generation",
        ray_actor_options={"num_cpus": settings.ray_replica_cpus, "num_gpus": settings.ray_replica_gpus},
        max_ongoing_requests=max(settings.ray_max_ongoing_requests, settings.ray_max_batch_size),
        **scaling,
    )


def start_ray_serving(settings: Settings, address: str | None = None) -> "RemoteEngine":
    """Join (``address``) or start a local Ray instance, deploy the replicas and return the app's engine for them."""
    if not ray.is_initialized():
        ray.init(address=address, namespace=NAMESPACE, include_dashboard=False, log_to_driver=False)
    StatusBoard.options(name=BOARD, namespace=NAMESPACE, get_if_exists=True, lifetime="detached").remote()
    serve.start(proxy_location="Disabled")  # the app is the ingress: no HTTP proxy
    handle = serve.run(replica_deployment(settings).bind(settings), name=APPLICATION, route_prefix=None)
    log.info("Ray Serve: %s", ", ".join(f"{s.replica} ready" for s in cluster_status()) or "replicas starting")
    return RemoteEngine(settings, handle)


def cluster_status() -> list[ReplicaStatus]:
    """The replicas' last reports (a connected Ray driver)."""
    return ray.get(ray.get_actor(BOARD, namespace=NAMESPACE).snapshot.remote())


def describe(statuses: list[ReplicaStatus]) -> str:
    """One line per replica: what the app's readout and ``personalq serve --status`` print."""
    if not statuses:
        return "Ray Serve: no replica has reported yet"
    lines = [f"Ray Serve: {len(statuses)} replica{'s' if len(statuses) != 1 else ''}"]
    for status in statuses:
        held = ", ".join(_shown(v) for v in status.resident) or "nothing yet"
        lines.append(
            f"- {status.replica}: {held} · {status.requests} requests, {status.loads} loads · {status.memory}"
        )
    return "\n".join(lines)


def _shown(variant: str) -> str:
    """A variant id without its weights digest: ``teddybear-v2 W8A8``."""
    name, _, rest = variant.partition("@")
    return f"{name} {rest.partition(' ')[2]}"


class RemoteEngine(Engine):
    """The app's engine when generation runs on Ray Serve: ``generate`` and ``prepare`` go to the replicas (routed by
    variant); what reads files or shapes (stored variants, sizes, kernels) is answered here as before."""

    def __init__(self, settings: Settings, handle):
        super().__init__(settings)
        self.handle = handle
        self.placements: list[Placement] = []

    def generate(
        self,
        uses: Uses,
        prompt: str,
        precision: str = "FP32",
        trigger_aware: bool = True,
        params: GenerationParams | None = None,
        cancel: threading.Event | None = None,
        float_kv: bool = False,
        previews: bool = True,
    ) -> Iterator[Frame]:
        request = GenerationRequest.of(
            uses, prompt, precision, trigger_aware, params or GenerationParams(), float_kv, previews
        )
        batched = self.settings.ray_max_batch_size > 1
        routed = self.handle.options(stream=True, multiplexed_model_id=request.variant)
        response = (routed.generate_batched if batched else routed.generate).remote(request)
        finished = False
        try:
            for item in response:
                if cancel is not None and cancel.is_set():
                    return
                if isinstance(item, Exception):  # this request's own failure on the replica
                    raise item
                if isinstance(item, Placement):
                    self.placements.append(item)
                    continue
                if not isinstance(item, Frame):  # queued behind another group of its batch
                    continue
                yield item
                finished = item.final
        finally:
            if not finished:
                response.cancel()

    def prepare(self, uses: Uses | None, precision: str, trigger_aware: bool = True, float_kv: bool = False) -> None:
        """Make a variant (and a set's LoRAs) resident on one replica (start-up warm-up); the base float UNet
        (``None``) every replica loads with its first request."""
        if uses is None:
            return
        request = GenerationRequest.of(uses, "", precision, trigger_aware, float_kv=float_kv)
        self.placements.append(
            self.handle.options(multiplexed_model_id=request.variant).prepare.remote(request).result()
        )

    def serving_line(self) -> str:
        try:
            return describe(cluster_status())
        except Exception as error:  # the board is gone (Ray restarting): the readout still renders
            return f"Ray Serve: status unavailable ({type(error).__name__})"
