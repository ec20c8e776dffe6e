// RUN: kiln-opt %s -split-input-file -tile-gpu-lower-views | FileCheck %s

// tile-gpu-lower-views: every view access becomes a kiln.load/kiln.store
// through a tile of pointers, masked by 0 <= o_d + i_d < size_d (one
// unsigned comparison per dimension, on 1-d coordinates, spread to the box).

// Rank 1: an i32 offset against a size extended from i32 compares i32
// coordinates with the i32 size; the address widens them to i64. The unit
// stride adds them unmultiplied.
// CHECK-LABEL: func.func @rank1(
// CHECK-SAME: %[[P:.*]]: !kiln.ptr<f32>, %[[N:.*]]: i32, %[[O:.*]]: i32)
// CHECK-NOT: kiln.make_view
// CHECK: %[[R:.*]] = kiln.arange %{{.*}}, %{{.*}} : tensor<128xi32>
// CHECK: %[[OS:.*]] = kiln.splat %[[O]] : i32 -> tensor<128xi32>
// CHECK: %[[C:.*]] = arith.addi %[[OS]], %[[R]] : tensor<128xi32>
// CHECK: %[[NS:.*]] = kiln.splat %[[N]] : i32 -> tensor<128xi32>
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[C]], %[[NS]] : tensor<128xi32>
// CHECK: %[[W:.*]] = arith.extsi %[[C]] : tensor<128xi32> to tensor<128xi64>
// CHECK-NOT: arith.muli
// CHECK: %[[PS:.*]] = kiln.splat %[[P]] : !kiln.ptr<f32> -> tensor<128x!kiln.ptr<f32>>
// CHECK: %[[PTRS:.*]] = kiln.addptr %[[PS]], %[[W]] : tensor<128x!kiln.ptr<f32>>, tensor<128xi64>
// CHECK: %[[T:.*]] = kiln.load %[[PTRS]], mask %[[IN]] : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
// CHECK: return %[[T]]
func.func @rank1(%p: !kiln.ptr<f32>, %n: i32, %o: i32) -> tensor<128xf32> {
  %n64 = arith.extsi %n : i32 to i64
  %c1 = arith.constant 1 : i64
  %v = kiln.make_view %p, [%n64], [%c1] : !kiln.ptr<f32> -> !kiln.view<f32, 1>
  %t = kiln.view_load %v[%o : i32] : !kiln.view<f32, 1> -> tensor<128xf32>
  return %t : tensor<128xf32>
}

// -----

// Rank 2, row-major (the matmul's A): rows times the runtime leading
// stride, columns unmultiplied; each is computed on a 1-d tile, then
// expanded and broadcast to the box; the masks are and-ed.
// CHECK-LABEL: func.func @rank2(
// CHECK-SAME: %[[A:[^:]*]]: !kiln.ptr<f16>, %[[M:[^:]*]]: i32, %[[K:[^:]*]]: i32, %[[LDA:[^:]*]]: i32, %[[R:[^:]*]]: i32, %[[KO:[^:]*]]: i32)
// CHECK: %[[LDA64:.*]] = arith.extsi %[[LDA]] : i32 to i64
// CHECK: %[[ROWS:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<64xi32>
// CHECK: %[[MS:.*]] = kiln.splat %[[M]] : i32 -> tensor<64xi32>
// CHECK: %[[RIN:.*]] = arith.cmpi ult, %[[ROWS]], %[[MS]] : tensor<64xi32>
// CHECK: %[[RW:.*]] = arith.extsi %[[ROWS]] : tensor<64xi32> to tensor<64xi64>
// CHECK: %[[LS:.*]] = kiln.splat %[[LDA64]] : i64 -> tensor<64xi64>
// CHECK: %[[RO:.*]] = arith.muli %[[RW]], %[[LS]] : tensor<64xi64>
// CHECK: %[[RIN2:.*]] = kiln.expand_dims %[[RIN]] axis = 1 : tensor<64xi1> -> tensor<64x1xi1>
// CHECK: %[[RINB:.*]] = kiln.broadcast %[[RIN2]] : tensor<64x1xi1> -> tensor<64x32xi1>
// CHECK: %[[RO2:.*]] = kiln.expand_dims %[[RO]] axis = 1 : tensor<64xi64> -> tensor<64x1xi64>
// CHECK: %[[ROB:.*]] = kiln.broadcast %[[RO2]] : tensor<64x1xi64> -> tensor<64x32xi64>
// CHECK: %[[KS:.*]] = kiln.splat %[[KO]] : i32 -> tensor<32xi32>
// CHECK: %[[COLS:.*]] = arith.addi %[[KS]], %{{.*}} : tensor<32xi32>
// CHECK: %[[KSZ:.*]] = kiln.splat %[[K]] : i32 -> tensor<32xi32>
// CHECK: %[[CIN:.*]] = arith.cmpi ult, %[[COLS]], %[[KSZ]] : tensor<32xi32>
// CHECK: %[[CW:.*]] = arith.extsi %[[COLS]] : tensor<32xi32> to tensor<32xi64>
// CHECK: %[[CIN2:.*]] = kiln.expand_dims %[[CIN]] axis = 0 : tensor<32xi1> -> tensor<1x32xi1>
// CHECK: %[[CINB:.*]] = kiln.broadcast %[[CIN2]] : tensor<1x32xi1> -> tensor<64x32xi1>
// CHECK: %[[MASK:.*]] = arith.andi %[[RINB]], %[[CINB]] : tensor<64x32xi1>
// CHECK: %[[CW2:.*]] = kiln.expand_dims %[[CW]] axis = 0 : tensor<32xi64> -> tensor<1x32xi64>
// CHECK: %[[CWB:.*]] = kiln.broadcast %[[CW2]] : tensor<1x32xi64> -> tensor<64x32xi64>
// CHECK: %[[OFF:.*]] = arith.addi %[[ROB]], %[[CWB]] : tensor<64x32xi64>
// CHECK: %[[AS:.*]] = kiln.splat %[[A]] : !kiln.ptr<f16> -> tensor<64x32x!kiln.ptr<f16>>
// CHECK: %[[PTRS:.*]] = kiln.addptr %[[AS]], %[[OFF]] : tensor<64x32x!kiln.ptr<f16>>, tensor<64x32xi64>
// CHECK: kiln.load %[[PTRS]], mask %[[MASK]] : tensor<64x32x!kiln.ptr<f16>> -> tensor<64x32xf16>
func.func @rank2(%a: !kiln.ptr<f16>, %M: i32, %K: i32, %lda: i32, %r: i32, %k: i32) -> tensor<64x32xf16> {
  %m64 = arith.extsi %M : i32 to i64
  %k64 = arith.extsi %K : i32 to i64
  %lda64 = arith.extsi %lda : i32 to i64
  %c1 = arith.constant 1 : i64
  %A = kiln.make_view %a, [%m64, %k64], [%lda64, %c1] : !kiln.ptr<f16> -> !kiln.view<f16, 2>
  %t = kiln.view_load %A[%r : i32, %k : i32] : !kiln.view<f16, 2> -> tensor<64x32xf16>
  return %t : tensor<64x32xf16>
}

// -----

// Rank 3 with a unit box dimension (how attention reads a [BM, D] slice):
// the unit dimension's coordinate is the splat offset, no arange; an offset
// that is the constant 0 is the arange itself. Sizes known only as i64 put
// the coordinates in i64 (exact: the i32 offset is widened before the add).
// CHECK-LABEL: func.func @rank3(
// CHECK-SAME: %[[P:[^:]*]]: !kiln.ptr<bf16>, %[[S0:[^:]*]]: i64, %[[S1:[^:]*]]: i64, %[[S2:[^:]*]]: i64, %[[D0:[^:]*]]: i64, %[[D1:[^:]*]]: i64, %[[BH:[^:]*]]: i32, %[[M:[^:]*]]: i32)
// CHECK: %[[BH64:.*]] = arith.extsi %[[BH]] : i32 to i64
// CHECK: %[[C0:.*]] = kiln.splat %[[BH64]] : i64 -> tensor<1xi64>
// CHECK: %[[S0S:.*]] = kiln.splat %[[S0]] : i64 -> tensor<1xi64>
// CHECK: arith.cmpi ult, %[[C0]], %[[S0S]] : tensor<1xi64>
// CHECK: %[[D0S:.*]] = kiln.splat %[[D0]] : i64 -> tensor<1xi64>
// CHECK: arith.muli %[[C0]], %[[D0S]] : tensor<1xi64>
// CHECK: kiln.expand_dims %{{.*}} axis = 1 : tensor<1xi1> -> tensor<1x1xi1>
// CHECK: kiln.expand_dims %{{.*}} axis = 2 : tensor<1x1xi1> -> tensor<1x1x1xi1>
// CHECK: kiln.broadcast %{{.*}} : tensor<1x1x1xi1> -> tensor<1x16x32xi1>
// CHECK: %[[R1:.*]] = kiln.arange %{{.*}}, %{{.*}} : tensor<16xi32>
// CHECK: %[[M64:.*]] = arith.extsi %[[M]] : i32 to i64
// CHECK: %[[R164:.*]] = arith.extsi %[[R1]] : tensor<16xi32> to tensor<16xi64>
// CHECK: %[[MS:.*]] = kiln.splat %[[M64]] : i64 -> tensor<16xi64>
// CHECK: %[[C1:.*]] = arith.addi %[[MS]], %[[R164]] : tensor<16xi64>
// CHECK: %[[S1S:.*]] = kiln.splat %[[S1]] : i64 -> tensor<16xi64>
// CHECK: arith.cmpi ult, %[[C1]], %[[S1S]] : tensor<16xi64>
// CHECK: kiln.expand_dims %{{.*}} axis = 0 : tensor<16xi1> -> tensor<1x16xi1>
// CHECK: kiln.expand_dims %{{.*}} axis = 2 : tensor<1x16xi1> -> tensor<1x16x1xi1>
// CHECK: %[[R2:.*]] = kiln.arange %{{.*}}, %{{.*}} : tensor<32xi32>
// CHECK-NEXT: %[[C2:.*]] = arith.extsi %[[R2]] : tensor<32xi32> to tensor<32xi64>
// CHECK-NEXT: %[[S2S:.*]] = kiln.splat %[[S2]] : i64 -> tensor<32xi64>
// CHECK-NEXT: arith.cmpi ult, %[[C2]], %[[S2S]] : tensor<32xi64>
// CHECK: kiln.expand_dims %{{.*}} axis = 0 : tensor<32xi1> -> tensor<1x32xi1>
// CHECK: kiln.expand_dims %{{.*}} axis = 0 : tensor<1x32xi1> -> tensor<1x1x32xi1>
// CHECK: kiln.expand_dims %[[C2]] axis = 0 : tensor<32xi64> -> tensor<1x32xi64>
// CHECK: %[[OFF:.*]] = arith.addi %{{.*}}, %{{.*}} : tensor<1x16x32xi64>
// CHECK: %[[PTRS:.*]] = kiln.addptr %{{.*}}, %[[OFF]] : tensor<1x16x32x!kiln.ptr<bf16>>, tensor<1x16x32xi64>
// CHECK: kiln.load %[[PTRS]], mask %{{.*}} : tensor<1x16x32x!kiln.ptr<bf16>> -> tensor<1x16x32xbf16>
func.func @rank3(%p: !kiln.ptr<bf16>, %s0: i64, %s1: i64, %s2: i64, %d0: i64, %d1: i64, %bh: i32, %m: i32) -> tensor<1x16x32xbf16> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i64
  %v = kiln.make_view %p, [%s0, %s1, %s2], [%d0, %d1, %c1] : !kiln.ptr<bf16> -> !kiln.view<bf16, 3>
  %t = kiln.view_load %v[%bh : i32, %m : i32, %c0 : i32] : !kiln.view<bf16, 3> -> tensor<1x16x32xbf16>
  return %t : tensor<1x16x32xbf16>
}

// -----

// Constant strides: 1 adds the coordinates as they are, 0 adds nothing (a
// broadcast view); a constant size below 2^31 is compared as an i32.
// CHECK-LABEL: func.func @constant_strides(
// CHECK-SAME: %[[P:[^:]*]]: !kiln.ptr<f32>, %[[O:[^:]*]]: i32)
// CHECK-NOT: arith.muli
// CHECK: %[[C1000:.*]] = arith.constant 1000 : i32
// CHECK: %[[SZ:.*]] = kiln.splat %[[C1000]] : i32 -> tensor<8xi32>
// CHECK: arith.cmpi ult, %{{.*}}, %[[SZ]] : tensor<8xi32>
// CHECK-NOT: arith.muli
// CHECK: %[[PS:.*]] = kiln.splat %[[P]] : !kiln.ptr<f32> -> tensor<8x16x!kiln.ptr<f32>>
// CHECK: %[[PTRS:.*]] = kiln.addptr %[[PS]], %{{.*}} : tensor<8x16x!kiln.ptr<f32>>, tensor<8x16xi64>
// CHECK: kiln.load %[[PTRS]], mask
// CHECK: %[[PS0:.*]] = kiln.splat %[[P]] : !kiln.ptr<f32> -> tensor<16x!kiln.ptr<f32>>
// CHECK-NOT: kiln.addptr
// CHECK: kiln.load %[[PS0]], mask
func.func @constant_strides(%p: !kiln.ptr<f32>, %o: i32) -> (tensor<8x16xf32>, tensor<16xf32>) {
  %c1000 = arith.constant 1000 : i64
  %c1 = arith.constant 1 : i64
  %c0 = arith.constant 0 : i64
  %v = kiln.make_view %p, [%c1000, %c1000], [%c1, %c1] : !kiln.ptr<f32> -> !kiln.view<f32, 2>
  %t = kiln.view_load %v[%o : i32, %o : i32] : !kiln.view<f32, 2> -> tensor<8x16xf32>
  %w = kiln.make_view %p, [%c1000], [%c0] : !kiln.ptr<f32> -> !kiln.view<f32, 1>
  %u = kiln.view_load %w[%o : i32] : !kiln.view<f32, 1> -> tensor<16xf32>
  return %t, %u : tensor<8x16xf32>, tensor<16xf32>
}

// -----

// view_store: the same pointers and mask, through kiln.store.
// CHECK-LABEL: func.func @store(
// CHECK-SAME: %[[P:[^:]*]]: !kiln.ptr<f16>, %[[N:[^:]*]]: i32, %[[LD:[^:]*]]: i32, %[[R:[^:]*]]: i32, %[[C:[^:]*]]: i32, %[[T:[^:]*]]: tensor<16x64xf16>)
// CHECK: %[[MASK:.*]] = arith.andi %{{.*}}, %{{.*}} : tensor<16x64xi1>
// CHECK: %[[PTRS:.*]] = kiln.addptr %{{.*}}, %{{.*}} : tensor<16x64x!kiln.ptr<f16>>, tensor<16x64xi64>
// CHECK: kiln.store %[[PTRS]], %[[T]], mask %[[MASK]] : tensor<16x64x!kiln.ptr<f16>>
// CHECK-NOT: kiln.view_store
func.func @store(%p: !kiln.ptr<f16>, %n: i32, %ld: i32, %r: i32, %c: i32, %t: tensor<16x64xf16>) {
  %n64 = arith.extsi %n : i32 to i64
  %ld64 = arith.extsi %ld : i32 to i64
  %c1 = arith.constant 1 : i64
  %v = kiln.make_view %p, [%n64, %n64], [%ld64, %c1] : !kiln.ptr<f16> -> !kiln.view<f16, 2>
  kiln.view_store %v[%r : i32, %c : i32], %t : !kiln.view<f16, 2>, tensor<16x64xf16>
  return
}

// -----

// `other` fills the elements outside the view: splat to the box.
// CHECK-LABEL: func.func @other(
// CHECK-SAME: %[[X:[^:]*]]: f32)
// CHECK: %[[OS:.*]] = kiln.splat %[[X]] : f32 -> tensor<32xf32>
// CHECK: kiln.load %{{.*}}, mask %{{.*}}, other %[[OS]] : tensor<32x!kiln.ptr<f32>> -> tensor<32xf32>
func.func @other(%p: !kiln.ptr<f32>, %n: i32, %o: i32, %x: f32) -> tensor<32xf32> {
  %n64 = arith.extsi %n : i32 to i64
  %c1 = arith.constant 1 : i64
  %v = kiln.make_view %p, [%n64], [%c1] : !kiln.ptr<f32> -> !kiln.view<f32, 1>
  %t = kiln.view_load %v[%o : i32], other %x : !kiln.view<f32, 1> -> tensor<32xf32>
  return %t : tensor<32xf32>
}

// -----

// i64 offsets: i64 coordinates (extsi of the arange plus the offset),
// compared with the i64 size.
// CHECK-LABEL: func.func @i64_offsets(
// CHECK-SAME: %[[P:[^:]*]]: !kiln.ptr<i8>, %[[N:[^:]*]]: i64, %[[S:[^:]*]]: i64, %[[O:[^:]*]]: i64)
// CHECK: %[[R:.*]] = kiln.arange %{{.*}}, %{{.*}} : tensor<256xi32>
// CHECK-NEXT: %[[RW:.*]] = arith.extsi %[[R]] : tensor<256xi32> to tensor<256xi64>
// CHECK-NEXT: %[[OS:.*]] = kiln.splat %[[O]] : i64 -> tensor<256xi64>
// CHECK-NEXT: %[[C:.*]] = arith.addi %[[OS]], %[[RW]] : tensor<256xi64>
// CHECK-NEXT: %[[NS:.*]] = kiln.splat %[[N]] : i64 -> tensor<256xi64>
// CHECK-NEXT: %[[IN:.*]] = arith.cmpi ult, %[[C]], %[[NS]] : tensor<256xi64>
// CHECK-NEXT: %[[SS:.*]] = kiln.splat %[[S]] : i64 -> tensor<256xi64>
// CHECK-NEXT: %[[OFF:.*]] = arith.muli %[[C]], %[[SS]] : tensor<256xi64>
// CHECK: %[[PTRS:.*]] = kiln.addptr %{{.*}}, %[[OFF]] : tensor<256x!kiln.ptr<i8>>, tensor<256xi64>
// CHECK: kiln.load %[[PTRS]], mask %[[IN]]
func.func @i64_offsets(%p: !kiln.ptr<i8>, %n: i64, %s: i64, %o: i64) -> tensor<256xi8> {
  %v = kiln.make_view %p, [%n], [%s] : !kiln.ptr<i8> -> !kiln.view<i8, 1>
  %t = kiln.view_load %v[%o : i64] : !kiln.view<i8, 1> -> tensor<256xi8>
  return %t : tensor<256xi8>
}

// -----

// A `var` view reassigned in a loop or a branch travels as its parts: the
// base pointer, the sizes and the strides.
// CHECK-LABEL: func.func @carried(
// CHECK-SAME: %[[A:[^:]*]]: !kiln.ptr<f32>, %[[B:[^:]*]]: !kiln.ptr<f32>, %[[N:[^:]*]]: i32, %[[C:[^:]*]]: i1)
// CHECK: %[[C1:.*]] = arith.constant 1 : i64
// CHECK: %[[N64:.*]] = arith.extsi %[[N]] : i32 to i64
// CHECK: %[[L:.*]]:3 = scf.for %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[VB:.*]] = %[[A]], %[[VN:.*]] = %[[N64]], %[[VS:.*]] = %[[C1]]) -> (!kiln.ptr<f32>, i64, i64)
// CHECK: kiln.splat %[[VN]] : i64 -> tensor<64xi64>
// CHECK: kiln.splat %[[VS]] : i64 -> tensor<64xi64>
// CHECK: kiln.splat %[[VB]] : !kiln.ptr<f32> -> tensor<64x!kiln.ptr<f32>>
// CHECK: kiln.store
// CHECK: scf.yield %[[B]], %[[N64]], %[[C1]] : !kiln.ptr<f32>, i64, i64
// CHECK: %[[IF:.*]]:3 = scf.if %[[C]] -> (!kiln.ptr<f32>, i64, i64)
// CHECK: scf.yield %[[A]], %[[N64]], %{{.*}} : !kiln.ptr<f32>, i64, i64
// CHECK: scf.yield %[[L]]#0, %[[L]]#1, %[[L]]#2 : !kiln.ptr<f32>, i64, i64
// CHECK: kiln.splat %[[IF]]#1 : i64 -> tensor<64xi64>
// CHECK: kiln.splat %[[IF]]#2 : i64 -> tensor<64xi64>
// CHECK: kiln.splat %[[IF]]#0 : !kiln.ptr<f32> -> tensor<64x!kiln.ptr<f32>>
// CHECK: kiln.store
// CHECK-NOT: !kiln.view
func.func @carried(%a: !kiln.ptr<f32>, %b: !kiln.ptr<f32>, %n: i32, %c: i1) {
  %cst = arith.constant dense<0.0> : tensor<64xf32>
  %c2 = arith.constant 2 : i64
  %c1 = arith.constant 1 : i64
  %c0_i32 = arith.constant 0 : i32
  %c64_i32 = arith.constant 64 : i32
  %n64 = arith.extsi %n : i32 to i64
  %v0 = kiln.make_view %a, [%n64], [%c1] : !kiln.ptr<f32> -> !kiln.view<f32, 1>
  %v1 = scf.for %i = %c0_i32 to %n step %c64_i32 iter_args(%v = %v0) -> (!kiln.view<f32, 1>) : i32 {
    kiln.view_store %v[%i : i32], %cst : !kiln.view<f32, 1>, tensor<64xf32>
    %w = kiln.make_view %b, [%n64], [%c1] : !kiln.ptr<f32> -> !kiln.view<f32, 1>
    scf.yield %w : !kiln.view<f32, 1>
  }
  %v2 = scf.if %c -> (!kiln.view<f32, 1>) {
    %w = kiln.make_view %a, [%n64], [%c2] : !kiln.ptr<f32> -> !kiln.view<f32, 1>
    scf.yield %w : !kiln.view<f32, 1>
  } else {
    scf.yield %v1 : !kiln.view<f32, 1>
  }
  kiln.view_store %v2[%c0_i32 : i32], %cst : !kiln.view<f32, 1>, tensor<64xf32>
  return
}
