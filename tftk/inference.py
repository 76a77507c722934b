"""What `tftk infer` does: restore a run's latest checkpoint with its saved config and predict.

Inputs come from a file (.npy: inputs only; .npz: `images`/`x` and optional `labels`/`y`;
.csv: one example per row, with an optional header whose `label` column holds labels; a table
written without decimal points holds integers) or from a
dataset split. Integer pixel values are scaled as the dataset's are; floats are taken as scaled.
"""

from __future__ import annotations

import csv
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tftk.framework.errors import InvalidArgumentError
from tftk.user_input import UserInputError
from tftk.runs import load_run_config

__all__ = ["Inference", "load_inputs", "run_inference"]

_INPUT_KEYS = ("images", "x", "inputs")
_LABEL_KEYS = ("labels", "y")
_INTEGER = re.compile(r"[-+]?[0-9]+")


@dataclass(frozen=True)
class Inference:
    """Predictions of a run's model, with the labels and accuracy when the inputs carried labels."""

    run_dir: Path
    model_name: str
    checkpoint: str
    predictions: np.ndarray
    labels: np.ndarray | None

    @property
    def accuracy(self) -> float | None:
        if self.labels is None or len(self.labels) == 0:
            return None
        return float(np.mean(self.predictions == self.labels))


_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")


def load_inputs(path: str | Path) -> tuple[np.ndarray, np.ndarray | None]:
    """(inputs, labels or None) from a .npy, .npz, .csv or image file; UserInputError naming the file otherwise.

    An image becomes one float input in [0, 1] of its own size; run_inference fits it to the model.
    """
    path = Path(path)
    if not path.is_file():
        raise UserInputError(f"{path}: input file not found")
    suffix = path.suffix.lower()
    if suffix in _IMAGE_SUFFIXES:
        return _read_image(path)[None], None
    try:
        if suffix == ".npy":
            return np.load(path, allow_pickle=False), None
        if suffix == ".npz":
            return _from_npz(path)
        if suffix == ".csv":
            return _from_csv(path)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as error:
        raise UserInputError(f"{path}: cannot read {suffix[1:]} inputs ({str(error).splitlines()[0]})") from None
    raise UserInputError(f"{path}: unsupported input format '{suffix}'; use .npy, .npz, .csv or an image")


def _read_image(path: Path) -> np.ndarray:
    """[height, width, channels] float32 in [0, 1]: PNG by tftk's own decoder, other formats by Pillow."""
    if path.suffix.lower() == ".png":
        from tftk.ops.image_ops import png_array
        try:
            pixels = png_array(path.read_bytes())
        except (ValueError, OSError, InvalidArgumentError) as error:
            raise UserInputError(f"{path}: cannot read the PNG ({str(error).splitlines()[0]})") from None
    else:
        try:
            from PIL import Image
        except ImportError:
            raise UserInputError(f"{path}: reading {path.suffix} images needs Pillow (pip install pillow); "
                                 "PNG files are read without it") from None
        try:
            with Image.open(path) as image:
                pixels = np.asarray(image.convert("RGBA" if "A" in image.getbands() else "RGB"))
        except OSError as error:
            raise UserInputError(f"{path}: cannot read the image ({error})") from None
    pixels = pixels if pixels.ndim == 3 else pixels[:, :, None]
    return pixels.astype(np.float32) / np.float32(np.iinfo(pixels.dtype).max)


def fit_images(images: np.ndarray, shape: tuple[int, int, int]) -> np.ndarray:
    """Float images [n, h, w, c] brought to `shape` (height, width, channels): colour then bilinear size."""
    height, width, channels = shape
    if images.shape[3] in (2, 4):  # drop alpha
        images = images[..., :-1]
    if channels == 1 and images.shape[3] == 3:  # ITU-R 601 luma, as image converters use
        images = images @ np.array([[0.299], [0.587], [0.114]], np.float32)
    elif channels == 3 and images.shape[3] == 1:
        images = np.repeat(images, 3, axis=3)
    return _resize_bilinear(images, height, width)


def _resize_bilinear(images: np.ndarray, height: int, width: int) -> np.ndarray:
    """Bilinear resize with pixel centres aligned (half-pixel), edges clamped."""
    def weights(size_in: int, size_out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        centre = (np.arange(size_out) + 0.5) * size_in / size_out - 0.5
        low = np.clip(np.floor(centre).astype(int), 0, size_in - 1)
        return low, np.minimum(low + 1, size_in - 1), np.clip(centre - low, 0, 1).astype(np.float32)

    y0, y1, wy = weights(images.shape[1], height)
    x0, x1, wx = weights(images.shape[2], width)
    rows = images[:, y0] * (1 - wy)[None, :, None, None] + images[:, y1] * wy[None, :, None, None]
    return rows[:, :, x0] * (1 - wx)[None, None, :, None] + rows[:, :, x1] * wx[None, None, :, None]


def _from_npz(path: Path) -> tuple[np.ndarray, np.ndarray | None]:
    with np.load(path, allow_pickle=False) as stored:
        names = list(stored.files)
        found = next((key for key in _INPUT_KEYS if key in names), names[0] if len(names) == 1 else None)
        if found is None:
            raise UserInputError(f"{path}: expected an array named {' or '.join(_INPUT_KEYS)} "
                                 f"(found: {', '.join(names) or 'none'})")
        labels = next((stored[key] for key in _LABEL_KEYS if key in names), None)
        return stored[found], labels


def _from_csv(path: Path) -> tuple[np.ndarray, np.ndarray | None]:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = [row for row in csv.reader(handle) if row]
    if not rows:
        raise UserInputError(f"{path}: no rows")
    header = None
    try:
        float(rows[0][0])
    except ValueError:
        header, rows = [name.strip().lower() for name in rows[0]], rows[1:]
    width = len(header) if header else len(rows[0])
    bad = next((n for n, row in enumerate(rows, 2 if header else 1) if len(row) != width), None)
    if bad is not None:
        raise UserInputError(f"{path}:{bad}: expected {width} columns, got {len(rows[bad - (2 if header else 1)])}")
    try:
        table = np.array(rows, dtype=np.float64).reshape(len(rows), width)
    except ValueError as error:
        raise UserInputError(f"{path}: not a numeric table ({error})") from None
    labels = None
    if header and "label" in header:
        column = header.index("label")
        labels = table[:, column]
        if not np.all(labels == np.round(labels)):
            raise UserInputError(f"{path}: the label column must hold class numbers")
        labels, table = labels.astype(np.int64), np.delete(table, column, axis=1)
    if all(_INTEGER.fullmatch(cell.strip()) for row in rows for cell in row):
        table = table.astype(np.int64)  # written without decimal points: raw pixel values, scaled later
    return table, labels


def run_inference(result_dir: str | Path, inputs: np.ndarray | None = None, labels: np.ndarray | None = None, *,
                  dataset: str | None = None, split: str = "test", data_dir: str | Path | None = None) -> Inference:
    """Predict `inputs` (or a dataset split) with the latest checkpoint of run `result_dir`."""
    from models import make_model, model_schema

    config = load_run_config(result_dir, model_schema).model_copy(update={"best": False, "debug": False,
                                                                          "result_dir": str(result_dir)})
    if (inputs is None) == (dataset is None):
        raise UserInputError("give either --input FILE or --dataset NAME (with --split)")
    if dataset is not None:
        inputs, labels = _split(dataset, split, data_dir if data_dir is not None else config.data_dir)
    elif inputs.dtype.kind == "f" and inputs.ndim == 4:  # images read from files: fit to the model
        from tftk.datasets import get_spec
        inputs = fit_images(inputs, get_spec(config.dataset).image_shape)
    model = make_model(config, for_inference=True)
    try:
        predictions = model.infer(inputs)
    finally:
        model.close()
    if labels is not None:
        labels = np.asarray(labels).reshape(-1)
        if len(labels) != len(predictions):
            raise UserInputError(f"{len(labels)} labels for {len(predictions)} inputs")
    return Inference(Path(result_dir), config.model_name, model.saver.last_checkpoints[-1], predictions, labels)


def _split(dataset: str, split: str, data_dir: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Raw (integer pixel) images and labels of `dataset`'s `split`."""
    from tftk.datasets import load_dataset

    splits = ("train", "validation", "test")
    if split not in splits:
        raise UserInputError(f"unknown split '{split}'; use one of {', '.join(splits)}")
    part = getattr(load_dataset(dataset, data_dir, dtype=np.uint8), split)
    return part.images, part.labels
