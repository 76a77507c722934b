"""--nb-process is capped at the trials that can run and at the cores, saying so (issue 14 item 6);
each worker's threads are its share of the cores, and a trial cannot ask for more (issue 15)."""

import io
import itertools

import pytest

from hpsearch.search import capped_workers, worker_threads
from tftk.training_loop import trial_threads


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


@pytest.mark.parametrize("asked, trials, cores", list(itertools.product([1, 2, 3, 5, 64], [1, 2, 7, 100], [1, 2, 3, 8, 96])))
def test_workers_times_threads_fit_the_cores(asked, trials, cores):
    workers = capped_workers(asked, trials, cores, io.StringIO())
    threads = worker_threads(workers, cores)
    assert threads >= 1 and workers * threads <= cores
    assert workers * (threads + 1) > cores  # and no core is left out of the split


@pytest.mark.parametrize("asked, budget, threads", [
    (0, 0, 0),  # no hpsearch budget: the config's value (0: all cores)
    (4, 0, 4),
    (0, 1, 1),  # all cores asked: the worker's budget
    (4, 1, 1),  # more than the budget: cut to it (else workers x threads > cores)
    (2, 4, 2),  # fewer: kept
])
def test_a_trial_never_takes_more_threads_than_its_worker_budget(asked, budget, threads):
    assert trial_threads(asked, budget) == threads
