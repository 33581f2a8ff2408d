"""scripts/device.sh's card guard (SPECC_DEVICE_GPU), on a host without a GPU.

A fake `nvidia-smi` first on PATH names the card. A run meant for another
card stops before it builds anything (exit 3, said in the summary); a run
for this card gets past the guard to the artifact check, which an empty
artifact folder fails (exit 1), so no build starts either way.
"""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "device.sh"


def run_device_script(tmp_path, card, wanted):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho '{card}, 580.159.04, 81559 MiB'\n")
    smi.chmod(0o755)
    art = tmp_path / "artifacts"
    art.mkdir()
    out = tmp_path / "out"
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", OUT=str(out))
    env.pop("SPECC_DEVICE_GPU", None)
    if wanted is not None:
        env["SPECC_DEVICE_GPU"] = wanted
    proc = subprocess.run(["bash", str(SCRIPT), str(art)], env=env,
                          capture_output=True, text=True, timeout=60)
    return proc.returncode, (out / "summary.txt").read_text()


@pytest.mark.parametrize("card", ["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"])
def test_other_card_stops_before_building(tmp_path, card):
    rc, summary = run_device_script(tmp_path, card, "H200")
    assert rc == 3, summary
    assert f"gpu: {card}, 580.159.04" in summary
    assert "not run: the GPU is not an H200 (SPECC_DEVICE_GPU)" in summary
    assert "missing artifact" not in summary
    assert not (tmp_path / "out" / "build.log").exists()


@pytest.mark.parametrize("wanted", ["H200", None])
def test_named_card_or_no_guard_goes_on(tmp_path, wanted):
    rc, summary = run_device_script(tmp_path, "NVIDIA H200", wanted)
    assert rc == 1, summary
    assert "not run" not in summary
    assert "missing artifact" in summary


def test_guard_reads_the_name_only(tmp_path):
    # The driver version and memory follow the name on nvidia-smi's line:
    # a word found there must not pass for the card's name.
    rc, summary = run_device_script(tmp_path, "NVIDIA H100 80GB HBM3", "81559")
    assert rc == 3, summary
