"""How many threads a step's kernels use: the session's bound, lowered while other work holds cores
or while the step is measured to run faster on one thread.

BLAS splits every product above a small size across its threads, and each call ends in a barrier:
when another process takes one of two cores, half of every call waits for a descheduled thread, a
scheduler time slice at a time. Measured on 2 cores with one busy-loop process beside it, a
2-thread LSTM step (about 170 products) went from 0.37 s at 1 thread to 3.0 s, the deep-MNIST step
from 0.69 to 2.6 s, while TF's work-stealing pool degrades gracefully. So before a step the
session measures the cores other processes keep busy (`/proc/stat`'s busy CPU time less this
process's, over the time since the last sample, smoothed over samples at most every
`SAMPLE_SECONDS`) and gives BLAS and Numba ``min(bound, cores - others)`` threads, at least 1; on a
quiet machine nothing changes.

That measure is a guess too: a neighbour that only bursts, a CPU quota, or a machine
loaded by short jobs can leave it low while a 2-thread step still collapses (on the shared 2-core
machine at load ~10, the bench_rnn LSTM step took 77-93 ms on 1 thread and 1.5-2.3 s on 2). So
each plan also keeps its recent step times per thread count (`StepTimes`): more threads run only
where they beat one thread by a margin, and the other count is measured again (a few steps, cut
short when it collapses) after a wait that doubles while it keeps losing at a cost (`RETRY_SECONDS` up
to `RETRY_MAX_SECONDS` of the plan's own step time; a loss whose measurement cost under
`RECHECK_BUDGET` of the wait keeps it), so a 2-thread step that collapses is retried rarely, one
measured slow while the process warms up is measured again at the shortest wait, and one that
recovers is found again within seconds of running. The first run of a plan (compilation)
is not counted.

Where a 2-thread step's CPU time goes (LeNet, `bench_training.py cnn64`, 2 cores): OpenBLAS's
helper thread spins after every call it shares until its timeout (2^28 cycles, ~0.1 s), so through
the whole step: forced to 2 threads, 32-48 ms of CPU per 15-24 ms step, 20 ms with
`OPENBLAS_THREAD_TIMEOUT=4` (which OpenBLAS reads only when it loads, before tftk can set it).
Numba's pool does no work in these steps (no parallel kernel runs). The products are split too
finely to gain: the Winograd layers make 64 small sgemms per kernel, each split in two and ended
by a barrier, and the 16->32 forward ran slower on two threads than on one. Under load the wall time of a step is the CPU share the scheduler gives it: TF's
two runnable threads get two shares where one thread gets one, which no thread count here wins back
(a 2-thread step that stalls at barriers gets less than one). Tried and not kept, measured on the
RNN products (128x156x512 and its gradients): OpenBLAS's `OPENBLAS_THREAD_TIMEOUT=4` (threads sleep
at once instead of spinning) was no better under contention (2-thread products 10-40x one thread's
time either way); splitting each product into row blocks taken in turn by two Python threads with
1-thread BLAS did not collapse under contention (about one thread's time) but on a quiet machine ran
at 1.0-1.1x one thread's speed where OpenBLAS's two threads give 1.1-1.9x.

A plan whose conv calls are cut in pieces (`tftk.kernels.work_sharing`: the caller and one helper
take pieces from a shared counter, and the caller computes a piece the helper is late with) can run a
2-thread step with the pieces on both threads and BLAS and Numba on one: no call ends in a barrier, so
a smaller gain is worth it (`SHARED_MARGIN`). Its 2-thread steps are measured both ways, shared or
BLAS's threads with the calls whole (deep-MNIST's big products may gain more there), and the faster
way runs (`share_calls`). On 2 cores LeNet's conv calls ran 1.1-1.4x faster shared than whole (each
piece ~30% slower beside the other, and Winograd transforms the filter once per piece), less than
TF's two threads give its step (12.5 -> 8.2 ms).

A plan whose per-example work runs on slices of its batch (`tftk.client.rows`: one slice per thread,
the slices' weight gradients added at the end) is measured the same way, as one more way with its
own function: no call ends in a barrier there either, and a slice the helper is late with is
overtaken. LeNet's 2-thread step: 5.7 ms sliced against 6.6 for its two-stream split and 8.0 on one
thread (in-process, 800 steps).

`TFTK_ADAPTIVE_THREADS=0` turns both adjustments off (the bound is then used as given).
"""

from __future__ import annotations

import os
import time

__all__ = ["effective_threads", "StepTimes", "step_threads", "usable_cores", "BLAS", "SHARE", "SPLIT", "ROWS"]

SAMPLE_SECONDS = 0.1
IDLE_SHARE = 0.5  # a sample's interval counts only where this process kept this much of a core busy
RETRY_SECONDS = 0.5  # first wait before the slower thread count is measured again
RETRY_MAX_SECONDS = 16.0  # the longest: the wait doubles at each loss that cost more than its budget
PROBE_STEPS = 3  # steps per measurement of a thread count; its median judges it
# the way a plan's 2-thread steps run now is judged by the median of its last this many steps (a way
# measured again, by its PROBE_STEPS): judged by its last 3, the 2-layer LSTM's split (35 ms) lost to
# the BLAS way's 38.9 whenever two steps in a row ran 39.6 ms, and the BLAS way then ran 64 steps
WAY_WINDOW = 9
MARGIN = 0.9  # more threads run only where their step takes at most this fraction of one thread's
# the same for 2-thread steps that share their conv calls (`tftk.kernels.work_sharing`): the second
# thread works only inside those calls and waits for no barrier, so a smaller gain is worth it
SHARED_MARGIN = 0.97
# ways of running a multi-thread step: BLAS's (and Numba's) threads inside each call; conv calls cut in
# pieces shared by two threads (`tftk.kernels.work_sharing`); the plan's steps in two streams
# (`tftk.client.streams`); the batch's per-example work in slices, one per thread (`tftk.client.rows`).
# Only the first waits at a barrier in every call.
BLAS, SHARE, SPLIT, ROWS = "blas", "share", "split", "rows"
WAY_MARGIN = {BLAS: MARGIN, SHARE: SHARED_MARGIN, SPLIT: SHARED_MARGIN, ROWS: SHARED_MARGIN}
ABANDON = 2.0  # a probe ends at its first step this many times slower than the other count's median
# OpenBLAS's worker spins this long after a product it shared (2^28 cycles): a step of another way
# starting sooner shares the second core with it. Measured on the deep-MNIST tutorial's 2-thread step:
# shared 23-24 ms, but 36 ms in the three steps after a BLAS-way step, so every re-measurement of the
# shared way lost, to one thread too; not counting those steps, 863 of 1,000 steps ran shared instead
# of 73, and the 1,000 steps took 26.1 s instead of 28.4. LeNet's split steps after a BLAS-way step ran
# 8.4-8.7 ms against 6.6-6.9 for 100-120 ms (2^28 cycles is 0.1 s at 2.6 GHz), hence the margin.
BLAS_SPIN_SECONDS = 0.15
# the first steps of a way, once a plan has several, are not counted (BLAS's too, though warm by then),
# each time it starts after other steps or after a pause: LeNet's first split steps took 11.7-12.4 ms and
# its first shared ones 14.1-14.8 against 6.7-7.5 settled, and judged by them a plan ran on one thread
# until its next retry (4-16 s of its steps later). Any 2-thread way runs slow for ~50 ms after a pause
# or a stretch on one thread (LeNet after 1.4 s of sleep: 6 steps at 8.5-9.5 ms against 6.5, though not
# after 1.4 s of other work in the process; after 60 steps on one thread, 6 split steps at 7.4-8.8 ms),
# which judged the running way by its window's slow steps and kept a benchmark's LeNet on one thread
# for a whole run (911 of 1,000 steps) when its 2-thread retries were judged by their warming steps.
# Not counted: the first WARM_STEPS steps of a way and those starting in its first WARM_SECONDS; a
# collapsing step counts at once. (One thread's first step after 2-thread ones, LeNet 9-11 ms against
# 7.7, is left to the median of its PROBE_STEPS: warming it would lengthen every 1-thread probe.)
WARM_STEPS = 2
WARM_SECONDS = 0.06
# a gap this long before a step counts as a pause (the plan's steps: back to back); a plan paused before
# every step (a GAN's two plans in turn, a slow input pipeline) warms after the first pause only, else
# none of its 2-thread steps would count and a collapsing second thread would never be found
PAUSE_SECONDS = 0.05
# a plan with several ways of running 2 threads measures a slower one again after this many of its
# steps, twice as many after each re-measurement it loses (up to MODE_RECHECK_MAX_STEPS). Every
# re-measurement costs more than its own steps where it ends a BLAS-way step: OpenBLAS's worker then
# spins through the next ~0.1 s of the faster way's steps (LeNet split 9.1-9.3 ms there against 7.3-7.6,
# the 2-layer LSTM's split 58 ms against 35); at a fixed 64 steps LeNet's 2-thread steps averaged
# 8.9 ms where its split ran 7.5.
MODE_RECHECK_STEPS = 64
MODE_RECHECK_MAX_STEPS = 4096
# and, from its second loss in a row (a first may be a measurement gone wrong: a plan's first steps run
# slow for ~1 s, LeNet's first split steps 9.2-9.7 ms against 6.5 settled), never sooner than its
# re-measurement costs at most this share of the plan's steps between: the
# cost is its measured steps' time over the winner's, and for the BLAS way the spin after it
# (BLAS_SPIN_COST of the winner's time). LeNet's BLAS way (7.5 ms against a 6.4 ms split) costs ~10 of
# the split's steps a re-measurement (5 steps 1.1 ms slower, then ~20 steps 2-3 ms slower in the spin),
# so it waits ~500 steps, not 64: at 64, 128, 256... its re-measurements, and the noisy wins resetting
# the wait to 64, kept LeNet's 2-thread steps at 7.0-7.3 ms where its split alone ran 6.4-6.6.
RECHECK_BUDGET = 0.01
BLAS_SPIN_COST = 0.06  # seconds: the spin window's steps of the faster way run ~1.4-1.7x slower
_SMOOTHING = 0.5  # weight of the newest sample in the running estimate of busy cores
_state: dict = {"at": -1.0, "others": 0.0, "cpu": None}
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100  # /proc/stat's units per second


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity; all the machine's where that is unknown)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _busy_seconds() -> float | None:
    """CPU seconds all cores have spent busy since boot (/proc/stat), or None where /proc says nothing."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != b"cpu" or len(fields) < 8:
        return None
    user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in fields[1:8])
    steal = int(fields[8]) if len(fields) > 8 else 0
    return (user + nice + system + irq + softirq + steal) / _TICKS


def _others_busy() -> float | None:
    """Cores that other processes kept busy since the last call: the machine's busy CPU time less this
    process's, over the wall time between (None at the first call, or where /proc says nothing).

    An average over the interval, not a count of runnable tasks at one instant: a process that is
    runnable for a moment (a benchmark's coordinator writing its next request, a shell) was counted as
    a whole busy core, and the 2-layer LSTM's interleaved benchmark rounds ran on one thread (56 ms
    against 37) because the coordinator was runnable whenever a round began. An interval in which this
    process used less than `IDLE_SHARE` of a core says nothing (None): other work spreads into idle
    cores, and a benchmark's other framework ran on both cores between tftk's rounds, whose first
    steps then ran on one thread."""
    busy, own, now = _busy_seconds(), time.process_time(), time.monotonic()
    last = _state.get("cpu")
    _state["cpu"] = None if busy is None else (busy, own, now)
    if busy is None or last is None or now - last[2] <= 0:
        return None
    if own - last[1] < IDLE_SHARE * (now - last[2]):
        return None  # this process mostly waited: other work spread into the idle cores (see above)
    return max((busy - last[0]) - (own - last[1]), 0.0) / (now - last[2])


def effective_threads(bound: int) -> int:
    """Threads for the next step: `bound` (0 = all cores) less the cores other work is using now."""
    cores = usable_cores()
    want = cores if bound <= 0 else bound
    if want <= 1 or os.environ.get("TFTK_ADAPTIVE_THREADS", "1") == "0":
        return want
    now = time.monotonic()
    if now - _state["at"] >= SAMPLE_SECONDS:
        sample = _others_busy()
        if sample is not None:
            first = _state["at"] < 0
            _state["others"] = sample if first else _SMOOTHING * sample + (1 - _SMOOTHING) * _state["others"]
        _state["at"] = now
    return max(1, min(want, int(cores - _state["others"] + 0.5)))


class StepTimes:
    """One plan's recent step times per thread count, the count that runs it, and when the other is
    measured again.

    More threads run only where they are faster by a margin (`MARGIN`): a 2-thread step costs twice
    the CPU time, and every one of its BLAS calls ends in a barrier that stalls whenever the second
    core is taken, so a few percent of wall time are not worth it (LeNet's step, measured on 2 cores:
    5-10% faster on two threads at twice the CPU). A count is judged by the median of its last
    `PROBE_STEPS` steps, so one step slowed by a neighbour does not decide."""

    def __init__(self) -> None:
        self.recent: dict[int, list[float]] = {}  # thread count -> its last PROBE_STEPS step times
        self.runs = 0
        self.wait = RETRY_SECONDS
        # the plan's own clock: the seconds its steps took (all but the compiling run). The losing count
        # is measured again after a wait on this clock, not on the wall's: a plan run now and then (an
        # eval plan, a benchmark's rounds interleaved with another framework's) otherwise re-measures at
        # every run once the wall time passed, and its probes cost a share of its steps no longer
        # bounded by the wait
        self.clock = 0.0
        self.retry_at = 0.0
        self.free = 1  # the largest count offered by the last choose()
        self.probing: int | None = None  # the count being measured in the coming steps
        # the count the last completed measurement chose (1, or > 1 for the free count): kept until the
        # next one, since a step's time drifts by 10-15% over seconds on a shared host, and judging the
        # running count's newest steps against the other's older ones flipped LeNet's 2-thread steps
        # (12% faster) to one thread and back every few steps
        self.decided: int | None = None
        self._probe_left = 0
        self._probe_spent, self._probe_steps = 0.0, 0  # the current measurement's seconds and steps
        self._extensions = 0  # more probes of the count: one per way of running it not measured yet
        # the ways its multi-thread steps can run (the newest first: measured first), the way the
        # current step runs, and each way's last step times (WAY_WINDOW of the running way's)
        self.ways: list[str] = [BLAS]
        self.way = BLAS
        self.by_way: dict[str, list[float]] = {BLAS: []}
        self._mode_steps = 0
        # per way: its steps between re-measurements, and the step of the plan when it is next measured
        # (0: being measured, judged when every way has its steps; -1: running, not due)
        self._recheck_every: dict[str, int] = {BLAS: MODE_RECHECK_STEPS}
        self._recheck_at: dict[str, int] = {BLAS: 0}
        self._running = BLAS  # the way the last judgement chose
        self._last: tuple[int, str] | None = None  # the last step's thread count and way
        self._last_end = 0.0  # and the wall clock at its end
        self._paused = False  # and whether it started after a pause (PAUSE_SECONDS)
        self._warm_left = 0  # steps not counted yet since the last switch or pause (WARM_STEPS)
        self._warm_until = 0.0  # and the wall clock before which a step starting is not counted
        self._remeasure = 0  # which way the next retry of `free` threads measures afresh (an index into ways)
        self._spin_until = 0.0  # the end of the last BLAS-way step plus BLAS_SPIN_SECONDS
        self._against_running = False  # the current probe of one thread answers `_running_slowed`

    @property
    def shares_work(self) -> bool:
        """Whether its steps cut kernel calls in pieces (`tftk.kernels.work_sharing`)."""
        return SHARE in self.ways

    def add_way(self, way: str) -> None:
        """Let the plan's multi-thread steps also run `way`: the next ones run it, measuring it."""
        if way not in self.ways:
            self.ways.insert(0, way)
            self.by_way[way] = []
            self._recheck_every[way], self._recheck_at[way] = MODE_RECHECK_STEPS, 0
            self.way = way

    def _median(self, threads: int) -> float:
        return _median(self.recent[threads])

    def preferred(self, free: int) -> int:
        """`free` where its measured steps beat one thread's by the margin of their way, else 1.

        A plan with several ways of running `free` threads (`choose_way`) is judged by the fastest, by
        its margin (`WAY_MARGIN`: a way without barriers needs a smaller gain): the steps that
        re-measure a slower way say nothing about the threads. Judged by all its 2-thread steps, a
        simulated LeNet (shared 13% faster than 1 thread, the BLAS way 5% slower) ran 23% of its steps on
        one thread, dropped there by each re-measurement of the BLAS way, and a plan whose BLAS way wins
        by 12% ran 40% of its steps on one thread (`test_thread_policy`)."""
        seconds, margin = self._many_threads(free)
        return free if seconds <= margin * self._median(1) else 1

    def _many_threads(self, free: int) -> tuple[float, float]:
        """The step time `free` threads are judged by (their fastest way's median) and its margin."""
        if len(self.ways) > 1:
            ways = [(_median(times), way) for way, times in self.by_way.items() if len(times) >= PROBE_STEPS]
            if ways:
                seconds, way = min(ways)
                return seconds, WAY_MARGIN[way]
        return self._median(free), MARGIN

    def _decision(self, free: int) -> int:
        """The count of the last completed measurement, unless the running count collapsed since (its
        last steps ABANDON times slower than the other's)."""
        best = self.preferred(free) if self.decided is None else (free if self.decided > 1 else 1)
        if self._count_collapsing(best, self._median(best)):
            best = self.decided = 1 if best > 1 else free
        return best

    def _running_steps(self, free: int) -> list[float]:
        """The last steps of the way `free` threads run (all their steps' for a plan with one way)."""
        return self.by_way[self._running] if len(self.ways) > 1 else self.recent.get(free, [])

    def _running_slowed(self, best: int, free: int) -> bool:
        """Whether `free` threads run but their running way's steps now take longer than one thread's
        last median by the way's margin (slower than one thread / margin: a band either side of the
        judgement, so a noisy step or two does not trigger it): then one thread is measured at once,
        against that way's steps (not the other ways', older), instead of at the next retry; where
        two threads still win, the retries go on as scheduled. Stretches of 0.5-1 s in which every
        2-thread way of LeNet ran 8.5-9.5 ms against one thread's 7.7-8.2 (the host's second core
        slowed) otherwise ran on two threads until the retry, and made its benchmark runs 1.01-1.12x
        TF's where the others ran 0.90-1.00x. Such a measurement costs little (one thread is likely
        the faster count then) and cannot repeat at once: it finds one thread faster, which then
        runs, or slower than the running way's steps by the margin. Not while a way is being
        measured, or its measurement not judged yet."""
        if best == 1 or not self.recent.get(1):
            return False
        if len(self.ways) > 1 and any(self._recheck_at[way] == 0 for way in self.ways):
            return False
        running = self._running_steps(free)
        return len(running) >= PROBE_STEPS and self._running_margin() * _median(running) > self._median(1)

    def _running_margin(self) -> float:
        """The margin the running way's steps must beat one thread's by (`WAY_MARGIN`; MARGIN with one way)."""
        return WAY_MARGIN[self._running] if len(self.ways) > 1 else MARGIN

    def _probe(self, threads: int) -> int:
        self.probing, self._probe_left = threads, PROBE_STEPS
        self._probe_spent, self._probe_steps = 0.0, 0
        self._extensions = len(self.ways) - 1
        self.recent[threads] = []
        return threads

    def choose(self, free: int) -> int:
        """`free` (> 1) threads or 1: the preferred count, the other while it is measured again."""
        self.free = free
        if self.probing in (free, 1):
            return self.probing
        self.probing = None
        if self.runs == 0:
            return free  # the first run compiles: not measured
        for threads in (free, 1):
            if not self.recent.get(threads):
                return self._probe(threads)
        best = self._decision(free)
        due = self.clock >= self.retry_at
        self._against_running = not due and self._running_slowed(best, free)
        if not due and not self._against_running:
            return best
        if due:  # (an extra measurement keeps the scheduled retry, should two threads still win)
            self.retry_at = self.clock + self.wait  # until record() sets it from the probe's outcome
        if best == 1 and len(self.ways) > 1:
            # the retries of `free` threads measure the plan's ways afresh: the way that ran last (the
            # fastest at the last judgement) every time, and one other in turn (the newest first).
            # Otherwise a way whose steps lost once (LeNet's first shared steps, warming up: 15.8, 11.1,
            # 9.8 ms against 8.3 on one thread, then 7.7) is judged by them for good; and after a slow
            # stretch of the host, the fastest way waited for its turn while the others' retries lost
            # and doubled the wait (LeNet: 59-221 steps on one thread at a time, 8.6 ms, where its split
            # ran 7.0 again). Simulated LeNet (split 7.0, shared 8.2, BLAS 8.8, one thread 8.6 ms, +-5%),
            # mean step with stretches of all 2-thread ways at 9.5-10.2 ms: 2 x 50 steps 7.25 -> 7.17 ms,
            # 3 of 100-200 steps 7.52 -> 7.44; after 150 steps collapsed to 20 ms, the split runs again
            # 46 steps after the stretch where it took 289 (`test_thread_policy`)
            others = [way for way in self.ways if way != self._running]
            for way in (self._running, others[self._remeasure % len(others)]):
                self.by_way[way], self._recheck_at[way] = [], 0
            self._remeasure += 1
        return self._probe(1 if best == free else free)

    def choose_way(self) -> str:
        """For a multi-thread step of a plan with several ways of running it (`ways`): which runs. A plan
        sharing its conv calls may gain more from BLAS's threads on deep-MNIST's 3136x1024 products; a
        split plan's streams may lose to either. Each way is measured over `PROBE_STEPS` steps and the
        fastest median runs; a slower way is measured again after `MODE_RECHECK_STEPS` 2-thread steps of
        the plan, after twice as many each time it loses again, and from its second loss no sooner than
        its re-measurement costs `RECHECK_BUDGET` of the steps between (a way that wins is back to the
        shortest wait): load on the machine changes which way wins, but a way that keeps losing costs each time. The way
        chosen runs until the next judgement (or until its steps collapse, ABANDON times slower than
        another's), not against the others' older steps at every step (see `decided`)."""
        self._mode_steps += 1
        for way in self.ways:  # due to be measured again (0: being measured, judged when all are)
            if way not in (self.way, self._running) and 0 < self._recheck_at[way] <= self._mode_steps:
                self.by_way[way], self._recheck_at[way] = [], 0
        for way in self.ways:
            if len(self.by_way[way]) < PROBE_STEPS:
                self.way = way
                return way
        best = min(self.ways, key=lambda way: _median(self.by_way[way]))
        running = self._running
        collapsing = self._way_collapsing(_median(self.by_way[running]), running)
        if collapsing or any(self._recheck_at[way] == 0 for way in self.ways):  # a measurement ended: judge
            for way in self.ways:
                if way == best:  # runs: not due (0 would judge the ways again at every step)
                    self._recheck_every[way], self._recheck_at[way] = MODE_RECHECK_STEPS, -1
                elif self._recheck_at[way] == 0 or way == running:  # just measured (or ran), and lost
                    wait = self._recheck_every[way]
                    if wait > MODE_RECHECK_STEPS:  # a second loss in a row: not a measurement gone wrong
                        wait = max(wait, self._affordable_wait(way, best))
                    self._recheck_at[way] = self._mode_steps + wait
                    self._recheck_every[way] = min(2 * self._recheck_every[way], MODE_RECHECK_MAX_STEPS)
            running = best
        self._running = self.way = running
        return self.way

    def _affordable_wait(self, way: str, best: str) -> int:
        """Steps of the plan between re-measurements of `way`, losing to `best`, such that they cost at
        most RECHECK_BUDGET of the time (in steps of `best`: its measured steps' excess, BLAS's spin)."""
        winner = _median(self.by_way[best])
        if winner <= 0:
            return MODE_RECHECK_STEPS
        cost = _measured_steps(winner) * max(_median(self.by_way[way]) / winner - 1.0, 0.0)
        if way == BLAS:
            cost += BLAS_SPIN_COST / winner
        return min(int(cost / RECHECK_BUDGET), MODE_RECHECK_MAX_STEPS)

    def _count_collapsing(self, threads: int, seconds: float) -> bool:
        """Whether a step of `threads` threads took ABANDON times the other count's median."""
        rival = self.recent.get(1 if threads > 1 else self.free)
        return bool(rival) and seconds > ABANDON * _median(rival)

    def _way_collapsing(self, seconds: float, way: str) -> bool:
        """Whether `seconds` of a multi-thread `way` is ABANDON times another measured way's median."""
        others = [_median(times) for other, times in self.by_way.items()
                  if other != way and len(times) >= PROBE_STEPS]
        return bool(others) and seconds > ABANDON * min(others)

    def record(self, threads: int, seconds: float, now: float, shared: bool = False) -> None:
        """Count one step's wall time at `threads` threads (the plan's first run, compiling, is not);
        `now`: the wall clock at its end; `shared`: the step made kernel calls big enough to cut in pieces."""
        first_sharing = shared and not self.shares_work
        if first_sharing:
            self.add_way(SHARE)
        self.runs += 1
        if self.runs == 1:
            return
        self.clock += seconds
        if threads == self.probing:  # what the measurement costs, its warming steps included
            self._probe_spent, self._probe_steps = self._probe_spent + seconds, self._probe_steps + 1
        key = (threads, self.way if threads > 1 else "")
        start = now - seconds
        paused = start - self._last_end > PAUSE_SECONDS
        if key != self._last or (paused and not self._paused):  # (a plan paused before every step: once)
            self._warm_left, self._warm_until = WARM_STEPS, start + WARM_SECONDS
        self._last, self._last_end, self._paused = key, now, paused
        if threads > 1 and self.way == BLAS:
            self._spin_until = now + BLAS_SPIN_SECONDS
        elif threads > 1 and start < self._spin_until:
            return  # BLAS's worker still spun on the second core: says nothing of this way
        several = len(self.ways) > 1 and not first_sharing
        way_collapsing = threads > 1 and several and self._way_collapsing(seconds, self.way)
        if threads > 1 and several and (self._warm_left > 0 or start < self._warm_until) \
                and not (way_collapsing or self._count_collapsing(threads, seconds)):
            self._warm_left = max(self._warm_left - 1, 0)
            return  # a way's first steps: its helper thread starting, its buffers first touched, a core waking
        if threads > 1 and several:
            mine = self.by_way[self.way]
            mine.append(seconds)
            del mine[:-WAY_WINDOW]
            if way_collapsing:
                mine.extend([seconds] * (PROBE_STEPS - len(mine)))  # collapsing: measured enough
        times = self.recent.setdefault(threads, [])
        times.append(seconds)
        del times[:-PROBE_STEPS]
        if threads != self.probing:
            return
        self._probe_left -= 1
        if self._count_collapsing(threads, seconds):
            self._probe_left = 0  # a collapsing count is not run for a whole probe
        elif self._probe_left == 0 and threads > 1 and self._extensions > 0 \
                and any(len(self.by_way[w]) < PROBE_STEPS for w in self.ways):
            self._extensions -= 1  # a count is judged by its best way: its probe measures each unmeasured one
            self._probe_left = PROBE_STEPS
        if self._probe_left > 0:
            return
        self.probing = None
        if not self.recent.get(1) or not self.recent.get(self.free):
            return  # the first count measured: nothing to compare yet
        running = self._running_steps(self.free)
        against_running, self._against_running = self._against_running and bool(running), False
        if against_running:  # one thread measured against the running way's newest steps
            self.decided = self.free if _median(running) <= self._running_margin() * self._median(1) else 1
            if self.decided != threads:  # two threads still win: the retries go on as scheduled
                return
        else:
            self.decided = self.preferred(self.free)
        if self.decided == threads:
            self.wait = RETRY_SECONDS  # a win: the other count is measured again soon
        else:  # a loss doubles the wait where the measurement cost more than the budget of its wait
            winner = self._median(1) if self.decided == 1 else self._many_threads(self.free)[0]
            cost = self._probe_spent - self._probe_steps * winner
            if cost <= 0 or cost > RECHECK_BUDGET * self.wait:  # (<= 0: faster, but not by the margin)
                self.wait = min(self.wait * 2, RETRY_MAX_SECONDS)
        self.retry_at = self.clock + self.wait


def _median(times: list[float]) -> float:
    return sorted(times)[len(times) // 2]


def _measured_steps(step_seconds: float) -> float:
    """The steps one measurement of a 2-thread way takes: its warming steps and PROBE_STEPS."""
    return PROBE_STEPS + max(WARM_STEPS, WARM_SECONDS / max(step_seconds, 1e-9))


def step_threads(bound: int, times: StepTimes | None = None) -> int:
    """Threads for the next run of a plan: `effective_threads(bound)`, or 1 where `times` (the plan's
    measured steps) says one thread runs it faster now.

    A plan that shares its conv calls follows the run queue too: offered 2 threads beside other work,
    LeNet's shared steps ran 1.15-1.4x slower than on 1 thread (not collapsing, but losing), and
    deep-MNIST's probes of both ways of running 2 threads (the BLAS way collapses) cost it 1.66x over
    a measurement (76.7 against 46.2 ms a step, load ~1.9)."""
    free = effective_threads(bound)
    if free <= 1 or times is None or os.environ.get("TFTK_ADAPTIVE_THREADS", "1") == "0":
        return free
    return times.choose(free)
