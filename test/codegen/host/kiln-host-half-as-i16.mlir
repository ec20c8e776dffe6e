// RUN: kiln-opt %s -kiln-host-half-as-i16 | FileCheck %s

// Half-precision values that are only moved become i16, so that LLVM never
// promotes them through float.

// CHECK-LABEL: llvm.func @move(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i1) -> i16
// CHECK: %[[Z:.*]] = llvm.mlir.constant(0 : i16) : i16
// CHECK: %[[V:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i16
// CHECK: llvm.br ^bb1(%[[V]] : i16)
// CHECK: ^bb1(%[[A:.*]]: i16):
// CHECK: llvm.store %[[A]], %{{.*}} : i16, !llvm.ptr
llvm.func @move(%p: !llvm.ptr, %q: !llvm.ptr, %c: i1) -> bf16 {
  %z = llvm.mlir.constant(0.0 : bf16) : bf16
  %v = llvm.load %p : !llvm.ptr -> bf16
  llvm.br ^bb1(%v : bf16)
^bb1(%a: bf16):
  llvm.store %a, %q : bf16, !llvm.ptr
  %s = llvm.select %c, %a, %z : i1, bf16
  llvm.return %s : bf16
}

// CHECK-LABEL: llvm.func @bits(
// CHECK-NOT: llvm.bitcast
// CHECK: llvm.return %arg0 : i16
llvm.func @bits(%x: i16) -> i16 {
  %h = llvm.bitcast %x : i16 to f16
  %y = llvm.bitcast %h : f16 to i16
  llvm.return %y : i16
}
