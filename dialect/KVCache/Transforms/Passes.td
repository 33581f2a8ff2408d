//===- Passes.td - kvcache transformations ----------------*- tablegen -*-===//
//
// Rewrites of kvcache functions that both lowerings start from: cloning a
// function once per declared signature, and fusing the three stages of the
// KV move into one op.
//
//===----------------------------------------------------------------------===//

#ifndef KVCACHE_TRANSFORMS_PASSES
#define KVCACHE_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def KVCacheSpecialize : Pass<"kvcache-specialize", "ModuleOp"> {
  let summary = "Clone each function once per combination of its declared element types";
  let description = [{
    A function argument may declare the element types it accepts with
    `kvcache.element_types = [i32, i64]`. For a function with such arguments
    this pass creates one clone per combination (the cartesian product, in
    argument order), with those memref element types substituted, and
    removes the original:

    ```mlir
    func.func @f(%a: memref<?xi64> {kvcache.element_types = [i32, i64]},
                 %b: memref<?xi64> {kvcache.element_types = [i32, i64]})
    // becomes @f__i32_i32, @f__i32_i64, @f__i64_i32, @f__i64_i64
    ```

    The name is `<function>__<type>_<type>...` over the declared arguments
    (one mangling function, `kvcache::mangleSpecialization`); every clone
    records the function it came from in `kvcache.specialization_of`. The
    ops inside are unchanged: kvcache ops accept i32 and i64 memrefs, so a
    clone verifies exactly when its combination is legal. Functions without
    the attribute are left alone. The generated signature table (the
    manifest) comes from the clones, so it cannot disagree with them.
  }];
}

def KVCacheFuse : Pass<"kvcache-fuse", "ModuleOp"> {
  let summary = "Fuse assign_targets, compact_sources and move_rows into move_accepted_tokens";
  let description = [{
    Finds, in one block, the three stages of the KV move wired together

    ```mlir
    kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt checked status(%st)
    kvcache.compact_sources %acc, %ocl into %src sentinel -1 counts(%ncd) checked status(%st)
    kvcache.move_rows %buffers, %src, %tgt overlap <gather_then_scatter>
        workspace(%ws) checked status(%st)
    ```

    where the slot lists `%tgt` and `%src` are used by nothing else, and
    replaces them with

    ```mlir
    kvcache.move_accepted_tokens targets <req_to_token>
        rows(%rpi, %r2t, %seq : ...) drafts(%ncd : ...) accept(%acc : ...)
        sentinel -1 slots(%ocl : ...) buffers(%buffers : ...)
        workspace(%ws : ...) status(%st : ...)
    ```

    The slot lists are then dead: when they are arguments of a function that
    has no callers, they are removed from its signature (the entry point
    takes no scratch it does not use). The three stages must all be checked
    and share one `memref<8xi64>` status; `move_rows` must be
    `gather_then_scatter`. On valid input the fused op computes exactly what
    the three stages compute (see its description); other triples are left
    alone.
  }];
}

#endif // KVCACHE_TRANSFORMS_PASSES
