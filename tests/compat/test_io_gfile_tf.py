"""tf.io.gfile against real TF: the same sequence of file operations, the same results and errors."""

from __future__ import annotations

import json

import pytest

from tests.tf_oracle import both_succeeded, run_in_tf

# One session of file work in a fresh temporary folder; every result (or error class) is logged.
GFILE_SNIPPET = """
import json, os, tempfile
g = tf.io.gfile
root = tempfile.mkdtemp()
rel = lambda p: os.path.relpath(p, root)
log = {}
def attempt(key, fn, *args, **kwargs):
    try:
        result = fn(*args, **kwargs)
        log[key] = "ok" if result is None else result
    except Exception as e:
        log[key] = type(e).__name__
src, dst = g.join(root, "a", "f.txt"), g.join(root, "a", "b", "g.txt")
g.makedirs(g.join(root, "a", "b"))
attempt("makedirs_again", g.makedirs, g.join(root, "a", "b"))
with g.GFile(src, "w") as f:
    f.write("hello")
attempt("copy", g.copy, src, dst)
attempt("copy_again", g.copy, src, dst)
attempt("copy_overwrite", g.copy, src, dst, overwrite=True)
attempt("copy_missing", g.copy, g.join(root, "nope"), g.join(root, "x"))
attempt("mkdir_again", g.mkdir, g.join(root, "a"))
attempt("mkdir_new", g.mkdir, g.join(root, "c"))
attempt("mkdir_no_parent", g.mkdir, g.join(root, "nope", "d"))
attempt("rename_onto_existing", g.rename, dst, src)
attempt("rename", g.rename, dst, g.join(root, "a", "b", "h.txt"))
attempt("rename_overwrite", g.rename, g.join(root, "a", "b", "h.txt"), src, overwrite=True)
log["listdir"] = sorted(g.listdir(g.join(root, "a")))
attempt("listdir_missing", g.listdir, g.join(root, "nope"))
log["glob"] = sorted(rel(p) for p in g.glob(g.join(root, "a", "*")))
# sibling folders come in listing order, which TF leaves to the file system: compare as sets,
# and check that parents come before (top-down) or after (bottom-up) their children
top_down = [rel(d) for d, _, _ in g.walk(root)]
bottom_up = [rel(d) for d, _, _ in g.walk(root, topdown=False)]
log["walk"] = sorted([rel(d), sorted(s), sorted(f)] for d, s, f in g.walk(root))
log["walk_parents_first"] = top_down.index("a") < top_down.index("a/b") and top_down[0] == "."
log["walk_parents_last"] = bottom_up.index("a") > bottom_up.index("a/b") and bottom_up[-1] == "."
log["walk_missing"] = list(g.walk(g.join(root, "nope")))
st = g.stat(src)
log["stat"] = [st.length, st.is_directory, g.stat(g.join(root, "a")).is_directory]
attempt("stat_missing", g.stat, g.join(root, "nope"))
log["exists"] = [g.exists(src), g.exists(g.join(root, "nope")), g.isdir(src), g.isdir(g.join(root, "a"))]
with g.GFile(src, "rb") as f:
    log["read"] = f.read().decode()
attempt("remove", g.remove, src)
attempt("remove_missing", g.remove, src)
attempt("rmtree", g.rmtree, g.join(root, "a"))
attempt("rmtree_missing", g.rmtree, g.join(root, "a"))
log["after"] = sorted(g.listdir(root))
log["schemes_have_local"] = "" in g.get_registered_schemes()
outputs = {"log": np.array(json.dumps(log))}
"""


@pytest.mark.slow  # real TensorFlow in a subprocess
def test_gfile_operations_match_tensorflow():
    cases = {"gfile": (GFILE_SNIPPET, {})}
    expected, got = both_succeeded(run_in_tf(cases), cases, "gfile")
    theirs, ours = json.loads(str(expected.outputs["log"])), json.loads(str(got.outputs["log"]))
    assert theirs["copy_again"] == "AlreadyExistsError" and theirs["read"] == "hello"
    for key, value in theirs.items():
        assert ours[key] == value, key
    assert sorted(ours) == sorted(theirs)


def test_walk_passes_a_missing_top_to_onerror(tmp_path):
    """TF 2.21's walk calls onerror and then fails with UnboundLocalError; tftk stops after onerror."""
    import tftk as tf
    seen = []
    assert list(tf.io.gfile.walk(str(tmp_path / "nope"), onerror=seen.append)) == []
    assert [type(e).__name__ for e in seen] == ["NotFoundError"] and str(tmp_path / "nope") in str(seen[0])
