"""How much of TF 1.x's API tftk has: in-scope ``tf.compat.v1`` names that resolve in tftk.

    python tools/api_coverage.py            # prints the figure per module and in total
    python tools/api_coverage.py --write    # also writes docs/api-coverage.md (what is missing)

The name list is tests/differential/tf_compat_v1_names.txt (made by tools/api_names_tf.py from
real TensorFlow). A name resolves when ``tftk.<path>`` exists; whether it behaves as TF's is the
differential suite's job (tests/differential/).
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMES = ROOT / "tests" / "differential" / "tf_compat_v1_names.txt"
REPORT = ROOT / "docs" / "api-coverage.md"


# Why a module's remaining names are not there yet (shown under "Missing, by module").
WHY_MISSING = {
    "tf": "protobuf message classes, session handles, ragged/lookup/resource types and partitioned "
          "variables have no tftk counterpart yet; fingerprint belongs with string hashing (feature columns); "
          "GRAPH_DEF_VERSION* need the GraphDefs tftk writes to carry versions",
    "tf.data": "the tf.data engineer's area",
    "tf.debugging": "TF 2's check-numerics instrumentation, traceback filtering and device-placement logging",
    "tf.image": "JPEG/GIF/BMP codecs (data pipelines, Pillow), drawing and TF's random box sampling",
    "tf.io": "protobuf encode/decode (decode_proto, encode_proto, decode_json_example), the JPEG/GIF/BMP "
             "codecs of data pipelines, padding/priority queues, SparseFeature and batched sequence-example parsing",
    "tf.linalg": "the circulant operators (complex FFT products)",
    "tf.lookup": "vocabulary tables and text-file initialisers (not started)",
    "tf.nn": "RNN wrappers (rnn engineer), CTC loss and beam search, fractional and quantized pooling, "
             "sparse embedding lookups, learned unigram sampling",
    "tf.profiler": "no profiler",
    "tf.random": "Generator and the stateless binomial / parameterized truncated normal draws (not started)",
    "tf.ragged": "no RaggedTensor",
    "tf.strings": ("unicode_decode/split and bytes_split return ragged tensors, which tftk does not have; "
                   "unicode_script needs ICU's script table"),
    "tf.train": ("AdagradDA's dual-averaging update, SDCA and warm start (with VocabInfo) not built yet; "
                 "ProfilerHook needs a profiler; ClusterDef/JobDef are protobuf messages; the quantize-training "
                 "GraphDef rewrite is TF's internal tool"),
}


def read_names(path: Path = NAMES) -> dict[str, str]:
    """name (``tf.a.b``) -> scope (``in`` or the reason it is left out)."""
    names = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            name, scope = line.split(" ", 1)
            names[name] = scope
    return names


def resolves(module, dotted: str) -> bool:
    """Whether ``module.<dotted>`` exists (an AttributeError or ImportError means no)."""
    value = module
    for part in dotted.split(".")[1:]:
        try:
            value = getattr(value, part)
        except (AttributeError, ImportError):
            return False
    return True


def coverage(names: dict[str, str]) -> dict[str, tuple[list[str], list[str]]]:
    """Per module (``tf`` for top-level names): (resolving, missing) in-scope names."""
    import tftk

    result: dict[str, tuple[list[str], list[str]]] = collections.defaultdict(lambda: ([], []))
    for name, scope in names.items():
        if scope != "in":
            continue
        parts = name.split(".")
        module = "tf" if len(parts) == 2 else "tf." + parts[1]
        result[module][0 if resolves(tftk, name) else 1].append(name)
    return dict(sorted(result.items()))


def render(per_module: dict[str, tuple[list[str], list[str]]], excluded: collections.Counter) -> str:
    found = sum(len(ok) for ok, _ in per_module.values())
    total = sum(len(ok) + len(missing) for ok, missing in per_module.values())
    lines = ["# tftk's coverage of TF 1.x's API (`tf.compat.v1`, two levels deep)", "",
             "Made by `python tools/api_coverage.py --write` from "
             "`tests/differential/tf_compat_v1_names.txt`.", "",
             f"**{found} of {total} in-scope names resolve in tftk ({100 * found / total:.1f}%).**", "",
             "Left out of scope (name count by reason): "
             + ", ".join(f"{reason} {n}" for reason, n in excluded.most_common()) + ".", "",
             "| module | resolving | in scope |", "|---|---|---|"]
    lines += [f"| `{m}` | {len(ok)} | {len(ok) + len(missing)} |" for m, (ok, missing) in per_module.items()]
    lines += ["", "## Missing, by module", ""]
    for module, (_, missing) in per_module.items():
        if missing:
            short = ", ".join(f"`{n[len(module) + 1:]}`" for n in missing)
            why = f" — *{WHY_MISSING[module]}*" if module in WHY_MISSING else ""
            lines.append(f"- `{module}` ({len(missing)}){why}: {short}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {REPORT.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    names = read_names()
    per_module = coverage(names)
    excluded = collections.Counter(scope for scope in names.values() if scope != "in")
    for module, (ok, missing) in per_module.items():
        print(f"{module:24s} {len(ok):4d} / {len(ok) + len(missing):4d}")
    found = sum(len(ok) for ok, _ in per_module.values())
    total = sum(len(ok) + len(missing) for ok, missing in per_module.values())
    print(f"{'total':24s} {found:4d} / {total:4d}  ({100 * found / total:.1f}%)")
    if args.write:
        REPORT.write_text(render(per_module, excluded))
        print(f"wrote {REPORT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
