"""The `tftk` command line: each command parses, calls one library function, and prints.

Module level imports only typer (no numpy, pydantic, numba or tensorboardX), so `tftk --help`
and shell completion answer at once; commands import what they need when they run.

Adding a command is one small function:

    @command()
    def models() -> None:
        '''List the registered models and their hyperparameters.'''
        from models import ...           # the work lives in a library function
        console().print(...)

`@command` turns UserInputError and tftk's OpErrors (DataLossError, NotFoundError, ...) into
one red line on stderr and exit code 2 (`tftk --debug ...` shows the traceback instead).
A command that takes a run config adds `@run_config_options` and receives the article's
flags (--lr, --max-iter, ...) as `flags`, for `tftk.config.resolve_config(..., flags=flags)`.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional

import typer

from tftk import __version__
from tftk.run_fields import RUN_FIELDS

# Plain (click) help: typer's rich help imports most of rich (~0.3 s), which every `--help` and Tab
# completion would pay; errors and tables still use rich, imported when they are printed.
app = typer.Typer(name="tftk", no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False,
                  rich_markup_mode=None,
                  help="TensorFlow 1.x's graph model on numpy + Numba, with config-driven training runs.")
_state = {"debug": False}


def console(stderr: bool = False):
    """A rich console (imported on first use); unbounded width when piped, so lines never wrap."""
    from rich.console import Console

    shown = Console(stderr=stderr, soft_wrap=True)
    if not shown.is_terminal:
        shown.width = 10_000
    return shown


@contextlib.contextmanager
def reporting_errors() -> Iterator[None]:
    """Bad input and tftk's OpErrors -> one red line on stderr, exit 2; Ctrl-C or SIGTERM -> exit 130 or 143
    (tracebacks with --debug). An interrupt may carry its own message (a resume hint) and exit code."""
    from tftk.user_input import UserInputError

    try:
        with _sigterm_as_interrupt():
            yield
    except KeyboardInterrupt as interrupt:
        if _state["debug"]:
            raise
        _print_error(str(interrupt) or "interrupted")
        raise typer.Exit(getattr(interrupt, "exit_code", 130)) from None
    except OSError as error:  # disk full, permissions, a file where a folder should be: the path and the cause
        if _state["debug"]:
            raise
        where = f"{error.filename}: " if error.filename else ""
        _print_error(f"{where}{error.strerror or error}")
        raise typer.Exit(2) from None
    except Exception as error:
        if _state["debug"] or not _is_user_facing(error, UserInputError):
            raise
        _print_error(str(error))
        raise typer.Exit(2) from None


class Terminated(KeyboardInterrupt):
    """SIGTERM outside a training loop: handled like Ctrl-C, exit code 143."""

    exit_code = 143


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (kill, docker stop, schedulers) raises Terminated, so cleanup runs as for Ctrl-C."""
    import signal

    def terminate(signum, frame):
        raise Terminated("terminated")

    try:
        previous = signal.signal(signal.SIGTERM, terminate)
    except ValueError:  # not the main thread (a test runner's worker): leave SIGTERM alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _is_user_facing(error: Exception, user_input_error: type) -> bool:
    """UserInputError, or one of the engine's OpErrors (only possible once the engine is loaded)."""
    errors = sys.modules.get("tftk.framework.errors")
    return isinstance(error, user_input_error) or (errors is not None and isinstance(error, errors.OpError))


def _print_warning(message: str) -> None:
    from rich.text import Text

    console(stderr=True).print(Text("warning: ", style="bold yellow") + Text(message, style="yellow"))


def _print_error(message: str) -> None:
    from rich.text import Text

    console(stderr=True).print(Text("error: ", style="bold red") + Text(message, style="red"))


def command(name: str | None = None, **options: Any) -> Callable[[Callable], Callable]:
    """Register a command whose user errors are reported by `reporting_errors`."""
    def register(function: Callable) -> Callable:
        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> Any:
            with reporting_errors():
                return function(*args, **kwargs)

        app.command(name, **options)(run)
        return function
    return register


# The article's main.py flags that override a run config: (field, type, help), from the RunConfig field table.
RUN_FLAGS: list[tuple[str, type, str]] = [(row.name, row.option_type, row.description)
                                          for row in RUN_FIELDS if row.flag]


def run_config_options(function: Callable) -> Callable:
    """Give a command the RUN_FLAGS options; it receives the given ones as `flags` (None = not given)."""
    signature = inspect.signature(function, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "flags"]
    added = [inspect.Parameter(field, inspect.Parameter.KEYWORD_ONLY, annotation=Optional[kind],
                               default=typer.Option(None, f"--{field.replace('_', '-')}", help=text))
             for field, kind, text in RUN_FLAGS]

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        flags = {field: kwargs.pop(field) for field, _, _ in RUN_FLAGS}
        if flags["debug"]:
            _state["debug"] = True
        return function(*args, flags=flags, **kwargs)

    run.__signature__ = signature.replace(parameters=own + added)
    return run


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"tftk {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: bool = typer.Option(False, "--version", callback=_show_version, is_eager=True,
                                 help="print the version and exit"),
    debug: bool = typer.Option(False, "--debug", help="show full tracebacks instead of one-line errors"),
) -> None:
    """tftk: train, infer and search hyperparameters of TF1-style models."""
    _state["debug"] = debug


# ---- Commands: each a small function calling into models/, hpsearch/, tftk.train or the toolkit.


@command("train")
@run_config_options
def train(
    overrides: Optional[List[str]] = typer.Argument(None, help="key=value overrides, e.g. model.hidden1=64"),
    config: Optional[Path] = typer.Option(None, "--config", "-c",
                                          help="YAML run config (default: the saved config of --result-dir)"),
    fixed_params: Optional[str] = typer.Option(None, "--fixed-params",
                                               help='JSON object of overrides, e.g. \'{"lr": 0.01}\''),
    force: bool = typer.Option(False, "--force", help="resume a run folder even if its config differs"),
    flags: dict = None,
) -> None:
    """Train a model; an existing --result-dir is resumed from its latest checkpoint."""
    from tftk.train_progress import TrainingProgress
    from tftk.training_loop import load_train_config, train_run

    run_config = load_train_config(config, [*_fixed_params(fixed_params), *(overrides or [])], flags)
    shown = console()
    with TrainingProgress(shown, run_config.batch_size) as progress:
        def starting(step: int, resolved) -> None:
            verb = f"resuming at step {step} of" if step else "training"
            progress.log(f"{verb} {resolved.model_name} to step {resolved.max_iter} in {resolved.result_dir}")
            progress.start(step, resolved)

        result = train_run(run_config, force=force, log=progress.log, on_start=starting, on_step=progress.update)
    _print_train_summary(shown, result)
    if result.interrupted:
        import signal

        how = "interrupted" if result.stop_signal == signal.SIGINT else "terminated (SIGTERM)"
        _print_error(f"{how} at step {result.step}; checkpoint saved, resume with: "
                     f"tftk train --result-dir {result.run_dir}")
        raise typer.Exit(128 + result.stop_signal)


def _fixed_params(text: str | None) -> list[str]:
    """--fixed-params JSON -> key=value overrides (JSON values are valid YAML)."""
    import json

    from tftk.search import parse_fixed_params

    return [f"{key}={json.dumps(value)}" for key, value in parse_fixed_params(text).items()]


def _print_train_summary(shown, result) -> None:
    from rich.table import Table

    table = Table(title="training run", show_header=False)
    table.add_column("key")
    table.add_column("value", overflow="fold")
    table.add_row("run folder", str(result.run_dir))
    table.add_row("model", result.config.model_name)
    table.add_row("steps", f"{result.start_step} -> {result.step} of {result.config.max_iter}")
    table.add_row("checkpoint", str(result.checkpoint))
    for key, value in result.metrics.items():
        table.add_row(key, f"{value:.4f}")
    if result.metric is not None:
        table.add_row("best config", "updated" if result.best_updated else "kept (not better)")
    table.add_row("time", f"{result.seconds:.1f} s")
    shown.print(table)


@command("hpsearch")
def hpsearch(
    overrides: Optional[List[str]] = typer.Argument(None, help="key=value overrides of the base config"),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="YAML run config the search starts from"),
    nb_process: int = typer.Option(1, "--nb-process", min=1, help="trials in parallel (worker processes)"),
    max_resource: Optional[int] = typer.Option(None, "--max-resource", min=1,
                                               help="R: training iterations of a fully trained trial (default: the config's max_iter)"),
    eta: Optional[int] = typer.Option(None, "--eta", min=2, help="hyperband's reduction factor (default 3)"),
    sync: bool = typer.Option(False, "--sync", help="synchronous brackets instead of asynchronous promotion (ASHA)"),
    fullsearch: bool = typer.Option(False, "--fullsearch", help="hyperband, lr search around its best, hyperband again"),
    random: Optional[int] = typer.Option(None, "--random", min=1, metavar="N",
                                         help="random search of N configs trained to R instead of hyperband"),
    fixed_params: Optional[str] = typer.Option(None, "--fixed-params", help='JSON object fixed in every trial, e.g. \'{"lr": 0.01}\''),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the plan and budget; train nothing"),
    resume: Optional[Path] = typer.Option(None, "--resume", help="continue the search in this folder (its saved settings)"),
    trial_timeout: Optional[float] = typer.Option(None, "--trial-timeout", help="seconds; a slower trial is recorded as failed"),
    seed: Optional[int] = typer.Option(None, "--seed", min=0, help="search seed: same seed, same trials (default: drawn, saved)"),
    backend: str = typer.Option("local", "--backend", help="local (worker processes) or dask"),
    address: Optional[str] = typer.Option(None, "--address", help="Dask scheduler address, e.g. tcp://host:8786"),
) -> None:
    """Search hyperparameters (hyperband or random search on worker processes); store the best config."""

    from tftk.user_input import UserInputError
    from tftk.search import SearchSettings, resume_search, start_search

    run_options = dict(nb_process=nb_process, trial_timeout=trial_timeout, backend=backend, address=address)
    defining = {"--config": config, "key=value overrides": overrides, "--max-resource": max_resource, "--eta": eta,
                "--sync": sync or None, "--fullsearch": fullsearch or None, "--random": random,
                "--fixed-params": fixed_params, "--seed": seed}
    if resume is not None:
        given = [name for name, value in defining.items() if value]
        if given:
            raise UserInputError(f"--resume continues {resume} with its saved settings; drop {', '.join(given)}")
        outcome = resume_search(resume, dry_run=dry_run, out=sys.stdout, **run_options)
    elif config is None:
        raise UserInputError("--config FILE is required (or --resume DIR to continue a search)")
    else:
        settings = SearchSettings(algorithm="random" if random else "hyperband", mode="sync" if sync else "async",
                                  fullsearch=fullsearch, max_resource=max_resource, eta=eta or 3, n_configs=random,
                                  seed=seed)
        outcome = start_search(config, overrides or [], settings, fixed_params_json=fixed_params, dry_run=dry_run,
                               out=sys.stdout, **run_options)
    if dry_run:
        return
    best = outcome.best
    if best is None:
        _print_error(f"no trial finished with a checkpoint; the errors are in {outcome.search_dir}'s journal")
        raise typer.Exit(1)
    typer.echo(f"best trial {best.trial_id}: {best.config.metric} = {best.metric:.6g} after {best.resource} "
               f"iterations, checkpoint {best.checkpoint}")
    if best.store_updated:
        typer.echo(f"best config stored in {best.store}; `tftk train --best` uses it")
    else:
        typer.echo(f"best config not stored: the one in {best.store} is at least as good")


@command("infer")
def infer(
    result_dir: Path = typer.Option(..., "--result-dir", help="run folder whose latest checkpoint predicts"),
    input_file: Optional[Path] = typer.Option(None, "--input", help=".npy, .npz (images, labels) or .csv inputs"),
    dataset: Optional[str] = typer.Option(None, "--dataset", help="predict a dataset split instead of a file"),
    split: str = typer.Option("test", "--split", help="train, validation or test"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="where datasets live (default: the run's)"),
    show: int = typer.Option(20, "--show", help="predictions to print (0: all)"),
    output: Optional[Path] = typer.Option(None, "--output", help="write all predictions to this .npy or .csv file"),
) -> None:
    """Predict with a trained run: a file of inputs or a dataset split; accuracy when labels are known."""
    from rich.table import Table

    from tftk.inference import load_inputs, run_inference

    inputs, labels = load_inputs(input_file) if input_file is not None else (None, None)
    result = run_inference(result_dir, inputs, labels, dataset=dataset, split=split, data_dir=data_dir)
    if output is not None:
        _write_predictions(output, result.predictions)
    shown = console()
    count = len(result.predictions) if show <= 0 else min(show, len(result.predictions))
    table = Table("index", "prediction", *(["label"] if result.labels is not None else []),
                  title=f"{result.model_name} predictions ({result.checkpoint})")
    for index in range(count):
        label = [str(result.labels[index])] if result.labels is not None else []
        table.add_row(str(index), str(result.predictions[index]), *label)
    shown.print(table)
    if count < len(result.predictions):
        shown.print(f"... {len(result.predictions) - count} more (--show 0 prints all)")
    if result.accuracy is not None:
        correct = int((result.predictions == result.labels).sum())
        shown.print(f"accuracy: {result.accuracy:.4f} ({correct}/{len(result.labels)})")


def _write_predictions(path: Path, predictions) -> None:
    import io

    import numpy as np

    from tftk.atomic import atomic_write_bytes
    from tftk.user_input import UserInputError

    buffer = io.BytesIO()
    if path.suffix == ".npy":
        np.save(buffer, predictions)
    elif path.suffix == ".csv":
        buffer.write(("prediction\n" + "".join(f"{p}\n" for p in predictions)).encode())
    else:
        raise UserInputError(f"--output {path}: use a .npy or .csv file name")
    atomic_write_bytes(path, buffer.getvalue())


@command("models")
def models() -> None:
    """List the registered models and their hyperparameters (the `model:` config section)."""
    from rich.table import Table

    from models import get_model_class, model_names

    table = Table("model", "description", "model: hyperparameters")
    for name in model_names():
        cls = get_model_class(name)
        params = "\n".join(f"{key} = {field.default!r}  ({field.description})"
                           for key, field in cls.Params.model_fields.items())
        table.add_row(name, (cls.__doc__ or "").strip().splitlines()[0], params or "-")
    console().print(table)


@command("inspect-checkpoint")
def inspect_checkpoint(
    path: Path = typer.Argument(..., help="a checkpoint prefix, or a run folder (its latest checkpoint)"),
    tensor_name: Optional[str] = typer.Option(None, "--tensor-name", help="print this tensor's value"),
    all_tensors: bool = typer.Option(False, "--all-tensors", help="print every tensor's value"),
    all_tensor_names: bool = typer.Option(False, "--all-tensor-names", help="print every tensor's name"),
) -> None:
    """Print a checkpoint's tensors (names, dtypes, shapes; values on request), as TF1's inspect_checkpoint."""
    from tftk.user_input import UserInputError
    from tftk.train.checkpoint_io import print_tensors_in_checkpoint_file
    from tftk.train.checkpoint_state import latest_checkpoint

    prefix = str(path)
    if path.is_dir():
        prefix = latest_checkpoint(path)
        if prefix is None:
            raise UserInputError(f"{path}: no checkpoint in this folder")
    elif not path.exists() and not Path(f"{path}.npz").exists() and not Path(f"{path}.index").exists():
        raise UserInputError(f"{path}: no such checkpoint or run folder")
    print_tensors_in_checkpoint_file(prefix, tensor_name, all_tensors, all_tensor_names)


@command("export")
def export(
    result_dir: Path = typer.Option(..., "--result-dir", help="run folder whose latest checkpoint is exported"),
    out: Path = typer.Option(..., "--out", help="new SavedModel folder (must not exist or be empty)"),
) -> None:
    """Write a run's model as a TensorFlow SavedModel (tag 'serve', signature 'serving_default')."""
    from tftk.formats.export_run import export_saved_model

    console().print(f"SavedModel written to {export_saved_model(result_dir, out)}")


@command("config")
@run_config_options
def show_config(
    path: Path = typer.Argument(..., help="YAML run config"),
    overrides: Optional[List[str]] = typer.Argument(None, help="key=value overrides, e.g. model.hidden1=64"),
    flags: dict = None,
) -> None:
    """Print the resolved run config (file, then flags, then overrides); writes nothing."""
    from tftk.config import dump_config, resolve_config

    config = resolve_config(path, overrides or [], flags=flags, draw_seed=False)
    typer.echo(dump_config(config), nl=False)


@command("download-data")
def download_data(
    name: str = typer.Argument(..., help="mnist, fashion_mnist, cifar10 (digits ships with tftk)"),
    data_dir: Path = typer.Option(Path("data"), "--data-dir", help="where datasets live"),
) -> None:
    """Download a dataset (checksums verified, partial downloads resumed) and show its splits."""
    import numpy as np
    from rich.table import Table

    from tftk.datasets import download_dataset, get_spec, load_dataset

    spec = get_spec(name)
    paths = download_dataset(spec.name, data_dir)
    data = load_dataset(spec.name, data_dir, dtype=np.uint8)
    table = Table("split", "examples", "image shape", title=f"{spec.name} ({', '.join(map(str, paths)) or 'built in'})")
    for split, part in zip(data._fields, data):
        table.add_row(split, str(part.num_examples), "x".join(map(str, spec.image_shape)))
    console().print(table)


@command("runs")
def runs(
    model: Optional[str] = typer.Option(None, "--model", help="only this model's runs"),
    results_root: Path = typer.Option(Path("results"), "--results-root", help="where runs live"),
) -> None:
    """List runs: start time, steps, best metric, folder."""
    from rich.table import Table

    from tftk.runs import list_runs

    found = list_runs(results_root, model, on_skip=lambda run, reason: _print_warning(f"skipped {run}: {reason}"))
    if not found:
        typer.echo(f"no runs under {results_root / model if model else results_root}")
        return
    table = Table("started", "model", "steps", "best metric", "path")
    for run in found:
        best = f"{run.metric} = {run.best_metric:.6g}" if run.best_metric is not None else "-"
        table.add_row(run.started.strftime("%Y-%m-%d %H:%M:%S"), run.model,
                      "-" if run.steps is None else str(run.steps), best, str(run.path))
    console().print(table)


@command("best")
def best(
    model: str = typer.Argument(..., help="model name"),
    overrides: Optional[List[str]] = typer.Argument(None, help="with --config: key=value overrides"),
    dataset: Optional[str] = typer.Option(None, "--dataset", help="the dataset the record is for (default: digits, "
                                                                   "or the --config's)"),
    config: Optional[Path] = typer.Option(None, "--config", "-c",
                                          help="show what `tftk train --config FILE --best` would change"),
    results_root: Path = typer.Option(Path("results"), "--results-root", help="where runs live"),
) -> None:
    """Show a model's stored best config on a dataset, or what --best would change in a run config."""
    import yaml

    from tftk.runs import DEFAULT_DATASET, best_config_path, load_best_config
    from tftk.user_input import UserInputError

    if config is not None:
        _print_best_changes(model, config, overrides or [], dataset, results_root)
        return
    record = load_best_config(model, results_root, dataset or DEFAULT_DATASET)
    if record is None:
        raise UserInputError(f"no best config stored for {model} yet ({best_config_path(model, results_root)}"
                             f"{'' if dataset is None else ', dataset ' + dataset}); "
                             "it is written when a run beats the previous best")
    typer.echo(f"# {record.metric_name} = {record.metric:.6g} ({'higher' if record.higher_is_better else 'lower'} "
               f"is better), checkpoint {record.checkpoint_path}, updated {record.updated}")
    typer.echo(f"# dataset {record.dataset}; --best applies: "
               + (", ".join(f"{key}={value!r}" for key, value in record.hyperparameters.items()) or "nothing"))
    typer.echo(yaml.safe_dump(record.config, sort_keys=False), nl=False)


def _print_best_changes(model: str, config: Path, overrides: list[str], dataset: str | None, results_root: Path) -> None:
    """`tftk best MODEL --config FILE`: each hyperparameter --best would change, current -> stored."""
    from tftk.training_loop import best_config_changes, explicit_keys, load_train_config
    from tftk.user_input import UserInputError

    flags = {"dataset": dataset}
    resolved = load_train_config(config, overrides, {**flags, "best": False})
    if resolved.model_name != model:
        raise UserInputError(f"--config {config} is for {resolved.model_name}, not {model}")
    resolved = resolved.model_copy(update={"results_root": str(results_root)})
    changes = best_config_changes(resolved, explicit_keys(flags, overrides))
    if not changes:
        typer.echo(f"--best changes nothing in {config} ({model} on {resolved.dataset})")
    for key, (current, stored) in changes.items():
        typer.echo(f"{key}: {current!r} -> {stored!r}")


@command("serve")
def serve(
    result_dir: Optional[Path] = typer.Option(None, "--result-dir", help="serve this run folder (checkpoint steps are versions)"),
    model_base_path: Optional[Path] = typer.Option(None, "--model-base-path", help="a run folder or numbered version folders"),
    model_name: str = typer.Option("default", "--model-name", help="the name requests use"),
    model_config_file: Optional[Path] = typer.Option(None, "--model-config-file", help="TF Serving's model config (text proto)"),
    port: int = typer.Option(8500, "--port", help="gRPC port (0: no gRPC)"),
    rest_api_port: int = typer.Option(8501, "--rest-api-port", help="REST port (0: no REST)"),
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on (0.0.0.0: every interface)"),
    poll_wait: float = typer.Option(1.0, "--file-system-poll-wait-seconds", help="seconds between looks for new versions (0: once)"),
    num_versions: int = typer.Option(1, "--num-versions", help="newest versions kept loaded (flags only; the config file has its policy)"),
    enable_batching: bool = typer.Option(False, "--enable-batching", help="run concurrent requests to a model as one batch"),
    batching_parameters_file: Optional[Path] = typer.Option(None, "--batching-parameters-file", help="TF Serving's BatchingParameters (text proto)"),
    intra_op: int = typer.Option(1, "--tensorflow-intra-op-parallelism", help="threads per Session.run (0: the run's setting); 1 suits a busy server"),
    rest_api_num_threads: int = typer.Option(64, "--rest-api-num-threads", help="threads running requests (REST and gRPC each)"),
    max_body_bytes: int = typer.Option(8 << 20, "--max-body-bytes", help="largest request body accepted (413 above)"),
    max_queue: int = typer.Option(256, "--max-queue", help="requests in progress before 503 / RESOURCE_EXHAUSTED"),
    request_timeout: float = typer.Option(10.0, "--request-timeout-seconds", help="time a client has to send its request (408 after)"),
    access_log: Optional[str] = typer.Option("-", "--access-log", help="JSON-lines access log file ('-': stderr, '': off)"),
    stage_times: bool = typer.Option(False, "--stage-times", help="count server CPU time by request stage in /metrics (profiling)"),
    scheduler_slice: int = typer.Option(100, "--scheduler-slice-micros", help="Linux >= 6.12: CPU slice of the threads requests wait on, for a lower tail latency on a busy machine (0: the kernel's default)"),
) -> None:
    """Serve trained models over TensorFlow Serving's REST and gRPC APIs, picking up new versions as they appear."""
    from tftk.serving.batching import Batcher, read_batching_parameters
    from tftk.serving.config import build_models
    from tftk.serving.server import ServerOptions, configure_logging, run_server

    if scheduler_slice < 0:
        from tftk.user_input import UserInputError
        raise UserInputError(f"--scheduler-slice-micros must be >= 0 (0: the kernel's default), got {scheduler_slice}")
    if batching_parameters_file is not None and not enable_batching:
        from tftk.user_input import UserInputError
        raise UserInputError("--batching-parameters-file needs --enable-batching")
    models = build_models(result_dir, model_base_path, model_name, model_config_file, num_versions, intra_op)
    parameters = read_batching_parameters(batching_parameters_file) if enable_batching else None
    options = ServerOptions(port=port, rest_api_port=rest_api_port, host=host, rest_api_num_threads=rest_api_num_threads,
                            max_body_bytes=max_body_bytes, max_queue=max_queue, request_timeout_seconds=request_timeout,
                            stage_times=stage_times, scheduler_slice_micros=scheduler_slice)
    configure_logging(access_log or None)
    run_server(models, options, Batcher(parameters) if parameters else None, poll_wait_seconds=poll_wait)


def main() -> None:
    """Console-script entry point."""
    app()
