//===- BundleReader.cpp - Reading .kpack bundles --------------------------===//
//
// LLVM's OffloadBinary::create trusts the string-map offsets it reads, so
// every offset of a binary is checked here first. The manifest JSON is
// decoded field by field with type checks: nlohmann::json accessors of the
// wrong type would throw, and Kiln reports errors as values.
//
//===----------------------------------------------------------------------===//
#include "compiler/Bundle/BundleReader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Object/OffloadBinary.h"
#include "llvm/Support/Alignment.h"
#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <limits>
#include <memory>
#include <set>

using namespace kiln;
using namespace kiln::bundle;
using llvm::object::OffloadBinary;
using Json = nlohmann::json;

namespace {

llvm::Error corrupt(const llvm::Twine &msg) {
  return llvm::createStringError("corrupt bundle: " + msg);
}

llvm::Error notABundle(const llvm::Twine &why) {
  return llvm::createStringError("not a kiln bundle (" + why + ")");
}

template <typename T> T readStruct(llvm::StringRef data, uint64_t offset) {
  T value;
  std::memcpy(&value, data.data() + offset, sizeof(T));
  return value;
}

/// Checks every field of the offloading binary at `offset` (8-aligned in an
/// 8-aligned buffer), then lets LLVM parse it.
llvm::Expected<std::unique_ptr<OffloadBinary>>
parseBinary(llvm::StringRef data, uint64_t offset) {
  using Header = OffloadBinary::Header;
  using Entry = OffloadBinary::Entry;
  using StringEntry = OffloadBinary::StringEntry;
  bool first = offset == 0;
  uint64_t left = data.size() - offset;
  std::string at = "at offset " + std::to_string(offset);
  if (left < sizeof(Header)) {
    if (first)
      return notABundle("the file has only " + llvm::Twine(left) + " bytes");
    return corrupt("truncated: " + llvm::Twine(left) + " bytes " + at +
                   ", too few for an offloading binary");
  }
  Header header = readStruct<Header>(data, offset);
  static const uint8_t kMagic[4] = {0x10, 0xFF, 0x10, 0xAD};
  if (std::memcmp(header.Magic, kMagic, sizeof(kMagic)) != 0) {
    if (first)
      return notABundle("no offloading binary at its start");
    return corrupt("no offloading binary " + at);
  }
  if (header.Version != OffloadBinary::Version)
    return llvm::createStringError(
        "unsupported offloading binary version " +
        llvm::Twine(header.Version) + " " + at + " (this kiln reads version " +
        llvm::Twine(OffloadBinary::Version) + ")");
  if (header.Size > left)
    return corrupt("truncated: the offloading binary " + at + " has " +
                   llvm::Twine(header.Size) + " bytes, the file only " +
                   llvm::Twine(left) + " left");
  uint64_t size = header.Size;
  if (size < sizeof(Header) + sizeof(Entry) ||
      size % OffloadBinary::getAlignment() != 0)
    return corrupt("the offloading binary " + at + " has an invalid size (" +
                   llvm::Twine(size) + ")");
  if (header.EntryOffset % alignof(Entry) != 0 ||
      header.EntryOffset > size - sizeof(Entry) ||
      header.EntrySize < sizeof(Entry) ||
      header.EntrySize > size - header.EntryOffset)
    return corrupt("the entry of the offloading binary " + at +
                   " lies outside it");
  llvm::StringRef binary = data.substr(offset, size);
  Entry entry = readStruct<Entry>(binary, header.EntryOffset);
  if (entry.StringOffset % alignof(StringEntry) != 0 ||
      entry.StringOffset > size ||
      entry.NumStrings > (size - entry.StringOffset) / sizeof(StringEntry))
    return corrupt("the string map of the offloading binary " + at +
                   " lies outside it");
  for (uint64_t i = 0; i < entry.NumStrings; ++i) {
    auto s = readStruct<StringEntry>(
        binary, entry.StringOffset + i * sizeof(StringEntry));
    for (uint64_t o : {s.KeyOffset, s.ValueOffset})
      if (o >= size || binary.find('\0', o) == llvm::StringRef::npos)
        return corrupt("a string of the offloading binary " + at +
                       " lies outside it");
  }
  if (entry.ImageOffset > size || entry.ImageSize > size - entry.ImageOffset)
    return corrupt("the image of the offloading binary " + at +
                   " lies outside it");
  auto parsed = OffloadBinary::create(llvm::MemoryBufferRef(binary, ""));
  if (!parsed)
    return corrupt(llvm::toString(parsed.takeError()) + " " + at);
  return std::move(*parsed);
}

/// Checks a `kiln.format-version` string: a version this kiln reads and,
/// for an image (`manifest` not 0), the manifest's.
llvm::Error checkFormatVersion(const OffloadBinary &binary, uint64_t offset,
                               unsigned &version, unsigned manifest = 0) {
  llvm::StringRef text = binary.getString("kiln.format-version");
  if (text.getAsInteger(10, version))
    return corrupt("the offloading binary at offset " + llvm::Twine(offset) +
                   " has no valid kiln.format-version ('" + text + "')");
  if (version < kMinFormatVersion || version > kFormatVersion)
    return llvm::createStringError(
        "unsupported kiln bundle format version " + llvm::Twine(version) +
        " (this kiln reads versions " + llvm::Twine(kMinFormatVersion) +
        (kMinFormatVersion + 1 == kFormatVersion ? " and " : " to ") +
        llvm::Twine(kFormatVersion) + ")");
  if (manifest && version != manifest)
    return corrupt("the offloading binary at offset " + llvm::Twine(offset) +
                   " has format version " + llvm::Twine(version) +
                   ", the manifest " + llvm::Twine(manifest));
  return llvm::Error::success();
}

/// Decodes the manifest JSON; the first error wins and names its path,
/// e.g. "kernels[0].params[2].type: expected a string".
class ManifestDecoder {
public:
  std::string error;
  unsigned version = 0; ///< the manifest binary's kiln.format-version

  bool fail(const std::string &path, const std::string &what) {
    if (error.empty())
      error = path.empty() ? what : path + ": " + what;
    return false;
  }

  const Json *field(const Json &obj, const std::string &path, const char *key,
                    bool optional = false) {
    auto it = obj.find(key);
    if (it != obj.end())
      return &*it;
    if (!optional)
      fail(path, std::string("missing '") + key + "'");
    return nullptr;
  }

  bool string(const Json &obj, const std::string &path, const char *key,
              std::string &out, bool optional = false) {
    const Json *j = field(obj, path, key, optional);
    if (!j)
      return optional;
    if (!j->is_string())
      return fail(join(path, key), "expected a string");
    out = j->get_ref<const std::string &>();
    return true;
  }

  bool integer(const Json &j, const std::string &path, int64_t &out) {
    if (j.is_number_integer() && !j.is_number_unsigned()) {
      out = j.get<int64_t>();
      return true;
    }
    if (j.is_number_unsigned() &&
        j.get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max())) {
      out = int64_t(j.get<uint64_t>());
      return true;
    }
    return fail(path, "expected an integer");
  }

  bool integer(const Json &obj, const std::string &path, const char *key,
               int64_t &out, bool optional = false) {
    const Json *j = field(obj, path, key, optional);
    if (!j)
      return optional;
    return integer(*j, join(path, key), out);
  }

  const Json *array(const Json &obj, const std::string &path, const char *key) {
    const Json *j = field(obj, path, key);
    if (j && !j->is_array()) {
      fail(join(path, key), "expected an array");
      return nullptr;
    }
    return j;
  }

  bool strings(const Json &obj, const std::string &path, const char *key,
               std::vector<std::string> &out) {
    const Json *a = array(obj, path, key);
    if (!a)
      return false;
    for (size_t i = 0; i < a->size(); ++i) {
      if (!(*a)[i].is_string())
        return fail(index(join(path, key), i), "expected a string");
      out.push_back((*a)[i].get_ref<const std::string &>());
    }
    return true;
  }

  bool object(const Json &j, const std::string &path) {
    return j.is_object() || fail(path, "expected an object");
  }

  static std::string join(const std::string &path, const char *key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string index(const std::string &path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  bool decodeParam(const Json &j, const std::string &path, ParamSignature &p) {
    if (!object(j, path) || !string(j, path, "name", p.name) ||
        !string(j, path, "type", p.type) ||
        !integer(j, path, "align", p.align, /*optional=*/true) ||
        !integer(j, path, "div", p.div, /*optional=*/true))
      return false;
    if (p.align < 0 || p.div < 0)
      return fail(path, "a negative 'align' or 'div'");
    return true;
  }

  bool decodeVariant(const Json &j, const std::string &path,
                     const KernelSignature &sig, VariantMetadata &v,
                     std::vector<Image> &images) {
    if (!object(j, path) || !integer(j, path, "index", v.index))
      return false;
    const Json *constValues = field(j, path, "const");
    if (!constValues || !object(*constValues, join(path, "const")))
      return false;
    for (const std::string &name : sig.constParams) {
      int64_t value;
      if (!integer(*constValues, join(path, "const"), name.c_str(), value))
        return false;
      v.constValues.emplace_back(name, value);
    }
    if (constValues->size() != sig.constParams.size())
      return fail(join(path, "const"), "a value for an undeclared const param");
    const Json *imgs = array(j, path, "images");
    if (!imgs)
      return false;
    for (size_t i = 0; i < imgs->size(); ++i) {
      const Json &img = (*imgs)[i];
      std::string p = index(join(path, "images"), i);
      Image image;
      image.kernel = sig.name;
      image.variant = v.index;
      if (!object(img, p) || !string(img, p, "target", image.target) ||
          !string(img, p, "triple", image.triple) ||
          !string(img, p, "arch", image.arch) ||
          !string(img, p, "entry", image.entry))
        return false;
      const Json *resources = field(img, p, "resources");
      if (!resources || !object(*resources, join(p, "resources")))
        return false;
      image.resourcesJson =
          resources->dump(-1, ' ', false, Json::error_handler_t::replace);
      // Optional: the earlier image whose code object this one shares.
      if (auto it = img.find("shares"); it != img.end()) {
        if (!it->is_number_integer() || it->get<int64_t>() < 0 ||
            it->get<int64_t>() >= int64_t(images.size())) {
          error = join(p, "shares") + " must be the index of an earlier image";
          return false;
        }
        image.shares = it->get<int64_t>();
        const Image &from = images[size_t(image.shares)];
        if (from.shares >= 0) {
          error = join(p, "shares") + " names an image that shares another's";
          return false;
        }
        if (from.triple != image.triple || from.arch != image.arch ||
            from.entry != image.entry) {
          error = join(p, "shares") + " names an image of another triple, "
                                      "arch or entry";
          return false;
        }
      }
      // Optional: what a device needs, what the arguments must satisfy.
      for (auto [key, out] : {std::pair{"requires", &image.requiresJson},
                              std::pair{"assumes", &image.assumesJson}}) {
        auto it = img.find(key);
        if (it == img.end())
          continue;
        if (!object(*it, join(p, key)))
          return false;
        *out = it->dump(-1, ' ', false, Json::error_handler_t::replace);
      }
      // Optional (format 4): the tensor maps the code object takes.
      if (auto it = img.find("tensor_maps"); it != img.end()) {
        if (version < kTensorMapsFormatVersion)
          return fail(join(p, "tensor_maps"),
                      "needs format version " +
                          std::to_string(kTensorMapsFormatVersion) +
                          ", the bundle is version " + std::to_string(version));
        if (!it->is_array())
          return fail(join(p, "tensor_maps"), "expected an array");
        for (size_t m = 0; m < it->size(); ++m)
          if (!object((*it)[m], index(join(p, "tensor_maps"), m)))
            return false;
        image.tensorMapsJson =
            it->dump(-1, ' ', false, Json::error_handler_t::replace);
      }
      images.push_back(std::move(image));
    }
    return true;
  }

  bool decodeKernel(const Json &j, const std::string &path, KernelMetadata &k,
                    std::vector<Image> &images) {
    KernelSignature &sig = k.signature;
    if (!object(j, path) || !string(j, path, "name", sig.name))
      return false;
    const Json *params = array(j, path, "params");
    if (!params)
      return false;
    for (size_t i = 0; i < params->size(); ++i) {
      ParamSignature p;
      if (!decodeParam((*params)[i], index(join(path, "params"), i), p))
        return false;
      sig.params.push_back(std::move(p));
    }
    if (!strings(j, path, "const_params", sig.constParams) ||
        !strings(j, path, "grid", k.grid) || !strings(j, path, "key", k.key) ||
        !strings(j, path, "launch_conditions", k.launchConditions))
      return false;
    const Json *variants = array(j, path, "variants");
    if (!variants)
      return false;
    for (size_t i = 0; i < variants->size(); ++i) {
      VariantMetadata v;
      if (!decodeVariant((*variants)[i], index(join(path, "variants"), i), sig,
                         v, images))
        return false;
      k.variants.push_back(std::move(v));
    }
    return true;
  }

  bool decode(const Json &j, Bundle &bundle) {
    if (!object(j, ""))
      return false;
    std::string format;
    int64_t version;
    if (!string(j, "", "format", format) ||
        !integer(j, "", "version", version) ||
        !string(j, "", "source", bundle.source) ||
        !string(j, "", "host_cpu", bundle.hostCpu, /*optional=*/true))
      return false;
    if (format != kFormatName)
      return fail("format", "'" + format + "', expected '" + kFormatName + "'");
    if (version != int64_t(this->version))
      return fail("version", std::to_string(version) +
                                 ", but the binary's kiln.format-version is " +
                                 std::to_string(this->version));
    const Json *kernels = array(j, "", "kernels");
    if (!kernels)
      return false;
    for (size_t i = 0; i < kernels->size(); ++i) {
      KernelMetadata k;
      if (!decodeKernel((*kernels)[i], index("kernels", i), k, bundle.images))
        return false;
      bundle.kernels.push_back(std::move(k));
    }
    return true;
  }
};

std::string describe(const Image &image) {
  return "kernel '" + image.kernel + "' variant " +
         std::to_string(image.variant) + " (" + image.triple + ", " +
         image.arch + ", entry '" + image.entry + "')";
}

} // namespace

llvm::Expected<BundleFile> bundle::readBundle(llvm::MemoryBufferRef file) {
  llvm::StringRef data = file.getBuffer();
  if (data.empty())
    return notABundle("the file is empty");
  // LLVM's parser wants 8-aligned binaries.
  std::unique_ptr<llvm::MemoryBuffer> copy;
  if (!llvm::isAddrAligned(llvm::Align(OffloadBinary::getAlignment()),
                           data.data())) {
    copy = llvm::MemoryBuffer::getMemBufferCopy(data);
    data = copy->getBuffer();
  }

  auto manifest = parseBinary(data, 0);
  if (!manifest)
    return manifest.takeError();
  llvm::StringRef format = (*manifest)->getString("kiln.format");
  if (format != kFormatName)
    return notABundle(format.empty()
                          ? std::string("its first offloading binary has no "
                                        "kiln.format string")
                          : "its format is '" + format.str() + "'");
  unsigned version;
  if (llvm::Error err = checkFormatVersion(**manifest, 0, version))
    return std::move(err);

  BundleFile result;
  result.formatVersion = version;
  result.manifestJson = (*manifest)->getImage().str();
  Json json = Json::parse(result.manifestJson, nullptr,
                          /*allow_exceptions=*/false);
  if (json.is_discarded())
    return corrupt("the manifest is not valid JSON");
  ManifestDecoder decoder;
  decoder.version = version;
  if (!decoder.decode(json, result.bundle))
    return corrupt("manifest: " + decoder.error);

  // The binaries that follow are the manifest's images that have their
  // own code object, in its order; the others share an earlier one's.
  std::vector<Image> &images = result.bundle.images;
  size_t found = 0;
  auto shareEarlier = [&] {
    while (found < images.size() && images[found].shares >= 0) {
      const Image &from = images[size_t(images[found].shares)];
      images[found].imageKind = from.imageKind;
      images[found].offloadKind = from.offloadKind;
      images[found].bytes = from.bytes;
      result.placements.push_back(result.placements[size_t(images[found].shares)]);
      ++found;
    }
  };
  shareEarlier();
  for (uint64_t offset = (*manifest)->getSize(); offset < data.size();
       ++found, shareEarlier()) {
    auto binary = parseBinary(data, offset);
    if (!binary)
      return binary.takeError();
    unsigned imageVersion;
    if (llvm::Error err =
            checkFormatVersion(**binary, offset, imageVersion, version))
      return std::move(err);
    if (found == images.size())
      return corrupt("the manifest lists " + llvm::Twine(images.size()) +
                     " images, but there is another one at offset " +
                     llvm::Twine(offset));
    Image &image = images[found];
    Image stored;
    stored.kernel = (*binary)->getString("kiln.kernel").str();
    llvm::StringRef variant = (*binary)->getString("kiln.variant");
    if (variant.getAsInteger(10, stored.variant))
      stored.variant = -1;
    stored.triple = (*binary)->getTriple().str();
    stored.arch = (*binary)->getArch().str();
    stored.entry = (*binary)->getString("kiln.entry").str();
    if (stored.kernel != image.kernel || stored.variant != image.variant ||
        stored.triple != image.triple || stored.arch != image.arch ||
        stored.entry != image.entry)
      return corrupt("the image at offset " + llvm::Twine(offset) + " is " +
                     describe(stored) + " where the manifest lists " +
                     describe(image));
    image.imageKind = (*binary)->getImageKind();
    image.offloadKind = (*binary)->getOffloadKind();
    image.bytes = (*binary)->getImage().str();
    ImagePlacement placement;
    placement.binaryOffset = offset;
    placement.binarySize = (*binary)->getSize();
    placement.imageOffset =
        offset + uint64_t((*binary)->getImage().data() - (data.data() + offset));
    result.placements.push_back(placement);
    offset += (*binary)->getSize();
  }
  if (found != images.size())
    return corrupt("truncated: the manifest lists " +
                   llvm::Twine(images.size()) + " images, the file holds " +
                   llvm::Twine(found));
  return std::move(result);
}
