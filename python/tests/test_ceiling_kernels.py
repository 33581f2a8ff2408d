"""The hand-written CUDA kernels of benchmarks/move_ceiling.py, compiled
here (no GPU needed) the way the GPU host will build them: each source
with each -D it is built with, to PTX by nvcc and on to sm_90 by ptxas.
A kernel that does not compile, or that spills, would otherwise be found
only on the GPU host, after its device time was spent. Skipped where the
CUDA toolkit is absent."""

import ast
import os
import pathlib
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

CEILING = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "move_ceiling.py"


def literals():
    """The module's top-level constants with literal values (its sources and
    its builds' -D values among them), read from its text: importing it
    needs torch and the GPU stack."""
    out = {}
    for node in ast.parse(CEILING.read_text()).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return out


def builds():
    """(source constant, options) of each build move_ceiling.main makes."""
    c = literals()
    return ([("SOURCE", [f"-DUNROLL={u}"]) for u in c["UNROLLS"]]
            + [("BULK_SOURCE", [f"-DK={k}", "-std=c++17"]) for k in c["BULK_SLOTS"]]
            + [("STAGED_SOURCE", [f"-DUNROLL={c['STAGED_UNROLL']}"])])


def find_toolkit():
    """nvcc, in specc's driver's order for ptxas (PATH, $CUDA_HOME/bin,
    $CUDA_PATH/bin, /usr/local/cuda/bin), and the ptxas of the same toolkit
    beside it; (None, None) when either is missing."""
    nvcc = shutil.which("nvcc")
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if nvcc is None and root and os.access(os.path.join(root, "bin", "nvcc"), os.X_OK):
            nvcc = os.path.join(root, "bin", "nvcc")
    if nvcc is None:
        return None, None
    ptxas = os.path.join(os.path.dirname(nvcc), "ptxas")
    return (nvcc, ptxas) if os.access(ptxas, os.X_OK) else (None, None)


def sources():
    """The module's CUDA sources."""
    return {k: v for k, v in literals().items() if k.endswith("SOURCE")}


def test_every_build_names_a_source_of_the_module():
    found = sources()
    assert {"SOURCE", "BULK_SOURCE", "STAGED_SOURCE"} <= set(found)
    text = CEILING.read_text()
    # Every source the benchmark builds a RawModule of is one builds() lists.
    built = set(re.findall(r"RawModule\(code=(\w+)", text))
    assert built == {name for name, _ in builds()}


@pytest.mark.skipif(find_toolkit()[0] is None,
                    reason="the CUDA toolkit (nvcc, ptxas) is not installed")
def test_kernels_compile_for_sm90_without_spills(tmp_path):
    nvcc, ptxas = find_toolkit()
    found, todo = sources(), builds()

    def build(i):
        name, opts = todo[i]
        cu = tmp_path / f"k{i}.cu"
        cu.write_text(found[name])
        ptx = tmp_path / f"k{i}.ptx"
        r = subprocess.run([nvcc, "-arch=sm_90", "-ptx", *opts, str(cu), "-o", str(ptx)],
                           capture_output=True, text=True)
        if r.returncode:
            return f"{name} {opts}: nvcc failed:\n{r.stderr[-2000:]}"
        r = subprocess.run([ptxas, "-arch=sm_90", "-v", str(ptx), "-o", os.devnull],
                           capture_output=True, text=True)
        if r.returncode:
            return f"{name} {opts}: ptxas failed:\n{r.stderr[-2000:]}"
        spills = re.findall(r"(\d+) bytes spill stores", r.stderr)
        if any(int(s) for s in spills):
            return f"{name} {opts}: spills\n{r.stderr}"
        return None

    with ThreadPoolExecutor(max_workers=2) as pool:
        problems = [p for p in pool.map(build, range(len(todo))) if p]
    assert not problems, "\n\n".join(problems)
