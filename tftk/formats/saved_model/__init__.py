"""`tf.saved_model` (TF1): SavedModelBuilder, loader.load, simple_save, signature helpers.

A SavedModel folder holds `saved_model.pb` (a SavedModel proto: one MetaGraphDef per tag set,
with SignatureDefs) and `variables/variables.{index,data-00000-of-00001}` (a V2 checkpoint).
Folders written here load in TensorFlow, and TensorFlow's load here.
"""

from tftk.formats.saved_model import (builder, constants, loader, signature_constants,  # noqa: F401
                                      signature_def_utils, tag_constants, utils)
from tftk.formats.saved_model.builder import SavedModelBuilder  # noqa: F401
from tftk.formats.saved_model.loader import load, maybe_saved_model_directory  # noqa: F401
from tftk.formats.saved_model.signature_def_utils import (build_signature_def,  # noqa: F401
                                                          classification_signature_def,
                                                          is_valid_signature, predict_signature_def,
                                                          regression_signature_def)
from tftk.formats.saved_model.simple_save import simple_save  # noqa: F401
from tftk.formats.saved_model.utils import build_tensor_info, get_tensor_from_tensor_info  # noqa: F401

