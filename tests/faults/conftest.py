"""Fault-injection tests run in a scratch folder (see tests/scratch_cwd.py)."""

from tests.scratch_cwd import outside_the_checkout  # noqa: F401 (an autouse fixture)
