"""State that lives for one `Session.run`, seen alike by every thread working for that run.

Some kernels hand values to later kernels of the same run outside the plan's dataflow: a While loop
records each iteration for its gradient kernel (`tftk.ops.while_loop`), an imported TF1 stack keeps
what its pushes stored for its pops, a TensorArray's gradient arrays collect their writes. Kept once
per session, two runs of one session on two threads (TF1 sessions may be run from several threads at
once: asynchronous "hogwild" training, a server answering requests side by side) overwrote each
other's records. Two threads running a dynamic_rnn's gradients of 5 and 9 steps, 300 runs each: 45
runs failed ("index 10 is out of bounds") and 12 returned the other thread's gradients, silently.

So each run has a token of its own (`scope`, entered by the session around a run), which the kernel
context keys such state by (`KernelContext.run_resource`), and a helper thread working for a run (a
split plan's second stream, a loop pipeline's second stage: `tftk.client.side_thread`) takes on its
caller's token while it does (`adopted`). The state goes with the token at the end of the run, so a
loop's record of its iterations no longer outlives the run either. A thread outside any session run
(a sub-plan called directly) has a token of its own for as long as it lives.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator

__all__ = ["Run", "scope", "current", "adopted"]

_local = threading.local()


class Run:
    """One run's token: what the kernel context stores for the run (`values`, keyed as it likes)."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: dict[Any, Any] = {}


def current() -> Run:
    """The calling thread's run (its own lasting token outside any run)."""
    run = getattr(_local, "run", None)
    if run is None:
        run = _local.run = Run()
    return run


@contextlib.contextmanager
def adopted(run: Run) -> Iterator[Run]:
    """Within: the calling thread works for `run` (a run nested in it, from a py_func, has its own)."""
    previous = getattr(_local, "run", None)
    _local.run = run
    try:
        yield run
    finally:
        _local.run = previous


def scope() -> contextlib.AbstractContextManager[Run]:
    """Within: the calling thread works for a new run."""
    return adopted(Run())
