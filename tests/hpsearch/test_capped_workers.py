"""--nb-process is capped at the trials that can run and at the cores, saying so (issue 14 item 6)."""

import io

import pytest

from hpsearch.search import capped_workers


@pytest.mark.parametrize("asked, trials, cores, workers, warning", [
    (32, 2, 2, 2, "warning: --nb-process 32 lowered to 2: 2 trial(s) can run at once\n"),
    (32, 17, 2, 2, "warning: --nb-process 32 lowered to 2: this machine has 2 core(s)\n"),
    (4, 17, 8, 4, ""),
    (3, 1, 8, 1, "warning: --nb-process 3 lowered to 1: 1 trial(s) can run at once\n"),
])
def test_workers_never_exceed_trials_nor_cores(asked, trials, cores, workers, warning):
    out = io.StringIO()
    assert capped_workers(asked, trials, cores, out) == workers
    assert out.getvalue() == warning
    assert workers * max(1, cores // workers) <= cores  # each worker's thread share: workers x threads <= cores
