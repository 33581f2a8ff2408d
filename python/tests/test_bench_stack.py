"""The move benchmark's stack limit: after a configuration whose kernels
raised the context's per-thread stack limit, StackLimit.reset sets it back to
the value it found first (which gives back the local memory the driver held
for the larger stack), and leaves it alone otherwise. A fake driver stands in
for libcuda. Needs neither torch nor a GPU."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_move  # noqa: E402


class FakeDriver:
    def __init__(self, limit, get_rc=0, set_rc=0):
        self.limit, self.get_rc, self.set_rc, self.sets = limit, get_rc, set_rc, []

    def cuCtxGetLimit(self, ref, which):
        assert which == bench_move.StackLimit.CU_LIMIT_STACK_SIZE
        if self.get_rc == 0:
            ref._obj.value = self.limit
        return self.get_rc

    def cuCtxSetLimit(self, which, value):
        assert which == bench_move.StackLimit.CU_LIMIT_STACK_SIZE
        self.sets.append(value.value)
        if self.set_rc == 0:
            self.limit = value.value
        return self.set_rc


def test_resets_a_raised_limit_to_the_first():
    drv = FakeDriver(1024)
    stack = bench_move.StackLimit(drv)
    assert stack.base == 1024
    drv.limit = 115752  # a launch with a larger stack raised it
    assert stack.reset() == 115752
    assert drv.sets == [1024] and drv.limit == 1024 and not stack.error
    assert stack.reset() == 1024  # nothing raised it since: no call
    assert drv.sets == [1024]


def test_reports_driver_failures():
    drv = FakeDriver(1024, set_rc=1)
    stack = bench_move.StackLimit(drv)
    drv.limit = 4096
    assert stack.reset() == 4096
    assert "cuCtxSetLimit failed (1)" in stack.error
    drv = FakeDriver(1024, get_rc=201)
    broken = bench_move.StackLimit(drv)
    assert broken.base == 0 and "cuCtxGetLimit failed (201)" in broken.error
    drv.get_rc, drv.limit = 0, 4096  # readable later: still never set to 0
    assert broken.reset() == 4096 and drv.sets == []
