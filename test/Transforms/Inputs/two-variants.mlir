// A generic kernel with two variants (used by tile-specialize.mlir).
func.func @two(%x: !kiln.ptr<f32>) attributes {
    kiln.kernel, kiln.tune = ["B"], kiln.variants = [{B = 16}, {B = 32}]} {
  %b = kiln.const_param "B" : i32
  %c0 = arith.constant 0 : i32
  %r = kiln.arange %c0, %b : tensor<?xi32>
  %c0i = arith.constant 0 : index
  %d = tensor.dim %r, %c0i : tensor<?xi32>
  %size = arith.index_cast %d : index to i32
  %ps = kiln.splat %x [%size : i32] : !kiln.ptr<f32> -> tensor<?x!kiln.ptr<f32>>
  %p = kiln.addptr %ps, %r : tensor<?x!kiln.ptr<f32>>, tensor<?xi32>
  %one = arith.constant 1.0 : f32
  %v = kiln.splat %one [%size : i32] : f32 -> tensor<?xf32>
  kiln.store %p, %v : tensor<?x!kiln.ptr<f32>>
  return
}
