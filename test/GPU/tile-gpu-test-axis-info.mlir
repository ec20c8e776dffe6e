// RUN: kiln-opt %s -split-input-file -tile-gpu-test-axis-info -verify-diagnostics -o /dev/null

// The axis analysis (compiler/GPU/AxisInfo.h): per dimension, the length of
// the runs of consecutive values (contiguity), the power of two dividing the
// first value of each run (divisibility, in bytes for pointers, capped at
// 2^30 = 1073741824) and the length of the runs of equal values
// (constancy). A scalar is a tile of one element.

// Constants: constant over the whole tile, divisibility from the value
// (zero is divisible by everything); i1 true is 1.
func.func @constants() {
  // expected-remark @below {{contiguity = [1], divisibility = [1073741824], constancy = [1], constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [1], constant = 12}}
  %c12 = arith.constant 12 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [1], constant = -8}}
  %cm8 = arith.constant -8 : i64
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant = 1}}
  %true = arith.constant true
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [128], constant = 16}}
  %splat = arith.constant dense<16> : tensor<128xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [1073741824, 1073741824], constancy = [4, 8], constant = 0}}
  %zeros = arith.constant dense<0> : tensor<4x8xi32>
  // A non-splat constant is read element by element: runs [0..3], [8..11].
  // expected-remark @below {{contiguity = [4], divisibility = [8], constancy = [1]}}
  %runs = arith.constant dense<[8, 9, 10, 11, 0, 1, 2, 3]> : tensor<8xi32>
  // Rows [5, 5] and [5, 6]: constant along dim 0 only in the first column.
  // expected-remark @below {{contiguity = [1, 1], divisibility = [1, 1], constancy = [1, 1]}}
  %mixed = arith.constant dense<[[5, 5], [5, 6]]> : tensor<2x2xi32>
  // expected-remark @below {{contiguity = [1, 2], divisibility = [1, 4], constancy = [2, 1]}}
  %rows = arith.constant dense<[[4, 5], [4, 5]]> : tensor<2x2xi32>
  return
}

// -----

// Folding: arithmetic on constants gives constants, in the width of the type.
func.func @folding() {
  // expected-remark @below {{constant = 3}}
  %c3 = arith.constant 3 : i32
  // expected-remark @below {{constant = 5}}
  %c5 = arith.constant 5 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [1], constant = 8}}
  %sum = arith.addi %c3, %c5 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant = 15}}
  %prod = arith.muli %c3, %c5 : i32
  // expected-remark @below {{constant = 127}}
  %c127 = arith.constant 127 : i8
  // expected-remark @below {{constant = 1}}
  %c1 = arith.constant 1 : i8
  // i8 wraps: 127 + 1 = -128.
  // expected-remark @below {{contiguity = [1], divisibility = [128], constancy = [1], constant = -128}}
  %wrap = arith.addi %c127, %c1 : i8
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant = 1}}
  %lt = arith.cmpi slt, %c3, %c5 : i32
  return
}

// -----

// arange: one run over the tile, starting at lo.
func.func @arange() {
  // expected-remark @below {{constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{constant = 64}}
  %c64 = arith.constant 64 : i32
  // expected-remark @below {{constant = 128}}
  %c128 = arith.constant 128 : i32
  // expected-remark @below {{contiguity = [128], divisibility = [1073741824], constancy = [1]}}
  %r0 = kiln.arange %c0, %c128 : tensor<128xi32>
  // expected-remark @below {{contiguity = [64], divisibility = [64], constancy = [1]}}
  %r64 = kiln.arange %c64, %c128 : tensor<64xi32>
  return
}

// -----

// program_id is not known to be divisible by anything, but program_id *
// BLOCK is divisible by BLOCK; adding arange(0, BLOCK) gives one run of
// BLOCK per program starting at a multiple of BLOCK.
func.func @block_offsets() {
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %pid = kiln.program_id x
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %np = kiln.num_programs y
  // expected-remark @below {{constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{constant = 128}}
  %c128 = arith.constant 128 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [128], constancy = [1]}}
  %start = arith.muli %pid, %c128 : i32
  // expected-remark @below {{contiguity = [128], divisibility = [1073741824], constancy = [1]}}
  %r = kiln.arange %c0, %c128 : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [128], constancy = [128]}}
  %s = kiln.splat %start : i32 -> tensor<128xi32>
  // expected-remark @below {{contiguity = [128], divisibility = [128], constancy = [1]}}
  %offs = arith.addi %s, %r : tensor<128xi32>
  // A run of 128 from lo = program_id * 128 (arange with a runtime lo).
  // expected-remark @below {{contiguity = [1], divisibility = [128], constancy = [1]}}
  %end = arith.addi %start, %c128 : i32
  // expected-remark @below {{contiguity = [128], divisibility = [128], constancy = [1]}}
  %r2 = kiln.arange %start, %end : tensor<128xi32>
  // Subtracting a constant keeps the run; subtracting a run does not.
  // expected-remark @below {{contiguity = [128], divisibility = [128], constancy = [1]}}
  %d1 = arith.subi %offs, %s : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %d2 = arith.subi %s, %r : tensor<128xi32>
  return
}

// -----

// Pointers: @align(N) is kiln.align = N; without it a pointer is aligned to
// its element size. Pointer contiguity counts elements, divisibility bytes.
// expected-remark @below {{argument #0: contiguity = [1], divisibility = [16], constancy = [1]}}
// expected-remark @below {{argument #1: contiguity = [1], divisibility = [1024], constancy = [1]}}
// expected-remark @below {{argument #2: contiguity = [1], divisibility = [4], constancy = [1]}}
// expected-remark @below {{argument #3: contiguity = [1], divisibility = [2], constancy = [1]}}
// expected-remark @below {{argument #4: contiguity = [1], divisibility = [1], constancy = [1]}}
func.func @pointers(%a: !kiln.ptr<f32> {kiln.align = 16 : i64},
                    %b: !kiln.ptr<f32> {kiln.align = 1024 : i64},
                    %c: !kiln.ptr<f32>, %h: !kiln.ptr<f16>, %q: !kiln.ptr<i8>) {
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %pid = kiln.program_id x
  // expected-remark @below {{constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{constant = 128}}
  %c128 = arith.constant 128 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [128], constancy = [1]}}
  %start = arith.muli %pid, %c128 : i32
  // expected-remark @below {{contiguity = [128], divisibility = [1073741824], constancy = [1]}}
  %r = kiln.arange %c0, %c128 : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [128], constancy = [128]}}
  %s = kiln.splat %start : i32 -> tensor<128xi32>
  // expected-remark @below {{contiguity = [128], divisibility = [128], constancy = [1]}}
  %offs = arith.addi %s, %r : tensor<128xi32>
  // 16-byte aligned base + a multiple of 128 elements: 16 bytes.
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [128]}}
  %pa = kiln.splat %a : !kiln.ptr<f32> -> tensor<128x!kiln.ptr<f32>>
  // expected-remark @below {{contiguity = [128], divisibility = [16], constancy = [1]}}
  %xa = kiln.addptr %pa, %offs : tensor<128x!kiln.ptr<f32>>, tensor<128xi32>
  // 1024-byte aligned base: min(1024, 128 elements * 4 bytes).
  // expected-remark @below {{contiguity = [1], divisibility = [1024], constancy = [128]}}
  %pb = kiln.splat %b : !kiln.ptr<f32> -> tensor<128x!kiln.ptr<f32>>
  // expected-remark @below {{contiguity = [128], divisibility = [512], constancy = [1]}}
  %xb = kiln.addptr %pb, %offs : tensor<128x!kiln.ptr<f32>>, tensor<128xi32>
  // No promise: element-aligned only, so accesses stay one element wide.
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [128]}}
  %pc = kiln.splat %c : !kiln.ptr<f32> -> tensor<128x!kiln.ptr<f32>>
  // expected-remark @below {{contiguity = [128], divisibility = [4], constancy = [1]}}
  %xc = kiln.addptr %pc, %offs : tensor<128x!kiln.ptr<f32>>, tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [2], constancy = [128]}}
  %ph = kiln.splat %h : !kiln.ptr<f16> -> tensor<128x!kiln.ptr<f16>>
  // expected-remark @below {{contiguity = [128], divisibility = [2], constancy = [1]}}
  %xh = kiln.addptr %ph, %offs : tensor<128x!kiln.ptr<f16>>, tensor<128xi32>
  // Scalar pointer arithmetic: base alignment and offset * element size.
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [1]}}
  %sa = kiln.addptr %a, %start : !kiln.ptr<f32>, i32
  // expected-remark @below {{constant = 3}}
  %c3 = arith.constant 3 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [1]}}
  %sb = kiln.addptr %b, %c3 : !kiln.ptr<f32>, i32
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %sq = kiln.addptr %q, %c3 : !kiln.ptr<i8>, i32
  // Adding 0 changes nothing.
  // expected-remark @below {{contiguity = [1], divisibility = [1024], constancy = [1]}}
  %sz = kiln.addptr %b, %c0 : !kiln.ptr<f32>, i32
  return
}

// -----

// Masks: `offs < n` is constant over runs of offs that start at a multiple
// of their length when n is a multiple of that length too (n: @div(16)).
// expected-remark @below {{argument #0: contiguity = [1], divisibility = [16], constancy = [1]}}
// expected-remark @below {{argument #1: contiguity = [1], divisibility = [1], constancy = [1]}}
func.func @masks(%n: i32 {kiln.div = 16 : i64}, %m: i32) {
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %pid = kiln.program_id x
  // expected-remark @below {{constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{constant = 128}}
  %c128 = arith.constant 128 : i32
  // expected-remark @below {{contiguity = [1], divisibility = [128], constancy = [1]}}
  %start = arith.muli %pid, %c128 : i32
  // expected-remark @below {{contiguity = [128], divisibility = [1073741824], constancy = [1]}}
  %r = kiln.arange %c0, %c128 : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [128], constancy = [128]}}
  %s = kiln.splat %start : i32 -> tensor<128xi32>
  // expected-remark @below {{contiguity = [128], divisibility = [128], constancy = [1]}}
  %offs = arith.addi %s, %r : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [128]}}
  %ns = kiln.splat %n : i32 -> tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [128]}}
  %ms = kiln.splat %m : i32 -> tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [16]}}
  %lt = arith.cmpi slt, %offs, %ns : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [16]}}
  %ge = arith.cmpi uge, %offs, %ns : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [16]}}
  %gt = arith.cmpi sgt, %ns, %offs : tensor<128xi32>
  // `offs <= n` flips between n and n + 1, inside a run: no rule.
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %le = arith.cmpi sle, %offs, %ns : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %eq = arith.cmpi eq, %offs, %ns : tensor<128xi32>
  // Unknown n: one element at a time.
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %ltm = arith.cmpi slt, %offs, %ms : tensor<128xi32>
  // A constant bound: 1000 is a multiple of 8.
  // expected-remark @below {{constant = 1000}}
  %c1000 = arith.constant dense<1000> : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [8]}}
  %ltc = arith.cmpi slt, %offs, %c1000 : tensor<128xi32>
  // Combining masks: the shorter constancy.
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [8]}}
  %both = arith.andi %lt, %ltc : tensor<128xi1>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %either = arith.ori %lt, %ltm : tensor<128xi1>
  return
}

// -----

// 2-d: row offsets `rows[:, None] * stride + cols[None, :]`. Contiguous
// along the columns; each row starts at a multiple of what divides stride.
// expected-remark @below {{argument #0: contiguity = [1], divisibility = [16], constancy = [1]}}
// expected-remark @below {{argument #1: contiguity = [1], divisibility = [8], constancy = [1]}}
// expected-remark @below {{argument #2: contiguity = [1], divisibility = [1], constancy = [1]}}
func.func @two_d(%x: !kiln.ptr<f16> {kiln.align = 16 : i64},
                 %stride: i32 {kiln.div = 8 : i64}, %ustride: i32) {
  // expected-remark @below {{constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{constant = 16}}
  %c16 = arith.constant 16 : i32
  // expected-remark @below {{constant = 64}}
  %c64 = arith.constant 64 : i32
  // expected-remark @below {{contiguity = [16], divisibility = [1073741824], constancy = [1]}}
  %rows = kiln.arange %c0, %c16 : tensor<16xi32>
  // expected-remark @below {{contiguity = [64], divisibility = [1073741824], constancy = [1]}}
  %cols = kiln.arange %c0, %c64 : tensor<64xi32>
  // expected-remark @below {{contiguity = [16, 1], divisibility = [1073741824, 1], constancy = [1, 1]}}
  %r2 = kiln.expand_dims %rows axis = 1 : tensor<16xi32> -> tensor<16x1xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [8, 8], constancy = [16, 1]}}
  %st = kiln.splat %stride : i32 -> tensor<16x1xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [8, 8], constancy = [1, 1]}}
  %rs = arith.muli %r2, %st : tensor<16x1xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [8, 8], constancy = [1, 64]}}
  %rb = kiln.broadcast %rs : tensor<16x1xi32> -> tensor<16x64xi32>
  // expected-remark @below {{contiguity = [1, 64], divisibility = [1, 1073741824], constancy = [1, 1]}}
  %c2 = kiln.expand_dims %cols axis = 0 : tensor<64xi32> -> tensor<1x64xi32>
  // expected-remark @below {{contiguity = [1, 64], divisibility = [1, 1073741824], constancy = [16, 1]}}
  %cb = kiln.broadcast %c2 : tensor<1x64xi32> -> tensor<16x64xi32>
  // expected-remark @below {{contiguity = [1, 64], divisibility = [1, 8], constancy = [1, 1]}}
  %offs = arith.addi %rb, %cb : tensor<16x64xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [16, 64]}}
  %px = kiln.splat %x : !kiln.ptr<f16> -> tensor<16x64x!kiln.ptr<f16>>
  // Rows start 16-byte aligned (8 f16): 8 elements per access.
  // expected-remark @below {{contiguity = [1, 64], divisibility = [2, 16], constancy = [1, 1]}}
  %p = kiln.addptr %px, %offs : tensor<16x64x!kiln.ptr<f16>>, tensor<16x64xi32>
  // Transposed: the contiguous dimension moves.
  // expected-remark @below {{contiguity = [64, 1], divisibility = [16, 2], constancy = [1, 1]}}
  %pt = kiln.trans %p order = [1, 0] : tensor<16x64x!kiln.ptr<f16>> -> tensor<64x16x!kiln.ptr<f16>>
  // An unknown stride: rows start anywhere.
  // expected-remark @below {{contiguity = [1, 1], divisibility = [1, 1], constancy = [16, 1]}}
  %ust = kiln.splat %ustride : i32 -> tensor<16x1xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [1, 1], constancy = [1, 1]}}
  %urs = arith.muli %r2, %ust : tensor<16x1xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [1, 1], constancy = [1, 64]}}
  %urb = kiln.broadcast %urs : tensor<16x1xi32> -> tensor<16x64xi32>
  // expected-remark @below {{contiguity = [1, 64], divisibility = [1, 1], constancy = [1, 1]}}
  %uoffs = arith.addi %urb, %cb : tensor<16x64xi32>
  // expected-remark @below {{contiguity = [1, 64], divisibility = [2, 2], constancy = [1, 1]}}
  %up = kiln.addptr %px, %uoffs : tensor<16x64x!kiln.ptr<f16>>, tensor<16x64xi32>
  return
}

// -----

// Reshapes: exact when only unit dimensions come and go, or when the
// innermost dimensions stay; otherwise what holds for every element.
func.func @reshapes() {
  // expected-remark @below {{constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{constant = 64}}
  %c64 = arith.constant 64 : i32
  // expected-remark @below {{contiguity = [64], divisibility = [1073741824], constancy = [1]}}
  %r = kiln.arange %c0, %c64 : tensor<64xi32>
  // expected-remark @below {{contiguity = [1, 64], divisibility = [1, 1073741824], constancy = [1, 1]}}
  %u = kiln.reshape %r : tensor<64xi32> -> tensor<1x64xi32>
  // expected-remark @below {{contiguity = [64], divisibility = [1073741824], constancy = [1]}}
  %back = kiln.reshape %u : tensor<1x64xi32> -> tensor<64xi32>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [1, 1], constancy = [1, 1]}}
  %split = kiln.reshape %r : tensor<64xi32> -> tensor<8x8xi32>
  // expected-remark @below {{constant = 4}}
  %c4 = arith.constant dense<4> : tensor<4x16xi32>
  // expected-remark @below {{contiguity = [1, 1, 1], divisibility = [4, 4, 4], constancy = [2, 2, 16], constant = 4}}
  %k = kiln.reshape %c4 : tensor<4x16xi32> -> tensor<2x2x16xi32>
  // expected-remark @below {{contiguity = [1, 16], divisibility = [1, 1073741824], constancy = [2, 1]}}
  %rows = arith.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]]> : tensor<2x16xi32>
  // Only a unit dimension is inserted: exact.
  // expected-remark @below {{contiguity = [1, 1, 16], divisibility = [1, 1, 1073741824], constancy = [1, 2, 1]}}
  %kept = kiln.reshape %rows : tensor<2x16xi32> -> tensor<1x2x16xi32>
  return
}

// -----

// Division, remainder, shifts and bitwise ops.
func.func @integer_ops() {
  // expected-remark @below {{constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{constant = 128}}
  %c128 = arith.constant 128 : i32
  // expected-remark @below {{contiguity = [128], divisibility = [1073741824], constancy = [1]}}
  %r = kiln.arange %c0, %c128 : tensor<128xi32>
  // expected-remark @below {{constant = 8}}
  %c8 = arith.constant dense<8> : tensor<128xi32>
  // expected-remark @below {{constant = 7}}
  %c7 = arith.constant dense<7> : tensor<128xi32>
  // expected-remark @below {{constant = 2}}
  %c2 = arith.constant dense<2> : tensor<128xi32>
  // expected-remark @below {{constant = 1}}
  %c1 = arith.constant dense<1> : tensor<128xi32>
  // Unsigned: [0..7] / 8 is one quotient, [0..7] % 8 is a run.
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [8]}}
  %qu = arith.divui %r, %c8 : tensor<128xi32>
  // expected-remark @below {{contiguity = [8], divisibility = [8], constancy = [1]}}
  %ru = arith.remui %r, %c8 : tensor<128xi32>
  // Signed: a negative run breaks both (-8 / 8 = -1, -7 / 8 = 0).
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %qs = arith.divsi %r, %c8 : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %rs = arith.remsi %r, %c8 : tensor<128xi32>
  // x & 7 is the unsigned x % 8.
  // expected-remark @below {{contiguity = [8], divisibility = [1073741824], constancy = [1]}}
  %m = arith.andi %r, %c7 : tensor<128xi32>
  // x << 2 = 4x.
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [1]}}
  %sh = arith.shli %r, %c2 : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [1]}}
  %sh8 = arith.muli %sh, %c2 : tensor<128xi32>
  // Exact division of a multiple of 8 by 2.
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [1]}}
  %half = arith.divsi %sh8, %c2 : tensor<128xi32>
  // (x << 2) >> 2 is x again, but only its runs of 4 are known equal.
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [4]}}
  %shr = arith.shrsi %r, %c2 : tensor<128xi32>
  // Multiplying by 1 or dividing by 1 keeps everything; by 0 gives 0.
  // expected-remark @below {{contiguity = [128], divisibility = [1073741824], constancy = [1]}}
  %same = arith.muli %r, %c1 : tensor<128xi32>
  // expected-remark @below {{contiguity = [128], divisibility = [1073741824], constancy = [1]}}
  %same2 = arith.divui %r, %c1 : tensor<128xi32>
  // expected-remark @below {{constant = 0}}
  %z = arith.constant dense<0> : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1073741824], constancy = [128], constant = 0}}
  %zero = arith.muli %r, %z : tensor<128xi32>
  // x | 1 is odd.
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %odd = arith.ori %sh8, %c1 : tensor<128xi32>
  // Two runs starting at multiples of their length keep their order.
  // expected-remark @below {{constant = 128}}
  %c128t = arith.constant dense<128> : tensor<128xi32>
  // expected-remark @below {{contiguity = [128], divisibility = [128], constancy = [1]}}
  %r2 = arith.addi %r, %c128t : tensor<128xi32>
  // expected-remark @below {{contiguity = [128], divisibility = [128], constancy = [1]}}
  %mx = arith.maxsi %r, %r2 : tensor<128xi32>
  // A run against a constant: no longer a run (clamping).
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %mn = arith.minsi %r, %c8 : tensor<128xi32>
  return
}

// -----

// Casts keep the facts; a narrow run is cut where it could wrap once
// widened (0..127, -128..-1 as i8).
func.func @casts() {
  // expected-remark @below {{constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{constant = 256}}
  %c256 = arith.constant 256 : i32
  // expected-remark @below {{contiguity = [256], divisibility = [1073741824], constancy = [1]}}
  %r = kiln.arange %c0, %c256 : tensor<256xi32>
  // expected-remark @below {{contiguity = [256], divisibility = [1073741824], constancy = [1]}}
  %w = arith.extsi %r : tensor<256xi32> to tensor<256xi64>
  // expected-remark @below {{contiguity = [256], divisibility = [1073741824], constancy = [1]}}
  %t = arith.trunci %r : tensor<256xi32> to tensor<256xi8>
  // expected-remark @below {{contiguity = [128], divisibility = [1073741824], constancy = [1]}}
  %e = arith.extsi %t : tensor<256xi8> to tensor<256xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant = -1}}
  %m1 = arith.constant -1 : i8
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant = 255}}
  %zx = arith.extui %m1 : i8 to i32
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant = -1}}
  %sx = arith.extsi %m1 : i8 to i64
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1], constant = 1}}
  %b = arith.trunci %m1 : i8 to i1
  return
}

// -----

// Selects and scf.if: what both sides have in common.
// expected-remark @below {{argument #0: contiguity = [1], divisibility = [1], constancy = [1]}}
func.func @merges(%cond: i1) {
  // expected-remark @below {{constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{constant = 64}}
  %c64 = arith.constant 64 : i32
  // expected-remark @below {{contiguity = [64], divisibility = [1073741824], constancy = [1]}}
  %r = kiln.arange %c0, %c64 : tensor<64xi32>
  // expected-remark @below {{constant = 32}}
  %c32 = arith.constant dense<32> : tensor<64xi32>
  // expected-remark @below {{contiguity = [64], divisibility = [32], constancy = [1]}}
  %r32 = arith.addi %r, %c32 : tensor<64xi32>
  // A scalar condition: one side or the other, whole.
  // expected-remark @below {{contiguity = [64], divisibility = [32], constancy = [1]}}
  %sel = arith.select %cond, %r, %r32 : tensor<64xi32>
  // The elements of a run are not all multiples of 32: divisibility 1 once
  // the runs are gone.
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %sel2 = arith.select %cond, %r, %c32 : tensor<64xi32>
  // expected-remark @below {{constant = 40}}
  %c40 = arith.constant dense<40> : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [8]}}
  %mask = arith.cmpi slt, %r, %c40 : tensor<64xi32>
  // A tile condition: runs cut to its constancy.
  // expected-remark @below {{contiguity = [8], divisibility = [8], constancy = [1]}}
  %sel3 = arith.select %mask, %r, %r32 : tensor<64xi1>, tensor<64xi32>
  // expected-remark @below {{contiguity = [64], divisibility = [32], constancy = [1]}}
  %if = scf.if %cond -> tensor<64xi32> {
    scf.yield %r : tensor<64xi32>
  } else {
    scf.yield %r32 : tensor<64xi32>
  }
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [1]}}
  %ifs = scf.if %cond -> i32 {
    // expected-remark @below {{constant = 16}}
    %c16 = arith.constant 16 : i32
    scf.yield %c16 : i32
  } else {
    // expected-remark @below {{constant = 48}}
    %c48 = arith.constant 48 : i32
    scf.yield %c48 : i32
  }
  return
}

// -----

// scf.for: the induction variable is a multiple of what divides lb and
// step; loop-carried values are joined over the iterations until a
// fixpoint.
// expected-remark @below {{argument #0: contiguity = [1], divisibility = [16], constancy = [1]}}
// expected-remark @below {{argument #1: contiguity = [1], divisibility = [1], constancy = [1]}}
func.func @loops(%x: !kiln.ptr<f32> {kiln.align = 16 : i64}, %n: i32) {
  // expected-remark @below {{constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{constant = 32}}
  %c32 = arith.constant 32 : i32
  // expected-remark @below {{contiguity = [32], divisibility = [1073741824], constancy = [1]}}
  %r = kiln.arange %c0, %c32 : tensor<32xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [32]}}
  %px = kiln.splat %x : !kiln.ptr<f32> -> tensor<32x!kiln.ptr<f32>>
  // expected-remark @below {{contiguity = [32], divisibility = [16], constancy = [1]}}
  %p0 = kiln.addptr %px, %r : tensor<32x!kiln.ptr<f32>>, tensor<32xi32>
  // expected-remark @below {{constant = 32}}
  %step = arith.constant dense<32> : tensor<32xi32>
  // expected-remark @below {{constant = 3}}
  %odd = arith.constant dense<3> : tensor<32xi32>
  // Advanced by 32 elements per iteration: still 16-byte aligned. Advanced
  // by 3: only element-aligned. An offset advanced by 1: no longer aligned.
  // expected-remark @below {{argument #0: contiguity = [1], divisibility = [32], constancy = [1]}}
  // expected-remark @below {{argument #1: contiguity = [32], divisibility = [16], constancy = [1]}}
  // expected-remark @below {{argument #2: contiguity = [32], divisibility = [4], constancy = [1]}}
  // expected-remark @below {{argument #3: contiguity = [32], divisibility = [1], constancy = [1]}}
  // expected-remark @below {{result #0: contiguity = [32], divisibility = [16], constancy = [1]}}
  // expected-remark @below {{result #1: contiguity = [32], divisibility = [4], constancy = [1]}}
  // expected-remark @below {{result #2: contiguity = [32], divisibility = [1], constancy = [1]}}
  %res:3 = scf.for %i = %c0 to %n step %c32 iter_args(%p = %p0, %q = %p0, %o = %r)
      -> (tensor<32x!kiln.ptr<f32>>, tensor<32x!kiln.ptr<f32>>, tensor<32xi32>) : i32 {
    // expected-remark @below {{contiguity = [32], divisibility = [16], constancy = [1]}}
    %pn = kiln.addptr %p, %step : tensor<32x!kiln.ptr<f32>>, tensor<32xi32>
    // expected-remark @below {{contiguity = [32], divisibility = [4], constancy = [1]}}
    %qn = kiln.addptr %q, %odd : tensor<32x!kiln.ptr<f32>>, tensor<32xi32>
    // expected-remark @below {{constant = 1}}
    %one = arith.constant dense<1> : tensor<32xi32>
    // expected-remark @below {{contiguity = [32], divisibility = [1], constancy = [1]}}
    %on = arith.addi %o, %one : tensor<32xi32>
    scf.yield %pn, %qn, %on : tensor<32x!kiln.ptr<f32>>, tensor<32x!kiln.ptr<f32>>, tensor<32xi32>
  }
  return
}

// -----

// What the analysis cannot see through is pessimistic: loaded values,
// reductions, and ops it has no rule for.
// expected-remark @below {{argument #0: contiguity = [1], divisibility = [16], constancy = [1]}}
func.func @pessimistic(%x: !kiln.ptr<i32> {kiln.align = 16 : i64}) {
  // expected-remark @below {{constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{constant = 64}}
  %c64 = arith.constant 64 : i32
  // expected-remark @below {{contiguity = [64], divisibility = [1073741824], constancy = [1]}}
  %r = kiln.arange %c0, %c64 : tensor<64xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [64]}}
  %px = kiln.splat %x : !kiln.ptr<i32> -> tensor<64x!kiln.ptr<i32>>
  // expected-remark @below {{contiguity = [64], divisibility = [16], constancy = [1]}}
  %p = kiln.addptr %px, %r : tensor<64x!kiln.ptr<i32>>, tensor<64xi32>
  // expected-remark @below {{vectorizable = [4]}}
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %v = kiln.load %p : tensor<64x!kiln.ptr<i32>> -> tensor<64xi32>
  // Offsets read from memory: nothing known of the pointers either.
  // expected-remark @below {{contiguity = [1], divisibility = [4], constancy = [1]}}
  %g = kiln.addptr %px, %v : tensor<64x!kiln.ptr<i32>>, tensor<64xi32>
  // expected-remark @below {{argument #0: contiguity = [1], divisibility = [1], constancy = [1]}}
  // expected-remark @below {{argument #1: contiguity = [1], divisibility = [1], constancy = [1]}}
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %s = kiln.reduce %r axis = 0 : (tensor<64xi32>) -> i32 {
  ^bb0(%a: i32, %b: i32):
    // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
    %m = arith.maxsi %a, %b : i32
    kiln.reduce.return %m : i32
  }
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [1]}}
  %abs = math.absi %r : tensor<64xi32>
  return
}

// -----

// Loads and stores: how many elements one access may cover along each
// dimension: the contiguity, limited by the alignment in elements and by
// the constancy of the mask.
// expected-remark @below {{argument #0: contiguity = [1], divisibility = [16], constancy = [1]}}
// expected-remark @below {{argument #1: contiguity = [1], divisibility = [16], constancy = [1]}}
// expected-remark @below {{argument #2: contiguity = [1], divisibility = [2], constancy = [1]}}
func.func @vector_width(%x: !kiln.ptr<f32> {kiln.align = 16 : i64},
                        %h: !kiln.ptr<f16> {kiln.align = 16 : i64},
                        %n: i32 {kiln.div = 2 : i64}) {
  // expected-remark @below {{constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{constant = 128}}
  %c128 = arith.constant 128 : i32
  // expected-remark @below {{contiguity = [128], divisibility = [1073741824], constancy = [1]}}
  %offs = kiln.arange %c0, %c128 : tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [128]}}
  %px = kiln.splat %x : !kiln.ptr<f32> -> tensor<128x!kiln.ptr<f32>>
  // expected-remark @below {{contiguity = [128], divisibility = [16], constancy = [1]}}
  %p = kiln.addptr %px, %offs : tensor<128x!kiln.ptr<f32>>, tensor<128xi32>
  // 16 bytes: 4 floats.
  // expected-remark @below {{vectorizable = [4]}}
  %v = kiln.load %p : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
  // A mask constant over pairs only (n is @div(2)).
  // expected-remark @below {{contiguity = [1], divisibility = [2], constancy = [128]}}
  %ns = kiln.splat %n : i32 -> tensor<128xi32>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [2]}}
  %m = arith.cmpi slt, %offs, %ns : tensor<128xi32>
  // expected-remark @below {{vectorizable = [2]}}
  kiln.store %p, %v, mask %m : tensor<128x!kiln.ptr<f32>>
  // One element further: 4-byte aligned only.
  // expected-remark @below {{constant = 1}}
  %one = arith.constant dense<1> : tensor<128xi32>
  // expected-remark @below {{contiguity = [128], divisibility = [4], constancy = [1]}}
  %p1 = kiln.addptr %p, %one : tensor<128x!kiln.ptr<f32>>, tensor<128xi32>
  // expected-remark @below {{vectorizable = [1]}}
  %v1 = kiln.load %p1 : tensor<128x!kiln.ptr<f32>> -> tensor<128xf32>
  // 16 bytes of f16: 8 elements.
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [128]}}
  %ph = kiln.splat %h : !kiln.ptr<f16> -> tensor<128x!kiln.ptr<f16>>
  // expected-remark @below {{contiguity = [128], divisibility = [16], constancy = [1]}}
  %q = kiln.addptr %ph, %offs : tensor<128x!kiln.ptr<f16>>, tensor<128xi32>
  // expected-remark @below {{vectorizable = [8]}}
  %w = kiln.load %q : tensor<128x!kiln.ptr<f16>> -> tensor<128xf16>
  return
}

// -----

// Wide offsets, as tile-gpu-lower-views builds them for a view box: i32
// coordinates widened (extsi keeps runs of 32-bit values), times an i64
// stride, added in i64; pointers plus i64 offsets keep the whole runs
// (no 32-bit wrap to cut them). The unsigned `c <u size` mask is constant
// over runs as `c < size` is.
// expected-remark @below {{argument #0: contiguity = [1], divisibility = [16], constancy = [1]}}
// expected-remark @below {{argument #1: contiguity = [1], divisibility = [8], constancy = [1]}}
// expected-remark @below {{argument #2: contiguity = [1], divisibility = [16], constancy = [1]}}
func.func @wide_offsets(%x: !kiln.ptr<f16> {kiln.align = 16 : i64},
                        %ld: i32 {kiln.div = 8 : i64},
                        %n: i64 {kiln.div = 16 : i64}) {
  // expected-remark @below {{constant = 0}}
  %c0 = arith.constant 0 : i32
  // expected-remark @below {{constant = 64}}
  %c64 = arith.constant 64 : i32
  // expected-remark @below {{contiguity = [64], divisibility = [1073741824], constancy = [1]}}
  %r = kiln.arange %c0, %c64 : tensor<64xi32>
  // expected-remark @below {{contiguity = [64], divisibility = [1073741824], constancy = [1]}}
  %rw = arith.extsi %r : tensor<64xi32> to tensor<64xi64>
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [1]}}
  %ld64 = arith.extsi %ld : i32 to i64
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [64]}}
  %lds = kiln.splat %ld64 : i64 -> tensor<64xi64>
  // expected-remark @below {{contiguity = [1], divisibility = [8], constancy = [1]}}
  %rows = arith.muli %rw, %lds : tensor<64xi64>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [8, 8], constancy = [1, 1]}}
  %rows2 = kiln.expand_dims %rows axis = 1 : tensor<64xi64> -> tensor<64x1xi64>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [8, 8], constancy = [1, 64]}}
  %rowsb = kiln.broadcast %rows2 : tensor<64x1xi64> -> tensor<64x64xi64>
  // expected-remark @below {{contiguity = [1, 64], divisibility = [1, 1073741824], constancy = [1, 1]}}
  %cols2 = kiln.expand_dims %rw axis = 0 : tensor<64xi64> -> tensor<1x64xi64>
  // expected-remark @below {{contiguity = [1, 64], divisibility = [1, 1073741824], constancy = [64, 1]}}
  %colsb = kiln.broadcast %cols2 : tensor<1x64xi64> -> tensor<64x64xi64>
  // expected-remark @below {{contiguity = [1, 64], divisibility = [1, 8], constancy = [1, 1]}}
  %offs = arith.addi %rowsb, %colsb : tensor<64x64xi64>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [16, 16], constancy = [64, 64]}}
  %px = kiln.splat %x : !kiln.ptr<f16> -> tensor<64x64x!kiln.ptr<f16>>
  // expected-remark @below {{contiguity = [1, 64], divisibility = [2, 16], constancy = [1, 1]}}
  %p = kiln.addptr %px, %offs : tensor<64x64x!kiln.ptr<f16>>, tensor<64x64xi64>
  // expected-remark @below {{contiguity = [1], divisibility = [16], constancy = [64]}}
  %ns = kiln.splat %n : i64 -> tensor<64xi64>
  // expected-remark @below {{contiguity = [1], divisibility = [1], constancy = [16]}}
  %in = arith.cmpi ult, %rw, %ns : tensor<64xi64>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [1, 1], constancy = [1, 16]}}
  %in2 = kiln.expand_dims %in axis = 0 : tensor<64xi1> -> tensor<1x64xi1>
  // expected-remark @below {{contiguity = [1, 1], divisibility = [1, 1], constancy = [64, 16]}}
  %m = kiln.broadcast %in2 : tensor<1x64xi1> -> tensor<64x64xi1>
  // expected-remark @below {{vectorizable = [1, 8]}}
  %v = kiln.load %p, mask %m : tensor<64x64x!kiln.ptr<f16>> -> tensor<64x64xf16>
  return
}
