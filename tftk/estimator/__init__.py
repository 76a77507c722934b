"""`tf.estimator`: TF1's high-level training API — Estimator, EstimatorSpec, RunConfig, ModeKeys,
train_and_evaluate, the premade estimators and `tf.estimator.export` / `tf.estimator.inputs`.

Loaded on first use of `tf.estimator` (it imports the SavedModel protos).
"""

from tftk.estimator import export
from tftk.estimator.estimator import Estimator
from tftk.estimator.mode_keys import ModeKeys
from tftk.estimator.model_fn import EstimatorSpec
from tftk.estimator.run_config import RunConfig
from tftk.estimator.warm_starting import WarmStartSettings
from tftk.train.basic_session_run_hooks import (CheckpointSaverHook, CheckpointSaverListener, LoggingTensorHook,
                                                NanLossDuringTrainingError, NanTensorHook, SecondOrStepTimer,
                                                StepCounterHook, StopAtStepHook, SummarySaverHook)
from tftk.train.session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues
from tftk.estimator.evaluation import FinalOpsHook

__all__ = ["export", "Estimator", "EstimatorSpec", "ModeKeys", "RunConfig", "WarmStartSettings",
           "CheckpointSaverHook", "CheckpointSaverListener", "LoggingTensorHook", "NanLossDuringTrainingError",
           "NanTensorHook", "SecondOrStepTimer", "StepCounterHook", "StopAtStepHook", "SummarySaverHook",
           "SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues", "FinalOpsHook"]
