//===- HostCpu.cpp - Which host code objects this CPU runs ----------------===//
//
// The CPU's features are detected without LLVM, the way
// llvm::sys::getHostCPUFeatures does it (so that an image compiled for
// `native` on a machine runs there): cpuid and xgetbv on x86-64 (a feature
// whose register state the OS does not save counts as absent), getauxval's
// hardware capabilities on aarch64. An image that records what it
// requires (docs/bundle.md, "requires") runs if the CPU has every feature
// it lists, and those of its CPU when that is an x86-64-vN level; an image
// without requires is matched by its arch name as before.
//
//===----------------------------------------------------------------------===//

#include "HostDevice.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

using namespace kiln::rt;
using namespace kiln::rt::detail;

namespace {

/// Collects detected features; every name it is told about is "known".
class FeatureSet {
public:
  void set(const char *Name, bool On) {
    Known.insert(Name);
    if (On)
      Has.insert(Name);
  }
  std::set<std::string> Known, Has;
};

#if defined(__x86_64__)
struct CpuidRegs {
  unsigned A = 0, B = 0, C = 0, D = 0;
};

/// cpuid(Leaf, Sub); false if the leaf is above the CPU's maximum.
bool cpuid(unsigned Leaf, unsigned Sub, CpuidRegs &R) {
  return __get_cpuid_count(Leaf, Sub, &R.A, &R.B, &R.C, &R.D) != 0;
}

unsigned long long xgetbv0() {
  unsigned Eax, Edx;
  __asm__ volatile("xgetbv" : "=a"(Eax), "=d"(Edx) : "c"(0));
  return (static_cast<unsigned long long>(Edx) << 32) | Eax;
}

bool bit(unsigned Reg, unsigned Bit) { return (Reg >> Bit) & 1; }

void detect(FeatureSet &F) {
  CpuidRegs R;
  unsigned MaxLevel = __get_cpuid_max(0, nullptr);
  bool Leaf1 = MaxLevel >= 1 && cpuid(1, 0, R);
  unsigned C1 = Leaf1 ? R.C : 0, D1 = Leaf1 ? R.D : 0;
  F.set("x87", bit(D1, 0));
  F.set("cx8", bit(D1, 8));
  F.set("cmov", bit(D1, 15));
  F.set("mmx", bit(D1, 23));
  F.set("fxsr", bit(D1, 24));
  F.set("sse", bit(D1, 25));
  F.set("sse2", bit(D1, 26));
  F.set("sse3", bit(C1, 0));
  F.set("pclmul", bit(C1, 1));
  F.set("ssse3", bit(C1, 9));
  F.set("cx16", bit(C1, 13));
  F.set("sse4.1", bit(C1, 19));
  F.set("sse4.2", bit(C1, 20));
  F.set("crc32", bit(C1, 20));
  F.set("movbe", bit(C1, 22));
  F.set("popcnt", bit(C1, 23));
  F.set("aes", bit(C1, 25));
  F.set("rdrnd", bit(C1, 30));

  // AVX, AVX-512 and AMX need the OS to save their registers (XCR0).
  bool HasXSave = bit(C1, 27); // OSXSAVE
  unsigned long long Xcr0 = HasXSave ? xgetbv0() : 0;
  bool AvxSave = HasXSave && bit(C1, 28) && (Xcr0 & 0x6) == 0x6;
  bool Avx512Save = AvxSave && (Xcr0 & 0xe0) == 0xe0;
  bool AmxSave = HasXSave && (Xcr0 & 0x60000) == 0x60000;
  F.set("avx", AvxSave);
  F.set("fma", bit(C1, 12) && AvxSave);
  F.set("xsave", bit(C1, 26) && AvxSave);
  F.set("f16c", bit(C1, 29) && AvxSave);

  unsigned MaxExt = __get_cpuid_max(0x80000000, nullptr);
  bool Ext1 = MaxExt >= 0x80000001 && cpuid(0x80000001, 0, R);
  unsigned CE = Ext1 ? R.C : 0, DE = Ext1 ? R.D : 0;
  F.set("sahf", bit(CE, 0));
  F.set("lzcnt", bit(CE, 5));
  F.set("sse4a", bit(CE, 6));
  F.set("prfchw", bit(CE, 8));
  F.set("xop", bit(CE, 11) && AvxSave);
  F.set("lwp", bit(CE, 15));
  F.set("fma4", bit(CE, 16) && AvxSave);
  F.set("tbm", bit(CE, 21));
  F.set("mwaitx", bit(CE, 29));
  F.set("64bit", bit(DE, 29));
  bool Ext8 = MaxExt >= 0x80000008 && cpuid(0x80000008, 0, R);
  unsigned BE8 = Ext8 ? R.B : 0;
  F.set("clzero", bit(BE8, 0));
  F.set("rdpru", bit(BE8, 4));
  F.set("wbnoinvd", bit(BE8, 9));

  bool Leaf7 = MaxLevel >= 7 && cpuid(7, 0, R);
  unsigned A7 = Leaf7 ? R.A : 0, B7 = Leaf7 ? R.B : 0, C7 = Leaf7 ? R.C : 0,
           D7 = Leaf7 ? R.D : 0;
  F.set("fsgsbase", bit(B7, 0));
  F.set("sgx", bit(B7, 2));
  F.set("bmi", bit(B7, 3));
  F.set("avx2", bit(B7, 5) && AvxSave);
  F.set("bmi2", bit(B7, 8));
  F.set("invpcid", bit(B7, 10));
  F.set("rtm", bit(B7, 11));
  F.set("avx512f", bit(B7, 16) && Avx512Save);
  F.set("avx512dq", bit(B7, 17) && Avx512Save);
  F.set("rdseed", bit(B7, 18));
  F.set("adx", bit(B7, 19));
  F.set("avx512ifma", bit(B7, 21) && Avx512Save);
  F.set("clflushopt", bit(B7, 23));
  F.set("clwb", bit(B7, 24));
  F.set("avx512cd", bit(B7, 28) && Avx512Save);
  F.set("sha", bit(B7, 29));
  F.set("avx512bw", bit(B7, 30) && Avx512Save);
  F.set("avx512vl", bit(B7, 31) && Avx512Save);
  F.set("avx512vbmi", bit(C7, 1) && Avx512Save);
  F.set("pku", bit(C7, 4));
  F.set("waitpkg", bit(C7, 5));
  F.set("avx512vbmi2", bit(C7, 6) && Avx512Save);
  F.set("shstk", bit(C7, 7));
  F.set("gfni", bit(C7, 8));
  F.set("vaes", bit(C7, 9) && AvxSave);
  F.set("vpclmulqdq", bit(C7, 10) && AvxSave);
  F.set("avx512vnni", bit(C7, 11) && Avx512Save);
  F.set("avx512bitalg", bit(C7, 12) && Avx512Save);
  F.set("avx512vpopcntdq", bit(C7, 14) && Avx512Save);
  F.set("rdpid", bit(C7, 22));
  F.set("kl", bit(C7, 23));
  F.set("cldemote", bit(C7, 25));
  F.set("movdiri", bit(C7, 27));
  F.set("movdir64b", bit(C7, 28));
  F.set("enqcmd", bit(C7, 29));
  F.set("avx5124vnniw", bit(D7, 2) && Avx512Save);
  F.set("avx5124fmaps", bit(D7, 3) && Avx512Save);
  F.set("uintr", bit(D7, 5));
  F.set("avx512vp2intersect", bit(D7, 8) && Avx512Save);
  F.set("serialize", bit(D7, 14));
  F.set("tsxldtrk", bit(D7, 16));
  F.set("pconfig", bit(D7, 18));
  F.set("amx-bf16", bit(D7, 22) && AmxSave);
  F.set("avx512fp16", bit(D7, 23) && Avx512Save);
  F.set("amx-tile", bit(D7, 24) && AmxSave);
  F.set("amx-int8", bit(D7, 25) && AmxSave);

  // Leaf 7, subleaf 1 (subleaf 0's EAX is the highest subleaf).
  bool Leaf71 = Leaf7 && A7 >= 1 && cpuid(7, 1, R);
  unsigned A71 = Leaf71 ? R.A : 0, D71 = Leaf71 ? R.D : 0;
  F.set("sha512", bit(A71, 0));
  F.set("sm3", bit(A71, 1));
  F.set("sm4", bit(A71, 2));
  F.set("raoint", bit(A71, 3));
  F.set("avxvnni", bit(A71, 4) && AvxSave);
  F.set("avx512bf16", bit(A71, 5) && Avx512Save);
  F.set("cmpccxadd", bit(A71, 7));
  F.set("amx-fp16", bit(A71, 21) && AmxSave);
  F.set("hreset", bit(A71, 22));
  F.set("avxifma", bit(A71, 23) && AvxSave);
  F.set("movrs", bit(A71, 31));
  F.set("avxvnniint8", bit(D71, 4) && AvxSave);
  F.set("avxneconvert", bit(D71, 5) && AvxSave);
  F.set("amx-complex", bit(D71, 8) && AmxSave);
  F.set("avxvnniint16", bit(D71, 10) && AvxSave);
  F.set("prefetchi", bit(D71, 14));
  F.set("usermsr", bit(D71, 15));
  bool HasAvx10 = bit(D71, 19);
  bool HasApx = bit(D71, 21);
  for (const char *Apx :
       {"apxf", "egpr", "push2pop2", "ppx", "ndd", "ccmp", "nf", "cf", "zu"})
    F.set(Apx, HasApx);

  bool LeafD = MaxLevel >= 0xd && cpuid(0xd, 1, R);
  unsigned AD = LeafD ? R.A : 0;
  F.set("xsaveopt", bit(AD, 0) && AvxSave);
  F.set("xsavec", bit(AD, 1) && AvxSave);
  F.set("xsaves", bit(AD, 3) && AvxSave);

  bool Leaf14 = MaxLevel >= 0x14 && cpuid(0x14, 0, R);
  F.set("ptwrite", Leaf14 && bit(R.B, 4));
  bool Leaf19 = MaxLevel >= 0x19 && cpuid(0x19, 0, R);
  F.set("widekl", Leaf7 && Leaf19 && bit(R.B, 2));

  bool Leaf1E = MaxLevel >= 0x1e && cpuid(0x1e, 1, R);
  unsigned A1E = Leaf1E ? R.A : 0;
  F.set("amx-fp8", bit(A1E, 4) && AmxSave);
  F.set("amx-transpose", bit(A1E, 5) && AmxSave);
  F.set("amx-tf32", bit(A1E, 6) && AmxSave);
  F.set("amx-avx512", bit(A1E, 7) && AmxSave);
  F.set("amx-movrs", bit(A1E, 8) && AmxSave);

  bool Leaf24 = MaxLevel >= 0x24 && cpuid(0x24, 0, R);
  unsigned Avx10Version = Leaf24 ? (R.B & 0xff) : 0;
  for (const char *Name : {"avx10.1", "avx10.1-256", "avx10.1-512"})
    F.set(Name, HasAvx10 && Avx10Version >= 1);
  for (const char *Name : {"avx10.2", "avx10.2-256", "avx10.2-512"})
    F.set(Name, HasAvx10 && Avx10Version >= 2);
}
#elif defined(__aarch64__) && defined(__linux__)
void detect(FeatureSet &F) {
  unsigned long Hw = getauxval(AT_HWCAP), Hw2 = getauxval(AT_HWCAP2);
  auto On = [](unsigned long Caps, unsigned Bit) { return (Caps >> Bit) & 1; };
  F.set("fp-armv8", On(Hw, 0));
  F.set("neon", On(Hw, 1));
  F.set("aes", On(Hw, 3) && On(Hw, 4)); // AES and PMULL
  F.set("sha2", On(Hw, 5) && On(Hw, 6)); // SHA1 and SHA2
  F.set("crc", On(Hw, 7));
  F.set("lse", On(Hw, 8));
  F.set("fullfp16", On(Hw, 9) && On(Hw, 10));
  F.set("rdm", On(Hw, 12));
  F.set("jsconv", On(Hw, 13));
  F.set("complxnum", On(Hw, 14));
  F.set("rcpc", On(Hw, 15));
  F.set("ccpp", On(Hw, 16));
  F.set("sha3", On(Hw, 17) && On(Hw, 21)); // SHA3 and SHA512
  F.set("sm4", On(Hw, 18) && On(Hw, 19));  // SM3 and SM4
  F.set("dotprod", On(Hw, 20));
  F.set("sve", On(Hw, 22));
  F.set("fp16fml", On(Hw, 23));
  F.set("dit", On(Hw, 24));
  F.set("rcpc-immo", On(Hw, 26));
  F.set("flagm", On(Hw, 27));
  F.set("ssbs", On(Hw, 28));
  F.set("sb", On(Hw, 29));
  F.set("pauth", On(Hw, 30) && On(Hw, 31));
  F.set("ccdp", On(Hw2, 0));
  F.set("sve2", On(Hw2, 1));
  F.set("sve-aes", On(Hw2, 2));
  F.set("sve-bitperm", On(Hw2, 4));
  F.set("sve-sha3", On(Hw2, 5));
  F.set("sve-sm4", On(Hw2, 6));
  F.set("altnzcv", On(Hw2, 7));
  F.set("fptoint", On(Hw2, 8));
  F.set("f32mm", On(Hw2, 10));
  F.set("f64mm", On(Hw2, 11));
  F.set("i8mm", On(Hw2, 13));
  F.set("bf16", On(Hw2, 14));
  F.set("rand", On(Hw2, 16));
  F.set("bti", On(Hw2, 17));
  F.set("mte", On(Hw2, 18));
}
#else
void detect(FeatureSet &) {}
#endif

/// Feature names that do not restrict where code runs: code-generation
/// switches (retpolines, LVI hardening, vzeroupper insertion) and evex512,
/// which only widens AVX-512 code when AVX-512 itself is required.
bool isNeutralFeature(std::string_view Name) {
  return Name == "evex512" || Name == "vzeroupper" ||
         Name.substr(0, 9) == "retpoline" || Name.substr(0, 4) == "lvi-";
}

const FeatureSet &detected() {
  static const FeatureSet F = [] {
    FeatureSet S;
    detect(S);
    return S;
  }();
  return F;
}

constexpr int kRankFloor = 1;

} // namespace

bool kiln::rt::detail::isKnownHostFeature(std::string_view Feature) {
  return isNeutralFeature(Feature) ||
         detected().Known.count(std::string(Feature)) != 0;
}

const std::vector<std::string> *
kiln::rt::detail::levelFeatures(std::string_view Cpu) {
  static const std::vector<std::string> None;
  static const std::vector<std::string> V1 = {"cmov", "cx8", "fxsr", "mmx",
                                              "sse",  "sse2", "x87"};
  static const std::vector<std::string> V2 = [] {
    std::vector<std::string> L = V1;
    for (const char *F : {"cx16", "crc32", "popcnt", "sahf", "sse3", "sse4.1",
                          "sse4.2", "ssse3"})
      L.push_back(F);
    return L;
  }();
  static const std::vector<std::string> V3 = [] {
    std::vector<std::string> L = V2;
    for (const char *F : {"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt",
                          "movbe", "xsave"})
      L.push_back(F);
    return L;
  }();
  static const std::vector<std::string> V4 = [] {
    std::vector<std::string> L = V3;
    for (const char *F :
         {"avx512bw", "avx512cd", "avx512dq", "avx512f", "avx512vl"})
      L.push_back(F);
    return L;
  }();
  if (Cpu == "generic")
    return &None;
#if defined(__x86_64__)
  if (Cpu == "x86-64")
    return &V1;
  if (Cpu == "x86-64-v2")
    return &V2;
  if (Cpu == "x86-64-v3")
    return &V3;
  if (Cpu == "x86-64-v4")
    return &V4;
#endif
  return nullptr;
}

std::vector<std::string> kiln::rt::detail::detectHostFeatures() {
  const FeatureSet &F = detected();
  return std::vector<std::string>(F.Has.begin(), F.Has.end());
}

HostTarget kiln::rt::detail::computeHostTarget() {
  HostTarget T;
  T.Features = detectHostFeatures();
  const char *Env = std::getenv("KILN_HOST_CPU");
  if (Env && *Env)
    T.Names.push_back(Env);
#if defined(__x86_64__)
  T.TripleArch = "x86_64";
  T.Triple = "x86_64-unknown-linux-gnu";
  __builtin_cpu_init();
#if defined(__clang__)
  // CPU names as far as __builtin_cpu_is tells them apart. It may know
  // a CPU by an older name than LLVM's getHostCPUName (what `native`
  // compiles for): images that record their features do not depend on it.
#define KILN_CPU(Name)                                                         \
  if (__builtin_cpu_is(Name))                                                  \
    T.Names.push_back(Name);
  KILN_CPU("nehalem") KILN_CPU("westmere") KILN_CPU("sandybridge")
  KILN_CPU("ivybridge") KILN_CPU("haswell") KILN_CPU("broadwell")
  KILN_CPU("skylake") KILN_CPU("skylake-avx512") KILN_CPU("cannonlake")
  KILN_CPU("icelake-client") KILN_CPU("icelake-server")
  KILN_CPU("cascadelake") KILN_CPU("tigerlake") KILN_CPU("cooperlake")
  KILN_CPU("sapphirerapids") KILN_CPU("emeraldrapids") KILN_CPU("alderlake")
  KILN_CPU("raptorlake") KILN_CPU("meteorlake") KILN_CPU("rocketlake")
  KILN_CPU("graniterapids") KILN_CPU("graniterapids-d")
  KILN_CPU("arrowlake") KILN_CPU("arrowlake-s") KILN_CPU("lunarlake")
  KILN_CPU("pantherlake") KILN_CPU("sierraforest") KILN_CPU("grandridge")
  KILN_CPU("clearwaterforest") KILN_CPU("diamondrapids")
  KILN_CPU("znver1") KILN_CPU("znver2") KILN_CPU("znver3")
  KILN_CPU("znver4") KILN_CPU("znver5") KILN_CPU("btver1") KILN_CPU("btver2")
  KILN_CPU("bdver1") KILN_CPU("bdver2") KILN_CPU("bdver3") KILN_CPU("bdver4")
  KILN_CPU("goldmont") KILN_CPU("goldmont-plus") KILN_CPU("tremont")
  KILN_CPU("silvermont") KILN_CPU("knl") KILN_CPU("knm")
#undef KILN_CPU
#endif
  for (const char *Level : {"x86-64-v4", "x86-64-v3", "x86-64-v2", "x86-64"})
    if (T.missing(*levelFeatures(Level)).empty())
      T.Names.push_back(Level);
  T.Names.push_back("generic");
#elif defined(__aarch64__)
  T.TripleArch = "aarch64";
  T.Triple = "aarch64-unknown-linux-gnu";
  T.Names.push_back("generic");
#else
  T.TripleArch = "unknown";
  T.Triple = "unknown";
#endif
  return T;
}

const HostTarget &kiln::rt::detail::hostTarget() {
  static const HostTarget T = computeHostTarget();
  return T;
}

bool HostTarget::has(std::string_view Feature) const {
  return isNeutralFeature(Feature) ||
         std::binary_search(Features.begin(), Features.end(), Feature);
}

std::vector<std::string>
HostTarget::missing(const std::vector<std::string> &Needed) const {
  std::vector<std::string> Out;
  for (const std::string &F : Needed)
    if (!has(F) && std::find(Out.begin(), Out.end(), F) == Out.end())
      Out.push_back(F);
  return Out;
}

/// The features an image needs, or nullopt if it is matched by name: its
/// "requires" features and, if its CPU is an x86-64 level (or generic),
/// the level's.
static std::optional<std::vector<std::string>>
neededFeatures(const ImageInfo &Image) {
  const ImageRequirements &R = Image.Requires;
  const std::string &Cpu = R.Present && !R.Cpu.empty() ? R.Cpu : Image.Arch;
  const std::vector<std::string> *Level = levelFeatures(Cpu);
  bool HasFeatures = R.Present && !R.Features.empty();
  if (!Level && !HasFeatures)
    return std::nullopt;
  std::vector<std::string> Needed = Level ? *Level : std::vector<std::string>();
  if (HasFeatures)
    Needed.insert(Needed.end(), R.Features.begin(), R.Features.end());
  std::sort(Needed.begin(), Needed.end());
  Needed.erase(std::unique(Needed.begin(), Needed.end()), Needed.end());
  Needed.erase(std::remove_if(Needed.begin(), Needed.end(),
                              [](const std::string &F) {
                                return isNeutralFeature(F);
                              }),
               Needed.end());
  return Needed;
}

bool HostTarget::matchesTriple(const ImageInfo &Image) const {
  if (Image.ImageKind != 1 /*IMG_Object*/ || Image.OffloadKind != 0)
    return false;
  // The triple's architecture must be ours and its OS Linux; the vendor
  // field ("unknown", "pc") does not matter.
  std::string_view Triple = Image.Triple;
  size_t Dash = Triple.find('-');
  return Triple.substr(0, Dash) == TripleArch &&
         Triple.find("-linux") != std::string_view::npos;
}

int HostTarget::rank(const ImageInfo &Image) const {
  // Emulated GPU images have another entry (one GPU thread): only the
  // emulator device runs them.
  if (!matchesTriple(Image) || !Image.Requires.Emu.empty())
    return 0;
  // Ranks grow with the number of features an image may use, so that a
  // native image beats x86-64-v3, which beats x86-64-v2.
  if (std::optional<std::vector<std::string>> Needed = neededFeatures(Image))
    return missing(*Needed).empty() ? kRankFloor + int(Needed->size()) : 0;
  // By name: this CPU's own name (or $KILN_HOST_CPU) is as good as native.
  const std::string &Cpu = Image.Requires.Present && !Image.Requires.Cpu.empty()
                               ? Image.Requires.Cpu
                               : Image.Arch;
  if (std::find(Names.begin(), Names.end(), Cpu) != Names.end())
    return kRankFloor + int(Features.size());
  return 0;
}

std::string HostTarget::whyNot(const ImageInfo &Image) const {
  if (!matchesTriple(Image))
    return "";
  std::optional<std::vector<std::string>> Needed = neededFeatures(Image);
  if (!Needed)
    return "";
  std::vector<std::string> Lacks = missing(*Needed);
  if (Lacks.empty())
    return "";
  std::string Out = "lacks";
  for (size_t I = 0; I < Lacks.size() && I < 6; ++I)
    Out += (I ? ", " : " ") + Lacks[I];
  if (Lacks.size() > 6)
    Out += ", ... (" + std::to_string(Lacks.size()) + " features)";
  return Out;
}

std::string HostTarget::describe() const {
  std::string Out = Triple + ":";
  for (size_t I = 0; I < Names.size(); ++I)
    Out += (I ? ", " : " ") + Names[I];
  return Out + "; " + std::to_string(Features.size()) + " CPU features";
}
