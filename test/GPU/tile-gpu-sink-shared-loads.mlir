// RUN: kiln-opt %s --split-input-file --tile-gpu-sink-shared-loads | FileCheck %s

// Each read moves down to its first use, past pure ops, other reads, an
// allocation and writes through other buffers; two reads that end before
// the same op keep their order.
// CHECK-LABEL: func.func @to_first_use
// CHECK: %[[A:.*]] = kiln_gpu.shared_alloc size 1024
// CHECK: %[[B:.*]] = kiln_gpu.shared_alloc size 1024
// CHECK: kiln_gpu.shared_store %[[B]]
// CHECK: %[[C:.*]] = kiln_gpu.shared_alloc size 64
// CHECK: kiln_gpu.shared_store %[[C]]
// CHECK-NEXT: %[[X:.*]] = kiln_gpu.shared_load %[[A]][%arg0]
// CHECK-NEXT: %[[Y:.*]] = kiln_gpu.shared_load %[[A]][%arg1]
// CHECK-NEXT: arith.addf %[[X]], %[[Y]]
// CHECK: %[[Z:.*]] = kiln_gpu.shared_load %[[B]][%arg0]
// CHECK-NEXT: arith.mulf
module attributes {kiln_gpu.target = "gfx1100", kiln_gpu.warps = 4 : i32} {
  func.func @to_first_use(%i: i32, %j: i32, %v: vector<4xf32>) -> vector<4xf32> {
    %a = kiln_gpu.shared_alloc size 1024 alignment 16 : !kiln_gpu.shared
    %b = kiln_gpu.shared_alloc size 1024 alignment 16 : !kiln_gpu.shared
    %x = kiln_gpu.shared_load %a[%i] : vector<4xf32>
    %y = kiln_gpu.shared_load %a[%j] : vector<4xf32>
    kiln_gpu.shared_store %b[%i], %v : vector<4xf32>
    %c = kiln_gpu.shared_alloc size 64 alignment 16 : !kiln_gpu.shared
    %k = arith.addi %i, %j : i32
    kiln_gpu.shared_store %c[%k], %v : vector<4xf32>
    %s = arith.addf %x, %y : vector<4xf32>
    %z = kiln_gpu.shared_load %b[%i] : vector<4xf32>
    %w = arith.negf %s : vector<4xf32>
    %r = arith.mulf %w, %z : vector<4xf32>
    return %r : vector<4xf32>
  }
}

// -----

// A read stops before a write through its own buffer, a barrier, an
// asynchronous wait and a global store (bytes unknown).
// CHECK-LABEL: func.func @fences
// CHECK: %[[A:.*]] = kiln_gpu.shared_alloc
// CHECK-NEXT: %[[X:.*]] = kiln_gpu.shared_load %[[A]][%arg0]
// CHECK-NEXT: kiln_gpu.shared_store %[[A]]
// CHECK-NEXT: %[[Y:.*]] = kiln_gpu.shared_load %[[A]][%arg0]
// CHECK-NEXT: kiln_gpu.barrier
// CHECK-NEXT: %[[Z:.*]] = kiln_gpu.shared_load %[[A]][%arg1]
// CHECK-NEXT: kiln_gpu.async_wait
// CHECK-NEXT: %[[W:.*]] = kiln_gpu.shared_load %[[A]][%arg0]
// CHECK-NEXT: kiln_gpu.store
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @fences(%i: i32, %j: i32, %v: vector<4xf32>, %p: i64) -> vector<4xf32> {
    %a = kiln_gpu.shared_alloc size 1024 alignment 16 : !kiln_gpu.shared
    %x = kiln_gpu.shared_load %a[%i] : vector<4xf32>
    kiln_gpu.shared_store %a[%j], %v : vector<4xf32>
    %y = kiln_gpu.shared_load %a[%i] : vector<4xf32>
    kiln_gpu.barrier
    %z = kiln_gpu.shared_load %a[%j] : vector<4xf32>
    kiln_gpu.async_wait %a pending 0 : !kiln_gpu.shared
    %w = kiln_gpu.shared_load %a[%i] : vector<4xf32>
    kiln_gpu.store %p[%i], %v alignment 16 : vector<4xf32>
    %s = arith.addf %x, %y : vector<4xf32>
    %t = arith.addf %z, %w : vector<4xf32>
    %r = arith.addf %s, %t : vector<4xf32>
    return %r : vector<4xf32>
  }
}

// -----

// A use inside a region counts at the op holding it; reads in nested
// blocks move within their block only.
// CHECK-LABEL: func.func @regions
// CHECK: arith.addi
// CHECK-NEXT: %[[X:.*]] = kiln_gpu.shared_load
// CHECK-NEXT: scf.if
// CHECK: arith.constant
// CHECK-NEXT: %[[Y:.*]] = kiln_gpu.shared_load
// CHECK-NEXT: arith.addf %[[X]], %[[Y]]
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @regions(%i: i32, %c: i1, %v: vector<4xf32>) -> vector<4xf32> {
    %a = kiln_gpu.shared_alloc size 1024 alignment 16 : !kiln_gpu.shared
    %x = kiln_gpu.shared_load %a[%i] : vector<4xf32>
    %k = arith.addi %i, %i : i32
    %r = scf.if %c -> vector<4xf32> {
      %y = kiln_gpu.shared_load %a[%k] : vector<4xf32>
      %one = arith.constant dense<1.0> : vector<4xf32>
      %s = arith.addf %x, %y : vector<4xf32>
      scf.yield %s : vector<4xf32>
    } else {
      scf.yield %v : vector<4xf32>
    }
    return %r : vector<4xf32>
  }
}

// -----

// Moved, the read of %a would keep its 48 KB alive across %b's: 96 KB,
// more than gfx1100's 64 KB, where 48 KB fit before. Every read of the
// function stays where it was then (%y's move alone would have been free).
// CHECK-LABEL: func.func @over_the_limit
// CHECK: %[[A:.*]] = kiln_gpu.shared_alloc size 49152
// CHECK-NEXT: %[[X:.*]] = kiln_gpu.shared_load %[[A]]
// CHECK-NEXT: %[[Y:.*]] = kiln_gpu.shared_load %[[A]]
// CHECK-NEXT: arith.negf %arg1
// CHECK-NEXT: arith.negf %[[Y]]
// CHECK-NEXT: %[[B:.*]] = kiln_gpu.shared_alloc size 49152
module attributes {kiln_gpu.target = "gfx1100", kiln_gpu.warps = 4 : i32} {
  func.func @over_the_limit(%i: i32, %v: vector<4xf32>) -> vector<4xf32> {
    %a = kiln_gpu.shared_alloc size 49152 alignment 16 : !kiln_gpu.shared
    %x = kiln_gpu.shared_load %a[%i] : vector<4xf32>
    %y = kiln_gpu.shared_load %a[%i] : vector<4xf32>
    %n = arith.negf %v : vector<4xf32>
    %m = arith.negf %y : vector<4xf32>
    %b = kiln_gpu.shared_alloc size 49152 alignment 16 : !kiln_gpu.shared
    kiln_gpu.shared_store %b[%i], %v : vector<4xf32>
    %s = arith.addf %x, %m : vector<4xf32>
    return %s : vector<4xf32>
  }
}
