"""Every kernel variant kept as a patch (python/benchmarks/variants/*.patch)
still applies to the fused kernel's lowering, and phase_stamps.py unpacks
the record as each phase-stamp patch packs it. Needs neither torch nor a
GPU."""

import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "benchmarks"))

import phase_stamps  # noqa: E402

VARIANTS = ROOT / "python" / "benchmarks" / "variants"
PATCH = VARIANTS / "phase-stamps.patch"
PLANNER_PATCH = VARIANTS / "planner-stamps.patch"


# Every variant kept as a patch: one that no longer applies is stale.
@pytest.mark.parametrize("patch", sorted(VARIANTS.glob("*.patch")), ids=lambda p: p.stem)
def test_patch_applies_to_the_lowering(patch):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout")
    r = subprocess.run(["git", "apply", "--check", str(patch)], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, f"refresh {patch.name}: " + r.stderr


def test_patch_packs_what_the_script_unpacks():
    text = PATCH.read_text()
    # entry: S1-S0 low, S2-S1 high; value: S3-S2 low, S4-S3 high; bound: S5-S4.
    assert "pack(d(S0, S1), d(S1, S2))" in text and "KVCACHE_STATUS_ENTRY" in text
    assert "pack(d(S2, S3), d(S3, S4))" in text and "KVCACHE_STATUS_VALUE" in text
    assert "d(S4, S5)" in text and "KVCACHE_STATUS_BOUND" in text
    record = (0, 3300 | (1288 << 32), 378 | (3233 << 32), 838, 0, 3, 1, 0)
    assert phase_stamps.phases(record) == (3300, 1288, 378, 3233, 838)


def test_planner_patch_packs_what_the_script_unpacks():
    text = PLANNER_PATCH.read_text()
    # Nine deltas of 21 bits, three to a field, from S0, S3 and S6 on.
    for field, first in (("ENTRY", "S0"), ("VALUE", "S3"), ("BOUND", "S6")):
        assert f"put(KVCACHE_STATUS_{field}, pack({first}));" in text
    assert "k.i64(21)" in text and "k.i64(42)" in text
    deltas = list(range(1000, 10000, 1000))
    fields = [sum(d << (21 * i) for i, d in enumerate(deltas[f:f + 3])) for f in (0, 3, 6)]
    record = (0, *fields, 0, 5, 1, 0)
    assert phase_stamps.planner_phases(record) == tuple(deltas)


def test_large_batch_phases_telescope():
    # A waiting block 0 stamps no S1 and S2 (plan() is not its), so those
    # shared values hold whatever was there: the three first deltas still
    # add up to S3 - S0 modulo 2^32, the only sum that --large reads.
    s0, s1, s2, s3, s4, s5 = 5_000_000_000, 0x12345678AB, 7, 5_000_090_000, 5_000_190_000, 5_000_191_500
    lo = lambda d: d & 0xFFFFFFFF  # noqa: E731
    signed = lambda w: w - (1 << 64) if w >> 63 else w  # noqa: E731  (int64 fields)
    record = (0, signed(lo(s1 - s0) | (lo(s2 - s1) << 32)),
              signed(lo(s3 - s2) | (lo(s4 - s3) << 32)), s5 - s4, 0, 0, 0, 0)
    assert record[1] < 0 or record[2] < 0  # a high half with its top bit set
    assert phase_stamps.large_phases(record) == (90_000, 100_000, 1_500)


# The stamps run the benchmark's layouts, as bench_move.py's table gives
# them: K and V rows per layer, or one row per layer (MLA).
def test_layouts_are_the_benchmarks():
    assert set(phase_stamps.LAYOUTS) == {"llama8b", "llama70b-tp8", "qwen32b", "mla", "tiny"}
    assert phase_stamps.LAYOUTS["qwen32b"] == (64, 2048, False)
    assert phase_stamps.LAYOUTS["llama70b-tp8"] == (80, 256, False)
    assert phase_stamps.LAYOUTS["mla"] == (61, 576, True)
