"""Standard MetaGraphDef tags (TF's saved_model/tag_constants.py)."""

SERVING = "serve"
TRAINING = "train"
EVAL = "eval"
GPU = "gpu"
TPU = "tpu"
