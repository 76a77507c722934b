"""`tf.app.run(main=None, argv=None)`: parse the flags, then exit with `main(leftover argv)`.

Programs of both TF1 eras run: absl-era programs (TF >= 1.5) define every flag with
`tf.app.flags`, and an unknown flag is an error. Programs of the 0.x-1.4 era often parse their
own flags with argparse and then call `tf.app.run()` with the full argv; TF of that era passed
flags it did not know through to `main`. tftk does the same for flags some live argparse parser
of the program defines (with a warning), and still refuses flags nobody defines.
"""

from __future__ import annotations

import argparse
import gc
import sys
from typing import Callable, NoReturn, Sequence

from tftk.platform import flags
from tftk.platform import tf_logging
from tftk.platform.flags import FLAGS

__all__ = ["run", "flags"]


def _argparse_options() -> set[str]:
    """Option strings ('--data_dir', '-d') of every argparse parser alive in this process."""
    options: set[str] = set()
    for obj in gc.get_objects():
        if isinstance(obj, argparse.ArgumentParser):
            options.update(obj._option_string_actions)
    return options


def _unknown_flags(args: Sequence[str]) -> list[str]:
    """The `-x`/`--x[=v]` arguments left over after parsing the defined flags."""
    return [a for a in args if a.startswith("-") and a not in ("-", "--")]


def run(main: Callable[[list[str]], object] | None = None, argv: Sequence[str] | None = None) -> NoReturn:
    """Parse `argv` (default sys.argv) into FLAGS and `sys.exit(main([argv[0]] + unparsed args))`.

    `main` defaults to the `main` function of the `__main__` module, as in TF1. A bad flag prints
    one line to stderr and exits with status 2; so does a flag that neither tf.app.flags nor one
    of the program's argparse parsers defines.
    """
    argv = list(sys.argv if argv is None else argv)
    try:
        rest = FLAGS.parse(argv, known_only=True)
        unknown = _unknown_flags(rest[1:])
        if unknown:
            parsed_elsewhere = _argparse_options()
            stray = [a for a in unknown if a.partition("=")[0] not in parsed_elsewhere]
            if stray:
                name = stray[0].lstrip("-").partition("=")[0]
                raise flags.Error(f"Unknown command line flag '{name}'. Pass --help to see the defined flags.")
            tf_logging.warning("tf.app.run: passing %s to main unparsed: the program's own argparse "
                               "parser defines them (TF <= 1.4 behaviour)", " ".join(unknown))
    except flags.Error as exc:
        print(f"FATAL Flags parsing error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if main is None:
        main = getattr(sys.modules["__main__"], "main", None)
        if main is None:
            raise AttributeError("tf.app.run(): pass main= or define a main(argv) function in __main__")
    sys.exit(main(rest))
