"""Two checkouts of tftk against each other on bench_rnn's training steps, paired: is a change faster?

    python bench/bench_ab.py OLD_CHECKOUT [--new NEW_CHECKOUT] [--rows multi_lstm/dynamic,gru/static]
                             [--threads 2] [--pairs 120] [--steps 3]

On a shared or virtual host a step's time drifts in phases longer than a bench round: on the 2-core
KVM guest of issue 20 the same 2-layer LSTM step ran 38 ms for minutes, then 50, and medians of whole
rounds (`bench_rnn.py`) moved +-5% between runs, more than most changes move a step. Here each
checkout serves the rows from its own `bench_rnn.py` worker (its `tftk` first on PYTHONPATH, both
warmed), and the two take turns on short requests of `--steps` steps, the order alternating, so a
drift falls on both alike. Each pair gives a ratio new / old; printed per row: both medians in ms and
the median ratio with its quartiles (a change whose quartiles straddle 1.0 is within the noise). A
checkout is a folder holding the `tftk` package (`git worktree add /tmp/old <commit>` makes one); the
new one defaults to this checkout.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_training import _env  # noqa: E402

HERE = Path(__file__).resolve().parent


def start(checkout: Path, rows: list[str], threads: int) -> subprocess.Popen:
    """A bench_rnn worker importing tftk from `checkout`, ready (its graphs built and warmed)."""
    if not (checkout / "tftk" / "__init__.py").is_file():
        raise SystemExit(f"{checkout} holds no tftk package: pass a checkout's root folder")
    env = _env(threads)
    env["PYTHONPATH"] = str(checkout)
    proc = subprocess.Popen([sys.executable, str(HERE / "bench_rnn.py"), "--serve", "tftk", ",".join(rows),
                             str(threads), "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env=env, cwd=str(checkout))
    if not proc.stdout.readline():
        raise SystemExit(f"the worker of {checkout} failed to start (its error is above)")
    return proc


def ask(proc: subprocess.Popen, row: str, steps: int) -> float:
    """Milliseconds per step of `steps` steps of `row` in a worker."""
    proc.stdin.write(f"{row} {steps}\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())["seconds"] * 1e3


def compare(workers: dict[str, subprocess.Popen], row: str, pairs: int, steps: int) -> dict:
    """Alternate `pairs` requests between the old and the new worker; the medians and paired ratios."""
    for proc in workers.values():
        ask(proc, row, 10 * steps)  # this row's first steps in the worker: not counted
    times: dict[str, list[float]] = {"old": [], "new": []}
    ratios = []
    for pair in range(pairs):
        order = ("old", "new") if pair % 2 == 0 else ("new", "old")
        made = {name: ask(workers[name], row, steps) for name in order}
        for name, ms in made.items():
            times[name].append(ms)
        ratios.append(made["new"] / made["old"])
    low, median, high = statistics.quantiles(ratios, n=4)
    return {"old": statistics.median(times["old"]), "new": statistics.median(times["new"]),
            "ratio": median, "quartiles": (low, high)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", type=Path, help="the checkout to compare against")
    parser.add_argument("--new", type=Path, default=HERE.parent, help="the changed checkout (default: this one)")
    parser.add_argument("--rows", default="multi_lstm/dynamic", help="bench_rnn rows, comma-separated")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--pairs", type=int, default=120)
    parser.add_argument("--steps", type=int, default=3, help="steps per request")
    args = parser.parse_args()
    if args.pairs < 2 or args.steps < 1:
        raise SystemExit("--pairs must be at least 2 and --steps at least 1")
    rows = args.rows.split(",")
    workers = {"old": start(args.old.resolve(), rows, args.threads), "new": start(args.new.resolve(), rows, args.threads)}
    try:
        print(f"new {args.new} / old {args.old}, {args.threads} thread(s), {args.pairs} pairs of {args.steps} steps")
        for row in rows:
            result = compare(workers, row, args.pairs, args.steps)
            low, high = result["quartiles"]
            print(f"  {row:<24} old {result['old']:8.2f} ms  new {result['new']:8.2f} ms  "
                  f"new/old {result['ratio']:.3f} (quartiles {low:.3f}-{high:.3f})", flush=True)
    finally:
        for proc in workers.values():
            proc.kill()


if __name__ == "__main__":
    main()
