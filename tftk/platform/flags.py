"""`tf.app.flags` / `tf.flags`: define command-line flags at module level, read them as FLAGS.x.

Accepted forms: `--name=value`, `--name value`, `-name=value`, and for booleans `--name`,
`--noname`, `--name=true|false|1|0`. Reading any flag before `tf.app.run()` parses sys.argv
(leniently: unknown arguments are left for the program), as TF1's wrapper did; `tf.app.run()`
parses strictly and passes what is left to `main`. `--help` prints every flag with its help text.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from tftk.user_input import UserInputError

__all__ = ["Error", "FlagValues", "FLAGS", "DEFINE_string", "DEFINE_integer", "DEFINE_float",
           "DEFINE_boolean", "DEFINE_bool", "DEFINE_list", "DEFINE_enum"]


class Error(UserInputError):
    """A bad flag definition or command line (one line for the user)."""


_TRUE = {"true", "t", "1", "yes", "y"}
_FALSE = {"false", "f", "0", "no", "n"}


def _parse_bool(text: str) -> bool:
    low = text.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError(f"{text!r} is not a boolean (use true/false)")


def _parse_list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


@dataclass
class _Flag:
    name: str
    default: Any
    help: str
    kind: str  # string | integer | float | bool | list | enum
    parse: Callable[[str], Any]
    module: str
    value: Any = None


class FlagValues:
    """The registry of defined flags and their parsed values (`FLAGS`)."""

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_parsed", False)

    def flag_values_dict(self) -> dict[str, Any]:
        """Every flag's current value, by name (TF1 programs read it as `FLAGS.__flags`)."""
        self._ensure_parsed()
        return {name: flag.value for name, flag in self._flags.items()}

    def define(self, name: str, default: Any, help: str, kind: str, parse: Callable[[str], Any]) -> None:
        if not name or name.startswith("-") or "=" in name:
            raise Error(f"invalid flag name {name!r}")
        if name in self._flags:
            raise Error(f"flag --{name} is defined twice (first in {self._flags[name].module})")
        module = sys._getframe(2).f_globals.get("__name__", "?")
        try:
            value = parse(default) if isinstance(default, str) and kind != "string" else default
        except ValueError as exc:
            raise Error(f"flag --{name}: default {default!r}: {exc}") from None
        self._flags[name] = _Flag(name, default, help, kind, parse, module, value)

    def __getattr__(self, name: str) -> Any:
        flags = object.__getattribute__(self, "_flags")
        if name not in flags:
            raise AttributeError(f"no flag --{name} is defined (define it with tf.app.flags.DEFINE_...)")
        self._ensure_parsed()
        return flags[name].value

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._flags:
            raise AttributeError(f"no flag --{name} is defined (define it with tf.app.flags.DEFINE_...)")
        self._flags[name].value = value

    def __contains__(self, name: str) -> bool:
        return name in self._flags

    def __iter__(self):
        return iter(self._flags)

    def _ensure_parsed(self) -> None:
        if not self._parsed:
            self.parse(sys.argv, known_only=True)

    def parse(self, argv: Sequence[str], known_only: bool = False) -> list[str]:
        """Set flags from `argv` (argv[0] is the program); return [argv[0]] + the arguments left over.

        Unknown `--flags` raise Error unless `known_only`, which leaves them in the result.
        """
        argv = list(argv)
        rest = argv[:1]
        args = iter(argv[1:])
        for arg in args:
            if arg == "--":
                rest.extend(args)
                break
            if not arg.startswith("-") or arg == "-":
                rest.append(arg)
                continue
            body = arg.lstrip("-")
            name, has_value, text = body.partition("=")
            if name in ("help", "helpfull", "h", "?") and not has_value:
                print(self.help_text(argv[0] if argv else "program"))
                raise SystemExit(0)
            flag = self._flags.get(name)
            if flag is None and name.startswith("no") and not has_value:
                negated = self._flags.get(name[2:])
                if negated is not None and negated.kind == "bool":
                    negated.value = False
                    continue
            if flag is None:
                if known_only:
                    rest.append(arg)
                    continue
                raise Error(f"Unknown command line flag '{name}'. Pass --help to see the defined flags.")
            if not has_value:
                if flag.kind == "bool":
                    flag.value = True
                    continue
                text = next(args, None)
                if text is None:
                    raise Error(f"flag --{name} needs a value: --{name}=<{flag.kind}>")
            try:
                flag.value = flag.parse(text)
            except ValueError as exc:
                raise Error(f"flag --{name}={text}: {exc}") from None
        object.__setattr__(self, "_parsed", True)
        return rest

    def __call__(self, argv: Sequence[str], known_only: bool = False) -> list[str]:
        """absl's spelling: `FLAGS(argv)` parses and returns the leftover arguments."""
        return self.parse(argv, known_only)

    def help_text(self, program: str = "program") -> str:
        """Usage text: each flag with its help and default, grouped by the module defining it."""
        lines = [f"usage: {program} [--flag=value ...]", ""]
        by_module: dict[str, list[_Flag]] = {}
        for flag in self._flags.values():
            by_module.setdefault(flag.module, []).append(flag)
        for module, flags in by_module.items():
            lines.append(f"{module}:")
            for flag in flags:
                default = ",".join(flag.default) if flag.kind == "list" and flag.default else flag.default
                lines.append(f"  --{flag.name}: {flag.help}")
                lines.append(f"    (default: {default!r})")
        return "\n".join(lines)

    def _reset_for_tests(self) -> None:
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_parsed", False)


# `FLAGS.__flags` (no name mangling outside a class body): the dict seed 002's main.py copies.
setattr(FlagValues, "__flags", property(FlagValues.flag_values_dict))

FLAGS = FlagValues()


def _int(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise ValueError(f"{text!r} is not an integer") from None


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None


def DEFINE_string(flag_name: str, default_value: str | None, docstring: str,
                  flag_values: FlagValues = FLAGS) -> None:
    """Define a string flag."""
    flag_values.define(flag_name, default_value, docstring, "string", str)


def DEFINE_integer(flag_name: str, default_value: int | None, docstring: str,
                   flag_values: FlagValues = FLAGS) -> None:
    """Define an integer flag."""
    flag_values.define(flag_name, default_value, docstring, "integer", _int)


def DEFINE_float(flag_name: str, default_value: float | None, docstring: str,
                 flag_values: FlagValues = FLAGS) -> None:
    """Define a float flag."""
    flag_values.define(flag_name, default_value, docstring, "float", _float)


def DEFINE_boolean(flag_name: str, default_value: bool | str | None, docstring: str,
                   flag_values: FlagValues = FLAGS) -> None:
    """Define a boolean flag: `--name`, `--noname` or `--name=true|false`."""
    flag_values.define(flag_name, default_value, docstring, "bool", _parse_bool)


DEFINE_bool = DEFINE_boolean


def DEFINE_list(flag_name: str, default_value: Sequence[str] | str | None, docstring: str,
                flag_values: FlagValues = FLAGS) -> None:
    """Define a comma-separated list flag (`--names=a,b,c` -> ['a', 'b', 'c'])."""
    default = _parse_list(default_value) if isinstance(default_value, str) else default_value
    flag_values.define(flag_name, None if default is None else list(default), docstring, "list", _parse_list)


def DEFINE_enum(flag_name: str, default_value: str | None, enum_values: Sequence[str], docstring: str,
                flag_values: FlagValues = FLAGS) -> None:
    """Define a string flag restricted to `enum_values`."""
    allowed = list(enum_values)

    def parse(text: str) -> str:
        if text not in allowed:
            raise ValueError(f"must be one of {', '.join(allowed)}")
        return text

    flag_values.define(flag_name, default_value, f"<{'|'.join(allowed)}>: {docstring}", "enum", parse)
