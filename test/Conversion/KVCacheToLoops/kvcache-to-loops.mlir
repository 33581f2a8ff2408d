// kvcache-to-loops: each op becomes sequential scf.for loops over its memrefs;
// checked ops write the status record only while status[0] is 0; a move
// gathers every moved row into a temporary before it writes any target.
// RUN: specc-opt %s --kvcache-to-loops | FileCheck %s --implicit-check-not="kvcache.{{(assign_targets|compact_sources|move_rows|move_accepted_tokens)}}" --implicit-check-not=gpu.
// RUN: specc-opt %s --kvcache-to-loops | FileCheck %s --check-prefix=SCRATCH

// Unchecked assign_targets: no status record, loads sign-extended to i64.
// CHECK-LABEL: func.func @assign_u64(
// CHECK-SAME: %[[RPI:[^:]+]]: memref<?xi64>, %[[R2T:[^:]+]]: memref<?x?xi32>, %[[SEQ:[^:]+]]: memref<?xi64>, %[[NCD:[^:]+]]: memref<?xi64>, %[[TGT:[^:]+]]: memref<?xi64>)
// CHECK: %[[BSD:.*]] = memref.dim %[[RPI]], %{{.*}} : memref<?xi64>
// CHECK: %[[BS:.*]] = arith.index_cast %[[BSD]] : index to i64
// CHECK: %[[SIZED:.*]] = memref.dim %[[TGT]], %{{.*}} : memref<?xi64>
// CHECK: %[[SIZE:.*]] = arith.index_cast %[[SIZED]] : index to i64
// CHECK: %[[TOTAL:.*]] = scf.for %[[I:.*]] = %{{.*}} to %[[BS]] step %{{.*}} iter_args(%[[OFF:.*]] = %{{.*}}) -> (i64) : i64 {
// CHECK: memref.load %[[RPI]][%{{.*}}] : memref<?xi64>
// CHECK: memref.load %[[SEQ]][%{{.*}}] : memref<?xi64>
// CHECK: %[[D:.*]] = memref.load %[[NCD]][%{{.*}}] : memref<?xi64>
// CHECK: %[[ACC:.*]] = arith.addi %[[D]], %{{.*}} : i64
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[ACC]] step %{{.*}} : i64 {
// CHECK: %[[SLOT32:.*]] = memref.load %[[R2T]][%{{.*}}, %{{.*}}] : memref<?x?xi32>
// CHECK: %[[SLOT:.*]] = arith.extsi %[[SLOT32]] : i32 to i64
// CHECK: %[[K:.*]] = arith.addi %[[OFF]], %[[J]] : i64
// CHECK: %[[KI:.*]] = arith.index_cast %[[K]] : i64 to index
// CHECK: memref.store %[[SLOT]], %[[TGT]][%[[KI]]] : memref<?xi64>
// CHECK: %[[NEXT:.*]] = arith.addi %[[OFF]], %[[ACC]] : i64
// CHECK: scf.yield %[[NEXT]] : i64
// CHECK: scf.for %[[E:.*]] = %[[TOTAL]] to %[[SIZE]] step %{{.*}} : i64 {
// CHECK: memref.store %{{.*}}, %[[TGT]][%{{.*}}] : memref<?xi64>
// CHECK: return

// Checked assign_targets on i32 memrefs: every violation is a guarded write
// of (code, entry, value, bound); the target write is truncated to i32.
// CHECK-LABEL: func.func @assign_c32(
// CHECK-SAME: %[[RPI:[^:]+]]: memref<?xi32>, %[[R2T:[^:]+]]: memref<?x?xi32>, %[[SEQ:[^:]+]]: memref<?xi32>, %[[NCD:[^:]+]]: memref<?xi32>, %[[TGT:[^:]+]]: memref<?xi32>, %[[ST:[^:]+]]: memref<4xi64>)
// CHECK: scf.for %[[I:.*]] = %{{.*}} iter_args(%[[OFF:.*]] = %{{.*}}) -> (i64) : i64 {
// CHECK: %[[R32:.*]] = memref.load %[[RPI]][%{{.*}}] : memref<?xi32>
// CHECK: %[[R:.*]] = arith.extsi %[[R32]] : i32 to i64
// Negative drafts: code 2.
// CHECK: %[[CODE:.*]] = memref.load %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: %[[CLEAN:.*]] = arith.cmpi eq, %[[CODE]], %{{.*}} : i64
// CHECK: scf.if %[[CLEAN]] {
// CHECK: %[[C2:.*]] = arith.constant 2 : i64
// CHECK: memref.store %[[C2]], %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: memref.store %[[I]], %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: memref.store %{{.*}}, %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: memref.store %{{.*}}, %[[ST]][%{{.*}}] : memref<4xi64>
// Request index out of [0, max_reqs): code 1 with the index as value.
// CHECK: %[[C1:.*]] = arith.constant 1 : i64
// CHECK: memref.store %[[C1]], %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: memref.store %[[I]], %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: memref.store %[[R]], %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: %[[C3:.*]] = arith.constant 3 : i64
// CHECK: memref.store %[[C3]], %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: } else {
// CHECK: %[[C6:.*]] = arith.constant 6 : i64
// CHECK: memref.store %[[C6]], %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: } else {
// CHECK: %[[SLOT:.*]] = arith.extsi %{{.*}} : i32 to i64
// CHECK: %[[NARROW:.*]] = arith.trunci %[[SLOT]] : i64 to i32
// CHECK: memref.store %[[NARROW]], %[[TGT]][%{{.*}}] : memref<?xi32>
// CHECK: return

// Unchecked compact_sources: the sentinel is compared in i64.
// CHECK-LABEL: func.func @compact_u(
// CHECK-SAME: %[[ACC:[^:]+]]: memref<?x?xi32>, %[[OCL:[^:]+]]: memref<?xi64>, %[[SRC:[^:]+]]: memref<?xi64>)
// CHECK: %[[SENT:.*]] = arith.constant -1 : i64
// CHECK: scf.for
// CHECK: scf.for %{{.*}} iter_args(%[[K:.*]] = %{{.*}}) -> (i64) : i64 {
// CHECK: %[[A32:.*]] = memref.load %[[ACC]][%{{.*}}, %{{.*}}] : memref<?x?xi32>
// CHECK: %[[A:.*]] = arith.extsi %[[A32]] : i32 to i64
// CHECK: %[[KEEP:.*]] = arith.cmpi ne, %[[A]], %[[SENT]] : i64
// CHECK: scf.if %[[KEEP]] {
// CHECK: %[[AI:.*]] = arith.index_cast %[[A]] : i64 to index
// CHECK: %[[V:.*]] = memref.load %[[OCL]][%[[AI]]] : memref<?xi64>
// CHECK: %[[KI:.*]] = arith.index_cast %[[K]] : i64 to index
// CHECK: memref.store %[[V]], %[[SRC]][%[[KI]]] : memref<?xi64>
// CHECK-NOT: memref.store {{.*}} : memref<4xi64>
// CHECK: return

// Checked compact_sources: row count (code 5) against counts[i] + 1, then
// each index against len(out_cache_loc) (code 4, source zeroed).
// CHECK-LABEL: func.func @compact_c(
// CHECK-SAME: %[[ACC:[^:]+]]: memref<?x?xi64>, %[[OCL:[^:]+]]: memref<?xi32>, %[[SRC:[^:]+]]: memref<?xi64>, %[[CNT:[^:]+]]: memref<?xi32>, %[[ST:[^:]+]]: memref<4xi64>)
// CHECK: %[[NOCLD:.*]] = memref.dim %[[OCL]], %{{.*}} : memref<?xi32>
// CHECK: %[[NOCL:.*]] = arith.index_cast %[[NOCLD]] : index to i64
// CHECK: %[[SENT:.*]] = arith.constant -3 : i64
// CHECK: = scf.for
// CHECK: %[[COUNT:.*]] = scf.for
// CHECK: arith.cmpi ne, %{{.*}}, %[[SENT]] : i64
// CHECK: %[[D32:.*]] = memref.load %[[CNT]][%{{.*}}] : memref<?xi32>
// CHECK: %[[D:.*]] = arith.extsi %[[D32]] : i32 to i64
// CHECK: %[[EXPECTED:.*]] = arith.addi %[[D]], %{{.*}} : i64
// CHECK: %[[BAD:.*]] = arith.cmpi ne, %[[COUNT]], %[[EXPECTED]] : i64
// CHECK: scf.if %[[BAD]] {
// CHECK: %[[C5:.*]] = arith.constant 5 : i64
// CHECK: memref.store %[[C5]], %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: memref.store %[[COUNT]], %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: memref.store %[[EXPECTED]], %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: %[[A:.*]] = memref.load %[[ACC]][%{{.*}}, %{{.*}}] : memref<?x?xi64>
// CHECK: arith.cmpi sge, %[[A]], %[[NOCL]] : i64
// CHECK: %[[C4:.*]] = arith.constant 4 : i64
// CHECK: memref.store %[[C4]], %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: memref.store %{{.*}}, %[[SRC]][%{{.*}}] : memref<?xi64>
// CHECK: } else {
// CHECK: %[[V32:.*]] = memref.load %[[OCL]][%{{.*}}] : memref<?xi32>
// CHECK: %[[V:.*]] = arith.extsi %[[V32]] : i32 to i64
// CHECK: memref.store %[[V]], %[[SRC]][%{{.*}}] : memref<?xi64>
// CHECK: return

// Checked move: every slot of every moved entry is tested against the
// smallest buffer (code 7) before the first write, and the move runs only on
// a clean status. Per buffer: rows gathered into a temporary with memcpy,
// then scattered to the targets, then the temporary is freed.
// CHECK-LABEL: func.func @move_gc(
// CHECK-SAME: %[[BUFS:[^:]+]]: memref<?x3xi64>, %[[SRC:[^:]+]]: memref<?xi64>, %[[TGT:[^:]+]]: memref<?xi64>, %[[WS:[^:]+]]: memref<?xi8>, %[[ST:[^:]+]]: memref<4xi64>)
// CHECK: %[[NBD:.*]] = memref.dim %[[BUFS]], %{{.*}} : memref<?x3xi64>
// CHECK: %[[NB:.*]] = arith.index_cast %[[NBD]] : index to i64
// CHECK: %[[ND:.*]] = memref.dim %[[TGT]], %{{.*}} : memref<?xi64>
// CHECK: %[[N:.*]] = arith.index_cast %[[ND]] : index to i64
// CHECK: %[[MIN:.*]] = scf.for %{{.*}} = %{{.*}} to %[[NB]] step %{{.*}} iter_args
// CHECK: %[[CODE:.*]] = memref.load %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: %[[OK:.*]] = arith.cmpi eq, %[[CODE]], %{{.*}} : i64
// CHECK: scf.if %[[OK]] {
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[N]] step
// CHECK: %[[S:.*]] = memref.load %[[SRC]][%{{.*}}] : memref<?xi64>
// CHECK: %[[T:.*]] = memref.load %[[TGT]][%{{.*}}] : memref<?xi64>
// CHECK: arith.cmpi sge, %[[S]], %[[MIN]] : i64
// CHECK: arith.cmpi sge, %[[T]], %[[MIN]] : i64
// CHECK: %[[C7:.*]] = arith.constant 7 : i64
// CHECK: memref.store %[[C7]], %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: memref.store %[[I]], %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: memref.store %{{.*}}, %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: memref.store %[[MIN]], %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: %[[CODE2:.*]] = memref.load %[[ST]][%{{.*}}] : memref<4xi64>
// CHECK: %[[OK2:.*]] = arith.cmpi eq, %[[CODE2]], %{{.*}} : i64
// CHECK: scf.if %[[OK2]] {
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[NB]] step
// CHECK: %[[ADDR:.*]] = memref.load %[[BUFS]][%{{.*}}, %{{.*}}] : memref<?x3xi64>
// CHECK: %[[BASE:.*]] = llvm.inttoptr %[[ADDR]] : i64 to !llvm.ptr
// CHECK: %[[ROWBYTES:.*]] = memref.load %[[BUFS]][%{{.*}}, %{{.*}}] : memref<?x3xi64>
// CHECK: %[[TMPBYTES:.*]] = arith.muli %[[N]], %[[ROWBYTES]] : i64
// CHECK: %[[TMPBYTESI:.*]] = arith.index_cast %[[TMPBYTES]] : i64 to index
// CHECK: %[[TMP:.*]] = memref.alloc(%[[TMPBYTESI]]) : memref<?xi8>
// CHECK: %[[TMPADDR:.*]] = memref.extract_aligned_pointer_as_index %[[TMP]] : memref<?xi8> -> index
// CHECK: %[[TMPADDR64:.*]] = arith.index_cast %[[TMPADDR]] : index to i64
// CHECK: %[[TMPPTR:.*]] = llvm.inttoptr %[[TMPADDR64]] : i64 to !llvm.ptr
// Gather: temporary row i <- buffer row sources[i].
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[N]] step
// CHECK: %[[S:.*]] = memref.load %[[SRC]]
// CHECK-NOT: scf.for
// CHECK: %[[IOFF:.*]] = arith.muli %[[I]], %[[ROWBYTES]] : i64
// CHECK: %[[TO:.*]] = llvm.getelementptr %[[TMPPTR]][%[[IOFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[SOFF:.*]] = arith.muli %[[S]], %[[ROWBYTES]] : i64
// CHECK: %[[FROM:.*]] = llvm.getelementptr %[[BASE]][%[[SOFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: "llvm.intr.memcpy"(%[[TO]], %[[FROM]], %[[ROWBYTES]]) <{isVolatile = false}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
// Scatter: buffer row targets[i] <- temporary row i.
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[N]] step
// CHECK: %[[T:.*]] = memref.load %[[TGT]]
// CHECK: %[[IOFF:.*]] = arith.muli %[[I]], %[[ROWBYTES]] : i64
// CHECK: %[[FROM:.*]] = llvm.getelementptr %[[TMPPTR]][%[[IOFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[TOFF:.*]] = arith.muli %[[T]], %[[ROWBYTES]] : i64
// CHECK: %[[TO:.*]] = llvm.getelementptr %[[BASE]][%[[TOFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: "llvm.intr.memcpy"(%[[TO]], %[[FROM]], %[[ROWBYTES]]) <{isVolatile = false}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK: memref.dealloc %[[TMP]] : memref<?xi8>
// CHECK: return

// Unchecked move of i32 slots: no status, straight to the per-buffer copy.
// CHECK-LABEL: func.func @move_du(
// CHECK-SAME: %[[BUFS:[^:]+]]: memref<?x3xi64>, %[[SRC:[^:]+]]: memref<?xi32>, %[[TGT:[^:]+]]: memref<?xi32>)
// CHECK-NOT: memref<4xi64>
// CHECK: memref.alloc
// CHECK: memref.load %[[SRC]][%{{.*}}] : memref<?xi32>
// CHECK: "llvm.intr.memcpy"
// CHECK: memref.load %[[TGT]][%{{.*}}] : memref<?xi32>
// CHECK: "llvm.intr.memcpy"
// CHECK: memref.dealloc
// CHECK-NOT: memref<4xi64>
// CHECK: return

// move_accepted_tokens, targets <req_to_token>, mixed index types: the
// status record is zeroed whole, then each request is checked in the order of
// the op's description (codes 2, 5, 4, 1, 3, 7; each record written only
// while status[0] is 0) and its (target, source) pairs enter the plan; then
// skipped, moved and path are stored, and every buffer moves the moving
// entries through one temporary of moved * row bytes.
// CHECK-LABEL: func.func @fused_rows(
// CHECK-SAME: %[[RPI:[^:]+]]: memref<?xi64>, %[[R2T:[^:]+]]: memref<?x?xi32>, %[[SEQ:[^:]+]]: memref<?xi32>, %[[NCD:[^:]+]]: memref<?xi64>, %[[ACC:[^:]+]]: memref<?x?xi32>, %[[OCL:[^:]+]]: memref<?xi64>, %[[BUFS:[^:]+]]: memref<?x3xi64>, %[[WS:[^:]+]]: memref<?xi8>, %[[ST:[^:]+]]: memref<8xi64>)
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: %[[MAX:.*]] = arith.constant 9223372036854775807 : i64
// CHECK: %[[BSD:.*]] = memref.dim %[[ACC]], %{{.*}} : memref<?x?xi32>
// CHECK: %[[BS:.*]] = arith.index_cast %[[BSD]] : index to i64
// CHECK: %[[WD:.*]] = memref.dim %[[ACC]], %{{.*}} : memref<?x?xi32>
// CHECK: %[[W:.*]] = arith.index_cast %[[WD]] : index to i64
// CHECK: %[[N:.*]] = arith.muli %[[BS]], %[[W]] : i64
// CHECK: %[[NOCLD:.*]] = memref.dim %[[OCL]], %{{.*}} : memref<?xi64>
// CHECK: %[[NOCL:.*]] = arith.index_cast %[[NOCLD]] : index to i64
// CHECK: %[[NBD:.*]] = memref.dim %[[BUFS]], %{{.*}} : memref<?x3xi64>
// CHECK: %[[NB:.*]] = arith.index_cast %[[NBD]] : index to i64
// CHECK: %[[SENT:.*]] = arith.constant -4 : i64
// CHECK: %[[MAXREQSD:.*]] = memref.dim %[[R2T]], %{{.*}} : memref<?x?xi32>
// CHECK: %[[MAXREQS:.*]] = arith.index_cast %[[MAXREQSD]] : index to i64
// CHECK: %[[POOLLEND:.*]] = memref.dim %[[R2T]], %{{.*}} : memref<?x?xi32>
// CHECK: %[[POOLLEN:.*]] = arith.index_cast %[[POOLLEND]] : index to i64
// With no buffers the slot bound is INT64_MAX.
// CHECK: %[[MIN:.*]] = scf.for %{{.*}} = %[[ZERO]] to %[[NB]] step %{{.*}} iter_args(%{{.*}} = %[[MAX]]) -> (i64)
// Every field of the record is rewritten.
// CHECK: %[[C8:.*]] = arith.constant 8 : i64
// CHECK-NEXT: scf.for %[[F:.*]] = %[[ZERO]] to %[[C8]] step %{{.*}} : i64 {
// CHECK-NEXT: %[[FI:.*]] = arith.index_cast %[[F]] : i64 to index
// CHECK-NEXT: memref.store %[[ZERO]], %[[ST]][%[[FI]]] : memref<8xi64>
// CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : i64 to index
// CHECK-NEXT: %[[PLAN:.*]] = memref.alloc(%[[NI]]) : memref<?x2xi64>
// CHECK-NEXT: %[[SKIPPED:.*]] = scf.for %[[I:.*]] = %[[ZERO]] to %[[BS]] step %{{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (i64) : i64 {
// The request's plan row starts as (0, 0) pairs, which move nothing.
// CHECK-NEXT: scf.for %{{.*}} = %[[ZERO]] to %[[W]] step
// CHECK: memref.store %[[ZERO]], %[[PLAN]][%{{.*}}, %{{.*}}] : memref<?x2xi64>
// CHECK: memref.store %[[ZERO]], %[[PLAN]][%{{.*}}, %{{.*}}] : memref<?x2xi64>
// (a) Negative drafts: code 2 (entry i, value ncd, bound 0).
// CHECK: %[[D:.*]] = memref.load %[[NCD]][%{{.*}}] : memref<?xi64>
// CHECK: %[[CODE:.*]] = memref.load %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: %[[CLEAN:.*]] = arith.cmpi eq, %[[CODE]], %{{.*}} : i64
// CHECK: scf.if %[[CLEAN]] {
// CHECK: %[[C2:.*]] = arith.constant 2 : i64
// CHECK: memref.store %[[C2]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[I]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[D]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[ZERO]], %[[ST]][%{{.*}}] : memref<8xi64>
// (b) Row count against acc: code 5 (value count, bound acc).
// CHECK: %[[COUNT:.*]] = scf.for %{{.*}} = %[[ZERO]] to %[[W]] step %{{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (i64)
// CHECK: arith.cmpi ne, %{{.*}}, %[[SENT]] : i64
// CHECK: scf.yield
// CHECK: arith.cmpi sge, %[[D]], %[[W]] : i64
// CHECK: %[[C5:.*]] = arith.constant 5 : i64
// CHECK: memref.store %[[C5]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[I]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[COUNT]], %[[ST]][%{{.*}}] : memref<8xi64>
// (c) The row's first position outside out_cache_loc: code 4.
// CHECK: scf.for %{{.*}} = %[[ZERO]] to %[[W]] step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (i1)
// CHECK: %[[A32:.*]] = memref.load %[[ACC]][%{{.*}}, %{{.*}}] : memref<?x?xi32>
// CHECK: %[[A:.*]] = arith.extsi %[[A32]] : i32 to i64
// CHECK: arith.cmpi sge, %[[A]], %[[NOCL]] : i64
// CHECK: %[[C4:.*]] = arith.constant 4 : i64
// CHECK: memref.store %[[C4]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %{{.*}}, %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[A]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[NOCL]], %[[ST]][%{{.*}}] : memref<8xi64>
// (d) The request row (code 1), then its sequence range (code 3).
// CHECK: %[[R:.*]] = memref.load %[[RPI]][%{{.*}}] : memref<?xi64>
// CHECK: %[[S32:.*]] = memref.load %[[SEQ]][%{{.*}}] : memref<?xi32>
// CHECK: %[[S:.*]] = arith.extsi %[[S32]] : i32 to i64
// CHECK: arith.cmpi sge, %[[R]], %[[MAXREQS]] : i64
// CHECK: %[[C1:.*]] = arith.constant 1 : i64
// CHECK: memref.store %[[C1]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[I]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[R]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[MAXREQS]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: arith.cmpi slt, %[[S]], %[[ZERO]] : i64
// CHECK: %[[C3:.*]] = arith.constant 3 : i64
// CHECK: memref.store %[[C3]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[I]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %{{.*}}, %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[POOLLEN]], %[[ST]][%{{.*}}] : memref<8xi64>
// (e) Target req_to_token[r, s + j] and source out_cache_loc[a] against the
// smallest buffer (code 7, target first), then into the plan.
// CHECK: scf.for %{{.*}} = %[[ZERO]] to %[[W]] step %{{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (i64)
// CHECK: %[[T32:.*]] = memref.load %[[R2T]][%{{.*}}, %{{.*}}] : memref<?x?xi32>
// CHECK: %[[T:.*]] = arith.extsi %[[T32]] : i32 to i64
// CHECK: %[[SRC:.*]] = memref.load %[[OCL]][%{{.*}}] : memref<?xi64>
// CHECK: arith.cmpi sge, %[[T]], %[[MIN]] : i64
// CHECK: arith.cmpi sge, %[[SRC]], %[[MIN]] : i64
// CHECK: %[[BADSLOT:.*]] = arith.select %{{.*}}, %[[T]], %[[SRC]] : i64
// CHECK: %[[C7:.*]] = arith.constant 7 : i64
// CHECK: memref.store %[[C7]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %{{.*}}, %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[BADSLOT]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[MIN]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[T]], %[[PLAN]][%{{.*}}, %{{.*}}] : memref<?x2xi64>
// CHECK: memref.store %[[SRC]], %[[PLAN]][%{{.*}}, %{{.*}}] : memref<?x2xi64>
// Skipped, moved (entries whose target differs from their source), path.
// CHECK: %[[MOVED:.*]] = scf.for %{{.*}} = %[[ZERO]] to %[[N]] step %{{.*}} iter_args(%{{.*}} = %[[ZERO]]) -> (i64)
// CHECK: memref.store %[[SKIPPED]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[MOVED]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: %[[PATH:.*]] = scf.if %{{.*}} -> (i64) {
// CHECK: scf.for %{{.*}} = %[[ZERO]] to %[[N]] step %{{.*}} -> (i1)
// CHECK: arith.divsi %{{.*}}, %[[W]] : i64
// CHECK: scf.for %{{.*}} = %[[ZERO]] to %[[N]] step %{{.*}} -> (i1)
// CHECK: arith.divsi %{{.*}}, %[[W]] : i64
// CHECK: memref.store %[[PATH]], %[[ST]][%{{.*}}] : memref<8xi64>
// The move, only when something moves: per buffer, gather every moving
// entry's source row into the temporary, then scatter to the targets.
// CHECK: %[[ANY:.*]] = arith.cmpi ne, %[[MOVED]], %[[ZERO]] : i64
// CHECK-NEXT: scf.if %[[ANY]] {
// CHECK-NEXT: scf.for %{{.*}} = %[[ZERO]] to %[[NB]] step
// CHECK: %[[ADDR:.*]] = memref.load %[[BUFS]][%{{.*}}, %{{.*}}] : memref<?x3xi64>
// CHECK: %[[BASE:.*]] = llvm.inttoptr %[[ADDR]] : i64 to !llvm.ptr
// CHECK: %[[ROWBYTES:.*]] = memref.load %[[BUFS]][%{{.*}}, %{{.*}}] : memref<?x3xi64>
// CHECK: %[[TMPBYTES:.*]] = arith.muli %[[MOVED]], %[[ROWBYTES]] : i64
// CHECK: %[[TMPBYTESI:.*]] = arith.index_cast %[[TMPBYTES]] : i64 to index
// CHECK: %[[TMP:.*]] = memref.alloc(%[[TMPBYTESI]]) : memref<?xi8>
// CHECK: %[[TMPADDR:.*]] = memref.extract_aligned_pointer_as_index %[[TMP]] : memref<?xi8> -> index
// CHECK: %[[TMPADDR64:.*]] = arith.index_cast %[[TMPADDR]] : index to i64
// CHECK: %[[TMPPTR:.*]] = llvm.inttoptr %[[TMPADDR64]] : i64 to !llvm.ptr
// Gather: temporary row m <- row source of the m-th moving entry.
// CHECK: scf.for %{{.*}} = %[[ZERO]] to %[[N]] step %{{.*}} iter_args(%[[M:.*]] = %[[ZERO]]) -> (i64)
// CHECK: %[[PT:.*]] = memref.load %[[PLAN]][%{{.*}}, %{{.*}}] : memref<?x2xi64>
// CHECK: %[[PS:.*]] = memref.load %[[PLAN]][%{{.*}}, %{{.*}}] : memref<?x2xi64>
// CHECK: %[[MOVES:.*]] = arith.cmpi ne, %[[PT]], %[[PS]] : i64
// CHECK: scf.if %[[MOVES]] {
// CHECK: %[[MOFF:.*]] = arith.muli %[[M]], %[[ROWBYTES]] : i64
// CHECK: %[[STAGED:.*]] = llvm.getelementptr %[[TMPPTR]][%[[MOFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[SOFF:.*]] = arith.muli %[[PS]], %[[ROWBYTES]] : i64
// CHECK: %[[FROM:.*]] = llvm.getelementptr %[[BASE]][%[[SOFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: "llvm.intr.memcpy"(%[[STAGED]], %[[FROM]], %[[ROWBYTES]]) <{isVolatile = false}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
// Scatter: row target of the m-th moving entry <- temporary row m.
// CHECK: scf.for %{{.*}} = %[[ZERO]] to %[[N]] step %{{.*}} iter_args(%[[M:.*]] = %[[ZERO]]) -> (i64)
// CHECK: %[[PT:.*]] = memref.load %[[PLAN]][%{{.*}}, %{{.*}}] : memref<?x2xi64>
// CHECK: %[[PS:.*]] = memref.load %[[PLAN]][%{{.*}}, %{{.*}}] : memref<?x2xi64>
// CHECK: %[[MOVES:.*]] = arith.cmpi ne, %[[PT]], %[[PS]] : i64
// CHECK: scf.if %[[MOVES]] {
// CHECK: %[[MOFF:.*]] = arith.muli %[[M]], %[[ROWBYTES]] : i64
// CHECK: %[[STAGED:.*]] = llvm.getelementptr %[[TMPPTR]][%[[MOFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: %[[TOFF:.*]] = arith.muli %[[PT]], %[[ROWBYTES]] : i64
// CHECK: %[[TO:.*]] = llvm.getelementptr %[[BASE]][%[[TOFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
// CHECK: "llvm.intr.memcpy"(%[[TO]], %[[STAGED]], %[[ROWBYTES]]) <{isVolatile = false}> : (!llvm.ptr, !llvm.ptr, i64) -> ()
// CHECK: memref.dealloc %[[TMP]] : memref<?xi8>
// CHECK: memref.dealloc %[[PLAN]] : memref<?x2xi64>
// CHECK-NEXT: return

// targets <window>: D = size(out_cache_loc) / bs (divisor 1 for an empty
// batch), acc > D is code 9 (value acc, bound D), targets are
// out_cache_loc[i * D + j]; no request row is read.
// CHECK-LABEL: func.func @fused_window(
// CHECK-SAME: %[[NCD:[^:]+]]: memref<?xi32>, %[[ACC:[^:]+]]: memref<?x?xi64>, %[[OCL:[^:]+]]: memref<?xi32>, %[[BUFS:[^:]+]]: memref<?x3xi64>, %[[WS:[^:]+]]: memref<?xi8>, %[[ST:[^:]+]]: memref<8xi64>)
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: %[[BSD:.*]] = memref.dim %[[ACC]], %{{.*}} : memref<?x?xi64>
// CHECK: %[[BS:.*]] = arith.index_cast %[[BSD]] : index to i64
// CHECK: %[[NOCLD:.*]] = memref.dim %[[OCL]], %{{.*}} : memref<?xi32>
// CHECK: %[[NOCL:.*]] = arith.index_cast %[[NOCLD]] : index to i64
// CHECK: %[[EMPTY:.*]] = arith.cmpi eq, %[[BS]], %[[ZERO]] : i64
// CHECK-NEXT: %[[DIVISOR:.*]] = arith.select %[[EMPTY]], %[[ONE]], %[[BS]] : i64
// CHECK-NEXT: %[[D:.*]] = arith.divsi %[[NOCL]], %[[DIVISOR]] : i64
// CHECK: %[[PLAN:.*]] = memref.alloc(%{{.*}}) : memref<?x2xi64>
// CHECK: scf.for %[[I:.*]] = %[[ZERO]] to %[[BS]] step
// CHECK: %[[D32:.*]] = memref.load %[[NCD]][%{{.*}}] : memref<?xi32>
// CHECK: %[[DRAFTS:.*]] = arith.extsi %[[D32]] : i32 to i64
// CHECK: %[[ACCN:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i64
// CHECK: arith.cmpi sgt, %[[ACCN]], %[[D]] : i64
// CHECK: %[[C9:.*]] = arith.constant 9 : i64
// CHECK: memref.store %[[C9]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[I]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[ACCN]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[D]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: %[[FIRST:.*]] = arith.muli %[[I]], %[[D]] : i64
// CHECK: %[[POS:.*]] = arith.addi %[[FIRST]], %{{.*}} : i64
// CHECK: %[[POSI:.*]] = arith.index_cast %[[POS]] : i64 to index
// CHECK: %[[T32:.*]] = memref.load %[[OCL]][%[[POSI]]] : memref<?xi32>
// CHECK: %[[T:.*]] = arith.extsi %[[T32]] : i32 to i64
// CHECK: %[[C7:.*]] = arith.constant 7 : i64
// CHECK: memref.store %[[C7]], %[[ST]][%{{.*}}] : memref<8xi64>
// CHECK: memref.store %[[T]], %[[PLAN]][%{{.*}}, %{{.*}}] : memref<?x2xi64>
// CHECK: memref.alloc(%{{.*}}) : memref<?xi8>
// CHECK: "llvm.intr.memcpy"
// CHECK: "llvm.intr.memcpy"
// CHECK: memref.dealloc %{{.*}} : memref<?xi8>
// CHECK: memref.dealloc %[[PLAN]] : memref<?x2xi64>
// CHECK-NEXT: return

// The workspace is scratch of the GPU lowering only: the host never reads it.
// SCRATCH-LABEL: func.func @fused_window(
// SCRATCH-SAME: %[[WS:[^:]+]]: memref<?xi8>
// SCRATCH-NOT: %[[WS]]
// SCRATCH: return

func.func @assign_u64(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi64>,
                      %ncd: memref<?xi64>, %tgt: memref<?xi64>) {
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt
      : memref<?xi64>, memref<?x?xi32>, memref<?xi64>, memref<?xi64> into memref<?xi64>
  return
}

func.func @assign_c32(%rpi: memref<?xi32>, %r2t: memref<?x?xi32>, %seq: memref<?xi32>,
                      %ncd: memref<?xi32>, %tgt: memref<?xi32>, %st: memref<4xi64>) {
  kvcache.assign_targets %rpi, %r2t, %seq, %ncd into %tgt checked status(%st : memref<4xi64>)
      : memref<?xi32>, memref<?x?xi32>, memref<?xi32>, memref<?xi32> into memref<?xi32>
  return
}

func.func @compact_u(%acc: memref<?x?xi32>, %ocl: memref<?xi64>, %src: memref<?xi64>) {
  kvcache.compact_sources %acc, %ocl into %src sentinel -1
      : memref<?x?xi32>, memref<?xi64> into memref<?xi64>
  return
}

func.func @compact_c(%acc: memref<?x?xi64>, %ocl: memref<?xi32>, %src: memref<?xi64>,
                     %ncd: memref<?xi32>, %st: memref<4xi64>) {
  kvcache.compact_sources %acc, %ocl into %src sentinel -3 counts(%ncd : memref<?xi32>)
      checked status(%st : memref<4xi64>)
      : memref<?x?xi64>, memref<?xi32> into memref<?xi64>
  return
}

func.func @move_gc(%bufs: memref<?x3xi64>, %src: memref<?xi64>, %tgt: memref<?xi64>,
                   %ws: memref<?xi8>, %st: memref<4xi64>) {
  kvcache.move_rows %bufs, %src, %tgt overlap <gather_then_scatter>
      workspace(%ws : memref<?xi8>) checked status(%st : memref<4xi64>)
      : memref<?x3xi64>, memref<?xi64>, memref<?xi64>
  return
}

func.func @move_du(%bufs: memref<?x3xi64>, %src: memref<?xi32>, %tgt: memref<?xi32>) {
  kvcache.move_rows %bufs, %src, %tgt overlap <disjoint>
      : memref<?x3xi64>, memref<?xi32>, memref<?xi32>
  return
}

func.func @fused_rows(%rpi: memref<?xi64>, %r2t: memref<?x?xi32>, %seq: memref<?xi32>,
                      %ncd: memref<?xi64>, %acc: memref<?x?xi32>, %ocl: memref<?xi64>,
                      %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  kvcache.move_accepted_tokens targets <req_to_token>
      rows(%rpi, %r2t, %seq : memref<?xi64>, memref<?x?xi32>, memref<?xi32>)
      drafts(%ncd : memref<?xi64>) accept(%acc : memref<?x?xi32>) sentinel -4
      slots(%ocl : memref<?xi64>) buffers(%bufs : memref<?x3xi64>)
      workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}

func.func @fused_window(%ncd: memref<?xi32>, %acc: memref<?x?xi64>, %ocl: memref<?xi32>,
                        %bufs: memref<?x3xi64>, %ws: memref<?xi8>, %st: memref<8xi64>) {
  kvcache.move_accepted_tokens targets <window>
      drafts(%ncd : memref<?xi32>) accept(%acc : memref<?x?xi64>) sentinel -1
      slots(%ocl : memref<?xi32>) buffers(%bufs : memref<?x3xi64>)
      workspace(%ws : memref<?xi8>) status(%st : memref<8xi64>)
  return
}
