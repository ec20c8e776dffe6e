// RUN: kiln-opt %s --split-input-file --tile-gpu-insert-barriers --verify-diagnostics | FileCheck %s

// A read of bytes written since the last barrier needs one (RAW); so does a
// write of bytes read (WAR) — here two buffers the allocator gave the same
// bytes. Writes to disjoint bytes need none.
// CHECK-LABEL: func.func @raw_war
// CHECK: kiln_gpu.shared_store %[[A:.*]][
// CHECK-NEXT: kiln_gpu.shared_store %[[C:.*]][
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.shared_load %[[A]]
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.shared_store %[[B:.*]][
// CHECK-NOT: kiln_gpu.barrier
// CHECK: return
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @raw_war(%off: i32, %v: vector<4xf32>) {
    %a = kiln_gpu.shared_alloc size 1024 alignment 16 offset 0 : !kiln_gpu.shared
    %b = kiln_gpu.shared_alloc size 1024 alignment 16 offset 0 : !kiln_gpu.shared
    %c = kiln_gpu.shared_alloc size 1024 alignment 16 offset 1024 : !kiln_gpu.shared
    kiln_gpu.shared_store %a[%off], %v : vector<4xf32>
    kiln_gpu.shared_store %c[%off], %v : vector<4xf32>
    %x = kiln_gpu.shared_load %a[%off] : vector<4xf32>
    kiln_gpu.shared_store %b[%off], %x : vector<4xf32>
    return
  }
}

// -----

// Accesses in a thread-dependent branch count at the branch: the barrier
// goes before the scf.if, never inside it.
// CHECK-LABEL: func.func @branch
// CHECK: kiln_gpu.shared_store
// CHECK: kiln_gpu.barrier
// CHECK-NEXT: scf.if
// CHECK-NOT: kiln_gpu.barrier
// CHECK: }
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @branch(%off: i32, %v: vector<4xf32>) {
    %a = kiln_gpu.shared_alloc size 1024 alignment 16 offset 0 : !kiln_gpu.shared
    kiln_gpu.shared_store %a[%off], %v : vector<4xf32>
    %c0 = arith.constant 0 : i32
    %lane = kiln_gpu.id lane
    %p = arith.cmpi eq, %lane, %c0 : i32
    scf.if %p {
      %x = kiln_gpu.shared_load %a[%off] : vector<4xf32>
    }
    return
  }
}

// -----

// A branch every thread takes alike (its condition comes from arguments
// and loop counters, not from thread ids or registers) gets barriers
// inside: here a round trip through shared memory in the branch, as a
// layout conversion in `if start_n + BLOCK_N > seq { ... }` makes.
// CHECK-LABEL: func.func @uniform_branch
// CHECK: scf.for
// CHECK: scf.if
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.shared_store
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.shared_load
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @uniform_branch(%n: i32, %off: i32, %v: vector<4xf32>) {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %a = kiln_gpu.shared_alloc size 1024 alignment 16 offset 0 : !kiln_gpu.shared
    scf.for %i = %c0 to %n step %c32 : i32 {
      %end = arith.addi %i, %c32 : i32
      %ragged = arith.cmpi sgt, %end, %n : i32
      scf.if %ragged {
        kiln_gpu.shared_store %a[%off], %v : vector<4xf32>
        %x = kiln_gpu.shared_load %a[%off] : vector<4xf32>
      }
    }
    return
  }
}

// -----

// In a loop that writes then reads, the next iteration's write races with
// this iteration's read: barriers after the write and before the next one.
// CHECK-LABEL: func.func @loop
// CHECK: scf.for
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.shared_store
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.shared_load
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @loop(%off: i32, %n: index, %v: vector<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %a = kiln_gpu.shared_alloc size 1024 alignment 16 offset 0 : !kiln_gpu.shared
    scf.for %i = %c0 to %n step %c1 {
      kiln_gpu.shared_store %a[%off], %v : vector<4xf32>
      %x = kiln_gpu.shared_load %a[%off] : vector<4xf32>
    }
    return
  }
}

// -----

// An existing barrier clears what is pending.
// CHECK-LABEL: func.func @kept
// CHECK: kiln_gpu.barrier
// CHECK-NOT: kiln_gpu.barrier
// CHECK: return
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @kept(%off: i32, %v: vector<4xf32>) {
    %a = kiln_gpu.shared_alloc size 1024 alignment 16 offset 0 : !kiln_gpu.shared
    kiln_gpu.shared_store %a[%off], %v : vector<4xf32>
    kiln_gpu.barrier
    %x = kiln_gpu.shared_load %a[%off] : vector<4xf32>
    return
  }
}

// -----

module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @unallocated(%off: i32, %v: vector<4xf32>) {
    %a = kiln_gpu.shared_alloc size 1024 alignment 16 : !kiln_gpu.shared
    // expected-error @below {{accesses a shared buffer without an offset: run tile-gpu-allocate-shared first}}
    kiln_gpu.shared_store %a[%off], %v : vector<4xf32>
    return
  }
}

// -----

// Writes through one buffer do not race with each other (each byte has one
// writer); a write through another buffer on the same bytes does (WAW).
// CHECK-LABEL: func.func @waw
// CHECK: kiln_gpu.shared_store %[[A:.*]][%{{.*}}], %{{.*}} : vector<4xf32>
// CHECK-NEXT: kiln_gpu.shared_store %[[A]][
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.shared_store %[[B:.*]][
// CHECK-NEXT: return
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @waw(%o1: i32, %o2: i32, %v: vector<4xf32>) {
    %a = kiln_gpu.shared_alloc size 1024 alignment 16 offset 0 : !kiln_gpu.shared
    %b = kiln_gpu.shared_alloc size 1024 alignment 16 offset 512 : !kiln_gpu.shared
    kiln_gpu.shared_store %a[%o1], %v : vector<4xf32>
    kiln_gpu.shared_store %a[%o2], %v : vector<4xf32>
    kiln_gpu.shared_store %b[%o1], %v : vector<4xf32>
    return
  }
}

// -----

// A software-pipelined loop: the prologue's copies land at the wait in the
// loop; one barrier per iteration, between the wait and the copy into the
// slot the previous iteration read, covers both the landed bytes (RAW) and
// the reuse of the slot (WAR). After the final wait, a store through a
// buffer on the same bytes waits for a barrier.
// CHECK-LABEL: func.func @pipelined
// CHECK: kiln_gpu.async_copy
// CHECK-NEXT: kiln_gpu.async_commit
// CHECK-NOT: kiln_gpu.barrier
// CHECK: scf.for
// CHECK-NEXT: kiln_gpu.async_wait %{{.*}} pending 1
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.async_copy
// CHECK-NEXT: kiln_gpu.async_commit
// CHECK-NEXT: kiln_gpu.shared_load_matrix
// CHECK-NEXT: }
// CHECK: kiln_gpu.async_wait %{{.*}} pending 0
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.shared_store
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @pipelined(%n: index, %off: i32, %addr: i64, %v: vector<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %buf = kiln_gpu.shared_alloc size 12288 alignment 128 offset 0 : !kiln_gpu.shared
    %epi = kiln_gpu.shared_alloc size 1024 alignment 16 offset 0 : !kiln_gpu.shared
    kiln_gpu.async_copy %buf[%off], %addr size 16
    kiln_gpu.async_commit
    scf.for %i = %c0 to %n step %c1 {
      kiln_gpu.async_wait %buf pending 1 : !kiln_gpu.shared
      kiln_gpu.async_copy %buf[%off], %addr size 16
      kiln_gpu.async_commit
      %x = kiln_gpu.shared_load_matrix %buf[%off] count 4 : vector<8xf16>
    }
    kiln_gpu.async_wait %buf pending 0 : !kiln_gpu.shared
    kiln_gpu.shared_store %epi[%off], %v : vector<4xf32>
    return
  }
}

// -----

// Tensor copies. Initializing a transaction barrier writes it, waiting
// reads it: a barrier between. A tensor copy into bytes the threads read
// since the last barrier needs one (WAR); into bytes they accessed through
// the generic proxy since the last proxy fence it needs a fence first,
// then a barrier, even right after another barrier. Bytes delivered by a
// tensor copy are visible at the wait: reading them needs no barrier, and
// a second copy into other bytes needs no fence.
// CHECK-LABEL: func.func @tensor_copies
// CHECK: kiln_gpu.mbarrier_init
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.mbarrier_wait
// CHECK-NEXT: kiln_gpu.shared_load %[[S:.*]][
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.shared_load %[[T:.*]][
// CHECK-NEXT: kiln_gpu.shared_fence
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: kiln_gpu.tensor_load %[[S]]
// CHECK-NEXT: kiln_gpu.mbarrier_wait
// CHECK-NEXT: kiln_gpu.shared_load %[[S]]
// CHECK-NEXT: kiln_gpu.tensor_load %[[U:.*]][
// CHECK-NEXT: return
module attributes {kiln_gpu.target = "sm_90a", kiln_gpu.warps = 4 : i32} {
  func.func @tensor_copies(%off: i32, %p: i32, %map: !llvm.ptr) {
    %s = kiln_gpu.shared_alloc size 1024 alignment 1024 offset 0 : !kiln_gpu.shared
    %t = kiln_gpu.shared_alloc size 1024 alignment 1024 offset 1024 : !kiln_gpu.shared
    %u = kiln_gpu.shared_alloc size 1024 alignment 1024 offset 2048 : !kiln_gpu.shared
    %bars = kiln_gpu.shared_alloc size 8 alignment 8 offset 4096 : !kiln_gpu.shared
    kiln_gpu.mbarrier_init %bars[%off] count 1
    kiln_gpu.mbarrier_wait %bars[%off], %p
    %x = kiln_gpu.shared_load %s[%off] : vector<4xf32>
    kiln_gpu.barrier
    %y = kiln_gpu.shared_load %t[%off] : vector<4xf32>
    kiln_gpu.tensor_load %s[%off], %map[%off, %off], %bars[%off] : !llvm.ptr
    kiln_gpu.mbarrier_wait %bars[%off], %p
    %z = kiln_gpu.shared_load %s[%off] : vector<4xf32>
    kiln_gpu.tensor_load %u[%off], %map[%off, %off], %bars[%off] : !llvm.ptr
    return
  }
}
