"""`ClusterSpec`: the jobs of a cluster and the host:port of each of their tasks."""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["ClusterSpec", "split_address"]


class ClusterSpec:
    """Jobs (e.g. "ps", "worker") mapped to their tasks' addresses, as TF1's `tf.train.ClusterSpec`.

    Built from a dict of job name to a list of "host:port" strings (task i is the i-th) or to a
    dict {task_index: "host:port"} (sparse), or from another ClusterSpec.
    """

    def __init__(self, cluster: Any):
        if isinstance(cluster, ClusterSpec):
            self._jobs = {job: dict(tasks) for job, tasks in cluster._jobs.items()}
            return
        if not isinstance(cluster, Mapping):
            raise TypeError(f"ClusterSpec expects a dict of job name to task addresses or a ClusterSpec, "
                            f"got {type(cluster).__name__}")
        self._jobs: dict[str, dict[int, str]] = {}
        for job, tasks in cluster.items():
            if not isinstance(job, str) or not job:
                raise ValueError(f"ClusterSpec job names must be non-empty strings, got {job!r}")
            if isinstance(tasks, Mapping):
                pairs = list(tasks.items())
            elif isinstance(tasks, (list, tuple)):
                pairs = list(enumerate(tasks))
            else:
                raise TypeError(f"Tasks of job {job!r} must be a list of 'host:port' strings or a dict "
                                f"{{task_index: 'host:port'}}, got {type(tasks).__name__}")
            for index, address in pairs:
                if not isinstance(index, int) or index < 0:
                    raise ValueError(f"Task index {index!r} of job {job!r} must be a non-negative int")
                _check_address(job, index, address)
            self._jobs[job] = dict(sorted(pairs))

    @property
    def jobs(self) -> list[str]:
        return list(self._jobs)

    def num_tasks(self, job_name: str) -> int:
        return len(self._tasks(job_name))

    def task_indices(self, job_name: str) -> list[int]:
        return list(self._tasks(job_name))

    def task_address(self, job_name: str, task_index: int) -> str:
        tasks = self._tasks(job_name)
        if task_index not in tasks:
            raise ValueError(f"No task with index {task_index} in job {job_name!r}: it has tasks "
                             f"{sorted(tasks)}")
        return tasks[task_index]

    def job_tasks(self, job_name: str) -> list[str | None]:
        """Addresses of the job's tasks by index (None where a sparse job has no such task)."""
        tasks = self._tasks(job_name)
        return [tasks.get(i) for i in range(max(tasks) + 1)] if tasks else []

    def as_dict(self) -> dict[str, Any]:
        """Dense jobs as lists of addresses, sparse ones as {index: address} (TF1's form)."""
        result: dict[str, Any] = {}
        for job, tasks in self._jobs.items():
            dense = sorted(tasks) == list(range(len(tasks)))
            result[job] = [tasks[i] for i in range(len(tasks))] if dense else dict(tasks)
        return result

    def with_task_address(self, job_name: str, task_index: int, address: str) -> "ClusterSpec":
        """This cluster with one task's address replaced (a server that picked a free port)."""
        changed = ClusterSpec(self)
        changed._jobs[job_name] = {**changed._jobs[job_name], task_index: address}
        return changed

    def _tasks(self, job_name: str) -> dict[int, str]:
        if job_name not in self._jobs:
            raise ValueError(f"No such job in cluster: {job_name!r} (jobs: {', '.join(self._jobs) or 'none'})")
        return self._jobs[job_name]

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ClusterSpec) and self._jobs == other._jobs

    def __repr__(self) -> str:
        return f"ClusterSpec({self.as_dict()!r})"


def split_address(address: Any) -> tuple[str, int] | None:
    """(host, port) of a "host:port" string, or None when it is not one."""
    host, sep, port = address.rpartition(":") if isinstance(address, str) else ("", "", "")
    if not (sep and host and port.isdigit() and int(port) < 65536):
        return None
    return host, int(port)


def _check_address(job: str, index: int, address: Any) -> None:
    if split_address(address) is None:
        raise ValueError(f"Task {index} of job {job!r} has address {address!r}; expected 'host:port', "
                         "e.g. 'localhost:2222'")
