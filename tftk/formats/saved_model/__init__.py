"""`tf.saved_model` (TF1): SavedModelBuilder, loader.load, simple_save, signature helpers, main_op.

A SavedModel folder holds `saved_model.pb` (a SavedModel proto: one MetaGraphDef per tag set,
with SignatureDefs) and `variables/variables.{index,data-00000-of-00001}` (a V2 checkpoint).
Folders written here load in TensorFlow, and TensorFlow's load here. The file, tag and signature
constants are re-exported at the top, as TF1's namespace does.
"""

from tftk.formats.saved_model import (builder, constants, loader, main_op, signature_constants,  # noqa: F401
                                      signature_def_utils, tag_constants, utils)
from tftk.formats.saved_model.builder import SavedModelBuilder  # noqa: F401
from tftk.formats.saved_model.constants import (ASSETS_DIRECTORY, ASSETS_KEY, DEBUG_DIRECTORY,  # noqa: F401
                                                DEBUG_INFO_FILENAME_PB, LEGACY_INIT_OP_KEY, MAIN_OP_KEY,
                                                SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT,
                                                SAVED_MODEL_SCHEMA_VERSION, VARIABLES_DIRECTORY,
                                                VARIABLES_FILENAME)
from tftk.formats.saved_model.loader import load, maybe_saved_model_directory  # noqa: F401
from tftk.formats.saved_model.main_op import main_op_with_restore  # noqa: F401
from tftk.formats.saved_model.signature_constants import (CLASSIFY_INPUTS, CLASSIFY_METHOD_NAME,  # noqa: F401
                                                          CLASSIFY_OUTPUT_CLASSES, CLASSIFY_OUTPUT_SCORES,
                                                          DEFAULT_SERVING_SIGNATURE_DEF_KEY, PREDICT_INPUTS,
                                                          PREDICT_METHOD_NAME, PREDICT_OUTPUTS, REGRESS_INPUTS,
                                                          REGRESS_METHOD_NAME, REGRESS_OUTPUTS)
from tftk.formats.saved_model.signature_def_utils import (build_signature_def,  # noqa: F401
                                                          classification_signature_def,
                                                          is_valid_signature, predict_signature_def,
                                                          regression_signature_def)
from tftk.formats.saved_model.simple_save import simple_save  # noqa: F401
from tftk.formats.saved_model.tag_constants import GPU, SERVING, TPU, TRAINING  # noqa: F401
from tftk.formats.saved_model.utils import build_tensor_info, get_tensor_from_tensor_info  # noqa: F401

Builder = SavedModelBuilder
contains_saved_model = maybe_saved_model_directory
