// RUN: kiln-opt %s -split-input-file -tile-gpu-lower-views=relative-offsets=true | FileCheck %s

// tile-gpu-lower-views with relative offsets (targets with range-checked
// accesses): where the strides along the box's extents above 1 are
// bounded (constants, the fast path's `minui` clamps) and the box's reach
// stays under 2^31 bytes, the address is split at the box's origin, a
// scalar pointer `base + sum_d o_d * stride_d`, plus the lanes' offsets
// `sum_d arange(0, S_d) * stride_d`, which do not depend on the box's
// position. The mask is computed from the coordinates as without the
// option. Other boxes keep coordinates times strides.

// Rank 2, row-major (the matmul's A, lda clamped to 2^24 as in the fast
// path): the origin is r * lda + k (the unit stride unmultiplied); the
// lanes' offsets are arange(64) * lda across the rows plus arange(32) down
// the columns.
// CHECK-LABEL: func.func @rank2(
// CHECK-SAME: %[[A:[^:]*]]: !kiln.ptr<f16>, %[[M:[^:]*]]: i32, %[[K:[^:]*]]: i32, %[[LDA:[^:]*]]: i32, %[[R:[^:]*]]: i32, %[[KO:[^:]*]]: i32)
// CHECK: %[[LDA64:.*]] = arith.minui %{{.*}}, %{{.*}} : i64
// CHECK: %[[RR:.*]] = kiln.arange %{{.*}}, %{{.*}} : tensor<64xi32>
// CHECK: %[[ROWS:.*]] = arith.addi %{{.*}}, %[[RR]] : tensor<64xi32>
// CHECK: %[[RIN:.*]] = arith.cmpi ult, %[[ROWS]], %{{.*}} : tensor<64xi32>
// CHECK: %[[R64:.*]] = arith.extsi %[[R]] : i32 to i64
// CHECK: %[[ROWORIGIN:.*]] = arith.muli %[[R64]], %[[LDA64]] : i64
// CHECK: %[[RR64:.*]] = arith.extsi %[[RR]] : tensor<64xi32> to tensor<64xi64>
// CHECK: %[[LS:.*]] = kiln.splat %[[LDA64]] : i64 -> tensor<64xi64>
// CHECK: %[[ROWLANES:.*]] = arith.muli %[[RR64]], %[[LS]] : tensor<64xi64>
// CHECK: %[[CR:.*]] = kiln.arange %{{.*}}, %{{.*}} : tensor<32xi32>
// CHECK: %[[COLS:.*]] = arith.addi %{{.*}}, %[[CR]] : tensor<32xi32>
// CHECK: arith.cmpi ult, %[[COLS]], %{{.*}} : tensor<32xi32>
// CHECK: %[[K64:.*]] = arith.extsi %[[KO]] : i32 to i64
// CHECK: %[[CR64:.*]] = arith.extsi %[[CR]] : tensor<32xi32> to tensor<32xi64>
// CHECK-NOT: arith.muli
// CHECK: %[[MASK:.*]] = arith.andi %{{.*}}, %{{.*}} : tensor<64x32xi1>
// CHECK: %[[ORIGIN:.*]] = arith.addi %[[ROWORIGIN]], %[[K64]] : i64
// CHECK: %[[LANES:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<64x32xi64>
// CHECK: %[[O:.*]] = kiln.addptr %[[A]], %[[ORIGIN]] : !kiln.ptr<f16>, i64
// CHECK: %[[OS:.*]] = kiln.splat %[[O]] : !kiln.ptr<f16> -> tensor<64x32x!kiln.ptr<f16>>
// CHECK: %[[PTRS:.*]] = kiln.addptr %[[OS]], %[[LANES]] : tensor<64x32x!kiln.ptr<f16>>, tensor<64x32xi64>
// CHECK: kiln.load %[[PTRS]], mask %[[MASK]] : tensor<64x32x!kiln.ptr<f16>> -> tensor<64x32xf16>
func.func @rank2(%a: !kiln.ptr<f16>, %M: i32, %K: i32, %lda: i32, %r: i32, %k: i32) -> tensor<64x32xf16> {
  %m64 = arith.extsi %M : i32 to i64
  %k64 = arith.extsi %K : i32 to i64
  %ld = arith.extsi %lda : i32 to i64
  %bound = arith.constant 16777216 : i64
  %lda64 = arith.minui %ld, %bound : i64
  %c1 = arith.constant 1 : i64
  %A = kiln.make_view %a, [%m64, %k64], [%lda64, %c1] : !kiln.ptr<f16> -> !kiln.view<f16, 2>
  %t = kiln.view_load %A[%r : i32, %k : i32] : !kiln.view<f16, 2> -> tensor<64x32xf16>
  return %t : tensor<64x32xf16>
}

// -----

// An unbounded stride, or a reach past 2^31 bytes (1023 * 2^20 f32
// elements): coordinates times strides, from the view's base.
// CHECK-LABEL: func.func @unbounded(
// CHECK-SAME: %[[P:[^:]*]]: !kiln.ptr<f32>
// CHECK-NOT: kiln.addptr %{{.*}} : !kiln.ptr<f32>, i64
// CHECK: kiln.splat %[[P]] : !kiln.ptr<f32> -> tensor<1024x!kiln.ptr<f32>>
// CHECK-LABEL: func.func @too_far(
// CHECK-SAME: %[[P:[^:]*]]: !kiln.ptr<f32>
// CHECK-NOT: kiln.addptr %{{.*}} : !kiln.ptr<f32>, i64
// CHECK: kiln.splat %[[P]] : !kiln.ptr<f32> -> tensor<1024x!kiln.ptr<f32>>
func.func @unbounded(%p: !kiln.ptr<f32>, %n: i64, %s: i64, %o: i32) -> tensor<1024xf32> {
  %V = kiln.make_view %p, [%n], [%s] : !kiln.ptr<f32> -> !kiln.view<f32, 1>
  %t = kiln.view_load %V[%o : i32] : !kiln.view<f32, 1> -> tensor<1024xf32>
  return %t : tensor<1024xf32>
}
func.func @too_far(%p: !kiln.ptr<f32>, %n: i64, %s: i64, %o: i32) -> tensor<1024xf32> {
  %bound = arith.constant 1048576 : i64
  %c = arith.minui %s, %bound : i64
  %V = kiln.make_view %p, [%n], [%c] : !kiln.ptr<f32> -> !kiln.view<f32, 1>
  %t = kiln.view_load %V[%o : i32] : !kiln.view<f32, 1> -> tensor<1024xf32>
  return %t : tensor<1024xf32>
}

// -----

// A unit box dimension adds to the origin only (its stride needs no
// bound); an offset that is the constant 0 adds nothing to it; a box at
// the view's start has no origin term at all; a zero stride adds neither.
// CHECK-LABEL: func.func @rank3(
// CHECK-SAME: %[[P:[^:]*]]: !kiln.ptr<bf16>, %[[S:[^:]*]]: i64, %[[D0:[^:]*]]: i64, %{{[^:]*}}: i64, %[[BH:[^:]*]]: i32)
// CHECK: %[[D1:.*]] = arith.minui
// CHECK: %[[BH64:.*]] = arith.extsi %[[BH]] : i32 to i64
// CHECK: %[[OR:.*]] = arith.muli %[[BH64]], %[[D0]] : i64
// CHECK: %[[R:.*]] = kiln.arange %{{.*}}, %{{.*}} : tensor<16xi32>
// CHECK: %[[R64:.*]] = arith.extsi %[[R]] : tensor<16xi32> to tensor<16xi64>
// CHECK: %[[D1S:.*]] = kiln.splat %[[D1]] : i64 -> tensor<16xi64>
// CHECK: arith.muli %[[R64]], %[[D1S]] : tensor<16xi64>
// CHECK: %[[O:.*]] = kiln.addptr %[[P]], %[[OR]] : !kiln.ptr<bf16>, i64
// CHECK: kiln.splat %[[O]] : !kiln.ptr<bf16> -> tensor<1x16x32x!kiln.ptr<bf16>>
// CHECK-LABEL: func.func @at_start(
// CHECK-NOT: !kiln.ptr<f32>, i64
// CHECK: kiln.splat %{{.*}} : !kiln.ptr<f32> -> tensor<8x!kiln.ptr<f32>>
// CHECK-NOT: kiln.addptr
// CHECK: kiln.load
func.func @rank3(%p: !kiln.ptr<bf16>, %s: i64, %d0: i64, %e1: i64, %bh: i32) -> tensor<1x16x32xbf16> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i64
  %bound = arith.constant 4096 : i64
  %d1 = arith.minui %e1, %bound : i64
  %V = kiln.make_view %p, [%s, %s, %s], [%d0, %d1, %c1] : !kiln.ptr<bf16> -> !kiln.view<bf16, 3>
  %t = kiln.view_load %V[%bh : i32, %c0 : i32, %c0 : i32] : !kiln.view<bf16, 3> -> tensor<1x16x32xbf16>
  return %t : tensor<1x16x32xbf16>
}
func.func @at_start(%p: !kiln.ptr<f32>, %n: i64, %s: i64) -> tensor<8xf32> {
  %c0 = arith.constant 0 : i32
  %z = arith.constant 0 : i64
  %V = kiln.make_view %p, [%n], [%z] : !kiln.ptr<f32> -> !kiln.view<f32, 1>
  %t = kiln.view_load %V[%c0 : i32] : !kiln.view<f32, 1> -> tensor<8xf32>
  return %t : tensor<8xf32>
}
