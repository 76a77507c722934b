"""Real TF 1.x estimators as the oracle: tensorflow-estimator 2.15 loaded into TF 2.21.

TF 2.21 dropped `tf.estimator`; `pip install --no-deps tensorflow-estimator==2.15.0` still holds the
code, and it runs once three names TF 2.21 removed are put back (`_TF_PRELUDE`: a
`distribute.estimator_training` that says "not distributed", the 'estimator' API name of tf_export) and its package
`__init__` — which imports the TPU estimator — is skipped. Premade estimators are reached with
TF1's own feature columns (`feature_column._numeric_column`, ...): the v2 columns would route
them through Keras 3, which cannot run them. DNN estimators need Keras 2 layers and are not
available this way.

A snippet sees `E` (the estimator namespace: Estimator, EstimatorSpec, ModeKeys, RunConfig,
inputs, export, premade classes) and `FC` (feature columns); in tftk they are `tf.estimator` and
`tf.feature_column`. Everything else is as in `tests/tf_oracle.py`.
"""

from __future__ import annotations

from typing import Any, Mapping

import pytest

from tests.tf_oracle import OracleResult, run_in_tf, run_in_tftk

_TF_PRELUDE = r'''
import sys as _sys, types as _types, importlib.util as _ilu
if "tensorflow_estimator.python.estimator.estimator" not in _sys.modules:
    _shim = _types.ModuleType("tensorflow.python.distribute.estimator_training")
    _shim.should_run_distribute_coordinator = lambda config: False  # one process: TF's local path
    _sys.modules[_shim.__name__] = _shim
    from tensorflow.python.util import tf_export as _tfx
    _tfx.ESTIMATOR_API_NAME = "estimator"
    _tfx.API_ATTRS["estimator"] = _tfx._Attributes("_estimator_api_names", "_estimator_api_constants")
    _tfx.API_ATTRS_V1["estimator"] = _tfx._Attributes("_estimator_api_names_v1", "_estimator_api_constants_v1")
    _spec = _ilu.find_spec("tensorflow_estimator")
    if _spec is None:
        raise ModuleNotFoundError("No module named 'tensorflow_estimator'")
    _package = _types.ModuleType("tensorflow_estimator")
    _package.__path__ = list(_spec.submodule_search_locations)
    _sys.modules["tensorflow_estimator"] = _package
from tensorflow_estimator.python.estimator import estimator as _est, model_fn as _mfn, run_config as _rc
from tensorflow_estimator.python.estimator import mode_keys as _mk, training as _tr
from tensorflow_estimator.python.estimator.export import export as _ex, export_output as _eo
from tensorflow_estimator.python.estimator.inputs import numpy_io as _np_io
from tensorflow_estimator.python.estimator.canned import linear as _lin, baseline as _base
from tensorflow.python.feature_column import feature_column as _fc1
E = _types.SimpleNamespace(
    Estimator=_est.Estimator, EstimatorSpec=_mfn.EstimatorSpec, ModeKeys=_mk.ModeKeys, RunConfig=_rc.RunConfig,
    TrainSpec=_tr.TrainSpec, EvalSpec=_tr.EvalSpec, train_and_evaluate=_tr.train_and_evaluate,
    WarmStartSettings=_est.WarmStartSettings,
    LinearClassifier=_lin.LinearClassifier, LinearRegressor=_lin.LinearRegressor,
    BaselineClassifier=_base.BaselineClassifier, BaselineRegressor=_base.BaselineRegressor,
    inputs=_types.SimpleNamespace(numpy_input_fn=_np_io.numpy_input_fn),
    export=_types.SimpleNamespace(
        ServingInputReceiver=_ex.ServingInputReceiver, PredictOutput=_eo.PredictOutput,
        build_parsing_serving_input_receiver_fn=_ex.build_parsing_serving_input_receiver_fn,
        build_raw_serving_input_receiver_fn=_ex.build_raw_serving_input_receiver_fn))
FC = _types.SimpleNamespace(**{_name: getattr(_fc1, "_" + _name) for _name in (
    "numeric_column", "bucketized_column", "categorical_column_with_vocabulary_list",
    "categorical_column_with_identity", "categorical_column_with_hash_bucket", "crossed_column",
    "indicator_column", "embedding_column")})
'''

_TFTK_PRELUDE = "E = tf.estimator\nFC = getattr(tf, 'feature_column', None)\n"


def run_estimator_cases_in_tf(cases: Mapping[str, tuple[str, Mapping[str, Any]]]) -> dict[str, OracleResult]:
    """Each snippet run by TF 1.x's estimator (skips when real TensorFlow or tensorflow-estimator is missing)."""
    results = run_in_tf({name: (_TF_PRELUDE + source, inputs) for name, (source, inputs) in cases.items()})
    if any(r.error == "ModuleNotFoundError" and "tensorflow_estimator" in r.message for r in results.values()):
        pytest.skip("tensorflow-estimator is not installed in the TensorFlow venv: "
                    "pip install --no-deps tensorflow-estimator==2.15.0 (.ci/run does)")
    return results


def run_estimator_case_in_tftk(source: str, inputs: Mapping[str, Any]) -> OracleResult:
    """The same snippet run by tftk's estimator."""
    return run_in_tftk(_TFTK_PRELUDE + source, inputs)
