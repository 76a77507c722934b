"""Clusters of tftk processes: `ClusterSpec`, `Server`, sessions on `grpc://` targets, `replica_device_setter`.

Imported lazily (by `tf.train.Server` and friends, or a session with a target), so `import tftk`
stays free of sockets and threads.
"""
