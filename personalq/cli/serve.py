"""``personalq serve``: launch the web app, in one process or as the ingress of Ray Serve replicas."""

from __future__ import annotations

from typing import Annotated

import typer

from personalq.cli.common import HomeOption, fail, settings_for


def serve(
    host: Annotated[str, typer.Option(help="interface to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port")] = 7860,
    home: HomeOption = None,
    ray: Annotated[
        bool,
        typer.Option("--ray", help="generate on Ray Serve replicas (the app stays the ingress; Check-in stays here)"),
    ] = False,
    replicas: Annotated[
        int | None,
        typer.Option(min=1, help="with --ray: this many replicas (default: PERSONALQ_RAY_MIN/MAX_REPLICAS)"),
    ] = None,
    address: Annotated[
        str | None, typer.Option(help="with --ray or --status: a Ray cluster to join (default: start a local one)")
    ] = None,
    status: Annotated[
        bool, typer.Option("--status", help="print the running Ray Serve replicas and what each holds, then exit")
    ] = False,
) -> None:
    """Start the PersonalQ web app on the repository in HOME (importing the bundled demo on first start)."""
    if status:
        _print_status(address)
        return
    from personalq.runtime import start
    from personalq.ui.app import launch

    settings = settings_for(home)
    if replicas is not None:
        settings = settings.model_copy(update={"ray_min_replicas": replicas, "ray_max_replicas": replicas})
    runtime = start(settings)
    engine = None
    if ray:
        ray_serving = _ray_serving()
        engine = ray_serving.start_ray_serving(settings, address)
    launch(runtime, host=host, port=port, engine=engine)


def _ray_serving():
    try:
        from personalq.serving import ray_serving
    except ImportError as error:
        fail(f"--ray needs Ray Serve: pip install 'personalq[ray]' ({error})")
    return ray_serving


def _print_status(address: str | None) -> None:
    ray_serving = _ray_serving()
    import ray

    try:
        ray.init(address=address or "auto", namespace=ray_serving.NAMESPACE, log_to_driver=False)
        typer.echo(ray_serving.describe(ray_serving.cluster_status()))
    except (ConnectionError, ValueError) as error:
        fail(f"no running PersonalQ on Ray Serve to report on: {error}")
    finally:
        ray.shutdown()
