"""Fault-injection tests run in a scratch folder, so a default `results/` never lands in the checkout."""

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _outside_the_checkout(tmp_path_factory):
    previous = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(previous)
