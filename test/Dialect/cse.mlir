// RUN: kiln-opt %s -cse | FileCheck %s

// Pure kiln ops are merged; loads are not merged across a store.

// CHECK-LABEL: func.func @merge
// CHECK: kiln.const_param "BLOCK"
// CHECK-NOT: kiln.const_param "BLOCK"
// CHECK: kiln.program_id x
// CHECK-NOT: kiln.program_id x
// CHECK: kiln.load
// CHECK: kiln.store
// CHECK: kiln.load
func.func @merge(%p: !kiln.ptr<i32>) -> (i32, i32, i32, i32, i32, i32) {
  %0 = kiln.const_param "BLOCK" : i32
  %1 = kiln.const_param "BLOCK" : i32
  %2 = kiln.program_id x
  %3 = kiln.program_id x
  %4 = kiln.load %p : !kiln.ptr<i32> -> i32
  kiln.store %p, %0 : !kiln.ptr<i32>
  %5 = kiln.load %p : !kiln.ptr<i32> -> i32
  return %0, %1, %2, %3, %4, %5 : i32, i32, i32, i32, i32, i32
}
