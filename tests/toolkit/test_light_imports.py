"""The CLI, completion and `import hpsearch` load neither numpy nor the engine (issue 12)."""

import subprocess
import sys

import pytest

HEAVY = ("numpy", "numba", "tftk.framework.ops", "tftk.client", "tftk.ops", "tftk.train", "tensorboardX")


def _loaded_after(statement: str) -> list[str]:
    code = f"import sys\n{statement}\nprint('\\n'.join(sorted(sys.modules)))"
    names = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return [name for name in names if name.split(".")[0] in HEAVY or name.startswith(HEAVY)]


@pytest.mark.parametrize("statement", [
    "import tftk.cli",
    "import hpsearch",
    "import hpsearch.brackets",
    "import tftk",
    "import tftk.config",
    "from tftk.user_input import UserInputError",
    "from tftk.cli import app; from typer.main import get_command; get_command(app)",  # what --help builds
])
def test_light_import_loads_no_numpy_nor_engine(statement):
    assert _loaded_after(statement) == []


def test_help_and_completion_run_without_the_engine():
    code = ("import sys\nfrom tftk.cli import app\n"
            "try:\n    app(['train', '--help'])\nexcept SystemExit:\n    pass\n"
            "print('numpy' in sys.modules, 'tftk.framework.ops' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "False False"


def test_tf1_names_load_on_first_use():
    code = ("import sys, tftk as tf\nbefore = 'numpy' in sys.modules\n"
            "print(before, tf.placeholder.__name__, 'numpy' in sys.modules, 'Session' in dir(tf))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "placeholder", "True", "True"]


def test_user_input_error_is_no_longer_a_tf_error():
    import tftk.errors

    assert not hasattr(tftk.errors, "UserInputError")
