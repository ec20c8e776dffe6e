// RUN: kiln-opt %s --split-input-file --convert-kiln-gpu-to-nvvm | FileCheck %s
// REQUIRES: nvptx-backend

// Ids, program ids, masked and unmasked global accesses (a branch around
// the masked ones), the kernel attributes and the shared-memory array.
// CHECK: llvm.mlir.global external @kiln_shared() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: llvm.func @ids(
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK: llvm.and %{{.*}}, %{{.*}} : i32
// CHECK: nvvm.read.ptx.sreg.ctaid.y
// CHECK: llvm.cond_br
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @ids(%p: i64, %m: i1) attributes {kiln.kernel} {
    %lane = kiln_gpu.id lane
    %y = kiln.program_id y
    %sum = arith.addi %lane, %y : i32
    %off = arith.extui %sum : i32 to i64
    %q = arith.addi %p, %off : i64
    %v = kiln_gpu.load %q, mask %m alignment 16 : vector<4xf32>
    kiln_gpu.store %q, %v alignment 16 : vector<4xf32>
    return
  }
}

// -----

// Shuffles of 32-bit values are one shfl.sync; 16-bit values widen; 64-bit
// values move as two halves. Barriers are bar.sync 0.
// CHECK-LABEL: llvm.func @shuffles(
// CHECK: nvvm.shfl.sync bfly %{{.*}} : i32 -> i32
// CHECK: llvm.zext %{{.*}} : i16 to i32
// CHECK: nvvm.shfl.sync idx %{{.*}} : i32 -> i32
// CHECK-COUNT-2: nvvm.shfl.sync down %{{.*}} : i32 -> i32
// CHECK: nvvm.barrier0
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @shuffles(%x: f32, %h: f16, %d: i64, %o: i32) attributes {kiln.kernel} {
    %a = kiln_gpu.shuffle xor %x, %o : f32
    %b = kiln_gpu.shuffle idx %h, %o : f16
    %c = kiln_gpu.shuffle down %d, %o : i64
    kiln_gpu.barrier
    return
  }
}

// -----

// Shared memory off kiln_shared at each buffer's offset; matrix loads are
// ldmatrix; the matrix instruction is mma.sync with row-major A and
// column-major B.
// CHECK-LABEL: llvm.func @matrix(
// CHECK: llvm.mlir.addressof @kiln_shared : !llvm.ptr<3>
// CHECK: llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 2 : i32
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @matrix(%o: i32, %c: vector<4xf32>) attributes {kiln.kernel} {
    %buf = kiln_gpu.shared_alloc size 4096 alignment 16 offset 0 : !kiln_gpu.shared
    %a = kiln_gpu.shared_load_matrix %buf[%o] count 4 : vector<8xf16>
    %b = kiln_gpu.shared_load_matrix %buf[%o] count 2 transpose : vector<4xf16>
    %d = kiln_gpu.mma "nv.mma.m16n8k16.f16" %a, %b, %c : vector<8xf16>, vector<4xf16> -> vector<4xf32>
    return
  }
}

// -----

// Atomics at device scope, acquire-release; compare-and-swap of floats
// through their bits; printf is vprintf with the arguments packed (f32
// widened to f64); trap.
// CHECK-LABEL: llvm.func @effects(
// CHECK: llvm.atomicrmw fadd %{{.*}}, %{{.*}} syncscope("device") acq_rel : !llvm.ptr<1>, f32
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} syncscope("device") acq_rel acquire : !llvm.ptr<1>, i32
// A masked one (only the owner of an element held in copies swaps) is
// branched around; elsewhere its value is zero.
// CHECK: llvm.cond_br %{{.*}}, ^[[CAS:bb[0-9]+]], ^[[SKIP:bb[0-9]+]]
// CHECK-NEXT: ^[[CAS]]:
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} syncscope("device") acq_rel acquire : !llvm.ptr<1>, i32
// CHECK: ^[[SKIP]]:
// CHECK-NEXT: llvm.br ^{{.*}}(%{{.*}} : f32)
// CHECK: llvm.fpext %{{.*}} : f32 to f64
// CHECK: llvm.call @vprintf(
// CHECK: llvm.intr.trap
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @effects(%p: i64, %x: f32, %m: i1) attributes {kiln.kernel} {
    %old = kiln_gpu.atomic_rmw "add" %p, %x, mask %m : f32
    %s = kiln_gpu.atomic_cas %p, %x, %x : f32
    %sm = kiln_gpu.atomic_cas %p, %x, %x, mask %m : f32
    kiln_gpu.printf "x = %g\n" (%x : f32)
    kiln_gpu.trap
    return
  }
}

// -----

// Asynchronous copies: cp.async (.cg for 16 bytes, .ca below); a mask turns
// into the source size (0: the destination is zero-filled); commit and wait
// map to the group instructions.
// CHECK-LABEL: llvm.func @copies(
// CHECK: %[[SIZE:.*]] = llvm.select %{{.*}}, %{{.*}}, %{{.*}} : i1, i32
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg, %[[SIZE]] : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 1
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @copies(%p: i64, %off: i32, %m: i1) attributes {kiln.kernel, kiln_gpu.shared_bytes = 1024 : i64} {
    %buf = kiln_gpu.shared_alloc size 1024 alignment 16 offset 0 : !kiln_gpu.shared
    kiln_gpu.async_copy %buf[%off], %p, mask %m size 16
    kiln_gpu.async_copy %buf[%off], %p size 4
    kiln_gpu.async_commit
    kiln_gpu.async_wait %buf pending 1 : !kiln_gpu.shared
    return
  }
}

// -----

// exp2 is the hardware's ex2.approx.ftz.f32 (not exp(x * ln 2), which misses
// docs/language.md 9.4's bound for large x), one per element of a vector; f16
// goes through f32. exp is ex2.approx.ftz.f32 of t = x log2(e), corrected by
// d = x - t ln 2 (ln 2 in two parts) as fma(2^t, d, 2^t) where |t| < 128.
// f32 division is div.full.f32 (2 ulp), per element. Other functions are
// expanded into arithmetic: no call.
// CHECK-LABEL: llvm.func @math(
// CHECK-DAG: %[[LOG2E:.*]] = llvm.mlir.constant(1.44269502 : f32) : f32
// CHECK-DAG: %[[LN2HI:.*]] = llvm.mlir.constant(0.693145751 : f32) : f32
// CHECK-DAG: %[[LN2LO:.*]] = llvm.mlir.constant(1.42860677E-6 : f32) : f32
// CHECK-DAG: %[[C128:.*]] = llvm.mlir.constant(1.280000e+02 : f32) : f32
// CHECK: %[[X:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%{{.*}}) : (f32) -> f32
// CHECK: llvm.fpext %{{.*}} : f16 to f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK-NEXT: llvm.fptrunc %{{.*}} : f32 to f16
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: %[[T:.*]] = llvm.fmul %[[X]], %[[LOG2E]] : f32
// CHECK: %[[NT:.*]] = llvm.fneg %[[T]] : f32
// CHECK: %[[D1:.*]] = llvm.intr.fma(%[[NT]], %[[LN2HI]], %[[X]])
// CHECK: %[[D:.*]] = llvm.intr.fma(%[[NT]], %[[LN2LO]], %[[D1]])
// CHECK: %[[R:.*]] = llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"(%[[T]])
// CHECK: %[[Y:.*]] = llvm.intr.fma(%[[R]], %[[D]], %[[R]])
// CHECK: %[[A:.*]] = llvm.intr.fabs(%[[T]])
// CHECK: %[[IN:.*]] = llvm.fcmp "olt" %[[A]], %[[C128]] : f32
// CHECK: llvm.select %[[IN]], %[[Y]], %[[R]] : i1, f32
// CHECK-NOT: llvm.call
// CHECK-COUNT-3: llvm.call_intrinsic "llvm.nvvm.div.full"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK-NOT: llvm.call
// CHECK: llvm.return
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @math(%x: f32, %h: f16, %v: vector<2xf32>, %p: i64) attributes {kiln.kernel} {
    %a = math.exp2 %x : f32
    %b = math.exp2 %h : f16
    %c = math.exp2 %v : vector<2xf32>
    %d = math.exp %a : f32
    %e = math.log %d : f32
    %bb = arith.extf %b : f16 to f32
    %s = arith.addf %e, %bb : f32
    %c0 = vector.extract %c[0] : f32 from vector<2xf32>
    %t = arith.addf %s, %c0 : f32
    %q = arith.divf %t, %e : f32
    %qv = arith.divf %v, %c : vector<2xf32>
    %q1 = vector.extract %qv[1] : f32 from vector<2xf32>
    %u = arith.addf %q, %q1 : f32
    %tv = vector.broadcast %u : f32 to vector<1xf32>
    kiln_gpu.store %p, %tv alignment 4 : vector<1xf32>
    return
  }
}

// -----

// sin and cos: k = roundeven(x * 2/pi), x - k * pi/2 with pi/2 in three
// parts (three fused multiply-adds), polynomials, the quadrant from k in
// floating point. No call, no conversion to an integer.
// CHECK-LABEL: llvm.func @trig(
// CHECK-DAG: llvm.mlir.constant(0.636619746 : f32)
// CHECK-DAG: llvm.mlir.constant(1.57079637 : f32)
// CHECK-DAG: llvm.mlir.constant(-4.37113883E-8 : f32)
// CHECK-DAG: llvm.mlir.constant(-1.71512451E-15 : f32)
// CHECK-COUNT-3: llvm.intr.fma
// CHECK-NOT: llvm.call
// CHECK-NOT: llvm.fptosi
// CHECK: llvm.return
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @trig(%x: f32, %p: i64) attributes {kiln.kernel} {
    %s = math.sin %x : f32
    %c = math.cos %x : f32
    %t = arith.addf %s, %c : f32
    %tv = vector.broadcast %t : f32 to vector<1xf32>
    kiln_gpu.store %p, %tv alignment 4 : vector<1xf32>
    return
  }
}

// -----

// sm_90a's warpgroup instructions: wgmma.mma_async as inline PTX with the
// descriptors (the template OR-ed with bits 4-17 of the operand's shared
// address) or A's registers; one wgmma.fence for the instructions before
// the wait (a batch), which takes and returns every register of the batch
// that other instructions wrote (the accumulators its chains start from,
// here %c twice, and the A registers, packed in pairs), so none is written
// after it; none inside the batch; commit and wait in one
// statement that passes the accumulators through; the proxy fence; the
// shared array aligned as the largest buffer asks (1024 bytes).
// CHECK: llvm.mlir.global external @kiln_shared() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: llvm.func @warpgroup(
// CHECK-DAG: %[[UNDEF:.*]] = llvm.mlir.poison : f32
// CHECK-DAG: %[[BT:.*]] = llvm.mlir.constant(4611686293338849280 : i64) : i64
// CHECK-DAG: %[[AT:.*]] = llvm.mlir.constant(4611686293305360384 : i64) : i64
// CHECK-DAG: %[[FOUR:.*]] = llvm.mlir.constant(4 : i64) : i64
// CHECK-DAG: %[[MASK:.*]] = llvm.mlir.constant(262143 : i64) : i64
// CHECK: llvm.inline_asm has_side_effects "fence.proxy.async.shared::cta;"
// CHECK: llvm.inline_asm has_side_effects "wgmma.fence.sync.aligned;", "=f,{{(=f,)+}}=r,=r,=r,=r,{{(=f,)+}}=f,0,1,{{.*}},67"
// CHECK-NOT: wgmma.fence
// CHECK: %[[AP:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr<3> to i64
// CHECK: %[[AM:.*]] = llvm.and %[[AP]], %[[MASK]] : i64
// CHECK: %[[AS:.*]] = llvm.lshr %[[AM]], %[[FOUR]] : i64
// CHECK: llvm.or %[[AS]], %[[AT]] : i64
// CHECK: llvm.or %{{.*}}, %[[BT]] : i64
// CHECK: llvm.inline_asm has_side_effects "{ .reg .pred p; setp.ne.b32 p, 1, 0; wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}, $31}, $64, $65, p, 1, 1, 0, 1; }", "=f,{{.*}},=f,0,1,{{.*}},31,l,l"
// CHECK-NOT: wgmma.fence
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}, $31}, $64, $65, p, 1, 1, 0, 1; }"
// CHECK-NOT: wgmma.fence
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {$0, {{.*}}, $31}, {$64, $65, $66, $67}, $68, p, 1, 1, 0; }", "=f,{{.*}},31,r,r,r,r,l"
// A chain that starts from zero: scale-d 0 (p false), undefined inputs.
// CHECK: llvm.inline_asm has_side_effects "{ .reg .pred p; setp.ne.b32 p, 0, 0; wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, {{.*}}, $31}, $64, $65, p, 1, 1, 0, 1; }", "=f,{{.*}},l,l" %[[UNDEF]], %[[UNDEF]],
// A register-A instruction whose fragment is loaded after the batch began
// (it cannot be computed before the batch's fence) starts a batch of its
// own, whose fence publishes only the fragment: its accumulator continues
// a chain.
// CHECK: nvvm.ldmatrix
// CHECK: llvm.inline_asm has_side_effects "wgmma.fence.sync.aligned;", "=r,=r,=r,=r,0,1,2,3"
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK: llvm.inline_asm has_side_effects "wgmma.commit_group.sync.aligned; wgmma.wait_group.sync.aligned 0;", "=f,{{.*}},95"
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.warps = 4 : i32} {
  func.func @warpgroup(%o: i32, %c: vector<32xf32>, %a: vector<8xbf16>) attributes {kiln.kernel} {
    %buf = kiln_gpu.shared_alloc size 16384 alignment 1024 offset 0 : !kiln_gpu.shared
    kiln_gpu.shared_fence
    %d0 = kiln_gpu.warpgroup_mma "nv.wgmma.m64n64k16.f16" shared %buf[%o], %buf[%o], %c {a_desc = 4611686293305360384 : i64, b_desc = 4611686293338849280 : i64, b_transpose} : vector<32xf32>
    %d1 = kiln_gpu.warpgroup_mma "nv.wgmma.m64n64k16.f16" shared %buf[%o], %buf[%o], %d0 {a_desc = 4611686293305360384 : i64, b_desc = 4611686293338849280 : i64, b_transpose} : vector<32xf32>
    %d2 = kiln_gpu.warpgroup_mma "nv.wgmma.m64n64k16.bf16" registers %a : vector<8xbf16>, %buf[%o], %c {b_desc = 4611686293305360384 : i64} : vector<32xf32>
    %zero = arith.constant dense<0.0> : vector<32xf32>
    %d3 = kiln_gpu.warpgroup_mma "nv.wgmma.m64n64k16.f16" shared %buf[%o], %buf[%o], %zero {a_desc = 4611686293305360384 : i64, b_desc = 4611686293338849280 : i64, b_transpose} : vector<32xf32>
    %a2 = kiln_gpu.shared_load_matrix %buf[%o] count 4 : vector<8xbf16>
    %d4 = kiln_gpu.warpgroup_mma "nv.wgmma.m64n64k16.bf16" registers %a2 : vector<8xbf16>, %buf[%o], %d2 {b_desc = 4611686293305360384 : i64} : vector<32xf32>
    %r:3 = kiln_gpu.warpgroup_wait %d1, %d4, %d3 pending 0 : vector<32xf32>, vector<32xf32>, vector<32xf32>
    return
  }
}

// -----

// A batch member's A computed after the batch's first instruction by a
// pure op moves above the batch's fence (one fence, publishing the first
// fragment, the chain's accumulator and the second fragment).
// CHECK-LABEL: llvm.func @warpgroup_hoist(
// CHECK: llvm.fneg
// CHECK: llvm.inline_asm has_side_effects "wgmma.fence.sync.aligned;", "=r,=r,=r,=r,{{(=f,)+}}=r,=r,=r,=r,0,
// CHECK-NOT: wgmma.fence
// CHECK-COUNT-2: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// CHECK-NOT: wgmma.fence
// CHECK: wgmma.commit_group.sync.aligned
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.warps = 4 : i32} {
  func.func @warpgroup_hoist(%o: i32, %c: vector<32xf32>, %a: vector<8xbf16>) attributes {kiln.kernel} {
    %buf = kiln_gpu.shared_alloc size 16384 alignment 1024 offset 0 : !kiln_gpu.shared
    %d0 = kiln_gpu.warpgroup_mma "nv.wgmma.m64n64k16.bf16" registers %a : vector<8xbf16>, %buf[%o], %c {b_desc = 4611686293305360384 : i64} : vector<32xf32>
    %a1 = arith.negf %a : vector<8xbf16>
    %d1 = kiln_gpu.warpgroup_mma "nv.wgmma.m64n64k16.bf16" registers %a1 : vector<8xbf16>, %buf[%o], %d0 {b_desc = 4611686293305360384 : i64} : vector<32xf32>
    %r = kiln_gpu.warpgroup_wait %d1 pending 0 : vector<32xf32>
    return
  }
}

// -----

// Tensor copies: the map is a 128-byte grid-constant parameter; the
// barrier and copy statements take 32-bit shared addresses; coordinates go
// innermost first; PTX ISA 8.0.
// CHECK: module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.warps = 8 : i32, kiln_nvptx.min_ptx = 80 : i32}
// CHECK-LABEL: llvm.func @tensor_copies(
// CHECK-SAME: %arg1: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}
// CHECK-DAG: %[[C5:.*]] = llvm.mlir.constant(5 : i32) : i32
// CHECK-DAG: %[[C7:.*]] = llvm.mlir.constant(7 : i32) : i32
// CHECK: llvm.inline_asm has_side_effects "mbarrier.init.shared::cta.b64 [$0], 2;", "r,~{memory}"
// CHECK: llvm.inline_asm has_side_effects "fence.mbarrier_init.release.cluster;", ""
// CHECK: llvm.inline_asm has_side_effects "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], 8192;", "r,~{memory}"
// CHECK: %[[MAP:.*]] = llvm.ptrtoint %arg1 : !llvm.ptr to i64
// CHECK: llvm.inline_asm has_side_effects "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4}], [$5];", "r,l,r,r,r,r,~{memory}" %{{.*}}, %[[MAP]], %arg0, %[[C7]], %[[C5]], %{{.*}}
// CHECK: llvm.inline_asm has_side_effects "{\0A.reg .pred p;\0Akiln_wait:\0Ambarrier.try_wait.parity.shared::cta.b64 p, [$0], $1;\0A@!p bra kiln_wait;\0A}", "r,r,~{memory}"
// CHECK: llvm.inline_asm has_side_effects "mbarrier.inval.shared::cta.b64 [$0];", "r,~{memory}"
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.warps = 8 : i32} {
  func.func @tensor_copies(%o: i32, %map: !llvm.ptr {kiln_gpu.tensor_map = 0 : i64}) attributes {kiln.kernel} {
    %buf = kiln_gpu.shared_alloc size 16384 alignment 1024 offset 0 : !kiln_gpu.shared
    %bars = kiln_gpu.shared_alloc size 16 alignment 8 offset 16384 : !kiln_gpu.shared
    %c0 = arith.constant 0 : i32
    %c5 = arith.constant 5 : i32
    %c7 = arith.constant 7 : i32
    kiln_gpu.mbarrier_init %bars[%c0] count 2
    kiln_gpu.mbarrier_arrive_tx %bars[%c0] bytes 8192
    kiln_gpu.tensor_load %buf[%c0], %map[%c5, %c7, %o], %bars[%c0] : !llvm.ptr
    kiln_gpu.mbarrier_wait %bars[%c0], %o
    kiln_gpu.mbarrier_inval %bars[%c0]
    return
  }
}
