//===- GpuDevice.cpp - A GPU driven through a CUDA-shaped driver ----------===//
//
// See GpuDevice.h and GpuDriver.h. Every driver failure names the call and
// the result ("cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
// "hipMalloc failed: hipErrorOutOfMemory"); nothing aborts.
//
//===----------------------------------------------------------------------===//

#include "GpuDevice.h"
#include "Fault.h"

#include <dlfcn.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <map>
#include <mutex>

using namespace kiln::rt;
using namespace kiln::rt::detail;
using namespace kiln::rt::detail::gpu;

namespace {
constexpr unsigned kDefaultThreads = 128;
} // namespace

//===----------------------------------------------------------------------===//
// The driver library
//===----------------------------------------------------------------------===//

Api::~Api() = default;

std::string Api::failure(const char *Call, Result R) const {
  return std::string(Call) + " failed: " + errorName(R);
}

void *Binder::find(std::initializer_list<const char *> Names,
                   const char *&Symbol, bool Required) {
  for (const char *Name : Names)
    if (void *Sym = fault::inject(fault::Point::DlSym, Name)
                        ? nullptr
                        : dlsym(Handle, Name)) {
      Symbol = Name;
      return Sym;
    }
  if (Required && Missing.empty() && Names.size())
    Missing = *Names.begin();
  return nullptr;
}

Expected<const Api *> kiln::rt::detail::gpu::loadLibrary(
    const char *EnvVar, const std::vector<std::string> &Candidates,
    const std::string &What,
    std::unique_ptr<Api> (*Make)(void *Handle, std::string &Missing)) {
  static std::mutex Mutex;
  static std::map<std::string, std::unique_ptr<Api>> Loaded;
  std::vector<std::string> Paths = Candidates;
  if (const char *Env = std::getenv(EnvVar); Env && *Env)
    Paths = {Env};
  std::lock_guard<std::mutex> Lock(Mutex);
  for (const std::string &Path : Paths)
    if (auto It = Loaded.find(Path); It != Loaded.end())
      return const_cast<const Api *>(It->second.get());
  std::string Why;
  for (const std::string &Path : Paths) {
    dlerror();
    bool Injected = fault::inject(fault::Point::DlOpen, "dlopen");
    void *H = Injected ? nullptr : dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!H) {
      const char *E = Injected ? "injected fault" : dlerror();
      if (Why.empty())
        Why = E ? E : "unknown error";
      continue;
    }
    std::string Missing;
    std::unique_ptr<Api> D = Make(H, Missing);
    if (!Missing.empty()) {
      dlclose(H);
      return Error(ErrorCode::Driver, "the " + What + " " + Path +
                                          " does not export " + Missing);
    }
    D->Path = Path;
    const Api *Result = D.get();
    Loaded.emplace(Path, std::move(D));
    return Result;
  }
  std::string Names;
  for (const std::string &Path : Paths)
    Names += (Names.empty() ? "" : ", ") + Path;
  return Error(ErrorCode::Driver,
               (Paths.size() == 1 ? Names : "none of " + Names) +
                   (Paths.size() == 1 ? " could not be loaded ("
                                      : " could be loaded (") +
                   Why + ")");
}

//===----------------------------------------------------------------------===//
// Streams, events, images
//===----------------------------------------------------------------------===//

GpuStream::~GpuStream() {
  DriverDevice::Scope Scope(Dev);
  Dev.api().StreamDestroy(S);
  if (Print)
    Dev.api().MemFree(Print);
}

GpuEvent::~GpuEvent() {
  DriverDevice::Scope Scope(Dev);
  Dev.api().EventDestroy(E);
}

GpuImage::~GpuImage() {
  if (!M)
    return;
  DriverDevice::Scope Scope(Dev);
  Dev.api().ModuleUnload(M);
}

DriverDevice::Scope::Scope(DriverDevice &D) : D(D) { R = D.enter(Saved); }

DriverDevice::Scope::~Scope() {
  if (R == kSuccess)
    D.leave(Saved);
}

Error DriverDevice::Scope::error() const {
  if (R == kSuccess)
    return Error::success();
  return Error(ErrorCode::Driver, D.A.failure(D.enterSymbol(), R));
}

//===----------------------------------------------------------------------===//
// The device
//===----------------------------------------------------------------------===//

std::string kiln::rt::detail::gpu::gib(uint64_t Bytes) {
  char Buf[32];
  std::snprintf(Buf, sizeof(Buf), "%.1f GiB", double(Bytes) / double(1 << 30));
  return Buf;
}

Expected<int> kiln::rt::detail::gpu::countDevices(const Api &A,
                                                 const VendorNames &V) {
  auto NoDevice = [&](Result R) {
    return std::find(V.NoDeviceResults.begin(), V.NoDeviceResults.end(), R) !=
           V.NoDeviceResults.end();
  };
  Result R = A.Init(0);
  if (NoDevice(R))
    return Error(ErrorCode::Driver, std::string(V.NoDevice) + " (" +
                                        A.failure(A.Init.Symbol, R) + ")");
  if (R != kSuccess)
    return Error(ErrorCode::Driver, A.failure(A.Init.Symbol, R));
  int Count = 0;
  R = A.DeviceGetCount(&Count);
  if (NoDevice(R) || (R == kSuccess && Count <= 0))
    return Error(ErrorCode::Driver, V.NoDevice);
  if (R != kSuccess)
    return Error(ErrorCode::Driver, A.failure(A.DeviceGetCount.Symbol, R));
  return Count;
}

Expected<int> kiln::rt::detail::gpu::openOrdinal(const Api &A, int Ordinal,
                                                 const std::string &Spec,
                                                 const VendorNames &V) {
  auto Fail = [&](const Error &E) {
    return Error(E.code(), "cannot open " + Spec + ": " + E.message());
  };
  Expected<int> Count = countDevices(A, V);
  if (!Count)
    return Fail(Count.error());
  if (Ordinal >= *Count)
    return Error(ErrorCode::Driver, Spec + ": only " + std::to_string(*Count) +
                                        " " + V.Devices +
                                        (*Count == 1 ? "" : "s"));
  int Dev = 0;
  if (Result R = A.DeviceGet(&Dev, Ordinal))
    return Fail(Error(ErrorCode::Driver, A.failure(A.DeviceGet.Symbol, R)));
  return Dev;
}

Error kiln::rt::detail::gpu::readProperties(
    const Api &A, int Device, DeviceProperties &P,
    std::initializer_list<std::pair<int, int *>> Wanted, int MemoryClockAttr,
    int BusWidthAttr) {
  char Name[256] = {};
  if (Result R = A.DeviceGetName(Name, int(sizeof(Name) - 1), Device))
    return Error(ErrorCode::Driver, A.failure(A.DeviceGetName.Symbol, R));
  P.Model = Name;
  for (const auto &[Attr, Out] : Wanted) {
    *Out = 0;
    if (Result R = A.DeviceGetAttribute(Out, Attr, Device))
      return Error(ErrorCode::Driver,
                   A.failure(A.DeviceGetAttribute.Symbol, R) +
                       " (attribute " + std::to_string(Attr) + ")");
  }
  // Not every device reports its memory clock and bus (then 0).
  int MemClock = 0, Bus = 0;
  if (A.DeviceGetAttribute(&MemClock, MemoryClockAttr, Device) != kSuccess)
    MemClock = 0;
  if (A.DeviceGetAttribute(&Bus, BusWidthAttr, Device) != kSuccess)
    Bus = 0;
  P.MemoryClockKHz = uint64_t(std::max(MemClock, 0));
  P.MemoryBusBits = unsigned(std::max(Bus, 0));
  P.PeakBandwidthGBs =
      2.0 * double(P.MemoryClockKHz) * 1e3 * double(P.MemoryBusBits) / 8 / 1e9;
  size_t Total = 0;
  if (Result R = A.DeviceTotalMem(&Total, Device))
    return Error(ErrorCode::Driver, A.failure(A.DeviceTotalMem.Symbol, R));
  P.MemoryBytes = Total;
  int Version = 0;
  if (Result R = A.DriverGetVersion(&Version))
    return Error(ErrorCode::Driver, A.failure(A.DriverGetVersion.Symbol, R));
  P.DriverVersion = Version;
  return Error::success();
}

DriverDevice::DriverDevice(const Api &A, const char *Prefix, const char *Units,
                           int Ordinal, DeviceProperties Props,
                           const int MaxGrid[3])
    : A(A), Prefix(Prefix), Units(Units), Ordinal(Ordinal),
      Props(std::move(Props)) {
  for (int I = 0; I < 3; ++I)
    this->MaxGrid[I] = MaxGrid[I] > 0 ? MaxGrid[I] : 65535;
}

std::string DriverDevice::name() const {
  return std::string(Prefix) + ":" + std::to_string(Ordinal);
}

std::string DriverDevice::description() const {
  std::string Out = name() + " (" + Props.Model + ", " + Props.Arch + ", " +
                    std::to_string(Props.ComputeUnits) + " " + Units + ", " +
                    gib(Props.MemoryBytes);
  if (Props.PeakBandwidthGBs > 0)
    Out += ", " + std::to_string(int64_t(Props.PeakBandwidthGBs + 0.5)) +
           " GB/s";
  return Out + ", " + versionText() + ")";
}

Error DriverDevice::fail(const char *Call, Result R,
                         const std::string &Detail) {
  std::string Message = A.failure(Call, R) + Detail;
  if (isKernelFault(R))
    return Error(ErrorCode::KernelTrapped,
                 "kernel trapped: " + Message + " (" + faultVictim() +
                     " cannot be used any more)");
  if (R == kOutOfMemory)
    return Error(ErrorCode::OutOfMemory, Message);
  return Error(ErrorCode::Driver, Message);
}

Expected<void *> DriverDevice::allocate(size_t Bytes) {
  Scope S(*this);
  if (Error E = S.error())
    return E;
  DevPtr P = 0;
  // Zero-byte buffers still get an address of their own.
  Result R = fault::inject(fault::Point::Allocate, A.MemAlloc.Symbol)
                 ? kOutOfMemory
                 : A.MemAlloc(&P, std::max<size_t>(Bytes, 1));
  if (R != kSuccess)
    return Error(R == kOutOfMemory ? ErrorCode::OutOfMemory : ErrorCode::Driver,
                 "cannot allocate " + std::to_string(Bytes) + " bytes on " +
                     name() + ": " + A.failure(A.MemAlloc.Symbol, R));
  Allocations.add(uintptr_t(P), Bytes);
  return reinterpret_cast<void *>(uintptr_t(P));
}

void DriverDevice::release(void *Ptr) {
  Allocations.remove(uintptr_t(Ptr));
  Scope S(*this);
  A.MemFree(DevPtr(uintptr_t(Ptr)));
}

Expected<std::unique_ptr<StreamImpl>> DriverDevice::createStream() {
  Scope Sc(*this);
  if (Error E = Sc.error())
    return E;
  Stream S = nullptr;
  // Non-blocking: no implicit synchronization with the legacy default
  // stream (CU_STREAM_NON_BLOCKING, hipStreamNonBlocking).
  if (Result R = A.StreamCreate(&S, 1))
    return fail(A.StreamCreate.Symbol, R);
  return std::unique_ptr<StreamImpl>(new GpuStream(*this, S));
}

Expected<std::unique_ptr<EventImpl>> DriverDevice::createEvent() {
  Scope Sc(*this);
  if (Error E = Sc.error())
    return E;
  Event Ev = nullptr;
  if (Result R = A.EventCreate(&Ev, 0))
    return fail(A.EventCreate.Symbol, R);
  return std::unique_ptr<EventImpl>(new GpuEvent(*this, Ev));
}

Error DriverDevice::copy(StreamImpl &S, void *Dst, const void *Src,
                         size_t Bytes, CopyKind Kind) {
  if (!Bytes)
    return Error::success();
  Scope Sc(*this);
  if (Error E = Sc.error())
    return E;
  Stream Str = static_cast<GpuStream &>(S).S;
  DevPtr DstDev = DevPtr(uintptr_t(Dst));
  DevPtr SrcDev = DevPtr(uintptr_t(Src));
  switch (Kind) {
  case CopyKind::HostToDevice:
    if (Result R = A.MemcpyHtoDAsync(DstDev, Src, Bytes, Str))
      return fail(A.MemcpyHtoDAsync.Symbol, R);
    break;
  case CopyKind::DeviceToHost:
    if (Result R = A.MemcpyDtoHAsync(Dst, SrcDev, Bytes, Str))
      return fail(A.MemcpyDtoHAsync.Symbol, R);
    break;
  case CopyKind::DeviceToDevice:
    if (Result R = A.MemcpyDtoDAsync(DstDev, SrcDev, Bytes, Str))
      return fail(A.MemcpyDtoDAsync.Symbol, R);
    break;
  }
  return Error::success();
}

std::optional<std::pair<uintptr_t, size_t>>
DriverDevice::allocationOf(const void *Address) {
  return Allocations.find(uintptr_t(Address));
}

Error DriverDevice::fill(StreamImpl &S, void *Dst, uint8_t Value,
                         size_t Bytes) {
  if (!Bytes)
    return Error::success();
  Scope Sc(*this);
  if (Error E = Sc.error())
    return E;
  if (Result R = A.MemsetD8Async(DevPtr(uintptr_t(Dst)), Value, Bytes,
                                 static_cast<GpuStream &>(S).S))
    return fail(A.MemsetD8Async.Symbol, R);
  return Error::success();
}

Error DriverDevice::record(StreamImpl &S, EventImpl &E) {
  Scope Sc(*this);
  if (Error Err = Sc.error())
    return Err;
  auto &GE = static_cast<GpuEvent &>(E);
  if (Result R = A.EventRecord(GE.E, static_cast<GpuStream &>(S).S))
    return fail(A.EventRecord.Symbol, R);
  GE.Recorded = true;
  return Error::success();
}

Error DriverDevice::synchronize(StreamImpl &S) {
  auto &GS = static_cast<GpuStream &>(S);
  Scope Sc(*this);
  if (Error E = Sc.error())
    return E;
  if (Result R = A.StreamSynchronize(GS.S))
    return fail(A.StreamSynchronize.Symbol, R);
  if (GS.PrintPending)
    return drainPrints(GS);
  return Error::success();
}

DevPtr DriverDevice::trapWord(const GpuStream &S) {
  return S.Print + 2 * sizeof(uint64_t) + kPrintBufferBytes;
}

Error DriverDevice::drainPrints(GpuStream &S) {
  S.PrintPending = false;
  uint64_t Header[2] = {};
  uint64_t Trap = 0;
  if (Result R = A.MemcpyDtoHAsync(Header, S.Print, sizeof(Header), S.S))
    return fail(A.MemcpyDtoHAsync.Symbol, R);
  if (Result R = A.MemcpyDtoHAsync(&Trap, trapWord(S), sizeof(Trap), S.S))
    return fail(A.MemcpyDtoHAsync.Symbol, R);
  if (Result R = A.StreamSynchronize(S.S))
    return fail(A.StreamSynchronize.Symbol, R);
  uint64_t Used = std::min(Header[0], kPrintBufferBytes);
  std::vector<uint64_t> Data((Used + 7) / 8);
  if (Used)
    if (Result R = A.MemcpyDtoHAsync(Data.data(), S.Print + sizeof(Header),
                                     Used, S.S))
      return fail(A.MemcpyDtoHAsync.Symbol, R);
  // Empty it for the next launches (the capacity stays).
  if (Result R = A.MemsetD8Async(S.Print, 0, sizeof(uint64_t), S.S))
    return fail(A.MemsetD8Async.Symbol, R);
  if (Trap)
    if (Result R = A.MemsetD8Async(trapWord(S), 0, sizeof(uint64_t), S.S))
      return fail(A.MemsetD8Async.Symbol, R);
  if (Result R = A.StreamSynchronize(S.S))
    return fail(A.StreamSynchronize.Symbol, R);
  // Records: {u32 format hash, u32 count, count 8-byte slots}, in the
  // order their threads reserved them. The trap word, when set, is 1 + the
  // offset of the record that is the trap's message (~0: it did not fit).
  std::string Text, TrapMessage;
  for (size_t Word = 0; Word < Data.size();) {
    uint32_t Hash = uint32_t(Data[Word]);
    uint32_t Count = uint32_t(Data[Word] >> 32);
    if (Count > Data.size() - Word - 1)
      break; // a record cut short: the buffer ended
    std::string Format;
    {
      std::lock_guard<std::mutex> Lock(FormatsMutex);
      auto It = PrintFormats.find(Hash);
      Format = It != PrintFormats.end()
                   ? It->second
                   : "<a print record of unknown format " +
                         std::to_string(Hash) + ">\n";
    }
    std::string Line = formatPrintRecord(Format, Data.data() + Word + 1, Count);
    if (Trap && Trap - 1 == 8 * Word)
      TrapMessage = Line;
    else
      Text += Line;
    Word += 1 + Count;
  }
  for (size_t Start = 0; Start < Text.size();) {
    size_t End = Text.find('\n', Start);
    if (End == std::string::npos)
      End = Text.size();
    Prints.emit(Text.substr(Start, End - Start));
    Start = End + 1;
  }
  if (Header[0] > kPrintBufferBytes)
    Prints.emit("kiln: " + std::to_string(Header[0] - kPrintBufferBytes) +
                " bytes of print output did not fit in " + name() +
                "'s print buffer (" + std::to_string(kPrintBufferBytes) +
                " bytes per stream between synchronizations) and were lost");
  if (!Trap)
    return Error::success();
  while (!TrapMessage.empty() && TrapMessage.back() == '\n')
    TrapMessage.pop_back();
  if (TrapMessage.empty())
    TrapMessage = "an assertion failed (its message did not fit in " +
                  name() + "'s print buffer)";
  return Error(ErrorCode::KernelTrapped, "kernel trapped: " + TrapMessage);
}

uint32_t kiln::rt::detail::gpu::printFormatHash(std::string_view Format) {
  uint32_t H = 2166136261u;
  for (unsigned char C : Format) {
    H ^= C;
    H *= 16777619u;
  }
  return H;
}

std::string kiln::rt::detail::gpu::formatPrintRecord(std::string_view Format,
                                                     const uint64_t *Slots,
                                                     unsigned Count) {
  std::string Out;
  unsigned Next = 0;
  for (size_t I = 0; I < Format.size();) {
    if (Format[I] != '%') {
      Out += Format[I++];
      continue;
    }
    if (I + 1 < Format.size() && Format[I + 1] == '%') {
      Out += '%';
      I += 2;
      continue;
    }
    // %[flags][width][.precision][length]conversion
    size_t J = I + 1;
    std::string Spec = "%";
    while (J < Format.size() && std::strchr("-+ #0", Format[J]))
      Spec += Format[J++];
    while (J < Format.size() && (std::isdigit((unsigned char)Format[J]) ||
                                 Format[J] == '.'))
      Spec += Format[J++];
    while (J < Format.size() && std::strchr("hlLqjzt", Format[J]))
      ++J; // the slot says the size: every integer is 64-bit here
    char Conv = J < Format.size() ? Format[J] : '\0';
    bool Int = Conv && std::strchr("diuxXoc", Conv);
    bool Float = Conv && std::strchr("eEfFgGaA", Conv);
    if ((!Int && !Float) || Next >= Count) {
      Out += Format.substr(I, J + (Conv ? 1 : 0) - I);
      I = J + (Conv ? 1 : 0);
      continue;
    }
    uint64_t Bits = Slots[Next++];
    char Buf[128];
    if (Float) {
      double D;
      std::memcpy(&D, &Bits, sizeof(D));
      std::snprintf(Buf, sizeof(Buf), (Spec + Conv).c_str(), D);
    } else if (Conv == 'c') {
      std::snprintf(Buf, sizeof(Buf), (Spec + 'c').c_str(), int(Bits));
    } else if (Conv == 'd' || Conv == 'i') {
      std::snprintf(Buf, sizeof(Buf), (Spec + "lld").c_str(),
                    (long long)(int64_t)Bits);
    } else {
      std::snprintf(Buf, sizeof(Buf), (Spec + "ll" + Conv).c_str(),
                    (unsigned long long)Bits);
    }
    Out += Buf;
    I = J + 1;
  }
  return Out;
}

Error DriverDevice::synchronize(EventImpl &E) {
  auto &GE = static_cast<GpuEvent &>(E);
  if (!GE.Recorded)
    return Error(ErrorCode::InvalidArgument, "the event has not been recorded");
  Scope Sc(*this);
  if (Error Err = Sc.error())
    return Err;
  if (Result R = A.EventSynchronize(GE.E))
    return fail(A.EventSynchronize.Symbol, R);
  return Error::success();
}

Expected<double> DriverDevice::elapsedMilliseconds(EventImpl &Start,
                                                   EventImpl &End) {
  auto &S = static_cast<GpuEvent &>(Start);
  auto &E = static_cast<GpuEvent &>(End);
  if (!S.Recorded || !E.Recorded)
    return Error(ErrorCode::InvalidArgument,
                 "elapsed time of an event that has not been recorded");
  Scope Sc(*this);
  if (Error Err = Sc.error())
    return Err;
  // Both must have completed; the end event comes last in its stream.
  if (Result R = A.EventSynchronize(E.E))
    return fail(A.EventSynchronize.Symbol, R);
  if (Result R = A.EventSynchronize(S.E))
    return fail(A.EventSynchronize.Symbol, R);
  float Ms = 0;
  if (Result R = A.EventElapsedTime(&Ms, S.E, E.E))
    return fail(A.EventElapsedTime.Symbol, R);
  return double(Ms);
}

int64_t DriverDevice::maxGridAxis(unsigned Axis) const {
  return Axis < 3 ? MaxGrid[Axis] : 1;
}

Error DriverDevice::launch(StreamImpl &S, LoadedImage &Image, void **Args,
                           const GridDims &Grid,
                           const std::vector<TensorMap> &Maps) {
  // The CUDA device encodes tensor maps and passes none here; HIP's rank
  // rules out the images that take them.
  if (!Maps.empty())
    return Error(ErrorCode::LaunchRefused,
                 name() + " runs no code object with tensor maps");
  auto &I = static_cast<GpuImage &>(Image);
  auto &GS = static_cast<GpuStream &>(S);
  Scope Sc(*this);
  if (Error E = Sc.error())
    return E;
  if (I.Prints) {
    // The stream's print buffer, made on its first use, goes in the hidden
    // slot after the arguments.
    if (!GS.Print) {
      DevPtr P = 0;
      if (Result R = A.MemAlloc(&P, sizeof(GS.PrintHeader) +
                                        kPrintBufferBytes + sizeof(uint64_t)))
        return fail(A.MemAlloc.Symbol, R, " (the print buffer of " +
                                              I.Label + ")");
      GS.Print = P;
      GS.PrintHeader[0] = 0;
      GS.PrintHeader[1] = kPrintBufferBytes;
      if (Result R = A.MemcpyHtoDAsync(GS.Print, GS.PrintHeader,
                                       sizeof(GS.PrintHeader), GS.S))
        return fail(A.MemcpyHtoDAsync.Symbol, R);
      if (Result R = A.MemsetD8Async(trapWord(GS), 0, sizeof(uint64_t), GS.S))
        return fail(A.MemsetD8Async.Symbol, R);
    }
    GS.PrintArg = GS.Print;
    size_t Slot = 0;
    while (Args[Slot])
      ++Slot;
    Args[Slot] = &GS.PrintArg;
    GS.PrintPending = true;
  }
  Result R = A.LaunchKernel(I.F, unsigned(Grid.X), unsigned(Grid.Y),
                            unsigned(Grid.Z), I.Threads, 1, 1, I.SharedBytes,
                            static_cast<GpuStream &>(S).S, Args, nullptr);
  if (R != kSuccess)
    return fail(A.LaunchKernel.Symbol, R,
                " (" + I.Label + ": grid " + std::to_string(Grid.X) + "x" +
                    std::to_string(Grid.Y) + "x" + std::to_string(Grid.Z) +
                    ", " + std::to_string(I.Threads) + " threads, " +
                    std::to_string(I.SharedBytes) +
                    " bytes of shared memory)");
  return Error::success();
}

Expected<std::unique_ptr<GpuImage>>
DriverDevice::newImage(const ImageInfo &Image, const std::string &What) {
  auto Loaded = std::make_unique<GpuImage>(*this);
  Loaded->Label = Image.Entry;
  int64_t Threads =
      resourceInt(Image.Resources, "threads").value_or(kDefaultThreads);
  int64_t Shared = resourceInt(Image.Resources, "shared_bytes").value_or(0);
  if (Threads < 1 || Threads > int64_t(Props.MaxThreadsPerBlock))
    return Error(ErrorCode::InvalidBundle,
                 What + ": it asks for " + std::to_string(Threads) +
                     " threads per block; " + name() + " allows 1 to " +
                     std::to_string(Props.MaxThreadsPerBlock));
  if (uint64_t(Shared) > Props.MaxSharedBytesPerBlock)
    return Error(ErrorCode::InvalidBundle,
                 What + ": it needs " + std::to_string(Shared) +
                     " bytes of shared memory; " + name() + " has " +
                     std::to_string(Props.MaxSharedBytesPerBlock) +
                     " per block");
  Loaded->Threads = unsigned(Threads);
  Loaded->SharedBytes = unsigned(Shared);
  // The formats of its print records, registered by hash for the drains.
  nlohmann::json Resources =
      nlohmann::json::parse(Image.Resources, nullptr, /*allow_exceptions=*/false);
  if (Resources.is_object())
    if (auto It = Resources.find("print_formats"); It != Resources.end()) {
      if (!It->is_array())
        return Error(ErrorCode::InvalidBundle,
                     What + ": its 'print_formats' is not a list of strings");
      std::lock_guard<std::mutex> Lock(FormatsMutex);
      for (const nlohmann::json &F : *It) {
        if (!F.is_string())
          return Error(ErrorCode::InvalidBundle,
                       What + ": its 'print_formats' is not a list of strings");
        std::string Format = F.get<std::string>();
        PrintFormats[printFormatHash(Format)] = Format;
      }
      Loaded->Prints = true;
    }
  return std::move(Loaded);
}

Error DriverDevice::findEntry(GpuImage &Loaded, const ImageInfo &Image,
                              const std::string &What) {
  Result R = A.ModuleGetFunction(&Loaded.F, Loaded.M, Image.Entry.c_str());
  if (R != kSuccess)
    return Error(ErrorCode::InvalidBundle,
                 What + ": it does not define the entry '" + Image.Entry +
                     "' (" + A.failure(A.ModuleGetFunction.Symbol, R) + ")");
  return Error::success();
}
