"""Numba and numpy array kernels: pure functions on arrays, no graph knowledge.

Kernels compile (or load) on their first call (`tftk.kernels.jit`); a few modules import Numba
at top level, so the op layer imports them lazily (inside kernel factories). Importing this
package first makes Numba's OpenMP workers sleep when idle instead of spinning: on a 2-core
machine spinning workers starve BLAS (a 0.8 ms pooling kernel measured 13 ms between matrix
products).
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
