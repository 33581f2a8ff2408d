"""An installed specc stays the one imported when a test loads a benchmark
helper: the GPU host runs this suite on the installed wheel (scripts/
device.sh, PYTHONPATH=the wheel's site), and a helper that put the source
tree's python/ first on sys.path made every later test import the source
package instead, which has no runtime library beside it. Needs neither
torch nor a GPU: a helper that needs a module this host lacks to import is
left out."""

import os
import pathlib
import subprocess
import sys

PYTHON_DIR = pathlib.Path(__file__).resolve().parents[1]
BENCHMARKS = PYTHON_DIR / "benchmarks"


def test_benchmark_helpers_leave_an_installed_specc_first(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    # The installed package: the source package under another path.
    (site / "specc").symlink_to(PYTHON_DIR / "specc", target_is_directory=True)
    helpers = sorted(p.stem for p in BENCHMARKS.glob("*.py"))
    script = f"""
import importlib, sys
sys.path.insert(0, {str(BENCHMARKS)!r})
loaded = []
for name in {helpers!r}:
    try:
        importlib.import_module(name)
    except ImportError as e:
        # A third-party module this host lacks (torch, matplotlib, ...)
        # leaves the helper out; the repository's own modules must import.
        own = (e.name or "").split(".")[0]
        if own == "specc" or own in {helpers!r}:
            raise
        continue
    loaded.append(name)
import specc
print(specc.__file__)
print(" ".join(loaded))
"""
    env = dict(os.environ, PYTHONPATH=str(site))
    env.pop("SPECC_RUNTIME_LIB", None)
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    where, loaded = out.stdout.splitlines()
    assert pathlib.Path(where).parent == site / "specc", (where, loaded)
    # The helpers the suite imports without torch were among those loaded.
    for name in ("ab_paired", "bench_move", "phase_stamps"):
        assert name in loaded.split(), loaded


def test_suite_stops_when_it_would_test_another_package(tmp_path):
    """SPECC_EXPECT_PACKAGE naming a folder that does not hold the specc the
    suite imports: collection stops with one usage error."""
    env = dict(os.environ, SPECC_EXPECT_PACKAGE=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(pathlib.Path(__file__).resolve().parent / "test_cpu.py")],
        cwd=PYTHON_DIR, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 4, out.stdout + out.stderr
    assert "not from the package under test" in out.stdout + out.stderr
