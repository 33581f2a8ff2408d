"""Two GPUs: tensor-parallel ranks, a non-default device, both devices at once.

sglang runs the move on every tensor-parallel rank, each with its own shard of
the KV pool (its KV heads), the same index tensors and its own device; some
deployments pin a process to a device other than 0. Here:

* two processes joined by torch.distributed (NCCL), one per GPU, each holding
  its shard of a Llama-70B-like pool (80 layers, 8 KV heads x 128 x bf16 split
  over the two ranks: 160 buffers of 1 KiB rows per rank), run 50 steps of the
  move in CUDA-graph replay; rank 0 draws each step's indices and broadcasts
  them, and every rank checks every step bit for bit against the reference;
* one process moves on tensors of GPU 1 while GPU 0 is current, eagerly and
  in a graph captured on GPU 1: no mover is made for GPU 0, and GPU 0's
  memory is untouched;
* one process moves on both GPUs at once, one thread and stream per GPU;
* index tensors on GPU 0 with the buffers on GPU 1 are refused before any
  launch, with nothing written.

Needs two CUDA GPUs: skipped, visibly, with fewer.
"""

from __future__ import annotations

import json
import pathlib
import socket
import threading

import pytest

torch = pytest.importorskip("torch", reason="multi-GPU tests need torch")
_GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0
if _GPUS < 2:
    pytest.skip(f"multi-GPU tests need 2 CUDA GPUs ({_GPUS} here)", allow_module_level=True)

import specc  # noqa: E402
from specc import api  # noqa: E402
from gpu_cases import capture_move, make_case, reference  # noqa: E402

pytestmark = pytest.mark.gpu

STEPS = 50
BS, W = 8, 4
LAYERS, ROW = 80, 4 * 128 * 2  # 4 KV heads x 128 x bf16 per rank


def _mover_devices():
    """The devices this thread has movers for."""
    if api._native is not None:
        return set(api._native.devices())
    me = threading.get_ident()
    return {dev for dev, thread in api._movers if thread == me}


def _shard(rank, slots):
    g = torch.Generator(device=f"cuda:{rank}").manual_seed(1000 + rank)
    return [torch.randint(0, 256, (slots, ROW), dtype=torch.uint8, device=f"cuda:{rank}",
                          generator=g) for _ in range(2 * LAYERS)]


def _rank_main(rank, world, port, out_dir):
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dev = f"cuda:{rank}"
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world)
    result = {"rank": rank, "steps": 0, "exact": 0, "first_bad": None, "error": None}
    try:
        # Shapes are fixed by (BS, W, tree); rank 0's values go to everyone.
        args0, small = make_case(BS, W, tree=True, layers=1, k_row=16, device=dev, seed=0)
        static = {k: v.clone() for k, v in args0.items()}
        staged = {k: torch.empty_like(v) for k, v in static.items()}
        bufs = _shard(rank, small[0].shape[0])  # make_case's slot count, every seed
        specc.prepare(rank, BS * W, bufs)
        graph = capture_move(
            lambda: specc.move_accept_tokens_to_target_kvcache(**static, kv_buffers=bufs))
        torch.cuda.synchronize()
        for step in range(STEPS):
            if rank == 0:
                new, _ = make_case(BS, W, tree=True, layers=1, k_row=16, device=dev,
                                   seed=1 + step)
                for k in staged:
                    staged[k].copy_(new[k])
            for k in sorted(staged):
                dist.broadcast(staged[k], src=0)
            for k in static:
                static[k].copy_(staged[k])
            before = [b.clone() for b in bufs]
            want, _, _ = reference(static, before)
            graph.replay()
            torch.cuda.synchronize()
            result["steps"] += 1
            if all(torch.equal(got, exp) for got, exp in zip(bufs, want)) \
                    and specc.last_status()[0] == 0:
                result["exact"] += 1
            elif result["first_bad"] is None:
                result["first_bad"] = step
        dist.barrier()
    except Exception as e:  # reported by the parent
        result["error"] = f"{type(e).__name__}: {e}"
    finally:
        pathlib.Path(out_dir, f"rank{rank}.json").write_text(json.dumps(result))
        if dist.is_initialized():
            dist.destroy_process_group()


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_tensor_parallel_ranks_in_graph_replay(tmp_path):
    import torch.multiprocessing as mp

    mp.spawn(_rank_main, args=(2, _free_port(), str(tmp_path)), nprocs=2, join=True)
    results = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    for r in results:
        assert r["error"] is None, r
        assert r["steps"] == STEPS and r["exact"] == STEPS, r


def test_gpu1_while_gpu0_is_current():
    torch.cuda.set_device(0)
    torch.cuda.synchronize(0)
    allocated0 = torch.cuda.memory_allocated(0)
    free0 = torch.cuda.mem_get_info(0)[0]
    had0 = 0 in _mover_devices()
    args, bufs = make_case(32, 4, tree=True, layers=4, k_row=256, device="cuda:1", seed=3)
    # Eager, GPU 0 current.
    want, _, _ = reference(args, bufs)
    specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs, check=True)
    for got, exp in zip(bufs, want):
        assert torch.equal(got, exp)
    # A graph captured on GPU 1, GPU 0 current again afterwards.
    static = {k: v.clone() for k, v in args.items()}
    with torch.cuda.device(1):
        specc.prepare(1, 32 * 4, bufs)
        graph = capture_move(
            lambda: specc.move_accept_tokens_to_target_kvcache(**static, kv_buffers=bufs))
    assert torch.cuda.current_device() == 0
    for seed in (4, 5):
        new, _ = make_case(32, 4, tree=True, layers=4, k_row=256, device="cuda:1", seed=seed)
        for k in static:
            static[k].copy_(new[k])
        want, _, _ = reference(static, bufs)
        graph.replay()
        torch.cuda.synchronize(1)
        for got, exp in zip(bufs, want):
            assert torch.equal(got, exp)
    torch.cuda.synchronize(0)
    assert (0 in _mover_devices()) == had0, "a mover was made for GPU 0"
    assert torch.cuda.memory_allocated(0) == allocated0
    assert torch.cuda.mem_get_info(0)[0] == free0, "GPU 0's free memory changed"


def test_both_gpus_at_once_on_two_streams():
    cases = [make_case(200, 4, tree=True, layers=3, k_row=512, device=f"cuda:{d}", seed=40 + d)
             for d in range(2)]
    wants = [reference(a, b)[0] for a, b in cases]
    errors = []
    start = threading.Barrier(2)

    def worker(d):
        try:
            args, bufs = cases[d]
            with torch.cuda.device(d):
                s = torch.cuda.Stream()
                s.wait_stream(torch.cuda.current_stream())
                start.wait()
                with torch.cuda.stream(s):
                    specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs)
                s.synchronize()
        except Exception as e:  # checked below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(d,)) for d in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for (args, bufs), want in zip(cases, wants):
        for got, exp in zip(bufs, want):
            assert torch.equal(got, exp)


def test_index_tensors_on_another_gpu_are_refused():
    args, _ = make_case(8, 4, tree=True, device="cuda:0", seed=6)
    _, bufs = make_case(8, 4, tree=True, device="cuda:1", seed=6)
    before = [b.clone() for b in bufs]
    with pytest.raises(ValueError, match="another device"):
        specc.move_accept_tokens_to_target_kvcache(**args, kv_buffers=bufs)
    torch.cuda.synchronize(1)
    for got, exp in zip(bufs, before):
        assert torch.equal(got, exp)
    # One index tensor on the other GPU.
    args1 = {**args, "seq_lens": args["seq_lens"].to("cuda:1")}
    with pytest.raises(ValueError, match="another device"):
        specc.move_accept_tokens_to_target_kvcache(**args1, kv_buffers=bufs)
    for got, exp in zip(bufs, before):
        assert torch.equal(got, exp)
