"""`tf.train`: optimizers, schedules, the global step, moving averages, Saver, Supervisor, hooks.

This package is the `tf.train` namespace itself: importing any submodule binds the package as
`tftk.train`, so a separate namespace module would be silently replaced.
"""

from tftk.framework.ops import GraphKeys  # noqa: F401 - tf.train code often spells tf.GraphKeys this way
from tftk.train.learning_rate_decay import (cosine_decay, exponential_decay, inverse_time_decay,  # noqa: F401
                                            natural_exp_decay, piecewise_constant, polynomial_decay)
from tftk.train.cosine_schedules import (cosine_decay_restarts, linear_cosine_decay,  # noqa: F401
                                         noisy_linear_cosine_decay)
from tftk.train.feed_wait_final_hooks import FeedFnHook, FinalOpsHook, GlobalStepWaiterHook  # noqa: F401
from tftk.train.moving_averages import ExponentialMovingAverage  # noqa: F401
from tftk.train.optimizer import Optimizer  # noqa: F401
from tftk.train.optimizers import (AdadeltaOptimizer, AdagradOptimizer, AdamOptimizer,  # noqa: F401
                                   FtrlOptimizer, GradientDescentOptimizer, MomentumOptimizer,
                                   ProximalAdagradOptimizer, ProximalGradientDescentOptimizer, RMSPropOptimizer)
from tftk.train.training_util import (assert_global_step, create_global_step, get_global_step,  # noqa: F401
                                      get_or_create_global_step, global_step)

# ---- Saver, checkpoints, Supervisor, hooks ---------------------------------------------------
from tftk.train.basic_session_run_hooks import (CheckpointSaverHook, CheckpointSaverListener,  # noqa: F401,E402
                                                LoggingTensorHook, NanLossDuringTrainingError,
                                                NanTensorHook, SecondOrStepTimer, StepCounterHook,
                                                StopAtStepHook, SummarySaverHook)
from tftk.train.checkpoint_utils import (NewCheckpointReader, checkpoint_exists,  # noqa: F401,E402
                                         init_from_checkpoint, list_variables, load_checkpoint,
                                         load_variable)
from tftk.train.checkpoint_management import (checkpoints_iterator, generate_checkpoint_state_proto,  # noqa: F401,E402
                                              get_checkpoint_mtimes, remove_checkpoint)
from tftk.train.checkpoint_state import (get_checkpoint_state, latest_checkpoint,  # noqa: F401,E402
                                         update_checkpoint_state)
from tftk.train.coordinator import Coordinator, LooperThread  # noqa: F401,E402
from tftk.train.monitored_session import (ChiefSessionCreator, MonitoredSession,  # noqa: F401,E402
                                          MonitoredTrainingSession, Scaffold, SessionCreator,
                                          SingularMonitoredSession,
                                          WorkerSessionCreator)
from tftk.train.saver import Saver  # noqa: F401,E402
from tftk.train.session_manager import SessionManager  # noqa: F401,E402
from tftk.train.session_run_hook import (SessionRunArgs, SessionRunContext, SessionRunHook,  # noqa: F401,E402
                                         SessionRunValues)
from tftk.train.supervisor import Supervisor, basic_train_loop  # noqa: F401,E402
from tftk.train.queue_runner import QueueRunner, add_queue_runner, start_queue_runners  # noqa: F401,E402
from tftk.train import queue_runner  # noqa: F401,E402  (tf.train.queue_runner.QueueRunner, TF1's spelling)
from tftk.train.input import (batch, batch_join, input_producer, limit_epochs, maybe_batch,  # noqa: F401,E402
                              maybe_batch_join, maybe_shuffle_batch, maybe_shuffle_batch_join,
                              range_input_producer, shuffle_batch, shuffle_batch_join, slice_input_producer,
                              string_input_producer)
from tftk.train.sync_replicas_optimizer import SyncReplicasOptimizer  # noqa: F401,E402
from tftk.ops.file_ops import match_filenames_once  # noqa: F401,E402

piecewise_constant_decay = piecewise_constant  # TF 1.13+ spelling

_LAZY = {"summary_iterator": "tftk.summary.events", "write_graph": "tftk.summary.graph_def",
         "import_meta_graph": "tftk.formats.meta_graph", "export_meta_graph": "tftk.formats.meta_graph",
         "SaverDef": "tftk.proto.tensorflow", "CheckpointState": "tftk.proto.tensorflow",
         "SummaryWriter": "tftk.summary.writer",
         "ClusterSpec": "tftk.distributed.cluster", "Server": "tftk.distributed.server",
         "ServerDef": "tftk.distributed.server", "replica_device_setter": "tftk.distributed.device_setter",
         **{name: "tftk.proto.example" for name in ("BytesList", "FloatList", "Int64List", "Feature",
                                                     "Features", "FeatureList", "FeatureLists",
                                                     "Example", "SequenceExample")}}


def __getattr__(name: str):
    """tf.train names that load protobuf/tensorboardX or sockets, imported on first use."""
    import importlib
    if name not in _LAZY:
        raise AttributeError(f"module 'tf.train' has no attribute {name!r}")
    module = importlib.import_module(_LAZY[name])
    value = getattr(module, "FileWriter" if name == "SummaryWriter" else name)
    globals()[name] = value
    return value
