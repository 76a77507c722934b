"""The `tf.strings` namespace."""

from tftk.ops.string_ops import as_string, reduce_join, substr
from tftk.ops.string_ops import string_join as join
from tftk.ops.string_ops import string_to_hash_bucket as to_hash_bucket
from tftk.ops.string_ops import string_to_hash_bucket_fast as to_hash_bucket_fast
from tftk.ops.string_ops import string_to_hash_bucket_strong as to_hash_bucket_strong
from tftk.ops.string_sequence_ops import ngrams, unsorted_segment_join
from tftk.ops.unicode_ops import unicode_encode, unicode_transcode
from tftk.ops.text_ops import lower, regex_full_match, regex_replace, strip, upper
from tftk.ops.text_ops import string_format as format  # noqa: A004
from tftk.ops.text_ops import string_length as length
from tftk.ops.text_ops import string_to_number as to_number
from tftk.ops.text_ops import strings_split as split

__all__ = ["as_string", "format", "join", "length", "lower", "reduce_join", "regex_full_match", "regex_replace",
           "split", "strip", "substr", "to_hash_bucket", "to_hash_bucket_fast", "to_hash_bucket_strong",
           "to_number", "upper", "ngrams", "unsorted_segment_join",
           "unicode_encode", "unicode_transcode"]
