"""TensorFlow Serving's protos (tensorflow_serving/apis and config) with TF Serving's field numbers.

Wire compatibility is by field number: a `tensorflow-serving-api` client's PredictRequest parses
here unchanged, and the gRPC method paths are TF Serving's (`/tensorflow.serving.PredictionService/
Predict`). The package is TF Serving's, `tensorflow.serving`, so Any-wrapped messages carry TF
Serving's type URLs (`type.googleapis.com/tensorflow.serving.SignatureDefMap`).

FileSystemStoragePathSourceConfig.ServableVersionPolicy is declared flat as ServableVersionPolicy
(text format does not name message types). MultiInference, the streamed-predict options and the
model-management RPCs are not declared: tftk serve does not offer them.
"""

from __future__ import annotations

from google.protobuf import any_pb2, wrappers_pb2

from tftk.proto import example, tensorflow
from tftk.proto.declare import declare_file

__all__ = ["ModelSpec", "PredictRequest", "PredictResponse", "Input", "ExampleList", "ExampleListWithContext",
           "Class", "Classifications", "ClassificationResult", "ClassificationRequest", "ClassificationResponse",
           "Regression", "RegressionResult", "RegressionRequest", "RegressionResponse", "SignatureDefMap",
           "GetModelMetadataRequest", "GetModelMetadataResponse", "StatusProto", "ModelVersionStatus",
           "GetModelStatusRequest", "GetModelStatusResponse", "ModelConfig", "ModelConfigList", "ModelServerConfig",
           "ServableVersionPolicy", "BatchingParameters", "STATE", "TYPE_URL_PREFIX"]

TYPE_URL_PREFIX = "type.googleapis.com/"
# ModelVersionStatus.State numbers
STATE = {"UNKNOWN": 0, "START": 10, "LOADING": 20, "AVAILABLE": 30, "UNLOADING": 40, "END": 50}

_TENSOR = "." + tensorflow.TensorProto.DESCRIPTOR.full_name
_INT64 = ".google.protobuf.Int64Value"
_EXAMPLE = "." + example.Example.DESCRIPTOR.full_name

_CLASSES = declare_file("tftk/proto/tensorflow_serving.proto", "tensorflow.serving", {
    # apis/model.proto
    "ModelSpec": [("name", 1, "string"), ("version", 2, _INT64, "oneof:version_choice"),
                  ("version_label", 4, "string", "oneof:version_choice"), ("signature_name", 3, "string")],
    # apis/predict.proto
    "PredictRequest": [("model_spec", 1, "ModelSpec"), ("inputs", 2, _TENSOR, "map"),
                       ("output_filter", 3, "string", "repeated")],
    "PredictResponse": [("model_spec", 2, "ModelSpec"), ("outputs", 1, _TENSOR, "map")],
    # apis/input.proto
    "ExampleList": [("examples", 1, _EXAMPLE, "repeated")],
    "ExampleListWithContext": [("examples", 1, _EXAMPLE, "repeated"), ("context", 2, _EXAMPLE)],
    "Input": [("example_list", 1, "ExampleList", "oneof:kind"),
              ("example_list_with_context", 2, "ExampleListWithContext", "oneof:kind")],
    # apis/classification.proto, apis/regression.proto
    "Class": [("label", 1, "string"), ("score", 2, "float")],
    "Classifications": [("classes", 1, "Class", "repeated")],
    "ClassificationResult": [("classifications", 1, "Classifications", "repeated")],
    "ClassificationRequest": [("model_spec", 1, "ModelSpec"), ("input", 2, "Input")],
    "ClassificationResponse": [("model_spec", 2, "ModelSpec"), ("result", 1, "ClassificationResult")],
    "Regression": [("value", 1, "float")],
    "RegressionResult": [("regressions", 1, "Regression", "repeated")],
    "RegressionRequest": [("model_spec", 1, "ModelSpec"), ("input", 2, "Input")],
    "RegressionResponse": [("model_spec", 2, "ModelSpec"), ("result", 1, "RegressionResult")],
    # apis/get_model_metadata.proto
    "SignatureDefMap": [("signature_def", 1, "." + tensorflow.SignatureDef.DESCRIPTOR.full_name, "map")],
    "GetModelMetadataRequest": [("model_spec", 1, "ModelSpec"), ("metadata_field", 2, "string", "repeated")],
    "GetModelMetadataResponse": [("model_spec", 1, "ModelSpec"), ("metadata", 2, ".google.protobuf.Any", "map")],
    # apis/status.proto, apis/get_model_status.proto (enums as their int32 numbers: STATE, error codes)
    "StatusProto": [("error_code", 1, "int32"), ("error_message", 2, "string")],
    "ModelVersionStatus": [("version", 1, "int64"), ("state", 2, "int32"), ("status", 3, "StatusProto")],
    "GetModelStatusRequest": [("model_spec", 1, "ModelSpec")],
    "GetModelStatusResponse": [("model_version_status", 1, "ModelVersionStatus", "repeated")],
    # config/model_server_config.proto, config/file_system_storage_path_source.proto
    "ServableVersionPolicy": [("latest", 100, "ServableVersionPolicy.Latest", "oneof:policy_choice"),
                              ("all", 101, "ServableVersionPolicy.All", "oneof:policy_choice"),
                              ("specific", 102, "ServableVersionPolicy.Specific", "oneof:policy_choice")],
    "ServableVersionPolicy.Latest": [("num_versions", 1, "uint32")],
    "ServableVersionPolicy.All": [],
    "ServableVersionPolicy.Specific": [("versions", 1, "int64", "repeated")],
    "ModelConfig": [("name", 1, "string"), ("base_path", 2, "string"), ("model_type", 3, "int32"),
                    ("model_platform", 4, "string"), ("model_version_policy", 7, "ServableVersionPolicy"),
                    ("version_labels", 8, "int64", "map")],
    "ModelConfigList": [("config", 1, "ModelConfig", "repeated")],
    "ModelServerConfig": [("model_config_list", 1, "ModelConfigList", "oneof:config")],
    # servables/tensorflow/session_bundle_config.proto
    "BatchingParameters": [("max_batch_size", 1, _INT64), ("batch_timeout_micros", 2, _INT64),
                           ("max_enqueued_batches", 3, _INT64), ("num_batch_threads", 4, _INT64),
                           ("allowed_batch_sizes", 6, "int64", "repeated"),
                           ("pad_variable_length_inputs", 7, "bool")],
}, dependencies=(tensorflow.TensorProto.DESCRIPTOR.file.name, tensorflow.SignatureDef.DESCRIPTOR.file.name,
                 example.Example.DESCRIPTOR.file.name, any_pb2.DESCRIPTOR.name, wrappers_pb2.DESCRIPTOR.name))

ModelSpec = _CLASSES["ModelSpec"]
PredictRequest = _CLASSES["PredictRequest"]
PredictResponse = _CLASSES["PredictResponse"]
Input = _CLASSES["Input"]
ExampleList = _CLASSES["ExampleList"]
ExampleListWithContext = _CLASSES["ExampleListWithContext"]
Class = _CLASSES["Class"]
Classifications = _CLASSES["Classifications"]
ClassificationResult = _CLASSES["ClassificationResult"]
ClassificationRequest = _CLASSES["ClassificationRequest"]
ClassificationResponse = _CLASSES["ClassificationResponse"]
Regression = _CLASSES["Regression"]
RegressionResult = _CLASSES["RegressionResult"]
RegressionRequest = _CLASSES["RegressionRequest"]
RegressionResponse = _CLASSES["RegressionResponse"]
SignatureDefMap = _CLASSES["SignatureDefMap"]
GetModelMetadataRequest = _CLASSES["GetModelMetadataRequest"]
GetModelMetadataResponse = _CLASSES["GetModelMetadataResponse"]
StatusProto = _CLASSES["StatusProto"]
ModelVersionStatus = _CLASSES["ModelVersionStatus"]
GetModelStatusRequest = _CLASSES["GetModelStatusRequest"]
GetModelStatusResponse = _CLASSES["GetModelStatusResponse"]
ModelConfig = _CLASSES["ModelConfig"]
ModelConfigList = _CLASSES["ModelConfigList"]
ModelServerConfig = _CLASSES["ModelServerConfig"]
ServableVersionPolicy = _CLASSES["ServableVersionPolicy"]
BatchingParameters = _CLASSES["BatchingParameters"]
