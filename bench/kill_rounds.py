"""Reliability suite, part 3: one round = change the files, start a command, SIGKILL it, recover.

The commands are the real CLI in a subprocess (`python -m memlane.entrypoints`), so the kill
lands wherever the operating system happens to be: in imports, in the scan, between handler
commits, inside a rebuild, during the swap. After the kill the state on disk is classified
(was a sync in progress?), then `memlane index` runs to completion and the index is checked
against the files (kill_checks), through the CLI (`status --json`, `search --json`) and against
a clean rebuild of the same files.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal

from memlane.bench.kill_checks import KillState, read_only, verify
from memlane.bench.kill_workspace import KillWorkspace, Mutation

Target = Literal["index", "force", "watch"]
TARGETS: tuple[Target, ...] = ("index", "force", "watch")
RUN_TIMEOUT_S = 900  # a recovery run that never ends is a failure, not a hang of the suite


@dataclass(frozen=True, slots=True)
class Outcome:
    """One kill and what followed it (one row of the results file)."""

    round: int
    target: Target
    delay_s: float
    alive_at_kill: bool
    phase: str  # startup / mid-run / idle (caught up, waiting) / exited (finished before)
    state: KillState
    events_handled_before_kill: int
    syncs_finished_before_kill: int
    mutation: Mutation
    recovery_exit: int
    recovery_summary: str
    recovery_s: float
    failures: list[str] = field(default_factory=list)


class Cli:
    """The real command line against one workspace, with no user config in reach."""

    def __init__(self, ws: KillWorkspace) -> None:
        self.ws = ws
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLANE_")}
        self.env["HOME"] = str(ws.root)  # no ~/.memlane of the person running the suite

    def argv(self, *args: str) -> list[str]:
        ws = self.ws
        return [
            sys.executable,
            "-m",
            "memlane.entrypoints",
            "--config",
            str(ws.config),
            "--state-dir",
            str(ws.state),
            "--workspace",
            str(ws.workspace),
            "--log-level",
            "info",
            "--log-json",
            *args,
        ]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.argv(*args),
            capture_output=True,
            text=True,
            env=self.env,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )

    def start(self, args: tuple[str, ...], log: Path) -> subprocess.Popen[bytes]:
        # stderr (JSON log lines, line-buffered) goes to a file, so a kill cannot lose or block
        # on a pipe, and the lines written before the kill can be counted afterwards.
        with log.open("wb") as err:
            return subprocess.Popen(
                self.argv(*args), stdout=subprocess.DEVNULL, stderr=err, env=self.env
            )


def timed(cli: Cli, *args: str) -> float:
    """Run a command to completion (it must succeed) and return its wall time."""
    started = time.monotonic()
    done = cli.run(*args)
    if done.returncode != 0:
        raise RuntimeError(f"{args} exited {done.returncode}: {done.stderr[-2000:]}")
    return time.monotonic() - started


def log_counts(log: Path) -> tuple[int, int]:
    handled = finished = 0
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line).get("event")
        except (json.JSONDecodeError, AttributeError):
            continue  # a line cut by the kill, or a plain message
        handled += event == "event_handled"
        finished += event == "sync_finished"
    return handled, finished


def phase_of(alive: bool, state: KillState, finished: int) -> str:
    """Where the kill landed, from what the process left on disk (not from timing guesses)."""
    if not alive:
        return "exited"
    if state.pending_events or state.temp_files:
        return "mid-run"  # events logged but not all handled, or a rebuild was being built
    if finished:  # index: finished and exiting; watch: caught up, or waiting out a debounce
        return "idle"
    return "startup"


def _kill(child: subprocess.Popen[bytes], delay: float) -> bool:
    """SIGKILL after `delay` seconds; return whether the process was still running then."""
    try:
        child.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
        return True
    return False


def kill_once(
    cli: Cli, target: Target, delay: float, scale: float, log: Path
) -> tuple[bool, Mutation]:
    """Change the files, start `target`, kill it after `delay`; for `watch`, change the files
    again while it runs (at a random moment before the kill) so its watcher has work."""
    ws = cli.ws
    mutation = ws.mutate(scale)
    args = {"index": ("index",), "force": ("index", "--force"), "watch": ("watch",)}[target]
    child = cli.start(args, log)
    if target != "watch":
        return _kill(child, delay), mutation
    change_at = ws.rng.uniform(0.0, delay)
    time.sleep(change_at)
    second = ws.mutate(scale * 0.3)
    alive = _kill(child, delay - change_at)
    merged = Mutation(*(a + b for a, b in zip(_counts(mutation), _counts(second), strict=True)))
    return alive, merged


def _counts(m: Mutation) -> tuple[int, ...]:
    return tuple(asdict(m).values())


def _cli_failures(cli: Cli) -> list[str]:
    """Through the product: status counts match the disk, a planted word is found by search."""
    ws = cli.ws
    failures: list[str] = []
    status = cli.run("status", "--json")
    if status.returncode != 0:
        return [f"status exited {status.returncode}: {status.stderr[-500:]}"]
    report = json.loads(status.stdout)
    notes, transcripts = len(ws.note_paths()), len(ws.transcript_paths())
    # `status --json` speaks camelCase since the drop-in work (#15).
    by_source = {b["source"]: b["files"] for b in report["bySource"]}
    if report["files"] != notes + transcripts or by_source != {
        "memory": notes,
        "sessions": transcripts,
    }:
        failures.append(f"status counts {by_source} for {notes} notes, {transcripts} transcripts")
    rel = ws.rng.choice(sorted(ws.live))
    word = ws.rng.choice(sorted(ws.live[rel]))
    found = cli.run("search", "--json", "--min-score", "0", "--max-results", "20", word)
    paths = {r["path"] for r in json.loads(found.stdout or "{}").get("results", [])}
    if found.returncode != 0 or rel not in paths:
        failures.append(f"search {word} -> exit {found.returncode}, {sorted(paths)} (want {rel})")
    return failures


def _chunk_keys(db: Path) -> set[tuple[str, str, int, int, str]]:
    with read_only(db) as conn:
        return set(conn.execute("SELECT source, path, start_line, end_line, hash FROM chunks"))


def clean_failures(cli: Cli, provider: str, clean_root: Path) -> list[str]:
    """The recovered index holds the same chunks as a fresh index of the same files."""
    ws = cli.ws
    shutil.rmtree(clean_root, ignore_errors=True)
    clean = KillWorkspace(clean_root, ws.rng, ws.sizes)
    clean.sessions.mkdir(parents=True)
    shutil.copytree(ws.sessions, clean.sessions, dirs_exist_ok=True)
    clean.write_config("none")  # chunk boundaries and hashes do not depend on the model
    clean_cli = Cli(clean)
    clean_cli.env["HOME"] = str(ws.root)
    argv = clean_cli.argv("index")
    argv[argv.index("--workspace") + 1] = str(ws.workspace)
    done = subprocess.run(
        argv, capture_output=True, text=True, env=clean_cli.env, timeout=RUN_TIMEOUT_S, check=False
    )
    if done.returncode != 0:
        return [f"clean index exited {done.returncode}: {done.stderr[-500:]}"]
    got, want = _chunk_keys(ws.db), _chunk_keys(clean.db)
    if got == want:
        return []
    extra = sorted(f"{p}:{s}-{e}" for _, p, s, e, _ in got - want)
    missing = sorted(f"{p}:{s}-{e}" for _, p, s, e, _ in want - got)
    return [
        f"differs from a clean rebuild: {len(extra)} extra {extra[:3]}, "
        f"{len(missing)} missing {missing[:3]} (provider {provider})"
    ]


def recover_and_check(
    cli: Cli, *, provider: str, through_cli: bool, compare_clean: bool, keep: Path
) -> tuple[int, str, float, list[str]]:
    """Run `memlane index` to the end and check everything; on failure keep the killed state
    (copied before the recovery run) and the recovered index under `keep` for a reproduction."""
    ws = cli.ws
    keep.mkdir(parents=True, exist_ok=True)
    for side in ws.db.parent.glob(f"{ws.db.name}*"):
        shutil.copy2(side, keep / f"killed-{side.name}")
    started = time.monotonic()
    done = cli.run("index")
    elapsed = time.monotonic() - started
    failures: list[str] = []
    if done.returncode != 0:
        failures.append(f"recovery index exited {done.returncode}: {done.stderr[-1000:]}")
    else:
        failures += verify(ws, vectors=provider != "none")
        if through_cli:
            failures += _cli_failures(cli)
        if compare_clean:
            failures += clean_failures(cli, provider, ws.root / "clean")
    if failures:
        (keep / "failures.json").write_text(json.dumps(failures, indent=2), encoding="utf-8")
        shutil.copytree(ws.workspace, keep / "ws", dirs_exist_ok=True)
        shutil.copytree(ws.sessions, keep / "sessions", dirs_exist_ok=True)
    else:
        shutil.rmtree(keep)
    return done.returncode, done.stdout.strip(), elapsed, failures
