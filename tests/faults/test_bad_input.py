"""Every bad input of issue 14 is refused with one line on stderr and exit 2, and the folder tree is unchanged
(listing and contents compared before and after)."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tftk.cli import app
from tests.faults.disk import failing_writes, tree

ROOT = Path(__file__).resolve().parents[2]
DIGITS_MLP = ROOT / "configs" / "digits_mlp.yaml"
SMALL = ["--max-iter", "20", "save_every=10", "log_every=10", "--nb-units", "8", "--random-seed", "1"]


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """A finished 20-step MnistMLP run (checkpoints at 10 and 20) to copy into each case."""
    root = tmp_path_factory.mktemp("trained")
    result = CliRunner().invoke(app, ["train", "--config", str(DIGITS_MLP), *SMALL, "--result-dir", str(root / "run"),
                                      f"results_root={root / 'results'}"])
    assert result.exit_code == 0, result.output + result.stderr
    return root / "run"


def _resume(tmp, *extra):
    return ["train", "--result-dir", str(tmp / "run"), "--max-iter", "30", *extra]


def _corrupt_checkpoint(tmp):
    latest = sorted((tmp / "run").glob("model.ckpt-20*"))[0]
    latest.write_bytes(b"not a checkpoint")


def _state_outside(tmp):
    (tmp / "outside.npz").write_bytes(b"precious")
    (tmp / "run" / "checkpoint").write_text('model_checkpoint_path: "../outside"\n'
                                            'all_model_checkpoint_paths: "../outside"\n')


def _a_file(tmp):
    (tmp / "taken").write_text("a file")


# (id, setup(tmp) or None, needs the trained run, args(tmp), expected part of the line, faulty folder(tmp), errno)
CASES = [
    ("lr-inf", None, False, lambda t: ["train", "-c", str(DIGITS_MLP), "--lr", "inf", f"results_root={t / 'r'}"],
     "--lr: lr: Input should be a finite number", None, None),
    ("unknown-metric", None, False, lambda t: ["train", "-c", str(DIGITS_MLP), "metric=val_acc",
                                              f"results_root={t / 'r'}"], "MnistMLP reports no 'val_acc'", None, None),
    ("batch-larger-than-split", None, False, lambda t: ["train", "-c", str(DIGITS_MLP), "--batch-size", "100000",
                                                       f"results_root={t / 'r'}"],
     "batch_size 100000 is larger than digits's training split", None, None),
    ("result-dir-is-a-file", _a_file, False, lambda t: ["train", "-c", str(DIGITS_MLP), "--result-dir", str(t / "taken")],
     "taken: is a file, not a folder", None, None),
    ("result-dir-under-a-file", _a_file, False,
     lambda t: ["train", "-c", str(DIGITS_MLP), "--result-dir", str(t / "taken" / "run")], "is a file, not a folder",
     None, None),
    ("parameters-beyond-memory", None, False,
     lambda t: ["train", "-c", str(DIGITS_MLP), "--nb-units", "200000000", f"results_root={t / 'r'}"],
     "GiB for its parameters", None, None),
    ("diverging-lr", None, False,
     lambda t: ["train", "-c", str(DIGITS_MLP), "--lr", "1e30", *SMALL, f"results_root={t / 'r'}"],
     "training stopped (no checkpoint was saved)", None, None),
    ("resume-corrupt-checkpoint", _corrupt_checkpoint, True, lambda t: _resume(t), "model.ckpt-20", None, None),
    ("resume-forbidden-change", None, True, lambda t: _resume(t, "--lr", "0.1"),
     "this run was started with a different config (lr: 0.5 -> 0.1)", None, None),
    ("state-file-points-outside", _state_outside, True, lambda t: _resume(t), "is outside the run folder", None, None),
    ("results-root-read-only", None, False, lambda t: ["train", "-c", str(DIGITS_MLP), f"results_root={t / 'ro'}"],
     "Permission denied", lambda t: t / "ro", errno.EACCES),
    ("run-folder-disk-full", None, True, lambda t: _resume(t), "No space left on device", lambda t: t / "run",
     errno.ENOSPC),
    ("infer-output-unwritable", None, True,
     lambda t: ["infer", "--result-dir", str(t / "run"), "--dataset", "digits", "--output", str(t / "ro" / "p.npy")],
     "Permission denied", lambda t: t / "ro", errno.EACCES),
    ("trial-timeout-negative", None, False,
     lambda t: ["hpsearch", "-c", str(DIGITS_MLP), "--random", "1", "--trial-timeout", "-1", f"results_root={t / 'r'}"],
     "trial_timeout must be a positive number of seconds", None, None),
]


@pytest.mark.parametrize("name, setup, needs_run, args, expected, faulty, code", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing(tmp_path, monkeypatch, trained_run, name, setup,
                                                          needs_run, args, expected, faulty, code):
    if needs_run:
        shutil.copytree(trained_run, tmp_path / "run")
    if setup is not None:
        setup(tmp_path)
    before = tree(tmp_path)
    with failing_writes(monkeypatch, faulty(tmp_path), code) if faulty else _nothing():
        result = CliRunner().invoke(app, args(tmp_path))
    assert result.exit_code == 2, result.output + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and expected in lines[0], result.stderr
    assert "Traceback" not in result.output
    assert tree(tmp_path) == before


def _nothing():
    import contextlib

    return contextlib.nullcontext()


def test_debug_adds_the_nan_finders_report_of_the_diverging_step(tmp_path):
    from models.checks import DivergedError

    result = CliRunner().invoke(app, ["train", "-c", str(DIGITS_MLP), "--lr", "1e30", *SMALL, "--debug",
                                      f"results_root={tmp_path / 'r'}"])
    assert isinstance(result.exception, DivergedError)
    first, report = str(result.exception).split("\n", 1)
    assert first.startswith("step ") and "the loss is nan; training stopped" in first
    assert "tensor(s) passed filter 'has_inf_or_nan', in execution order" in report
    assert "SparseSoftmaxCrossEntropyWithLogits" in report
