// RUN: kiln-opt %s -split-input-file -tile-gpu-lower-views -verify-diagnostics

// What tile-gpu-lower-views cannot lower is a located error. Views made,
// loaded, stored and carried by scf.for/scf.if/scf.while are lowered
// (tile-gpu-lower-views.mlir); helpers that take views are inlined before
// the GPU stage, so a view never crosses a function boundary there.

// expected-error @below {{views cannot cross function boundaries in the GPU stage (helpers taking views are inlined before it)}}
func.func @helper(%v: !kiln.view<f32, 1>, %o: i32) -> tensor<16xf32> {
  %t = kiln.view_load %v[%o : i32] : !kiln.view<f32, 1> -> tensor<16xf32>
  return %t : tensor<16xf32>
}

// -----

func.func @unknown_user(%p: !kiln.ptr<f32>, %n: i64) {
  %v = kiln.make_view %p, [%n], [%n] : !kiln.ptr<f32> -> !kiln.view<f32, 1>
  // expected-error @below {{'builtin.unrealized_conversion_cast' on a view is not supported by the GPU stage: views are made, loaded, stored and carried by scf.for, scf.if and scf.while only}}
  %x = builtin.unrealized_conversion_cast %v : !kiln.view<f32, 1> to i64
  return
}

// -----

// Boxes have static shapes once a variant is specialized.
func.func @dynamic_box(%p: !kiln.ptr<f32>, %n: i64, %o: i32, %b: i32) {
  %v = kiln.make_view %p, [%n], [%n] : !kiln.ptr<f32> -> !kiln.view<f32, 1>
  // expected-error @below {{view box of dynamic shape 'tensor<?xf32>': the GPU stage runs on specialized variants}}
  %t = kiln.view_load %v[%o : i32] [%b : i32] : !kiln.view<f32, 1> -> tensor<?xf32>
  return
}
