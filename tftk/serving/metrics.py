"""The server's `/metrics` in Prometheus' text exposition format (version 0.0.4).

Requests (by API, method, model and status code), a request latency histogram, a batch size
histogram, the loaded versions, and with --stage-times the CPU time by request stage. Thread-safe; rendering reads a consistent snapshot.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import defaultdict
from typing import Callable

from tftk.serving import stage_times

__all__ = ["Metrics", "LATENCY_BUCKETS", "BATCH_BUCKETS"]

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


class _Histogram:
    def __init__(self, buckets: tuple[float, ...]):
        self.buckets = buckets
        self.counts = [0] * len(buckets)
        self.total, self.count = 0.0, 0

    def observe(self, value: float) -> None:
        index = bisect_left(self.buckets, value)  # the first bucket with value <= bound
        if index < len(self.counts):
            self.counts[index] += 1
        self.total += value
        self.count += 1

    def lines(self, name: str, labels: str) -> list[str]:
        out, running = [], 0
        sep = "," if labels else ""
        for bound, count in zip(self.buckets, self.counts):
            running += count
            out.append(f'{name}_bucket{{{labels}{sep}le="{bound:g}"}} {running}')
        out.append(f'{name}_bucket{{{labels}{sep}le="+Inf"}} {self.count}')
        out.append(f"{name}_sum{{{labels}}} {self.total!r}" if labels else f"{name}_sum {self.total!r}")
        out.append(f"{name}_count{{{labels}}} {self.count}" if labels else f"{name}_count {self.count}")
        return out


def _labels(**values: str) -> str:
    return ",".join(f'{key}="{_escape(str(value))}"' for key, value in values.items())


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class Metrics:
    """Counters and histograms; `loaded_versions` is asked for the versions at render time."""

    def __init__(self, loaded_versions: Callable[[], dict[str, list[int]]] = dict):
        self._lock = threading.Lock()
        self._requests: dict[str, int] = defaultdict(int)
        self._latency: dict[str, _Histogram] = {}
        self._batches: dict[str, _Histogram] = {}
        self._rejected: dict[str, int] = defaultdict(int)
        self._loaded_versions = loaded_versions
        self._request_labels: dict[tuple, tuple[str, str]] = {}

    def request(self, api: str, method: str, model: str, code: int, seconds: float) -> None:
        names = (api, method, model, code)
        labels = self._request_labels.get(names)
        if labels is None:  # label strings built once per combination (a request's cost matters)
            labels = self._request_labels[names] = (_labels(api=api, method=method, model=model, code=code),
                                                    _labels(api=api, method=method, model=model))
        key, timing = labels
        with self._lock:
            self._requests[key] += 1
            self._latency.setdefault(timing, _Histogram(LATENCY_BUCKETS)).observe(seconds)

    def batch(self, model: str, size: int) -> None:
        with self._lock:
            self._batches.setdefault(_labels(model=model), _Histogram(BATCH_BUCKETS)).observe(size)

    def rejected(self, api: str, reason: str) -> None:
        with self._lock:
            self._rejected[_labels(api=api, reason=reason)] += 1

    def render(self) -> str:
        with self._lock:
            lines = ["# HELP tftk_serving_requests_total Requests answered, by API, method, model and status code.",
                     "# TYPE tftk_serving_requests_total counter"]
            lines += [f"tftk_serving_requests_total{{{key}}} {count}" for key, count in sorted(self._requests.items())]
            lines += ["# HELP tftk_serving_request_latency_seconds Time from request read to response ready.",
                      "# TYPE tftk_serving_request_latency_seconds histogram"]
            for key, histogram in sorted(self._latency.items()):
                lines += histogram.lines("tftk_serving_request_latency_seconds", key)
            lines += ["# HELP tftk_serving_batch_size Examples per batched Session.run.",
                      "# TYPE tftk_serving_batch_size histogram"]
            for key, histogram in sorted(self._batches.items()):
                lines += histogram.lines("tftk_serving_batch_size", key)
            lines += ["# HELP tftk_serving_rejected_total Requests refused before running (queue full, too large, "
                      "too slow).", "# TYPE tftk_serving_rejected_total counter"]
            lines += [f"tftk_serving_rejected_total{{{key}}} {count}" for key, count in sorted(self._rejected.items())]
        lines += ["# HELP tftk_serving_model_version_loaded 1 for each model version in service.",
                  "# TYPE tftk_serving_model_version_loaded gauge"]
        for model, versions in sorted(self._loaded_versions().items()):
            lines += [f"tftk_serving_model_version_loaded{{{_labels(model=model, version=v)}}} 1" for v in versions]
        if stage_times.enabled():
            lines += ["# HELP tftk_serving_stage_cpu_seconds_total Server CPU time by request stage (--stage-times).",
                      "# TYPE tftk_serving_stage_cpu_seconds_total counter"]
            lines += [f"tftk_serving_stage_cpu_seconds_total{{{_labels(stage=stage)}}} {seconds!r}"
                      for stage, seconds in stage_times.totals().items()]
        return "\n".join(lines) + "\n"
