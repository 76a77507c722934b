"""TF1 programs of each era, run unmodified with `python -m tftk.compat` (tests/compat/programs/).

0.x spellings, 1.0-1.4 argparse programs calling tf.app.run() with the full argv, absl-style
flags, `tensorflow.compat.v1` programs an RNN of tf.contrib.rnn cells and a
tf.TensorArray filled in a while_loop. Each row: the program,
its arguments, and the exact stdout (or its last lines) it must print. Programs that real
TensorFlow 2.21 can also run (`tensorflow.compat.v1` ones) must print the same there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.tf_oracle import run_script_in_tf

PROGRAMS = Path(__file__).parent / "programs"

# program, arguments ({tmp} is a fresh directory), expected stdout lines.
CASES = [
    ("era0_counter", [], ["0", "1", "2", "3", "[-2. -1.]"]),
    ("era0_renamed_ops", [], ["[[ 5.,12.],", " [21.,32.]]", "[[-4.,-4.],", " [-4.,-4.]]", "[[-1.,-2.],",
                              " [-3.,-4.]]", "[[[1.,2.],", "  [3.,4.]],", "", " [[5.,6.],", "  [7.,8.]]]",
                              "[[5.,6.],", " [7.,8.]]", "[[1.,2.,5.,6.],", " [3.,4.,7.,8.]]", "[[5.,6.],",
                              " [7.,8.]]", "[[1.,6.],", " [7.,4.]]"]),
    ("era0_softmax_regression", [], ["accuracy 1.00"]),
    ("era0_summaries", ["{tmp}"], ["loss 0.0469"]),
    ("era1_argparse_full_argv", ["--data_dir=/d", "--size", "4"],
     ["data_dir=/d total=6.0 rest=['--data_dir=/d', '--size', '4']"]),
    ("era1_argparse_unparsed", ["--max_steps=20"],
     ["['hidden1/biases', 'hidden1/weights', 'hidden2/biases', 'hidden2/weights', "
      "'softmax_linear/biases', 'softmax_linear/weights']", "loss fell: True summary: True",
      "correct: 100 of 100"]),
    ("era1_saver", ["--model_dir={tmp}"], ["model.ckpt-1 [11.0, 12.0] 1"]),
    ("absl_flags", ["--steps=3", "--nouse_bias", "x"], ["run steps=3 bias=False loss=1.7798 rest=['x']"]),
    ("absl_monitored", [], ["w=0.12500"]),
    ("v1_compat_basic", [], ["0.7908 -1.8580 0.5077 loss=0.4182", "[None, 1] float32 False"]),
    ("v1_compat_flags", ["--n=5"], ["n=5 total=30.0 picked=60.0"]),
    ("v1_compat_layers", [], ["['hidden/bias', 'hidden/kernel', 'logits/bias', 'logits/kernel']",
                              "loss fell: True"]),
    ("rnn_contrib_cells", [], ["[None, 5, 6] 2 LSTMStateTuple", "loss fell: True"]),
    ("v1_tensorarray_while", [], ["0.00 0.10 0.40 0.70 1.60 2.20 4.00 5.00 8.00 9.50",
                                  "8.00 9.50 28.000 35.000 56.000 69.600 81.600 100.200 96.000 116.000 80.000 95.000",
                                  "[5, 2] 5"]),
]
# One program per era runs in the quick tier; all of them in the slow one (each is a subprocess).
QUICK = {"era0_renamed_ops", "era1_argparse_full_argv", "absl_flags", "v1_compat_flags", "v1_tensorarray_while"}

# Programs real TensorFlow 2.21 runs as well (tf.layers there needs Keras 2, so not v1_compat_layers).
ALSO_IN_TF = {"v1_compat_basic", "v1_compat_flags", "v1_tensorarray_while"}


def _tiered(cases):
    return [pytest.param(*c, id=c[0], marks=() if c[0] in QUICK else pytest.mark.slow) for c in cases]


def _run_in_tftk(program: str, args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parents[2]), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "tftk.compat", str(PROGRAMS / f"{program}.py"), *args],
                          capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


@pytest.mark.parametrize("program,args,expected", _tiered(CASES))
def test_program_runs_unmodified(tmp_path, program, args, expected):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    done = _run_in_tftk(program, args, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == expected, done.stdout


@pytest.mark.parametrize("program,args,expected", _tiered([c for c in CASES if c[0] in ALSO_IN_TF]))
def test_program_prints_what_tensorflow_prints(tmp_path, program, args, expected):
    assert run_script_in_tf(str(PROGRAMS / f"{program}.py"), *args, cwd=tmp_path).splitlines() == expected


def test_argparse_program_warns_about_the_flags_it_passes_through(tmp_path):
    done = _run_in_tftk("era1_argparse_full_argv", ["--data_dir=/d"], tmp_path)
    assert done.returncode == 0
    assert ("tf.app.run: passing --data_dir=/d to main unparsed: the program's own argparse parser "
            "defines them (TF <= 1.4 behaviour)") in done.stderr


def test_flag_no_parser_defines_is_refused(tmp_path):
    done = _run_in_tftk("era1_argparse_unparsed", ["--max_steps=1", "--colour=red"], tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines()[-1] == (
        "FATAL Flags parsing error: Unknown command line flag 'colour'. Pass --help to see the defined flags.")
