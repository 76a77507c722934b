"""`ConfigProto`, `GPUOptions`, `RunOptions`-free session configuration, and thread bounding."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tftk.client.threads import StepTimes

__all__ = ["ConfigProto", "GPUOptions", "GraphOptions", "OptimizerOptions", "apply_thread_limits"]


@dataclass
class GPUOptions:
    """Accepted for compatibility: tftk runs on the CPU, so these only document intent."""

    allow_growth: bool = False
    per_process_gpu_memory_fraction: float = 0.0
    visible_device_list: str = ""


@dataclass
class OptimizerOptions:
    do_common_subexpression_elimination: bool = True
    do_constant_folding: bool = True
    opt_level: int = 0


@dataclass
class GraphOptions:
    optimizer_options: OptimizerOptions = field(default_factory=OptimizerOptions)
    build_cost_model: int = 0


@dataclass
class ConfigProto:
    """Session configuration (TF1 field names). Thread counts of 0 mean "all cores".

    intra_op_parallelism_threads bounds the threads of a step: BLAS's and Numba's inside kernels, or
    the two streams of a split plan (`tftk.client.streams`) and the two stages of a pipelined loop
    (`tftk.ops.loop_stages`), whichever the session measures faster. inter_op_parallelism_threads=1
    keeps every op on one stream (no split plans, no pipelined loops); any other value allows them.
    """

    intra_op_parallelism_threads: int = 0
    inter_op_parallelism_threads: int = 0
    log_device_placement: bool = False
    allow_soft_placement: bool = False
    gpu_options: GPUOptions = field(default_factory=GPUOptions)
    graph_options: GraphOptions = field(default_factory=GraphOptions)
    device_count: dict = field(default_factory=dict)
    operation_timeout_in_ms: int = 0
    use_per_session_threads: bool = False


_blas: dict[str, Any] = {"modules": -1, "libraries": []}


def _blas_libraries() -> list[Any]:
    """threadpoolctl's controllers of the loaded BLAS libraries, found again when modules were imported
    since the last search (a new extension may have loaded another BLAS); a search costs ~1 ms."""
    if _blas["modules"] != len(sys.modules):
        from threadpoolctl import ThreadpoolController  # cheap, but only when a limit is asked for
        _blas["libraries"] = ThreadpoolController().select(user_api="blas").lib_controllers
        _blas["modules"] = len(sys.modules)
    return _blas["libraries"]


def apply_thread_limits(threads: int, step_times: StepTimes | None = None) -> int:
    """Bound BLAS, Numba and the work-sharing kernels for the calling thread to `threads` threads (0: the
    environment's or all cores), fewer while other processes hold cores or while `step_times` (the
    plan's measured steps) says one thread runs it faster (`tftk.client.threads`); returns the count
    applied. Where a 2-thread step of the plan runs another way than BLAS's threads (`step_times.way`:
    its conv calls shared by two threads, or its steps split in two streams), BLAS and Numba get one.

    The counts in force are read back before every step (well under a microsecond each), not
    remembered: other code sets them too (hpsearch's workers bound every library before each trial,
    users call threadpoolctl), and a remembered count then left BLAS on two threads while the step
    was timed as one: `tftk hpsearch --nb-process 1` on the ConvNet config took 3.5x the CPU time."""
    from tftk.client.threads import BLAS, ROWS, SHARE, step_threads
    from tftk.kernels import work_sharing
    if threads <= 0:
        threads = int(os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or 0)
    threads = step_threads(threads, step_times)
    # A plan whose conv calls are cut in pieces runs them on the work-sharing threads, and BLAS and
    # Numba's parallel loops on one thread throughout its step: OpenBLAS's worker spins on the other
    # core after every product it shares (a helper beside it gets half a core), and both end each
    # call in a barrier that stalls on a busy core (`tftk.kernels.work_sharing`). A split plan's two
    # streams run each kernel on one thread likewise.
    # numpy's OpenBLAS ignores the setting from any thread but the main one: a session running in
    # another thread then runs its steps BLAS's way, where BLAS stays on more threads.
    way = step_times.choose_way() if threads > 1 and step_times is not None and len(step_times.ways) > 1 else BLAS
    blas_threads = 1 if way != BLAS else threads
    for library in _blas_libraries():
        if library.get_num_threads() != blas_threads:
            library.set_num_threads(blas_threads)
            if library.get_num_threads() != blas_threads:
                way, blas_threads = BLAS, threads
    work_sharing.set_workers(threads if way in (SHARE, ROWS) else 1)
    if threads > 1 and step_times is not None:
        step_times.way = way  # the way this step runs, as record() counts it
    # Numba is imported by the first kernel it compiles (tftk.kernels.jit), maybe after this thread's
    # limits were set: the next run then bounds its threads too. Its pool keeps the size it was launched
    # with (all cores, or the user's NUMBA_NUM_THREADS): the variable is never written here, since Numba
    # reads it again at every compilation and raises once its threads run ("Cannot set
    # NUMBA_NUM_THREADS to a different value once the threads have been launched"), and a first
    # session's bound of 1 would have capped every later session's pool at one thread.
    if "numba" in sys.modules:
        import numba  # waits while another thread is still importing it
        wanted = min(blas_threads, numba.config.NUMBA_NUM_THREADS)
        if numba.get_num_threads() != wanted:
            numba.set_num_threads(wanted)
    return threads
