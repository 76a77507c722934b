"""The pieces of absl-style flags that `tf.flags` exposes: errors, parsers, serializers and Flag classes.

A Flag couples a parser (text -> value, with the checks that make a value illegal) and a
serializer (value -> text, for flag files and `flag_dict_to_args`). `tftk/platform/flags.py`
keeps the registry (FlagValues) and the DEFINE_* functions built from these.
"""

from __future__ import annotations

import csv
import enum
import io
from typing import Any, Iterable, Sequence

from tftk.user_input import UserInputError

__all__ = ["Error", "CantOpenFlagFileError", "DuplicateFlagError", "FlagNameConflictsWithMethodError",
           "IllegalFlagValueError", "UnparsedFlagAccessError", "UnrecognizedFlagError", "ValidationError",
           "ArgumentParser", "BooleanParser", "IntegerParser", "FloatParser", "EnumParser", "EnumClassParser",
           "BaseListParser", "ListParser", "WhitespaceSeparatedListParser", "ArgumentSerializer",
           "ListSerializer", "CsvListSerializer", "EnumClassSerializer", "EnumClassListSerializer", "Flag",
           "BooleanFlag", "EnumFlag", "EnumClassFlag", "MultiFlag", "MultiEnumClassFlag"]


class Error(UserInputError):
    """A bad flag definition or command line (one line for the user)."""


class CantOpenFlagFileError(Error):
    """A --flagfile cannot be read."""


class DuplicateFlagError(Error):
    """A flag name is defined twice."""


class FlagNameConflictsWithMethodError(Error):
    """A flag name is also the name of a FlagValues method."""


class IllegalFlagValueError(Error):
    """A flag's value does not parse or breaks its bounds."""


class UnparsedFlagAccessError(Error):
    """A flag is read before the command line was parsed."""


class UnrecognizedFlagError(Error):
    """The command line names a flag nobody defined."""

    def __init__(self, flagname: str, flagvalue: str = "", suggestions: Sequence[str] | None = None) -> None:
        self.flagname, self.flagvalue = flagname, flagvalue
        super().__init__(f"Unknown command line flag '{flagname}'. Pass --help to see the defined flags.")


class ValidationError(Error):
    """A validator refused the flags' values."""


# ---- parsers ------------------------------------------------------------------------------------

class ArgumentParser:
    """Parses a flag's text into its value (strings: the text itself)."""

    syntactic_help = ""

    def parse(self, argument: Any) -> Any:
        if not isinstance(argument, str):
            raise TypeError(f"flag value must be a string, found \"{type(argument)}\"")
        return argument

    def flag_type(self) -> str:
        return "string"


_TRUE, _FALSE = ("true", "t", "1"), ("false", "f", "0")


class BooleanParser(ArgumentParser):
    """true/t/1 or false/f/0 (any case), or a bool or 0/1, as absl accepts them."""

    def parse(self, argument: Any) -> bool:
        if isinstance(argument, str):
            if argument.lower() in _TRUE:
                return True
            if argument.lower() in _FALSE:
                return False
            raise ValueError(f"{argument!r} is not a boolean (use true/false)")
        if isinstance(argument, bool) or argument in (0, 1):
            return bool(argument)
        raise TypeError(f"Non-boolean argument to boolean flag: {argument!r}")

    def flag_type(self) -> str:
        return "bool"


class _NumericParser(ArgumentParser):
    number_article, number_name = "a", "number"

    def __init__(self, lower_bound: Any = None, upper_bound: Any = None) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound
        if lower_bound is not None and upper_bound is not None:
            self.syntactic_help = f"{self.number_article} {self.number_name} in the range [{lower_bound}, {upper_bound}]"
        elif lower_bound is not None:
            self.syntactic_help = f"{self.number_article} {self.number_name} >= {lower_bound}"
        elif upper_bound is not None:
            self.syntactic_help = f"{self.number_article} {self.number_name} <= {upper_bound}"

    def parse(self, argument: Any) -> Any:
        value = self.convert(argument)
        if (self.lower_bound is not None and value < self.lower_bound) or \
                (self.upper_bound is not None and value > self.upper_bound):
            raise ValueError(f"{value} is not {self.syntactic_help}")
        return value


class IntegerParser(_NumericParser):
    """Integers (0x.., 0o.., 0b.. too), optionally bounded."""

    number_article, number_name = "an", "integer"

    def convert(self, argument: Any) -> int:
        if isinstance(argument, int) and not isinstance(argument, bool):
            return argument
        if not isinstance(argument, str):
            raise TypeError(f"Expect argument to be a string or int, found {type(argument)}")
        base = 10
        if len(argument) > 2 and argument[0] == "0":
            base = {"o": 8, "x": 16, "b": 2}.get(argument[1], 10)
        try:
            return int(argument, base)
        except ValueError:
            raise ValueError(f"{argument!r} is not an integer") from None

    def flag_type(self) -> str:
        return "int"


class FloatParser(_NumericParser):
    """Floats, optionally bounded."""

    number_article, number_name = "a", "number"

    def convert(self, argument: Any) -> float:
        if isinstance(argument, (int, float)) and not isinstance(argument, bool):
            return float(argument)
        if isinstance(argument, str):
            try:
                return float(argument)
            except ValueError:
                raise ValueError(f"{argument!r} is not a number") from None
        raise TypeError(f"Expect argument to be a string or int or float, found {type(argument)}")

    def flag_type(self) -> str:
        return "float"


class EnumParser(ArgumentParser):
    """One of `enum_values` (case-insensitively when asked; the value is then the listed spelling)."""

    def __init__(self, enum_values: Iterable[str], case_sensitive: bool = True) -> None:
        self.enum_values = list(enum_values)
        if not self.enum_values:
            raise ValueError(f"enum_values cannot be empty, found \"{enum_values}\"")
        self.case_sensitive = case_sensitive

    def parse(self, argument: Any) -> str:
        if self.case_sensitive:
            if argument not in self.enum_values:
                raise ValueError(f"value should be one of <{'|'.join(self.enum_values)}>")
            return argument
        matches = [v for v in self.enum_values if v.upper() == str(argument).upper()]
        if not matches:
            raise ValueError(f"value should be one of <{'|'.join(self.enum_values)}>")
        return matches[0]

    def flag_type(self) -> str:
        return "string enum"


class EnumClassParser(ArgumentParser):
    """A member of an enum.Enum, by name (or the member itself)."""

    def __init__(self, enum_class: type, case_sensitive: bool = True) -> None:
        if not issubclass(enum_class, enum.Enum) or not enum_class.__members__:
            raise ValueError(f"enum_class must be a non-empty enum.Enum, got {enum_class!r}")
        self.enum_class, self.case_sensitive = enum_class, case_sensitive
        self._names = {name if case_sensitive else name.lower(): member
                       for name, member in enum_class.__members__.items()}

    @property
    def member_names(self) -> list[str]:
        return list(self.enum_class.__members__)

    def parse(self, argument: Any) -> Any:
        if isinstance(argument, self.enum_class):
            return argument
        key = argument if self.case_sensitive else str(argument).lower()
        if key not in self._names:
            raise ValueError(f"value should be one of <{'|'.join(self.member_names)}>")
        return self._names[key]

    def flag_type(self) -> str:
        return "enum class"


class BaseListParser(ArgumentParser):
    """A list split on `token` (None: on whitespace), items stripped, empty items dropped."""

    def __init__(self, token: str | None = None, name: str | None = None) -> None:
        self._token, self._name = token, name
        self.syntactic_help = f"a {name} separated list" if name else ""

    def parse(self, argument: Any) -> list:
        if isinstance(argument, list):
            return argument
        if not argument:
            return []
        return [s.strip() for s in argument.split(self._token) if s.strip()]

    def flag_type(self) -> str:
        return f"{self._name} separated list of strings" if self._name else "list"


class ListParser(BaseListParser):
    """A comma-separated list (CSV quoting honoured)."""

    def __init__(self) -> None:
        super().__init__(",", "comma")

    def parse(self, argument: Any) -> list:
        if isinstance(argument, list):
            return argument
        if not argument:
            return []
        try:
            return [s.strip() for s in next(csv.reader([argument], strict=True))]
        except csv.Error as e:
            raise ValueError(f"Unable to parse the value {argument!r} as a csv list: {e}") from None


class WhitespaceSeparatedListParser(BaseListParser):
    """A whitespace-separated list (commas too with comma_compat)."""

    def __init__(self, comma_compat: bool = False) -> None:
        self._comma_compat = comma_compat
        super().__init__(None, "whitespace or comma" if comma_compat else "whitespace")

    def parse(self, argument: Any) -> list:
        if isinstance(argument, list):
            return argument
        if not argument:
            return []
        text = argument.replace(",", " ") if self._comma_compat else argument
        return text.split()


# ---- serializers ----------------------------------------------------------------------------------

class ArgumentSerializer:
    """A value as the text a command line would give it."""

    def serialize(self, value: Any) -> str:
        return str(value)


class ListSerializer(ArgumentSerializer):
    def __init__(self, list_sep: str) -> None:
        self.list_sep = list_sep

    def serialize(self, value: Any) -> str:
        return self.list_sep.join(str(x) for x in value)


class CsvListSerializer(ListSerializer):
    """A list as one CSV row (items quoted when they hold the separator)."""

    def serialize(self, value: Any) -> str:
        out = io.StringIO()
        csv.writer(out, delimiter=self.list_sep, lineterminator="").writerow([str(x) for x in value])
        return out.getvalue()


class EnumClassSerializer(ArgumentSerializer):
    def __init__(self, lowercase: bool) -> None:
        self._lowercase = lowercase

    def serialize(self, value: Any) -> str:
        return value.name.lower() if self._lowercase else value.name


class EnumClassListSerializer(ListSerializer):
    def __init__(self, list_sep: str, **kwargs: Any) -> None:
        super().__init__(list_sep)
        self._element = EnumClassSerializer(**kwargs)

    def serialize(self, value: Any) -> str:
        items = value if isinstance(value, list) else [value]
        return self.list_sep.join(self._element.serialize(x) for x in items)


# ---- flags ----------------------------------------------------------------------------------------

class Flag:
    """One flag: its parser and serializer, default, current value and whether the command line set it."""

    def __init__(self, parser: ArgumentParser, serializer: ArgumentSerializer | None, name: str, default: Any,
                 help_string: str | None, short_name: str | None = None, boolean: bool = False,
                 allow_override: bool = False, allow_override_cpp: bool = False, allow_hide_cpp: bool = False,
                 allow_overwrite: bool = True, allow_using_method_names: bool = False) -> None:
        self.name, self.short_name, self.boolean = name, short_name, boolean
        self.help = help_string or "(no help available)"
        self.parser, self.serializer = parser, serializer or ArgumentSerializer()
        self.allow_override, self.allow_overwrite = allow_override, allow_overwrite
        self.present, self.using_default_value, self.validators = 0, True, []
        self.default_unparsed = default
        self._set_default(default)

    def _parse(self, argument: Any) -> Any:
        if argument is None:
            return None
        try:
            return self.parser.parse(argument)
        except (TypeError, ValueError) as e:
            raise IllegalFlagValueError(f"flag --{self.name}={argument}: {e}") from None

    def _set_default(self, value: Any) -> None:
        self.default_unparsed = value
        try:
            self.default = self._parse(value)
        except IllegalFlagValueError as e:
            raise IllegalFlagValueError(f"flag --{self.name}: default {value!r}: {str(e).partition(': ')[2]}") \
                from None
        if self.using_default_value:
            self.value = self.default

    def parse(self, argument: Any) -> None:
        """Set the value from command-line text (a second occurrence replaces the first)."""
        self.value = self._parse(argument)
        self.present += 1
        self.using_default_value = False

    def unparse(self) -> None:
        self.value, self.using_default_value, self.present = self.default, True, 0

    def serialize(self) -> str:
        if self.value is None:
            return ""
        if self.boolean:
            return f"--{self.name}" if self.value else f"--no{self.name}"
        return f"--{self.name}={self.serializer.serialize(self.value)}"

    def flag_type(self) -> str:
        return self.parser.flag_type()


class BooleanFlag(Flag):
    """A flag set by --name / --noname (or --name=true|false)."""

    def __init__(self, name: str, default: Any, help: str | None, short_name: str | None = None, **args: Any) -> None:
        super().__init__(BooleanParser(), None, name, default, help, short_name, True, **args)


class EnumFlag(Flag):
    """A string flag restricted to enum_values."""

    def __init__(self, name: str, default: Any, help: str | None, enum_values: Sequence[str],
                 short_name: str | None = None, case_sensitive: bool = True, **args: Any) -> None:
        parser = EnumParser(enum_values, case_sensitive)
        super().__init__(parser, ArgumentSerializer(), name, default, help, short_name, **args)
        self.help = f"<{'|'.join(parser.enum_values)}>: {self.help}"


class EnumClassFlag(Flag):
    """A flag whose value is a member of an enum.Enum."""

    def __init__(self, name: str, default: Any, help: str | None, enum_class: type, short_name: str | None = None,
                 case_sensitive: bool = False, **args: Any) -> None:
        parser = EnumClassParser(enum_class, case_sensitive)
        super().__init__(parser, EnumClassSerializer(lowercase=not case_sensitive), name, default, help,
                         short_name, **args)
        self.help = f"<{'|'.join(parser.member_names)}>: {self.help}"


class MultiFlag(Flag):
    """A flag that may repeat: each occurrence adds to the list of values."""

    def _parse(self, argument: Any) -> Any:
        if argument is None:
            return None
        items = argument if isinstance(argument, list) else [argument]
        return [super(MultiFlag, self)._parse(item) for item in items]

    def parse(self, argument: Any) -> None:
        new = self._parse(argument)
        self.value = (self.value or []) + new if self.present else new
        self.present += 1
        self.using_default_value = False

    def serialize(self) -> str:
        return "\n".join(f"--{self.name}={self.serializer.serialize(v)}" for v in (self.value or []))

    def flag_type(self) -> str:
        return "multi " + self.parser.flag_type()


class MultiEnumClassFlag(MultiFlag):
    """A repeatable flag of enum.Enum members."""

    def __init__(self, name: str, default: Any, help_string: str | None, enum_class: type,
                 case_sensitive: bool = False, **args: Any) -> None:
        parser = EnumClassParser(enum_class, case_sensitive)
        serializer = EnumClassListSerializer(",", lowercase=not case_sensitive)
        super().__init__(parser, serializer, name, default, help_string, **args)
        self.help = f"<{'|'.join(parser.member_names)}>: {self.help}"
