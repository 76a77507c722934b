"""What `tftk serve` serves: models from flags or TF Serving's model config file, and batching parameters.

The model config file is TF Serving's ModelServerConfig text proto:

    model_config_list {
      config { name: "digits" base_path: "results/MnistMLP/run1" model_platform: "tensorflow"
               model_version_policy { latest { num_versions: 2 } }
               version_labels { key: "stable" value: 1500 } }
    }

A base path is a `tftk train` run folder (its checkpoints are the versions) or TF Serving's layout
of numbered SavedModel folders.
"""

from __future__ import annotations

from pathlib import Path

from tftk.user_input import UserInputError
from tftk.serving.manager import ServedModel, VersionPolicy
from tftk.serving.sources import ModelSource, RunFolderSource

__all__ = ["build_models", "models_from_flags", "models_from_config_file", "source_for"]


def source_for(base_path: str | Path, threads: int = 1) -> ModelSource:
    """The source of a base path (a run folder or SavedModel version folders); `threads` bounds each
    Session's intra-op threads."""
    from tftk.runs import CONFIG_FILE

    path = Path(base_path)
    if not path.is_dir():
        raise UserInputError(f"{path}: model base path not found")
    if (path / CONFIG_FILE).is_file():
        return RunFolderSource(path, threads)
    from tftk.serving.saved_model_source import SavedModelSource

    return SavedModelSource(path, threads)


def build_models(result_dir: str | Path | None, model_base_path: str | Path | None, model_name: str,
                 model_config_file: str | Path | None, num_versions: int = 1, threads: int = 1) -> list[ServedModel]:
    """The models `tftk serve`'s flags name: exactly one of a run folder, a base path or a config file."""
    given = [flag for flag, value in (("--result-dir", result_dir), ("--model-base-path", model_base_path),
                                      ("--model-config-file", model_config_file)) if value is not None]
    if len(given) != 1:
        raise UserInputError("give one of --result-dir RUN, --model-base-path DIR (with --model-name) or "
                             f"--model-config-file FILE{' (got ' + ', '.join(given) + ')' if given else ''}")
    if model_config_file is not None:
        return models_from_config_file(model_config_file, threads)
    return models_from_flags(model_name, result_dir if result_dir is not None else model_base_path, num_versions,
                             threads)


def models_from_flags(name: str, base_path: str | Path, num_versions: int = 1, threads: int = 1) -> list[ServedModel]:
    if num_versions < 1:
        raise UserInputError(f"--num-versions {num_versions}: keep at least 1 version")
    return [ServedModel(name, source_for(base_path, threads), VersionPolicy(latest=num_versions))]


def _parse_text_proto(path: Path, message, what: str):
    from google.protobuf import text_format

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise UserInputError(f"{path}: cannot read the {what} ({error.strerror})") from None
    try:
        return text_format.Parse(text, message)
    except text_format.ParseError as error:
        raise UserInputError(f"{path}: not a valid {what} text proto ({error})") from None


def models_from_config_file(path: str | Path, threads: int = 1) -> list[ServedModel]:
    """The models of a ModelServerConfig text file (relative base paths are taken from the file's folder)."""
    from tftk.proto import serving as messages

    path = Path(path)
    config = _parse_text_proto(path, messages.ModelServerConfig(), "model config")
    if not config.HasField("model_config_list") or not config.model_config_list.config:
        raise UserInputError(f"{path}: no model_config_list {{ config {{ ... }} }} entries")
    models, names = [], set()
    for index, entry in enumerate(config.model_config_list.config):
        where = f"{path}: config {index + 1}"
        if not entry.name or not entry.base_path:
            raise UserInputError(f"{where}: name and base_path are required")
        if entry.name in names:
            raise UserInputError(f"{where}: model name '{entry.name}' appears twice")
        if entry.model_platform not in ("", "tensorflow"):
            raise UserInputError(f"{where}: model_platform '{entry.model_platform}' is not served; use tensorflow")
        names.add(entry.name)
        base = Path(entry.base_path)
        base = base if base.is_absolute() else path.parent / base
        models.append(ServedModel(entry.name, source_for(base, threads), _policy(entry.model_version_policy, where),
                                  dict(entry.version_labels)))
    return models


def _policy(proto, where: str) -> VersionPolicy:
    choice = proto.WhichOneof("policy_choice")
    if choice == "all":
        return VersionPolicy(latest=None)
    if choice == "specific":
        if not proto.specific.versions:
            raise UserInputError(f"{where}: model_version_policy specific {{ }} lists no versions")
        return VersionPolicy(latest=None, specific=frozenset(proto.specific.versions))
    if choice == "latest" and proto.latest.num_versions < 1:
        raise UserInputError(f"{where}: latest {{ num_versions }} must be at least 1")
    return VersionPolicy(latest=proto.latest.num_versions if choice == "latest" else 1)
