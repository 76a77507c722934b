"""hpsearch stopped by SIGTERM or Ctrl-C (issue 14 item 2): running trials checkpoint, no worker traceback,
one line with the resume hint, and the resumed search finishes every trial from its checkpoint."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hpsearch.journal import read_journal
from tftk.train.checkpoint_state import latest_checkpoint

ROOT = Path(__file__).resolve().parents[2]
TFTK = shutil.which("tftk", path=str(Path(sys.executable).parent)) or shutil.which("tftk")
DIGITS_MLP = ROOT / "configs" / "digits_mlp.yaml"


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "Ctrl-C"])
def test_stopped_search_saves_running_trials_and_resumes(tmp_path, sig, code):
    command = [TFTK, "hpsearch", "--config", str(DIGITS_MLP), "--random", "2", "--max-resource", "3000",
               "--nb-process", "2", "--seed", "5", "--fixed-params", '{"nb_units": 16, "save_every": 100}',
               f"results_root={tmp_path}"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True)
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob("MnistMLP/hpsearch-*/trials/*/checkpoint")):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no trial checkpoint within 120 s"
        time.sleep(0.01)
    # Ctrl-C at a terminal reaches the whole process group; kill/docker stop send SIGTERM to the search only.
    os.killpg(process.pid, sig) if sig == signal.SIGINT else process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=90)
    (search_dir,) = tmp_path.glob("MnistMLP/hpsearch-*")
    assert process.returncode == code, stderr
    assert "Traceback" not in stderr + stdout
    assert stderr.strip().splitlines()[-1].endswith(f"resume with: tftk hpsearch --resume {search_dir}")
    journal = read_journal(search_dir / "journal.jsonl")
    assert not [e for e in journal if e["event"] in ("result", "failure")]  # nothing half-done was recorded
    saved = {trial.name: int(latest_checkpoint(trial).rsplit("-", 1)[1])
             for trial in (search_dir / "trials").iterdir() if latest_checkpoint(trial)}
    assert saved and all(0 < step < 3000 for step in saved.values())

    resumed = subprocess.run([TFTK, "hpsearch", "--resume", str(search_dir), "--nb-process", "2"], capture_output=True,
                             text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    results = [e for e in read_journal(search_dir / "journal.jsonl") if e["event"] == "result"]
    assert sorted(e["trial"] for e in results) == sorted(t.name for t in (search_dir / "trials").iterdir())
    for trial in saved:  # each resumed trial went on from its checkpoint: no step recorded twice, none missing
        steps = [json.loads(line)["step"] for line in (search_dir / "trials" / trial / "metrics.jsonl").open()]
        assert steps == sorted(steps) and steps[-1] == 3000
        assert sorted(set(steps)) == list(range(100, 3001, 100))
