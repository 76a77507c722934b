"""hpsearch benchmarks: (a) random search wall time on 1 vs 2 processes (goal >= 1.7x);
(b) worker utilisation, busy / (workers x wall), of async (ASHA) vs sync Hyperband on 2 processes;
(c) Hyperband vs random search tuning MnistMLP on digits (through `tftk hpsearch`'s library functions) at
equal total training iterations: best validation accuracy of each search, over 5 search seeds;
(d) `tftk hpsearch` itself on the ConvNet config (configs/digits_convnet.yaml), 1 vs 2 worker processes:
wall and CPU time of the whole command, and the threads each trial ran with (workers x threads <= cores).

Run: /work/venv/bin/python bench/bench_hpsearch.py   ((a), (b): a CPU-bound numpy toy objective, no sleeps;
(c): real training, a few minutes on 2 cores; (d): about a minute; `... bench_hpsearch.py c` runs (c) alone)
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from hpsearch import plan_brackets, Execution, SearchSpec, run_search

# 96x96 matrix products per training iteration: 1000 is about 50 ms on one core, so a trial of 20
# iterations takes about a second, as a small real trial does. Each worker also pays a one-time
# start-up (interpreter, then tensorboardX for the HParams summaries: about 1.5 s), which shorter
# toy trials would mistake for a lack of parallelism.
ITERATION_WORK = 1000


def sample(rng: np.random.Generator, fixed_params: dict) -> dict:
    return {"lr": float(10 ** rng.uniform(-4, 0))}


def busy_trial(config: dict, resource: int, trial_dir: Path, seed: int) -> float:
    """Train from the checkpoint's iteration to `resource` with real numpy work; metric peaks at lr=1e-2."""
    checkpoint = trial_dir / "checkpoint.json"
    done = json.loads(checkpoint.read_text())["iterations"] if checkpoint.exists() else 0
    a = np.random.default_rng(seed).standard_normal((96, 96))
    for _ in range((resource - done) * ITERATION_WORK):
        a = np.tanh(a @ a.T * 1e-2)
    checkpoint.write_text(json.dumps({"iterations": resource}))
    return -(math.log10(config["lr"]) + 2.0) ** 2 - 1.0 / resource


def timed(nb_process: int, **kwargs) -> tuple[float, float]:
    """(wall seconds, utilisation) of one search in a fresh temp dir."""
    with tempfile.TemporaryDirectory() as folder:
        result = run_search("bench_hpsearch:busy_trial", sample, folder, SearchSpec(seed=1, **kwargs),
                            Execution(nb_process=nb_process), io.StringIO())
    return result.wall_seconds, result.utilisation


def best_validation_accuracy(settings, seed: int) -> tuple[float, float]:
    """(best validation accuracy, wall seconds) of one search of MnistMLP on digits, 2 processes."""
    from tftk.search import start_search

    config = Path(__file__).resolve().parents[1] / "configs" / "digits_mlp.yaml"
    with tempfile.TemporaryDirectory() as folder:
        outcome = start_search(config, [f"results_root={folder}"], dataclasses.replace(settings, seed=seed),
                               nb_process=2, out=io.StringIO())
    return outcome.best.metric, outcome.result.wall_seconds


def hyperband_vs_random(max_resource: int = 81, eta: int = 3, seeds: range = range(5)) -> None:
    """(c): the random search gets as many configs trained to R as Hyperband's budget pays for."""
    from tftk.search import SearchSettings

    budget = sum(b.iterations for b in plan_brackets("hyperband", max_resource, eta))
    n_random = budget // max_resource
    searches = {"hyperband": SearchSettings(max_resource=max_resource, eta=eta),
                "random": SearchSettings(algorithm="random", n_configs=n_random, max_resource=max_resource)}
    print(f"(c) MnistMLP on digits, R={max_resource} iterations: hyperband (eta={eta}) {budget} iterations vs "
          f"random search {n_random} configs x {max_resource} = {n_random * max_resource} iterations")
    for name, settings in searches.items():
        runs = [best_validation_accuracy(settings, seed) for seed in seeds]
        accuracies = [accuracy for accuracy, _ in runs]
        print(f"    {name:9s} best validation accuracy per seed {' '.join(f'{a:.4f}' for a in accuracies)}; "
              f"mean {statistics.mean(accuracies):.4f} +- {statistics.stdev(accuracies):.4f}, "
              f"wall {statistics.mean(w for _, w in runs):.1f} s per search")


def main() -> None:
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (other load skews both figures)")
    parts = set(sys.argv[1:]) or {"a", "b", "c", "d"}
    if "a" in parts:
        speed_up()
    if "b" in parts:
        utilisation()
    if "c" in parts:
        hyperband_vs_random()
    if "d" in parts:
        convnet_cli()
    print(f"load average after: {os.getloadavg()[0]:.2f}")


def speed_up() -> None:
    """(a): the same random search on 1 and on 2 worker processes."""
    random_search = dict(algorithm="random", n_configs=16, max_resource=20)
    one, _ = timed(1, **random_search)
    two, _ = timed(2, **random_search)
    print(f"(a) random search, 16 configs x 20 iterations: 1 process {one:.2f} s, 2 processes {two:.2f} s, "
          f"speed-up {one / two:.2f}x (goal >= 1.7x)")


def utilisation() -> None:
    """(b): busy time / (workers x wall) of asynchronous vs synchronous hyperband."""
    for mode in ("async", "sync"):
        wall, busy = timed(2, algorithm="hyperband", mode=mode, max_resource=27, eta=3)
        print(f"(b) hyperband R=27 eta=3, {mode:5s}, 2 processes: wall {wall:.2f} s, utilisation {busy:.1%}")


def cli_search(nb_process: int, trials: int, iterations: int) -> tuple[float, float, list[int]]:
    """(wall s, CPU s of the command and its workers, each trial's threads) of one `tftk hpsearch` run."""
    root = Path(__file__).resolve().parents[1]
    tftk = Path(sys.executable).with_name("tftk")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as folder:
        start = time.monotonic()
        subprocess.run([str(tftk), "hpsearch", "-c", str(root / "configs" / "digits_convnet.yaml"),
                        "--random", str(trials), "--max-resource", str(iterations), "--seed", "0",
                        "--nb-process", str(nb_process), f"results_root={folder}"],
                       cwd=folder, check=True, stdout=subprocess.DEVNULL)
        wall = time.monotonic() - start
        threads = [int(line.split(":")[1]) for config in Path(folder).glob("ConvNet/hpsearch-*/trials/*/config.yaml")
                   for line in config.read_text().splitlines() if line.startswith("threads:")]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, threads


def convnet_cli(trials: int = 8, iterations: int = 300, rounds: int = 2) -> None:
    """(d): the same ConvNet random search through the CLI on 1 and 2 worker processes, interleaved."""
    cores = len(os.sched_getaffinity(0))
    runs: dict[int, list[tuple[float, float, list[int]]]] = {1: [], 2: []}
    for _ in range(rounds):
        for nb_process in runs:
            runs[nb_process].append(cli_search(nb_process, trials, iterations))
    wall = {n: statistics.median(w for w, _, _ in r) for n, r in runs.items()}
    cpu = {n: statistics.median(c for _, c, _ in r) for n, r in runs.items()}
    for n, r in runs.items():
        threads = sorted({t for _, _, ts in r for t in ts})
        print(f"(d) tftk hpsearch ConvNet (digits), {trials} configs x {iterations} iterations, {n} process(es): "
              f"wall {wall[n]:.2f} s, CPU {cpu[n]:.2f} s; trial threads {threads}, workers x threads "
              f"{n * max(threads)} <= {cores} cores: {n * max(threads) <= cores}")
    print(f"(d) speed-up of 2 processes: {wall[1] / wall[2]:.2f}x wall, CPU ratio {cpu[2] / cpu[1]:.2f}")


if __name__ == "__main__":
    main()
