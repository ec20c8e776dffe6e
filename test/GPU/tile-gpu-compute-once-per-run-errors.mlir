// RUN: kiln-opt %s --split-input-file --tile-gpu-compute-once-per-run --verify-diagnostics

// Marks that do not fit their op are errors (the per-thread conversion
// never makes one; a hand-written or damaged form gets a located error).
func.func @wrong_length(%x: vector<4xi32>) -> vector<4xi32> {
  // expected-error @below {{'arith.addi' op has a kiln_gpu.equal_runs mark of 2 registers; it needs one result, a one-dimensional vector of as many}}
  %s = arith.addi %x, %x {kiln_gpu.equal_runs = array<i32: 0, 0>} : vector<4xi32>
  return %s : vector<4xi32>
}

// -----

func.func @scalar_operand(%x: i32) -> i32 {
  // expected-error @below {{'arith.addi' op has a kiln_gpu.equal_runs mark of 1 registers; it needs one result, a one-dimensional vector of as many}}
  %s = arith.addi %x, %x {kiln_gpu.equal_runs = array<i32: 0>} : i32
  return %s : i32
}

// -----

func.func @out_of_order(%x: vector<4xi32>) -> vector<4xi32> {
  // expected-error @below {{'arith.addi' op has a kiln_gpu.equal_runs mark whose groups are not numbered in order of first appearance (register 0 is in group 1)}}
  %s = arith.addi %x, %x {kiln_gpu.equal_runs = array<i32: 1, 1, 0, 0>} : vector<4xi32>
  return %s : vector<4xi32>
}

// -----

func.func @not_an_array(%x: vector<2xi32>) -> vector<2xi32> {
  // expected-error @below {{'arith.addi' op has a kiln_gpu.equal_runs mark that is not an array of i32}}
  %s = arith.addi %x, %x {kiln_gpu.equal_runs = 3 : i32} : vector<2xi32>
  return %s : vector<2xi32>
}
