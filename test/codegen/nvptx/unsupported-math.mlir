// RUN: kiln-opt %s --split-input-file --convert-kiln-gpu-to-nvvm --verify-diagnostics | FileCheck %s
// REQUIRES: nvptx-backend

// f64 functions become arithmetic (compiler/GPU/MathExpansion.cpp): no
// math op and no LLVM math intrinsic but fma is left of exp, erf, sin.
// CHECK-LABEL: llvm.func @expanded(
// CHECK-NOT: llvm.intr.exp
// CHECK-NOT: llvm.intr.sin
// CHECK-NOT: llvm.call
// CHECK: llvm.intr.fma
// CHECK-NOT: llvm.intr.exp
// CHECK-NOT: llvm.call
// CHECK: llvm.return
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @expanded(%x: f64, %p: i64) attributes {kiln.kernel} {
    %e = math.exp %x : f64
    %f = math.erf %e : f64
    %s = math.sin %f : f64
    %v = vector.broadcast %s : f64 to vector<1xf64>
    kiln_gpu.store %p, %v alignment 8 : vector<1xf64>
    return
  }
}

// -----

// A math function without an expansion (none the language reaches: f64
// atan) would need libdevice: an error, not a call.
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @f64(%x: f64, %p: i64) attributes {kiln.kernel} {
    // expected-error @below {{'math.atan' on 'f64' is not supported by the NVIDIA backend yet (it would need libdevice)}}
    %t = math.atan %x : f64
    %v = vector.broadcast %t : f64 to vector<1xf64>
    kiln_gpu.store %p, %v alignment 8 : vector<1xf64>
    return
  }
}
