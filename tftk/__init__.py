"""tftk: TensorFlow 1.x's graph programming model on numpy + Numba.

`import tftk as tf` gives the TF1 names, listed in `tftk/tf1_namespace.py` and loaded on the
first attribute access, so that the light modules of the package (the CLI, the config loader,
`tftk.user_input`) import neither numpy nor the engine: `tftk --help` and shell completion
answer at once. The work is in tftk.framework (graph), tftk.ops (ops, gradients), tftk.client
(sessions) and the layers above.
"""

import importlib as _importlib
import sys as _sys

__version__ = "0.1.0"

_LAZY = {"RunOptions": "tftk.summary.run_metadata", "RunMetadata": "tftk.summary.run_metadata",
         "Summary": "tftk.summary.writer", "Event": "tftk.summary.writer",
         "SessionLog": "tftk.summary.writer", "python": "tftk.api.python",
         "python_io": "tftk.api.python_io",
         "ClusterSpec": "tftk.distributed.cluster",
         "replica_device_setter": "tftk.distributed.device_setter",  # TF 0.x spelling of tf.train's
         # input pipelines, parsing, metrics and debugging ops (issue 17): loaded on first use
         "data": "tftk.data", "io": "tftk.api.io", "metrics": "tftk.api.metrics",
         "debugging": "tftk.api.debugging", "py_func": "tftk.ops.script_ops",
         "numpy_function": "tftk.ops.script_ops", "Print": "tftk.ops.logging_ops",
         "Assert": "tftk.ops.logging_ops", "print": "tftk.ops.logging_ops",
         "random_crop": "tftk.ops.image_preprocessing",
         **{name: "tftk.ops.parsing_ops" for name in (
             "FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature", "parse_example",
             "parse_single_example", "parse_single_sequence_example")},
         **{name: "tftk.ops.check_ops" for name in (
             "assert_equal", "assert_greater", "assert_greater_equal", "assert_integer", "assert_less",
             "assert_less_equal", "assert_negative", "assert_non_negative", "assert_non_positive",
             "assert_none_equal", "assert_positive", "assert_rank", "assert_rank_at_least",
             "assert_near", "assert_scalar", "assert_type", "is_numeric_tensor")},
         "import_graph_def": "tftk.formats.importer", "graph_util": "tftk.formats.graph_util",
         "saved_model": "tftk.formats.saved_model", "estimator": "tftk.estimator",
         "feature_column": "tftk.feature_column",
         "GraphDef": "tftk.proto.tensorflow", "MetaGraphDef": "tftk.proto.tensorflow",
         "NodeDef": "tftk.proto.tensorflow", "AttrValue": "tftk.proto.tensorflow",
         "TensorProto": "tftk.proto.tensorflow", "make_ndarray": "tftk.summary.tensor_proto",
         "make_tensor_proto": "tftk.summary.tensor_util"}
_LAZY_MODULES = {"python", "python_io", "data", "io", "metrics", "debugging", "graph_util", "saved_model",
                 "feature_column", "estimator"}
_RENAMED = {"print": "print_v2"}  # tf.print is logging_ops.print_v2 (a module must not shadow print)
_NAMESPACE = "tftk.tf1_namespace"


def _namespace() -> dict:
    """The TF1 names, imported on first use and copied here (while importing: the names so far)."""
    loading = _sys.modules.get(_NAMESPACE)
    if loading is not None and not getattr(loading, "_complete", False):
        return vars(loading)  # an engine module reads `tf.X` while the namespace itself is importing
    module = _importlib.import_module(_NAMESPACE)
    module._complete = True
    names = {key: value for key, value in vars(module).items() if not key.startswith("__")}
    globals().update({key: value for key, value in names.items() if key not in globals()})
    return names


def __getattr__(name: str):
    """TF1 names load the engine on first use; names whose modules import protobuf load on their own use."""
    if name in _LAZY:
        module = _importlib.import_module(_LAZY[name])
        value = module if name in _LAZY_MODULES else getattr(module, _RENAMED.get(name, name))
        globals()[name] = value
        return value
    names = _namespace()
    if name in names and not name.startswith("_"):
        return names[name]
    if name in globals():  # a subpackage the namespace imported on its way (tftk.compat, tftk.data, ...)
        return globals()[name]
    raise AttributeError(f"module 'tftk' has no attribute {name!r}")


def __dir__() -> list:
    return sorted(set(globals()) | {key for key in _namespace() if not key.startswith("_")} | set(_LAZY))
