// RUN: kiln-opt %s -split-input-file -tile-specialize -verify-diagnostics | FileCheck %s
// RUN: kiln-opt %S/Inputs/two-variants.mlir -tile-specialize=only-variant=1 | FileCheck %s --check-prefix=ONLY
// RUN: not kiln-opt %S/Inputs/two-variants.mlir -tile-specialize=only-variant=2 2>&1 | FileCheck %s --check-prefix=RANGE

// only-variant=N keeps variant N alone (the index stays N).
// ONLY-NOT: module @two_v0
// ONLY-LABEL: module @two_v1 attributes {kiln.variant = {B = 32 : i64}, kiln.variant_index = 1 : i64}
// ONLY: kiln.store %{{.*}}, %{{.*}} : tensor<32x!kiln.ptr<f32>>
// ONLY-NOT: module @two_v
// RANGE: error: only-variant=2: no kernel has a variant with that index

// One nested module per variant, named <kernel>_v<index>, with the
// variant's values; const params become constants and every tile is
// static. The generic kernel is gone.
// CHECK-LABEL: module @scale_v0 attributes {kiln.variant = {BLOCK = 64 : i64, stages = 2 : i64, warps = 4 : i64}, kiln.variant_index = 0 : i64} {
// CHECK:   func.func @scale(%[[X:.*]]: !kiln.ptr<f32>, %[[N:.*]]: i32) attributes {kiln.grid = ["(cdiv n BLOCK)"], kiln.kernel, kiln.tune = ["BLOCK", "warps", "stages"]} {
// CHECK-NOT: kiln.const_param
// CHECK-NOT: ?x
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[C64:.*]] = arith.constant 64 : i32
// CHECK:     %[[R:.*]] = kiln.arange %[[C0]], %[[C64]] : tensor<64xi32>
// CHECK:     %[[NS:.*]] = kiln.splat %[[N]] : i32 -> tensor<64xi32>
// CHECK:     %[[M:.*]] = arith.cmpi slt, %[[R]], %[[NS]] : tensor<64xi32>
// CHECK:     %[[PS:.*]] = kiln.splat %{{.*}} : !kiln.ptr<f32> -> tensor<64x!kiln.ptr<f32>>
// CHECK:     %[[P:.*]] = kiln.addptr %[[PS]], %[[R]] : tensor<64x!kiln.ptr<f32>>, tensor<64xi32>
// CHECK:     %[[V:.*]] = kiln.load %[[P]], mask %[[M]] : tensor<64x!kiln.ptr<f32>> -> tensor<64xf32>
// CHECK:     %[[E:.*]] = math.exp %[[V]] : tensor<64xf32>
// CHECK:     kiln.store %[[P]], %[[E]], mask %[[M]] : tensor<64x!kiln.ptr<f32>>
// CHECK:   }
// CHECK: }
// CHECK-LABEL: module @scale_v1 attributes {kiln.variant = {BLOCK = 128 : i64, stages = 2 : i64, warps = 8 : i64}, kiln.variant_index = 1 : i64} {
// CHECK:     kiln.arange %{{.*}}, %{{.*}} : tensor<128xi32>
// CHECK:     kiln.load %{{.*}}, mask %{{.*}} : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
// CHECK-NOT: func.func @scale(

func.func @scale(%x: !kiln.ptr<f32>, %n: i32) attributes {
    kiln.kernel, kiln.grid = ["(cdiv n BLOCK)"],
    kiln.tune = ["BLOCK", "warps", "stages"],
    kiln.variants = [{BLOCK = 64, warps = 4, stages = 2},
                     {BLOCK = 128, warps = 8, stages = 2}]} {
  %block = kiln.const_param "BLOCK" : i32
  %pid = kiln.program_id x
  %c0 = arith.constant 0 : i32
  %r = kiln.arange %c0, %block : tensor<?xi32>
  %c0i = arith.constant 0 : index
  %d = tensor.dim %r, %c0i : tensor<?xi32>
  %size = arith.index_cast %d : index to i32
  %ns = kiln.splat %n [%size : i32] : i32 -> tensor<?xi32>
  %m = arith.cmpi slt, %r, %ns : tensor<?xi32>
  %ps = kiln.splat %x [%size : i32] : !kiln.ptr<f32> -> tensor<?x!kiln.ptr<f32>>
  %p = kiln.addptr %ps, %r : tensor<?x!kiln.ptr<f32>>, tensor<?xi32>
  %v = kiln.load %p, mask %m : tensor<?x!kiln.ptr<f32>> -> tensor<?xf32>
  %e = math.exp %v : tensor<?xf32>
  kiln.store %p, %e, mask %m : tensor<?x!kiln.ptr<f32>>
  return
}

// -----

// Sizes computed from const params (products, cdiv, min) fold; the loop
// carries a static tile.
// CHECK-LABEL: module @acc_v0
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<32x16xf32>
// CHECK: %[[COL:.*]] = kiln.splat %{{.*}} : f32 -> tensor<32x1xf32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[Z]]) -> (tensor<32x16xf32>)  : i32 {
// CHECK:   %[[B:.*]] = kiln.broadcast %[[COL]] : tensor<32x1xf32> -> tensor<32x16xf32>
// CHECK:   arith.addf %[[A]], %[[B]] : tensor<32x16xf32>
// CHECK: kiln.print "acc" (%{{.*}} : tensor<32x16xf32>)
func.func @acc(%n: i32, %one: f32) attributes {
    kiln.kernel, kiln.variants = [{BM = 16, BN = 8}], kiln.tune = ["BM", "BN"]} {
  %bm = kiln.const_param "BM" : i32
  %bn = kiln.const_param "BN" : i32
  %c2 = arith.constant 2 : i32
  %rows = arith.muli %bm, %c2 : i32
  %c4 = arith.constant 4 : i32
  %cols0 = arith.ceildivsi %bn, %c4 : i32
  %c8 = arith.constant 8 : i32
  %cols1 = arith.muli %cols0, %c8 : i32
  %cols = arith.minsi %cols1, %bm : i32
  %zero = arith.constant 0.0 : f32
  %init = kiln.splat %zero [%rows : i32, %cols : i32] : f32 -> tensor<?x?xf32>
  %col = kiln.splat %one [%rows : i32] : f32 -> tensor<?x1xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %res = scf.for %i = %c0 to %n step %c1 iter_args(%a = %init) -> (tensor<?x?xf32>) : i32 {
    %c0i = arith.constant 0 : index
    %c1i = arith.constant 1 : index
    %d0 = tensor.dim %a, %c0i : tensor<?x?xf32>
    %d1 = tensor.dim %a, %c1i : tensor<?x?xf32>
    %s0 = arith.index_cast %d0 : index to i32
    %s1 = arith.index_cast %d1 : index to i32
    %b = kiln.broadcast %col [%s0 : i32, %s1 : i32] : tensor<?x1xf32> -> tensor<?x?xf32>
    %s = arith.addf %a, %b : tensor<?x?xf32>
    scf.yield %s : tensor<?x?xf32>
  }
  kiln.print "acc" (%res : tensor<?x?xf32>)
  return
}

// -----

// Every variant of every kernel gets its own module.
// CHECK-LABEL: module @a_v0
// CHECK-LABEL: module @a_v1
// CHECK-LABEL: module @b_v0
// CHECK-NOT: module @b_v1
func.func @a() attributes {kiln.kernel, kiln.variants = [{X = 1}, {X = 2}]} {
  return
}
func.func @b() attributes {kiln.kernel, kiln.variants = [{X = 1}]} {
  return
}

// -----

func.func @missing(%x: !kiln.ptr<f32>) attributes {kiln.kernel, kiln.variants = [{A = 16}]} {
  // expected-error @below {{variant has no value for const param 'B'}}
  // expected-note @below {{in variant A=16 of kernel 'missing'}}
  %b = kiln.const_param "B" : i32
  return
}

// -----

func.func @not_pow2(%x: !kiln.ptr<f32>) attributes {
    kiln.kernel, kiln.tune = ["B"], kiln.variants = [{B = 16}, {B = 48}]} {
  %b = kiln.const_param "B" : i32
  %c0 = arith.constant 0 : i32
  // expected-error @below {{arange length 48 (from 0 to 48) is not a power of two}}
  // expected-note @below {{in variant B=48 of kernel 'not_pow2'}}
  %r = kiln.arange %c0, %b : tensor<?xi32>
  return
}

// -----

func.func @small_dot(%a: tensor<16x16xf16>) attributes {
    kiln.kernel, kiln.tune = ["M"], kiln.variants = [{M = 8}]} {
  %m = kiln.const_param "M" : i32
  %z = arith.constant 0.0 : f16
  %x = kiln.splat %z [%m : i32] : f16 -> tensor<?x16xf16>
  %zf = arith.constant 0.0 : f32
  %acc = kiln.splat %zf [%m : i32] : f32 -> tensor<?x16xf32>
  // expected-error @below {{dot: every dimension must be at least 16 (the matrix units' smallest shape), found [8, 16] x [16, 16]}}
  // expected-note @below {{in variant M=8 of kernel 'small_dot'}}
  %d = kiln.dot %x, %a, %acc : tensor<?x16xf16>, tensor<16x16xf16> -> tensor<?x16xf32>
  return
}

// -----

// expected-error @below {{kernel 'novariants' has no 'kiln.variants' to specialize}}
func.func @novariants() attributes {kiln.kernel} {
  return
}

// -----

func.func @calls() attributes {kiln.kernel, kiln.variants = [{}]} {
  // expected-error @below {{call to 'h' in a kernel to specialize; run -tile-inline-helpers first}}
  func.call @h() : () -> ()
  return
}
func.func private @h() attributes {kiln.helper} {
  return
}
