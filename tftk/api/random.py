"""The `tf.random` namespace (TF 1.13+ paths of the random ops)."""

from tftk.ops.nn_loss_ops import log_uniform_candidate_sampler
from tftk.ops.random_ops import categorical, get_seed, multinomial, set_random_seed
from tftk.ops.random_ops import random_gamma as gamma
from tftk.ops.random_ops import random_normal as normal
from tftk.ops.random_ops import random_poisson as poisson
from tftk.ops.random_ops import random_shuffle as shuffle
from tftk.ops.random_ops import random_uniform as uniform
from tftk.ops.random_ops import truncated_normal
from tftk.ops.stateless_random_ops import stateless_categorical, stateless_multinomial
from tftk.ops.stateless_random_ops import stateless_random_gamma as stateless_gamma
from tftk.ops.stateless_random_ops import stateless_random_poisson as stateless_poisson
from tftk.ops.stateless_random_ops import stateless_random_normal as stateless_normal
from tftk.ops.stateless_random_ops import stateless_random_uniform as stateless_uniform
from tftk.ops.stateless_random_ops import stateless_truncated_normal

__all__ = ["categorical", "gamma", "get_seed", "log_uniform_candidate_sampler", "multinomial", "normal",
           "poisson", "set_random_seed", "shuffle", "stateless_categorical", "stateless_gamma", "stateless_multinomial",
           "stateless_normal", "stateless_poisson", "stateless_truncated_normal",
           "stateless_uniform", "truncated_normal", "uniform"]

from tftk.ops.candidate_sampling_ops import (all_candidate_sampler, fixed_unigram_candidate_sampler,  # noqa: E402
                                             uniform_candidate_sampler)
