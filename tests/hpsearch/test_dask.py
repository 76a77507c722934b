"""The Dask backend against a two-process LocalCluster (skipped when dask.distributed is absent)."""

import io

import pytest

from hpsearch import Execution, SearchSpec, run_search
import hpsearch_toys as toys

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    import dask

    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local:
            yield local


def test_dask_search_records_results_and_a_dying_worker(tmp_path, cluster):
    configs = [{"lr": 0.01}, {"lr": 0.5}, {"lr": 0.001}]
    result = run_search(toys.dies_for_large_lr, None, tmp_path, SearchSpec(algorithm="grid", configs=configs, max_resource=3),
                        Execution(backend="dask", address=cluster.scheduler_address), io.StringIO())
    assert [t.status for t in result.trials] == ["done", "done", "failed"]
    assert result.best.config == {"lr": 0.01} and result.best.metric == toys.objective(0.01, 3)
    assert "KilledWorker" in result.trials[-1].error
