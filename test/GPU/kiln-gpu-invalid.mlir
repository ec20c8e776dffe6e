// The kiln_gpu dialect's verifiers: layouts on tile types and the
// per-thread primitives.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics
// REQUIRES: nvptx-backend

// expected-error @below {{blocked layout: sizes must be powers of two}}
func.func @f(%x: tensor<64xf32, #kiln_gpu.blocked<sizePerThread = [3], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>>) {
  return
}

// -----

// expected-error @below {{blocked layout: order must be a permutation}}
func.func @f(%x: tensor<64x64xf32, #kiln_gpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerBlock = [4, 1], order = [0, 0]>>) {
  return
}

// -----

// expected-error @below {{blocked layout of rank 1 on a tile of rank 2}}
func.func @f(%x: tensor<64x64xf32, #kiln_gpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>>) {
  return
}

// -----

// expected-error @below {{unknown matrix instruction 'nv.mma.bogus'}}
func.func @f(%x: tensor<64x64xf32, #kiln_gpu.mma<instr = "nv.mma.bogus", warpsPerBlock = [2, 2]>>) {
  return
}

// -----

// expected-error @below {{slice dimension 2 outside its parent of rank 2}}
func.func @f(%x: tensor<64xf32, #kiln_gpu.slice<dim = 2, parent = #kiln_gpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerBlock = [4, 1], order = [1, 0]>>>) {
  return
}

// -----

func.func @f(%a: i64) {
  // expected-error @below {{alignment must be a positive power of two}}
  %v = kiln_gpu.load %a alignment 3 : vector<4xf32>
  return
}

// -----

func.func @f(%a: vector<8xf16>, %b: vector<4xf16>, %c: vector<8xf32>) {
  // expected-error @below {{C must be a vector of 4 elements for nv.mma.m16n8k16.f16}}
  %d = kiln_gpu.mma "nv.mma.m16n8k16.f16" %a, %b, %c : vector<8xf16>, vector<4xf16> -> vector<8xf32>
  return
}

// -----

func.func @f(%a: i64, %v: f32) {
  // expected-error @below {{unknown atomic kind 'nand'}}
  %o = kiln_gpu.atomic_rmw "nand" %a, %v : f32
  return
}

// -----

func.func @f(%o: i32) {
  %buf = kiln_gpu.shared_alloc size 1024 alignment 16 : !kiln_gpu.shared
  // expected-error @below {{count must be 1, 2 or 4}}
  %m = kiln_gpu.shared_load_matrix %buf[%o] count 3 : vector<6xf16>
  return
}

// -----

func.func @f(%o: i32) {
  %buf = kiln_gpu.shared_alloc size 1024 alignment 16 : !kiln_gpu.shared
  // expected-error @below {{yields 8 16-bit elements for count 4}}
  %m = kiln_gpu.shared_load_matrix %buf[%o] count 4 : vector<4xf16>
  return
}

// -----

func.func @copy_size(%buf: !kiln_gpu.shared, %off: i32, %p: i64) {
  // expected-error @below {{copies 4, 8 or 16 bytes, not 2}}
  kiln_gpu.async_copy %buf[%off], %p size 2
  return
}

// -----

#blocked = #kiln_gpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>
func.func @copy_values(%buf: !kiln_gpu.shared, %slot: i32, %x: tensor<128xf32, #blocked>) {
  // expected-error @below {{copies through a tile of pointers, not 'tensor<128xf32}}
  kiln_gpu.async_copy_tile %buf[%slot], %x : tensor<128xf32, #blocked>
  return
}

// -----

#blocked = #kiln_gpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerBlock = [4], order = [0]>
#other = #kiln_gpu.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerBlock = [2], order = [0]>
func.func @copy_mask(%buf: !kiln_gpu.shared, %slot: i32, %p: tensor<128x!kiln.ptr<f32>, #blocked>, %m: tensor<128xi1, #other>) {
  // expected-error @below {{mask must be i1 in the shape and layout of the pointer tile}}
  kiln_gpu.async_copy_tile %buf[%slot], %p, mask %m : tensor<128x!kiln.ptr<f32>, #blocked>, tensor<128xi1, #other>
  return
}

// -----

func.func @read_plain(%buf: !kiln_gpu.shared, %slot: i32) {
  // expected-error @below {{needs a distributed layout on the result}}
  %t = kiln_gpu.read_tile %buf[%slot] : tensor<128xf16>
  return
}

// -----

#blocked = #kiln_gpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerBlock = [4, 1], order = [1, 0]>
func.func @read_view_size(%buf: !kiln_gpu.shared, %slot: i32) {
  // expected-error @below {{tile_shape has 128 elements, the result 256}}
  %t = kiln_gpu.read_tile %buf[%slot] {tile_shape = array<i64: 1, 8, 16>} : tensor<16x16xf16, #blocked>
  return
}

// -----

#blocked = #kiln_gpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerBlock = [4, 1], order = [1, 0]>
func.func @read_view_order(%buf: !kiln_gpu.shared, %slot: i32) {
  // expected-error @below {{order must be a permutation of the result's 2 dimensions}}
  %t = kiln_gpu.read_tile %buf[%slot] {order = array<i32: 1, 1>} : tensor<16x16xf16, #blocked>
  return
}

// -----

// A warpgroup instruction by a warp-level name.
module attributes {kiln_gpu.target = "sm_90a"} {
  func.func @f(%o: i32, %c: vector<4xf32>) {
    %buf = kiln_gpu.shared_alloc size 4096 alignment 1024 offset 0 : !kiln_gpu.shared
    // expected-error @below {{unknown warpgroup matrix instruction 'nv.mma.m16n8k16.f16'}}
    %d = kiln_gpu.warpgroup_mma "nv.mma.m16n8k16.f16" shared %buf[%o], %buf[%o], %c {a_desc = 0 : i64, b_desc = 0 : i64} : vector<4xf32>
    return
  }
}

// -----

// A both from shared memory and from registers.
module attributes {kiln_gpu.target = "sm_90a"} {
  func.func @f(%o: i32, %a: vector<8xf16>, %c: vector<32xf32>) {
    %buf = kiln_gpu.shared_alloc size 4096 alignment 1024 offset 0 : !kiln_gpu.shared
    // expected-error @below {{takes A either from shared memory (buffer, offset and a_desc) or from registers}}
    %d = kiln_gpu.warpgroup_mma "nv.wgmma.m64n64k16.f16" shared %buf[%o] registers %a : vector<8xf16>, %buf[%o], %c {a_desc = 0 : i64, b_desc = 0 : i64} : vector<32xf32>
    return
  }
}

// -----

// A from shared memory without its descriptor.
module attributes {kiln_gpu.target = "sm_90a"} {
  func.func @f(%o: i32, %c: vector<32xf32>) {
    %buf = kiln_gpu.shared_alloc size 4096 alignment 1024 offset 0 : !kiln_gpu.shared
    // expected-error @below {{takes A either from shared memory (buffer, offset and a_desc) or from registers}}
    %d = kiln_gpu.warpgroup_mma "nv.wgmma.m64n64k16.f16" shared %buf[%o], %buf[%o], %c {b_desc = 0 : i64} : vector<32xf32>
    return
  }
}

// -----

// m64n64 accumulates 32 f32 per thread.
module attributes {kiln_gpu.target = "sm_90a"} {
  func.func @f(%o: i32, %a: vector<8xf16>, %c: vector<64xf32>) {
    %buf = kiln_gpu.shared_alloc size 4096 alignment 1024 offset 0 : !kiln_gpu.shared
    // expected-error @below {{C must be a vector of 32 elements for nv.wgmma.m64n64k16.f16}}
    %d = kiln_gpu.warpgroup_mma "nv.wgmma.m64n64k16.f16" registers %a : vector<8xf16>, %buf[%o], %c {b_desc = 0 : i64} : vector<64xf32>
    return
  }
}

// -----

// Register A has no transposition.
module attributes {kiln_gpu.target = "sm_90a"} {
  func.func @f(%o: i32, %a: vector<8xf16>, %c: vector<32xf32>) {
    %buf = kiln_gpu.shared_alloc size 4096 alignment 1024 offset 0 : !kiln_gpu.shared
    // expected-error @below {{A from registers has no a_transpose}}
    %d = kiln_gpu.warpgroup_mma "nv.wgmma.m64n64k16.f16" registers %a : vector<8xf16>, %buf[%o], %c {b_desc = 0 : i64, a_transpose} : vector<32xf32>
    return
  }
}

// -----

// fp8 warpgroup instructions read K-major shared operands only.
module attributes {kiln_gpu.target = "sm_90a"} {
  func.func @f(%o: i32, %c: vector<32xf32>) {
    %buf = kiln_gpu.shared_alloc size 4096 alignment 1024 offset 0 : !kiln_gpu.shared
    // expected-error @below {{reads only K-major shared operands with nv.wgmma.m64n64k32.e4m3}}
    %d = kiln_gpu.warpgroup_mma "nv.wgmma.m64n64k32.e4m3" shared %buf[%o], %buf[%o], %c {a_desc = 0 : i64, b_desc = 0 : i64, b_transpose} : vector<32xf32>
    return
  }
}

// -----

// A tensor copy takes 1 to 5 coordinates and a tensor map that is a pointer.
module attributes {kiln_gpu.target = "sm_90a"} {
  func.func @f(%o: i32, %map: !llvm.ptr) {
    %buf = kiln_gpu.shared_alloc size 4096 alignment 1024 offset 0 : !kiln_gpu.shared
    // expected-error @below {{takes 1 to 5 coordinates, not 6}}
    kiln_gpu.tensor_load %buf[%o], %map[%o, %o, %o, %o, %o, %o], %buf[%o] : !llvm.ptr
    return
  }
}

// -----

module attributes {kiln_gpu.target = "sm_90a"} {
  func.func @f(%o: i32, %map: i64) {
    %buf = kiln_gpu.shared_alloc size 4096 alignment 1024 offset 0 : !kiln_gpu.shared
    // expected-error @below {{tensor map must be an !llvm.ptr, found 'i64'}}
    kiln_gpu.tensor_load %buf[%o], %map[%o], %buf[%o] : i64
    return
  }
}

// -----

// A box load names one coordinate per dimension of its box.
module attributes {kiln_gpu.target = "sm_90a"} {
  func.func @f(%o: i32, %map: !llvm.ptr, %p: tensor<64x64x!kiln.ptr<f16>>) {
    // expected-error @below {{has 1 coordinates for a box of rank 2}}
    %t = kiln_gpu.tensor_box_load %map[%o], %p {tensor_map = 0 : i64} : !llvm.ptr, tensor<64x64x!kiln.ptr<f16>> -> tensor<64x64xf16>
    return
  }
}
