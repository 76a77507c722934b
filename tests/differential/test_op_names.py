"""Op names against real TensorFlow: Python operators and Python operands named as TF1 names them.

A constant made from a Python operand lives inside the op's scope (`x * 2` is op `mul` reading
`mul/y`), so it never takes a name the user gives a later variable or placeholder; that name (and
so the variable's checkpoint key) stays as written.
"""

import pytest

from tests.tf_oracle import both_succeeded, run_in_tf, run_in_tftk

_SETUP = ("x = tf.placeholder(tf.float32, [2], name='x0')\n"
          "m = tf.placeholder(tf.float32, [2, 2], name='m0')\n"
          "b = tf.placeholder(tf.bool, [2], name='b0')\n"
          "i = tf.placeholder(tf.int32, [2], name='i0')\n"
          "n = len(tf.get_default_graph().get_operations())\n")

# expression -> what is compared: the result op's name and the names of all ops it created
# ("all"), or the result op's name only where tftk keeps as attributes what TF feeds as constants.
EXPRESSIONS = {
    "add": ("x + 1", "all"), "radd": ("1 + x", "all"), "sub": ("x - 1", "all"),
    "rsub": ("1 - x", "all"), "mul": ("x * 2", "all"), "rmul": ("2 * x", "all"),
    "truediv": ("x / 2", "all"), "rtruediv": ("2 / x", "all"), "int_truediv": ("i / 2", "all"),
    "floordiv": ("x // 2", "all"), "mod": ("x % 2", "all"), "pow": ("x ** 2", "all"),
    "rpow": ("2 ** x", "all"), "neg": ("-x", "all"), "abs": ("abs(x)", "all"),
    "lt": ("x < 1", "all"), "le": ("x <= 1", "all"), "gt": ("x > 1", "all"),
    "ge": ("x >= 1", "all"), "matmul": ("m @ m", "all"), "and": ("b & True", "all"),
    "or": ("b | False", "all"), "xor": ("b ^ True", "all"), "invert": ("~b", "all"),
    "two_tensors": ("x + x", "all"), "tf_add": ("tf.add(x, 1)", "all"),
    "tf_multiply": ("tf.multiply(x, 2)", "all"), "tf_subtract": ("tf.subtract(x, 1)", "all"),
    "tf_divide": ("tf.divide(x, 2)", "all"), "tf_maximum": ("tf.maximum(x, 0.)", "all"),
    "tf_pow": ("tf.pow(x, 2.)", "all"), "named": ("tf.add(x, 1, name='total')", "all"),
    "index": ("x[0]", "result"), "slice": ("m[1:2, ::2]", "result"),
    "column": ("m[:, 1]", "result"),
}


def _source(expression: str, compare: str) -> str:
    body = f"r = {expression}\n"
    if compare == "all":
        body += "names = [o.name for o in tf.get_default_graph().get_operations()[n:]]\n"
    else:
        body += "names = [r.op.name]\n"
    return _SETUP + body + "outputs = {'names': np.array(sorted(names)), 'result': np.array(r.op.name)}\n"


CASES = {name: (_source(expr, compare), {}) for name, (expr, compare) in EXPRESSIONS.items()}

# A Python operand's constant must not take the name of a later variable or placeholder.
CASES["later_names_kept"] = (
    "x = tf.placeholder(tf.float32, [2])\n"
    "y = x * 2\n"
    "v = tf.Variable(1.0, name='y')\n"
    "p = tf.placeholder(tf.float32, name='x')\n"
    "outputs = {'names': np.array([y.op.name, y.op.inputs[1].op.name, v.op.name, p.op.name])}\n", {})


@pytest.fixture(scope="module")
def oracle():
    return run_in_tf(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_names_match_tensorflow(oracle, name):
    expected, got = both_succeeded(oracle, CASES, name)
    for key, value in expected.outputs.items():
        assert got.outputs[key].tolist() == value.tolist(), key


def test_later_names_kept_without_oracle():
    """The fixed names, stated (runs where TensorFlow is absent too)."""
    got = run_in_tftk(*CASES["later_names_kept"])
    assert got.outputs["names"].tolist() == ["mul", "mul/y", "y", "x"]
