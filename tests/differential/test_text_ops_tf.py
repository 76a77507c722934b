"""tf.strings.* and the TF1 string ops (string_split, regex_replace, string_to_number, ...) against real TF."""

import numpy as np
import pytest

from tests.differential.op_tables import Row, table_tests

WORDS = np.array([b"  Hello World ", b"tf.data, tf.train", b"", b"\xc3\xa9t\xc3\xa9 ok"], dtype="S")
NUMBERS = np.array([b"3.25", b" -1e3", b"7", b"0.5"], dtype="S")

EXPRS = {
    "length_bytes": "tf.strings.length(s)",
    "length_utf8": "tf.strings.length(s, unit='UTF8_CHAR')",
    "lower": "tf.strings.lower(s)",
    "upper": "tf.strings.upper(s)",
    "strip": "tf.strings.strip(s)",
    "string_strip": "tf.string_strip(s)",
    "regex_replace_all": "tf.strings.regex_replace(s, '[a-z]+', 'x')",
    "regex_replace_first_group": "tf.regex_replace(s, r'(\\w+)\\.(\\w+)', r'\\2-\\1', replace_global=False)",
    "regex_full_match": "tf.strings.regex_full_match(s, '.*tf.*')",
    "join": "tf.strings.join([s, tf.strings.upper(s)], separator='|')",
    "reduce_join": "tf.strings.reduce_join(s, separator=',')",
    "substr": "tf.strings.substr(s, 1, 3)",
    "to_number_float": "tf.strings.to_number(n)",
    "to_number_double": "tf.string_to_number(n, out_type=tf.float64)",
    "to_number_int": "tf.strings.to_number(tf.constant(['12', '-7']), out_type=tf.int32)",
    "format_scalar_vector": "tf.strings.format('x={} v={}', [tf.constant(3), tf.constant([1, 2, 3])])",
    "format_long_vector": "tf.strings.format('{}', tf.range(10))",
    "format_string": "tf.strings.format('[{}]', tf.constant('abc'))",
    "format_strings_floats": "tf.strings.format('{} {}', [tf.constant(['ab', 'c']), tf.constant([1.5, 2.0])])",
}

UNICODE = {  # code points and transcoding: ill-formed input, error modes, control characters
    "encode_utf8_invalid":
        "tf.strings.unicode_encode(tf.constant([[72, 233, -5, 0x110000, 0xD800, 10], "
        "[0x1F600, 65, 66, 67, 68, 69]]), 'UTF-8')",
    "encode_ignore":
        "tf.strings.unicode_encode(tf.constant([[72, 233, -5]]), 'UTF-8', errors='ignore')",
    "encode_strict":
        "tf.strings.unicode_encode(tf.constant([[72, 233, -5]]), 'UTF-8', errors='strict')",
    "encode_utf16_vector":
        "tf.strings.unicode_encode(tf.constant([72, 0x1F600]), 'UTF-16-BE')",
    "encode_utf32_replacement":
        "tf.strings.unicode_encode(tf.constant([[72, -1]]), 'UTF-32-BE', replacement_char=63)",
    "encode_rank3":
        "tf.strings.unicode_encode(tf.constant([[[72, 73], [74, 75]]]), 'UTF-8')",
    "transcode_utf16":
        "tf.strings.unicode_transcode(tf.constant([b'a\\xffb\\xc3', b'\\xe2\\x82 x\\x01\\x7f\\xc2\\x85']), "
        "'UTF-8', 'UTF-16-BE')",
    "transcode_ignore_controls":
        "tf.strings.unicode_transcode(tf.constant([b'a\\xffb\\xc3', b'\\xe2\\x82 x\\x01\\x7f\\xc2\\x85\\t']), "
        "'UTF-8', 'UTF-8', errors='ignore', replace_control_characters=True)",
    "transcode_replace_controls":
        "tf.strings.unicode_transcode(tf.constant([[b'a\\x00b\\x1f']]), "
        "'UTF-8', 'UTF-32-BE', replacement_char=42, replace_control_characters=True)",
    "transcode_strict":
        "tf.strings.unicode_transcode(tf.constant([b'a\\xffb']), 'UTF-8', 'UTF-8', errors='strict')",
    "transcode_latin1":
        "tf.strings.unicode_transcode(tf.constant([b'a\\xe9', b'\\xff']), 'ISO-8859-1', 'UTF-8')",
    "transcode_utf16_lone_surrogate":
        "tf.strings.unicode_transcode(tf.constant([b'\\x00a\\xd8\\x00']), 'UTF-16-BE', 'UTF-8')",
    "transcode_utf8_surrogate_bytes":
        "tf.strings.unicode_transcode(tf.constant([b'\\xed\\xa0\\x80x', b'\\xc3\\xa9t\\xc3\\xa9 ok']), "
        "'UTF-8', 'UTF-8', replacement_char=63)",
    "transcode_unknown_encoding":
        "tf.strings.unicode_transcode(tf.constant(b'abc'), 'bogus', 'UTF-8')",
}

SPLITS = {
    "string_split": "tf.string_split(s)",
    "string_split_chars": "tf.string_split(s, delimiter=' ,')",
    "string_split_keep_empty": "tf.string_split(tf.constant(['a,,b', ',c']), delimiter=',', skip_empty=False)",
    "strings_split_whitespace": "tf.strings.split(s)",
    "strings_split_sep": "tf.strings.split(tf.constant(['a,,b', ',c']), sep=',')",
    # Not here: maxsplit with whitespace splitting, where TF turns 'e' into ['e', ''].
    "strings_split_maxsplit": "tf.strings.split(tf.constant(['a,b,c', 'e']), sep=',', maxsplit=1)",
}

BODY = "s, n = tf.constant(inputs['s']), tf.constant(inputs['n'])\nfetch = {{'y': {expr}}}\n"
SPLIT_BODY = ("s = tf.constant(inputs['s'])\nsp = {expr}\n"
              "fetch = {{'indices': sp.indices, 'values': sp.values, 'shape': sp.dense_shape}}\n")

ROWS = [Row(k, BODY.format(expr=v), {"s": WORDS, "n": NUMBERS}) for k, v in {**EXPRS, **UNICODE}.items()] + \
    [Row(k, SPLIT_BODY.format(expr=v), {"s": WORDS}) for k, v in SPLITS.items()] + [
    Row("segment_join_rows", "fetch = {'y': tf.strings.unsorted_segment_join(tf.constant([['a', 'b'], ['c', 'd'], "
        "['e', 'f']]), [1, 0, 1], 3, separator=':')}\n"),
    Row("segment_join_elements", "fetch = {'y': tf.strings.unsorted_segment_join(tf.constant(inputs['s']), "
        "tf.constant([2, 2, 0, 2]), tf.constant(4))}\n", {"s": WORDS}),
    Row("segment_join_negative_id", "fetch = {'y': tf.strings.unsorted_segment_join(tf.constant(['a', 'b']), "
        "[0, -1], 2)}\n"),
    Row("ngrams_2d", "fetch = {'y': tf.strings.ngrams(tf.constant([['a', 'b', 'c', 'd'], ['e', 'f', 'g', 'h']]), "
        "2)}\n"),
    Row("ngrams_widths_padded", "fetch = {'y': tf.strings.ngrams(tf.constant(['a', 'b', 'c']), [1, 3], "
        "pad_values=('<', '>'), padding_width=1)}\n"),
    Row("ngrams_default_padding_sep", "fetch = {'y': tf.strings.ngrams(tf.constant([[['a', 'b'], ['c', 'd']]]), "
        "(2, 3), separator='_', pad_values='#')}\n"),
    Row("ngrams_short_preserved", "fetch = {'y': tf.strings.ngrams(tf.constant([['a', 'b'], ['c', 'd']]), 3, "
        "preserve_short_sequences=True)}\n"),
    Row("ngrams_short_preserved_padded", "fetch = {'y': tf.strings.ngrams(tf.constant(['a']), [3, 4], "
        "pad_values=('<', '>'), padding_width=1, preserve_short_sequences=True)}\n"),
    Row("ngrams_too_short", "fetch = {'y': tf.strings.ngrams(tf.constant([['a', 'b']]), 3)}\n"),
    Row("to_number_bad", "fetch = {'y': tf.strings.to_number(tf.constant(['1', 'x']))}\n"),
    Row("format_count_mismatch", "fetch = {'y': tf.strings.format('{} {}', [tf.constant(1)])}\n"),
]

results, test_tftk_agrees_with_tensorflow = table_tests("text", ROWS)


@pytest.mark.parametrize("call, message", [
    ("unicode_encode([[72]], 'UTF-7')", "output_encoding"),
    ("unicode_transcode('abc', 'UTF-8', 'UTF-8', errors='skip')", "errors"),
    ("unicode_encode(72, 'UTF-8')", "rank must be at least 1"),
    ("ngrams(['a', 'b'], 0)", "ngram_widths must be greater than 0"),
    ("ngrams(['a', 'b'], 2, padding_width=1)", "pad_values must be provided"),
])
def test_bad_string_arguments_are_refused_at_build(call, message):
    import tftk as tf
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=message):
            eval("tf.strings." + call)
