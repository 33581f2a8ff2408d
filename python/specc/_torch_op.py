"""Registers ``torch.ops.specc.move_accept_tokens_to_target_kvcache``, so the
move composes with torch.compile and other torch machinery."""

from __future__ import annotations

from typing import List

import torch

from .api import move_accept_tokens_to_target_kvcache


@torch.library.custom_op("specc::move_accept_tokens_to_target_kvcache",
                         mutates_args=("kv_buffers",))
def _move(req_pool_indices: torch.Tensor, req_to_token: torch.Tensor,
          seq_lens: torch.Tensor, num_correct_drafts: torch.Tensor,
          accept_index: torch.Tensor, out_cache_loc: torch.Tensor,
          kv_buffers: List[torch.Tensor], check: bool = False) -> None:
    move_accept_tokens_to_target_kvcache(req_pool_indices, req_to_token, seq_lens,
                                         num_correct_drafts, accept_index,
                                         out_cache_loc, kv_buffers, check=check)
