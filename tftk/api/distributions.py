"""The `tf.distributions` namespace (TF 1.x's probability distributions)."""

from tftk.ops.discrete_distributions import Bernoulli, Categorical, Dirichlet, DirichletMultinomial, Multinomial
from tftk.ops.distributions import (FULLY_REPARAMETERIZED, NOT_REPARAMETERIZED, Beta,
                                    Distribution, Exponential, Gamma, Laplace,
                                    Normal, RegisterKL, ReparameterizationType, StudentT, Uniform,
                                    kl_divergence)

__all__ = ["FULLY_REPARAMETERIZED", "NOT_REPARAMETERIZED", "Bernoulli", "Beta", "Categorical", "Dirichlet",
           "DirichletMultinomial", "Distribution", "Exponential", "Gamma", "Laplace", "Multinomial", "Normal",
           "RegisterKL", "ReparameterizationType", "StudentT", "Uniform", "kl_divergence"]
