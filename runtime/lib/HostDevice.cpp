//===- HostDevice.cpp - The host CPU device -------------------------------===//
//
// Memory is plain (64-byte aligned) host memory; streams execute every
// operation before returning (so they are trivially in order); events are
// steady-clock timestamps. A launch runs the grid's programs on a thread
// pool: workers take chunks of consecutive program indices (x fastest) from
// a shared counter and call the image's entry once per program, with a
// KilnHostProgram whose callbacks implement print and trap.
//
//===----------------------------------------------------------------------===//

#include "HostDevice.h"
#include "Fault.h"
#include "ThreadPool.h"

#include <algorithm>
#include <map>
#include <shared_mutex>
#include <atomic>
#include <chrono>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <unistd.h>

using namespace kiln::rt;
using namespace kiln::rt::detail;

namespace {

constexpr size_t kAllocAlignment = 64;
constexpr size_t kWorkerStackBytes = size_t(64) << 20;

class HostDevice;

/// One launch, shared by its workers.
struct LaunchState {
  KilnHostEntry Entry = nullptr;
  void **Args = nullptr;
  GridDims Grid;
  uint64_t Total = 0;
  uint64_t Chunk = 1;
  std::atomic<uint64_t> Next{0};
  std::atomic<bool> Stop{false};
  std::mutex TrapMutex;
  std::string TrapMessage;
  HostDevice *Device = nullptr;
};

/// What a program's `runtime` pointer points to.
struct ProgramContext {
  LaunchState *State;
  KilnHostProgram Program;
};

void appendScalar(std::string &Out, ScalarType T, const uint8_t *P) {
  char Buf[64];
  auto Format = [&](auto V) {
    auto R = std::to_chars(Buf, Buf + sizeof(Buf), V);
    Out.append(Buf, R.ptr);
  };
  switch (T) {
  case ScalarType::Bool:
    Out += *P ? "true" : "false";
    return;
  case ScalarType::I8: { int8_t V; std::memcpy(&V, P, 1); Format(int(V)); return; }
  case ScalarType::I16: { int16_t V; std::memcpy(&V, P, 2); Format(V); return; }
  case ScalarType::I32: { int32_t V; std::memcpy(&V, P, 4); Format(V); return; }
  case ScalarType::I64: { int64_t V; std::memcpy(&V, P, 8); Format(V); return; }
  case ScalarType::U8: Format(unsigned(*P)); return;
  case ScalarType::U16: { uint16_t V; std::memcpy(&V, P, 2); Format(V); return; }
  case ScalarType::U32: { uint32_t V; std::memcpy(&V, P, 4); Format(V); return; }
  case ScalarType::U64: { uint64_t V; std::memcpy(&V, P, 8); Format(V); return; }
  case ScalarType::F16: { uint16_t V; std::memcpy(&V, P, 2); Format(halfToFloat(V)); return; }
  case ScalarType::BF16: { uint16_t V; std::memcpy(&V, P, 2); Format(bf16ToFloat(V)); return; }
  case ScalarType::F32: { float V; std::memcpy(&V, P, 4); Format(V); return; }
  case ScalarType::F64: { double V; std::memcpy(&V, P, 8); Format(V); return; }
  case ScalarType::F8E4M3: Format(f8e4m3ToFloat(*P)); return;
  case ScalarType::F8E5M2: Format(f8e5m2ToFloat(*P)); return;
  }
}

void appendTile(std::string &Out, ScalarType T, const uint8_t *&P,
                unsigned Dim, unsigned Rank, const int64_t *Shape) {
  Out += '[';
  for (int64_t I = 0; I < Shape[Dim]; ++I) {
    if (I)
      Out += ", ";
    if (Dim + 1 == Rank) {
      appendScalar(Out, T, P);
      P += typeSize(T);
    } else {
      appendTile(Out, T, P, Dim + 1, Rank, Shape);
    }
  }
  Out += ']';
}

/// The text of one print call: the text, then the value(s).
std::string formatPrint(const char *Text, int32_t Kind, const void *Values,
                        int64_t Count, int32_t Rank, const int64_t *Shape) {
  std::string Line = Text ? Text : "";
  if (!Values || Count <= 0)
    return Line;
  if (Kind < 0 || Kind > int32_t(ScalarType::F8E5M2))
    return Line + "<value of unknown kind " + std::to_string(Kind) + ">";
  ScalarType T = ScalarType(Kind);
  const uint8_t *P = static_cast<const uint8_t *>(Values);
  if (Rank <= 0 && Count == 1) {
    appendScalar(Line, T, P);
    return Line;
  }
  bool ShapeMatches = Rank >= 1 && Rank <= 3 && Shape;
  int64_t Product = 1;
  for (int32_t D = 0; ShapeMatches && D < Rank; ++D) {
    if (Shape[D] < 0 || (Shape[D] && Product > Count / Shape[D]))
      ShapeMatches = false;
    else
      Product *= Shape[D];
  }
  if (ShapeMatches && Product == Count) {
    appendTile(Line, T, P, 0, unsigned(Rank), Shape);
    return Line;
  }
  int64_t Flat[1] = {Count};
  appendTile(Line, T, P, 0, 1, Flat);
  return Line;
}

class HostDevice : public HostMemoryDevice {
public:
  explicit HostDevice(unsigned Threads) : Threads(Threads) {}

  DeviceKind kind() const override { return DeviceKind::Host; }
  std::string name() const override { return "host"; }
  std::string description() const override {
    return "host (" + std::to_string(Threads) +
           (Threads == 1 ? " thread)" : " threads)");
  }

  DeviceProperties properties() const override {
    DeviceProperties P;
    P.Kind = DeviceKind::Host;
    P.Model = "host";
    const HostTarget &T = hostTarget();
    P.Arch = T.Names.empty() ? "unknown" : T.Names.front();
    P.ComputeUnits = Threads;
    P.MemoryBytes = physicalMemoryBytes();
    return P;
  }

  int rankImage(const ImageInfo &Image) const override {
    // Tensor maps are Hopper's (TMA): never in a host code object.
    if (!Image.TensorMaps.empty())
      return 0;
    return hostTarget().rank(Image);
  }
  std::string whyNot(const ImageInfo &Image) const override {
    if (!Image.TensorMaps.empty() && hostTarget().matchesTriple(Image))
      return "takes TMA tensor maps, which only NVIDIA GPUs run";
    return hostTarget().whyNot(Image);
  }
  std::string targetDescription() const override {
    return "host (" + hostTarget().describe() + ")";
  }
  Expected<std::unique_ptr<LoadedImage>>
  loadImage(const ImageInfo &Image, const uint8_t *Bytes) override {
    startPool(); // so that a launch after Kernel::load does not wait for it
    Expected<std::unique_ptr<HostImage>> I =
        HostImage::load(Image, Bytes, Image.Entry);
    if (!I)
      return I.takeError();
    return std::unique_ptr<LoadedImage>(std::move(*I));
  }
  int64_t maxGridAxis(unsigned) const override { return INT32_MAX; }

  Error launch(StreamImpl &, LoadedImage &Image, void **Args,
               const GridDims &Grid,
               const std::vector<TensorMap> &Maps) override;

private:
  void startPool() {
    std::call_once(PoolOnce, [&] {
      Pool.reset(new ThreadPool(Threads, kWorkerStackBytes));
    });
  }

  unsigned Threads;
  std::once_flag PoolOnce;
  std::unique_ptr<ThreadPool> Pool;
  std::mutex LaunchMutex;
};

void printCallback(void *Runtime, const char *Text, int32_t Kind,
                   const void *Values, int64_t Count, int32_t Rank,
                   const int64_t *Shape) {
  auto *Ctx = static_cast<ProgramContext *>(Runtime);
  Ctx->State->Device->emitPrint(
      formatPrint(Text, Kind, Values, Count, Rank, Shape));
}

void trapCallback(void *Runtime, const char *Message) {
  auto *Ctx = static_cast<ProgramContext *>(Runtime);
  LaunchState &S = *Ctx->State;
  std::lock_guard<std::mutex> Lock(S.TrapMutex);
  if (S.Stop.load())
    return;
  const int32_t *Id = Ctx->Program.program_id;
  S.TrapMessage = std::string(Message && *Message ? Message : "trap") +
                  " (in program " + std::to_string(Id[0]) + ", " +
                  std::to_string(Id[1]) + ", " + std::to_string(Id[2]) + ")";
  S.Stop.store(true);
}

int32_t checkCallback(void *Runtime, const void *Address, int64_t Bytes,
                      int32_t IsStore, const char *Where) {
  auto *Ctx = static_cast<ProgramContext *>(Runtime);
  if (Bytes >= 0 &&
      Ctx->State->Device->isAllocated(uintptr_t(Address), uint64_t(Bytes)))
    return 1;
  char Addr[32];
  std::snprintf(Addr, sizeof(Addr), "%p", Address);
  std::string Message = std::string("out-of-range ") +
                        (IsStore ? "store" : "load") + " of " +
                        std::to_string(Bytes) + " bytes at " + Addr + ": " +
                        (Where && *Where ? Where : "unknown location");
  trapCallback(Runtime, Message.c_str());
  return 0;
}

Error HostDevice::launch(StreamImpl &, LoadedImage &Image, void **Args,
                         const GridDims &Grid,
                         const std::vector<TensorMap> &Maps) {
  if (!Maps.empty()) // rankImage rules such images out
    return Error(ErrorCode::LaunchRefused,
                 "the host device runs no code object with tensor maps");
  std::lock_guard<std::mutex> Lock(LaunchMutex);
  startPool();

  LaunchState S;
  S.Entry = static_cast<HostImage &>(Image).entry();
  S.Args = Args;
  S.Grid = Grid;
  S.Device = this;
  S.Total = uint64_t(Grid.X) * uint64_t(Grid.Y) * uint64_t(Grid.Z);
  S.Chunk = std::clamp<uint64_t>(S.Total / (uint64_t(Pool->size()) * 16), 1,
                                 1024);

  std::function<void(unsigned)> Body = [&S](unsigned) {
    ProgramContext Ctx;
    Ctx.State = &S;
    KilnHostProgram &P = Ctx.Program;
    P.num_programs[0] = int32_t(S.Grid.X);
    P.num_programs[1] = int32_t(S.Grid.Y);
    P.num_programs[2] = int32_t(S.Grid.Z);
    P.runtime = &Ctx;
    P.print = &printCallback;
    P.trap = &trapCallback;
    P.check = &checkCallback;
    uint64_t X = uint64_t(S.Grid.X), XY = X * uint64_t(S.Grid.Y);
    while (!S.Stop.load(std::memory_order_relaxed)) {
      uint64_t Begin = S.Next.fetch_add(S.Chunk, std::memory_order_relaxed);
      if (Begin >= S.Total)
        break;
      uint64_t End = std::min(Begin + S.Chunk, S.Total);
      for (uint64_t I = Begin; I < End; ++I) {
        if (S.Stop.load(std::memory_order_relaxed))
          break;
        P.program_id[0] = int32_t(I % X);
        P.program_id[1] = int32_t((I / X) % uint64_t(S.Grid.Y));
        P.program_id[2] = int32_t(I / XY);
        S.Entry(S.Args, &P);
      }
    }
  };
  Pool->run(Body);

  if (S.Stop.load())
    return Error(ErrorCode::KernelTrapped, "kernel trapped: " + S.TrapMessage);
  return Error::success();
}

unsigned hostThreadCount() {
  if (const char *Env = std::getenv("KILN_HOST_THREADS")) {
    unsigned N = 0;
    auto R = std::from_chars(Env, Env + std::strlen(Env), N);
    if (R.ec == std::errc() && *R.ptr == '\0' && N >= 1 && N <= 4096)
      return N;
  }
  unsigned N = std::thread::hardware_concurrency();
  return N ? N : 1;
}

} // namespace

StreamImpl::~StreamImpl() = default;
EventImpl::~EventImpl() = default;
LoadedImage::~LoadedImage() = default;
DeviceImpl::~DeviceImpl() = default;

//===----------------------------------------------------------------------===//
// HostMemoryDevice
//===----------------------------------------------------------------------===//

namespace {
class HostStream : public StreamImpl {};

class HostEvent : public EventImpl {
public:
  bool Recorded = false;
  std::chrono::steady_clock::time_point Time;
};
} // namespace

uint64_t HostMemoryDevice::physicalMemoryBytes() {
  long Pages = sysconf(_SC_PHYS_PAGES), PageSize = sysconf(_SC_PAGESIZE);
  if (Pages > 0 && PageSize > 0)
    return uint64_t(Pages) * uint64_t(PageSize);
  return 0;
}

Expected<void *> HostMemoryDevice::allocate(size_t Bytes) {
  size_t Rounded = (std::max<size_t>(Bytes, 1) + kAllocAlignment - 1) /
                   kAllocAlignment * kAllocAlignment;
  if (Rounded < Bytes)
    return Error(ErrorCode::OutOfMemory,
                 "cannot allocate " + std::to_string(Bytes) + " bytes");
  void *P = fault::inject(fault::Point::Allocate, "aligned_alloc")
                ? nullptr
                : std::aligned_alloc(kAllocAlignment, Rounded);
  if (!P)
    return Error(ErrorCode::OutOfMemory, "cannot allocate " +
                                             std::to_string(Bytes) +
                                             " bytes of host memory");
  Allocations.add(uintptr_t(P), Bytes);
  return P;
}

void HostMemoryDevice::release(void *Ptr) {
  Allocations.remove(uintptr_t(Ptr));
  std::free(Ptr);
}

bool HostMemoryDevice::isAllocated(uintptr_t Address, uint64_t Bytes) {
  return Allocations.contains(Address, Bytes);
}

std::optional<std::pair<uintptr_t, size_t>>
HostMemoryDevice::allocationOf(const void *Address) {
  return Allocations.find(uintptr_t(Address));
}

Expected<std::unique_ptr<StreamImpl>> HostMemoryDevice::createStream() {
  return std::unique_ptr<StreamImpl>(new HostStream());
}
Expected<std::unique_ptr<EventImpl>> HostMemoryDevice::createEvent() {
  return std::unique_ptr<EventImpl>(new HostEvent());
}

Error HostMemoryDevice::copy(StreamImpl &, void *Dst, const void *Src,
                             size_t Bytes, CopyKind) {
  if (Bytes)
    std::memmove(Dst, Src, Bytes);
  return Error::success();
}
Error HostMemoryDevice::fill(StreamImpl &, void *Dst, uint8_t Value,
                             size_t Bytes) {
  if (Bytes)
    std::memset(Dst, Value, Bytes);
  return Error::success();
}
Error HostMemoryDevice::record(StreamImpl &, EventImpl &E) {
  auto &HE = static_cast<HostEvent &>(E);
  HE.Time = std::chrono::steady_clock::now();
  HE.Recorded = true;
  return Error::success();
}
Error HostMemoryDevice::synchronize(StreamImpl &) { return Error::success(); }
Error HostMemoryDevice::synchronize(EventImpl &E) {
  if (!static_cast<HostEvent &>(E).Recorded)
    return Error(ErrorCode::InvalidArgument,
                 "the event has not been recorded");
  return Error::success();
}
Expected<double> HostMemoryDevice::elapsedMilliseconds(EventImpl &Start,
                                                       EventImpl &End) {
  auto &S = static_cast<HostEvent &>(Start);
  auto &E = static_cast<HostEvent &>(End);
  if (!S.Recorded || !E.Recorded)
    return Error(ErrorCode::InvalidArgument,
                 "elapsed time of an event that has not been recorded");
  return std::chrono::duration<double, std::milli>(E.Time - S.Time).count();
}

void HostMemoryDevice::setPrintHandler(PrintHandler H) {
  Prints.set(std::move(H));
}

void HostMemoryDevice::emitPrint(const std::string &Line) {
  Prints.emit(Line);
}

Expected<std::shared_ptr<DeviceImpl>> kiln::rt::detail::openHostDevice() {
  return std::shared_ptr<DeviceImpl>(
      std::make_shared<HostDevice>(hostThreadCount()));
}
