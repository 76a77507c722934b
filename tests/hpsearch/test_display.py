"""The final ranking: the best ten trials, only the config entries they differ in, the shared ones once."""

from pathlib import Path

from hpsearch.display import ranking_table
from hpsearch.records import TrialRecord


def test_ranking_shows_the_best_ten_and_the_shared_config_once():
    records = [TrialRecord(f"s0-{i:04d}", {"model_name": "MnistMLP", "dataset": "digits", "lr": 0.01 * (i + 1)},
                           i, Path("."), resource=9, metric=i / 100, status="done") for i in range(25)]
    text = ranking_table(records)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 110
    assert "s0-0024" in text and "s0-0015" in text and "s0-0014" not in text  # the best ten, best first
    assert "... 15 more trials in the search's journal.jsonl" in text
    assert lines[-1] == "every trial: dataset=digits model_name=MnistMLP"
    assert sum("model_name" in line for line in lines) == 1


def test_hparams_show_only_what_the_search_varies(tmp_path):
    import io

    from tensorboardX.proto.plugin_hparams_pb2 import HParamsPluginData

    import hpsearch_toys as toys
    from hpsearch import SearchSpec, run_search
    from hpsearch.search import varying_keys
    from tftk.summary import summary_iterator

    assert varying_keys([{"a": 1, "b": 2}, {"a": 1, "b": 3}, {"a": 1, "b": 2, "c": 0}]) == ("b", "c")
    result = run_search(toys.quadratic, toys.sample_lr, tmp_path,
                        SearchSpec(algorithm="random", n_configs=2, max_resource=2, fixed_params={"model_name": "M"}),
                        out=io.StringIO())
    shown = set()
    for path in result.best.trial_dir.glob("events.out.tfevents*"):
        for event in summary_iterator(str(path)):
            for value in event.summary.value:
                if value.tag == "_hparams_/session_start_info":
                    data = HParamsPluginData.FromString(value.metadata.plugin_data.content)
                    shown |= set(data.session_start_info.hparams)
    assert shown == {"lr", "units"}  # not model_name, which every trial shares
