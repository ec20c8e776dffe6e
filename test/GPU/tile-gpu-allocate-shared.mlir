// RUN: kiln-opt %s --split-input-file --tile-gpu-allocate-shared --verify-diagnostics | FileCheck %s

// Two buffers live one after the other share their bytes; a third, live
// while the second is, goes after it.
// CHECK-LABEL: func.func @reuse
// CHECK-SAME: kiln_gpu.shared_bytes = 3072
// CHECK: kiln_gpu.shared_alloc size 1024 alignment 16 offset 0
// CHECK: kiln_gpu.shared_alloc size 2048 alignment 16 offset 0
// CHECK: kiln_gpu.shared_alloc size 1024 alignment 16 offset 2048
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @reuse(%off: i32, %v: vector<4xf32>) {
    %a = kiln_gpu.shared_alloc size 1024 alignment 16 : !kiln_gpu.shared
    kiln_gpu.shared_store %a[%off], %v : vector<4xf32>
    %x = kiln_gpu.shared_load %a[%off] : vector<4xf32>
    %b = kiln_gpu.shared_alloc size 2048 alignment 16 : !kiln_gpu.shared
    kiln_gpu.shared_store %b[%off], %x : vector<4xf32>
    %c = kiln_gpu.shared_alloc size 1024 alignment 16 : !kiln_gpu.shared
    kiln_gpu.shared_store %c[%off], %x : vector<4xf32>
    %y = kiln_gpu.shared_load %b[%off] : vector<4xf32>
    kiln_gpu.shared_store %c[%off], %y : vector<4xf32>
    return
  }
}

// -----

// A buffer used inside a loop lives to the end of the loop: one allocated
// before the loop and read in it cannot share with one written after the
// read in the same iteration.
// CHECK-LABEL: func.func @loop
// CHECK: kiln_gpu.shared_alloc size 256 alignment 16 offset 0
// CHECK: scf.for
// CHECK: kiln_gpu.shared_alloc size 256 alignment 16 offset 256
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @loop(%off: i32, %n: index, %v: vector<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %a = kiln_gpu.shared_alloc size 256 alignment 16 : !kiln_gpu.shared
    kiln_gpu.shared_store %a[%off], %v : vector<4xf32>
    scf.for %i = %c0 to %n step %c1 {
      %x = kiln_gpu.shared_load %a[%off] : vector<4xf32>
      %b = kiln_gpu.shared_alloc size 256 alignment 16 : !kiln_gpu.shared
      kiln_gpu.shared_store %b[%off], %x : vector<4xf32>
    }
    return
  }
}

// -----

// More than the target has is an error naming the limit.
module attributes {kiln_gpu.target = "sm_86", kiln_gpu.warps = 4 : i32} {
  // expected-error @below {{needs 131072 bytes of shared memory; sm_86 has at most 101376 per program}}
  func.func @too_much(%off: i32, %v: vector<4xf32>) {
    %a = kiln_gpu.shared_alloc size 131072 alignment 16 : !kiln_gpu.shared
    kiln_gpu.shared_store %a[%off], %v : vector<4xf32>
    return
  }
}

// -----

// expected-error @below {{unknown GPU target 'sm_12'; known: }}
module attributes {kiln_gpu.target = "sm_12"} {
  func.func @f() {
    return
  }
}

// -----

// Copies in flight write their buffer until the wait that covers them: a
// buffer whose last access is a copy lives to that wait, so one allocated
// before the wait goes elsewhere and one allocated after it reuses the
// bytes.
// CHECK-LABEL: func.func @in_flight
// CHECK: kiln_gpu.shared_alloc size 1024 alignment 16 offset 0
// CHECK: kiln_gpu.shared_alloc size 512 alignment 16 offset 1024
// CHECK: kiln_gpu.shared_alloc size 1024 alignment 16 offset 0
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @in_flight(%off: i32, %p: i64, %v: vector<4xf32>) {
    %a = kiln_gpu.shared_alloc size 1024 alignment 16 : !kiln_gpu.shared
    kiln_gpu.async_copy %a[%off], %p size 16
    kiln_gpu.async_commit
    %b = kiln_gpu.shared_alloc size 512 alignment 16 : !kiln_gpu.shared
    kiln_gpu.shared_store %b[%off], %v : vector<4xf32>
    kiln_gpu.async_wait %a pending 0 : !kiln_gpu.shared
    %c = kiln_gpu.shared_alloc size 1024 alignment 16 : !kiln_gpu.shared
    kiln_gpu.shared_store %c[%off], %v : vector<4xf32>
    return
  }
}
