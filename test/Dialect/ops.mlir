// RUN: kiln-opt %s | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt | FileCheck %s
// RUN: kiln-opt %s --mlir-print-op-generic | kiln-opt --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: kiln-opt %s -emit-bytecode | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @types
// CHECK-SAME: !kiln.ptr<f32>, %{{.*}}: !kiln.ptr<i1>, %{{.*}}: !kiln.ptr<bf16>,
// CHECK-SAME: %{{.*}}: !kiln.view<f16, 2>, %{{.*}}: !kiln.view<i8, 3>,
// CHECK-SAME: %{{.*}}: tensor<128x!kiln.ptr<f32>>
func.func @types(%a: !kiln.ptr<f32>, %b: !kiln.ptr<i1>, %c: !kiln.ptr<bf16>,
                 %d: !kiln.view<f16, 2>, %e: !kiln.view<i8, 3>,
                 %f: tensor<128x!kiln.ptr<f32>>) {
  return
}

// CHECK-LABEL: func.func @program
func.func @program() -> (i32, i32, i32, i64, f32) {
  // CHECK: kiln.program_id x
  // CHECK: kiln.program_id z
  // CHECK: kiln.num_programs y
  // CHECK: kiln.const_param "BLOCK" : i32
  // CHECK: kiln.const_param "W" : i64
  // CHECK: kiln.const_param "EPS" : f32
  // GENERIC: "kiln.program_id"() <{axis = 0 : i32}> : () -> i32
  // GENERIC: "kiln.const_param"() <{name = "BLOCK"}> : () -> i32
  %0 = kiln.program_id x
  %1 = kiln.program_id z
  %2 = kiln.num_programs y
  %3 = kiln.const_param "BLOCK" : i32
  %4 = kiln.const_param "W" : i64
  %5 = kiln.const_param "EPS" : f32
  return %0, %2, %3, %4, %5 : i32, i32, i32, i64, f32
}

// CHECK-LABEL: func.func @shapes
// CHECK-SAME: (%[[X:.*]]: f32, %[[P:.*]]: !kiln.ptr<f16>, %[[N:.*]]: i32, %[[M:.*]]: i64)
func.func @shapes(%x: f32, %p: !kiln.ptr<f16>, %n: i32, %m: i64) {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  // CHECK: %[[R:.*]] = kiln.arange %{{.*}}, %{{.*}} : tensor<64xi32>
  %r = kiln.arange %c0, %c64 : tensor<64xi32>
  // CHECK: kiln.arange %{{.*}}, %[[N]] : tensor<?xi32>
  %rd = kiln.arange %c0, %n : tensor<?xi32>
  // CHECK: kiln.splat %[[X]] [%[[N]] : i32] : f32 -> tensor<?x64xf32>
  %s = kiln.splat %x [%n : i32] : f32 -> tensor<?x64xf32>
  // CHECK: kiln.splat %[[P]] : !kiln.ptr<f16> -> tensor<128x!kiln.ptr<f16>>
  %sp = kiln.splat %p : !kiln.ptr<f16> -> tensor<128x!kiln.ptr<f16>>
  // CHECK: kiln.splat %[[X]] [%[[N]] : i32, %[[M]] : i64] : f32 -> tensor<?x?xf32>
  %s2 = kiln.splat %x [%n : i32, %m : i64] : f32 -> tensor<?x?xf32>
  // CHECK: %[[E:.*]] = kiln.expand_dims %{{.*}} axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  %e = kiln.expand_dims %r axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  // CHECK: kiln.expand_dims %{{.*}} axis = 1 : tensor<?xi32> -> tensor<?x1xi32>
  %e2 = kiln.expand_dims %rd axis = 1 : tensor<?xi32> -> tensor<?x1xi32>
  // CHECK: kiln.broadcast %[[E]] [%[[N]] : i32] : tensor<1x64xi32> -> tensor<?x64xi32>
  %b = kiln.broadcast %e [%n : i32] : tensor<1x64xi32> -> tensor<?x64xi32>
  // CHECK: kiln.broadcast %[[E]] : tensor<1x64xi32> -> tensor<32x64xi32>
  %b2 = kiln.broadcast %e : tensor<1x64xi32> -> tensor<32x64xi32>
  // CHECK: kiln.reshape %{{.*}} : tensor<32x64xi32> -> tensor<2048xi32>
  %rs = kiln.reshape %b2 : tensor<32x64xi32> -> tensor<2048xi32>
  // CHECK: kiln.reshape %{{.*}} [%[[N]] : i32] : tensor<?x64xi32> -> tensor<?x8x8xi32>
  %rs2 = kiln.reshape %b [%n : i32] : tensor<?x64xi32> -> tensor<?x8x8xi32>
  // CHECK: kiln.trans %{{.*}} order = [1, 0] : tensor<?x64xi32> -> tensor<64x?xi32>
  %t = kiln.trans %b order = [1, 0] : tensor<?x64xi32> -> tensor<64x?xi32>
  // CHECK: kiln.trans %{{.*}} order = [2, 0, 1] : tensor<?x8x8xi32> -> tensor<8x?x8xi32>
  %t3 = kiln.trans %rs2 order = [2, 0, 1] : tensor<?x8x8xi32> -> tensor<8x?x8xi32>
  // GENERIC: "kiln.splat"(%{{.*}}, %{{.*}}) : (f32, i32) -> tensor<?x64xf32>
  // GENERIC: "kiln.expand_dims"(%{{.*}}) <{axis = 0 : i32}> : (tensor<64xi32>) -> tensor<1x64xi32>
  // GENERIC: "kiln.trans"(%{{.*}}) <{order = array<i32: 1, 0>}>
  return
}

// CHECK-LABEL: func.func @pointers
func.func @pointers(%p: !kiln.ptr<f32>, %ps: tensor<128x!kiln.ptr<f32>>,
                    %offs: tensor<128xi32>, %mask: tensor<128xi1>,
                    %other: tensor<128xf32>, %i: i64, %c: i1) {
  // CHECK: %[[Q:.*]] = kiln.addptr %{{.*}}, %{{.*}} : tensor<128x!kiln.ptr<f32>>, tensor<128xi32>
  %q = kiln.addptr %ps, %offs : tensor<128x!kiln.ptr<f32>>, tensor<128xi32>
  // CHECK: kiln.addptr %{{.*}}, %{{.*}} : !kiln.ptr<f32>, i64
  %p1 = kiln.addptr %p, %i : !kiln.ptr<f32>, i64
  // CHECK: kiln.load %[[Q]] : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
  %v0 = kiln.load %q : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
  // CHECK: kiln.load %[[Q]], mask %{{.*}} : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
  %v1 = kiln.load %q, mask %mask : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
  // CHECK: kiln.load %[[Q]], mask %{{.*}}, other %{{.*}} : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
  %v2 = kiln.load %q, mask %mask, other %other : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
  // CHECK: kiln.load %{{.*}} : !kiln.ptr<f32> -> f32
  %s = kiln.load %p1 : !kiln.ptr<f32> -> f32
  // CHECK: kiln.load %{{.*}}, mask %{{.*}} : !kiln.ptr<f32> -> f32
  %s1 = kiln.load %p1, mask %c : !kiln.ptr<f32> -> f32
  // CHECK: kiln.store %[[Q]], %{{.*}} : tensor<128x!kiln.ptr<f32>>
  kiln.store %q, %v0 : tensor<128x!kiln.ptr<f32>>
  // CHECK: kiln.store %[[Q]], %{{.*}}, mask %{{.*}} : tensor<128x!kiln.ptr<f32>>
  kiln.store %q, %v1, mask %mask : tensor<128x!kiln.ptr<f32>>
  // CHECK: kiln.store %{{.*}}, %{{.*}} : !kiln.ptr<f32>
  kiln.store %p, %s : !kiln.ptr<f32>
  // GENERIC: "kiln.load"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1>}>
  return
}

// CHECK-LABEL: func.func @views
func.func @views(%a: !kiln.ptr<f16>, %m: i64, %k: i64, %lda: i64,
                 %r: i32, %c: i64, %bk: i32, %pad: f16,
                 %t: tensor<64x32xf16>) {
  %c1 = arith.constant 1 : i64
  // CHECK: %[[V:.*]] = kiln.make_view %{{.*}}, [%{{.*}}, %{{.*}}], [%{{.*}}, %{{.*}}] : !kiln.ptr<f16> -> !kiln.view<f16, 2>
  %v = kiln.make_view %a, [%m, %k], [%lda, %c1] : !kiln.ptr<f16> -> !kiln.view<f16, 2>
  // CHECK: kiln.make_view %{{.*}}, [%{{.*}}], [%{{.*}}] : !kiln.ptr<f16> -> !kiln.view<f16, 1>
  %v1 = kiln.make_view %a, [%m], [%c1] : !kiln.ptr<f16> -> !kiln.view<f16, 1>
  // CHECK: kiln.view_load %[[V]][%{{.*}} : i32, %{{.*}} : i64] : !kiln.view<f16, 2> -> tensor<64x32xf16>
  %x = kiln.view_load %v[%r : i32, %c : i64] : !kiln.view<f16, 2> -> tensor<64x32xf16>
  // CHECK: kiln.view_load %[[V]][%{{.*}} : i32, %{{.*}} : i32] [%{{.*}} : i32], other %{{.*}} : !kiln.view<f16, 2> -> tensor<64x?xf16>
  %y = kiln.view_load %v[%r : i32, %r : i32] [%bk : i32], other %pad : !kiln.view<f16, 2> -> tensor<64x?xf16>
  // CHECK: kiln.view_store %[[V]][%{{.*}} : i32, %{{.*}} : i32], %{{.*}} : !kiln.view<f16, 2>, tensor<64x32xf16>
  kiln.view_store %v[%r : i32, %r : i32], %t : !kiln.view<f16, 2>, tensor<64x32xf16>
  // GENERIC: "kiln.view_load"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 2, 1, 1>}>
  return
}

// CHECK-LABEL: func.func @dots
func.func @dots(%a: tensor<128x32xf16>, %b: tensor<32x64xf16>,
                %acc: tensor<128x64xf32>,
                %ab: tensor<?x?xbf16>, %bb: tensor<?x64xbf16>,
                %accd: tensor<?x64xf32>,
                %a8: tensor<16x32xi8>, %b8: tensor<32x16xi8>,
                %acc8: tensor<16x16xi32>,
                %af: tensor<64x32xf32>, %bf: tensor<32x64xf32>,
                %accf: tensor<64x64xf32>,
                %ae: tensor<16x32xf8E4M3FN>, %be: tensor<32x16xf8E5M2>,
                %acce: tensor<16x16xf32>) {
  // CHECK: kiln.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x32xf16>, tensor<32x64xf16> -> tensor<128x64xf32>
  %0 = kiln.dot %a, %b, %acc : tensor<128x32xf16>, tensor<32x64xf16> -> tensor<128x64xf32>
  // CHECK: kiln.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x?xbf16>, tensor<?x64xbf16> -> tensor<?x64xf32>
  %1 = kiln.dot %ab, %bb, %accd : tensor<?x?xbf16>, tensor<?x64xbf16> -> tensor<?x64xf32>
  // CHECK: kiln.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x32xi8>, tensor<32x16xi8> -> tensor<16x16xi32>
  %2 = kiln.dot %a8, %b8, %acc8 : tensor<16x32xi8>, tensor<32x16xi8> -> tensor<16x16xi32>
  // CHECK: kiln.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
  %3 = kiln.dot %af, %bf, %accf precision = ieee : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
  // CHECK: kiln.dot %{{.*}}, %{{.*}}, %{{.*}} precision = tf32 : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
  %4 = kiln.dot %af, %bf, %accf precision = tf32 : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
  // CHECK: kiln.dot %{{.*}}, %{{.*}}, %{{.*}} : tensor<16x32xf8E4M3FN>, tensor<32x16xf8E5M2> -> tensor<16x16xf32>
  %5 = kiln.dot %ae, %be, %acce : tensor<16x32xf8E4M3FN>, tensor<32x16xf8E5M2> -> tensor<16x16xf32>
  // GENERIC: "kiln.dot"(%{{.*}}, %{{.*}}, %{{.*}}) <{precision = 1 : i32}>
  return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<64x?xf32>, %idx: tensor<64x?xi32>,
                      %v: tensor<128xi32>) {
  // CHECK: kiln.reduce %{{.*}} axis = 1 : (tensor<64x?xf32>) -> tensor<64xf32> {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
  // CHECK-NEXT: %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
  // CHECK-NEXT: kiln.reduce.return %[[S]] : f32
  // CHECK-NEXT: }
  %s = kiln.reduce %x axis = 1 : (tensor<64x?xf32>) -> tensor<64xf32> {
  ^bb0(%a: f32, %b: f32):
    %0 = arith.addf %a, %b : f32
    kiln.reduce.return %0 : f32
  }
  // Argmax: the accumulated (value, index), then the new (value, index).
  // CHECK: kiln.reduce %{{.*}}, %{{.*}} axis = 1 : (tensor<64x?xf32>, tensor<64x?xi32>) -> (tensor<64xf32>, tensor<64xi32>)
  // CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: i32, %{{.*}}: f32, %{{.*}}: i32):
  // CHECK: kiln.reduce.return %{{.*}}, %{{.*}} : f32, i32
  %m:2 = kiln.reduce %x, %idx axis = 1 : (tensor<64x?xf32>, tensor<64x?xi32>) -> (tensor<64xf32>, tensor<64xi32>) {
  ^bb0(%av: f32, %ai: i32, %bv: f32, %bi: i32):
    %gt = arith.cmpf ogt, %bv, %av : f32
    %eq = arith.cmpf oeq, %bv, %av : f32
    %lt = arith.cmpi slt, %bi, %ai : i32
    %tie = arith.andi %eq, %lt : i1
    %take = arith.ori %gt, %tie : i1
    %rv = arith.select %take, %bv, %av : f32
    %ri = arith.select %take, %bi, %ai : i32
    kiln.reduce.return %rv, %ri : f32, i32
  }
  // CHECK: kiln.reduce %{{.*}} axis = 0 : (tensor<128xi32>) -> i32
  %t = kiln.reduce %v axis = 0 : (tensor<128xi32>) -> i32 {
  ^bb0(%a: i32, %b: i32):
    %0 = arith.maxsi %a, %b : i32
    kiln.reduce.return %0 : i32
  }
  // CHECK: kiln.scan %{{.*}} axis = 0 : (tensor<128xi32>) -> tensor<128xi32> {
  // CHECK: kiln.scan.return %{{.*}} : i32
  %c = kiln.scan %v axis = 0 : (tensor<128xi32>) -> tensor<128xi32> {
  ^bb0(%a: i32, %b: i32):
    %0 = arith.addi %a, %b : i32
    kiln.scan.return %0 : i32
  }
  // CHECK: kiln.scan %{{.*}} axis = 1 reverse : (tensor<64x?xf32>) -> tensor<64x?xf32>
  %cr = kiln.scan %x axis = 1 reverse : (tensor<64x?xf32>) -> tensor<64x?xf32> {
  ^bb0(%a: f32, %b: f32):
    %0 = arith.mulf %a, %b : f32
    kiln.scan.return %0 : f32
  }
  // GENERIC: "kiln.reduce"(%{{.*}}) <{axis = 1 : i32}> ({
  // GENERIC: "kiln.scan"(%{{.*}}) <{axis = 1 : i32, reverse}> ({
  return
}

// CHECK-LABEL: func.func @atomics
func.func @atomics(%ps: tensor<128x!kiln.ptr<f32>>, %v: tensor<128xf32>,
                   %mask: tensor<128xi1>, %p: !kiln.ptr<i32>, %i: i32,
                   %j: i32) {
  // CHECK: kiln.atomic_rmw add, %{{.*}}, %{{.*}}, mask %{{.*}} : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
  %0 = kiln.atomic_rmw add, %ps, %v, mask %mask : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
  // CHECK: kiln.atomic_rmw max, %{{.*}}, %{{.*}} : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
  %1 = kiln.atomic_rmw max, %ps, %v : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
  // CHECK: kiln.atomic_rmw min, %{{.*}}, %{{.*}} : !kiln.ptr<i32> -> i32
  %2 = kiln.atomic_rmw min, %p, %i : !kiln.ptr<i32> -> i32
  // CHECK: kiln.atomic_rmw umax, %{{.*}}, %{{.*}} : !kiln.ptr<i32> -> i32
  %3 = kiln.atomic_rmw umax, %p, %i : !kiln.ptr<i32> -> i32
  // CHECK: kiln.atomic_rmw umin, %{{.*}}, %{{.*}} : !kiln.ptr<i32> -> i32
  %4 = kiln.atomic_rmw umin, %p, %i : !kiln.ptr<i32> -> i32
  // CHECK: kiln.atomic_rmw and, %{{.*}}, %{{.*}} : !kiln.ptr<i32> -> i32
  %5 = kiln.atomic_rmw and, %p, %i : !kiln.ptr<i32> -> i32
  // CHECK: kiln.atomic_rmw or, %{{.*}}, %{{.*}} : !kiln.ptr<i32> -> i32
  %6 = kiln.atomic_rmw or, %p, %i : !kiln.ptr<i32> -> i32
  // CHECK: kiln.atomic_rmw xor, %{{.*}}, %{{.*}} : !kiln.ptr<i32> -> i32
  %7 = kiln.atomic_rmw xor, %p, %i : !kiln.ptr<i32> -> i32
  // CHECK: kiln.atomic_rmw xchg, %{{.*}}, %{{.*}} : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
  %8 = kiln.atomic_rmw xchg, %ps, %v : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
  // CHECK: kiln.atomic_cas %{{.*}}, %{{.*}}, %{{.*}} : !kiln.ptr<i32> -> i32
  %9 = kiln.atomic_cas %p, %i, %j : !kiln.ptr<i32> -> i32
  // GENERIC: "kiln.atomic_rmw"(%{{.*}}, %{{.*}}, %{{.*}}) <{kind = 0 : i32}>
  return
}

// CHECK-LABEL: func.func @debug
func.func @debug(%x: f32, %t: tensor<4xi32>, %ok: tensor<4xi1>, %c: i1) {
  // CHECK: kiln.print "x = " (%{{.*}}, %{{.*}} : f32, tensor<4xi32>)
  kiln.print "x = " (%x, %t : f32, tensor<4xi32>)
  // CHECK: kiln.print "hello"
  kiln.print "hello"
  // CHECK: kiln.assert %{{.*}}, "index out of range" : tensor<4xi1>
  kiln.assert %ok, "index out of range" : tensor<4xi1>
  // CHECK: kiln.assert %{{.*}}, "scalar" : i1
  kiln.assert %c, "scalar" : i1
  return
}

// CHECK-LABEL: func.func @kernel
// CHECK-SAME: %{{.*}}: !kiln.ptr<f32> {kiln.align = 16 : i64}
// CHECK-SAME: %{{.*}}: i32 {kiln.div = 8 : i64}
// CHECK-SAME: kiln.grid = ["cdiv(n, BLOCK)"]
// CHECK-SAME: kiln.kernel
// CHECK-SAME: kiln.variants = [{BLOCK = 128 : i32}, {BLOCK = 256 : i32}]
func.func @kernel(%x: !kiln.ptr<f32> {kiln.align = 16}, %n: i32 {kiln.div = 8})
    attributes {kiln.kernel, kiln.grid = ["cdiv(n, BLOCK)"],
                kiln.variants = [{BLOCK = 128 : i32}, {BLOCK = 256 : i32}],
                kiln.tune = {BLOCK = [128, 256]}, kiln.key = ["n"],
                kiln.where = "BLOCK >= n"} {
  return
}

// CHECK-LABEL: func.func private @helper
// CHECK-SAME: kiln.helper
func.func private @helper(%x: f32) -> f32 attributes {kiln.helper} {
  return %x : f32
}

// CHECK: module @kernel_v0 attributes {kiln.variant = {BLOCK = 128 : i32}}
module @kernel_v0 attributes {kiln.variant = {BLOCK = 128 : i32}} {
}
