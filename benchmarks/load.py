"""Load: simulated people on the web app while a CLI import of the Civitai repository runs in another process.

Starts ``personalq serve`` on a fresh home (the bundled demo zoo) with rater tokens, then at the same moment
starts ``personalq repo import`` of every Civitai model version (4,166 cards) into that home, and lets
people work through ``gradio_client`` meanwhile:

- chatters send requests (the rater tab's own requests over the demo zoo) through ``/chat`` and, when
  Check-in asks which checkpoint they mean, answer with its first option; each turn generates an image;
- raters sign in, vote, and ask for the next pair, through the rater tab's endpoints.

It counts what must stay at zero (failed requests, answers to a question the server no longer knows, votes
acknowledged but not stored) and the latency of each kind of request, p50 / p95.

    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python benchmarks/load.py --people 20 --raters 10
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from app_process import free_port, wait_for
from tqdm import tqdm

from personalq.config import DEFAULT_ASSETS, load_settings
from personalq.eval.civitai_cards import write_cards
from personalq.rating.votes import VoteStore
from personalq.repository.service import Repository

log = logging.getLogger("load")
BIN = Path(sys.executable).parent
CIVITAI = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "civitai-models-2023-07.jsonl"
CHAT_CONTROLS = ("FP32", True, 2048, 0, 4, 5.0, "64 x 64", False)  # precision ... float K/V, in /chat's order
VOTE_CHOICES = ("left", "right", "tie", "both_bad")


@dataclass
class Figures:
    latencies: dict[str, list[float]] = field(default_factory=lambda: collections.defaultdict(list))
    errors: list[str] = field(default_factory=list)
    questions: int = 0
    answered: int = 0
    votes_acknowledged: collections.Counter = field(default_factory=collections.Counter)
    votes_stored: collections.Counter = field(default_factory=collections.Counter)
    during_import: int = 0
    import_seconds: float = 0.0
    import_summary: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def timed(self, kind: str, call, importing: threading.Event):
        started = time.perf_counter()
        result = call()
        with self.lock:
            self.latencies[kind].append(time.perf_counter() - started)
            self.during_import += importing.is_set()
        return result

    def table(self, people: int, raters: int) -> str:
        lost_votes = sum(max(0, n - self.votes_stored[r]) for r, n in self.votes_acknowledged.items())
        rows = [
            ("people (chatters + raters)", f"{people} ({people - raters} + {raters})"),
            ("CLI import in another process", f"{self.import_summary} in {self.import_seconds:.1f} s"),
            ("requests", f"{sum(map(len, self.latencies.values())):,} ({self.during_import:,} while the import ran)"),
            ("failed requests", f"{len(self.errors)}"),
            ("Check-in questions asked / answered", f"{self.questions} / {self.answered}"),
            ("lost sessions (an answer the server no longer knew)", f"{self.questions - self.answered}"),
            (
                "votes acknowledged / stored",
                f"{sum(self.votes_acknowledged.values())} / {sum(self.votes_stored.values())}",
            ),
            ("lost votes", f"{lost_votes}"),
        ]
        lines = [
            "| | |",
            "|---|---|",
            *(f"| {a} | {b} |" for a, b in rows),
            "",
            "| request | n | p50 s | p95 s | max s |",
            "|---|---|---|---|---|",
        ]
        for kind, values in sorted(self.latencies.items()):
            p50, p95 = np.percentile(values, [50, 95])
            lines.append(f"| {kind} | {len(values)} | {p50:.2f} | {p95:.2f} | {max(values):.2f} |")
        return "\n".join(lines)


def _asked(history: list) -> str | None:
    """The first option of Check-in's question in the last assistant message, if it asked one."""
    last = history[-1] if history else {}
    options = last.get("options") or []
    return options[0].get("value") or options[0].get("label") if options else None


def chatter(url: str, requests_: list[str], figures: Figures, importing: threading.Event) -> None:
    from gradio_client import Client

    client = Client(url, verbose=False)
    for request in requests_:
        try:
            history, _image, stats, _box = figures.timed(
                "chat", lambda: client.predict(request, [], *CHAT_CONTROLS, api_name="/chat"), importing
            )
            option = _asked(history)
            if option is None:
                continue
            with figures.lock:
                figures.questions += 1
            history, _image, stats, _box = figures.timed(
                "chat answer", lambda: client.predict(option, history, *CHAT_CONTROLS, api_name="/chat"), importing
            )
            text = json.dumps(history[-3:])
            if "no Check-in session" in text or "try again" in text:
                raise RuntimeError(f"answer to {request!r} not understood: {text[:300]}")
            with figures.lock:
                figures.answered += 1
        except Exception as error:  # noqa: BLE001 - every failure is a finding
            with figures.lock:
                figures.errors.append(f"chat {request!r}: {error!r}")


def rater(
    url: str, token: str, name: str, votes: int, seed: int, figures: Figures, importing: threading.Event
) -> None:
    from gradio_client import Client

    client = Client(url, verbose=False)
    choices = random.Random(seed)
    try:
        shown = figures.timed("rater sign-in", lambda: client.predict(token, api_name="/rater_sign_in"), importing)
        for _ in range(votes):
            if "all" in str(shown[1]) and "rated" in str(shown[1]):
                break
            choice = choices.choice(VOTE_CHOICES)
            result = figures.timed("vote", lambda: client.predict(api_name=f"/rater_vote_{choice}"), importing)
            reveal = result[0] if isinstance(result, (list, tuple)) else result  # the buttons' updates may be dropped
            if not str(reveal).startswith("Left was"):
                raise RuntimeError(f"vote not taken: {reveal}")
            with figures.lock:
                figures.votes_acknowledged[name] += 1
            shown = figures.timed("next pair", lambda: client.predict(api_name="/rater_next"), importing)
    except Exception as error:  # noqa: BLE001
        with figures.lock:
            figures.errors.append(f"rater {name}: {error!r}")


def main(argv: list[str] | None = None) -> Figures:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--people", type=int, default=20)
    parser.add_argument("--raters", type=int, default=10, help="how many of the people rate; the rest chat")
    parser.add_argument("--requests", type=int, default=6, help="requests per chatter")
    parser.add_argument("--votes", type=int, default=12, help="votes per rater")
    parser.add_argument("--civitai", type=Path, default=CIVITAI)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "load.md")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    for chatty in ("httpx", "alembic"):
        logging.getLogger(chatty).setLevel(logging.WARNING)

    work = Path(tempfile.mkdtemp(prefix="personalq-load-"))
    home, cards = work / "home", work / "civitai-cards"
    count = write_cards(args.civitai, cards)
    tokens = {f"tok-{i}": f"rater-{i}" for i in range(args.raters)}
    env = {
        **os.environ,
        "PERSONALQ_RATER_TOKENS": json.dumps(tokens),
        "PERSONALQ_ADMIN_TOKEN": "tok-load-admin",
        "PERSONALQ_ASSETS_DIR": str(DEFAULT_ASSETS),
    }
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    app = subprocess.Popen(
        [str(BIN / "personalq"), "serve", "--home", str(home), "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(work / "app.log").open("w"),
    )
    figures = Figures()
    try:
        wait_for(url, app)
        settings = load_settings(home=home, assets_dir=DEFAULT_ASSETS)
        from personalq.rating.items import all_items

        demo = Repository(settings)
        chat_requests = [item.request for item in all_items(demo)]
        random.Random(0).shuffle(chat_requests)
        importing = threading.Event()
        importing.set()
        started = time.perf_counter()
        importer = subprocess.Popen(
            [str(BIN / "personalq"), "repo", "import", str(cards), "--home", str(home)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        chatters = args.people - args.raters
        threads = [
            threading.Thread(
                target=chatter, args=(url, chat_requests[i::chatters][: args.requests], figures, importing)
            )
            for i in range(chatters)
        ]
        threads += [
            threading.Thread(target=rater, args=(url, token, name, args.votes, i, figures, importing))
            for i, (token, name) in enumerate(tokens.items())
        ]
        for thread in threads:
            thread.start()
        output = importer.communicate()[0]
        figures.import_seconds = time.perf_counter() - started
        importing.clear()
        figures.import_summary = output.strip().splitlines()[-1] if output.strip() else f"exit {importer.returncode}"
        if importer.returncode != 0:
            figures.errors.append(f"import exited {importer.returncode}: {output[-500:]}")
        for thread in tqdm(threads, desc="people finishing", unit=" people"):
            thread.join()
        stored = VoteStore(demo).all()
        figures.votes_stored.update(v.rater for v in stored)
        imported = Repository(settings).count()
        if imported < count:
            figures.errors.append(f"only {imported} checkpoints after importing {count} cards")
    finally:
        app.terminate()
        app.wait(timeout=60)
    table = figures.table(args.people, args.raters)
    print(table)
    for error in figures.errors[:20]:
        print("error:", error)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        f"# Load: {args.people} people on the web app during a CLI import\n\n"
        f"`python benchmarks/load.py --people {args.people} --raters {args.raters} --requests {args.requests} "
        f"--votes {args.votes}` on {os.cpu_count()} CPU cores, no GPU (1-minute load average at the end: "
        f"{os.getloadavg()[0]:.1f}); the app, the import and the people share those cores. "
        "Chat turns generate a 64x64 "
        "image in 4 steps, one at a time (the app's generation queue); a rater's next pair renders both sides.\n\n"
        f"{table}\n"
    )
    return figures


if __name__ == "__main__":
    main()
