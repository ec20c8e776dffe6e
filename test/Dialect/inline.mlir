// RUN: kiln-opt %s -inline | FileCheck %s

// The upstream inliner inlines calls to functions that contain kiln ops,
// including ops with regions.

// CHECK-LABEL: func.func @kernel
// CHECK-NOT: call
// CHECK: kiln.load
// CHECK: kiln.reduce
// CHECK: kiln.reduce.return
// CHECK: kiln.store
func.func @kernel(%p: tensor<8x!kiln.ptr<f32>>, %q: !kiln.ptr<f32>) attributes {kiln.kernel} {
  %0 = call @sum(%p) : (tensor<8x!kiln.ptr<f32>>) -> f32
  kiln.store %q, %0 : !kiln.ptr<f32>
  return
}

// CHECK-NOT: func.func private @sum
func.func private @sum(%p: tensor<8x!kiln.ptr<f32>>) -> f32 attributes {kiln.helper} {
  %v = kiln.load %p : tensor<8x!kiln.ptr<f32>> -> tensor<8xf32>
  %s = kiln.reduce %v axis = 0 : (tensor<8xf32>) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %0 = arith.addf %a, %b : f32
    kiln.reduce.return %0 : f32
  }
  return %s : f32
}
