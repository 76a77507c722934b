"""The toolkit's bad-input error: one line the CLI prints alone before exiting with status 2.

A leaf module with no imports, so the CLI, the config loader and hpsearch can raise it without
loading numpy or the engine (TF's own error classes stay in `tftk.framework.errors`).
"""

__all__ = ["UserInputError"]


class UserInputError(ValueError):
    """Bad input from a user (config, file, flag): the CLI prints the message alone and exits 2."""
