"""`tftk infer` and `tftk inspect-checkpoint` on a trained digits run, and every bad input of train/infer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from tftk.cli import app
from tftk.datasets import load_dataset
from tftk.runs import read_metrics

ROOT = Path(__file__).resolve().parents[2]
DIGITS_MLP = ROOT / "configs" / "digits_mlp.yaml"


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def assert_one_line_error(result, text):
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    assert text in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    run = tmp_path_factory.mktemp("run") / "digits"
    result = invoke("train", "--config", DIGITS_MLP, "--max-iter", 300, "batch_size=50", "--random-seed", 3,
                    "--result-dir", run, "results_root=" + str(run.parent))
    assert result.exit_code == 0, result.stderr
    return run


@pytest.fixture(scope="module")
def test_split():
    split = load_dataset("digits", dtype=np.uint8).test
    return split.images, split.labels


def accuracy_line(run: Path) -> str:
    accuracy = read_metrics(run)[-1]["test_accuracy"]
    return f"accuracy: {accuracy:.4f} ({round(accuracy * 270)}/270)"


def test_infer_on_the_test_split_matches_the_runs_test_accuracy(run_dir):
    result = invoke("infer", "--result-dir", run_dir, "--dataset", "digits", "--split", "test")
    assert result.exit_code == 0, result.stderr
    assert accuracy_line(run_dir) in result.stdout
    assert "model.ckpt-300" in result.stdout and "... 250 more" in result.stdout


@pytest.mark.parametrize("kind", ["npz", "csv", "npz-float"])
def test_infer_from_files_with_labels(run_dir, test_split, tmp_path, kind):
    images, labels = test_split
    if kind == "npz":
        path = tmp_path / "inputs.npz"
        np.savez(path, images=images, labels=labels)
    elif kind == "npz-float":  # already scaled to [0, 1], 8x8 images
        path = tmp_path / "inputs.npz"
        np.savez(path, x=(images / 16.0).reshape(-1, 8, 8), y=labels)
    else:
        path = tmp_path / "inputs.csv"
        rows = [",".join(map(str, [label, *image])) for image, label in zip(images, labels)]
        path.write_text("label," + ",".join(f"p{i}" for i in range(64)) + "\n" + "\n".join(rows) + "\n")
    result = invoke("infer", "--result-dir", run_dir, "--input", path)
    assert result.exit_code == 0, result.stderr
    assert accuracy_line(run_dir) in result.stdout


def test_infer_npy_prints_and_writes_predictions(run_dir, test_split, tmp_path):
    images, labels = test_split
    np.save(tmp_path / "x.npy", images[:5])
    out = tmp_path / "predictions.npy"
    result = invoke("infer", "--result-dir", run_dir, "--input", tmp_path / "x.npy", "--output", out, "--show", 0)
    assert result.exit_code == 0, result.stderr
    assert "accuracy" not in result.stdout
    predictions = np.load(out)
    assert predictions.shape == (5,) and set(predictions) <= set(range(10))
    full = invoke("infer", "--result-dir", run_dir, "--dataset", "digits", "--output", tmp_path / "all.csv")
    assert (tmp_path / "all.csv").read_text().splitlines()[1:6] == [str(p) for p in predictions]
    assert full.exit_code == 0


def test_inspect_checkpoint_of_a_run_folder(run_dir):
    result = invoke("inspect-checkpoint", run_dir)
    assert result.exit_code == 0, result.stderr
    assert "hidden1/weights (DT_FLOAT) [64,128]" in result.stdout
    assert "global_step (DT_INT64) []" in result.stdout
    weights = 64 * 128 + 128 + 128 * 32 + 32 + 32 * 10 + 10
    assert f"# Total number of params: {weights + 1 + 4}\n" in result.stdout  # + global_step + data_state
    step = invoke("inspect-checkpoint", run_dir / "model.ckpt-300", "--tensor-name", "global_step")
    assert "tensor_name:  global_step\n300\n" in step.stdout, step.stdout


def test_models_lists_each_model_with_its_hyperparameters():
    result = invoke("models")
    assert result.exit_code == 0, result.stderr
    for text in ("MnistMLP", "ConvNet", "Word2Vec", "hidden2 = 32", "keep_prob = 0.5", "embedding_size = 16"):
        assert text in result.stdout


# ---- bad input: one line, exit 2, nothing written -----------------------------------------------


@pytest.mark.parametrize("args, text", [
    (["--config", "missing.yaml"], "missing.yaml: config file not found"),
    ([], "--config FILE is required"),
    (["--config", DIGITS_MLP, "lrr=0.1"], "lrr: unknown key (did you mean 'lr'?)"),
    (["--config", DIGITS_MLP, "--lr", "-1"], "--lr: lr: Input should be greater than 0"),
    (["--config", DIGITS_MLP, "max_iter=lots"], "max_iter: Input should be a valid integer"),
    (["--config", DIGITS_MLP, "model_name=MnistMPL"], "unknown model 'MnistMPL' (did you mean 'MnistMLP'?); "
                                                       "registered models: ConvNet, EstimatorMLP, MnistMLP, Word2Vec"),
    (["--config", DIGITS_MLP, "model.hiden2=3"], "model.hiden2: unknown key (did you mean 'model.hidden2'?)"),
    (["--config", DIGITS_MLP, "model.hidden2=0"], "model.hidden2: Input should be greater than 0"),
    (["--config", DIGITS_MLP, "--fixed-params", "{lr: 1}"], "--fixed-params: not valid JSON"),
    (["--config", DIGITS_MLP, "--fixed-params", "[1]"], "--fixed-params: expected a JSON object"),
    (["--config", DIGITS_MLP, "--fixed-params", '{"lrr": 1}'], "lrr: unknown key (did you mean 'lr'?)"),
    (["--config", DIGITS_MLP, "dataset=mnits"], "unknown dataset 'mnits' (did you mean 'mnist'?)"),
    (["--config", DIGITS_MLP, "--best"], "--best: no best config stored for MnistMLP"),
])
def test_train_rejects_bad_input_in_one_line_and_writes_nothing(tmp_path, monkeypatch, args, text):
    monkeypatch.chdir(tmp_path)
    result = invoke("train", *args)
    assert_one_line_error(result, text)
    assert list(tmp_path.rglob("*")) == []


def test_train_rejects_bad_yaml(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text("model_name: MnistMLP\nlr: [0.1\n")
    assert_one_line_error(invoke("train", "--config", "bad.yaml"), "bad.yaml: invalid YAML: line")
    assert [p.name for p in tmp_path.iterdir()] == ["bad.yaml"]


def test_resuming_with_other_hyperparameters_needs_force(run_dir):
    before = (run_dir / "config.yaml").read_bytes()
    result = invoke("train", "--result-dir", run_dir, "--lr", 0.01)
    assert_one_line_error(result, "this run was started with a different config (lr: 0.5 -> 0.01)")
    assert (run_dir / "config.yaml").read_bytes() == before


def test_a_dataset_that_is_not_downloaded_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("train", "--config", ROOT / "configs" / "mnist_mlp.yaml", "--max-iter", 1,
                    "--result-dir", tmp_path / "r")
    assert_one_line_error(result, "run `tftk download-data mnist --data-dir data`")


@pytest.mark.parametrize("make, args, text", [
    (None, ["--result-dir", "nowhere", "--dataset", "digits"], "nowhere: not a run folder (no config.yaml)"),
    (None, ["--input", "x.npy"], "Missing option '--result-dir'"),
    ("run", ["--input", "missing.npy"], "missing.npy: input file not found"),
    ("run", [], "give either --input FILE or --dataset NAME"),
    ("run", ["--input", "x.npy", "--dataset", "digits"], "give either --input FILE or --dataset NAME"),
    ("run", ["--dataset", "digits", "--split", "dev"], "unknown split 'dev'"),
    ("run", ["--input", "x.txt"], "x.txt: unsupported input format '.txt'; use .npy, .npz, .csv or an image"),
    ("run", ["--input", "wrong.npy"], "inputs of shape (3, 7) do not fit digits images: expected (N, 64) or (N, 8, 8, 1)"),
    ("run", ["--input", "broken.npy"], "broken.npy: cannot read npy inputs"),
    ("run", ["--input", "ragged.csv"], "ragged.csv:2: expected 64 columns, got 3"),
    ("run", ["--input", "x.npy", "--output", "p.txt"], "--output p.txt: use a .npy or .csv file name"),
    ("empty", ["--dataset", "digits"], "no checkpoint to restore; train this run first"),
])
def test_infer_rejects_bad_input_in_one_line(run_dir, tmp_path, monkeypatch, make, args, text):
    monkeypatch.chdir(tmp_path)
    np.save("x.npy", np.zeros((2, 64), np.uint8))
    np.save("wrong.npy", np.zeros((3, 7)))
    Path("broken.npy").write_bytes(b"\x93NUMPY garbage")
    Path("x.txt").write_text("1 2 3\n")
    Path("ragged.csv").write_text(",".join(["0"] * 64) + "\n1,2,3\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    if make == "empty":
        Path("empty").mkdir()
        (Path("empty") / "config.yaml").write_bytes((run_dir / "config.yaml").read_bytes())
        args = ["--result-dir", "empty", *args]
        before = sorted(p.name for p in tmp_path.iterdir())
    elif make == "run":
        args = ["--result-dir", run_dir, *args]
    result = invoke("infer", *args)
    if "Missing option" in text:  # typer's own usage error
        assert result.exit_code == 2 and text in result.stderr
        return
    assert_one_line_error(result, text)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("target, text", [("nothing", "nothing: no such checkpoint or run folder"),
                                          ("folder", "folder: no checkpoint in this folder")])
def test_inspect_checkpoint_rejects_what_is_not_a_checkpoint(tmp_path, monkeypatch, target, text):
    monkeypatch.chdir(tmp_path)
    Path("folder").mkdir()
    assert_one_line_error(invoke("inspect-checkpoint", target), text)


def _png(path: Path, pixels: np.ndarray) -> Path:
    from tftk.ops.image_ops import png_bytes
    path.write_bytes(png_bytes(pixels if pixels.ndim == 3 else pixels[:, :, None]))
    return path


def _predict(run: Path, inputs: np.ndarray) -> np.ndarray:
    from tftk.inference import run_inference
    return run_inference(run, inputs).predictions


def test_infer_reads_png_images_and_fits_them_to_the_model(run_dir, test_split, tmp_path):
    """A PNG of the model's size, and an RGB one 4x larger, predict as the same pixels given as an array."""
    from tftk.inference import load_inputs

    images = test_split[0][:6].reshape(-1, 8, 8)
    pixels = np.round(images * (255 / 16)).astype(np.uint8)
    expected = _predict(run_dir, (pixels / np.float32(255)).astype(np.float32).reshape(-1, 64))
    for i, image in enumerate(pixels):
        same_size = load_inputs(_png(tmp_path / f"d{i}.png", image))[0]
        rgb_large = np.repeat(np.kron(image, np.ones((4, 4), np.uint8))[:, :, None], 3, axis=2)
        larger = load_inputs(_png(tmp_path / f"big{i}.png", rgb_large))[0]
        assert same_size.shape == (1, 8, 8, 1) and larger.shape == (1, 32, 32, 3)
        assert _predict(run_dir, same_size)[0] == expected[i]
        assert _predict(run_dir, larger)[0] == expected[i]
    result = invoke("infer", "--result-dir", run_dir, "--input", tmp_path / "big0.png")
    assert result.exit_code == 0, result.stderr
    assert f"│ 0     │ {expected[0]}          │" in result.stdout


def test_infer_other_image_formats_need_pillow(run_dir, tmp_path):
    try:
        import PIL  # noqa: F401
        pytest.skip("Pillow is installed")
    except ImportError:
        pass
    (tmp_path / "digit.jpg").write_bytes(b"\xff\xd8\xff")
    result = invoke("infer", "--result-dir", run_dir, "--input", tmp_path / "digit.jpg")
    assert_one_line_error(result, "needs Pillow (pip install pillow)")


def test_infer_rejects_a_corrupt_png(run_dir, tmp_path):
    (tmp_path / "broken.png").write_bytes(b"not a png at all")
    result = invoke("infer", "--result-dir", run_dir, "--input", tmp_path / "broken.png")
    assert_one_line_error(result, "cannot read the PNG")
