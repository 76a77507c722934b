"""The `tf.initializers` namespace: initializer classes and functions, and the variable initializers."""

from tftk.ops.init_ops import Constant as constant
from tftk.ops.init_ops import GlorotNormal as glorot_normal
from tftk.ops.init_ops import GlorotUniform as glorot_uniform
from tftk.ops.init_ops import Identity as identity
from tftk.ops.init_ops import Ones as ones
from tftk.ops.init_ops import Orthogonal as orthogonal
from tftk.ops.init_ops import RandomNormal as random_normal
from tftk.ops.init_ops import RandomUniform as random_uniform
from tftk.ops.init_ops import TruncatedNormal as truncated_normal
from tftk.ops.init_ops import VarianceScaling as variance_scaling
from tftk.ops.categorical_ops import tables_initializer
from tftk.ops.init_ops import Zeros as zeros
from tftk.ops.init_ops import he_normal, he_uniform, lecun_normal, lecun_uniform
from tftk.ops.init_ops import uniform_unit_scaling_initializer as uniform_unit_scaling
from tftk.ops.variables import global_variables_initializer as global_variables
from tftk.ops.variables import local_variables_initializer as local_variables
from tftk.ops.variables import variables_initializer as variables

__all__ = ["constant", "global_variables", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
           "identity", "lecun_normal", "lecun_uniform", "local_variables", "ones", "orthogonal",
           "random_normal", "random_uniform", "tables_initializer", "truncated_normal", "uniform_unit_scaling", "variables",
           "variance_scaling", "zeros"]
