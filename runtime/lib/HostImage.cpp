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
#include "Fault.h"

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

/// dlopen, or a failure injected in its place (Fault.h).
void *openImage(const char *Path) {
  if (fault::inject(fault::Point::DlOpen, "dlopen")) {
    dlerror();
    return nullptr;
  }
  return dlopen(Path, RTLD_NOW | RTLD_LOCAL);
}

} // namespace

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
    } else if (void *H = openImage(Path.c_str())) {
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
    void *H = Written ? openImage(Name.data()) : nullptr;
    std::string TmpError = Written ? (H ? "" : lastDlError())
                                   : std::string(std::strerror(errno));
    ::unlink(Name.data());
    if (!H)
      return Error(ErrorCode::Driver,
                   What + ": " + (FirstError.empty() ? TmpError : FirstError));
    Result->Handle = H;
  }

  dlerror();
  void *Sym = fault::inject(fault::Point::DlSym, "dlsym")
                  ? nullptr
                  : dlsym(Result->Handle, Image.Entry.c_str());
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
