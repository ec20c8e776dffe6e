//===- Inspect.cpp - kiln inspect -----------------------------------------===//
//
//   kiln inspect FILE.kpack [--json]
//
// Lists what a bundle holds: per kernel its signature, grid, key, launch
// conditions and variants, per variant its images. With --json: the
// manifest as stored, plus an `images` table of the binaries in the file.
//
//===----------------------------------------------------------------------===//
#include "tools/kiln/Driver.h"

#include "compiler/Bundle/BundleReader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/OffloadBinary.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <string>

using namespace kiln;
using Json = nlohmann::json;

namespace {

std::string imageKindName(uint16_t kind) {
  using namespace llvm::object;
  switch (kind) {
  case IMG_None:
    return "none";
  case IMG_Object:
    return "object";
  case IMG_Bitcode:
    return "bitcode";
  case IMG_Cubin:
    return "cubin";
  case IMG_Fatbinary:
    return "fatbinary";
  case IMG_PTX:
    return "ptx";
  case IMG_SPIRV:
    return "spirv";
  }
  return "kind " + std::to_string(kind);
}

std::string offloadKindName(uint16_t kind) {
  using namespace llvm::object;
  switch (kind) {
  case OFK_None:
    return "none";
  case OFK_OpenMP:
    return "openmp";
  case OFK_Cuda:
    return "cuda";
  case OFK_HIP:
    return "hip";
  case OFK_SYCL:
    return "sycl";
  }
  return "kind " + std::to_string(kind);
}

/// "[M, K]" from a JSON array of strings or integers ("?" for anything
/// else: the reader checked only that maps are objects).
std::string listText(const Json &j) {
  if (!j.is_array())
    return "?";
  std::string out = "[";
  for (size_t i = 0; i < j.size(); ++i) {
    out += i ? ", " : "";
    if (j[i].is_string())
      out += j[i].get<std::string>();
    else if (j[i].is_number_integer())
      out += std::to_string(j[i].get<int64_t>());
    else
      out += "?";
  }
  return out + "]";
}

/// One line per tensor map of an image (docs/bundle.md, "tensor_maps"):
/// "tensor map a: f16 [M, K] strides [lda, 1] box [128, 64] swizzle 128".
void printTensorMaps(const std::string &mapsJson, llvm::raw_ostream &os) {
  Json maps = Json::parse(mapsJson, nullptr, /*allow_exceptions=*/false);
  if (!maps.is_array())
    return;
  auto text = [](const Json &map, const char *key) -> std::string {
    auto it = map.find(key);
    if (it == map.end())
      return "?";
    if (it->is_string())
      return it->get<std::string>();
    if (it->is_number_integer())
      return std::to_string(it->get<int64_t>());
    return listText(*it);
  };
  for (const Json &map : maps) {
    if (!map.is_object())
      continue;
    os << "      tensor map " << text(map, "param") << ": " << text(map, "type")
       << " " << text(map, "sizes") << " strides " << text(map, "strides")
       << " box " << text(map, "box") << " swizzle " << text(map, "swizzle")
       << "\n";
  }
}

void printText(const bundle::BundleFile &file, llvm::raw_ostream &os) {
  const bundle::Bundle &b = file.bundle;
  size_t variants = 0;
  for (const bundle::KernelMetadata &k : b.kernels)
    variants += k.variants.size();
  os << "bundle format " << file.formatVersion << ", source " << b.source
     << ": " << b.kernels.size() << " kernel"
     << (b.kernels.size() == 1 ? "" : "s") << ", " << variants << " variant"
     << (variants == 1 ? "" : "s") << ", " << b.images.size() << " image"
     << (b.images.size() == 1 ? "" : "s") << "\n";
  if (!b.hostCpu.empty())
    os << "host cpu: " << b.hostCpu << "\n";

  size_t next = 0; // Images are in manifest order.
  for (const bundle::KernelMetadata &k : b.kernels) {
    const bundle::KernelSignature &sig = k.signature;
    os << "\nkernel " << sig.name << "(";
    for (auto [i, p] : llvm::enumerate(sig.params)) {
      os << (i ? ", " : "") << p.name << ": " << p.type;
      if (p.align)
        os << " @align(" << p.align << ")";
      if (p.div)
        os << " @div(" << p.div << ")";
    }
    os << ")\n";
    os << "  const params: " << llvm::join(sig.constParams, ", ") << "\n";
    os << "  grid: " << llvm::join(k.grid, ", ") << "\n";
    if (!k.key.empty())
      os << "  key: " << llvm::join(k.key, ", ") << "\n";
    for (const std::string &c : k.launchConditions)
      os << "  at launch: " << c << "\n";
    for (const bundle::VariantMetadata &v : k.variants) {
      os << "  variant " << v.index << ":";
      for (auto [i, cv] : llvm::enumerate(v.constValues))
        os << (i ? ", " : " ") << cv.first << "=" << cv.second;
      os << "\n";
      for (; next < b.images.size() && b.images[next].kernel == sig.name &&
             b.images[next].variant == v.index;
           ++next) {
        const bundle::Image &image = b.images[next];
        os << "    " << image.target << ": triple " << image.triple
           << ", arch " << image.arch << ", entry " << image.entry << ", "
           << imageKindName(image.imageKind);
        if (image.offloadKind)
          os << " (" << offloadKindName(image.offloadKind) << ")";
        // Emulated GPU images (docs/emulator.md) are host objects that
        // only the emulator device runs.
        if (llvm::StringRef(image.arch).starts_with("emu:"))
          os << " (emulated "
             << llvm::StringRef(image.arch).drop_front(4) << ")";
        os << ", " << image.bytes.size() << " bytes";
        // Identical code objects are stored once (docs/bundle.md).
        if (image.shares >= 0) {
          const bundle::Image &from = b.images[size_t(image.shares)];
          os << " (the code object of " << from.kernel << "_v" << from.variant
             << ")";
        }
        if (image.resourcesJson != "{}")
          os << ", resources " << image.resourcesJson;
        if (image.requiresJson != "{}")
          os << ", requires " << image.requiresJson;
        if (image.assumesJson != "{}")
          os << ", assumes " << image.assumesJson;
        os << "\n";
        printTensorMaps(image.tensorMapsJson, os);
      }
    }
  }
}

void printJson(const bundle::BundleFile &file, llvm::raw_ostream &os) {
  // The reader has parsed and checked the manifest already.
  Json manifest = Json::parse(file.manifestJson, nullptr,
                              /*allow_exceptions=*/false);
  Json images = Json::array();
  for (auto [image, placement] :
       llvm::zip_equal(file.bundle.images, file.placements))
    images.push_back({{"kernel", image.kernel},
                      {"variant", image.variant},
                      {"target", image.target},
                      {"triple", image.triple},
                      {"arch", image.arch},
                      {"entry", image.entry},
                      {"image_kind", imageKindName(image.imageKind)},
                      {"offload_kind", offloadKindName(image.offloadKind)},
                      {"emulated",
                       llvm::StringRef(image.arch).starts_with("emu:")},
                      {"offset", placement.imageOffset},
                      {"size", image.bytes.size()}});
  manifest["images"] = std::move(images);
  os << manifest.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

} // namespace

int kiln::runInspect(llvm::ArrayRef<const char *> args) {
  std::string input;
  bool json = false;
  for (llvm::StringRef a : args) {
    if (a == "--json") {
      json = true;
    } else if (a == "-" || !a.starts_with("-")) {
      if (!input.empty())
        return usageError("more than one input file ('" + input + "' and '" +
                          a + "')");
      input = a.str();
    } else {
      return usageError("unknown option '" + a + "'");
    }
  }
  if (input.empty())
    return usageError("no input file");

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(
      input, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) {
    llvm::errs() << "kiln: error: cannot read '" << input
                 << "': " << buffer.getError().message() << "\n";
    return kExitEnv;
  }
  auto file = bundle::readBundle((*buffer)->getMemBufferRef());
  if (!file) {
    llvm::errs() << "kiln: error: '" << input
                 << "': " << llvm::toString(file.takeError()) << "\n";
    return kExitUser;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (json)
    printJson(*file, os);
  else
    printText(*file, os);
  llvm::outs() << text;
  llvm::outs().flush();
  return 0;
}
