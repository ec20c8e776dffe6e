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
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: scf.if
// CHECK-NOT: kiln_gpu.barrier
// CHECK: }
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @branch(%off: i32, %p: i1, %v: vector<4xf32>) {
    %a = kiln_gpu.shared_alloc size 1024 alignment 16 offset 0 : !kiln_gpu.shared
    kiln_gpu.shared_store %a[%off], %v : vector<4xf32>
    scf.if %p {
      %x = kiln_gpu.shared_load %a[%off] : vector<4xf32>
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
