//===- Bundle.cpp - Reading .kpack bundles --------------------------------===//
//
// A bundle is a sequence of LLVM offloading binaries (container version 1,
// llvm/Object/OffloadBinary.h), each at an 8-byte-aligned offset:
//
//   Header (32 bytes): magic 10 FF 10 AD, u32 version, u64 size,
//                      u64 entry offset, u64 entry size
//   Entry  (40 bytes): u16 image kind, u16 offload kind, u32 flags,
//                      u64 string-map offset, u64 string count,
//                      u64 image offset, u64 image size
//   String map: count x (u64 key offset, u64 value offset), NUL-terminated
//   strings; then the image bytes.
//
// Offsets are relative to the binary's start. Every offset and size is
// checked before it is used: nothing here trusts the file.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

using namespace kiln::rt;
using namespace kiln::rt::detail;

namespace {

constexpr uint64_t kHeaderSize = 32;
constexpr uint64_t kEntrySize = 40;
constexpr uint64_t kStringEntrySize = 16;
constexpr uint64_t kAlignment = 8;
constexpr uint64_t kMaxStrings = limits::kMaxBinaryStrings;
constexpr uint16_t kImageKindLast = 7;    // IMG_LAST
constexpr uint16_t kOffloadKindLast = 16; // OFK_LAST
const uint8_t kMagic[4] = {0x10, 0xFF, 0x10, 0xAD};

uint64_t readLE(const uint8_t *P, unsigned Bytes) {
  uint64_t V = 0;
  for (unsigned I = 0; I < Bytes; ++I)
    V |= uint64_t(P[I]) << (8 * I);
  return V;
}

struct Region {
  uint64_t Begin, Size;
  bool overlaps(const Region &O) const {
    if (Size == 0 || O.Size == 0)
      return false;
    return Begin < O.Begin + O.Size && O.Begin < Begin + Size;
  }
};

/// Checks the header, entry and string map of the binary at `Offset`.
class BinaryReader {
public:
  BinaryReader(const uint8_t *Data, size_t Size, const std::string &Name)
      : Data(Data), Size(Size), Name(Name) {}

  Expected<RawBinary> read(uint64_t Offset, uint64_t &BinarySize) {
    const uint8_t *B = Data + Offset;
    uint64_t Remaining = Size - Offset;
    if (Remaining < 4 || std::memcmp(B, kMagic, 4) != 0) {
      if (Offset == 0)
        return fail(ErrorCode::InvalidBundle,
                    "not a Kiln bundle (it does not start with an "
                    "offloading binary)");
      return corrupt(Offset, "no offloading binary here (trailing data?)");
    }
    if (Remaining < kHeaderSize)
      return fail(ErrorCode::InvalidBundle,
                  "bundle is truncated: the binary at offset " +
                      std::to_string(Offset) + " needs a " +
                      std::to_string(kHeaderSize) + "-byte header, " +
                      std::to_string(Remaining) + " bytes remain");
    uint64_t Version = readLE(B + 4, 4);
    if (Version != kContainerVersion)
      return fail(ErrorCode::UnsupportedVersion,
                  "bundle container version " + std::to_string(Version) +
                      " is not supported (this runtime reads container "
                      "version " +
                      std::to_string(kContainerVersion) + ")");
    BinarySize = readLE(B + 8, 8);
    uint64_t EntryOffset = readLE(B + 16, 8);
    uint64_t EntrySize = readLE(B + 24, 8);
    if (BinarySize > Remaining)
      return fail(ErrorCode::InvalidBundle,
                  "bundle is truncated: the binary at offset " +
                      std::to_string(Offset) + " claims " +
                      std::to_string(BinarySize) + " bytes, " +
                      std::to_string(Remaining) + " remain");
    if (BinarySize < kHeaderSize + kEntrySize)
      return corrupt(Offset, "impossible binary size " +
                                 std::to_string(BinarySize));
    if (EntrySize < kEntrySize || EntryOffset < kHeaderSize ||
        EntryOffset > BinarySize || EntrySize > BinarySize - EntryOffset)
      return corrupt(Offset, "entry (offset " + std::to_string(EntryOffset) +
                                 ", size " + std::to_string(EntrySize) +
                                 ") is outside the binary");
    if (EntryOffset % kAlignment)
      return corrupt(Offset, "misaligned entry offset " +
                                 std::to_string(EntryOffset));

    const uint8_t *E = B + EntryOffset;
    RawBinary Raw;
    Raw.Offset = Offset;
    Raw.ImageKind = uint16_t(readLE(E, 2));
    Raw.OffloadKind = uint16_t(readLE(E + 2, 2));
    Raw.Flags = uint32_t(readLE(E + 4, 4));
    uint64_t StringOffset = readLE(E + 8, 8);
    uint64_t NumStrings = readLE(E + 16, 8);
    uint64_t ImageOffset = readLE(E + 24, 8);
    uint64_t ImageSize = readLE(E + 32, 8);
    if (Raw.ImageKind >= kImageKindLast)
      return corrupt(Offset,
                     "unknown image kind " + std::to_string(Raw.ImageKind));
    if (Raw.OffloadKind >= kOffloadKindLast)
      return corrupt(Offset, "unknown offload kind " +
                                 std::to_string(Raw.OffloadKind));

    if (NumStrings > kMaxStrings)
      return corrupt(Offset, "absurd string count " +
                                 std::to_string(NumStrings));
    Region Entry{EntryOffset, EntrySize};
    Region Strings{StringOffset, NumStrings * kStringEntrySize};
    Region Image{ImageOffset, ImageSize};
    if (StringOffset < kHeaderSize || StringOffset > BinarySize ||
        Strings.Size > BinarySize - StringOffset)
      return corrupt(Offset, "string map (offset " +
                                 std::to_string(StringOffset) + ", " +
                                 std::to_string(NumStrings) +
                                 " entries) is outside the binary");
    if (StringOffset % kAlignment)
      return corrupt(Offset, "misaligned string map offset " +
                                 std::to_string(StringOffset));
    if (ImageSize && ImageOffset % kAlignment)
      return corrupt(Offset, "misaligned image offset " +
                                 std::to_string(ImageOffset));
    if (ImageOffset < kHeaderSize || ImageOffset > BinarySize ||
        ImageSize > BinarySize - ImageOffset)
      return corrupt(Offset, "image (offset " + std::to_string(ImageOffset) +
                                 ", size " + std::to_string(ImageSize) +
                                 ") is outside the binary");
    if (Entry.overlaps(Strings) || Entry.overlaps(Image) ||
        Strings.overlaps(Image))
      return corrupt(Offset, "its entry, string map and image overlap");

    for (uint64_t I = 0; I < NumStrings; ++I) {
      const uint8_t *S = B + StringOffset + I * kStringEntrySize;
      std::string Key, Value;
      if (!readString(B, BinarySize, readLE(S, 8), Key) ||
          !readString(B, BinarySize, readLE(S + 8, 8), Value))
        return corrupt(Offset, "string " + std::to_string(I) +
                                   " is outside the binary or unterminated");
      for (const auto &KV : Raw.Strings)
        if (KV.first == Key)
          return corrupt(Offset, "duplicate string key '" + Key + "'");
      Raw.Strings.emplace_back(std::move(Key), std::move(Value));
    }
    Raw.ImageOffset = Offset + ImageOffset;
    Raw.ImageSize = ImageSize;
    return Raw;
  }

private:
  static bool readString(const uint8_t *B, uint64_t BinarySize, uint64_t At,
                         std::string &Out) {
    if (At < kHeaderSize || At >= BinarySize)
      return false;
    const void *Nul = std::memchr(B + At, 0, BinarySize - At);
    if (!Nul)
      return false;
    Out.assign(reinterpret_cast<const char *>(B + At),
               static_cast<const uint8_t *>(Nul) - (B + At));
    return true;
  }

  Error fail(ErrorCode Code, const std::string &Message) {
    return Error(Code, Name + ": " + Message);
  }

  Error corrupt(uint64_t Offset, const std::string &Message) {
    return fail(ErrorCode::InvalidBundle,
                "bundle is corrupt: binary at offset " +
                    std::to_string(Offset) + ": " + Message);
  }

  const uint8_t *Data;
  size_t Size;
  const std::string &Name;
};

Error bundleError(const std::string &Name, ErrorCode Code,
                  const std::string &Message) {
  return Error(Code, Name + ": " + Message);
}

const char *kFormatKey = "kiln.format";
const char *kFormatVersionKey = "kiln.format-version";

/// Checks a binary's kiln.format-version string: one this runtime reads
/// and, for an image (`Manifest` not 0), the manifest's.
Error checkFormatVersion(const RawBinary &Raw, const std::string &Name,
                         unsigned &Version, unsigned Manifest = 0) {
  const std::string *V = Raw.lookup(kFormatVersionKey);
  if (!V)
    return bundleError(Name, ErrorCode::InvalidBundle,
                       "bundle is corrupt: the binary at offset " +
                           std::to_string(Raw.Offset) + " has no " +
                           kFormatVersionKey);
  Version = 0;
  for (unsigned Known = kMinFormatVersion; Known <= kFormatVersion; ++Known)
    if (*V == std::to_string(Known))
      Version = Known;
  if (!Version) {
    std::string Shown = V->size() > 20 ? V->substr(0, 20) + "..." : *V;
    return bundleError(Name, ErrorCode::UnsupportedVersion,
                       "bundle format version " + Shown +
                           " is not supported " + supportedFormatVersions());
  }
  if (Manifest && Version != Manifest)
    return bundleError(Name, ErrorCode::InvalidBundle,
                       "bundle is corrupt: the binary at offset " +
                           std::to_string(Raw.Offset) + " has format version " +
                           *V + ", the manifest " + std::to_string(Manifest));
  return Error::success();
}

bool sameTensorMaps(const std::vector<TensorMapInfo> &A,
                    const std::vector<TensorMapInfo> &B) {
  auto Same = [](const TensorMapInfo &X, const TensorMapInfo &Y) {
    return X.Param == Y.Param && X.Type == Y.Type && X.Sizes == Y.Sizes &&
           X.Strides == Y.Strides && X.Box == Y.Box && X.Swizzle == Y.Swizzle;
  };
  return A.size() == B.size() && std::equal(A.begin(), A.end(), B.begin(), Same);
}

/// Attaches the code objects to the manifest's images.
Error matchImages(const std::vector<RawBinary> &Binaries, BundleData &Data) {
  const std::string &Name = Data.Name;
  for (size_t I = 1; I < Binaries.size(); ++I) {
    const RawBinary &Raw = Binaries[I];
    unsigned Version;
    if (Error E = checkFormatVersion(Raw, Name, Version, Data.FormatVersion))
      return E;
    std::string Where = "bundle is corrupt: image at offset " +
                        std::to_string(Raw.Offset);
    const char *Keys[] = {"kiln.kernel", "kiln.variant", "kiln.entry",
                          "triple", "arch"};
    for (const char *Key : Keys)
      if (!Raw.lookup(Key))
        return bundleError(Name, ErrorCode::InvalidBundle,
                           Where + " has no '" + Key + "' string");
    const std::string &Kernel = *Raw.lookup("kiln.kernel");
    const std::string &VariantText = *Raw.lookup("kiln.variant");
    const std::string &Triple = *Raw.lookup("triple");
    const std::string &Arch = *Raw.lookup("arch");
    Where += " (kernel '" + Kernel + "', variant " + VariantText + ", " +
             Triple + " " + Arch + ")";

    // A variant may list several images for one triple and arch (with
    // different assumptions): binaries come in manifest order, so each
    // takes the first of its kind that has none yet.
    ImageInfo *Match = nullptr;
    bool Listed = false;
    for (KernelInfo &K : Data.Kernels) {
      if (K.Name != Kernel)
        continue;
      for (VariantInfo &V : K.Variants) {
        if (std::to_string(V.Index) != VariantText)
          continue;
        for (ImageInfo &Img : V.Images)
          if (Img.Triple == Triple && Img.Arch == Arch && Img.Shares < 0) {
            Listed = true;
            if (!Match && !Img.Size && !Img.Offset)
              Match = &Img;
          }
      }
    }
    if (!Listed)
      return bundleError(Name, ErrorCode::InvalidBundle,
                         Where + " is not listed in the manifest");
    if (!Match)
      return bundleError(Name, ErrorCode::InvalidBundle,
                         Where + " appears twice");
    if (Match->Entry != *Raw.lookup("kiln.entry"))
      return bundleError(Name, ErrorCode::InvalidBundle,
                         Where + " has entry '" + *Raw.lookup("kiln.entry") +
                             "' but the manifest says '" + Match->Entry + "'");
    if (Raw.ImageSize == 0)
      return bundleError(Name, ErrorCode::InvalidBundle,
                         Where + " has an empty code object");
    Match->ImageKind = Raw.ImageKind;
    Match->OffloadKind = Raw.OffloadKind;
    Match->Offset = Raw.ImageOffset;
    Match->Size = Raw.ImageSize;
  }
  // Images that share an earlier image's code object (format 3): the
  // index counts every image of the manifest in order.
  std::vector<ImageInfo *> All;
  for (KernelInfo &K : Data.Kernels)
    for (VariantInfo &V : K.Variants)
      for (ImageInfo &Img : V.Images)
        All.push_back(&Img);
  for (size_t I = 0; I < All.size(); ++I) {
    ImageInfo &Img = *All[I];
    if (Img.Shares < 0)
      continue;
    std::string Where = "manifest: image " + std::to_string(I) + " (" +
                        Img.Triple + " " + Img.Arch + ", entry '" + Img.Entry +
                        "')";
    if (Img.Shares >= int64_t(I))
      return bundleError(Name, ErrorCode::InvalidBundle,
                         Where + " shares image " +
                             std::to_string(Img.Shares) +
                             ", which is not an earlier one");
    const ImageInfo &From = *All[size_t(Img.Shares)];
    if (From.Shares >= 0 || From.Triple != Img.Triple ||
        From.Arch != Img.Arch || From.Entry != Img.Entry)
      return bundleError(Name, ErrorCode::InvalidBundle,
                         Where + " shares image " +
                             std::to_string(Img.Shares) +
                             ", which has another triple, arch or entry, or "
                             "shares a third one");
    Img.ImageKind = From.ImageKind;
    Img.OffloadKind = From.OffloadKind;
    Img.Offset = From.Offset;
    Img.Size = From.Size;
  }
  // A variant may have several images for one target: a PTX and a cubin,
  // a generic image and fast paths with more assumptions; never two alike.
  for (const KernelInfo &K : Data.Kernels)
    for (const VariantInfo &V : K.Variants)
      for (size_t I = 0; I < V.Images.size(); ++I)
        for (size_t J = 0; J < I; ++J) {
          const ImageInfo &A = V.Images[I], &B = V.Images[J];
          if (A.Triple == B.Triple && A.Arch == B.Arch &&
              A.ImageKind == B.ImageKind &&
              sameAssumptions(A.Assumes, B.Assumes) &&
              sameTensorMaps(A.TensorMaps, B.TensorMaps))
            return bundleError(
                Name, ErrorCode::InvalidBundle,
                "manifest: kernel '" + K.Name + "': variant " +
                    std::to_string(V.Index) + ": two images for " + A.Triple +
                    " " + A.Arch + " of one kind" +
                    (A.Assumes.count() ? " with the same assumptions" : ""));
        }
  for (const KernelInfo &K : Data.Kernels)
    for (const VariantInfo &V : K.Variants)
      for (const ImageInfo &Img : V.Images)
        if (Img.Size == 0)
          return bundleError(Name, ErrorCode::InvalidBundle,
                             "bundle is corrupt: the manifest lists image " +
                                 K.variantName(V) + " for " + Img.Triple +
                                 " " + Img.Arch +
                                 " but the bundle has no code object for it");
  return Error::success();
}

} // namespace

const std::string *RawBinary::lookup(std::string_view Key) const {
  for (const auto &KV : Strings)
    if (KV.first == Key)
      return &KV.second;
  return nullptr;
}

Expected<std::vector<RawBinary>>
kiln::rt::detail::readContainer(const uint8_t *Data, size_t Size,
                                const std::string &Name) {
  if (Size == 0)
    return bundleError(Name, ErrorCode::InvalidBundle,
                       "not a Kiln bundle (the file is empty)");
  std::vector<RawBinary> Binaries;
  BinaryReader Reader(Data, Size, Name);
  uint64_t Offset = 0;
  while (Offset < Size) {
    uint64_t BinarySize = 0;
    Expected<RawBinary> Raw = Reader.read(Offset, BinarySize);
    if (!Raw)
      return Raw.takeError();
    Binaries.push_back(std::move(*Raw));
    // BinarySize <= Size - Offset, so this cannot overflow.
    Offset = (Offset + BinarySize + kAlignment - 1) / kAlignment * kAlignment;
  }
  return Binaries;
}

Expected<Bundle> Bundle::readMemory(const void *Bytes, size_t Size,
                                    std::string Name) {
  if (Size > limits::kMaxBundleBytes)
    return bundleError(Name, ErrorCode::InvalidBundle,
                       "the bundle is " + byteSize(Size) +
                           ", over the limit of " +
                           byteSize(limits::kMaxBundleBytes));
  std::vector<uint8_t> Copy;
  try {
    const uint8_t *Begin = static_cast<const uint8_t *>(Bytes);
    Copy.assign(Begin, Begin + Size);
  } catch (const std::bad_alloc &) {
    return bundleError(Name, ErrorCode::OutOfMemory,
                       "cannot hold a bundle of " + std::to_string(Size) +
                           " bytes in memory");
  }
  return readOwned(std::move(Copy), std::move(Name));
}

Expected<Bundle> Bundle::readOwned(std::vector<uint8_t> Bytes,
                                   std::string Name) {
  auto Data = std::make_shared<BundleData>();
  Data->Name = std::move(Name);
  Data->Bytes = std::move(Bytes);
  Expected<std::vector<RawBinary>> Binaries =
      readContainer(Data->Bytes.data(), Data->Bytes.size(), Data->Name);
  if (!Binaries)
    return Binaries.takeError();
  const RawBinary &Manifest = (*Binaries)[0];
  const std::string *Format = Manifest.lookup(kFormatKey);
  if (Manifest.ImageKind != 0 || Manifest.OffloadKind != 0 || !Format ||
      *Format != "kiln-bundle")
    return bundleError(Data->Name, ErrorCode::InvalidBundle,
                       "not a Kiln bundle (its first offloading binary is "
                       "not a Kiln manifest)");
  if (Error E = checkFormatVersion(Manifest, Data->Name, Data->FormatVersion))
    return E;
  if (Manifest.ImageSize > limits::kMaxManifestBytes)
    return bundleError(Data->Name, ErrorCode::InvalidBundle,
                       "the manifest is " + byteSize(Manifest.ImageSize) +
                           ", over the limit of " +
                           byteSize(limits::kMaxManifestBytes));
  std::string_view Json(
      reinterpret_cast<const char *>(Data->Bytes.data() + Manifest.ImageOffset),
      Manifest.ImageSize);
  if (Error E = parseManifest(Json, *Data))
    return bundleError(Data->Name, E.code(), E.message());
  if (Error E = matchImages(*Binaries, *Data))
    return E;
  return Bundle(std::move(Data));
}

Expected<Bundle> Bundle::readFile(const std::string &Path) {
  Expected<std::vector<uint8_t>> Bytes =
      detail::readWholeFile(Path, limits::kMaxBundleBytes, "bundle");
  if (!Bytes)
    return Bytes.error();
  return readOwned(std::move(*Bytes), Path);
}

const std::string &Bundle::name() const { return Data->Name; }
const std::string &Bundle::source() const { return Data->Source; }
const std::vector<KernelInfo> &Bundle::kernels() const {
  return Data->Kernels;
}

const KernelInfo *Bundle::findKernel(std::string_view Name) const {
  for (const KernelInfo &K : Data->Kernels)
    if (K.Name == Name)
      return &K;
  return nullptr;
}

const uint8_t *Bundle::imageData(const ImageInfo &Image) const {
  return Data->Bytes.data() + Image.Offset;
}
