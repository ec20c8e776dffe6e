//===- kiln/launcher.h - Typed device pointers, embedded bundles -*- C++ -*-===//
//
// What the launchers that `kiln compile --emit=launcher-header` generates
// (and `kiln_add_kernels` in CMake, docs/cmake.md) are written in:
//
//   - the language's 16-bit and 8-bit float types as distinct C++ types
//     (f16, bf16, f8e4m3, f8e5m2), so that a `*bf16` parameter never takes
//     a pointer to floats or to halves;
//   - DevicePtr<T>, a typed device address (a Buffer, or a part of one),
//     and DeviceArray<T>, a typed owning buffer with copies to and from
//     the host;
//   - EmbeddedBundle, a bundle compiled into the program: it loads its
//     code objects on a device at the first launch there and keeps them.
//
//   auto Dev = kiln::rt::Device::open("auto");
//   auto S = Dev->createStream();
//   auto X = kiln::rt::DeviceArray<float>::allocate(*Dev, N);
//   X->upload(*S, HostX.data(), N);
//   kiln::rt::Error E = mykernels::vector_add(*S, *X, *Y, *Z, N);
//
// docs/runtime.md ("Generated launchers") describes them.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_LAUNCHER_H
#define KILN_LAUNCHER_H

#include "kiln/runtime.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kiln::rt {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

namespace detail {
/// What the four float types share: the bit pattern, fromBits, and the
/// explicit conversion to float. Derived adds its constructor from float.
template <typename Derived, typename BitsT, float (*Decode)(BitsT)>
struct FloatBits {
  BitsT bits = 0;
  static Derived fromBits(BitsT Bits) {
    Derived D;
    D.bits = Bits;
    return D;
  }
  explicit operator float() const { return Decode(bits); }
};
} // namespace detail

/// An IEEE half: its 16-bit pattern. Converts from and to float explicitly.
struct f16 : detail::FloatBits<f16, uint16_t, halfToFloat> {
  f16() = default;
  explicit f16(float Value) { bits = floatToHalf(Value); }
};

/// A bfloat16: its 16-bit pattern (round to nearest even from float).
struct bf16 : detail::FloatBits<bf16, uint16_t, bf16ToFloat> {
  bf16() = default;
  explicit bf16(float Value) { bits = floatToBF16(Value); }
};

/// OCP FP8 E4M3 (finite, saturating) and E5M2: their 8-bit patterns.
struct f8e4m3 : detail::FloatBits<f8e4m3, uint8_t, f8e4m3ToFloat> {
  f8e4m3() = default;
  explicit f8e4m3(float Value) { bits = floatToF8E4M3(Value); }
};
struct f8e5m2 : detail::FloatBits<f8e5m2, uint8_t, f8e5m2ToFloat> {
  f8e5m2() = default;
  explicit f8e5m2(float Value) { bits = floatToF8E5M2(Value); }
};

static_assert(sizeof(f16) == 2 && sizeof(bf16) == 2 && sizeof(f8e4m3) == 1 &&
                  sizeof(f8e5m2) == 1,
              "element types have their storage size");

/// The language type of a C++ element type: ElementType<float>::value is
/// ScalarType::F32. Defined for bool, the fixed-width integers, float,
/// double and the four types above, and for nothing else.
template <typename T> struct ElementType;
#define KILN_ELEMENT_TYPE(CXX, KIND)                                           \
  template <> struct ElementType<CXX> {                                        \
    static constexpr ScalarType value = ScalarType::KIND;                      \
  };
KILN_ELEMENT_TYPE(bool, Bool)
KILN_ELEMENT_TYPE(int8_t, I8)
KILN_ELEMENT_TYPE(int16_t, I16)
KILN_ELEMENT_TYPE(int32_t, I32)
KILN_ELEMENT_TYPE(int64_t, I64)
KILN_ELEMENT_TYPE(uint8_t, U8)
KILN_ELEMENT_TYPE(uint16_t, U16)
KILN_ELEMENT_TYPE(uint32_t, U32)
KILN_ELEMENT_TYPE(uint64_t, U64)
KILN_ELEMENT_TYPE(f16, F16)
KILN_ELEMENT_TYPE(bf16, BF16)
KILN_ELEMENT_TYPE(float, F32)
KILN_ELEMENT_TYPE(double, F64)
KILN_ELEMENT_TYPE(f8e4m3, F8E4M3)
KILN_ELEMENT_TYPE(f8e5m2, F8E5M2)
#undef KILN_ELEMENT_TYPE

/// Whether T is one of the element types above.
template <typename T, typename = void> struct IsElementType : std::false_type {};
template <typename T>
struct IsElementType<T, std::void_t<decltype(ElementType<T>::value)>>
    : std::true_type {};

//===----------------------------------------------------------------------===//
// Typed device memory
//===----------------------------------------------------------------------===//

/// A device address of T elements: a Buffer (or a part of one, from an
/// element offset) or a raw device address. It does not own the memory:
/// the Buffer must outlive every launch that uses it. A DevicePtr<float>
/// converts to no other DevicePtr, so a launcher's `*bf16` parameter
/// refuses it at compile time.
template <typename T> class DevicePtr {
  static_assert(IsElementType<T>::value,
                "T must be a Kiln element type: bool, int8_t ... uint64_t, "
                "float, double, kiln::rt::f16, bf16, f8e4m3 or f8e5m2");

public:
  /// A null pointer (a kernel may take it if it never dereferences it).
  DevicePtr() : A(Arg::pointer(static_cast<const void *>(nullptr),
                               ElementType<T>::value)) {}
  /// The first element of a buffer, or the element at `ElementOffset`.
  explicit DevicePtr(const Buffer &B, size_t ElementOffset = 0)
      : A(Arg::pointer(B, ElementType<T>::value)
              .advanced(ElementOffset * sizeof(T))) {}
  /// A device address the runtime did not allocate (another library's
  /// memory; on the host device, a host address).
  static DevicePtr fromAddress(const void *Address) {
    DevicePtr P;
    P.A = Arg::pointer(Address, ElementType<T>::value);
    return P;
  }

  /// `Elements` further on (within the same buffer).
  DevicePtr operator+(size_t Elements) const {
    DevicePtr P;
    P.A = A.advanced(Elements * sizeof(T));
    return P;
  }
  const void *address() const { return A.address(); }
  /// The launch argument (a typed pointer).
  const Arg &arg() const { return A; }

private:
  Arg A;
};

/// A buffer of `size()` elements of T on one device. Move-only; converts
/// to DevicePtr<T> (and to no other element type).
template <typename T> class DeviceArray {
  static_assert(IsElementType<T>::value,
                "T must be a Kiln element type: bool, int8_t ... uint64_t, "
                "float, double, kiln::rt::f16, bf16, f8e4m3 or f8e5m2");

public:
  DeviceArray() = default;
  static Expected<DeviceArray> allocate(Device &D, size_t Count) {
    if (Count > SIZE_MAX / sizeof(T))
      return Error(ErrorCode::InvalidArgument,
                   "DeviceArray::allocate: " + std::to_string(Count) +
                       " elements do not fit in memory");
    Expected<Buffer> B = D.allocate(Count * sizeof(T));
    if (!B)
      return B.takeError();
    DeviceArray Array;
    Array.B = std::move(*B);
    Array.Count = Count;
    return Array;
  }

  size_t size() const { return Count; }
  size_t bytes() const { return Count * sizeof(T); }
  Buffer &buffer() { return B; }
  const Buffer &buffer() const { return B; }
  DevicePtr<T> ptr(size_t ElementOffset = 0) const {
    return DevicePtr<T>(B, ElementOffset);
  }
  operator DevicePtr<T>() const { return ptr(); }

  /// Copies `N` elements from the host to elements [Offset, Offset + N).
  Error upload(Stream &S, const T *Host, size_t N, size_t Offset = 0) {
    if (Error E = checkRange("upload", Offset, N))
      return E;
    return S.copyToDevice(B, Offset * sizeof(T), Host, N * sizeof(T));
  }
  Error upload(Stream &S, const std::vector<T> &Host) {
    return upload(S, Host.data(), Host.size());
  }
  /// Copies elements [Offset, Offset + N) to the host (synchronize `S`
  /// before reading them).
  Error download(Stream &S, T *Host, size_t N, size_t Offset = 0) const {
    if (Error E = checkRange("download", Offset, N))
      return E;
    return S.copyToHost(Host, B, Offset * sizeof(T), N * sizeof(T));
  }
  Error download(Stream &S, std::vector<T> &Host) const {
    Host.resize(Count);
    return download(S, Host.data(), Count);
  }

private:
  Error checkRange(const char *What, size_t Offset, size_t N) const {
    if (Offset > Count || N > Count - Offset)
      return Error(ErrorCode::InvalidArgument,
                   std::string("DeviceArray::") + What + ": elements [" +
                       std::to_string(Offset) + ", " +
                       std::to_string(Offset) + " + " + std::to_string(N) +
                       ") are outside the array's " + std::to_string(Count));
    return Error::success();
  }
  Buffer B;
  size_t Count = 0;
};

//===----------------------------------------------------------------------===//
// Embedded bundles
//===----------------------------------------------------------------------===//

namespace detail {
struct EmbeddedState;
} // namespace detail

/// A bundle compiled into the program (the bytes of a .kpack in a static
/// array). Its code objects are loaded on a device at the first use there
/// and stay loaded, with the device open, until release() or the end of
/// the process. Thread-safe: launches on a device it is loaded on share a
/// reader lock and never wait for a load; loads (and the one parse) are
/// serialized, so threads racing to a device's first launch load once.
/// Meant to be a namespace-scope constant: constant-initialized, and never
/// destroyed (no exit-time driver calls).
class EmbeddedBundle {
public:
  constexpr EmbeddedBundle(const void *Data, size_t Size, const char *Name)
      : Data(Data), Size(Size), Name(Name) {}
  EmbeddedBundle(const EmbeddedBundle &) = delete;
  EmbeddedBundle &operator=(const EmbeddedBundle &) = delete;

  const void *data() const { return Data; }
  size_t size() const { return Size; }
  /// The bundle's name in messages: its source file ("softmax.tile").
  const char *name() const { return Name; }

  /// The bundle, read and validated once.
  Expected<Bundle> bundle() const;
  /// The bundle loaded on `D` (loaded at the first call for `D`).
  Expected<Module> module(const Device &D) const;
  /// A kernel of the bundle, on `D`: to plan, tune or launch it untyped.
  Expected<Kernel> kernel(const Device &D, std::string_view Kernel) const;
  /// Launches a kernel on the stream's device (what launchers call).
  Error launch(Stream &S, std::string_view Kernel,
               const std::vector<Arg> &Args,
               const LaunchOptions &Options = {}) const;
  /// Forgets the module loaded on `D`: it is unloaded once no Module or
  /// Kernel handle refers to it. The next use on `D` loads it again.
  void release(const Device &D) const;

private:
  detail::EmbeddedState &state() const;
  const void *Data;
  size_t Size;
  const char *Name;
  mutable std::atomic<detail::EmbeddedState *> State{nullptr};
};

} // namespace kiln::rt

#endif // KILN_LAUNCHER_H
