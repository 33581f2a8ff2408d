"""The torch side of specc, loaded by ``import specc`` when torch is there.

With the native binding (``specc._native``, built where torch was present at
install time) the op ``torch.ops.specc.move_accept_tokens_to_target_kvcache``
is registered in C++ with its CPU, CUDA and fake (meta) kernels, and
``specc.move_accept_tokens_to_target_kvcache`` calls C++ directly for torch
tensors. Without it (or with ``SPECC_NATIVE=0``) the same op is registered
here over the ctypes path, with the same schema.
"""

from __future__ import annotations

import os
from typing import List, Optional

import torch

from . import api

NATIVE_DISABLED = os.environ.get("SPECC_NATIVE", "1") == "0"

if NATIVE_DISABLED:
    _native = None
    why_not_native = "disabled by SPECC_NATIVE=0"
else:
    try:
        from . import _native  # registers torch.ops.specc.* in C++
        why_not_native = ""
    except ImportError as e:  # not built here, or built for another torch
        _native = None
        why_not_native = str(e)

if _native is not None:
    api._use_native(_native)
else:
    @torch.library.custom_op("specc::move_accept_tokens_to_target_kvcache",
                             mutates_args=("kv_buffers",))
    def _move(req_pool_indices: Optional[torch.Tensor], req_to_token: Optional[torch.Tensor],
              seq_lens: Optional[torch.Tensor], num_correct_drafts: torch.Tensor,
              accept_index: torch.Tensor, out_cache_loc: torch.Tensor,
              kv_buffers: List[torch.Tensor], check: bool = False,
              targets: str = "req_to_token") -> None:
        api.move_accept_tokens_to_target_kvcache(
            req_pool_indices, req_to_token, seq_lens, num_correct_drafts, accept_index,
            out_cache_loc, kv_buffers, check=check, targets=targets)

    @_move.register_fake
    def _(req_pool_indices, req_to_token, seq_lens, num_correct_drafts, accept_index,
          out_cache_loc, kv_buffers, check=False, targets="req_to_token"):
        return None
