"""The resident memlane process: one per state dir, serving every agent of it on a Unix socket.

`python -m memlane.entrypoints.daemon.server --state-dir DIR [--config F --agent A
--workspace W]` (what `memlane daemon start` spawns). It holds `<state>/daemon/lock` for its
whole life (a second daemon of the same state dir exits at once: `EXIT_ALREADY_RUNNING`), listens
on `<state>/daemon/sock` (0600 in a 0700 folder; a peer of another uid is refused by
SO_PEERCRED as well), opens the agent it was started for and watches its workspace (watcher,
interval and session-growth syncs, the vector backfill: the same background syncer as `watch`),
and answers each connection in its own thread by running the CLI's own command (hosting.py).
The lock, the socket's binding and the peer's uid are lock_and_socket.py's.
Agents first asked for by a client are opened, and watched, on that request.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlane import __version__
from memlane.entrypoints.daemon import lock_and_socket
from memlane.entrypoints.daemon.code_identity import CodeWatch
from memlane.entrypoints.daemon.hosting import (
    Hosted,
    NotServed,
    client_terminal,
    hosting,
    install_streams,
)
from memlane.entrypoints.daemon.paths import socket_path
from memlane.entrypoints.daemon.protocol import (
    ProtocolError,
    compatible,
    hello,
    receive,
    send,
)
from memlane.entrypoints.daemon.served_agents import (
    ServedAgents,
    stored_agents,
    without_workspace,
)
from memlane.entrypoints.stop_signals import STEP_SECONDS

if TYPE_CHECKING:
    from memlane.application.memory import MemoryManager
    from memlane.entrypoints.config.runtime import RuntimeConfig

EXIT_ALREADY_RUNNING = 3
# Test hook (tests/e2e/test_daemon_faults.py): when set, the daemon writes this file once it
# has computed a reply and then never sends it, so a test can SIGKILL it mid-request.
HOLD_REPLY_ENV = "MEMLANE_DAEMON_TEST_HOLD_REPLY"
# Test hook (tests/e2e/test_daemon_faults.py): the folder whose module files stand for the
# daemon's code, so a test can "upgrade" it without touching the installed package.
CODE_ROOT_ENV = "MEMLANE_DAEMON_TEST_CODE_ROOT"


class Daemon:
    """The socket, the lock and the managers of one state dir.

    `served_by` names the command of the process: "daemon" (`memlane daemon start`, which opens
    and watches every agent asked for), or "watch" / "serve" / "mcp" when such a process serves the
    socket with the one manager it already holds (`adopt`; entrypoints/daemon/sharing.py).
    """

    def __init__(self, state: Path, served_by: str = "daemon") -> None:
        self.state = state
        self.pid = os.getpid()
        self.served_by = served_by
        self._lock_fd: int | None = None
        self._listener: socket.socket | None = None
        self._agents = ServedAgents()
        self._stopping = threading.Event()
        self._answered = 0  # requests answered (not fallen back): `daemon status --json`
        self._answered_lock = threading.Lock()
        # The package's files as this process imported them (a test names another folder).
        self._code = CodeWatch(os.environ.get(CODE_ROOT_ENV) or None)

    # ------------------------------------------------------------------ life cycle

    def acquire(self) -> bool:
        """Take the state dir's daemon lock (False: another daemon holds it) and write our pid."""
        self._lock_fd = lock_and_socket.take_lock(self.state, f"{self.pid}\n{self.served_by}\n")
        return self._lock_fd is not None

    def listen(self) -> None:
        """Bind the socket (a stale one, left by a killed daemon, is replaced: we hold the lock)."""
        path = socket_path(self.state)
        listener = lock_and_socket.bind_socket(path)
        self._listener = listener
        path.chmod(0o600)
        listener.listen(64)

    def serve_forever(self) -> None:
        assert self._listener is not None
        # accept() in short steps: a SIGTERM another thread took is handled only when the main
        # thread runs Python again (entrypoints/stop_signals.py). Accepted sockets block.
        self._listener.settimeout(STEP_SECONDS)
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stopping.is_set():
                    break
                raise
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def stop(self) -> None:
        """Stop accepting, remove the socket, close the managers, drop the lock."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        if self._listener is not None:  # only a socket we bound: not whatever blocked ours
            lock_and_socket.close_socket(self._listener, socket_path(self.state))
        # An adopted manager is closed by the process that opened it.
        for manager in self._agents.release_owned():
            try:
                manager.close()
            except Exception as exc:  # the others must still close
                _note(f"memlane daemon: closing a manager failed: {exc}")
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    # ------------------------------------------------------------------ managers

    def adopt(self, agent_id: str, manager: MemoryManager) -> None:
        """Serve `manager`, opened and watched by this process (`watch`, `serve`), for its
        agent, and no other agent: a request for another is answered in-process by the client.
        The manager must decide its scans by a change journal (`track_changes`) before its
        first served request, for the same freshness as the daemon's own managers."""
        self._agents.adopt(agent_id, manager)

    def manager_for(
        self,
        runtime: RuntimeConfig,
        values: Mapping[str, str | None],
        hosted: Hosted,
        *,
        on_notice: Callable[[str], None],
        reads_only: bool,
    ) -> MemoryManager:
        """The agent's manager this daemon serves, opened (and watched) on first use.

        An agent whose index has recorded no workspace yet (none, or one never synced) is not
        served: which folder it is bound to is the first syncing command's to decide, from
        its caller's folder, as in-process. Its request gets a manager of its own, opened as
        the CLI opens it in-process (a reading command creates nothing), closed at its end.

        Raises NotServed for another state dir, or for an agent this daemon already serves with
        another workspace or settings (one live manager per index in this process).
        """
        from memlane.entrypoints.api import open_telling

        state = runtime.state_dir
        if not state.is_absolute() or state.resolve() != self.state.resolve():
            raise NotServed(f"it serves {self.state}, not {state}")
        adopted = self._agents.adopted
        if adopted and runtime.agent_id not in adopted:
            raise NotServed(
                f"this `memlane {self.served_by}` serves agent "
                f"{', '.join(sorted(adopted))!r} only, not {runtime.agent_id!r}"
            )
        known = self._agents.get(runtime.agent_id)
        bound = known is not None or _bound(runtime, hosted.env)
        manager = open_telling(
            on_notice,  # the line the command prints in-process, to the client's stderr
            cwd=hosted.cwd,
            workspace=values.get("workspace"),
            agent_id=values.get("agent"),
            state_dir=values.get("state_dir"),
            config_path=values.get("config"),
            env=hosted.env,
            reads_only=reads_only,
            shared=bound,
        )
        if not bound:
            hosted.closing.append(manager)
            return manager

        def start() -> None:
            from memlane.entrypoints.container.lease import change_journal

            # A search through the daemon scans only after a change (architecture.md,
            # "The daemon"); the watcher keeps indexing in the background as `watch` does.
            if manager.settings.sync.watch:  # off: no watcher, each search scans
                manager.track_changes(change_journal)
            manager.start()

        stopping = self._stopping.is_set
        if self._agents.claim(runtime.agent_id, manager, start=start, stopping=stopping):
            return manager
        manager.close()  # built for this request only: another index state is served here
        raise NotServed(
            f"it serves agent {runtime.agent_id!r} with another workspace or configuration "
            f"({self._restart_hint()})"
        )

    def _restart_hint(self) -> str:
        """How to give the served agent the new settings: `daemon stop` refuses a `watch`,
        `serve` or `mcp` process lending its socket, which was the hint it got."""
        if self.served_by == "daemon":
            return "restart it: memlane daemon stop, memlane daemon start"
        return f"restart `memlane {self.served_by}` (pid {self.pid}) to use them"

    def open_initial(self, argv: list[str]) -> None:
        """Open and watch the agent the daemon was started for (its options, its directory),
        then every other agent with an index file in the state dir (each with the workspace
        its index recorded). A failure is said in the log; a request opens what it asks for."""
        first = self._open_agent([*argv, "status", "--json"])
        opened = {first} if first else set()
        others = [a for a in stored_agents(self.state) if a not in opened]
        shared = without_workspace(argv)
        for agent in others:
            self._open_agent([*shared, "--agent", agent, "status", "--json"])

    def _open_agent(self, argv: list[str]) -> str | None:
        done = self.run_cli(argv, dict(os.environ), Path.cwd())
        if done.get("exit") != 0:
            why = done.get("fallback") or done.get("stderr")
            _note(f"memlane daemon: opening {argv} failed: {why}")
            return None
        try:
            agent = str(json.loads(str(done.get("stdout")))["agentId"])
        except (ValueError, KeyError, TypeError):
            return None
        if self._agents.get(agent) is None:
            # No index bound to a workspace: opened by the request that syncs it.
            _note(f"memlane daemon: agent {agent} has no index yet; not watched")
            return None
        _note(f"memlane daemon: serving agent {agent}")
        return agent

    # ------------------------------------------------------------------ requests

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                if not self._same_user(conn):
                    return
                theirs = receive(conn)
                send(
                    conn,
                    hello(
                        __version__,
                        pid=self.pid,
                        answered=self._answered,
                        served_by=self.served_by,
                        replaced=self._code.replaced(),
                    ),
                )
                if not compatible(theirs, __version__):
                    return  # the client reads our hello, says so and works in-process
                try:
                    request = receive(conn)
                except ProtocolError:
                    return  # a probe (`daemon status`) closes after the hello
                reply = self._answer(request)
                hold = os.environ.get(HOLD_REPLY_ENV)
                if hold:
                    Path(hold).write_text(str(self.pid), encoding="utf-8")
                    threading.Event().wait()  # never answers: the test kills us here
                send(conn, reply)
                if "fallback" not in reply:
                    with self._answered_lock:
                        self._answered += 1
            except (OSError, ProtocolError) as exc:  # a client that went away mid-request
                _note(f"memlane daemon: a connection failed: {exc}")

    def _same_user(self, conn: socket.socket) -> bool:
        """Refuse a peer of another uid, whatever the socket's mode bits say."""
        uid = lock_and_socket.peer_uid(conn)
        if uid == os.getuid():
            return True
        _note(f"memlane daemon: refused a connection from uid {uid}")
        return False

    def _answer(self, request: dict[str, Any]) -> dict[str, Any]:
        argv, env, cwd = request.get("argv"), request.get("env"), request.get("cwd")
        if (
            not isinstance(argv, list)
            or not all(isinstance(a, str) for a in argv)
            or not isinstance(env, dict)
            or not isinstance(cwd, str)
        ):
            return {"fallback": "a malformed request"}
        env_text = {str(k): str(v) for k, v in env.items()}
        return self.run_cli(argv, env_text, Path(cwd), tty=request.get("tty") is True)

    def run_cli(
        self, argv: list[str], env: Mapping[str, str], cwd: Path, *, tty: bool = False
    ) -> dict[str, Any]:
        """Run one CLI command line as the client would in-process; its output and exit code
        (`tty`: the client's stderr is a terminal, so its log lines are console lines)."""
        from memlane.entrypoints.cli import cli
        from memlane.entrypoints.fast_exit import exit_code

        code = 0
        hosted = Hosted(env=env, cwd=cwd, source=self, stderr_tty=tty)
        with hosting(hosted) as (out, err):
            try:
                cli.main(args=argv, prog_name="memlane", standalone_mode=True)
            except SystemExit as done:
                code = exit_code(done.code)
            except NotServed as exc:
                return {"fallback": str(exc)}
            except Exception as exc:  # the in-process run shows it as it always would
                _note(f"memlane daemon: {argv[:1]} failed: {exc!r}")
                return {"fallback": f"the daemon failed: {exc}"}
            finally:
                _close(hosted.closing)
            return {"exit": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def _bound(runtime: RuntimeConfig, env: Mapping[str, str]) -> bool:
    """Whether the agent's index has recorded the workspace it serves (read, never created)."""
    from memlane.entrypoints.container import recorded_workspace

    recorded, _ = recorded_workspace(runtime, {**runtime.env} or env)
    return recorded is not None


def _close(managers: list[MemoryManager]) -> None:
    """Close the managers a request opened for itself alone (a failure is the log's)."""
    for manager in managers:
        try:
            manager.close()
        except Exception as exc:  # the request's answer stands
            _note(f"memlane daemon: closing a request's manager failed: {exc}")
    managers.clear()


def _note(text: str) -> None:
    """A line in the daemon's log (its own stderr, never a client's)."""
    stream = sys.__stderr__
    if stream is not None:
        stream.write(text + "\n")
        stream.flush()


def _parse(argv: list[str]) -> tuple[Path, list[str]]:
    parser = argparse.ArgumentParser(prog="memlane-daemon")
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--config")
    parser.add_argument("--agent")
    parser.add_argument("--workspace")
    args = parser.parse_args(argv)
    options = ["--state-dir", args.state_dir]
    for flag, value in (
        ("--config", args.config),
        ("--agent", args.agent),
        ("--workspace", args.workspace),
    ):
        if value:
            options += [flag, value]
    return Path(args.state_dir).expanduser().resolve(), options


def main(argv: list[str] | None = None) -> int:
    state, options = _parse(sys.argv[1:] if argv is None else argv)
    daemon = Daemon(state)
    if not daemon.acquire():
        _note(f"memlane daemon: another daemon serves {state}")
        return EXIT_ALREADY_RUNNING
    install_streams()
    from memlane.entrypoints.logging import configure_logging

    # Log lines of a request go to that client's stderr (the streams above), as in-process:
    # console lines when that stderr is a terminal, JSON lines otherwise and in our own log.
    configure_logging(json=True, level="warning", console_when=client_terminal)
    signal.signal(signal.SIGTERM, lambda *_: daemon.stop())
    signal.signal(signal.SIGINT, lambda *_: daemon.stop())
    try:
        # The agents are open and watched before anyone can connect.
        daemon.open_initial(options)
        daemon.listen()
        _note(f"memlane daemon {__version__} pid {daemon.pid} serving {state}")
        daemon.serve_forever()
    finally:
        daemon.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
