//===- Device.cpp - Devices, buffers, streams and events ------------------===//
//
// The public handles over the driver interface (Internal.h): argument
// checking lives here, so that every driver gets the same messages.
//
//===----------------------------------------------------------------------===//

#include "EmuDevice.h"
#include "Internal.h"

#include <cctype>
#include <cstdio>

using namespace kiln::rt;
using namespace kiln::rt::detail;

namespace {

Error invalid(std::string Message) {
  return Error(ErrorCode::InvalidArgument, std::move(Message));
}

/// Checks that [Offset, Offset + Bytes) lies within a buffer.
Error checkRange(const char *What, const Buffer &B, size_t Offset,
                 size_t Bytes) {
  if (!B.data())
    return invalid(std::string(What) + ": the buffer is empty (moved from?)");
  if (Offset > B.size() || Bytes > B.size() - Offset)
    return invalid(std::string(What) + ": " + std::to_string(Bytes) +
                   " bytes at offset " + std::to_string(Offset) +
                   " do not fit in a buffer of " + std::to_string(B.size()) +
                   " bytes");
  return Error::success();
}

Error checkStream(const char *What, const std::shared_ptr<DeviceImpl> &Dev,
                  const void *BufferDevice) {
  if (!Dev)
    return invalid(std::string(What) + ": the stream is empty (moved from?)");
  if (BufferDevice && BufferDevice != Dev.get())
    return invalid(std::string(What) +
                   ": the buffer belongs to another device than the stream");
  return Error::success();
}

/// Parses "cuda", "cuda:3": the ordinal, or -1 if the spec is malformed.
int parseOrdinal(std::string_view Spec, std::string_view Kind) {
  if (Spec == Kind)
    return 0;
  if (Spec.size() <= Kind.size() + 1 || Spec.substr(0, Kind.size()) != Kind ||
      Spec[Kind.size()] != ':')
    return -1;
  std::string_view Digits = Spec.substr(Kind.size() + 1);
  if (Digits.size() > 6)
    return -1;
  int N = 0;
  for (char C : Digits) {
    if (!std::isdigit((unsigned char)C))
      return -1;
    N = N * 10 + (C - '0');
  }
  return N;
}

} // namespace

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//

Expected<Device> Device::open(std::string_view Spec) {
  auto Wrap = [](Expected<std::shared_ptr<DeviceImpl>> D) -> Expected<Device> {
    if (!D)
      return D.takeError();
    return Device(std::move(*D));
  };
  // The GPU vendors, in the order "auto" prefers them.
  struct Vendor {
    const char *Kind;
    bool (*Available)();
    Expected<std::shared_ptr<DeviceImpl>> (*Open)(int, const std::string &);
  };
  static const Vendor Vendors[] = {{"cuda", cudaDeviceAvailable, openCudaDevice},
                                   {"hip", hipDeviceAvailable, openHipDevice}};
  // "auto" takes device 0 of the first vendor with a driver and a device;
  // any failure to open it falls back to the host without a word.
  bool Auto = Spec.empty() || Spec == "auto";
  if (Auto)
    for (const Vendor &V : Vendors)
      if (V.Available())
        if (Expected<std::shared_ptr<DeviceImpl>> D =
                V.Open(0, std::string(V.Kind) + ":0"))
          return Device(std::move(*D));
  if (Auto || Spec == "host")
    return Wrap(openHostDevice());
  for (const Vendor &V : Vendors)
    if (int Ordinal = parseOrdinal(Spec, V.Kind); Ordinal >= 0)
      return Wrap(V.Open(Ordinal, V.Kind + (":" + std::to_string(Ordinal))));
  if (Spec.substr(0, 4) == "emu:")
    return Wrap(openEmuDevice(std::string(Spec.substr(4))));
  std::string Shown(Spec.substr(0, 64));
  return invalid("unknown device '" + Shown +
                 "'; expected auto, host, cuda[:N], hip[:N] or emu:<arch>");
}

void PrintSink::set(PrintHandler H) {
  std::lock_guard<std::mutex> Lock(Mutex);
  Handler = std::move(H);
}

void PrintSink::emit(const std::string &Line) {
  std::lock_guard<std::mutex> Lock(Mutex);
  if (Handler) {
    Handler(Line);
    return;
  }
  std::fwrite(Line.data(), 1, Line.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

DeviceKind Device::kind() const { return Impl->kind(); }
std::string Device::name() const { return Impl->name(); }
std::string Device::description() const { return Impl->description(); }
DeviceProperties Device::properties() const { return Impl->properties(); }

Expected<Buffer> Device::allocate(size_t Bytes) {
  Expected<void *> P = Impl->allocate(Bytes);
  if (!P)
    return P.takeError();
  Buffer B;
  B.Dev = Impl;
  B.Ptr = *P;
  B.Size = Bytes;
  return std::move(B);
}

Expected<Stream> Device::createStream() {
  Expected<std::unique_ptr<StreamImpl>> S = Impl->createStream();
  if (!S)
    return S.takeError();
  Stream Result;
  Result.Dev = Impl;
  Result.Impl = std::move(*S);
  return std::move(Result);
}

Expected<Event> Device::createEvent() {
  Expected<std::unique_ptr<EventImpl>> E = Impl->createEvent();
  if (!E)
    return E.takeError();
  Event Result;
  Result.Dev = Impl;
  Result.Impl = std::move(*E);
  return std::move(Result);
}

Expected<Module> Device::loadModuleFile(const std::string &Path) {
  Expected<Bundle> B = Bundle::readFile(Path);
  if (!B)
    return B.takeError();
  return loadModule(*B);
}

Expected<Module> Device::loadModuleMemory(const void *Data, size_t Size,
                                          std::string Name) {
  Expected<Bundle> B = Bundle::readMemory(Data, Size, std::move(Name));
  if (!B)
    return B.takeError();
  return loadModule(*B);
}

void Device::setPrintHandler(PrintHandler Handler) {
  Impl->setPrintHandler(std::move(Handler));
}

//===----------------------------------------------------------------------===//
// Buffer
//===----------------------------------------------------------------------===//

Buffer::Buffer(Buffer &&Other) noexcept
    : Dev(std::move(Other.Dev)), Ptr(Other.Ptr), Size(Other.Size) {
  Other.Ptr = nullptr;
  Other.Size = 0;
}

Buffer &Buffer::operator=(Buffer &&Other) noexcept {
  if (this == &Other)
    return *this;
  if (Dev && Ptr)
    Dev->release(Ptr);
  Dev = std::move(Other.Dev);
  Ptr = Other.Ptr;
  Size = Other.Size;
  Other.Ptr = nullptr;
  Other.Size = 0;
  return *this;
}

Buffer::~Buffer() {
  if (Dev && Ptr)
    Dev->release(Ptr);
}

//===----------------------------------------------------------------------===//
// Stream
//===----------------------------------------------------------------------===//

Stream::Stream() = default;
Stream::Stream(Stream &&) noexcept = default;
Stream &Stream::operator=(Stream &&) noexcept = default;
Stream::~Stream() = default;

Error Stream::copyToDevice(Buffer &Dst, size_t DstOffset, const void *Src,
                           size_t Bytes) {
  if (Error E = checkStream("copyToDevice", Dev, Dst.deviceTag()))
    return E;
  if (Error E = checkRange("copyToDevice", Dst, DstOffset, Bytes))
    return E;
  if (!Src && Bytes)
    return invalid("copyToDevice: the source is null");
  return Dev->copy(*Impl, static_cast<char *>(Dst.data()) + DstOffset, Src,
                   Bytes, CopyKind::HostToDevice);
}

Error Stream::copyToHost(void *Dst, const Buffer &Src, size_t SrcOffset,
                         size_t Bytes) {
  if (Error E = checkStream("copyToHost", Dev, Src.deviceTag()))
    return E;
  if (Error E = checkRange("copyToHost", Src, SrcOffset, Bytes))
    return E;
  if (!Dst && Bytes)
    return invalid("copyToHost: the destination is null");
  return Dev->copy(*Impl, Dst, static_cast<const char *>(Src.data()) + SrcOffset,
                   Bytes, CopyKind::DeviceToHost);
}

Error Stream::copy(Buffer &Dst, size_t DstOffset, const Buffer &Src,
                   size_t SrcOffset, size_t Bytes) {
  if (Error E = checkStream("copy", Dev, Dst.deviceTag()))
    return E;
  if (Error E = checkStream("copy", Dev, Src.deviceTag()))
    return E;
  if (Error E = checkRange("copy", Dst, DstOffset, Bytes))
    return E;
  if (Error E = checkRange("copy", Src, SrcOffset, Bytes))
    return E;
  return Dev->copy(*Impl, static_cast<char *>(Dst.data()) + DstOffset,
                   static_cast<const char *>(Src.data()) + SrcOffset, Bytes,
                   CopyKind::DeviceToDevice);
}

Error Stream::fill(Buffer &Dst, size_t Offset, uint8_t Value, size_t Bytes) {
  if (Error E = checkStream("fill", Dev, Dst.deviceTag()))
    return E;
  if (Error E = checkRange("fill", Dst, Offset, Bytes))
    return E;
  return Dev->fill(*Impl, static_cast<char *>(Dst.data()) + Offset, Value,
                   Bytes);
}

Error Stream::record(Event &E) {
  if (Error Err = checkStream("record", Dev, nullptr))
    return Err;
  if (!E.Impl || E.Dev != Dev)
    return invalid("record: the event belongs to another device (or is "
                   "empty)");
  return Dev->record(*Impl, *E.Impl);
}

Error Stream::synchronize() {
  if (Error E = checkStream("synchronize", Dev, nullptr))
    return E;
  return Dev->synchronize(*Impl);
}

Expected<Device> Stream::device() const {
  if (Error E = checkStream("device", Dev, nullptr))
    return E;
  return Device(Dev);
}

//===----------------------------------------------------------------------===//
// Event
//===----------------------------------------------------------------------===//

Event::Event() = default;
Event::Event(Event &&) noexcept = default;
Event &Event::operator=(Event &&) noexcept = default;
Event::~Event() = default;

Error Event::synchronize() {
  if (!Impl)
    return invalid("synchronize: the event is empty (moved from?)");
  return Dev->synchronize(*Impl);
}

Expected<double> Event::elapsedMilliseconds(const Event &Start,
                                            const Event &End) {
  if (!Start.Impl || !End.Impl)
    return invalid("elapsedMilliseconds: an event is empty (moved from?)");
  if (Start.Dev != End.Dev)
    return invalid("elapsedMilliseconds: the events belong to different "
                   "devices");
  return Start.Dev->elapsedMilliseconds(*Start.Impl, *End.Impl);
}
