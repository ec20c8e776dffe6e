// RUN: not kiln-opt %s --split-input-file -kiln-host-half-as-i16 2> %t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t.err
// RUN: kiln-opt %s --split-input-file "-kiln-host-half-as-i16=bf16-only=true" | FileCheck %s --check-prefix=BF16

// Vectors of halves are carried as vectors of i16 (the emulator's
// per-thread registers); dense constants keep their bits.
// CHECK-LABEL: llvm.func @vectors(
// CHECK: llvm.mlir.constant(dense<16256> : vector<2xi16>) : vector<2xi16>
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> vector<2xi16>
// CHECK: llvm.shufflevector %{{.*}}, %{{.*}} [1, 0] : vector<2xi16>
// CHECK: llvm.extractelement %{{.*}} : vector<2xi16>
// CHECK: llvm.return %{{.*}} : i16
// With bf16-only, bf16 vectors become i16 all the same.
// BF16-LABEL: llvm.func @vectors(
// BF16: llvm.load %{{.*}} : !llvm.ptr -> vector<2xi16>
llvm.func @vectors(%p: !llvm.ptr, %q: !llvm.ptr) -> bf16 {
  %one = llvm.mlir.constant(dense<1.0> : vector<2xbf16>) : vector<2xbf16>
  %v = llvm.load %p : !llvm.ptr -> vector<2xbf16>
  %s = llvm.shufflevector %v, %one [1, 0] : vector<2xbf16>
  llvm.store %s, %q : vector<2xbf16>, !llvm.ptr
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %e = llvm.extractelement %s[%c0 : i32] : vector<2xbf16>
  llvm.return %e : bf16
}

// -----

// bf16-only leaves f16 to LLVM (the emulator keeps f16 arithmetic).
// BF16-LABEL: llvm.func @keeps_f16(
// BF16: llvm.load %{{.*}} : !llvm.ptr -> vector<4xf16>
// BF16: llvm.fadd %{{.*}}, %{{.*}} : vector<4xf16>
// The pass refuses f16 arithmetic it would have to carry as i16.
// ERR: error: f16/bf16 value left after expansion: llvm.fadd
llvm.func @keeps_f16(%p: !llvm.ptr) -> vector<4xf16> {
  %v = llvm.load %p : !llvm.ptr -> vector<4xf16>
  %w = llvm.fadd %v, %v : vector<4xf16>
  llvm.return %w : vector<4xf16>
}
