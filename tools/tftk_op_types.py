"""Print every op type tftk registers (all op modules imported), plus the TF op types tftk's
GraphDef export writes for its gradient helpers and the resource-variable ops it imports (function
bodies name their outputs by TF's arg names): the input of tools/tf_op_signatures.py.

    .venv/bin/python tools/tftk_op_types.py | /work/tfvenv/bin/python tools/tf_op_signatures.py \
        > tftk/formats/tf_op_signatures.json
"""

from tftk.formats.resource_variable_import import RESOURCE_BUILDERS
from tftk.formats.signature_import import import_op_modules
from tftk.framework import registry

# Written by tftk/formats/gradient_export.py and the saver export, whether or not tftk registers them.
EXPORTED = {"Const", "Placeholder", "NoOp", "Identity", "BroadcastGradientArgs", "Size", "Maximum", "FloorDiv",
            "Cast", "BroadcastTo", "ExpandDims", "Reshape", "Sum", "Shape", "MaxPoolGrad", "RestoreV2", "SaveV2",
            "Assign", "MergeV2Checkpoints", "AddV2", "Sub", "Mul", "RandomUniform", "RandomUniformInt", "Greater",
            "OnesLike", "Select", "Log", "ConcatOffset", "SplitV", "Split", "Log1p", "GreaterEqual", "LessEqual",
            "ZerosLike", "Neg", "Exp", "Slice", "StridedSlice", "StridedSliceGrad", "GatherV2",
            # formats/while_export and cond_export (control flow) and what formats/functions imports
            "While", "StatelessWhile", "If", "StatelessIf", "PartitionedCall", "StatefulPartitionedCall",
            "Less", "LogicalAnd", "IdentityN", "Switch", "Merge"}

import_op_modules(("tftk.ops", "tftk.train", "tftk.summary", "tftk.data", "tftk.api", "tftk.framework",
                   "tftk.formats"))
print(*sorted(set(registry.registered_types()) | EXPORTED | set(RESOURCE_BUILDERS)), sep="\n")
