//===- BundleBuilder.h - Test bundles for the runtime -----------*- C++ -*-===//
//
// Test-only: writes .kpack bundles as the compiler does (docs/bundle.md:
// llvm::object::OffloadBinary::write for each binary, 8-byte padding), from
// a short description of kernels whose host images are the hand-written
// kernels of TestKernels.c. Links LLVM; the runtime under test does not.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TEST_RUNTIME_BUNDLEBUILDER_H
#define KILN_TEST_RUNTIME_BUNDLEBUILDER_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kiln::test {

struct TestParam {
  std::string Name;
  std::string Type; ///< "*f32", "i32", ...
  int64_t Div = 0;
  int64_t Align = 0;
};

struct TestKernel {
  std::string Name;
  std::vector<TestParam> Params;
  std::vector<std::string> ConstParams;
  /// One entry per variant (index = position): its const values, in
  /// ConstParams order. Its entry is "<Name>_v<index>".
  std::vector<std::vector<int64_t>> Variants;
  std::vector<std::string> Grid;
  std::vector<std::string> Key;
  std::vector<std::string> Conditions;
};

/// The triple and arch of this machine's host images.
std::string hostTriple();
std::string hostArch();

/// One code object that every variant gets (BundleSpec::Images).
struct TestImage {
  std::string Triple = hostTriple();
  std::string Arch = hostArch();
  /// The manifest's target; "" gives "host" for host triples, else Arch.
  std::string Target;
  uint16_t ImageKind = 1;   ///< llvm::object::IMG_Object
  uint16_t OffloadKind = 0; ///< llvm::object::OFK_None
  /// The code object ("" gives the test kernels).
  std::string Bytes;
  /// The entry; "" gives "<kernel>_v<index>".
  std::string Entry;
  nlohmann::json Resources = nlohmann::json::object();
  nlohmann::json Requires; ///< null: no "requires"
  nlohmann::json Assumes;  ///< null: no "assumes"
  /// null: no "tensor_maps" (they need BundleSpec's versions at 4).
  nlohmann::json TensorMaps;
};

struct BundleSpec {
  BundleSpec(std::vector<TestKernel> Kernels = {})
      : Kernels(std::move(Kernels)) {}

  std::vector<TestKernel> Kernels;
  /// The images of every variant, in manifest order; when empty, one image
  /// made of ImageBytes, Triple and Arch.
  std::vector<TestImage> Images;
  /// The code object of every image (default: the test kernels).
  std::string ImageBytes;
  std::string Triple = hostTriple();
  std::string Arch = hostArch();
  /// kiln.format-version of the manifest binary and of the images.
  std::string FormatVersion = "3";
  int64_t JsonVersion = 3;
};

/// The manifest JSON of a spec.
nlohmann::json manifestJson(const BundleSpec &Spec);
/// The whole bundle; `Manifest` replaces the generated JSON text if given.
std::string buildBundle(const BundleSpec &Spec,
                        const std::string *Manifest = nullptr);

/// One offloading binary, padded to 8 bytes, as LLVM writes it.
std::string offloadBinary(uint16_t ImageKind, uint16_t OffloadKind,
                          const std::map<std::string, std::string> &Strings,
                          const std::string &Image);

/// The bytes of the shared object built from TestKernels.c.
const std::string &testKernelsBytes();

std::string readFileBytes(const std::string &Path);
bool writeFileBytes(const std::string &Path, const std::string &Bytes);

/// Kernels used by many tests (signatures in TestKernels.c).
TestKernel vaddKernel();   ///< BLOCK = 4, 8, 16; grid (cdiv n BLOCK)
/// The tensor maps of x and y for a vadd image (f32, sizes [n], box [4]).
nlohmann::json vaddTensorMaps();
TestKernel countKernel();  ///< grid (gx, gy, gz)
TestKernel printerKernel();
TestKernel trapperKernel();
TestKernel bcopyKernel();
TestKernel scaleKernel();
/// tag(out: *i32, cols: i32, stride: i32 @div(8), p: *f32 @align(16),
/// u: u32 @div(4)): BLOCK = 256, 512, 1024, 1024 (warps 8); grid (1).
TestKernel tagKernel(std::vector<std::string> Conditions = {});
/// spin<DELAY>(acc: *f32, n: i32, micros: i32), key (n): the first
/// `Variants` of DELAY = 6, 1, 3, 10, 12 (spin_v1 is the fastest; spin_v4
/// has no code, its load fails); grid (1).
TestKernel spinKernel(unsigned Variants = 3);
/// scalars(out: *u8, v_bool: bool, v_i8: i8, ..., v_f64: f64); grid (1).
TestKernel scalarsKernel();

/// What emuBundle makes.
struct EmuBundleOptions {
  std::string Arch = "sm_80";
  int64_t SharedBytes = 256;
  std::string Grid = "2";
  /// The image's "tensor_maps" (then format version 4); null: none.
  nlohmann::json TensorMaps;
  nlohmann::json Resources; ///< more resources (check_bounds)
};
/// A bundle of one emulated kernel of EmuTestKernels.c (entry = its name)
/// for emu:sm_80: 64 threads in warps of 32, 256 bytes of shared memory,
/// grid (2), unless `Options` says otherwise.
std::string emuBundle(const std::string &Name, std::vector<TestParam> Params,
                      const EmuBundleOptions &Options = {});
/// What EmuTestKernels.c's `exchange(out: *u32)` writes at out[I] (2
/// programs of 64 threads: barriers, then an xor shuffle).
uint32_t exchangeValue(uint32_t I);

} // namespace kiln::test

#endif // KILN_TEST_RUNTIME_BUNDLEBUILDER_H
