"""The `tftk` CLI: version, fast help, and every bad input as one red line on stderr with exit 2."""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from tests.toolkit.realformats import md5
from typer.testing import CliRunner

from tftk import __version__
from tftk.cli import RUN_FLAGS, app
from tftk.config import RunConfig
from tftk.datasets import catalog
from tftk.datasets.download import RemoteFile
from tftk.runs import MetricsLog, prepare_run_dir, update_best_config

TFTK = shutil.which("tftk", path=str(Path(sys.executable).parent)) or shutil.which("tftk")


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def assert_one_line_error(result, text):
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    assert text in result.stderr
    assert "Traceback" not in result.stderr


def test_version_and_fast_help():
    assert subprocess.run([TFTK, "--version"], capture_output=True, text=True).stdout == f"tftk {__version__}\n"
    start = time.perf_counter()
    shown = subprocess.run([TFTK, "--help"], capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    assert shown.returncode == 0 and "download-data" in shown.stdout
    assert elapsed < 1.5, f"tftk --help took {elapsed:.2f}s"


def test_cli_module_imports_nothing_heavy():
    code = ("import sys, tftk.cli; heavy = {'numba', 'tensorboardX', 'scipy', 'pydantic', 'yaml', 'rich.table'}; "
            "print(sorted(heavy & set(sys.modules)))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout == "[]\n"


def test_error_line_is_red_on_a_terminal(tmp_path):
    env = dict(os.environ, FORCE_COLOR="1", TERM="xterm")
    shown = subprocess.run([TFTK, "config", tmp_path / "none.yaml"], capture_output=True, text=True, env=env)
    assert shown.returncode == 2 and shown.stdout == ""
    assert shown.stderr.count("\n") == 1 and "\x1b[" in shown.stderr and "config file not found" in shown.stderr


def test_run_flags_are_run_config_fields():
    assert {field for field, _, _ in RUN_FLAGS} <= set(RunConfig.model_fields)


def test_config_prints_the_resolved_yaml(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("model_name: MnistMLP\nlr: 0.1\nmodel:\n  hidden1: 8\n")
    result = invoke("config", path, "model.hidden2=4", "--max-iter", 7, "--lr", 0.5, "--best")
    assert result.exit_code == 0, result.output
    shown = yaml.safe_load(result.stdout)
    assert (shown["lr"], shown["max_iter"], shown["best"], shown["model"]) == (0.5, 7, True, {"hidden1": 8, "hidden2": 4})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]  # printing writes nothing


@pytest.mark.parametrize("text, args, message", [
    (None, [], "none.yaml: config file not found"),
    ("model_name: M\nlr: [\n", [], "c.yaml: invalid YAML: line 3, column 1"),
    ("model_name: M\nbatchsize: 3\n", [], "c.yaml: batchsize: unknown key (did you mean 'batch_size'?)"),
    ("model_name: M\nmax_iter: many\n", [], "c.yaml: max_iter: Input should be a valid integer"),
    ("model_name: M\n", ["model.hidden1"], "override 'model.hidden1': expected key=value"),
    ("model_name: M\n", ["nb_unit=3"], "override 'nb_unit=3': nb_unit: unknown key (did you mean 'nb_units'?)"),
    ("model_name: M\n", ["--lr", "-1"], "--lr: lr: Input should be greater than 0 (got -1.0)"),
    ("lr: 0.1\n", [], "c.yaml: model_name: required key is missing"),
])
def test_config_bad_input(tmp_path, text, args, message):
    path = tmp_path / ("c.yaml" if text is not None else "none.yaml")
    if text is not None:
        path.write_text(text)
    assert_one_line_error(invoke("config", path, *args), message)


def test_debug_shows_the_traceback_instead(tmp_path):
    from tftk.user_input import UserInputError

    for args in (["--debug", "config", tmp_path / "none.yaml"], ["config", tmp_path / "none.yaml", "--debug"]):
        result = invoke(*args)
        assert isinstance(result.exception, UserInputError)
    assert_one_line_error(invoke("config", tmp_path / "none.yaml"), "config file not found")  # debug is per call


@pytest.fixture
def tiny_mnist_spec(monkeypatch, file_server, tiny_mnist):
    """Point the mnist spec at the local server's tiny files (their own checksums, 4/8/5 splits)."""
    _, blobs = tiny_mnist
    for name, blob in blobs.items():
        file_server.files[f"/m/{name}"] = blob
    spec = dataclasses.replace(catalog._SPECS["mnist"], split_sizes=(8, 4, 5), mirrors=(file_server.mirror("m"),),
                               files=tuple(RemoteFile(n, md5(b)) for n, b in blobs.items()))
    monkeypatch.setitem(catalog._SPECS, "mnist", spec)
    return blobs


def test_download_data_fetches_verifies_and_shows_splits(tmp_path, file_server, tiny_mnist_spec):
    file_server.drop_once.add("/m/train-images-idx3-ubyte.gz")  # resumed with a Range request
    result = invoke("download-data", "mnist", "--data-dir", tmp_path)
    assert result.exit_code == 0, result.output
    rows = [line.split("│")[1:4] for line in result.stdout.splitlines() if line.startswith("│")]
    assert [[cell.strip() for cell in row] for row in rows] == [
        ["train", "8", "28x28x1"], ["validation", "4", "28x28x1"], ["test", "5", "28x28x1"]]
    assert sorted(p.name for p in (tmp_path / "mnist").iterdir()) == sorted(tiny_mnist_spec)
    assert any(rng is not None for _, rng in file_server.requests)


def test_download_data_corrupt_file(tmp_path, file_server, tiny_mnist_spec):
    file_server.files["/m/t10k-labels-idx1-ubyte.gz"] = b"not what was published"
    result = invoke("download-data", "mnist", "--data-dir", tmp_path)
    assert_one_line_error(result, "t10k-labels-idx1-ubyte.gz: md5 checksum mismatch")
    assert not any(p.name.startswith("t10k-labels") for p in (tmp_path / "mnist").iterdir())
    assert not any(p.suffix in (".part", ".tmp") for p in (tmp_path / "mnist").iterdir())


def test_download_data_offline(tmp_path, monkeypatch):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    spec = dataclasses.replace(catalog._SPECS["mnist"], mirrors=(f"http://127.0.0.1:{port}/",))
    monkeypatch.setitem(catalog._SPECS, "mnist", spec)
    result = invoke("download-data", "mnist", "--data-dir", tmp_path)
    assert_one_line_error(result, f"Fetch http://127.0.0.1:{port}/train-images-idx3-ubyte.gz by hand and place "
                                  f"it at {tmp_path / 'mnist' / 'train-images-idx3-ubyte.gz'}")
    assert list((tmp_path / "mnist").iterdir()) == []


def test_download_data_unknown_name():
    assert_one_line_error(invoke("download-data", "fashion"), "unknown dataset 'fashion' (did you mean 'fashion_mnist'?)")


def test_download_data_digits_needs_no_network(tmp_path):
    result = invoke("download-data", "digits", "--data-dir", tmp_path)
    assert result.exit_code == 0 and "1257" in result.stdout and "built in" in result.stdout
    assert not (tmp_path / "digits").exists()


def test_runs_and_best(tmp_path):
    root = tmp_path / "results"
    config = RunConfig(model_name="MnistMLP", results_root=str(root), random_seed=1, lr=0.05)
    run = prepare_run_dir(config)
    with MetricsLog(run.path) as log:
        log.append(100, {"validation_accuracy": 0.75})
        log.append(200, {"validation_accuracy": 0.875})
    result = invoke("runs", "--results-root", root)
    assert result.exit_code == 0, result.output
    assert "MnistMLP" in result.stdout and "validation_accuracy = 0.875" in result.stdout and "200" in result.stdout
    assert invoke("runs", "--results-root", root, "--model", "ConvNet").stdout == \
        f"no runs under {root / 'ConvNet'}\n"
    assert_one_line_error(invoke("best", "MnistMLP", "--results-root", root),
                          f"no best config stored for MnistMLP yet ({root / 'MnistMLP' / 'best_config.yaml'})")
    update_best_config("MnistMLP", run.config, 0.875, run.path / "model-200", results_root=root)
    shown = invoke("best", "MnistMLP", "--results-root", root)
    assert shown.exit_code == 0
    first, rest = shown.stdout.split("\n", 1)
    assert first.startswith(f"# validation_accuracy = 0.875 (higher is better), checkpoint {run.path / 'model-200'}")
    assert yaml.safe_load(rest) == run.config.model_dump(mode="json")


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("tftk.datasets.download_dataset", interrupted)
    result = invoke("download-data", "mnist")
    assert result.exit_code == 130 and result.stderr == "error: interrupted\n"
