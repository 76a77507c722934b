"""Which versions are loaded: each served model polls its source, loads new versions, unloads old ones.

TF Serving's availability-preserving order: a new version is loaded and made available before the
ones it replaces are taken out of service. A version taken out of service stops receiving new
requests at once, and is closed when the last request using it ends, so no request in flight fails
and none waits for a load (loads run on the poll thread, off the request path).
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterable, Iterator

from tftk.serving.servable import NotFound, Servable
from tftk.serving.sources import ModelSource

__all__ = ["VersionPolicy", "VersionStatus", "ServedModel", "ModelManager", "MAX_LOAD_ATTEMPTS", "freeze_heap"]

MAX_LOAD_ATTEMPTS = 5  # per version and location, as TF Serving's max_num_load_retries
_ENDED_KEPT = 16  # ended versions remembered for GetModelStatus
_log = logging.getLogger("tftk.serving")


@dataclass(frozen=True)
class VersionPolicy:
    """TF Serving's ServableVersionPolicy: the latest N versions (default 1), all, or specific ones."""

    latest: int | None = 1
    specific: frozenset[int] | None = None

    def select(self, versions: Iterable[int]) -> set[int]:
        found = sorted(versions)
        if self.specific is not None:
            return set(found) & set(self.specific)
        return set(found if self.latest is None else found[-self.latest:] if self.latest > 0 else [])


@dataclass
class VersionStatus:
    """GetModelStatus's ModelVersionStatus: LOADING, AVAILABLE or END, with the error of a failed load."""

    version: int
    state: str
    error: str = ""


class _Loaded:
    """A servable in service or draining: `refs` counts the requests using it."""

    def __init__(self, servable: Servable, location: str):
        self.servable, self.location = servable, location
        self.refs, self.retired = 0, False


class ServedModel:
    """One model name: its source, version policy, labels, and the versions currently loaded."""

    def __init__(self, name: str, source: ModelSource, policy: VersionPolicy = VersionPolicy(),
                 labels: dict[str, int] | None = None):
        self.name, self.source, self.policy = name, source, policy
        self.labels = dict(labels or {})
        self._lock = threading.Lock()
        self._loaded: dict[int, _Loaded] = {}
        self._status: OrderedDict[int, VersionStatus] = OrderedDict()
        self._attempts: dict[tuple[int, str], int] = {}

    # ---- the poll thread's side ---------------------------------------------------------------------
    def poll(self) -> bool:
        """Load the versions the policy wants that are not loaded (newest first), then retire the rest.

        Returns whether the versions in service changed."""
        try:
            found = self.source.versions()
        except Exception as error:  # an unreadable folder now may be readable at the next poll
            _log.warning("model %s: cannot list versions: %s", self.name, error)
            return False
        wanted = self.policy.select(found)
        before = set(self._loaded)
        for version in sorted(wanted - before, reverse=True):
            self._load(version, found[version])
        with self._lock:
            ready = [v for v in wanted if v in self._loaded]
            retired = [v for v in self._loaded if v not in wanted and ready]
            for version in retired:
                self._retire(version)
            return set(self._loaded) != before

    def _load(self, version: int, location: str) -> None:
        key = (version, location)
        if self._attempts.get(key, 0) >= MAX_LOAD_ATTEMPTS:
            return
        self._set_status(version, "LOADING")
        started = time.perf_counter()
        try:
            servable = self.source.load(self.name, version, location)
        except Exception as error:
            self._attempts[key] = self._attempts.get(key, 0) + 1
            self._set_status(version, "END", f"{type(error).__name__}: {error}")
            _log.error("model %s version %d: load failed (attempt %d of %d): %s", self.name, version,
                       self._attempts[key], MAX_LOAD_ATTEMPTS, error)
            return
        with self._lock:
            self._loaded[version] = _Loaded(servable, location)
            self._set_status(version, "AVAILABLE")
        _log.info("model %s version %d: available (loaded in %.2f s)", self.name, version,
                  time.perf_counter() - started)

    def _retire(self, version: int) -> None:
        """Take `version` out of service (lock held); closed now or when its last request ends."""
        entry = self._loaded.pop(version)
        entry.retired = True
        self._set_status(version, "END")
        _log.info("model %s version %d: unloaded", self.name, version)
        if entry.refs == 0:
            entry.servable.close()

    def _set_status(self, version: int, state: str, error: str = "") -> None:
        self._status[version] = VersionStatus(version, state, error)
        self._status.move_to_end(version)
        ended = [v for v, s in self._status.items() if s.state == "END"]
        for old in ended[:max(0, len(ended) - _ENDED_KEPT)]:
            del self._status[old]

    def close(self) -> None:
        with self._lock:
            for version in list(self._loaded):
                self._retire(version)

    # ---- the request side ---------------------------------------------------------------------------
    @contextmanager
    def acquire(self, version: int | None = None, label: str | None = None) -> Iterator[Servable]:
        """The servable for `version`, `label` or the newest loaded version, held until the block ends."""
        entry = self.checkout(version, label)
        try:
            yield entry.servable
        finally:
            self.release(entry)

    def checkout(self, version: int | None = None, label: str | None = None) -> _Loaded:
        """`acquire` without a context manager (for a request finished in a callback): the entry whose
        `servable` the caller uses until it calls `release(entry)`, exactly once."""
        with self._lock:
            if label:
                if label not in self.labels:
                    raise NotFound(f"Unrecognized servable version label: {label}")
                version = self.labels[label]
            if version is None:
                if not self._loaded:
                    raise NotFound(f"Servable not found for request: Latest({self.name})")
                version = max(self._loaded)
            entry = self._loaded.get(version)
            if entry is None:
                raise NotFound(f"Servable not found for request: Specific({self.name}, {version})")
            entry.refs += 1
        return entry

    def release(self, entry: _Loaded) -> None:
        """End a `checkout`: the version closes now if it was retired meanwhile and this was its last user."""
        with self._lock:
            entry.refs -= 1
            close = entry.retired and entry.refs == 0
        if close:
            entry.servable.close()

    def versions(self) -> list[int]:
        """The versions in service, oldest first."""
        with self._lock:
            return sorted(self._loaded)

    def status(self, version: int | None = None) -> list[VersionStatus]:
        """Status of `version`, or of every version this model has loaded or tried to (NotFound if none)."""
        with self._lock:
            if version is None:
                found = sorted(self._status.values(), key=lambda s: s.version)
            else:
                found = [self._status[version]] if version in self._status else []
        if not found:
            spec = f"Specific({self.name}, {version})" if version is not None else f"Latest({self.name})"
            raise NotFound(f"Could not find any versions of model {self.name}" if version is None
                           else f"Servable not found for request: {spec}")
        return found


def freeze_heap() -> None:
    """Collect garbage once, then move every surviving object out of the cyclic collector's reach (gc.freeze).

    A loaded model is ~140,000 Python objects (graph, plans, Numba dispatchers). Left in the
    collected generations, each full collection walks them all (130 ms on the ConvNet, a pause
    for every request in flight) and collections took ~20% of a batched request's CPU; frozen, a
    collection walks only what requests left behind. Run after each change of the versions in
    service: the unfreeze and collection reclaim the cycles of versions unloaded since the last
    change, so memory stays bounded as versions come and go.
    """
    gc.unfreeze()
    gc.collect()
    gc.freeze()


class ModelManager:
    """The served models, polled every `poll_wait_seconds` on one background thread.

    As TF Serving's --file_system_poll_wait_seconds: 0 polls once at start, a negative value never.
    `freeze`: after each change of the versions in service, `freeze_heap()` (for a server process,
    which owns its heap; a test process calling gc.collect() expects its own objects collected).
    """

    def __init__(self, models: Iterable[ServedModel], poll_wait_seconds: float = 1.0, freeze: bool = False):
        self.models = {model.name: model for model in models}
        self.poll_wait_seconds, self.freeze = poll_wait_seconds, freeze
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def get(self, name: str) -> ServedModel:
        if name not in self.models:
            raise NotFound(f"Servable not found for request: Latest({name})")
        return self.models[name]

    def poll(self) -> None:
        changed = [model.poll() for model in self.models.values()]
        if self.freeze and any(changed):
            freeze_heap()

    def start(self) -> None:
        """Poll once now (so versions present at start are served at once), then on a daemon thread."""
        if self.poll_wait_seconds < 0:
            return
        self.poll()
        if self.poll_wait_seconds > 0:
            self._thread = threading.Thread(target=self._run, name="tftk-serving-poll", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.poll_wait_seconds):
            try:
                self.poll()
            except Exception:  # the poll thread must outlive any one bad poll
                _log.exception("poll failed")

    def stop(self) -> None:
        """Stop polling and unload everything (requests still holding a version finish first)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        for model in self.models.values():
            model.close()
