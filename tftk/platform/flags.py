"""`tf.app.flags` / `tf.flags`: define command-line flags at module level, read them as FLAGS.x.

Accepted forms: `--name=value`, `--name value`, `-name=value`, and for booleans `--name`,
`--noname`, `--name=true|false|1|0`. Reading any flag before `tf.app.run()` parses sys.argv
(leniently: unknown arguments are left for the program), as TF1's wrapper did; `tf.app.run()`
parses strictly and passes what is left to `main`. `--help` prints every flag with its help text.
The absl names TF1 re-exports (parsers, Flag classes, validators, required and mutually
exclusive flags, multi flags, aliases) work as absl's do; their classes are in flag_types.py.
"""

from __future__ import annotations

import sys
import textwrap
from typing import Any, Callable, Iterable, Sequence

from tftk.platform.flag_types import (ArgumentParser, ArgumentSerializer, BaseListParser, BooleanFlag,  # noqa: F401
                                      BooleanParser, CantOpenFlagFileError, CsvListSerializer,
                                      DuplicateFlagError, EnumClassFlag, EnumClassListSerializer, EnumClassParser,
                                      EnumClassSerializer, EnumFlag, EnumParser, Error, Flag,
                                      FlagNameConflictsWithMethodError, FloatParser, IllegalFlagValueError,
                                      IntegerParser, ListParser, ListSerializer, MultiEnumClassFlag, MultiFlag,
                                      UnparsedFlagAccessError, UnrecognizedFlagError, ValidationError,
                                      WhitespaceSeparatedListParser)

__all__ = ["Error", "FlagValues", "FLAGS", "DEFINE_string", "DEFINE_integer", "DEFINE_float",
           "DEFINE_boolean", "DEFINE_bool", "DEFINE_list", "DEFINE_enum"]


class FlagValues:
    """The registry of defined flags and their parsed values (`FLAGS`)."""

    def __init__(self) -> None:
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "_key_flags", {})
        object.__setattr__(self, "_validators", [])
        object.__setattr__(self, "_parsed", False)

    def flag_values_dict(self) -> dict[str, Any]:
        """Every flag's current value, by name (TF1 programs read it as `FLAGS.__flags`)."""
        self._ensure_parsed()
        return {name: flag.value for name, flag in self._flags.items()}

    def register(self, flag: Flag, module: str | None = None) -> None:
        """Add a Flag object (DEFINE_flag); a name defined twice raises DuplicateFlagError."""
        name = flag.name
        if not name or name.startswith("-") or "=" in name:
            raise Error(f"invalid flag name {name!r}")
        if name in self._flags and self._flags[name] is not flag:
            raise DuplicateFlagError(f"flag --{name} is defined twice (first in {self._modules.get(name, '?')}, "
                                     f"then in {module or '?'})")
        if name in dir(type(self)):
            raise FlagNameConflictsWithMethodError(f"Cannot define a flag named {name!r}: it is a FlagValues method")
        self._flags[name] = flag
        self._modules[name] = module or "?"

    def define(self, name: str, default: Any, help: str, kind: str, parse: Callable[[str], Any]) -> None:
        """Define a flag from a parse function (kept for callers of the first tftk flags API)."""
        parser = _FunctionParser(parse, kind)
        self.register(Flag(parser, None, name, default, help, boolean=kind == "bool"), _caller_module())

    def __getitem__(self, name: str) -> Flag:
        return self._flags[name]

    def __getattr__(self, name: str) -> Any:
        flags = object.__getattribute__(self, "_flags")
        if name not in flags:
            raise AttributeError(f"no flag --{name} is defined (define it with tf.app.flags.DEFINE_...)")
        self._ensure_parsed()
        return flags[name].value

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._flags:
            raise AttributeError(f"no flag --{name} is defined (define it with tf.app.flags.DEFINE_...)")
        flag = self._flags[name]
        old = flag.value
        flag.value = value
        flag.using_default_value = False
        try:
            self._validate([name])
        except IllegalFlagValueError:
            flag.value = old
            raise

    def __contains__(self, name: str) -> bool:
        return name in self._flags

    def __iter__(self):
        return iter(self._flags)

    def __len__(self) -> int:
        return len(self._flags)

    def is_parsed(self) -> bool:
        return self._parsed

    def mark_as_parsed(self) -> None:
        object.__setattr__(self, "_parsed", True)

    def get_flag_value(self, name: str, default: Any) -> Any:
        return self._flags[name].value if name in self._flags else default

    def _ensure_parsed(self) -> None:
        if not self._parsed:
            self.parse(sys.argv, known_only=True)

    def parse(self, argv: Sequence[str], known_only: bool = False) -> list[str]:
        """Set flags from `argv` (argv[0] is the program); return [argv[0]] + the arguments left over.

        Unknown `--flags` raise UnrecognizedFlagError unless `known_only`, which leaves them in the result.
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
            name, has_value, text = arg.lstrip("-").partition("=")
            if name in ("help", "helpfull", "h", "?") and not has_value:
                print(self.help_text(argv[0] if argv else "program"))
                raise SystemExit(0)
            flag = self._flags.get(name)
            if flag is None and name.startswith("no") and not has_value:
                negated = self._flags.get(name[2:])
                if negated is not None and negated.boolean:
                    negated.parse("false")
                    continue
            if flag is None:
                if known_only:
                    rest.append(arg)
                    continue
                raise UnrecognizedFlagError(name, text)
            if not has_value:
                if flag.boolean:
                    flag.parse("true")
                    continue
                text = next(args, None)
                if text is None:
                    raise Error(f"flag --{name} needs a value: --{name}=<{flag.flag_type()}>")
            flag.parse(text)
        object.__setattr__(self, "_parsed", True)
        self._validate(list(self._flags))
        return rest

    def __call__(self, argv: Sequence[str], known_only: bool = False) -> list[str]:
        """absl's spelling: `FLAGS(argv)` parses and returns the leftover arguments."""
        return self.parse(argv, known_only)

    def _validate(self, names: Iterable[str]) -> None:
        names = set(names)
        for flag_names, check, message in self._validators:
            if names.isdisjoint(flag_names):
                continue
            values = {n: self._flags[n].value for n in flag_names}
            try:
                ok = check(values if len(flag_names) > 1 or getattr(check, "_multi", False) else
                           values[flag_names[0]])
            except ValidationError as exc:
                ok, message = False, str(exc)
            if not ok:
                raise IllegalFlagValueError(f"{', '.join('--' + n for n in flag_names)}: {message}")

    def add_validator(self, flag_names: Sequence[str], check: Callable, message: str) -> None:
        for name in flag_names:
            if name not in self._flags:
                raise KeyError(f"Flag --{name} must be defined before a validator is registered for it")
        self._validators.append((list(flag_names), check, message))

    def help_text(self, program: str = "program") -> str:
        """Usage text: each flag with its help and default, grouped by the module defining it."""
        lines = [f"usage: {program} [--flag=value ...]", ""]
        by_module: dict[str, list[Flag]] = {}
        for name, flag in self._flags.items():
            by_module.setdefault(self._modules.get(name, "?"), []).append(flag)
        for module, flags in by_module.items():
            lines.append(f"{module}:")
            for flag in flags:
                default = ",".join(map(str, flag.default)) if isinstance(flag.default, list) else flag.default
                lines.append(f"  --{flag.name}: {flag.help}")
                lines.append(f"    (default: {default!r})")
        return "\n".join(lines)

    def _reset_for_tests(self) -> None:
        self.__init__()


class _FunctionParser(ArgumentParser):
    """A parser from a plain function (the first tftk flags API)."""

    def __init__(self, parse: Callable[[str], Any], kind: str) -> None:
        self._parse_fn, self._kind = parse, kind

    def parse(self, argument: Any) -> Any:
        return self._parse_fn(argument) if isinstance(argument, str) else argument

    def flag_type(self) -> str:
        return self._kind


# `FLAGS.__flags` (no name mangling outside a class body): the dict seed 002's main.py copies.
setattr(FlagValues, "__flags", property(FlagValues.flag_values_dict))

FLAGS = FlagValues()


def _caller_module(depth: int = 2) -> str:
    frame = sys._getframe(depth)
    while frame is not None and frame.f_globals.get("__name__") == __name__:
        frame = frame.f_back
    return frame.f_globals.get("__name__", "?") if frame is not None else "?"


class FlagHolder:
    """What DEFINE_* returns: the flag's value, read through its FlagValues."""

    def __init__(self, flag_values: FlagValues, flag: Flag) -> None:
        self._flag_values, self._name = flag_values, flag.name

    name = property(lambda self: self._name)
    value = property(lambda self: getattr(self._flag_values, self._name))
    default = property(lambda self: self._flag_values[self._name].default)
    present = property(lambda self: bool(self._flag_values[self._name].present))


# ---- DEFINE_* ---------------------------------------------------------------------------------------

def DEFINE_flag(flag: Flag, flag_values: FlagValues = FLAGS, module_name: str | None = None,
                required: bool = False) -> FlagHolder:
    """Register a Flag object."""
    flag_values.register(flag, module_name or _caller_module())
    if required:
        mark_flag_as_required(flag.name, flag_values)
    return FlagHolder(flag_values, flag)


def DEFINE(parser: ArgumentParser, name: str, default: Any, help: str, flag_values: FlagValues = FLAGS,
           serializer: ArgumentSerializer | None = None, module_name: str | None = None, required: bool = False,
           **args: Any) -> FlagHolder:
    """Define a flag parsed by `parser`."""
    return DEFINE_flag(Flag(parser, serializer, name, default, help, **args), flag_values, module_name, required)


def DEFINE_string(name: str, default: str | None, help: str, flag_values: FlagValues = FLAGS, **args: Any) -> FlagHolder:
    """Define a string flag."""
    return DEFINE(ArgumentParser(), name, default, help, flag_values, ArgumentSerializer(), **args)


def DEFINE_integer(name: str, default: int | None, help: str, lower_bound: int | None = None,
                   upper_bound: int | None = None, flag_values: FlagValues = FLAGS, **args: Any) -> FlagHolder:
    """Define an integer flag (optionally bounded)."""
    return DEFINE(IntegerParser(lower_bound, upper_bound), name, default, help, flag_values, **args)


def DEFINE_float(name: str, default: float | None, help: str, lower_bound: float | None = None,
                 upper_bound: float | None = None, flag_values: FlagValues = FLAGS, **args: Any) -> FlagHolder:
    """Define a float flag (optionally bounded)."""
    return DEFINE(FloatParser(lower_bound, upper_bound), name, default, help, flag_values, **args)


def DEFINE_boolean(name: str, default: Any, help: str, flag_values: FlagValues = FLAGS,
                   module_name: str | None = None, required: bool = False, **args: Any) -> FlagHolder:
    """Define a boolean flag: `--name`, `--noname` or `--name=true|false`."""
    return DEFINE_flag(BooleanFlag(name, default, help, **args), flag_values, module_name, required)


DEFINE_bool = DEFINE_boolean


def DEFINE_list(name: str, default: Any, help: str, flag_values: FlagValues = FLAGS, **args: Any) -> FlagHolder:
    """Define a comma-separated list flag (`--names=a,b,c` -> ['a', 'b', 'c'])."""
    return DEFINE(ListParser(), name, default, help, flag_values, CsvListSerializer(","), **args)


def DEFINE_spaceseplist(name: str, default: Any, help: str, comma_compat: bool = False,
                        flag_values: FlagValues = FLAGS, **args: Any) -> FlagHolder:
    """Define a whitespace-separated list flag."""
    return DEFINE(WhitespaceSeparatedListParser(comma_compat), name, default, help, flag_values,
                  ListSerializer(" "), **args)


def DEFINE_enum(name: str, default: str | None, enum_values: Sequence[str], help: str,
                flag_values: FlagValues = FLAGS, module_name: str | None = None, required: bool = False,
                **args: Any) -> FlagHolder:
    """Define a string flag restricted to `enum_values`."""
    return DEFINE_flag(EnumFlag(name, default, help, enum_values, **args), flag_values, module_name, required)


def DEFINE_enum_class(name: str, default: Any, enum_class: type, help: str, flag_values: FlagValues = FLAGS,
                      module_name: str | None = None, case_sensitive: bool = False, required: bool = False,
                      **args: Any) -> FlagHolder:
    """Define a flag whose value is a member of `enum_class`."""
    return DEFINE_flag(EnumClassFlag(name, default, help, enum_class, case_sensitive=case_sensitive, **args),
                       flag_values, module_name, required)


def DEFINE_multi(parser: ArgumentParser, serializer: ArgumentSerializer, name: str, default: Any, help: str,
                 flag_values: FlagValues = FLAGS, module_name: str | None = None, required: bool = False,
                 **args: Any) -> FlagHolder:
    """Define a repeatable flag: every occurrence adds a value."""
    return DEFINE_flag(MultiFlag(parser, serializer, name, default, help, **args), flag_values, module_name,
                       required)


def DEFINE_multi_string(name: str, default: Any, help: str, flag_values: FlagValues = FLAGS, **args: Any) -> FlagHolder:
    """A repeatable string flag."""
    return DEFINE_multi(ArgumentParser(), ArgumentSerializer(), name, default, help, flag_values, **args)


def DEFINE_multi_integer(name: str, default: Any, help: str, lower_bound: int | None = None,
                         upper_bound: int | None = None, flag_values: FlagValues = FLAGS, **args: Any) -> FlagHolder:
    """A repeatable integer flag."""
    return DEFINE_multi(IntegerParser(lower_bound, upper_bound), ArgumentSerializer(), name, default, help,
                        flag_values, **args)


def DEFINE_multi_float(name: str, default: Any, help: str, lower_bound: float | None = None,
                       upper_bound: float | None = None, flag_values: FlagValues = FLAGS, **args: Any) -> FlagHolder:
    """A repeatable float flag."""
    return DEFINE_multi(FloatParser(lower_bound, upper_bound), ArgumentSerializer(), name, default, help,
                        flag_values, **args)


def DEFINE_multi_enum(name: str, default: Any, enum_values: Sequence[str], help: str,
                      flag_values: FlagValues = FLAGS, case_sensitive: bool = True, **args: Any) -> FlagHolder:
    """A repeatable flag restricted to `enum_values`."""
    return DEFINE_multi(EnumParser(enum_values, case_sensitive), ArgumentSerializer(), name, default,
                        f"<{'|'.join(enum_values)}>: {help}", flag_values, **args)


def DEFINE_multi_enum_class(name: str, default: Any, enum_class: type, help: str, flag_values: FlagValues = FLAGS,
                            module_name: str | None = None, case_sensitive: bool = False, required: bool = False,
                            **args: Any) -> FlagHolder:
    """A repeatable flag of `enum_class` members."""
    return DEFINE_flag(MultiEnumClassFlag(name, default, help, enum_class, case_sensitive=case_sensitive, **args),
                       flag_values, module_name, required)


def DEFINE_alias(name: str, original_name: str, flag_values: FlagValues = FLAGS,
                 module_name: str | None = None) -> FlagHolder:
    """Define `name` as another spelling of the flag `original_name` (setting one sets both)."""
    if original_name not in flag_values:
        raise UnrecognizedFlagError(original_name)
    original = flag_values[original_name]
    flag_values.register(_AliasFlag(name, original), module_name or _caller_module())
    return FlagHolder(flag_values, flag_values[name])


class _AliasFlag(Flag):
    """Reads and writes go to the original flag."""

    def __init__(self, name: str, original: Flag) -> None:
        object.__setattr__(self, "_original", original)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "help", f"Alias for --{original.name}.")

    def __getattr__(self, attr: str) -> Any:
        return getattr(object.__getattribute__(self, "_original"), attr)

    def __setattr__(self, attr: str, value: Any) -> None:
        setattr(object.__getattribute__(self, "_original"), attr, value)

    def parse(self, argument: Any) -> None:
        object.__getattribute__(self, "_original").parse(argument)


# ---- validators and constraints ----------------------------------------------------------------------

def register_validator(flag_name: str, checker: Callable[[Any], bool], message: str = "Flag validation failed",
                       flag_values: FlagValues = FLAGS) -> None:
    """After parsing (and on assignment), `checker(value)` must be true or raise ValidationError."""
    flag_values.add_validator([flag_name], checker, message)


def validator(flag_name: str, message: str = "Flag validation failed", flag_values: FlagValues = FLAGS) -> Callable:
    """Decorator form of register_validator."""
    def decorate(checker: Callable) -> Callable:
        register_validator(flag_name, checker, message, flag_values)
        return checker
    return decorate


def register_multi_flags_validator(flag_names: Sequence[str], multi_flags_checker: Callable[[dict], bool],
                                   message: str = "Flags validation failed", flag_values: FlagValues = FLAGS) -> None:
    """`checker({name: value})` over several flags must be true."""
    multi_flags_checker._multi = True  # type: ignore[attr-defined]
    flag_values.add_validator(list(flag_names), multi_flags_checker, message)


def multi_flags_validator(flag_names: Sequence[str], message: str = "Flag validation failed",
                          flag_values: FlagValues = FLAGS) -> Callable:
    """Decorator form of register_multi_flags_validator."""
    def decorate(checker: Callable) -> Callable:
        register_multi_flags_validator(flag_names, checker, message, flag_values)
        return checker
    return decorate


def mark_flag_as_required(flag_name: str, flag_values: FlagValues = FLAGS) -> None:
    """Parsing fails unless the flag ends up with a value other than None."""
    register_validator(flag_name, lambda value: value is not None,
                       f"Flag --{flag_name} must have a value other than None.", flag_values)


def mark_flags_as_required(flag_names: Sequence[str], flag_values: FlagValues = FLAGS) -> None:
    for name in flag_names:
        mark_flag_as_required(name, flag_values)


def mark_flags_as_mutual_exclusive(flag_names: Sequence[str], required: bool = False,
                                   flag_values: FlagValues = FLAGS) -> None:
    """At most one (exactly one when `required`) of the flags may have a value other than None."""
    def check(values: dict) -> bool:
        count = sum(v is not None for v in values.values())
        return count == 1 if required else count <= 1
    kind = "exactly" if required else "at most"
    register_multi_flags_validator(flag_names, check, f"{kind} one of ({', '.join(flag_names)}) must have a "
                                                      f"value other than None.", flag_values)


def mark_bool_flags_as_mutual_exclusive(flag_names: Sequence[str], required: bool = False,
                                        flag_values: FlagValues = FLAGS) -> None:
    """At most one (exactly one when `required`) of the boolean flags may be true."""
    for name in flag_names:
        if not flag_values[name].boolean:
            raise ValueError(f"Flag --{name} is not Boolean, which is required for flags used in "
                             f"mark_bool_flags_as_mutual_exclusive.")

    def check(values: dict) -> bool:
        count = sum(bool(v) for v in values.values())
        return count == 1 if required else count <= 1
    register_multi_flags_validator(flag_names, check, f"{'exactly' if required else 'at most'} one of "
                                                      f"({', '.join(flag_names)}) must be True.", flag_values)


def set_default(flag_holder: FlagHolder, value: Any) -> None:
    """Change a flag's default (and its value, if the command line did not set it)."""
    flag_holder._flag_values[flag_holder.name]._set_default(value)


def override_value(flag_holder: FlagHolder, value: Any) -> None:
    """Set a flag's value as if assigned, validators included."""
    setattr(flag_holder._flag_values, flag_holder.name, value)


# ---- key flags and help text ----------------------------------------------------------------------------

def declare_key_flag(flag_name: Any, flag_values: FlagValues = FLAGS) -> None:
    """Declare a flag (of any module) a key flag of the calling module: --help lists it with that module."""
    name = flag_name.name if isinstance(flag_name, FlagHolder) else flag_name
    if name not in flag_values:
        raise ValueError(f"Flag --{name} is undefined. To set a flag as a key flag first define it in Python.")
    flag_values._key_flags.setdefault(_caller_module(), []).append(name)


def adopt_module_key_flags(module: Any, flag_values: FlagValues = FLAGS) -> None:
    """Make every flag defined by `module` a key flag of the calling module."""
    if not hasattr(module, "__name__"):
        raise Error(f"Expected a module object, not {module!r}.")
    names = [n for n, m in flag_values._modules.items() if m == module.__name__]
    flag_values._key_flags.setdefault(_caller_module(), []).extend(names)


def disclaim_key_flags() -> None:
    """Declare the calling module defines no key flags of its own (for modules wrapping flag definitions)."""
    FLAGS._key_flags[_caller_module()] = []


def get_help_width() -> int:
    """The width help text wraps at: the terminal's, or 80."""
    import shutil
    columns = shutil.get_terminal_size((80, 24)).columns
    return columns if columns >= 40 else 80


def text_wrap(text: str, length: int | None = None, indent: str = "", firstline_indent: str | None = None) -> str:
    """`text` wrapped to `length` columns with the given indents, keeping its line breaks."""
    length = get_help_width() if length is None else length
    first = indent if firstline_indent is None else firstline_indent
    if len(indent) >= length or len(first) >= length:
        raise ValueError("Length of indent exceeds length")
    lines = []
    for paragraph in text.expandtabs(4).split("\n"):
        wrapped = textwrap.wrap(paragraph, length, initial_indent=first if not lines else indent,
                                subsequent_indent=indent) or [(first if not lines else indent).rstrip()]
        lines.extend(wrapped)
    return "\n".join(lines)


def doc_to_help(doc: str) -> str:
    """A docstring as help text: dedented, stripped, paragraphs joined into single lines."""
    doc = textwrap.dedent(doc.strip("\n")).strip()
    paragraphs = [" ".join(p.split()) for p in doc.split("\n\n")]
    return "\n\n".join(paragraphs)


def flag_dict_to_args(flag_map: dict, multi_flags: set | None = None):
    """Command-line arguments for {name: value}: True or None -> --name, False -> --noname, lists
    comma-joined (or repeated for names in `multi_flags`)."""
    for key, value in flag_map.items():
        if value is None:
            yield f"--{key}"
        elif isinstance(value, bool):
            yield f"--{key}" if value else f"--no{key}"
        elif isinstance(value, (bytes, str)):
            yield f"--{key}={value}"
        else:
            try:
                items = list(value)
            except TypeError:
                yield f"--{key}={value}"
                continue
            if multi_flags and key in multi_flags:
                for item in items:
                    yield f"--{key}={item}"
            else:
                yield f"--{key}={','.join(str(item) for item in items)}"

