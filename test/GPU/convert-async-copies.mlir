// RUN: kiln-opt %s --split-input-file --convert-tile-to-gpu-threads --canonicalize | FileCheck %s

// 16-byte copies (8 f16 per thread, proven contiguous and aligned), masked
// per copy, into slot `slot` (bytes slot * 1024 onwards); the slot read back
// in the loads' own layout as vectors.
// CHECK-LABEL: func.func @wide
// CHECK-SAME: (%[[P:.*]]: i64 {{.*}}, %[[SLOT:.*]]: i32, %[[M:.*]]: i1)
// CHECK: %[[BUF:.*]] = kiln_gpu.shared_alloc size 3072 alignment 128
// CHECK: %[[BASE:.*]] = arith.muli %[[SLOT]], %c1024_i32
// CHECK: %[[OFF:.*]] = arith.addi %{{.*}}, %[[BASE]]
// CHECK: kiln_gpu.async_copy %[[BUF]][%[[OFF]]], %{{.*}}, mask %[[M]] size 16
// CHECK-NOT: kiln_gpu.async_copy
// CHECK: kiln_gpu.async_commit
// CHECK: kiln_gpu.async_wait %[[BUF]] pending 0
// CHECK: kiln_gpu.shared_load %[[BUF]][%{{.*}}] : vector<8xf16>
#blocked = #kiln_gpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerBlock = [2, 1], order = [1, 0]>
#row = #kiln_gpu.slice<dim = 0, parent = #blocked>
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 2 : i32} {
  func.func @wide(%p: !kiln.ptr<f16> {kiln.align = 16 : i64}, %slot: i32,
                  %m: i1) -> tensor<8x64xf16, #blocked> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %r = kiln.arange %c0, %c64 : tensor<64xi32, #row>
    %e = kiln.expand_dims %r axis = 0 : tensor<64xi32, #row> -> tensor<1x64xi32, #blocked>
    %o = kiln.broadcast %e : tensor<1x64xi32, #blocked> -> tensor<8x64xi32, #blocked>
    %s = kiln.splat %p : !kiln.ptr<f16> -> tensor<8x64x!kiln.ptr<f16>, #blocked>
    %ptrs = kiln.addptr %s, %o : tensor<8x64x!kiln.ptr<f16>, #blocked>, tensor<8x64xi32, #blocked>
    %mt = kiln.splat %m : i1 -> tensor<8x64xi1, #blocked>
    %buf = kiln_gpu.shared_alloc size 3072 alignment 128 : !kiln_gpu.shared
    kiln_gpu.async_copy_tile %buf[%slot], %ptrs, mask %mt : tensor<8x64x!kiln.ptr<f16>, #blocked>, tensor<8x64xi1, #blocked>
    kiln_gpu.async_commit
    kiln_gpu.async_wait %buf pending 0 : !kiln_gpu.shared
    %t = kiln_gpu.read_tile %buf[%slot] : tensor<8x64xf16, #blocked>
    return %t : tensor<8x64xf16, #blocked>
  }
}

// -----

// Nothing proves the pointers contiguous: a copy would be 2 bytes, under
// the 4 that asynchronous copies move at least, so the registers are
// loaded and stored synchronously.
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: kiln_gpu.async_copy
// CHECK: kiln_gpu.load %{{.*}} alignment 2 : vector<1xf16>
// CHECK: kiln_gpu.shared_store %{{.*}} : vector<1xf16>
// CHECK-NOT: kiln_gpu.async_copy
// CHECK: return
#blocked = #kiln_gpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerBlock = [4, 1], order = [1, 0]>
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @narrow(%ptrs: tensor<4x32x!kiln.ptr<f16>, #blocked>, %slot: i32) {
    %buf = kiln_gpu.shared_alloc size 512 alignment 128 : !kiln_gpu.shared
    kiln_gpu.async_copy_tile %buf[%slot], %ptrs : tensor<4x32x!kiln.ptr<f16>, #blocked>
    kiln_gpu.async_commit
    return
  }
}

// -----

// A slot read into a matrix-instruction operand layout: ldmatrix-style
// loads from the slot's base.
// CHECK-LABEL: func.func @operand
// CHECK: %[[BASE:.*]] = arith.muli %{{.*}}, %c2048_i32
// CHECK: %[[OFF:.*]] = arith.addi %{{.*}}, %[[BASE]]
// CHECK: kiln_gpu.shared_load_matrix %{{.*}}[%[[OFF]]] count 4 : vector<8xf16>
#mma = #kiln_gpu.mma<instr = "nv.mma.m16n8k16.f16", warpsPerBlock = [2, 2]>
#operand = #kiln_gpu.operand<index = 0, parent = #mma>
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @operand(%slot: i32) -> tensor<32x32xf16, #operand> {
    %buf = kiln_gpu.shared_alloc size 4096 alignment 128 : !kiln_gpu.shared
    %t = kiln_gpu.read_tile %buf[%slot] : tensor<32x32xf16, #operand>
    return %t : tensor<32x32xf16, #operand>
  }
}
