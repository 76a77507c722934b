"""The step's thread count: the session's bound, lowered while other processes hold cores."""

import pytest

from tftk.client import threads


@pytest.fixture
def machine(monkeypatch):
    """A fake 2-core machine whose count of other runnable tasks the test sets."""
    state = {"others": 0}
    monkeypatch.setattr(threads, "_cores", lambda: 2)
    monkeypatch.setattr(threads, "_others_running", lambda: state["others"])
    monkeypatch.setattr(threads, "_state", {"at": -1.0, "others": 0.0})
    monkeypatch.setattr(threads, "SAMPLE_SECONDS", 0.0)
    monkeypatch.delenv("TFTK_ADAPTIVE_THREADS", raising=False)
    return state


@pytest.mark.parametrize("bound,others,expected", [
    (2, 0, 2), (0, 0, 2), (2, 1, 1), (2, 3, 1), (1, 0, 1), (1, 3, 1), (0, 1, 1), (4, 0, 2),
])
def test_threads_follow_free_cores(machine, bound, others, expected):
    machine["others"] = others
    assert threads.effective_threads(bound) == expected


def test_threads_come_back_when_the_other_work_ends(machine):
    machine["others"] = 1
    assert threads.effective_threads(2) == 1
    machine["others"] = 0
    seen = [threads.effective_threads(2) for _ in range(4)]
    assert seen == [2, 2, 2, 2]


def test_one_momentary_spike_does_not_drop_a_thread(machine):
    for others in (0, 0, 0):
        machine["others"] = others
        threads.effective_threads(2)
    machine["others"] = 1
    assert threads.effective_threads(2) == 2  # estimate 0.5 busy cores
    assert threads.effective_threads(2) == 1  # 0.75: the other work stays



def test_adjustment_can_be_turned_off(machine, monkeypatch):
    machine["others"] = 5
    monkeypatch.setenv("TFTK_ADAPTIVE_THREADS", "0")
    assert threads.effective_threads(2) == 2


def test_own_threads_are_not_counted_as_other_work():
    assert threads._own_running() >= 1
    others = threads._others_running()
    assert others is None or others >= 0
