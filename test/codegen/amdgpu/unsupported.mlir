// RUN: kiln-opt %s --split-input-file --convert-kiln-gpu-to-rocdl --verify-diagnostics
// REQUIRES: amdgpu-backend

// The pass needs an AMD target.
// expected-error @below {{convert-kiln-gpu-to-rocdl needs an AMD target in kiln_gpu.target}}
module attributes {kiln_gpu.target = "sm_80", kiln_gpu.warps = 4 : i32} {
  func.func @k() attributes {kiln.kernel} {
    return
  }
}

// -----

// A math function without an expansion (none the language reaches: f64
// atan) would need ocml: an error, not a call.
module attributes {kiln_gpu.target = "gfx942", kiln_gpu.warps = 4 : i32} {
  func.func @f64(%x: f64, %p: i64) attributes {kiln.kernel} {
    // expected-error @below {{'math.atan' on 'f64' is not supported by the AMD backend yet (it would need ocml)}}
    %t = math.atan %x : f64
    %v = vector.broadcast %t : f64 to vector<1xf64>
    kiln_gpu.store %p, %v alignment 8 : vector<1xf64>
    return
  }
}
