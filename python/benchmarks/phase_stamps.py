"""Phase times of the fused move kernel, measured inside it, per configuration.

Needs a kernel image built with `variants/phase-stamps.patch` applied (not
main's kernel): with it, block 0's thread 0 reads `clock64` at the kernel's
phase barriers and block 0 writes the differences into the status record's
entry, value and bound fields, which are zero for a valid batch on main.
This script runs sglang-shaped local batches (bs * W <= 1024) with the L2
flushed before each call (`--no-flush`: left warm), reads the record after
each call and prints the median cycles of each phase:

  validate    kernel start to the barrier after validation
  hazard      the hazard check across requests (skipped when nothing moves)
  verdict     to the barrier after the plan
  move        thread 0 has issued its last store
  drain       a barrier and a device-scope fence after the move

`--large` runs batches past the local capacity (bs * W > 1024) on the same
image. There block 0 validates chunk 0 and then either plans or waits for
the planner's verdict; a waiter takes no stamp inside plan(), but the three
first deltas still add up (modulo 2^32) to its time from the kernel's start
to the move, so three phases are printed:

  to-move     kernel start to the barrier before the move (validation of
              chunk 0, its slot claims, the progress count, the wait for
              the verdict or the plan)
  move        thread 0 has issued its last store (block 0's share of the
              rounds: the most any block has)
  drain       a barrier and a device-scope fence after the move

The planner block writes the record's fields too (zeros for a valid batch),
with no order against block 0's stamps: after a move block 0 writes last,
but a waiting block 0 of a chain leaves as soon as nothing moves and may
write first. Records whose three fields are all zero are not counted, and
each line says how many calls gave stamps.

`--planner` reads an image built with `variants/planner-stamps.patch`
instead: the planner block of a large batch (the block whose validation
completes the chunk count) stamps its own phases, nine deltas of 21 bits
packed three to a field:

  to-plan     kernel start to the planner's plan() (claims, validation,
              the progress count)
  first-bad   recordFirstViolation
  prefetch    the L1 prefetch of the workspace lists
  init        the hazard table cleared
  insert      every moving target inserted
  lookup      every moving source looked up
  found       the unsafe branch (the depth plan) and the barrier
  publish     the verdict's fence and store
  record      the status record

Usage (GPU host, runtime built from the stamped image):
  SPECC_RUNTIME_LIB=.../libspecc_runtime.so PYTHONPATH=python \\
      python3 python/benchmarks/phase_stamps.py [--no-flush] [--calls 15]
      [--planner --bs 512 2048] [--large --bs 512 2048]
"""

import argparse
import pathlib
import statistics
import sys

PHASES = ("validate", "hazard", "verdict", "move", "drain")
PLANNER_PHASES = ("to-plan", "first-bad", "prefetch", "init", "insert", "lookup",
                  "found", "publish", "record")
import bench_move  # noqa: E402  (beside this file; standard library only at import)

# (layers, row bytes, one row per layer): bench_move.py's benchmark layouts,
# read from its table.
LAYOUTS = {name: (bench_move.LAYOUTS[name].layers, bench_move.LAYOUTS[name].row_bytes()[0],
                  len(bench_move.LAYOUTS[name].row_shapes) == 1)
           for name in bench_move.DEFAULT_LAYOUTS}
# Two buffers of 256 B rows: the planner's phases do not depend on the
# buffers, and large batches are quick to build with them.
LAYOUTS["tiny"] = (1, 256, False)


def phases(status):
    """The five phase times (cycles) packed in a stamped status record."""
    e, v, b = status[1], status[2], status[3]
    return (e & 0xFFFFFFFF, e >> 32, v & 0xFFFFFFFF, v >> 32, b)


LARGE_PHASES = ("to-move", "move", "drain")


def large_phases(status):
    """Block 0's three phase times (cycles) of a large batch, phase-stamps.patch."""
    p = phases(status)
    return ((p[0] + p[1] + p[2]) & 0xFFFFFFFF, p[3], p[4])


def planner_phases(status):
    """The nine planner phase times (cycles) of planner-stamps.patch."""
    m = (1 << 21) - 1
    return tuple((status[f] >> s) & m for f in (1, 2, 3) for s in (0, 21, 42))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--no-flush", action="store_true", help="leave the L2 warm")
    ap.add_argument("--calls", type=int, default=15)
    ap.add_argument("--bs", type=int, nargs="+", default=[1, 8, 32, 128])
    ap.add_argument("--layouts", nargs="+", default=["llama8b", "llama70b-tp8"],
                    choices=list(LAYOUTS))
    ap.add_argument("--planner", action="store_true",
                    help="large batches, stamps of planner-stamps.patch")
    ap.add_argument("--large", action="store_true",
                    help="large batches, block 0's stamps of phase-stamps.patch")
    opts = ap.parse_args()
    if opts.planner and opts.large:
        ap.error("--planner and --large read different images")
    names, decode = ((PLANNER_PHASES, planner_phases) if opts.planner else
                     (LARGE_PHASES, large_phases) if opts.large else (PHASES, phases))
    large = opts.planner or opts.large
    # Imported here, so that `phases` needs neither torch nor a GPU.
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests"))
    import torch

    import specc
    from gpu_cases import make_case

    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    print(f"{'case':32s} " + " ".join(f"{p:>9s}" for p in names) + f" {'total':>8s}  (cycles)")
    for layout in opts.layouts:
        layers, row, mla = LAYOUTS[layout]
        for tree in (False, True):
            for bs in opts.bs:
                if (bs * 4 > 1024) != large:
                    continue
                args, bufs = make_case(bs, 4, tree=tree, layers=layers, k_row=row,
                                       v_row=row, mla=mla, seed=bs)
                specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs)
                runs = []
                for _ in range(opts.calls):
                    if not opts.no_flush:
                        flush.zero_()
                    torch.cuda.synchronize()
                    specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs)
                    st = specc.last_status()
                    if st[0] != 0:
                        sys.exit(f"{layout} bs={bs}: the batch was refused ({st}); "
                                 "stamps are only read from valid batches")
                    if opts.large and st[1] == st[2] == st[3] == 0:
                        continue  # overwritten by the planner's record
                    runs.append(decode(st))
                name = f"{layout} {'tree' if tree else 'chain'} bs={bs}"
                if not runs:
                    print(f"{name:32s} no stamps in {opts.calls} calls (the planner's record "
                          "came last every time)")
                    continue
                med = [statistics.median(r[i] for r in runs) for i in range(len(names))]
                note = f"  ({len(runs)} of {opts.calls} calls)" if len(runs) < opts.calls else ""
                print(f"{name:32s} " + " ".join(f"{m:9.0f}" for m in med)
                      + f" {sum(med):8.0f}{note}")


if __name__ == "__main__":
    main()
