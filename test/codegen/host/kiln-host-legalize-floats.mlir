// RUN: kiln-opt %s -kiln-host-legalize-floats | FileCheck %s

// f16 <-> f32 conversions become bit manipulation: no extf/truncf on f16
// remains (they would be libgcc calls on the portable baseline); maximumf and
// minimumf become LLVM's signed-zero-correct intrinsics.

// CHECK-LABEL: func.func @widen(
// CHECK-NOT: arith.extf
// CHECK: arith.bitcast %{{.*}} : f16 to i16
// CHECK: arith.extui
// CHECK: arith.select
// CHECK: arith.bitcast %{{.*}} : i32 to f32
func.func @widen(%h: f16) -> f32 {
  %f = arith.extf %h : f16 to f32
  return %f : f32
}

// CHECK-LABEL: func.func @narrow(
// Normal results are rebiased by (15 - 127) << 23, plus the rounding bias
// 0xfff: -939524096 + 4095 as an i32 (computed on unsigned values in the
// compiler: a left shift of the negative -112 would be undefined; the
// sanitizer build runs this test under UBSan, docs/testing.md).
// CHECK-DAG: arith.constant -939520001 : i32
// CHECK-NOT: arith.truncf
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK: arith.bitcast %{{.*}} : i16 to f16
func.func @narrow(%f: f32) -> f16 {
  %h = arith.truncf %f : f32 to f16
  return %h : f16
}

// Integer conversions go through f32.
// CHECK-LABEL: func.func @ints(
// CHECK: arith.sitofp %{{.*}} : i32 to f32
// CHECK-NOT: arith.truncf
// CHECK: arith.fptosi %{{.*}} : f32 to i32
func.func @ints(%i: i32, %h: f16) -> (f16, i32) {
  %a = arith.sitofp %i : i32 to f16
  %b = arith.fptosi %h : f16 to i32
  return %a, %b : f16, i32
}

// CHECK-LABEL: func.func @minmax(
// CHECK: llvm.intr.maximum(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: llvm.intr.minimum(%{{.*}}, %{{.*}}) : (f64, f64) -> f64
func.func @minmax(%a: f32, %b: f32, %c: f64, %d: f64) -> (f32, f64) {
  %x = arith.maximumf %a, %b : f32
  %y = arith.minimumf %c, %d : f64
  return %x, %y : f32, f64
}

// f64 -> bf16 and f64 -> f16 (scalars and vectors: the emulator backend
// uses the same pattern) round once: to f32 rounded to odd (truncated, the
// last bit set when inexact, infinities kept), then to the narrow type,
// which arith-expand (bf16) or the f16 expansion above rounds to nearest
// even. No f64 -> bf16 truncf remains.
// CHECK-LABEL: func.func @from_f64(
// CHECK-NOT: arith.truncf %{{.*}} : f64 to bf16
// CHECK: %[[T:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK: %[[BACK:.*]] = arith.extf %[[T]] : f32 to f64
// CHECK: arith.cmpf une, %[[BACK]], %{{.*}} : f64
// CHECK: arith.subi
// CHECK: arith.ori
// CHECK: arith.cmpi eq, %{{.*}}, %c2139095040_i32 : i32
// CHECK: %[[ODD:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.truncf %[[ODD]] : f32 to bf16
// CHECK: arith.truncf %{{.*}} : vector<4xf64> to vector<4xf32>
// CHECK: arith.ori %{{.*}} : vector<4xi32>
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.cmpf une
// CHECK-NOT: arith.truncf %{{.*}} : f64 to f16
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK: arith.bitcast %{{.*}} : i16 to f16
func.func @from_f64(%d: f64, %v: vector<4xf64>) -> (bf16, vector<4xbf16>, f16) {
  %b = arith.truncf %d : f64 to bf16
  %w = arith.truncf %v : vector<4xf64> to vector<4xbf16>
  %h = arith.truncf %d : f64 to f16
  return %b, %w, %h : bf16, vector<4xbf16>, f16
}

// bf16 -> f64 (upstream's bf16 expansion widens to f32 only): through f32.
// CHECK-LABEL: func.func @bf16_to_f64(
// CHECK: %[[W:.*]] = arith.extf %{{.*}} : vector<4xbf16> to vector<4xf32>
// CHECK: arith.extf %[[W]] : vector<4xf32> to vector<4xf64>
func.func @bf16_to_f64(%v: vector<4xbf16>) -> vector<4xf64> {
  %w = arith.extf %v : vector<4xbf16> to vector<4xf64>
  return %w : vector<4xf64>
}
