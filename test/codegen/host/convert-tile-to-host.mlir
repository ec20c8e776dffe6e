// RUN: kiln-opt %s -split-input-file -verify-diagnostics -convert-tile-to-host="entry-suffix=_v0" | FileCheck %s

// Pointers become i64 addresses; masked loads guard each lane with scf.if;
// stores are loop nests; program ids come from the appended arguments; the
// C entry point unpacks `void **args` and the KilnHostProgram.

// CHECK-LABEL: func.func private @kiln_body_copy_v0(
// CHECK-SAME: %[[X:.*]]: i64, %[[Y:.*]]: i64, %[[N:.*]]: i32, %[[PX:.*]]: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %{{.*}}: i32, %[[PROG:.*]]: !llvm.ptr)
// CHECK: tensor.generate
// CHECK: arith.index_cast
// CHECK: %[[PTRS:.*]] = arith.addi {{.*}} : tensor<16xi64>
// CHECK: tensor.generate
// CHECK:   %[[P:.*]] = tensor.extract %[[PTRS]]
// CHECK:   %[[M:.*]] = tensor.extract
// CHECK:   scf.if %[[M]] -> (f32)
// CHECK:     llvm.inttoptr %[[P]] : i64 to !llvm.ptr
// CHECK:     llvm.load {{.*}} {alignment = 4 : i64} : !llvm.ptr -> f32
// CHECK: scf.for
// CHECK:   scf.if
// CHECK:     llvm.store {{.*}} : f32, !llvm.ptr
// CHECK-LABEL: func.func @copy_v0(
// CHECK-SAME: %[[ARGS:.*]]: !llvm.ptr, %[[PRG:.*]]: !llvm.ptr)
// CHECK: llvm.getelementptr %[[ARGS]][0]
// CHECK: llvm.load {{.*}} : !llvm.ptr -> i64
// CHECK: call @kiln_body_copy_v0(
func.func @copy(%x: !kiln.ptr<f32>, %y: !kiln.ptr<f32>, %n: i32) attributes {kiln.kernel} {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %pid = kiln.program_id x
  %r = kiln.arange %c0, %c16 : tensor<16xi32>
  %base = arith.muli %pid, %c16 : i32
  %b = kiln.splat %base : i32 -> tensor<16xi32>
  %offs = arith.addi %b, %r : tensor<16xi32>
  %ns = kiln.splat %n : i32 -> tensor<16xi32>
  %mask = arith.cmpi slt, %offs, %ns : tensor<16xi32>
  %xs = kiln.splat %x : !kiln.ptr<f32> -> tensor<16x!kiln.ptr<f32>>
  %xp = kiln.addptr %xs, %offs : tensor<16x!kiln.ptr<f32>>, tensor<16xi32>
  %v = kiln.load %xp, mask %mask : tensor<16x!kiln.ptr<f32>> -> tensor<16xf32>
  %ys = kiln.splat %y : !kiln.ptr<f32> -> tensor<16x!kiln.ptr<f32>>
  %yp = kiln.addptr %ys, %offs : tensor<16x!kiln.ptr<f32>>, tensor<16xi32>
  kiln.store %yp, %v, mask %mask : tensor<16x!kiln.ptr<f32>>
  return
}

// -----

// dot is a linalg.matmul accumulating into the accumulator; reductions are
// sequential loops over the axis starting from element 0.

// CHECK-LABEL: func.func @mm(
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<16x32xf16>, tensor<32x16xf16>) outs(%{{.*}} : tensor<16x16xf32>)
// CHECK: scf.for
// CHECK:   tensor.extract
// CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32)
// CHECK:     arith.addf %[[ACC]], %{{.*}} : f32
// CHECK:   tensor.insert
func.func @mm(%a: tensor<16x32xf16>, %b: tensor<32x16xf16>) -> tensor<16xf32> {
  %z = arith.constant 0.0 : f32
  %acc = kiln.splat %z : f32 -> tensor<16x16xf32>
  %c = kiln.dot %a, %b, %acc : tensor<16x32xf16>, tensor<32x16xf16> -> tensor<16x16xf32>
  %s = kiln.reduce %c axis = 1 : (tensor<16x16xf32>) -> tensor<16xf32> {
  ^bb0(%p: f32, %q: f32):
    %t = arith.addf %p, %q : f32
    kiln.reduce.return %t : f32
  }
  return %s : tensor<16xf32>
}

// -----

// A view is an LLVM struct (base, sizes, strides); a box load checks every
// coordinate against the view's bounds and reads `other` outside.

// CHECK-LABEL: func.func private @kiln_body_box_v0(
// CHECK: llvm.mlir.undef : !llvm.struct<(i64, array<2 x i64>, array<2 x i64>)>
// CHECK: llvm.insertvalue
// CHECK: tensor.generate
// CHECK:   llvm.extractvalue %{{.*}}[1, 0]
// CHECK:   llvm.extractvalue %{{.*}}[2, 0]
// CHECK:   arith.cmpi sge
// CHECK:   arith.cmpi slt
// CHECK:   scf.if
// CHECK:     llvm.load {{.*}} -> f16
func.func @box(%p: !kiln.ptr<f16>, %m: i64, %n: i64, %r: i32) attributes {kiln.kernel} {
  %c1 = arith.constant 1 : i64
  %v = kiln.make_view %p, [%m, %n], [%n, %c1] : !kiln.ptr<f16> -> !kiln.view<f16, 2>
  %t = kiln.view_load %v[%r : i32, %r : i32] : !kiln.view<f16, 2> -> tensor<16x16xf16>
  kiln.view_store %v[%r : i32, %r : i32], %t : !kiln.view<f16, 2>, tensor<16x16xf16>
  return
}

// -----

func.func @generic(%x: !kiln.ptr<f32>) attributes {kiln.kernel} {
  // expected-error @+1 {{const param 'B' is not specialized; run tile-specialize first}}
  %b = kiln.const_param "B" : i32
  return
}

// -----

// precision = tf32 rounds the f32 operands to 10 mantissa bits first.
// CHECK-LABEL: func.func @tf32(
// CHECK: arith.bitcast %{{.*}} : tensor<16x16xf32> to tensor<16x16xi32>
// CHECK: arith.andi %{{.*}}, %{{.*}} : tensor<16x16xi32>
// CHECK: linalg.matmul
func.func @tf32(%a: tensor<16x16xf32>, %b: tensor<16x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %d = kiln.dot %a, %b, %c precision = tf32 : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}

// -----

// Checked mode: the mask is tested first, then the runtime's check, then
// the access.
// CHECK-LABEL: func.func private @kiln_body_chk_v0(
// CHECK: scf.if %{{.*}} -> (f32)
// CHECK:   %[[OK:.*]] = llvm.call @kiln_host_check(
// CHECK:   scf.if %[[OK]] -> (f32)
// CHECK:     llvm.load
// CHECK: %[[OK2:.*]] = llvm.call @kiln_host_check(
// CHECK: scf.if %[[OK2]] {
// CHECK:   llvm.store
// CHECK-LABEL: llvm.func internal @kiln_host_check(
// CHECK: llvm.getelementptr %{{.*}}[48]
module attributes {kiln.check_bounds} {
  func.func @chk(%x: !kiln.ptr<f32>, %m: i1) attributes {kiln.kernel} {
    %v = kiln.load %x, mask %m : !kiln.ptr<f32> -> f32
    kiln.store %x, %v : !kiln.ptr<f32>
    return
  }
}
