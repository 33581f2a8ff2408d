"""Shared fixtures: the exact vectors of docs/semantics.md and the GPU marker."""

import json
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


def pytest_collection_modifyitems(config, items):
    ok, why = _have_gpu()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"GPU test skipped: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
