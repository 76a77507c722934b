"""A session fixture for test folders whose tests run the CLI with default paths: every test runs in a scratch
folder, so a default `results/` or `data/` never lands in the checkout. Import it in the folder's conftest."""

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def outside_the_checkout(tmp_path_factory):
    previous = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    os.chdir(previous)
