"""Starting the web app as a process for a benchmark: a free loopback port, and waiting until it answers."""

from __future__ import annotations

import socket
import subprocess
import time

import requests


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(url: str, process: subprocess.Popen, timeout_s: float = 300) -> None:
    """Return once ``url`` answers; exit when ``process`` ends first or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the app exited with {process.returncode}")
        try:
            if requests.get(url, timeout=2).ok:
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"the app did not answer at {url} within {timeout_s:.0f} s")
