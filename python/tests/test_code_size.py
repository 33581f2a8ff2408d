"""code_size.py splits a kernel's SASS at barriers, exits and returns."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "benchmarks"))

import code_size  # noqa: E402

SASS = """
        /*0000*/                   MOV R1, c[0x0][0x28] ;        /* 0x0000 */
        /*0010*/                   S2R R0, SR_TID.X ;             /* 0x0000 */
        /*0020*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;  /* 0x0000 */
        /*0030*/              @!P0 LDG.E.64 R2, desc[UR4][R4.64] ; /* 0x0000 */
        /*0040*/                   CALL.REL.NOINC 0x100 ;         /* 0x0000 */
        /*0050*/               @P0 EXIT ;                          /* 0x0000 */
        /*0060*/                   RET.REL.NODEC R4 0x0 ;          /* 0x0000 */
"""


def test_stretches():
    code = code_size.parse(SASS)
    assert [o for o, _ in code] == [0, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60]
    s = code_size.stretches(code)
    assert [(x["from"], x["to"], x["count"], x["ends"]) for x in s] == [
        (0, 0x20, 3, "BAR.SYNC.DEFER_BLOCKING"), (0x30, 0x50, 3, "EXIT"),
        (0x60, 0x60, 1, "RET.REL.NODEC")]
    assert s[1]["first_load"] == 0x30 and s[1]["calls"] == 1
    assert "first global load at 0x30 (instruction 3)" in code_size.report(code)[0]
