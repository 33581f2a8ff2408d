"""The move benchmark's carried Triton cache: group files made elsewhere name
their artifacts by absolute path; relocate_triton_cache points them at where
the cache is now, and leaves entries whose artifacts are missing alone.
Needs neither torch nor triton."""

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_move  # noqa: E402


def _entry(root, key, names, made_in):
    d = root / key
    d.mkdir(parents=True)
    for n in names:
        (d / n).write_text(n)
    grp = d / f"__grp__{names[0]}.json"
    grp.write_text(json.dumps({"child_paths": {n: f"{made_in}/{key}/{n}" for n in names}}))
    return grp


def test_relocates_entries_made_elsewhere(tmp_path):
    grp = _entry(tmp_path, "KEY1", ["k.cubin", "k.json"], "/tmp/tc")
    assert bench_move.relocate_triton_cache(str(tmp_path)) == 1
    paths = json.loads(grp.read_text())["child_paths"]
    assert paths == {n: str(tmp_path.resolve() / "KEY1" / n) for n in ("k.cubin", "k.json")}
    assert bench_move.relocate_triton_cache(str(tmp_path)) == 0  # already here


def test_leaves_incomplete_entries_alone(tmp_path):
    grp = _entry(tmp_path, "KEY2", ["k.cubin", "k.json"], "/tmp/tc")
    (tmp_path / "KEY2" / "k.cubin").unlink()
    before = grp.read_text()
    assert bench_move.relocate_triton_cache(str(tmp_path)) == 0
    assert grp.read_text() == before
