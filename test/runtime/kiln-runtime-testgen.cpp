//===- kiln-runtime-testgen.cpp - Inputs for the kiln-run lit tests -------===//
//
// Test-only (no NumPy on the test machines, no host codegen yet):
//
//   kiln-runtime-testgen bundle KIND OUT
//       KIND: basic (vadd, tag, bcopy, scale, printer, trapper, scalars),
//       tiny (the same with 4-byte fake code objects), gpu-only, format5,
//       container2, truncated, corrupt-json, cuda (vadd and trapper for the
//       fake CUDA driver, FakeCuda.h), cuda-tma (vadd with a fast path that
//       takes tensor maps of x and y, and a generic image), cuda-garbage (the
//       same as cuda with code objects
//       the driver refuses), hip and hip-garbage (the same for the fake
//       HIP), cuda-host (vadd, scale and bcopy with both fake
//       CUDA code objects and host ones: on the fake driver vadd adds, scale
//       and bcopy do nothing)
//   kiln-runtime-testgen npy OUT DESCR SHAPE VALUES [--fortran]
//       writes a .npy file with DESCR ('<f4', '>f4', '|u1', ...) verbatim,
//       SHAPE like 2,3 (or "" for a 0-d array), VALUES comma-separated
//       (or "zeros")
//   kiln-runtime-testgen dump FILE
//       prints "dtype (shape) [values]"
//
//===----------------------------------------------------------------------===//

#include "BundleBuilder.h"
#include "kiln/npy.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace kiln::test;
using namespace kiln::rt;

namespace {

int fail(const std::string &Message) {
  std::fprintf(stderr, "kiln-runtime-testgen: %s\n", Message.c_str());
  return 1;
}

std::vector<std::string> split(const std::string &Text) {
  std::vector<std::string> Out;
  size_t Start = 0;
  while (Start <= Text.size() && !Text.empty()) {
    size_t Comma = Text.find(',', Start);
    if (Comma == std::string::npos)
      Comma = Text.size();
    Out.push_back(Text.substr(Start, Comma - Start));
    Start = Comma + 1;
  }
  return Out;
}

int bundle(const std::string &Kind, const std::string &Out) {
  BundleSpec Spec{{vaddKernel(), tagKernel({"(>= BLOCK cols)"}), bcopyKernel(),
                   scaleKernel(), printerKernel(), trapperKernel(),
                   scalarsKernel()}};
  std::string Bytes;
  if (Kind == "basic") {
    Bytes = buildBundle(Spec);
  } else if (Kind == "tiny") {
    // Small fake code objects: a seed for the bundle fuzzer.
    Spec.ImageBytes = "\x7f" "ELF";
    Bytes = buildBundle(Spec);
  } else if (Kind == "cuda" || Kind == "cuda-garbage" || Kind == "hip" ||
             Kind == "hip-garbage") {
    // Code objects for the fake CUDA driver or the fake HIP (FakeCuda.h):
    // vadd adds, trapper traps; 256 threads per block. HIP's are "ELF"
    // files for gfx942 (4 waves of 64), with 1 KiB of dynamic LDS.
    bool Hip = Kind.rfind("hip", 0) == 0;
    BundleSpec Gpu{{vaddKernel(), trapperKernel()}};
    TestImage I;
    I.Triple = Hip ? "amdgcn-amd-amdhsa" : "nvptx64-nvidia-cuda";
    I.Arch = I.Target = Hip ? "gfx942" : "sm_90";
    I.ImageKind = Hip ? 1 : 3;   // IMG_Object, IMG_Cubin
    I.OffloadKind = Hip ? 3 : 2; // OFK_HIP, OFK_Cuda
    std::string Fake = "KILNFAKE\n"
                       "vadd_v0 params=4 action=vadd\n"
                       "vadd_v1 params=4 action=vadd\n"
                       "vadd_v2 params=4 action=vadd\n"
                       "trapper_v0 params=3 action=trap\n"
                       "END\n";
    if (Kind == "cuda-garbage")
      I.Bytes = "garbage, not a cubin";
    else if (Kind == "hip-garbage")
      I.Bytes = "\x7f" "ELF, but not for this GPU";
    else
      I.Bytes = Hip ? "\x7f" "ELF" + Fake : Fake;
    I.Resources = {{"threads", 256}, {"shared_bytes", Hip ? 1024 : 0}};
    if (Hip)
      I.Requires = {{"gfx", "gfx942"}, {"wave_size", 64}, {"code_object", 5}};
    Gpu.Images = {I};
    Bytes = buildBundle(Gpu);
  } else if (Kind == "cuda-tma") {
    // vadd for the fake CUDA driver: a fast path that takes tensor maps of
    // x and y (f32 [n], boxes of 4), and the generic image (format 4).
    BundleSpec Gpu{{vaddKernel()}};
    TestImage Fast, Generic;
    for (TestImage *I : {&Fast, &Generic}) {
      I->Triple = "nvptx64-nvidia-cuda";
      I->Arch = I->Target = "sm_90";
      I->ImageKind = 3;   // IMG_Cubin
      I->OffloadKind = 2; // OFK_Cuda
      I->Resources = {{"threads", 128}};
    }
    std::string Fake = "KILNFAKE\n";
    for (int V = 0; V < 3; ++V)
      Fake += "vadd_v" + std::to_string(V) + " params=4 tmaps=2 action=vadd\n";
    Fast.Bytes = Fake + "END\n";
    Generic.Bytes = "KILNFAKE\n"
                    "vadd_v0 params=4 action=vadd\n"
                    "vadd_v1 params=4 action=vadd\n"
                    "vadd_v2 params=4 action=vadd\n"
                    "END\n";
    Fast.TensorMaps = vaddTensorMaps();
    Gpu.Images = {Fast, Generic};
    Gpu.FormatVersion = "4";
    Gpu.JsonVersion = 4;
    Bytes = buildBundle(Gpu);
  } else if (Kind == "cuda-host") {
    // For kiln-run --check: the fake driver runs vadd (z = x + y, as the
    // host does) and leaves the buffers of scale and bcopy as they were,
    // so that their results differ from the host's.
    BundleSpec Both{{vaddKernel(), scaleKernel(), bcopyKernel()}};
    TestImage Gpu;
    Gpu.Triple = "nvptx64-nvidia-cuda";
    Gpu.Arch = Gpu.Target = "sm_90";
    Gpu.ImageKind = 3;   // IMG_Cubin
    Gpu.OffloadKind = 2; // OFK_Cuda
    Gpu.Bytes = "KILNFAKE\n"
                "vadd_v0 params=4 action=vadd\n"
                "vadd_v1 params=4 action=vadd\n"
                "vadd_v2 params=4 action=vadd\n"
                "scale_v0 params=3\n"
                "bcopy_v0 params=3\n"
                "END\n";
    Gpu.Resources = {{"threads", 256}, {"shared_bytes", 0}};
    Both.Images = {Gpu, TestImage()};
    Bytes = buildBundle(Both);
  } else if (Kind == "gpu-only") {
    Spec.Triple = "nvptx64-nvidia-cuda";
    Spec.Arch = "sm_90a";
    Bytes = buildBundle(Spec);
  } else if (Kind == "format5") {
    Spec.FormatVersion = "5";
    Bytes = buildBundle(Spec);
  } else if (Kind == "container2") {
    Bytes = buildBundle(Spec);
    Bytes[4] = 2;
  } else if (Kind == "truncated") {
    Bytes = buildBundle(Spec);
    Bytes.resize(Bytes.size() / 2);
  } else if (Kind == "corrupt-json") {
    std::string Json = "{\"format\": \"kiln-bundle\", \"version\": 1, [";
    Bytes = buildBundle(Spec, &Json);
  } else {
    return fail("unknown bundle kind '" + Kind + "'");
  }
  return writeFileBytes(Out, Bytes) ? 0 : fail("cannot write '" + Out + "'");
}

int npy(const std::string &Out, const std::string &Descr,
        const std::string &ShapeText, const std::string &ValuesText,
        bool Fortran) {
  if (Descr.size() < 3)
    return fail("bad descr");
  char Order = Descr[0], Kind = Descr[1];
  unsigned Size = unsigned(std::atoi(Descr.c_str() + 2));
  std::string Shape = "(";
  std::vector<std::string> Dims = split(ShapeText);
  for (size_t I = 0; I < Dims.size(); ++I)
    Shape += (I ? ", " : "") + Dims[I];
  Shape += Dims.size() == 1 ? ",)" : ")";
  std::vector<std::string> Values = split(ValuesText);
  if (ValuesText == "zeros") {
    size_t N = 1;
    for (const std::string &D : Dims)
      N *= size_t(std::atoll(D.c_str()));
    Values.assign(N, "0");
  }
  std::string Data;
  for (const std::string &V : Values) {
    uint64_t Bits = 0;
    if (Kind == 'f') {
      double D = std::strtod(V.c_str(), nullptr);
      if (Size == 2) {
        Bits = floatToHalf(float(D));
      } else if (Size == 4) {
        float F = float(D);
        uint32_t U;
        std::memcpy(&U, &F, 4);
        Bits = U;
      } else {
        std::memcpy(&Bits, &D, 8);
      }
    } else {
      Bits = uint64_t(std::strtoll(V.c_str(), nullptr, 0));
    }
    for (unsigned B = 0; B < Size; ++B) {
      unsigned Shift = Order == '>' ? 8 * (Size - 1 - B) : 8 * B;
      Data += char(Bits >> Shift);
    }
  }
  std::string Dict = "{'descr': '" + Descr + "', 'fortran_order': " +
                     (Fortran ? "True" : "False") + ", 'shape': " + Shape +
                     ", }\n";
  std::string File = "\x93NUMPY\x01";
  File += '\0';
  File += char(Dict.size() & 0xff);
  File += char(Dict.size() >> 8);
  return writeFileBytes(Out, File + Dict + Data) ? 0
                                                 : fail("cannot write " + Out);
}

int dump(const std::string &Path) {
  auto A = readNpyFile(Path);
  if (!A)
    return fail(A.error().message());
  std::string Shape = "(";
  for (size_t I = 0; I < A->Shape.size(); ++I)
    Shape += (I ? ", " : "") + std::to_string(A->Shape[I]);
  Shape += A->Shape.size() == 1 ? ",)" : ")";
  std::printf("%s %s [", npyTypeName(A->Type).c_str(), Shape.c_str());
  size_t Elem = typeSize(A->Type);
  for (uint64_t I = 0; I < A->numElements(); ++I) {
    const uint8_t *P = A->Data.data() + I * Elem;
    uint64_t Bits = 0;
    std::memcpy(&Bits, P, Elem);
    std::printf("%s", I ? ", " : "");
    Arg V = Arg::scalarBits(A->Type, Bits);
    std::string Text = V.str();
    std::printf("%s", Text.substr(Text.find(' ') + 1).c_str());
  }
  std::printf("]\n");
  return 0;
}

} // namespace

int main(int Argc, char **Argv) {
  std::vector<std::string> Args(Argv + 1, Argv + Argc);
  if (Args.size() == 3 && Args[0] == "bundle")
    return bundle(Args[1], Args[2]);
  if ((Args.size() == 5 || Args.size() == 6) && Args[0] == "npy")
    return npy(Args[1], Args[2], Args[3], Args[4],
               Args.size() == 6 && Args[5] == "--fortran");
  if (Args.size() == 2 && Args[0] == "dump")
    return dump(Args[1]);
  return fail("usage: bundle KIND OUT | npy OUT DESCR SHAPE VALUES "
              "[--fortran] | dump FILE");
}
