"""Real servers the tests start themselves: a throwaway PostgreSQL cluster and a Chroma server."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Iterator

import pytest
import requests


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def postgres_bin(name: str) -> str | None:
    """A PostgreSQL server binary (Debian keeps them out of PATH, under /usr/lib/postgresql/VERSION/bin)."""
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


@contextlib.contextmanager
def postgres_cluster() -> Iterator[str]:
    """``initdb`` a cluster in a temporary folder, start it on a free loopback port, yield its admin URL, stop it and
    delete the folder.

    PostgreSQL refuses to run as root; as root the cluster runs as the ``postgres`` user Debian's package creates,
    in a folder of its own (pytest's temporary folders are private to root).
    """
    initdb, pg_ctl = postgres_bin("initdb"), postgres_bin("pg_ctl")
    if not initdb or not pg_ctl:
        pytest.skip("PostgreSQL is not installed (Debian package postgresql; scripts/bootstrap.sh test installs it)")
    folder = Path(tempfile.mkdtemp(prefix="personalq-postgres-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        try:
            owner = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no postgres user to run PostgreSQL as")
        as_user = ["runuser", "-u", "postgres", "--"]
        os.chown(folder, owner.pw_uid, owner.pw_gid)
    data = folder / "data"
    try:
        subprocess.run(
            [*as_user, initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"],
            check=True,
            capture_output=True,
        )
        port = free_port()
        options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(
            [*as_user, pg_ctl, "-D", str(data), "-o", options, "-l", str(folder / "server.log"), "-w", "start"],
            check=True,
            capture_output=True,
        )
        try:
            yield f"postgresql+psycopg://postgres@127.0.0.1:{port}"
        finally:
            subprocess.run([*as_user, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def new_database(server_url: str) -> str:
    """A fresh, empty database on the server; its SQLAlchemy URL."""
    import psycopg

    name = f"pq_{uuid.uuid4().hex[:12]}"
    admin = server_url.replace("postgresql+psycopg://", "postgresql://") + "/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    return f"{server_url}/{name}"


@contextlib.contextmanager
def chroma_server(folder: Path) -> Iterator[str]:
    """``chroma run`` on a free loopback port, storing in ``folder``; yields its URL."""
    port = free_port()
    server = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("chroma")),
            "run",
            "--path",
            str(folder),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if requests.get(f"{url}/api/v2/heartbeat", timeout=1).ok:
                break
        except requests.ConnectionError:
            time.sleep(0.2)
    else:
        server.kill()
        pytest.fail("chroma run did not answer within 60 s")
    try:
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
