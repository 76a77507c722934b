"""`tf.summary.FileWriter`: queue Event protos and append them to a TensorBoard event file.

A background thread takes serialized events off a bounded queue (`max_queue`; `add_*` blocks when
it is full, as in TF1), frames them as TFRecords and flushes the file every `flush_secs`.
Every writer gets its own file, named so that two writers created in the same second (in this
process or another) never share one; `FileWriterCache` hands out one writer per directory.
"""

from __future__ import annotations

import atexit
import itertools
import os
import queue
import socket
import threading
import time
import weakref

from tensorboardX.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata
from tensorboardX.proto.summary_pb2 import Summary

from tftk.framework.errors import FailedPreconditionError
from tftk.summary.events import encode_record
from tftk.summary.graph_def import as_graph_def

__all__ = ["FileWriter", "FileWriterCache", "SessionLog", "Event", "Summary"]

_CLOSE = object()
_file_numbers = itertools.count()
_open_writers: "weakref.WeakSet[FileWriter]" = weakref.WeakSet()


@atexit.register
def _close_open_writers() -> None:
    """At interpreter exit, write what writers that were never closed still hold in their queues."""
    for writer in list(_open_writers):
        writer.close()


def _create_event_file(logdir: str, suffix: str):
    """Create a new events.out.tfevents.* file exclusively; never reuse or truncate one."""
    os.makedirs(logdir, exist_ok=True)
    while True:
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
                f"{os.getpid()}.{next(_file_numbers)}{suffix}")
        try:
            return open(os.path.join(logdir, name), "xb")
        except FileExistsError:
            continue


class FileWriter:
    """Writes Summary protos and other events to a new event file in `logdir`.

    Args:
      logdir: directory for the event file (created if missing).
      graph: a tftk Graph or GraphDef to write at once (TensorBoard's Graphs tab).
      max_queue: events held in memory before `add_*` blocks for the writer thread.
      flush_secs: how often the writer thread flushes pending events to disk.
      graph_def: deprecated TF1 alias of `graph`.
      filename_suffix: appended to the event file's name.
    """

    def __init__(self, logdir: str | os.PathLike, graph=None, max_queue: int = 10,
                 flush_secs: float = 120, graph_def=None, filename_suffix: str = "") -> None:
        self._logdir = os.fspath(logdir)
        self._max_queue = max_queue
        self._flush_secs = flush_secs
        self._filename_suffix = filename_suffix
        self._seen_summary_tags: set[str] = set()
        self._seen_run_metadata_tags: set[str] = set()
        self._lock = threading.Lock()
        self._closed = True
        self.reopen()
        if graph is not None or graph_def is not None:
            # TF1 writes the graph and, beside it, a MetaGraphDef holding it (TensorBoard's tags).
            given = as_graph_def(graph if graph is not None else graph_def, add_shapes=True)
            self.add_graph(given)
            from tftk.formats.meta_graph import create_meta_graph_def
            self.add_meta_graph(create_meta_graph_def(graph_def=given))

    # -- file and thread life cycle ----------------------------------------------------------

    def reopen(self) -> None:
        """After `close()`, start a new event file in the same directory; no-op while open."""
        if not self._closed:
            return
        self._file = _create_event_file(self._logdir, self._filename_suffix)
        self._file.write(encode_record(Event(wall_time=time.time(), file_version="brain.Event:2")
                                       .SerializeToString()))
        self._queue: queue.Queue = queue.Queue(maxsize=max(1, self._max_queue))
        self._error: BaseException | None = None
        self._closed = False
        _open_writers.add(self)
        self._thread = threading.Thread(target=self._run, name=f"FileWriter({self._logdir})", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        """Writer thread: append queued events; flush when `flush_secs` have passed."""
        next_flush = time.monotonic() + self._flush_secs
        while True:
            try:
                item = self._queue.get(timeout=max(0.0, next_flush - time.monotonic()))
            except queue.Empty:
                item = None
            try:
                if item is _CLOSE:
                    return
                if item is not None and self._error is None:
                    with self._lock:
                        self._file.write(encode_record(item))
                if time.monotonic() >= next_flush:
                    self._flush_file()
                    next_flush = time.monotonic() + self._flush_secs
            except BaseException as exc:  # surfaced to the caller on its next call
                self._error = exc
            finally:
                if item is not None:
                    self._queue.task_done()

    def _flush_file(self) -> None:
        with self._lock:
            if not self._file.closed:
                self._file.flush()
                os.fsync(self._file.fileno())

    def _raise_pending_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise OSError(f"FileWriter for {self._logdir} failed to write its event file: {error}") from error

    def flush(self) -> None:
        """Write every queued event and flush the file to disk."""
        if self._closed:
            return
        self._queue.join()
        self._flush_file()
        self._raise_pending_error()

    def close(self) -> None:
        """Flush, stop the writer thread and close the file (the real, final flush)."""
        if self._closed:
            return
        self._queue.put(_CLOSE)
        self._thread.join()
        self._flush_file()
        with self._lock:
            self._file.close()
        self._closed = True
        _open_writers.discard(self)
        self._raise_pending_error()

    def __enter__(self) -> "FileWriter":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def get_logdir(self) -> str:
        """The directory this writer writes to."""
        return self._logdir

    @property
    def path(self) -> str:
        """The current event file's path."""
        return self._file.name

    # -- events --------------------------------------------------------------------------------

    def add_event(self, event: Event) -> None:
        """Queue one Event proto (serialized now, so later changes to it are not written)."""
        if self._closed:
            raise FailedPreconditionError(
                message=f"FileWriter for {self._logdir} is closed; call reopen() before adding events")
        self._raise_pending_error()
        self._queue.put(event.SerializeToString())

    def _add(self, event: Event, global_step) -> None:
        event.wall_time = time.time()
        if global_step is not None:
            event.step = int(global_step)
        self.add_event(event)

    def add_summary(self, summary: Summary | bytes, global_step=None) -> None:
        """Add a Summary proto or its serialized bytes (what a summary op returns from Session.run).

        As in TF1, a tag's plugin metadata is written only the first time the tag is seen.
        """
        summary = Summary.FromString(summary) if isinstance(summary, (bytes, bytearray)) else Summary(
            value=summary.value)
        for value in summary.value:
            if not value.HasField("metadata"):
                continue
            if value.tag in self._seen_summary_tags:
                value.ClearField("metadata")
            else:
                self._seen_summary_tags.add(value.tag)
        self._add(Event(summary=summary), global_step)

    def add_session_log(self, session_log: SessionLog, global_step=None) -> None:
        """Add a SessionLog (START / STOP / CHECKPOINT) so TensorBoard can discard stale events."""
        self._add(Event(session_log=session_log), global_step)

    def add_graph(self, graph, global_step=None, graph_def=None) -> None:
        """Add a tftk Graph (converted with `_output_shapes`) or a GraphDef proto (TF1's graph_def=)."""
        graph_def = as_graph_def(graph if graph is not None else graph_def, add_shapes=True)
        self._add(Event(graph_def=graph_def.SerializeToString()), global_step)

    def add_meta_graph(self, meta_graph_def, global_step=None) -> None:
        """Add a MetaGraphDef proto as a `meta_graph_def` event (what TF1's FileWriter writes)."""
        if not hasattr(meta_graph_def, "graph_def") or not hasattr(meta_graph_def, "SerializeToString"):
            raise TypeError(f"add_meta_graph needs a MetaGraphDef proto, got {type(meta_graph_def).__name__}")
        self._add(Event(meta_graph_def=meta_graph_def.SerializeToString()), global_step)

    def add_run_metadata(self, run_metadata, tag: str, global_step=None) -> None:
        """Add a RunMetadata (ours or a proto) under `tag` as TaggedRunMetadata.

        Raises ValueError when `tag` was already used by this writer, as TF1 does.
        """
        if tag in self._seen_run_metadata_tags:
            raise ValueError(f"The provided tag {tag!r} was already used for this event type")
        self._seen_run_metadata_tags.add(tag)
        tagged = TaggedRunMetadata(tag=tag, run_metadata=run_metadata.SerializeToString())
        self._add(Event(tagged_run_metadata=tagged), global_step)


class FileWriterCache:
    """One FileWriter per log directory in this process (`tf.summary.FileWriterCache`)."""

    _writers: dict[str, FileWriter] = {}
    _lock = threading.Lock()

    @staticmethod
    def get(logdir: str | os.PathLike) -> FileWriter:
        """The open FileWriter for `logdir`, created (or re-created after close) on demand."""
        key = os.path.abspath(os.fspath(logdir))
        with FileWriterCache._lock:
            writer = FileWriterCache._writers.get(key)
            if writer is None or writer._closed:
                writer = FileWriterCache._writers[key] = FileWriter(logdir)
            return writer

    @staticmethod
    def clear() -> None:
        """Close and forget every cached writer."""
        with FileWriterCache._lock:
            writers, FileWriterCache._writers = list(FileWriterCache._writers.values()), {}
        for writer in writers:
            writer.close()
