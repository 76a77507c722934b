"""File and collection names of a SavedModel folder (TF's saved_model/constants.py)."""

SAVED_MODEL_SCHEMA_VERSION = 1
SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
SAVED_MODEL_FILENAME_CPB = "saved_model.cpb"  # a chunked saved_model.pb (TF 2.14+); tftk cannot read it
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
ASSETS_DIRECTORY = "assets"
ASSETS_KEY = "saved_model_assets"
LEGACY_INIT_OP_KEY = "legacy_init_op"
MAIN_OP_KEY = "saved_model_main_op"
INIT_OP_SIGNATURE_KEY = "__saved_model_init_op"  # TF 2 writes its init op as this signature, not a collection
TRAIN_OP_KEY = "saved_model_train_op"
DEBUG_DIRECTORY = "debug"
DEBUG_INFO_FILENAME_PB = "saved_model_debug_info.pb"
