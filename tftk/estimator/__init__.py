"""`tf.estimator`: TF1's high-level training API — Estimator, EstimatorSpec, RunConfig, ModeKeys,
train_and_evaluate, the premade estimators and `tf.estimator.export` / `tf.estimator.inputs`.

Loaded on first use of `tf.estimator` (it imports the SavedModel protos).
"""

from tftk.estimator import export, inputs
from tftk.estimator.canned.baseline import BaselineClassifier, BaselineRegressor
from tftk.estimator.canned.dnn import DNNClassifier, DNNRegressor
from tftk.estimator.canned.dnn_linear_combined import DNNLinearCombinedClassifier, DNNLinearCombinedRegressor
from tftk.estimator.canned.linear import LinearClassifier, LinearRegressor
from tftk.estimator.estimator import Estimator
from tftk.estimator.evaluation import FinalOpsHook
from tftk.estimator.exporter import BestExporter, Exporter, FinalExporter, LatestExporter
from tftk.estimator.mode_keys import ModeKeys
from tftk.estimator.model_fn import EstimatorSpec
from tftk.estimator.run_config import RunConfig
from tftk.estimator.training import EvalSpec, TrainSpec, train_and_evaluate
from tftk.estimator.warm_starting import WarmStartSettings
from tftk.train.basic_session_run_hooks import (CheckpointSaverHook, CheckpointSaverListener, LoggingTensorHook,
                                                NanLossDuringTrainingError, NanTensorHook, SecondOrStepTimer,
                                                StepCounterHook, StopAtStepHook, SummarySaverHook)
from tftk.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues

__all__ = ["export", "inputs", "Estimator", "EstimatorSpec", "ModeKeys", "RunConfig", "WarmStartSettings",
           "LinearClassifier", "LinearRegressor", "DNNClassifier", "DNNRegressor", "DNNLinearCombinedClassifier",
           "DNNLinearCombinedRegressor", "BaselineClassifier", "BaselineRegressor", "TrainSpec", "EvalSpec", "train_and_evaluate", "Exporter", "FinalExporter", "LatestExporter", "BestExporter",
           "CheckpointSaverHook", "CheckpointSaverListener", "LoggingTensorHook", "NanLossDuringTrainingError",
           "NanTensorHook", "SecondOrStepTimer", "StepCounterHook", "StopAtStepHook", "SummarySaverHook",
           "SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues", "FinalOpsHook"]
