"""A split or shared run's caller stays on its core and its helpers on the others (tftk.kernels.placement)."""

from __future__ import annotations

import os
import threading

import pytest

from tftk.client import side_thread
from tftk.kernels import placement, work_sharing

pytestmark = pytest.mark.skipif(
    placement.current_cpu() is None or len(os.sched_getaffinity(0)) < 2,
    reason="needs sched_getcpu and at least two usable cores")


def in_thread(fn):
    """fn's result, run in a fresh thread (affinity is per thread: the test process's stays as it is)."""
    box = {}
    thread = threading.Thread(target=lambda: box.update(result=fn()))
    thread.start()
    thread.join()
    return box["result"]


def test_a_pinned_caller_runs_on_its_core_until_released():
    def body():
        before = os.sched_getaffinity(0)
        pin = placement.pin_caller()
        during = os.sched_getaffinity(0)
        placement.release_caller(pin)
        return before, pin, during, os.sched_getaffinity(0), placement.pinned()
    before, pin, during, after, left = in_thread(body)
    assert pin == (before, pin[1]) and during == {pin[1]} and after == before and left is None


def test_a_thread_started_by_a_pinned_caller_gets_the_callers_cores():
    def body():
        pin = placement.pin_caller()
        with placement.unpinned():
            child = in_thread(lambda: os.sched_getaffinity(0))
        still = os.sched_getaffinity(0)
        placement.release_caller(pin)
        return pin, child, still
    pin, child, still = in_thread(body)
    assert child == pin[0] and still == {pin[1]}


def test_a_helper_keeps_off_the_callers_core_and_back():
    cores = os.sched_getaffinity(0)
    cpu = min(cores)

    def body():
        placement.keep_off((cores, cpu))
        off = os.sched_getaffinity(0)
        placement.keep_off(None)  # the next caller is not pinned
        return off, os.sched_getaffinity(0)
    off, back = in_thread(body)
    assert off == cores - {cpu} and back == cores


def test_a_split_runs_streams_on_two_cores_and_gives_the_caller_its_cores_back():
    def body():
        before = os.sched_getaffinity(0)
        job = side_thread.spawn(lambda: (placement.current_cpu(), os.sched_getaffinity(0)), [None], [], (), ())
        caller_cpu, caller_cores = placement.current_cpu(), os.sched_getaffinity(0)
        helper_cpu, helper_cores = side_thread.join(job)
        return before, caller_cpu, caller_cores, helper_cpu, helper_cores, os.sched_getaffinity(0)
    before, caller_cpu, caller_cores, helper_cpu, helper_cores, after = in_thread(body)
    assert caller_cores == {caller_cpu} and caller_cpu not in helper_cores and helper_cpu != caller_cpu
    assert after == before


def test_the_work_sharing_helper_keeps_off_a_pinned_callers_core():
    def body():
        pin = placement.pin_caller()
        caller, helper_came, seen = threading.get_ident(), threading.Event(), []

        def piece(index):  # the caller's pieces wait for the helper's first (a slow start takes none)
            if threading.get_ident() == caller:
                helper_came.wait(5.0)
            else:
                helper_came.set()
            return threading.get_ident(), os.sched_getaffinity(0)
        try:
            work_sharing.set_workers(2)
            work_sharing.run(8, piece, lambda i, value: seen.append(value))
        finally:
            work_sharing.set_workers(1)
            placement.release_caller(pin)
        helpers = {frozenset(cores) for ident, cores in seen if ident != threading.get_ident()}
        return pin, helpers
    pin, helpers = in_thread(body)
    assert helpers and all(pin[1] not in cores for cores in helpers)


def test_a_pin_left_by_an_interrupted_run_does_not_stick():
    """A run interrupted before it released its pin: the next run pins from the cores the thread had."""
    def body():
        before = os.sched_getaffinity(0)
        placement.pin_caller()  # never released
        pin = placement.pin_caller()
        placement.release_caller(pin)
        return before, os.sched_getaffinity(0)
    before, after = in_thread(body)
    assert after == before


def test_a_child_forked_by_a_pinned_caller_gets_its_cores_back():
    import multiprocessing
    fork = multiprocessing.get_context("fork")

    def body():
        pin = placement.pin_caller()
        queue = fork.SimpleQueue()
        child = fork.Process(target=lambda: queue.put(os.sched_getaffinity(0)))
        child.start()
        cores = queue.get()
        child.join()
        placement.release_caller(pin)
        return pin, cores
    pin, cores = in_thread(body)
    assert cores == pin[0]
