"""`tf.estimator.ModeKeys`: the three modes an Estimator calls its model_fn in."""

__all__ = ["ModeKeys"]


class ModeKeys:
    """TRAIN builds a train_op and a loss, EVAL a loss and metrics, PREDICT the predictions (TF's 'infer')."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"
