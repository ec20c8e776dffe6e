// RUN: kiln-opt %s -tile-expand-fp8 | FileCheck %s
// RUN: kiln-opt %s -tile-expand-fp8=as-i8=true | FileCheck %s --check-prefix=I8

// f8E4M3FN -> f32: magnitude moved into place and rebiased (127 - 7 = 120,
// 120 << 23 = 1006632960), subnormals as mantissa * 2^-9, 0x7f a NaN.
// CHECK-LABEL: func.func @ext
// CHECK-DAG: arith.constant 1006632960 : i32
// CHECK-DAG: arith.constant 0.001953125 : f32
// CHECK-DAG: arith.constant 2143289344 : i32
// CHECK: arith.bitcast %{{.*}} : f8E4M3FN to i8
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: arith.uitofp
// CHECK-NOT: arith.extf
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @ext(%x: f8E4M3FN) -> f16 {
  %y = arith.extf %x : f8E4M3FN to f16
  return %y : f16
}

// f32 -> f8E5M2 on vectors: round at bit 21 (0xfffff + the kept LSB),
// below 2^-14 through the adder (2^23 magic), saturate at 0x7b, infinity
// 0x7c, NaN 0x7f.
// CHECK-LABEL: func.func @trunc
// CHECK-DAG: arith.constant dense<1048575> : vector<4xi32>
// CHECK-DAG: arith.constant dense<0x4B000000> : vector<4xf32>
// CHECK-DAG: arith.constant dense<123> : vector<4xi32>
// CHECK-DAG: arith.constant dense<124> : vector<4xi32>
// CHECK-DAG: arith.constant dense<127> : vector<4xi32>
// CHECK: arith.bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// CHECK: arith.minui
// CHECK: arith.trunci %{{.*}} : vector<4xi32> to vector<4xi8>
// CHECK: arith.bitcast %{{.*}} : vector<4xi8> to vector<4xf8E5M2>
func.func @trunc(%x: vector<4xf32>) -> vector<4xf8E5M2> {
  %y = arith.truncf %x : vector<4xf32> to vector<4xf8E5M2>
  return %y : vector<4xf8E5M2>
}

// f64 rounds from its own bits (i64 arithmetic), f16 widens to f32 first.
// CHECK-LABEL: func.func @from_wide
// CHECK: arith.bitcast %{{.*}} : f64 to i64
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.bitcast %{{.*}} : f32 to i32
func.func @from_wide(%x: f64, %h: f16) -> (f8E4M3FN, f8E4M3FN) {
  %a = arith.truncf %x : f64 to f8E4M3FN
  %b = arith.truncf %h : f16 to f8E4M3FN
  return %a, %b : f8E4M3FN, f8E4M3FN
}

// With as-i8, no fp8 type is left: values, arguments, results and
// constants are i8, the bitcasts between them gone.
// I8-LABEL: func.func @moved(%{{.*}}: vector<4xi8>, %{{.*}}: i1) -> vector<4xi8>
// I8: arith.constant dense<56> : vector<4xi8>
// I8: arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<4xi8>
// I8-NOT: f8E4M3FN
func.func @moved(%x: vector<4xf8E4M3FN>, %c: i1) -> vector<4xf8E4M3FN> {
  %one = arith.constant dense<1.0> : vector<4xf8E4M3FN>
  %y = arith.select %c, %x, %one : vector<4xf8E4M3FN>
  return %y : vector<4xf8E4M3FN>
}
