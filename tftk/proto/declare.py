"""Build protobuf message classes from a table of fields, with the numbers of the original .proto.

A table maps a message name (nested messages as `Outer.Inner`) to its fields, each
`(name, number, type, *flags)`:

- `type` is a scalar (`"string"`, `"bytes"`, `"int64"`, `"int32"`, `"uint32"`, `"uint64"`,
  `"fixed32"`, `"float"`, `"double"`, `"bool"`), a message of the same table by name
  (`"SaverDef"`, `"MetaGraphDef.MetaInfoDef"`), or a full name of an already registered message
  (`".tensorboardX.GraphDef"`); prefix `enum:` for an enum (`"enum:.tensorboardX.DataType"`).
- flags: `"repeated"`; `"map"` (a `map<string, type>` field); `"oneof:<name>"`.

Enums are declared in a second table, `{enum name: [value names]}`, numbered from 0.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["declare_file"]

_F = descriptor_pb2.FieldDescriptorProto
_SCALARS = {"string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES, "int64": _F.TYPE_INT64,
            "int32": _F.TYPE_INT32, "uint32": _F.TYPE_UINT32, "uint64": _F.TYPE_UINT64,
            "fixed32": _F.TYPE_FIXED32, "float": _F.TYPE_FLOAT, "double": _F.TYPE_DOUBLE,
            "bool": _F.TYPE_BOOL}


def declare_file(file_name: str, package: str, messages: dict[str, list[tuple]],
                 enums: dict[str, list[str]] | None = None,
                 dependencies: tuple[str, ...] = ()) -> dict[str, type]:
    """Register `file_name` in the default pool; return its message classes by table name."""
    file_proto = descriptor_pb2.FileDescriptorProto(name=file_name, package=package, syntax="proto3",
                                                    dependency=list(dependencies))
    protos: dict[str, descriptor_pb2.DescriptorProto] = {}
    for name in messages:  # outer messages before inner ones: sort by nesting depth
        protos[name] = _container(file_proto, protos, name).add(name=name.rsplit(".", 1)[-1])
    for name, values in (enums or {}).items():
        parent = _parent(protos, name)
        enum = (parent.enum_type if parent is not None else file_proto.enum_type).add(
            name=name.rsplit(".", 1)[-1])
        for number, value in enumerate(values):
            enum.value.add(name=value, number=number)
    for name, fields in messages.items():
        for field in fields:
            _add_field(protos[name], name, package, field)
    pool = descriptor_pool.Default()
    pool.Add(file_proto)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.{name}"))
            for name in messages}


def _parent(protos: dict, name: str):
    outer = name.rpartition(".")[0]
    if outer and outer not in protos:
        raise ValueError(f"nested '{name}' is declared before its outer message '{outer}'")
    return protos.get(outer) if outer else None


def _container(file_proto, protos: dict, name: str):
    parent = _parent(protos, name)
    return file_proto.message_type if parent is None else parent.nested_type


def _add_field(message: descriptor_pb2.DescriptorProto, message_name: str, package: str,
               field: tuple) -> None:
    name, number, kind, *flags = field
    proto = message.field.add(name=name, number=number, label=_F.LABEL_OPTIONAL)
    if "map" in flags:
        entry = message.nested_type.add(name="".join(p.title() for p in name.split("_")) + "Entry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL)
        _set_type(entry.field.add(name="value", number=2, label=_F.LABEL_OPTIONAL), package, kind)
        proto.label, proto.type = _F.LABEL_REPEATED, _F.TYPE_MESSAGE
        proto.type_name = f".{package}.{message_name}.{entry.name}"
        return
    _set_type(proto, package, kind)
    if "repeated" in flags:
        proto.label = _F.LABEL_REPEATED
    for flag in flags:
        if flag.startswith("oneof:"):
            oneof = flag[len("oneof:"):]
            names = [o.name for o in message.oneof_decl]
            if oneof not in names:
                message.oneof_decl.add(name=oneof)
                names.append(oneof)
            proto.oneof_index = names.index(oneof)


def _set_type(proto, package: str, kind: str) -> None:
    if kind in _SCALARS:
        proto.type = _SCALARS[kind]
        return
    is_enum = kind.startswith("enum:")
    ref = kind[len("enum:"):] if is_enum else kind
    proto.type = _F.TYPE_ENUM if is_enum else _F.TYPE_MESSAGE
    proto.type_name = ref if ref.startswith(".") else f".{package}.{ref}"
