"""`tftk serve`: a model server speaking TensorFlow Serving's REST and gRPC APIs.

Layers, each importing only those above it in this list:
  servable   one loaded model version: its signatures and how to run them
  sources    where versions come from: a run folder's checkpoints (sources), numbered SavedModel
             folders (saved_model_source)
  config     what to serve: flags or TF Serving's model config file
  manager    which versions are loaded: polls the sources, loads, unloads once requests finish
  batching   concurrent requests to one version run as one Session.run
  tensors    request values <-> numpy (TF Serving's JSON, TensorProto)
  api        the operations (predict, classify, regress, metadata, status), wire-independent
  rest, grpc_api, metrics, server: the front ends and the process around them

Nothing here is imported by `import tftk`; the HTTP and gRPC libraries are the optional extra
`pip install tftk[serve]`.
"""
