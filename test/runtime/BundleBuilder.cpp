//===- BundleBuilder.cpp - Test bundles for the runtime -------------------===//

#include "BundleBuilder.h"

#include "llvm/Object/OffloadBinary.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdio>
#include <cstdlib>

using nlohmann::json;

namespace kiln::test {

std::string hostTriple() {
#if defined(__aarch64__)
  return "aarch64-unknown-linux-gnu";
#else
  return "x86_64-unknown-linux-gnu";
#endif
}

std::string hostArch() {
#if defined(__aarch64__)
  return "generic";
#else
  return "x86-64-v2";
#endif
}

/// The images every variant gets.
static std::vector<TestImage> imagesOf(const BundleSpec &Spec) {
  if (!Spec.Images.empty())
    return Spec.Images;
  TestImage I;
  I.Triple = Spec.Triple;
  I.Arch = Spec.Arch;
  I.Bytes = Spec.ImageBytes;
  return {I};
}

static std::string entryOf(const TestImage &I, const TestKernel &K, size_t V) {
  return I.Entry.empty() ? K.Name + "_v" + std::to_string(V) : I.Entry;
}

json manifestJson(const BundleSpec &Spec) {
  json Kernels = json::array();
  for (const TestKernel &K : Spec.Kernels) {
    json Params = json::array();
    for (const TestParam &P : K.Params) {
      json J = {{"name", P.Name}, {"type", P.Type}};
      if (P.Div)
        J["div"] = P.Div;
      if (P.Align)
        J["align"] = P.Align;
      Params.push_back(J);
    }
    json Variants = json::array();
    for (size_t V = 0; V < K.Variants.size(); ++V) {
      json Const = json::object();
      for (size_t C = 0; C < K.ConstParams.size(); ++C)
        Const[K.ConstParams[C]] = K.Variants[V][C];
      json Images = json::array();
      for (const TestImage &I : imagesOf(Spec)) {
        std::string Target = I.Target;
        if (Target.empty())
          Target = I.Triple.find("-linux") != std::string::npos ? "host"
                                                                 : I.Arch;
        json Image = {{"target", Target},
                      {"triple", I.Triple},
                      {"arch", I.Arch},
                      {"entry", entryOf(I, K, V)},
                      {"resources", I.Resources}};
        if (!I.Requires.is_null())
          Image["requires"] = I.Requires;
        if (!I.Assumes.is_null())
          Image["assumes"] = I.Assumes;
        if (!I.TensorMaps.is_null())
          Image["tensor_maps"] = I.TensorMaps;
        Images.push_back(Image);
      }
      Variants.push_back(
          {{"index", V}, {"const", Const}, {"images", Images}});
    }
    Kernels.push_back({{"name", K.Name},
                       {"params", Params},
                       {"const_params", K.ConstParams},
                       {"grid", K.Grid},
                       {"key", K.Key},
                       {"launch_conditions", K.Conditions},
                       {"variants", Variants}});
  }
  return {{"format", "kiln-bundle"},
          {"version", Spec.JsonVersion},
          {"source", "test.tile"},
          {"host_cpu", Spec.Arch},
          {"kernels", Kernels}};
}

std::string offloadBinary(uint16_t ImageKind, uint16_t OffloadKind,
                          const std::map<std::string, std::string> &Strings,
                          const std::string &Image) {
  llvm::object::OffloadBinary::OffloadingImage I;
  I.TheImageKind = static_cast<llvm::object::ImageKind>(ImageKind);
  I.TheOffloadKind = static_cast<llvm::object::OffloadKind>(OffloadKind);
  I.Flags = 0;
  for (const auto &[Key, Value] : Strings)
    I.StringData[Key] = Value;
  I.Image = llvm::MemoryBuffer::getMemBuffer(Image, "", false);
  llvm::SmallString<0> Binary = llvm::object::OffloadBinary::write(I);
  std::string Out(Binary.data(), Binary.size());
  Out.resize(llvm::alignTo(Out.size(), 8), '\0');
  return Out;
}

std::string buildBundle(const BundleSpec &Spec, const std::string *Manifest) {
  std::string Json = Manifest ? *Manifest : manifestJson(Spec).dump();
  std::string Out = offloadBinary(
      llvm::object::IMG_None, llvm::object::OFK_None,
      {{"kiln.format", "kiln-bundle"},
       {"kiln.format-version", Spec.FormatVersion}},
      Json);
  std::vector<TestImage> Images = imagesOf(Spec);
  for (const TestKernel &K : Spec.Kernels)
    for (size_t V = 0; V < K.Variants.size(); ++V)
      for (const TestImage &I : Images)
        Out += offloadBinary(I.ImageKind, I.OffloadKind,
                             {{"arch", I.Arch},
                              {"kiln.entry", entryOf(I, K, V)},
                              {"kiln.format-version", Spec.FormatVersion},
                              {"kiln.kernel", K.Name},
                              {"kiln.variant", std::to_string(V)},
                              {"triple", I.Triple}},
                             I.Bytes.empty() ? testKernelsBytes() : I.Bytes);
  return Out;
}

std::string readFileBytes(const std::string &Path) {
  std::string Out;
  std::FILE *F = std::fopen(Path.c_str(), "rb");
  if (!F)
    return Out;
  char Buf[1 << 16];
  size_t N;
  while ((N = std::fread(Buf, 1, sizeof(Buf), F)) > 0)
    Out.append(Buf, N);
  std::fclose(F);
  return Out;
}

bool writeFileBytes(const std::string &Path, const std::string &Bytes) {
  std::FILE *F = std::fopen(Path.c_str(), "wb");
  if (!F)
    return false;
  bool Ok = std::fwrite(Bytes.data(), 1, Bytes.size(), F) == Bytes.size();
  return std::fclose(F) == 0 && Ok;
}

std::string emuBundle(const std::string &Name, std::vector<TestParam> Params,
                      const EmuBundleOptions &O) {
  TestKernel K{Name, std::move(Params), {}, {{}}, {O.Grid}, {}, {}};
  BundleSpec Spec({K});
  TestImage I;
  I.Bytes = readFileBytes(KILN_EMU_TEST_KERNELS);
  I.Arch = "emu:" + O.Arch;
  I.Target = "emu:" + O.Arch;
  I.Entry = Name;
  I.Resources = {{"threads", 64},
                 {"warp_size", 32},
                 {"shared_bytes", O.SharedBytes},
                 {"emulated", true}};
  if (O.Resources.is_object())
    I.Resources.update(O.Resources);
  I.Requires = {{"emu", O.Arch}, {"cpu", "x86-64-v2"}};
  I.TensorMaps = O.TensorMaps;
  if (!O.TensorMaps.is_null()) {
    Spec.FormatVersion = "4";
    Spec.JsonVersion = 4;
  }
  Spec.Images = {I};
  return buildBundle(Spec);
}

uint32_t exchangeValue(uint32_t I) {
  uint32_t T = I % 64, Program = I / 64;
  return (T + 1) % 64 + ((T % 32) ^ 1) + 1000 * Program;
}

const std::string &testKernelsBytes() {
  static const std::string Bytes = [] {
    std::string B = readFileBytes(KILN_TEST_KERNELS);
    if (B.empty()) {
      std::fprintf(stderr, "cannot read the test kernels '%s'\n",
                   KILN_TEST_KERNELS);
      std::abort();
    }
    return B;
  }();
  return Bytes;
}

nlohmann::json vaddTensorMaps() {
  nlohmann::json Maps = nlohmann::json::array();
  for (const char *P : {"x", "y"})
    Maps.push_back({{"param", P},
                    {"type", "f32"},
                    {"sizes", {"n"}},
                    {"strides", {"1"}},
                    {"box", {4}},
                    {"swizzle", 0}});
  return Maps;
}

TestKernel vaddKernel() {
  return {"vadd",
          {{"x", "*f32", 0, 16}, {"y", "*f32", 0, 16}, {"z", "*f32", 0, 16},
           {"n", "i32"}},
          {"BLOCK", "warps", "stages"},
          {{4, 4, 2}, {8, 4, 2}, {16, 4, 2}},
          {"(cdiv n BLOCK)"},
          {"n"},
          {}};
}

TestKernel countKernel() {
  return {"count",
          {{"hits", "*i32"}, {"total", "*i64"}, {"gx", "i32"}, {"gy", "i32"},
           {"gz", "i32"}},
          {"warps", "stages"},
          {{4, 2}},
          {"gx", "gy", "gz"},
          {},
          {}};
}

TestKernel printerKernel() {
  return {"printer", {{"x", "*f32"}, {"n", "i32"}}, {}, {{}}, {"n"}, {}, {}};
}

TestKernel trapperKernel() {
  return {"trapper", {{"n", "i32"}, {"done", "*i64"}, {"programs", "i32"}},
          {}, {{}}, {"programs"}, {}, {}};
}

TestKernel bcopyKernel() {
  return {"bcopy", {{"x", "*bf16"}, {"y", "*bf16"}, {"n", "i32"}}, {}, {{}},
          {"n"}, {}, {}};
}

TestKernel scaleKernel() {
  return {"scale", {{"x", "*f64"}, {"s", "f64"}, {"n", "i64"}}, {}, {{}},
          {"n"}, {}, {}};
}

TestKernel spinKernel(unsigned Variants) {
  TestKernel K{"spin",
               {{"acc", "*f32"}, {"n", "i32"}, {"micros", "i32"}},
               {"DELAY", "warps", "stages"},
               {},
               {"1"},
               {"n"},
               {}};
  const int64_t Delays[] = {6, 1, 3, 10, 12};
  for (unsigned V = 0; V < Variants && V < 5; ++V)
    K.Variants.push_back({Delays[V], 4, 2});
  return K;
}

TestKernel tagKernel(std::vector<std::string> Conditions) {
  return {"tag",
          {{"out", "*i32"},
           {"cols", "i32"},
           {"stride", "i32", 8, 0},
           {"p", "*f32", 0, 16},
           {"u", "u32", 4, 0}},
          {"BLOCK", "warps", "stages"},
          {{256, 4, 2}, {512, 4, 2}, {1024, 4, 2}, {1024, 8, 2}},
          {"1"},
          {"cols"},
          std::move(Conditions)};
}

TestKernel scalarsKernel() {
  TestKernel K{"scalars", {{"out", "*u8"}}, {}, {{}}, {"1"}, {}, {}};
  for (const char *T : {"bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32",
                        "u64", "f16", "bf16", "f32", "f64"})
    K.Params.push_back({std::string("v_") + T, T});
  return K;
}

} // namespace kiln::test
