//===- HostImage.cpp - Loading host code objects --------------------------===//
//
// A host code object is an ELF shared object (kiln/host_abi.h). It is
// written to an anonymous memory file (memfd_create) and opened with
// dlopen("/proc/self/fd/N", RTLD_NOW | RTLD_LOCAL); where memfds cannot
// be created or mapped executable, a private temporary file is used and
// unlinked right after dlopen.
//
// glibc recognizes an already-loaded library by its path, so the memfd is
// kept open while the library is loaded (its /proc/self/fd/N name cannot
// be reused by another image meanwhile); if dlclose leaves the library
// resident, the descriptor is deliberately never closed.
//
//===----------------------------------------------------------------------===//

#include "HostDevice.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

using namespace kiln::rt;
using namespace kiln::rt::detail;

namespace {

constexpr int kRankNative = 5;

HostTarget computeHostTarget() {
  HostTarget T;
  const char *Env = std::getenv("KILN_HOST_CPU");
  if (Env && *Env)
    T.Archs.push_back({Env, kRankNative});
#if defined(__x86_64__)
  T.TripleArch = "x86_64";
  T.Triple = "x86_64-unknown-linux-gnu";
  __builtin_cpu_init();
#if defined(__clang__)
  // The CPU names LLVM's sys::getHostCPUName() gives (what `native`
  // compiles for), as far as __builtin_cpu_is can tell them apart.
#define KILN_CPU(Name)                                                         \
  if (__builtin_cpu_is(Name))                                                  \
    T.Archs.push_back({Name, kRankNative});
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
  if (__builtin_cpu_supports("x86-64-v4"))
    T.Archs.push_back({"x86-64-v4", 4});
  if (__builtin_cpu_supports("x86-64-v3"))
    T.Archs.push_back({"x86-64-v3", 3});
  if (__builtin_cpu_supports("x86-64-v2"))
    T.Archs.push_back({"x86-64-v2", 2});
  T.Archs.push_back({"x86-64", 1});
  T.Archs.push_back({"generic", 1});
#elif defined(__aarch64__)
  T.TripleArch = "aarch64";
  T.Triple = "aarch64-unknown-linux-gnu";
  T.Archs.push_back({"generic", 1});
#else
  T.TripleArch = "unknown";
  T.Triple = "unknown";
#endif
  return T;
}

#if defined(__x86_64__)
constexpr uint16_t kElfMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kElfMachine = EM_AARCH64;
#else
constexpr uint16_t kElfMachine = EM_NONE;
#endif

/// True if `Bytes` start like a 64-bit little-endian shared object for
/// this machine.
bool isLoadableElf(const uint8_t *Bytes, uint64_t Size) {
  if (Size < sizeof(Elf64_Ehdr) || std::memcmp(Bytes, ELFMAG, SELFMAG) != 0)
    return false;
  Elf64_Ehdr H;
  std::memcpy(&H, Bytes, sizeof(H));
  return H.e_ident[EI_CLASS] == ELFCLASS64 &&
         H.e_ident[EI_DATA] == ELFDATA2LSB && H.e_type == ET_DYN &&
         H.e_machine == kElfMachine;
}

bool writeAll(int Fd, const uint8_t *P, uint64_t N) {
  while (N) {
    ssize_t W = ::write(Fd, P, N > (1u << 30) ? (1u << 30) : size_t(N));
    if (W < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    P += W;
    N -= uint64_t(W);
  }
  return true;
}

std::string lastDlError() {
  const char *E = dlerror();
  return E ? E : "unknown dlopen error";
}

} // namespace

const HostTarget &kiln::rt::detail::hostTarget() {
  static const HostTarget T = computeHostTarget();
  return T;
}

int HostTarget::rank(const ImageInfo &Image) const {
  if (Image.ImageKind != 1 /*IMG_Object*/ || Image.OffloadKind != 0)
    return 0;
  // The triple's architecture must be ours and its OS Linux; the vendor
  // field ("unknown", "pc") does not matter.
  std::string_view Triple = Image.Triple;
  size_t Dash = Triple.find('-');
  if (Triple.substr(0, Dash) != TripleArch ||
      Triple.find("-linux") == std::string_view::npos)
    return 0;
  for (const auto &A : Archs)
    if (A.first == Image.Arch)
      return A.second;
  return 0;
}

std::string HostTarget::describe() const {
  std::string Out = Triple + ":";
  for (size_t I = 0; I < Archs.size(); ++I)
    Out += (I ? ", " : " ") + Archs[I].first;
  return Out;
}

Expected<std::unique_ptr<HostImage>>
HostImage::load(const ImageInfo &Image, const uint8_t *Bytes,
                const std::string &Label) {
  std::string What = "cannot load the host code object of " + Label;
  if (!isLoadableElf(Bytes, Image.Size))
    return Error(ErrorCode::InvalidBundle,
                 What + ": it is not an ELF shared object for this machine");

  std::unique_ptr<HostImage> Result(new HostImage());
  std::string FirstError;
  dlerror();

  int Fd = memfd_create(("kiln:" + Label).c_str(), MFD_CLOEXEC);
  if (Fd >= 0) {
    std::string Path = "/proc/self/fd/" + std::to_string(Fd);
    if (!writeAll(Fd, Bytes, Image.Size)) {
      FirstError = std::string("writing a memfd: ") + std::strerror(errno);
    } else if (void *H = dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      Result->Handle = H;
      Result->Fd = Fd;
      Result->Path = Path;
    } else {
      FirstError = lastDlError();
    }
    if (!Result->Handle)
      ::close(Fd);
  } else {
    FirstError = std::string("memfd_create: ") + std::strerror(errno);
  }

  if (!Result->Handle) {
    // A private temporary file, unlinked as soon as it is mapped.
    const char *Dir = std::getenv("TMPDIR");
    std::string Template =
        std::string(Dir && *Dir ? Dir : "/tmp") + "/kiln-image-XXXXXX";
    std::vector<char> Name(Template.begin(), Template.end());
    Name.push_back('\0');
    int TmpFd = mkstemp(Name.data());
    if (TmpFd < 0)
      return Error(ErrorCode::Driver, What + ": " + FirstError);
    bool Written = writeAll(TmpFd, Bytes, Image.Size);
    ::close(TmpFd);
    void *H = Written ? dlopen(Name.data(), RTLD_NOW | RTLD_LOCAL) : nullptr;
    std::string TmpError = Written ? (H ? "" : lastDlError())
                                   : std::string(std::strerror(errno));
    ::unlink(Name.data());
    if (!H)
      return Error(ErrorCode::Driver,
                   What + ": " + (FirstError.empty() ? TmpError : FirstError));
    Result->Handle = H;
  }

  dlerror();
  void *Sym = dlsym(Result->Handle, Image.Entry.c_str());
  if (!Sym)
    return Error(ErrorCode::InvalidBundle,
                 What + ": it does not define the entry '" + Image.Entry +
                     "'");
  Result->Entry = reinterpret_cast<KilnHostEntry>(Sym);
  return std::move(Result);
}

HostImage::~HostImage() {
  if (Handle)
    dlclose(Handle);
  if (Fd < 0)
    return;
  // Still resident (e.g. marked NODELETE)? Then its name must stay unique.
  if (void *Still = dlopen(Path.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
    dlclose(Still);
    return;
  }
  ::close(Fd);
}
