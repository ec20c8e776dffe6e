// RUN: kiln-opt %s --split-input-file --convert-kiln-gpu-to-rocdl | FileCheck %s
// REQUIRES: amdgpu-backend

// Ids: the work-item id, lane and wave from it with gfx942's 64-lane
// waves; program ids are work-group ids; the program count along x is the
// dispatch packet's grid size (work-items, byte 12) over the block size the
// compiler chose (4 waves of 64): no ockl. Masked global accesses branch
// around; the kernel is amdgpu_kernel with its flat work-group size; LDS is
// one extern array.
// CHECK: llvm.mlir.global external @kiln_shared() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: llvm.func @ids(
// CHECK-SAME: rocdl.flat_work_group_size = "256,256"
// CHECK-SAME: rocdl.kernel
// CHECK: llvm.call_intrinsic "llvm.amdgcn.workitem.id.x"() : () -> i32
// CHECK: llvm.and %{{.*}}, %{{.*}} : i32
// CHECK: llvm.call_intrinsic "llvm.amdgcn.workgroup.id.y"() : () -> i32
// CHECK: %[[PKT:.*]] = llvm.call_intrinsic "llvm.amdgcn.dispatch.ptr"() : () -> !llvm.ptr<4>
// CHECK: llvm.getelementptr %[[PKT]][12] : (!llvm.ptr<4>) -> !llvm.ptr<4>, i8
// CHECK: %[[GRID:.*]] = llvm.load %{{.*}} invariant {alignment = 4 : i64} : !llvm.ptr<4> -> i32
// CHECK: llvm.udiv %[[GRID]], %{{.*}} : i32
// CHECK: llvm.cond_br
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK-NOT: llvm.call @
module attributes {kiln_gpu.target = "gfx942", kiln_gpu.warps = 4 : i32} {
  func.func @ids(%p: i64, %m: i1) attributes {kiln.kernel} {
    %lane = kiln_gpu.id lane
    %y = kiln.program_id y
    %n = kiln.num_programs x
    %s0 = arith.addi %lane, %y : i32
    %sum = arith.addi %s0, %n : i32
    %off = arith.extui %sum : i32 to i64
    %q = arith.addi %p, %off : i64
    %v = kiln_gpu.load %q, mask %m alignment 16 : vector<4xf32>
    kiln_gpu.store %q, %v alignment 16 : vector<4xf32>
    return
  }
}

// -----

// Shuffles are ds_bpermute of the source lane (times 4: a byte address),
// 32 bits at a time: xor of the lane; down keeps the own lane past the
// wave (64 here); 64-bit values in two halves. Barriers order LDS with
// work-group fences around s_barrier.
// CHECK-LABEL: llvm.func @shuffles(
// CHECK: llvm.xor
// CHECK: llvm.shl %{{.*}}, %{{.*}} : i32
// CHECK: llvm.call_intrinsic "llvm.amdgcn.ds.bpermute"(%{{.*}}, %{{.*}}) : (i32, i32) -> i32
// CHECK: llvm.icmp "slt" %{{.*}}, %{{.*}} : i32
// CHECK: llvm.select
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.amdgcn.ds.bpermute"
// CHECK: llvm.fence syncscope("workgroup") release
// CHECK-NEXT: llvm.call_intrinsic "llvm.amdgcn.s.barrier"() : () -> ()
// CHECK-NEXT: llvm.fence syncscope("workgroup") acquire
module attributes {kiln_gpu.target = "gfx942", kiln_gpu.warps = 4 : i32} {
  func.func @shuffles(%x: f32, %d: i64, %o: i32) attributes {kiln.kernel} {
    %a = kiln_gpu.shuffle xor %x, %o : f32
    %c = kiln_gpu.shuffle down %d, %o : i64
    kiln_gpu.barrier
    return
  }
}

// -----

// Xor shuffles with a constant mask need no address: DPP quad_perm for 1
// and 2 (quad_perm:[1,0,3,2] = 0xB1, [2,3,0,1] = 0x4E, all rows and
// banks), ds_swizzle in bit-mask mode for 4, 8 and 16 on GFX9 (and 0x1F,
// xor the mask at bit 10), ds_bpermute for 32 (across the halves of a
// wave64).
// CHECK-LABEL: llvm.func @xor_masks(
// CHECK-DAG: %[[Q1:.*]] = llvm.mlir.constant(177 : i32) : i32
// CHECK-DAG: %[[Q2:.*]] = llvm.mlir.constant(78 : i32) : i32
// CHECK-DAG: %[[S4:.*]] = llvm.mlir.constant(4127 : i32) : i32
// CHECK-DAG: %[[S16:.*]] = llvm.mlir.constant(16415 : i32) : i32
// CHECK: llvm.call_intrinsic "llvm.amdgcn.update.dpp"(%{{.*}}, %{{.*}}, %[[Q1]], %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i32, i32, i32, i1) -> i32
// CHECK: llvm.call_intrinsic "llvm.amdgcn.update.dpp"(%{{.*}}, %{{.*}}, %[[Q2]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: llvm.call_intrinsic "llvm.amdgcn.ds.swizzle"(%{{.*}}, %[[S4]]) : (i32, i32) -> i32
// CHECK: llvm.call_intrinsic "llvm.amdgcn.ds.swizzle"(%{{.*}}, %[[S16]])
// CHECK: llvm.call_intrinsic "llvm.amdgcn.ds.bpermute"
module attributes {kiln_gpu.target = "gfx942", kiln_gpu.warps = 4 : i32} {
  func.func @xor_masks(%x: f32) attributes {kiln.kernel} {
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c4 = arith.constant 4 : i32
    %c16 = arith.constant 16 : i32
    %c32 = arith.constant 32 : i32
    %a = kiln_gpu.shuffle xor %x, %c1 : f32
    %b = kiln_gpu.shuffle xor %a, %c2 : f32
    %c = kiln_gpu.shuffle xor %b, %c4 : f32
    %d = kiln_gpu.shuffle xor %c, %c16 : f32
    %e = kiln_gpu.shuffle xor %d, %c32 : f32
    return
  }
}

// -----

// GFX10+: DPP row_xmask (0x160 | mask) for 4 and 8; 16 by ds_swizzle.
// CHECK-LABEL: llvm.func @xor_masks_rdna(
// CHECK-DAG: %[[X8:.*]] = llvm.mlir.constant(360 : i32) : i32
// CHECK: llvm.call_intrinsic "llvm.amdgcn.update.dpp"(%{{.*}}, %{{.*}}, %[[X8]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: llvm.call_intrinsic "llvm.amdgcn.ds.swizzle"
// CHECK-NOT: llvm.amdgcn.ds.bpermute
module attributes {kiln_gpu.target = "gfx1100", kiln_gpu.warps = 4 : i32} {
  func.func @xor_masks_rdna(%x: f32) attributes {kiln.kernel} {
    %c8 = arith.constant 8 : i32
    %c16 = arith.constant 16 : i32
    %a = kiln_gpu.shuffle xor %x, %c8 : f32
    %b = kiln_gpu.shuffle xor %a, %c16 : f32
    return
  }
}

// -----

// Matrix instructions: MFMA on CDNA (A and B as the intrinsic wants them:
// f16 vectors, bf16 as i16, f32 as a scalar, 8 i8 as one i64; cbsz, abid,
// blgp 0), LDS off kiln_shared at the buffer's offset.
// CHECK-LABEL: llvm.func @mfma(
// CHECK: llvm.mlir.addressof @kiln_shared : !llvm.ptr<3>
// CHECK: llvm.call_intrinsic "llvm.amdgcn.mfma.f32.32x32x8f16"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (vector<4xf16>, vector<4xf16>, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
// CHECK: llvm.call_intrinsic "llvm.amdgcn.mfma.f32.16x16x16bf16.1k"({{.*}}) : (vector<4xi16>, vector<4xi16>, vector<4xf32>, i32, i32, i32) -> vector<4xf32>
// CHECK: llvm.call_intrinsic "llvm.amdgcn.mfma.f32.32x32x2f32"({{.*}}) : (f32, f32, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
// CHECK: llvm.call_intrinsic "llvm.amdgcn.mfma.i32.32x32x16.i8"({{.*}}) : (i64, i64, vector<16xi32>, i32, i32, i32) -> vector<16xi32>
// CHECK: llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
module attributes {kiln_gpu.target = "gfx942", kiln_gpu.warps = 4 : i32} {
  func.func @mfma(%a: vector<4xf16>, %c: vector<16xf32>, %ab: vector<4xbf16>, %c4: vector<4xf32>,
                  %f: vector<1xf32>, %i: vector<8xi8>, %ci: vector<16xi32>, %o: i32) attributes {kiln.kernel} {
    %d0 = kiln_gpu.mma "amd.mfma.32x32x8.f16" %a, %a, %c : vector<4xf16>, vector<4xf16> -> vector<16xf32>
    %d1 = kiln_gpu.mma "amd.mfma.16x16x16.bf16" %ab, %ab, %c4 : vector<4xbf16>, vector<4xbf16> -> vector<4xf32>
    %d2 = kiln_gpu.mma "amd.mfma.32x32x2.f32" %f, %f, %c : vector<1xf32>, vector<1xf32> -> vector<16xf32>
    %d3 = kiln_gpu.mma "amd.mfma.32x32x16.i8" %i, %i, %ci : vector<8xi8>, vector<8xi8> -> vector<16xi32>
    %buf = kiln_gpu.shared_alloc size 4096 alignment 16 offset 1024 : !kiln_gpu.shared
    %e = vector.extract %d0[0] : f32 from vector<16xf32>
    %ev = vector.broadcast %e : f32 to vector<1xf32>
    kiln_gpu.shared_store %buf[%o], %ev : vector<1xf32>
    return
  }
}

// -----

// WMMA on RDNA3 (gfx1100, 32-lane waves): 16 operand elements per lane
// (both half-waves hold them), i8 with its signedness flags.
// CHECK-LABEL: llvm.func @wmma(
// CHECK-SAME: rocdl.flat_work_group_size = "128,128"
// CHECK: llvm.call_intrinsic "llvm.amdgcn.wmma.f32.16x16x16.f16"(%{{.*}}, %{{.*}}, %{{.*}}) : (vector<16xf16>, vector<16xf16>, vector<8xf32>) -> vector<8xf32>
// CHECK: llvm.call_intrinsic "llvm.amdgcn.wmma.i32.16x16x16.iu8"({{.*}}) : (i1, vector<4xi32>, i1, vector<4xi32>, vector<8xi32>, i1) -> vector<8xi32>
module attributes {kiln_gpu.target = "gfx1100", kiln_gpu.warps = 4 : i32} {
  func.func @wmma(%a: vector<16xf16>, %c: vector<8xf32>, %i: vector<16xi8>, %ci: vector<8xi32>, %p: i64) attributes {kiln.kernel} {
    %d0 = kiln_gpu.mma "amd.wmma.gfx11.f16" %a, %a, %c : vector<16xf16>, vector<16xf16> -> vector<8xf32>
    %d1 = kiln_gpu.mma "amd.wmma.gfx11.i8" %i, %i, %ci : vector<16xi8>, vector<16xi8> -> vector<8xi32>
    return
  }
}

// -----

// Atomics at agent scope; a trap without a message is s_trap (llvm.trap); exp2, exp, log2
// and log stay intrinsics (the backend expands them around v_exp_f32 and
// v_log_f32; no polynomial), sin becomes arithmetic: no library call.
// CHECK-LABEL: llvm.func @effects(
// CHECK: llvm.atomicrmw fadd %{{.*}}, %{{.*}} syncscope("agent") acq_rel : !llvm.ptr<1>, f32
// CHECK: llvm.intr.exp2(%{{.*}}) : (f32) -> f32
// CHECK: llvm.intr.exp(%{{.*}}) : (f32) -> f32
// CHECK: llvm.intr.log(%{{.*}}) : (f32) -> f32
// CHECK: llvm.intr.log2(%{{.*}}) : (f32) -> f32
// CHECK: llvm.intr.trap
// CHECK-NOT: llvm.call @
module attributes {kiln_gpu.target = "gfx942", kiln_gpu.warps = 4 : i32} {
  func.func @effects(%p: i64, %x: f32, %m: i1) attributes {kiln.kernel} {
    %old = kiln_gpu.atomic_rmw "add" %p, %x, mask %m : f32
    %e2 = math.exp2 %old : f32
    %e1 = math.exp %e2 : f32
    %l1 = math.log %e1 : f32
    %e = math.log2 %l1 : f32
    %s = math.sin %e : f32
    %sv = vector.broadcast %s : f32 to vector<1xf32>
    kiln_gpu.store %p, %sv alignment 4 : vector<1xf32>
    kiln_gpu.trap
    return
  }
}

// -----

// print: the kernel takes Kiln's print buffer as a last argument (an i64
// address); each printf reserves 8 + 8 x args bytes with one atomic add on
// the buffer's first word and, if they fit under the capacity (the second
// word), writes {FNV-1a of the format, argument count} and the arguments
// (integers sign-extended to i64, floats as f64 bits) after the 16-byte
// header. The module lists its formats for the image's resources.
// CHECK: kiln_gpu.print_formats = ["x = %g, i = %d\0A"]
// CHECK-LABEL: llvm.func @print(
// CHECK-SAME: %[[X:[^:]+]]: f32, %[[I:[^:]+]]: i32, %[[BUF:[^:]+]]: i64)
// CHECK-DAG: %[[HASH:.*]] = llvm.mlir.constant(-84170655 : i32) : i32
// CHECK-DAG: %[[COUNT:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK-DAG: %[[SIZE:.*]] = llvm.mlir.constant(24 : i64) : i64
// CHECK-DAG: %[[HEADER:.*]] = llvm.mlir.constant(16 : i64) : i64
// CHECK-DAG: %[[XD:.*]] = llvm.fpext %[[X]] : f32 to f64
// CHECK-DAG: %[[XS:.*]] = llvm.bitcast %[[XD]] : f64 to i64
// CHECK-DAG: %[[IS:.*]] = llvm.sext %[[I]] : i32 to i64
// CHECK: %[[BASE:.*]] = llvm.inttoptr %[[BUF]] : i64 to !llvm.ptr<1>
// CHECK: %[[CAPP:.*]] = llvm.getelementptr %[[BASE]][8]
// CHECK: %[[CAP:.*]] = llvm.load %[[CAPP]] : !llvm.ptr<1> -> i64
// CHECK: %[[OFF:.*]] = llvm.atomicrmw add %[[BASE]], %[[SIZE]] syncscope("agent") monotonic : !llvm.ptr<1>, i64
// CHECK: %[[END:.*]] = llvm.add %[[OFF]], %[[SIZE]] : i64
// CHECK: %[[FITS:.*]] = llvm.icmp "ule" %[[END]], %[[CAP]] : i64
// CHECK: llvm.cond_br %[[FITS]]
// CHECK: %[[AT:.*]] = llvm.add %[[OFF]], %[[HEADER]] : i64
// CHECK: %[[REC:.*]] = llvm.getelementptr %[[BASE]][%[[AT]]]
// CHECK: llvm.store %[[HASH]], %[[REC]] : i32, !llvm.ptr<1>
// CHECK: llvm.store %[[COUNT]], %{{.*}} : i32, !llvm.ptr<1>
// CHECK: llvm.store %[[XS]], %{{.*}} : i64, !llvm.ptr<1>
// CHECK: llvm.store %[[IS]], %{{.*}} : i64, !llvm.ptr<1>
// CHECK-NOT: llvm.call @
module attributes {kiln_gpu.target = "gfx942", kiln_gpu.warps = 4 : i32} {
  func.func @print(%x: f32, %i: i32) attributes {kiln.kernel} {
    kiln_gpu.printf "x = %g, i = %d\n" (%x, %i : f32, i32)
    return
  }
}

// -----

// A failed assertion (a printf right before a trap) on AMD: the first
// thread of the launch to claim the trap word after the records (0 -> ~0,
// at 16 + capacity) writes its message's record and stores the record's
// offset + 1 there; then its wave ends (s_endpgm), so the runtime reports
// the message at the stream's synchronization. No s_trap.
// CHECK-LABEL: llvm.func @failed_assertion(
// CHECK-SAME: %[[PID:[^:]+]]: i32, %[[BUF:[^:]+]]: i64)
// CHECK-DAG: %[[ZERO:.*]] = llvm.mlir.constant(0 : i64) : i64
// CHECK-DAG: %[[CLAIMED:.*]] = llvm.mlir.constant(-1 : i64) : i64
// CHECK-DAG: %[[ONE:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK: %[[PID64:.*]] = llvm.sext %[[PID]] : i32 to i64
// CHECK: %[[BASE:.*]] = llvm.inttoptr %[[BUF]] : i64 to !llvm.ptr<1>
// CHECK: %[[CAP:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i64
// CHECK: %[[TRAPAT:.*]] = llvm.add %[[CAP]], %{{.*}} : i64
// CHECK: %[[TRAP:.*]] = llvm.getelementptr %[[BASE]][%[[TRAPAT]]]
// CHECK: %[[CLAIM:.*]] = llvm.cmpxchg %[[TRAP]], %[[ZERO]], %[[CLAIMED]] syncscope("agent") monotonic monotonic : !llvm.ptr<1>, i64
// CHECK: %[[FIRST:.*]] = llvm.extractvalue %[[CLAIM]][1]
// CHECK: llvm.cond_br %[[FIRST]]
// CHECK: %[[OFF:.*]] = llvm.atomicrmw add %[[BASE]]
// CHECK: llvm.cond_br
// CHECK: llvm.store %[[PID64]], %{{.*}} : i64, !llvm.ptr<1>
// CHECK: %[[MARK:.*]] = llvm.add %[[OFF]], %[[ONE]] : i64
// CHECK: llvm.store %[[MARK]], %[[TRAP]] atomic syncscope("agent") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK: llvm.call_intrinsic "llvm.amdgcn.endpgm"()
// CHECK-NOT: llvm.intr.trap
// CHECK-NOT: llvm.call @
module attributes {kiln_gpu.target = "gfx942", kiln_gpu.warps = 4 : i32} {
  func.func @failed_assertion(%pid: i32) attributes {kiln.kernel} {
    %pid64 = arith.extsi %pid : i32 to i64
    kiln_gpu.printf "k.tile:3:5: boom (in program %d)\n" (%pid64 : i64)
    kiln_gpu.trap
    return
  }
}

// -----

// A shuffle of a vector built by insert_strided_slice reads its elements
// straight from the inserted parts (convertPerThreadToLLVM,
// ShuffleThroughInserts): the wide vector is never built, so no 8-lane
// value and no shuffle remain.
// CHECK-LABEL: llvm.func @fragments(
// CHECK-SAME: %[[A:[^:]+]]: vector<1xf32>, %[[B:[^:]+]]: vector<2xf32>,
// CHECK-NOT: vector<8xf32>
// CHECK-NOT: llvm.shufflevector
// CHECK-DAG: llvm.extractelement %[[B]]
// CHECK-DAG: llvm.extractelement %[[A]]
// CHECK: llvm.insertelement
// CHECK: llvm.insertelement
// CHECK-NOT: vector<8xf32>
// CHECK: llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<1>
module attributes {kiln_gpu.target = "gfx942", kiln_gpu.warps = 4 : i32} {
  func.func @fragments(%a: vector<1xf32>, %b: vector<2xf32>, %p: i64) attributes {kiln.kernel} {
    %z = arith.constant dense<0.0> : vector<8xf32>
    %w0 = vector.insert_strided_slice %a, %z {offsets = [3], strides = [1]} : vector<1xf32> into vector<8xf32>
    %w1 = vector.insert_strided_slice %b, %w0 {offsets = [5], strides = [1]} : vector<2xf32> into vector<8xf32>
    %f = vector.shuffle %w1, %w1 [6, 3] : vector<8xf32>, vector<8xf32>
    kiln_gpu.store %p, %f alignment 8 : vector<2xf32>
    return
  }
}

// -----

// Elementwise arithmetic on per-thread vectors of 64-bit values (a tile of
// addresses) is one scalar op per element, so that lanes nothing reads
// vanish (LLVM's AMDGPU selection kept such vectors whole, in SGPR copies
// that spilled): here only element 1 of the sum is read, and only it is
// computed. 32-bit vectors stay vectors.
// CHECK-LABEL: llvm.func @wide(
// CHECK: llvm.extractelement %{{.*}} : vector<4xi64>
// CHECK: llvm.extractelement %{{.*}} : vector<4xi64>
// CHECK-NEXT: llvm.add %{{.*}}, %{{.*}} : i64
// CHECK-NOT: vector<4xi64>
// CHECK: llvm.add %{{.*}}, %{{.*}} : vector<4xi32>
module attributes {kiln_gpu.target = "gfx942", kiln_gpu.warps = 4 : i32} {
  func.func @wide(%p: vector<4xi64>, %o: vector<4xi64>, %i: vector<4xi32>) attributes {kiln.kernel} {
    %q = arith.addi %p, %o : vector<4xi64>
    %j = arith.addi %i, %i : vector<4xi32>
    %a = vector.extract %q[1] : i64 from vector<4xi64>
    %b = vector.extract %j[1] : i32 from vector<4xi32>
    %c = arith.extui %b : i32 to i64
    %d = arith.addi %a, %c : i64
    %v = kiln_gpu.load %d alignment 4 : vector<1xf32>
    kiln_gpu.store %d, %v alignment 4 : vector<1xf32>
    return
  }
}

// -----

// The offset form of loads and stores is a buffer access: a raw resource
// (stride 0, range 2^31 bytes, GFX9's format word) over the base read from
// the first lane, and the offset moved to 2^31 (out of range: reads zero,
// writes nothing) where the mask is false, with no branch. A load with a
// non-zero `other` selects it where masked (on the bits: LLVM 22 crashes
// printing some bf16 selects for gfx11); a zero `other` needs nothing.
// Sizes are moved as i8/i16/i32 or vectors of i32.
// CHECK-LABEL: llvm.func @buffers(
// CHECK-NOT: llvm.cond_br
// CHECK-DAG: %[[OOB:.*]] = llvm.mlir.constant(-2147483648 : i32) : i32
// CHECK-DAG: %[[FLAGS:.*]] = llvm.mlir.constant(159744 : i32) : i32
// CHECK-DAG: %[[RANGE:.*]] = llvm.mlir.constant(2147483648 : i64) : i64
// CHECK-DAG: %[[STRIDE:.*]] = llvm.mlir.constant(0 : i16) : i16
// CHECK: %[[B:.*]] = rocdl.readfirstlane %{{.*}} : i64
// CHECK: %[[P:.*]] = llvm.inttoptr %[[B]] : i64 to !llvm.ptr<1>
// CHECK: %[[R:.*]] = rocdl.make.buffer.rsrc %[[P]], %[[STRIDE]], %[[RANGE]], %[[FLAGS]] : <1> to <8>
// CHECK: %[[O:.*]] = llvm.select %{{.*}}, %{{.*}}, %[[OOB]] : i1, i32
// CHECK: %[[V:.*]] = rocdl.raw.ptr.buffer.load %[[R]], %[[O]], %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: %[[OI:.*]] = llvm.bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// CHECK: %[[S:.*]] = llvm.select %{{.*}}, %[[V]], %[[OI]] : i1, vector<4xi32>
// CHECK: %[[H:.*]] = rocdl.raw.ptr.buffer.load %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : i16
// CHECK: rocdl.raw.ptr.buffer.store %[[S]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK: rocdl.raw.ptr.buffer.store %[[H]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : i16
// CHECK-NOT: llvm.cond_br
module attributes {kiln_gpu.target = "gfx942", kiln_gpu.warps = 4 : i32} {
  func.func @buffers(%p: i64, %off: i32, %m: i1, %o: vector<4xf32>) attributes {kiln.kernel} {
    %v = kiln_gpu.load %p[%off], mask %m, other %o alignment 16 : vector<4xf32>
    %zero = arith.constant dense<0.0> : vector<1xbf16>
    %h = kiln_gpu.load %p[%off], mask %m, other %zero alignment 2 : vector<1xbf16>
    kiln_gpu.store %p[%off], %v, mask %m alignment 16 : vector<4xf32>
    kiln_gpu.store %p[%off], %h alignment 2 : vector<1xbf16>
    return
  }
}

// -----

// RDNA's resource format word differs (GFX10+ layout).
// CHECK-LABEL: llvm.func @rdna_buffers(
// CHECK-DAG: %[[FLAGS:.*]] = llvm.mlir.constant(822243328 : i32) : i32
// CHECK: rocdl.make.buffer.rsrc %{{.*}}, %{{.*}}, %{{.*}}, %[[FLAGS]] : <1> to <8>
// CHECK: rocdl.raw.ptr.buffer.load %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : i32
module attributes {kiln_gpu.target = "gfx1100", kiln_gpu.warps = 4 : i32} {
  func.func @rdna_buffers(%p: i64, %off: i32) attributes {kiln.kernel} {
    %v = kiln_gpu.load %p[%off] alignment 4 : vector<1xf32>
    kiln_gpu.store %p, %v alignment 4 : vector<1xf32>
    return
  }
}
