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
