"""tf.flags (absl's flags in TF) against real TensorFlow: DEFINE_* kinds, multi flags, aliases,
validators, required and mutually exclusive flags, parsers, serializers and the helper functions.

Every row defines its flags in a FlagValues of its own and parses an argv of its own."""

from tests.differential.op_tables import Row, table_tests

HEAD = "import enum\nF = tf.flags\nfv = F.FlagValues()\nColour = enum.Enum('Colour', 'RED GREEN BLUE')\n"


def row(name: str, body: str) -> Row:
    return Row(name, HEAD + body)


def values(*exprs: str) -> str:
    return "fetch = {" + ", ".join(f"'v{k}': tf.constant({e})" for k, e in enumerate(exprs)) + "}\n"


ROWS = [
    row("define_basic", "F.DEFINE_string('s', 'a', 'h', flag_values=fv)\nF.DEFINE_integer('i', 1, 'h', flag_values=fv)\n"
        "F.DEFINE_float('f', 0.5, 'h', flag_values=fv)\nF.DEFINE_bool('b', False, 'h', flag_values=fv)\n"
        "F.DEFINE_list('l', 'x,y', 'h', flag_values=fv)\nF.DEFINE_enum('e', 'p', ['p', 'q'], 'h', flag_values=fv)\n"
        "rest = fv(['prog', '--s=zz', '--i', '0x10', '--f=2.5', '--b', '--l=u,\"v,w\"', '--e=q', 'pos'])\n"
        + values("fv.s", "fv.i", "fv.f", "fv.b", "fv.l", "fv.e", "rest")),
    row("define_returns_holder", "h = F.DEFINE_integer('n', 3, 'h', flag_values=fv)\nfv(['prog', '--n=4'])\n"
        + values("h.value", "h.name", "h.default", "h.present")),
    row("integer_bounds", "F.DEFINE_integer('n', 3, 'h', lower_bound=0, upper_bound=5, flag_values=fv)\n"
        "fv(['prog', '--n=9'])\nfetch = {}\n"),
    row("float_bad", "F.DEFINE_float('x', 1.0, 'h', flag_values=fv)\nfv(['prog', '--x=abc'])\nfetch = {}\n"),
    row("unknown_flag", "F.DEFINE_float('x', 1.0, 'h', flag_values=fv)\nfv(['prog', '--y=1'])\nfetch = {}\n"),
    row("duplicate_flag", "F.DEFINE_float('x', 1.0, 'h', flag_values=fv)\nF.DEFINE_string('x', '', 'h', flag_values=fv)\n"
        "fetch = {}\n"),
    row("bool_forms", "F.DEFINE_bool('a', True, 'h', flag_values=fv)\nF.DEFINE_boolean('b', False, 'h', flag_values=fv)\n"
        "F.DEFINE_bool('c', None, 'h', flag_values=fv)\nfv(['prog', '--noa', '--b=yes', '--c=0'])\n"
        + values("fv.a", "fv.b", "fv.c")),
    row("multi_flags", "F.DEFINE_multi_string('s', ['d'], 'h', flag_values=fv)\n"
        "F.DEFINE_multi_integer('i', 7, 'h', flag_values=fv)\nF.DEFINE_multi_float('f', [1.5], 'h', flag_values=fv)\n"
        "F.DEFINE_multi_enum('e', ['x'], ['x', 'y'], 'h', flag_values=fv)\n"
        "fv(['prog', '--s=a', '--s=b', '--f=2', '--e=y', '--e=x'])\n"
        + values("fv.s", "fv.i", "fv.f", "fv.e")),
    row("multi_generic", "F.DEFINE_multi(F.IntegerParser(), F.ArgumentSerializer(), 'm', [], 'h', flag_values=fv)\n"
        "fv(['prog', '--m=1', '--m=0x2'])\n" + values("fv.m", "fv['m'].serialize()")),
    row("spaceseplist", "F.DEFINE_spaceseplist('w', 'a b', 'h', flag_values=fv)\n"
        "F.DEFINE_spaceseplist('c', '', 'h', comma_compat=True, flag_values=fv)\n"
        "fv(['prog', '--c=x,y z'])\n" + values("fv.w", "fv.c")),
    row("enum_class", "F.DEFINE_enum_class('c', 'red', Colour, 'h', flag_values=fv)\n"
        "F.DEFINE_multi_enum_class('m', ['green'], Colour, 'h', flag_values=fv)\n"
        "fv(['prog', '--c=BLUE', '--m=red', '--m=Blue'])\n"
        + values("fv.c.name", "[c.name for c in fv.m]", "fv['c'].serialize()", "fv['m'].serialize()")),
    row("enum_bad", "F.DEFINE_enum('e', 'a', ['a', 'b'], 'h', flag_values=fv)\nfv(['prog', '--e=c'])\nfetch = {}\n"),
    row("alias", "F.DEFINE_integer('steps', 1, 'h', flag_values=fv)\nF.DEFINE_alias('n', 'steps', flag_values=fv)\n"
        "fv(['prog', '--n=5'])\n" + values("fv.steps", "fv.n")),
    row("define_flag_objects", "F.DEFINE_flag(F.BooleanFlag('q', False, 'h'), fv)\n"
        "F.DEFINE_flag(F.EnumFlag('e', 'a', 'h', ['a', 'b']), fv)\n"
        "F.DEFINE_flag(F.Flag(F.FloatParser(lower_bound=0), F.ArgumentSerializer(), 'f', 1.0, 'h'), fv)\n"
        "F.DEFINE(F.ListParser(), 'l', [], 'h', flag_values=fv)\n"
        "fv(['prog', '--q', '--e=b', '--f=3', '--l=1,2'])\n"
        + values("fv.q", "fv.e", "fv.f", "fv.l", "fv['q'].serialize()", "fv['e'].serialize()", "fv['f'].flag_type()")),
    row("validator_ok", "F.DEFINE_integer('n', 2, 'h', flag_values=fv)\n"
        "F.register_validator('n', lambda v: v % 2 == 0, 'must be even', flag_values=fv)\nfv(['prog', '--n=4'])\n"
        + values("fv.n")),
    row("validator_fails", "F.DEFINE_integer('n', 2, 'h', flag_values=fv)\n"
        "@F.validator('n', 'must be even', flag_values=fv)\ndef even(v):\n    return v % 2 == 0\n"
        "fv(['prog', '--n=3'])\nfetch = {}\n"),
    row("validator_on_assignment", "F.DEFINE_integer('n', 2, 'h', flag_values=fv)\n"
        "F.register_validator('n', lambda v: v > 0, flag_values=fv)\nfv(['prog'])\nfv.n = -1\nfetch = {}\n"),
    row("multi_validator", "F.DEFINE_integer('a', 1, 'h', flag_values=fv)\nF.DEFINE_integer('b', 2, 'h', flag_values=fv)\n"
        "@F.multi_flags_validator(['a', 'b'], 'a < b', flag_values=fv)\ndef order(d):\n    return d['a'] < d['b']\n"
        "fv(['prog', '--a=5'])\nfetch = {}\n"),
    row("register_multi_validator_ok", "F.DEFINE_integer('a', 1, 'h', flag_values=fv)\nF.DEFINE_integer('b', 2, 'h', flag_values=fv)\n"
        "F.register_multi_flags_validator(['a', 'b'], lambda d: d['a'] < d['b'], flag_values=fv)\n"
        "fv(['prog', '--b=5'])\n" + values("fv.b")),
    row("required_missing", "F.DEFINE_string('r', None, 'h', flag_values=fv)\nF.mark_flag_as_required('r', fv)\n"
        "fv(['prog'])\nfetch = {}\n"),
    row("required_given", "F.DEFINE_string('r', None, 'h', flag_values=fv)\nF.DEFINE_string('t', None, 'h', flag_values=fv)\n"
        "F.mark_flags_as_required(['r', 't'], fv)\nfv(['prog', '--r=x', '--t=y'])\n" + values("fv.r + fv.t")),
    row("mutual_exclusive", "F.DEFINE_string('a', None, 'h', flag_values=fv)\nF.DEFINE_string('b', None, 'h', flag_values=fv)\n"
        "F.mark_flags_as_mutual_exclusive(['a', 'b'], flag_values=fv)\nfv(['prog', '--a=1', '--b=2'])\nfetch = {}\n"),
    row("mutual_exclusive_required", "F.DEFINE_string('a', None, 'h', flag_values=fv)\nF.DEFINE_string('b', None, 'h', flag_values=fv)\n"
        "F.mark_flags_as_mutual_exclusive(['a', 'b'], required=True, flag_values=fv)\nfv(['prog'])\nfetch = {}\n"),
    row("bool_mutual_exclusive", "F.DEFINE_bool('a', False, 'h', flag_values=fv)\nF.DEFINE_bool('b', False, 'h', flag_values=fv)\n"
        "F.mark_bool_flags_as_mutual_exclusive(['a', 'b'], flag_values=fv)\nfv(['prog', '--a', '--b'])\nfetch = {}\n"),
    row("bool_mutual_exclusive_ok", "F.DEFINE_bool('a', False, 'h', flag_values=fv)\nF.DEFINE_bool('b', False, 'h', flag_values=fv)\n"
        "F.mark_bool_flags_as_mutual_exclusive(['a', 'b'], flag_values=fv)\nfv(['prog', '--b'])\n" + values("fv.b")),
    row("set_default_and_override", "h = F.DEFINE_integer('n', 1, 'h', flag_values=fv)\nF.set_default(h, 9)\n"
        "fv(['prog'])\nv = fv.n\nF.override_value(h, 3)\n" + values("v", "fv.n", "h.default")),
    row("parsers", values("F.BooleanParser().parse('Yes')", "F.IntegerParser().parse('0b101')", "F.FloatParser().parse('1e3')",
                          "F.EnumParser(['Ab', 'c'], case_sensitive=False).parse('ab')", "F.ListParser().parse('a, b,c')",
                          "F.WhitespaceSeparatedListParser().parse(' a  b ')", "F.BaseListParser(';', 'semi').parse('x;y')",
                          "F.ArgumentParser().parse('s')", "F.EnumClassParser(Colour).parse('GREEN').name",
                          "F.IntegerParser().flag_type()", "F.ListParser().flag_type()")),
    row("parser_bounds", "F.FloatParser(lower_bound=0.0, upper_bound=1.0).parse('2')\nfetch = {}\n"),
    row("serializers", values("F.ArgumentSerializer().serialize(3)", "F.ListSerializer(';').serialize([1, 2])",
                              "F.CsvListSerializer(',').serialize(['a', 'b,c'])",
                              "F.EnumClassSerializer(lowercase=True).serialize(Colour.RED)",
                              "F.EnumClassListSerializer(',', lowercase=False).serialize([Colour.RED, Colour.BLUE])")),
    row("flag_dict_to_args", values("list(F.flag_dict_to_args({'a': 1, 'b': True, 'c': False, 'd': None, 'e': [1, 2], "
                                    "'f': 'x'}))",
                                    "list(F.flag_dict_to_args({'m': ['p', 'q']}, multi_flags={'m'}))")),
    row("doc_to_help", values("F.doc_to_help('''\\n    First line\\n    continues.\\n\\n    Second.\\n    ''')")),
    row("text_wrap", values("F.text_wrap('a b c d e f g h', 5)", "F.text_wrap('abc def', 10, '  ', '> ')")),
    row("errors_hierarchy", values("issubclass(F.IllegalFlagValueError, F.Error)", "issubclass(F.UnrecognizedFlagError, F.Error)",
                                   "issubclass(F.ValidationError, F.Error)", "issubclass(F.DuplicateFlagError, F.Error)",
                                   "issubclass(F.UnparsedFlagAccessError, F.Error)",
                                   "issubclass(F.CantOpenFlagFileError, F.Error)",
                                   "issubclass(F.FlagNameConflictsWithMethodError, F.Error)")),
    row("declare_key_flag", "F.DEFINE_integer('k', 1, 'h', flag_values=fv)\nF.declare_key_flag('k', fv)\n"
        "F.adopt_module_key_flags(enum, fv)\nfv(['prog'])\n" + values("fv.k", "F.get_help_width() >= 40")),
    row("declare_key_flag_undefined", "F.declare_key_flag('nope', fv)\nfetch = {}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("flags", ROWS)
