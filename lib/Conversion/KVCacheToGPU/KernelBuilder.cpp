//===- KernelBuilder.cpp - building blocks of the kvcache GPU kernels -----===//
//
// Implementation of KernelBuilder (see KernelBuilder.h).
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "Conversion/Passes.h"
#include "KVCache/KVCacheABI.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::kvcache;

static constexpr unsigned kGlobalAddressSpace = 1;
static constexpr unsigned kSharedAddressSpace = 3;

KernelBuilder::KernelBuilder(gpu::GPUModuleOp module, Location loc,
                             StringRef name, ArrayRef<KernelParam> params,
                             int64_t blockSize)
    : Emitter(loc, module.getContext()), module(module), blockSize(blockSize) {
  MLIRContext *ctx = module.getContext();
  SmallVector<Type> types;
  for (const KernelParam &p : params)
    types.push_back(
        p.kind == KernelParam::GlobalPtr
            ? Type(LLVM::LLVMPointerType::get(ctx, kGlobalAddressSpace))
            : Type(IntegerType::get(ctx, 64)));
  b.setInsertionPointToEnd(module.getBody());
  kernel = gpu::GPUFuncOp::create(b, name, FunctionType::get(ctx, types, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(ctx));
  int32_t bs = static_cast<int32_t>(blockSize);
  kernel.setKnownBlockSizeAttr(DenseI32ArrayAttr::get(ctx, {bs, 1, 1}));
  // Pointer parameters: aligned to their element and never aliased by
  // another parameter (the runtime passes distinct buffers).
  for (auto [i, p] : llvm::enumerate(params)) {
    if (p.kind != KernelParam::GlobalPtr)
      continue;
    kernel.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                      b.getI64IntegerAttr(p.align));
    kernel.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                      UnitAttr::get(ctx));
  }
  b.setInsertionPointToStart(&kernel.getBody().front());
  // The body ends with gpu.return; everything is built before it.
  auto ret = gpu::ReturnOp::create(b);
  b.setInsertionPoint(ret);
}

void KernelBuilder::setLaunch(ArrayRef<NamedAttribute> entries) {
  kernel->setAttr("kvcache.launch", b.getDictionaryAttr(entries));
}

void KernelBuilder::setSingleBlock() {
  // One block is all there is: without saying so, ptxas aims large blocks at
  // several per SM, caps their registers and spills.
  kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  b.getI32IntegerAttr(1));
}

Type KernelBuilder::globalPtrType() {
  return LLVM::LLVMPointerType::get(b.getContext(), kGlobalAddressSpace);
}

void KernelBuilder::ifCold(Value cond, llvm::function_ref<void()> then) {
  auto op = scf::IfOp::create(b, cond, /*withElseRegion=*/false);
  op->setAttr(kColdAttrName, b.getUnitAttr());
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(op.thenBlock()->getTerminator());
  then();
}

Value KernelBuilder::log2Ceil(Value x) {
  Value clz = LLVM::CountLeadingZerosOp::create(
      b, b.getI64Type(), sub(x, i64(1)), b.getBoolAttr(false));
  return sub(i64(64), clz);
}

Value KernelBuilder::threadId() {
  return toI64(gpu::ThreadIdOp::create(b, gpu::Dimension::x));
}

Value KernelBuilder::blockId(gpu::Dimension d) {
  return toI64(gpu::BlockIdOp::create(b, d));
}

Value KernelBuilder::gep(Value base, Type elt, Value idx) {
  return LLVM::GEPOp::create(b, base.getType(), elt, base,
                             ArrayRef<LLVM::GEPArg>{idx});
}

Value KernelBuilder::load(Type type, Value ptr, int64_t align) {
  return LLVM::LoadOp::create(b, type, ptr, align);
}

void KernelBuilder::store(Value v, Value ptr, int64_t align) {
  LLVM::StoreOp::create(b, v, ptr, align);
}

Value KernelBuilder::loadI64(Value base, Type elt, Value idx) {
  int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  return toI64(load(elt, gep(base, elt, idx), bytes));
}

void KernelBuilder::storeI64(Value base, Type elt, Value idx, Value v) {
  int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  Value narrowed =
      elt.isInteger(64) ? v : Value(arith::TruncIOp::create(b, elt, v));
  store(narrowed, gep(base, elt, idx), bytes);
}

Value KernelBuilder::sharedMemory(StringRef name, Type type, bool external) {
  auto global = module.lookupSymbol<LLVM::GlobalOp>(name);
  if (!global) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    global = LLVM::GlobalOp::create(
        b, type, /*isConstant=*/false,
        external ? LLVM::Linkage::External : LLVM::Linkage::Internal, name,
        /*value=*/Attribute(), /*alignment=*/16, kSharedAddressSpace);
  }
  return LLVM::AddressOfOp::create(b, global);
}

std::pair<Value, Value> KernelBuilder::blockExclusiveScan(Value v,
                                                          Value scratch) {
  // Inclusive scan inside each warp with shuffles; every warp then scans the
  // warp totals itself (warp 0 publishes them), so every shuffle runs in
  // converged code: ptxas turns divergent ones into calls with stack.
  Type i32T = b.getI32Type();
  int64_t numWarps = blockSize / 32;
  Value tid = toI32(gpu::ThreadIdOp::create(b, gpu::Dimension::x));
  Value lane = arith::AndIOp::create(b, tid, i32(31));
  Value warp = arith::ShRUIOp::create(b, tid, i32(5));
  auto warpInclusive = [&](Value x) {
    for (int32_t d = 1; d < 32; d *= 2) {
      auto shfl = gpu::ShuffleOp::create(b, x, d, 32, gpu::ShuffleMode::UP);
      Value take = cmp(arith::CmpIPredicate::sge, lane, i32(d));
      x = select(take, arith::AddIOp::create(b, x, shfl.getShuffleResult()), x);
    }
    return x;
  };
  Value inclusive = warpInclusive(v);
  ifThen(cmp(arith::CmpIPredicate::eq, lane, i32(31)),
         [&] { store(inclusive, gep(scratch, i32T, warp), 4); });
  barrier();
  Value inRange = cmp(arith::CmpIPredicate::slt, lane, i32(numWarps));
  Value warpTotal = select(
      inRange, load(i32T, gep(scratch, i32T, select(inRange, lane, i32(0))), 4),
      i32(0));
  Value totals = warpInclusive(warpTotal);
  barrier();
  ifThen(bitAnd(cmp(arith::CmpIPredicate::eq, warp, i32(0)), inRange),
         [&] { store(totals, gep(scratch, i32T, lane), 4); });
  barrier();
  Value hasBefore = cmp(arith::CmpIPredicate::sgt, warp, i32(0));
  Value before =
      select(hasBefore,
             load(i32T,
                  gep(scratch, i32T,
                      select(hasBefore, arith::SubIOp::create(b, warp, i32(1)),
                             i32(0))),
                  4),
             i32(0));
  Value blockTotal = load(i32T, gep(scratch, i32T, i32(numWarps - 1)), 4);
  // The scratch is reused by the next round: wait until everyone read it.
  barrier();
  Value exclusive =
      arith::SubIOp::create(b, arith::AddIOp::create(b, before, inclusive), v);
  return {exclusive, blockTotal};
}

Value KernelBuilder::scanRounds(
    Value numItems, llvm::function_ref<Value(Value, Value)> count,
    llvm::function_ref<void(Value, Value, Value, Value)> emit) {
  Value scratch = sharedMemory((kernel.getName() + "_scan").str(),
                               LLVM::LLVMArrayType::get(b.getI32Type(), 32),
                               /*external=*/false);
  Value tid = threadId();
  Value zero = i64(0);
  return forLoopCarried(
      zero, numItems, i64(blockSize), zero, [&](Value base, Value carry) {
        Value i = add(base, tid);
        Value active = cmp(arith::CmpIPredicate::slt, i, numItems);
        Value n = count(i, active);
        auto [excl, blockTotal] = blockExclusiveScan(toI32(n), scratch);
        emit(i, active, n, add(carry, toI64(excl)));
        return add(carry, toI64(blockTotal));
      });
}

void KernelBuilder::zeroFill(Value base, Type elt, Value from, Value to) {
  Value zero = i64(0);
  forLoop(add(from, threadId()), to, i64(blockSize),
          [&](Value e) { storeI64(base, elt, e, zero); });
}

void KernelBuilder::recordError(Value status, int64_t code, Value entry,
                                Value value, Value bound) {
  // One value per statement: as call arguments, the order of the ops they
  // create would be the host compiler's order of evaluation (gcc and clang
  // differ).
  Type i64T = b.getI64Type();
  Value codeValue = i64(code);
  Value zero = i64(0);
  Value codePtr = gep(status, i64T, i64(KVCACHE_STATUS_CODE));
  auto cas = LLVM::AtomicCmpXchgOp::create(
      b, codePtr, zero, codeValue, LLVM::AtomicOrdering::monotonic,
      LLVM::AtomicOrdering::monotonic, "device");
  Value won = LLVM::ExtractValueOp::create(b, cas, ArrayRef<int64_t>{1});
  ifThen(won, [&] {
    auto field = [&](int64_t index, Value v) {
      Value ptr = gep(status, i64T, i64(index));
      store(toI64(v), ptr, 8);
    };
    field(KVCACHE_STATUS_ENTRY, entry);
    field(KVCACHE_STATUS_VALUE, value);
    field(KVCACHE_STATUS_BOUND, bound);
  });
}

Value KernelBuilder::statusCode(Value status) {
  // Volatile: another block of an earlier kernel wrote it; never cache.
  Type i64T = b.getI64Type();
  return LLVM::LoadOp::create(b, i64T,
                              gep(status, i64T, i64(KVCACHE_STATUS_CODE)), 8,
                              /*isVolatile=*/true);
}
