"""stall_report.py reads ncu's SASS source page: the samples by stall
reason, split at block barriers, on a small table written here."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))

import stall_report  # noqa: E402

HEADER = ('"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed",'
          '"stall_barrier","stall_long_sb","stall_long_sb (Not Issued)"')
ROWS = [
    ('"0x1000","LDG.E.64 R2, desc[UR4][R4.64]","3","8","0","0","0"'),
    ('"0x1010","IADD3 R2, R2, 1, RZ","7","8","0","6","5"'),
    ('"0x1020","BAR.SYNC.DEFER_BLOCKING 0x0","9","8","9","0","0"'),
    ('"0x1030","EXIT","1","8","0","1","1"'),
]


def test_phases_split_at_barriers(tmp_path):
    f = tmp_path / "s.csv"
    f.write_text('"Kernel Name","k",\n' + HEADER + "\n" + "\n".join(ROWS) + "\n")
    rows = stall_report.read(str(f))
    assert len(rows) == 4
    assert stall_report.reasons(rows) == ["stall_barrier", "stall_long_sb"]
    ph = stall_report.phases(rows)
    assert [(p["from"], p["to"]) for p in ph] == [(0, 0x20), (0x30, 0x30)]
    assert ph[0]["stalls"]["long_sb"] == 6 and ph[0]["stalls"]["barrier"] == 9
    assert ph[0]["executed"] == 24 and ph[1]["stalls"]["long_sb"] == 1


def test_no_table(tmp_path, capsys):
    f = tmp_path / "e.csv"
    f.write_text("==ERR== no kernels profiled\n")
    stall_report.main(str(f))
    assert "no SASS table" in capsys.readouterr().out
