"""`tf.GraphKeys`: the standard collection names a graph keeps its variables, losses, savers... under."""


class GraphKeys:
    """Standard collection names (TF1's `tf.GraphKeys`)."""

    GLOBAL_VARIABLES = "variables"
    VARIABLES = GLOBAL_VARIABLES
    LOCAL_VARIABLES = "local_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    SUMMARIES = "summaries"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    GLOBAL_STEP = "global_step"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    SAVERS = "savers"
    TRAIN_OP = "train_op"
    QUEUE_RUNNERS = "queue_runners"
    ACTIVATIONS = "activations"
    WEIGHTS = "weights"
    BIASES = "biases"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    METRIC_VARIABLES = "metric_variables"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"  # the file names a SavedModel copies into its assets/ folder
    SAVEABLE_OBJECTS = "saveable_objects"  # what tf.train.Saver saves besides the global variables
