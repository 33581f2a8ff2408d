//===- KVCacheDialect.td - the kvcache dialect ------------*- tablegen -*-===//
//
// The kvcache dialect describes the cache-location bookkeeping and the row
// move that an LLM server runs after a speculative-decoding verify step.
//
//===----------------------------------------------------------------------===//

#ifndef KVCACHE_DIALECT
#define KVCACHE_DIALECT

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def KVCache_Dialect : Dialect {
  let name = "kvcache";
  let cppNamespace = "::mlir::kvcache";
  let summary = "KV-cache slot bookkeeping and row moves for speculative decoding";
  let description = [{
    After a verify step, the K/V rows of the accepted tokens (accepted drafts
    plus the bonus token) sit in the slots the verify pass wrote them to. The
    ops of this dialect describe how those rows reach the slots where each
    request's sequence continues:

    * `kvcache.assign_targets`: a segmented gather of the target slots out of
      the request-to-token table;
    * `kvcache.compact_sources`: a compacting gather of the source slots out
      of the verify pass's slot list, dropping sentinel entries;
    * `kvcache.move_rows`: the row move over every KV buffer, with
      gather-then-scatter meaning when sources and targets overlap.

    All ops work on memrefs and write their results into caller-provided
    buffers, so a lowering never allocates on the serving path. Every memref
    operand has the identity layout and the default memory space (the GPU
    lowering addresses them as plain arrays), and a call moves at most
    2^31 - 1 entries; the verifiers reject anything else. Index element
    types may be i32 or i64. A `checked` op bounds-checks every index it reads
    and reports the first violation in a status buffer (see
    `kvcache.assign_targets`); a checked `kvcache.move_rows` then leaves every
    KV buffer untouched.
  }];
  let useDefaultAttributePrinterParser = 1;
}

/// How `kvcache.move_rows` treats rows that are both a source and a target.
def KVCache_OverlapPolicy : I32EnumAttr<"OverlapPolicy",
    "meaning of kvcache.move_rows when sources and targets overlap", [
      I32EnumAttrCase<"GatherThenScatter", 0, "gather_then_scatter">,
      I32EnumAttrCase<"Disjoint", 1, "disjoint">
    ]> {
  let cppNamespace = "::mlir::kvcache";
  let genSpecializedAttr = 0;
}

def KVCache_OverlapPolicyAttr : EnumAttr<KVCache_Dialect, KVCache_OverlapPolicy,
                                         "overlap"> {
  let assemblyFormat = "`<` $value `>`";
}

/// Where kvcache.move_accepted_tokens reads the target slots from.
def KVCache_TargetSource : I32EnumAttr<"TargetSource",
    "where the target slots of the accepted tokens come from", [
      I32EnumAttrCase<"ReqToToken", 0, "req_to_token">,
      I32EnumAttrCase<"Window", 1, "window">
    ]> {
  let cppNamespace = "::mlir::kvcache";
  let genSpecializedAttr = 0;
}

def KVCache_TargetSourceAttr : EnumAttr<KVCache_Dialect, KVCache_TargetSource,
                                        "targets"> {
  let assemblyFormat = "`<` $value `>`";
}

class KVCache_Op<string mnemonic, list<Trait> traits = []>
    : Op<KVCache_Dialect, mnemonic, traits>;

#endif // KVCACHE_DIALECT
