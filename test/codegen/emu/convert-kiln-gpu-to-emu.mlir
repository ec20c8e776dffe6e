// RUN: kiln-opt %s --split-input-file --convert-kiln-gpu-to-emu | FileCheck %s
// REQUIRES: emu-backend

// The kernel runs one GPU thread: it takes the thread (KilnEmuThread) last
// and reads ids from it; the entry loads the arguments from `args` as the
// host ABI stores them. Primitives that involve other threads are indirect
// calls through the thread's callback table (field 0), with the op's
// source location.
// CHECK: llvm.mlir.global internal constant @kiln_emu_str_{{[0-9]+}}("k.tile:3:7\00")
// CHECK-LABEL: llvm.func @k_thread(
// CHECK-SAME: %{{.*}}: i64, %{{.*}}: i1, %[[T:[a-z0-9]+]]: !llvm.ptr)
// The lane: byte 12 of the thread.
// CHECK: %[[LP:.*]] = llvm.getelementptr %[[T]][12] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK: llvm.load %[[LP]] : !llvm.ptr -> i32
// The program id y: byte 24.
// CHECK: llvm.getelementptr %[[T]][24]
// kiln_gpu.shared_store: callback 2 (shared) gives the host address.
// CHECK: %[[OPS:.*]] = llvm.load %[[T]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[SLOT:.*]] = llvm.getelementptr %[[OPS]][2] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[FN:.*]] = llvm.load %[[SLOT]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[P:.*]] = llvm.call %[[FN]](%[[T]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, i32, i32, i32, !llvm.ptr) -> !llvm.ptr
// CHECK: llvm.store %{{.*}}, %[[P]] {alignment = 1 : i64} : vector<4xf32>, !llvm.ptr
// kiln_gpu.barrier: callback 0.
// CHECK: %[[OPS0:.*]] = llvm.load %[[T]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %[[BAR:.*]] = llvm.load %[[OPS0]] : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: llvm.call %[[BAR]](%[[T]], %{{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr) -> ()
// kiln_gpu.shuffle of an f32: as 64 bits through callback 1.
// CHECK: llvm.getelementptr %{{.*}}[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.call %{{.*}}(%[[T]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, i32, i64, i32, i32, !llvm.ptr) -> i64
// Asynchronous copies: callbacks 5, 6, 7.
// CHECK: llvm.getelementptr %{{.*}}[5] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.getelementptr %{{.*}}[6] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.getelementptr %{{.*}}[7] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// The entry.
// CHECK-LABEL: llvm.func @k(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: llvm.call @k_thread(
#loc = loc("k.tile":3:7)
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @k(%p: i64, %m: i1) attributes {kiln.kernel, kiln_gpu.shared_bytes = 1024 : i64} {
    %lane = kiln_gpu.id lane
    %y = kiln.program_id y
    %off = arith.addi %lane, %y : i32
    %buf = kiln_gpu.shared_alloc size 1024 alignment 16 offset 0 : !kiln_gpu.shared
    %v = arith.constant dense<1.0> : vector<4xf32>
    kiln_gpu.shared_store %buf[%off], %v : vector<4xf32> loc(#loc)
    kiln_gpu.barrier loc(#loc)
    %s = arith.constant 1.0 : f32
    %r = kiln_gpu.shuffle xor %s, %lane : f32
    kiln_gpu.async_copy %buf[%off], %p, mask %m size 16
    kiln_gpu.async_commit
    kiln_gpu.async_wait %buf pending 0 : !kiln_gpu.shared
    return
  }
}

// -----

// Checked builds (kiln.check_bounds): an asynchronous copy's source is
// checked like a load (callback 10, 16 bytes, not a store) where its mask
// lets it through, before the copy starts (callback 5); the bytes are read
// when the wait lands them, past any other check.
// CHECK-LABEL: llvm.func @checked_thread(
// CHECK-SAME: %{{.*}}: i64, %[[M:[a-z0-9]+]]: i1, %[[T:[a-z0-9]+]]: !llvm.ptr)
// CHECK-DAG: %[[LOAD:.*]] = llvm.mlir.constant(0 : i32) : i32
// CHECK-DAG: %[[SIXTEEN:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK: %[[SRC:.*]] = llvm.inttoptr
// CHECK: llvm.cond_br %[[M]], ^[[CHK:.*]], ^[[COPY:.*]]
// CHECK: ^[[CHK]]:
// CHECK: llvm.getelementptr %{{.*}}[10] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.call %{{.*}}(%[[T]], %[[SRC]], %[[SIXTEEN]], %[[LOAD]], %{{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr) -> i32
// CHECK: ^[[COPY]]:
// CHECK: llvm.getelementptr %{{.*}}[5] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.call %{{.*}}(%[[T]], %{{.*}}, %[[SRC]],
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32, kiln.check_bounds} {
  func.func @checked(%p: i64, %m: i1) attributes {kiln.kernel, kiln_gpu.shared_bytes = 1024 : i64} {
    %lane = kiln_gpu.id lane
    %buf = kiln_gpu.shared_alloc size 1024 alignment 16 offset 0 : !kiln_gpu.shared
    kiln_gpu.async_copy %buf[%lane], %p, mask %m size 16
    kiln_gpu.async_commit
    kiln_gpu.async_wait %buf pending 0 : !kiln_gpu.shared
    return
  }
}

// -----

// A warpgroup instruction calls the 12th callback (index 11) with its
// descriptors, the operand's shared offset / 16 in their start field, and
// the flags (bit 1: B N-major); register A is passed in memory with a zero
// descriptor. The wait calls the 13th (index 12) with its pending count and
// passes its values through; the fence is nothing.
// CHECK-LABEL: llvm.func @wg_thread(
// CHECK: llvm.lshr %{{.*}}, %{{.*}} : i64
// CHECK: llvm.or %{{.*}}, %{{.*}} : i64
// CHECK: llvm.getelementptr %{{.*}}[11] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.call %{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i64, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK: llvm.getelementptr %{{.*}}[11] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.call
// CHECK: llvm.getelementptr %{{.*}}[12] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.call %{{.*}}(%{{.*}}, %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, i32, !llvm.ptr) -> ()
// CHECK-NOT: llvm.call
// CHECK: llvm.return
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.warps = 4 : i32} {
  func.func @wg(%o: i32, %c: vector<32xf32>, %a: vector<8xf16>) attributes {kiln.kernel} {
    %buf = kiln_gpu.shared_alloc size 16384 alignment 1024 offset 1024 : !kiln_gpu.shared
    kiln_gpu.shared_fence
    %d0 = kiln_gpu.warpgroup_mma "nv.wgmma.m64n64k16.f16" shared %buf[%o], %buf[%o], %c {a_desc = 4611686293305360384 : i64, b_desc = 4611686293338849280 : i64, b_transpose} : vector<32xf32>
    %d1 = kiln_gpu.warpgroup_mma "nv.wgmma.m64n64k16.f16" registers %a : vector<8xf16>, %buf[%o], %d0 {b_desc = 4611686293305360384 : i64} : vector<32xf32>
    %r = kiln_gpu.warpgroup_wait %d1 pending 0 : vector<32xf32>
    return
  }
}

// -----

// Tensor copies: the barrier initialization, arrival and wait call
// callbacks 13, 14 and 16 with the barrier's shared offset; the copy calls
// 15 with the map (the kernel's last argument before the thread, a pointer
// the entry loads from `args`), the destination offset, its coordinates in
// an i32 array on the stack (in the entry block, outermost first) and the
// barrier's offset.
// Invalidation is nothing.
// CHECK-LABEL: llvm.func @tc_thread(
// CHECK-SAME: %{{.*}}: i32, %[[MAP:.*]]: !llvm.ptr, %[[T:.*]]: !llvm.ptr)
// CHECK: %[[COORDS:.*]] = llvm.alloca %{{.*}} x !llvm.array<2 x i32>
// CHECK: llvm.getelementptr %{{.*}}[13] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.call %{{.*}}(%[[T]], %{{.*}}, %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, i32, i32, !llvm.ptr) -> ()
// CHECK: llvm.getelementptr %{{.*}}[14] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.call %{{.*}}(%[[T]], %{{.*}}, %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, i32, i32, !llvm.ptr) -> ()
// CHECK: llvm.getelementptr %[[COORDS]][0, 0]
// CHECK: llvm.getelementptr %[[COORDS]][0, 1]
// CHECK: llvm.getelementptr %{{.*}}[15] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.call %{{.*}}(%[[T]], %[[MAP]], %{{.*}}, %[[COORDS]], %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i32, !llvm.ptr) -> ()
// CHECK: llvm.getelementptr %{{.*}}[16] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: llvm.call %{{.*}}(%[[T]], %{{.*}}, %{{.*}}, %{{.*}}) : !llvm.ptr, (!llvm.ptr, i32, i32, !llvm.ptr) -> ()
// CHECK-NOT: llvm.call
// CHECK: llvm.return
// The entry loads the map's pointer from args[1].
// CHECK-LABEL: llvm.func @tc(
// CHECK: llvm.getelementptr %{{.*}}[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
// CHECK: %[[P:.*]] = llvm.load %{{.*}} : !llvm.ptr -> !llvm.ptr
// CHECK: llvm.load %[[P]] : !llvm.ptr -> !llvm.ptr
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.warps = 4 : i32} {
  func.func @tc(%o: i32, %map: !llvm.ptr {kiln_gpu.tensor_map = 0 : i64}) attributes {kiln.kernel} {
    %buf = kiln_gpu.shared_alloc size 16384 alignment 1024 offset 1024 : !kiln_gpu.shared
    %bars = kiln_gpu.shared_alloc size 8 alignment 8 offset 0 : !kiln_gpu.shared
    %c0 = arith.constant 0 : i32
    kiln_gpu.mbarrier_init %bars[%c0] count 1
    kiln_gpu.mbarrier_arrive_tx %bars[%c0] bytes 16384
    kiln_gpu.tensor_load %buf[%c0], %map[%o, %c0], %bars[%c0] : !llvm.ptr
    kiln_gpu.mbarrier_wait %bars[%c0], %o
    kiln_gpu.mbarrier_inval %bars[%c0]
    return
  }
}
