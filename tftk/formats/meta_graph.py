"""MetaGraphDef: a graph with what is needed to restart it (TF1's framework/meta_graph.py).

A MetaGraphDef holds the GraphDef, the SaverDef and the graph's collections, so
`tf.train.import_meta_graph` can rebuild a training program from a `.meta` file alone.
"""

from __future__ import annotations

from tftk.proto.tensorflow import GraphDef, MetaGraphDef

__all__ = ["create_meta_graph_def", "TENSORFLOW_VERSION"]

# The TF version a tftk graph imitates: written to meta_info_def.tensorflow_version so TF's
# loaders treat our files as TF 1.15 files.
TENSORFLOW_VERSION = "1.15.0"


def create_meta_graph_def(graph_def: GraphDef | None = None, saver_def=None,
                          meta_info_def=None) -> MetaGraphDef:
    """A MetaGraphDef of `graph_def` (and `saver_def`), with TF's version in its meta_info_def."""
    meta = MetaGraphDef()
    if meta_info_def is not None:
        meta.meta_info_def.CopyFrom(meta_info_def)
    meta.meta_info_def.tensorflow_version = meta.meta_info_def.tensorflow_version or TENSORFLOW_VERSION
    if graph_def is not None:
        meta.graph_def.CopyFrom(graph_def)
    if saver_def is not None:
        meta.saver_def.CopyFrom(saver_def)
    return meta
