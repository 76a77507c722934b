"""Load test of `tftk serve`'s REST predict with wrk: requests/s, p50/p99 latency, server CPU per request.

    python bench/bench_serving.py [--duration 5] [--clients 1 8 64]

For the digits MLP and ConvNet (small runs trained here first), one server without batching and
one with (--enable-batching) run side by side on 127.0.0.1; each client count is measured on
both in turn (interleaved), --repeats rounds, and the table shows the medians, so a ratio
compares like with like on a shared machine. Each request is one example (`{"instances": [...]}`).
Besides wrk's figures, the server's CPU time per answered request (user + system, all its
threads, from /proc) is shown: on a loaded machine wall-clock rates mostly measure the
scheduler, while CPU per request says what one request costs the server; so is wrk's own CPU per
request (it shares the machine's cores with the server). --stage-times starts the servers with
`tftk serve --stage-times` and splits the server's CPU per request by stage (HTTP, JSON decode,
batch hand-off, Session.run, ...); --scheduler-slice-micros 0 runs the servers with the kernel's
default slice (to compare tail latencies with and without tftk serve's short one). Needs `wrk`
(apt-get install wrk) and the serve extra.
Loopback only; every wrk run is bounded by --duration.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = {"MLP": ("digits_mlp.yaml", [0.5] * 64), "ConvNet": ("digits_convnet.yaml", [[[0.5]] * 8] * 8)}
_LUA = 'wrk.method = "POST"\nwrk.body = [==[{body}]==]\nwrk.headers["Content-Type"] = "application/json"\n'


def train(run: Path, config: str) -> None:
    subprocess.run([sys.executable, "-c", "from tftk.cli import main; main()", "train", "--config",
                    str(ROOT / "configs" / config), "--max-iter", "20", "--result-dir", str(run), "save_every=20",
                    "results_root=" + str(run.parent)], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)


def start_server(run: Path, port: int, batching: Path | None, stage_times: bool,
                 slice_micros: int | None) -> subprocess.Popen:
    command = [sys.executable, "-c", "from tftk.cli import main; main()", "serve", "--result-dir", str(run),
               "--model-name", "m", "--rest-api-port", str(port), "--port", "0", "--access-log", ""]
    if slice_micros is not None:
        command += ["--scheduler-slice-micros", str(slice_micros)]
    if stage_times:
        command.append("--stage-times")
    if batching is not None:
        command += ["--enable-batching", "--batching-parameters-file", str(batching)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models/m", timeout=1):
                return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit(f"server on port {port} did not start")


def _milliseconds(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4}[unit]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` and all its threads so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def stage_seconds(port: int) -> dict[str, float]:
    """The server's CPU seconds by stage so far (`tftk serve --stage-times`), {} when it does not count them."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return {stage: float(value) for stage, value in
            re.findall(r'^tftk_serving_stage_cpu_seconds_total\{stage="(\w+)"\} (\S+)$', text, re.M)}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_wrk(port: int, pid: int, script: Path, clients: int, duration: int) -> dict:
    """wrk's requests/s, p50 and p99 (ms), the count of non-2xx answers, the server's and wrk's CPU us per
    request, and the server's CPU us per request by stage (when counted)."""
    stages_before, cpu_before, wrk_before = stage_seconds(port), cpu_seconds(pid), children_cpu()
    done = subprocess.run(["wrk", "-t1", f"-c{clients}", f"-d{duration}s", "--timeout", "10s", "--latency",
                           "-s", str(script), f"http://127.0.0.1:{port}/v1/models/m:predict"],
                          capture_output=True, text=True, timeout=duration + 60)
    cpu, wrk_cpu = cpu_seconds(pid) - cpu_before, children_cpu() - wrk_before
    stages = {stage: seconds - stages_before[stage] for stage, seconds in stage_seconds(port).items()}
    out = done.stdout
    if "Requests/sec" not in out:
        raise SystemExit(f"wrk failed:\n{out}{done.stderr}")
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    answered = int(re.search(r"(\d+) requests in", out).group(1))
    per_request = 1e6 / max(answered, 1)
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "cpu_us": cpu * per_request, "wrk_cpu_us": wrk_cpu * per_request,
            "stages_us": {stage: seconds * per_request for stage, seconds in stages.items()},
            "p50": _milliseconds(re.search(r"\s50%\s+(\S+)", out).group(1)),
            "p99": _milliseconds(re.search(r"\s99%\s+(\S+)", out).group(1)),
            "errors": int(errors.group(1)) if errors else 0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=5, help="seconds per wrk run")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds; the table shows medians")
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    parser.add_argument("--max-batch-size", type=int, default=64)
    parser.add_argument("--batch-timeout-micros", type=int, default=5000)
    parser.add_argument("--stage-times", action="store_true", help="split the server's CPU per request by stage")
    parser.add_argument("--scheduler-slice-micros", type=int, default=None,
                        help="the servers' --scheduler-slice-micros (default: theirs; 0: the kernel's slice)")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk not found: apt-get install wrk")
    os.environ.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".venv" / "numba-cache"))
    from tftk.serving.json_codec import BACKEND

    print(f"load at start: {os.getloadavg()[0]:.1f} (1-minute average, {os.cpu_count()} cores); JSON: {BACKEND}",
          flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        batching = work / "batching.config"
        batching.write_text(f"max_batch_size {{ value: {args.max_batch_size} }} "
                            f"batch_timeout_micros {{ value: {args.batch_timeout_micros} }} "
                            "num_batch_threads { value: 1 } max_enqueued_batches { value: 100 }")
        for name in args.models:
            config, example = MODELS[name]
            run = work / name
            train(run, config)
            script = work / f"{name}.lua"
            script.write_text(_LUA.format(body=json.dumps({"instances": [example]})))
            servers = {False: start_server(run, 18701, None, args.stage_times, args.scheduler_slice_micros),
                       True: start_server(run, 18702, batching, args.stage_times, args.scheduler_slice_micros)}
            try:
                for clients in args.clients:
                    rounds = {False: [], True: []}
                    for _ in range(args.repeats):
                        for batched in (False, True):
                            result = run_wrk(18702 if batched else 18701, servers[batched].pid, script, clients,
                                             args.duration)
                            rounds[batched].append(result)
                            print(f"{name:8} clients={clients:3} batching={'on ' if batched else 'off'} "
                                  f"{result['rps']:8.0f} req/s  p50 {result['p50']:7.2f} ms  "
                                  f"p99 {result['p99']:7.2f} ms  cpu {result['cpu_us']:6.0f} us/req  "
                                  f"wrk cpu {result['wrk_cpu_us']:4.0f} us/req  non-2xx {result['errors']}", flush=True)
                    for batched, results in rounds.items():
                        median = {key: statistics.median(r[key] for r in results)
                                  for key in ("rps", "p50", "p99", "cpu_us", "wrk_cpu_us")}
                        median["stages_us"] = {stage: statistics.median(r["stages_us"][stage] for r in results)
                                               for stage in results[0]["stages_us"]}
                        rows.append((name, clients, batched, {**median, "errors": sum(r["errors"] for r in results)}))
            finally:
                for process in servers.values():
                    process.send_signal(signal.SIGTERM)
                    process.wait(30)
    print(f"\nmedians of {args.repeats} interleaved {args.duration} s wrk runs; max_batch_size {args.max_batch_size}, "
          f"batch_timeout_micros {args.batch_timeout_micros}; scheduler slice "
          f"{'default' if args.scheduler_slice_micros is None else args.scheduler_slice_micros}; "
          f"load at end {os.getloadavg()[0]:.1f}")
    print("\n| model | clients | batching | req/s | p50 ms | p99 ms | server CPU us/req | wrk CPU us/req | non-2xx "
          "| batched/unbatched req/s | unbatched/batched CPU |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, clients, batched, result in rows:
        base = next(r for n, c, b, r in rows if n == name and c == clients and not b)
        ratios = f"{result['rps'] / base['rps']:.2f}x | {base['cpu_us'] / result['cpu_us']:.2f}x" if batched else " | "
        print(f"| {name} | {clients} | {'on' if batched else 'off'} | {result['rps']:.0f} | {result['p50']:.2f} | "
              f"{result['p99']:.2f} | {result['cpu_us']:.0f} | {result['wrk_cpu_us']:.0f} | {result['errors']} "
              f"| {ratios} |")
    if args.stage_times:
        stages = list(rows[0][3]["stages_us"])
        print("\nserver CPU us per request by stage (medians; `other`: threads and work outside the stages)\n")
        print("| model | clients | batching | " + " | ".join(stages) + " | other |")
        print("|---|---|---|" + "---|" * (len(stages) + 1))
        for name, clients, batched, result in rows:
            split = result["stages_us"]
            print(f"| {name} | {clients} | {'on' if batched else 'off'} | "
                  + " | ".join(f"{split[stage]:.1f}" for stage in stages)
                  + f" | {result['cpu_us'] - sum(split.values()):.1f} |")


if __name__ == "__main__":
    main()
