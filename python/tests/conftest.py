"""Shared fixtures: the exact vectors of docs/semantics.md and the GPU marker."""

import json
import os
import pathlib

import pytest

VECTORS = pathlib.Path(__file__).resolve().parents[2] / "test" / "vectors" / "move_accept_tokens.json"


@pytest.fixture(autouse=True)
def _isolated_reports():
    """Each test starts with no violation pending from an earlier test (a
    call that broke the contract without waiting is reported by the next
    call of the thread)."""
    import specc

    try:
        specc.check(wait=True)
    except specc.InputError:
        pass
    yield


@pytest.fixture(scope="session")
def vectors():
    return json.loads(VECTORS.read_text())["cases"]


def _have_gpu():
    try:
        import torch
    except ImportError:
        return False, "torch is not installed"
    if not torch.cuda.is_available():
        return False, "no CUDA GPU"
    return True, ""


def _check_package_under_test():
    """SPECC_EXPECT_PACKAGE=DIR (the device script, on the installed wheel):
    the suite must import specc from DIR. Checked once every test module
    is imported, so that a module that put the source tree first on
    sys.path stops the run with one message instead of failing each test
    on the source package."""
    expect = os.environ.get("SPECC_EXPECT_PACKAGE")
    if not expect:
        return
    import specc

    where = pathlib.Path(specc.__file__).resolve().parent
    if where != (pathlib.Path(expect) / "specc").resolve():
        raise pytest.UsageError(
            f"the suite imports specc from {where}, not from the package under "
            f"test in {expect} (SPECC_EXPECT_PACKAGE): something put another "
            "copy first on sys.path")


def pytest_collection_modifyitems(config, items):
    _check_package_under_test()
    ok, why = _have_gpu()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"GPU test skipped: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
