"""Benchmark: `memlane search --json` end to end through a daemon and without one, one run.

On the demo workspace (`--demo`: examples/workspace, indexed with the bundled model into a fresh
state dir) or on a store kept by `bench/store_bench.py --keep DIR --bulk` (`--store`, prepared as
bench/cli_cold_start.py prepares it: the CLI's own meta, a stub workspace whose stats match the
`files` rows, `sync.onSearch` on, so every in-process search scans the whole workspace by stat).

Each round runs, each in a fresh `memlane` process (the console script):
- `no daemon`: before any daemon starts, the default in-process search (imports, config, open,
  the on-search scan, search, output);
- `daemon`: the same command line while `memlane daemon start` runs: the client hands it to the
  daemon, which skips its scan unless its change journal counted a change;
- `--no-daemon beside it`: in-process while the daemon watches (its watch lease lets the
  in-process search skip its scan once every change is indexed: session 8's path).
Then: the client's import time (`python -X importtime`, the cumulative time of the console
script's first module `memlane.entrypoints.launch` with the client it imports, against the full
CLI `memlane.entrypoints.cli`), throughput with 8 concurrent clients (each runs `--per-client`
searches in a row; wall time for all), and the daemon's RSS (VmRSS, VmHWM).

    .venv/bin/python bench/daemon_bench.py --demo --work bench/work/daemon-demo --out daemon_demo
    .venv/bin/python bench/daemon_bench.py --store bench/work/stores/100000 \
        --work bench/work/daemon-100k --out daemon_100k

Writes bench/results/<out>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parents[1]
_DEMO_QUERY = "how do I roll back the deploy"
_DEMO_CONFIG = "{ agents: { defaults: { memorySearch: { provider: 'local' } } } }"


def _cli(work: Path, *args: str) -> list[str]:
    memlane = Path(sys.executable).parent / "memlane"
    return [
        str(memlane), "--config", str(work / "config.json5"), "--state-dir", str(work / "state"),
        "--workspace", str(work / "ws"), *args,
    ]  # fmt: skip


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return (time.perf_counter() - t) * 1000, done.stdout


def _prepare_demo(work: Path, env: dict[str, str]) -> str:
    if not (work / "ws").exists():
        shutil.copytree(_ROOT / "examples" / "workspace", work / "ws")
    (work / "config.json5").write_text(_DEMO_CONFIG)
    subprocess.run(_cli(work, "--no-daemon", "index"), env=env, check=True, capture_output=True)
    return _DEMO_QUERY


def _prepare_store(store: Path, work: Path) -> str:
    from memlane.bench.cli_cold_start import _CONFIG, _QUERY, _prepare

    if not (work / "index.db").exists():
        _prepare(store, work)
    (work / "config.json5").write_text(_CONFIG % ("true", work / "index.db"))
    return _QUERY


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "median_ms": round(statistics.median(samples), 1),
        "min_ms": round(min(samples), 1),
        "p95_ms": round(p95, 1),
        "n": len(samples),
    }


def _top_level_imports(statement: str) -> dict[str, int]:
    """Depth-0 modules of `python -X importtime -c statement` and their cumulative µs."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    found = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|")
        depth0 = name.startswith(" ") and not name.startswith("  ")  # one space: depth 0
        if depth0 and cumulative.strip().isdigit():
            found[name.strip()] = int(cumulative)
    return found


def _import_ms(statement: str, rounds: int) -> dict[str, float]:
    """What `statement` imports beyond the interpreter's own start-up (site, encodings): the
    cumulative -X importtime of every top-level import it adds, median of `rounds`."""
    samples = []
    for _ in range(rounds):
        baseline = _top_level_imports("pass")
        added = _top_level_imports(statement)
        samples.append(sum(us for name, us in added.items() if name not in baseline) / 1000)
    return _stats(samples)


def _cpu_s(pid: int | None) -> float:
    """CPU seconds (user + system) of `pid`, or of this process's finished children (None)."""
    if pid is None:
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        return used.ru_utime + used.ru_stime
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _throughput(
    cmd: list[str], env: dict[str, str], clients: int, each: int, daemon: int | None = None
) -> dict[str, Any]:
    """`clients` threads each running `each` CLI processes in a row; wall time, latency and
    the CPU each search cost (the client processes', the daemon's): on a loaded machine the
    wall time says how much CPU we got, the CPU per search what the work needs."""

    def one_client(_: int) -> list[float]:
        return [_run(cmd, env)[0] for _ in range(each)]

    children, served = _cpu_s(None), _cpu_s(daemon) if daemon else 0.0
    t = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        latencies = [ms for got in pool.map(one_client, range(clients)) for ms in got]
    wall = time.perf_counter() - t
    n = len(latencies)
    client_cpu = (_cpu_s(None) - children) / n * 1000
    daemon_cpu = ((_cpu_s(daemon) - served) / n * 1000) if daemon else 0.0
    return {
        "clients": clients,
        "searches": n,
        "wall_s": round(wall, 2),
        "searches_per_s": round(n / wall, 1),
        "latency": _stats(latencies),
        "cpu_ms_per_search": {
            "cli_processes": round(client_cpu, 1),
            "daemon": round(daemon_cpu, 1),
            "both": round(client_cpu + daemon_cpu, 1),
        },
        "searches_per_s_if_2_idle_cores": round(2000 / (client_cpu + daemon_cpu), 1),
    }


def _rss(pid: int) -> dict[str, float]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = round(int(value.split()[0]) / 1024, 1)
    return fields


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--demo", action="store_true")
    parser.add_argument("--store", type=Path)
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--per-client", type=int, default=10)
    parser.add_argument("--local-per-client", type=int, default=2)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    # PYTHONDONTWRITEBYTECODE (set in some agent shells) would make every fresh process compile
    # memlane's ~160 modules from source (~0.3 s of CPU): an installed package has its .pyc.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MEMLANE_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    query = _prepare_demo(work, env) if args.demo else _prepare_store(args.store.resolve(), work)
    search = ["search", "--json", query]
    _run(_cli(work, "daemon", "stop"), env)
    _run(_cli(work, "--no-daemon", *search), env)  # first search: builds what it needs, untimed
    load_before = [round(x, 2) for x in os.getloadavg()]

    alone = [_run(_cli(work, *search), env) for _ in range(args.rounds)]
    local_throughput = _throughput(
        _cli(work, "--no-daemon", *search), env, args.clients, args.local_per_client
    )
    started = time.perf_counter()
    _run(_cli(work, "daemon", "start", "--timeout", "1800"), env)
    start_s = time.perf_counter() - started
    status = json.loads(_run(_cli(work, "daemon", "status", "--json"), env)[1])
    pid = int(status["pid"])
    _run(_cli(work, *search), env)  # the daemon's first search scans once (journal just begun)
    through: list[tuple[float, str]] = []
    beside: list[tuple[float, str]] = []
    for n in range(args.rounds):
        pair = [(through, _cli(work, *search)), (beside, _cli(work, "--no-daemon", *search))]
        for samples, cmd in pair if n % 2 == 0 else pair[::-1]:
            samples.append(_run(cmd, env))
    same = {out for _, out in alone} | {out for _, out in through} | {out for _, out in beside}
    daemon_throughput = _throughput(
        _cli(work, *search), env, args.clients, args.per_client, daemon=pid
    )
    rss = _rss(pid)
    answered = json.loads(_run(_cli(work, "daemon", "status", "--json"), env)[1])["answered"]
    _run(_cli(work, "daemon", "stop"), env)
    chunks = json.loads(_run(_cli(work, "--no-daemon", "status", "--json"), env)[1])
    result: dict[str, Any] = {
        "workspace": "demo (examples/workspace)" if args.demo else str(args.store),
        "chunks": chunks.get("chunks"),
        "files": chunks.get("files"),
        "query": query,
        "identical_stdout_in_all_three": len(same) == 1,
        "search_json_end_to_end": {
            "no_daemon": _stats([ms for ms, _ in alone]),
            "through_daemon": _stats([ms for ms, _ in through]),
            "no_daemon_flag_beside_a_running_daemon": _stats([ms for ms, _ in beside]),
        },
        "daemon_start_s": round(start_s, 2),
        "client_import_ms": {
            "client path (launch + daemon.client, what a daemon-answered command imports)": (
                _import_ms(
                    "import memlane.entrypoints.launch; import memlane.entrypoints.daemon.client",
                    9,
                )
            ),
            "full CLI (memlane.entrypoints.cli, what an in-process command imports first)": (
                _import_ms("import memlane.entrypoints.cli", 5)
            ),
        },
        "throughput_through_daemon": daemon_throughput,
        "throughput_in_process": local_throughput,
        "daemon_rss_mb": rss,
        "daemon_requests_answered": answered,
        "load_average_1_5_15": {
            "before": load_before,
            "after": [round(x, 2) for x in os.getloadavg()],
        },
        "cpus": os.cpu_count(),
        "samples_ms": {
            "no_daemon": [round(ms, 1) for ms, _ in alone],
            "through_daemon": [round(ms, 1) for ms, _ in through],
            "beside": [round(ms, 1) for ms, _ in beside],
        },
    }
    target = Path(__file__).parent / "results" / f"{args.out}.json"
    target.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "samples_ms"}, indent=2))
    print(f"written {target}")


if __name__ == "__main__":
    main()
