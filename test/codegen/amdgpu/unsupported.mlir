// RUN: kiln-opt %s --split-input-file --convert-kiln-gpu-to-rocdl --verify-diagnostics
// REQUIRES: amdgpu-backend

// print has no AMD lowering yet: a clear error, not a library call.
module attributes {kiln_gpu.target = "gfx942", kiln_gpu.warps = 4 : i32} {
  func.func @print(%x: f32) attributes {kiln.kernel} {
    // expected-error @below {{'print' (and the messages of checked builds' assertions) is not supported by the AMD backend yet}}
    kiln_gpu.printf "x = %g\n" (%x : f32)
    return
  }
}

// -----

// The pass needs an AMD target.
// expected-error @below {{convert-kiln-gpu-to-rocdl needs an AMD target in kiln_gpu.target}}
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @k() attributes {kiln.kernel} {
    return
  }
}
