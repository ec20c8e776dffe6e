//===- BundleWriter.cpp - Writing .kpack bundles --------------------------===//
//
// The manifest JSON is built with nlohmann::json, whose objects are sorted
// maps: keys come out sorted without further care. Strings are dumped with
// invalid UTF-8 replaced, so that no input can make the dump throw.
//
//===----------------------------------------------------------------------===//
#include "compiler/Bundle/BundleWriter.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Object/OffloadBinary.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace kiln;
using namespace kiln::bundle;
using Json = nlohmann::json;

namespace {

llvm::Error inconsistent(const llvm::Twine &msg) {
  return llvm::createStringError("cannot write bundle: " + msg);
}

Json toJson(const std::vector<std::string> &strings) {
  Json a = Json::array();
  for (const std::string &s : strings)
    a.push_back(s);
  return a;
}

Json paramJson(const ParamSignature &p) {
  Json j = {{"name", p.name}, {"type", p.type}};
  if (p.align)
    j["align"] = p.align;
  if (p.div)
    j["div"] = p.div;
  return j;
}

/// Appends one offloading binary; LLVM pads each to 8 bytes so that the
/// next one starts aligned.
void appendBinary(std::string &out, uint16_t imageKind, uint16_t offloadKind,
                  const std::map<std::string, std::string> &strings,
                  llvm::StringRef bytes) {
  llvm::object::OffloadBinary::OffloadingImage image;
  image.TheImageKind = static_cast<llvm::object::ImageKind>(imageKind);
  image.TheOffloadKind = static_cast<llvm::object::OffloadKind>(offloadKind);
  image.Flags = 0;
  for (auto &[key, value] : strings) // Sorted: a fixed string-map order.
    image.StringData[key] = value;
  image.Image = llvm::MemoryBuffer::getMemBuffer(bytes, "", false);
  llvm::SmallString<0> binary = llvm::object::OffloadBinary::write(image);
  out.append(binary.data(), binary.size());
  out.resize(llvm::alignTo(out.size(),
                           llvm::object::OffloadBinary::getAlignment()),
             '\0');
}

} // namespace

llvm::Expected<std::string> bundle::writeBundle(const Bundle &bundle) {
  // Validate, and find every image's place: (kernel, variant, target).
  std::map<std::string, size_t> kernelPos;
  std::vector<std::map<int64_t, size_t>> variantPos(bundle.kernels.size());
  for (auto [k, kernel] : llvm::enumerate(bundle.kernels)) {
    const std::string &name = kernel.signature.name;
    if (name.empty())
      return inconsistent("a kernel without a name");
    if (!kernelPos.emplace(name, k).second)
      return inconsistent("two kernels named '" + name + "'");
    for (auto [v, variant] : llvm::enumerate(kernel.variants))
      if (!variantPos[k].emplace(variant.index, v).second)
        return inconsistent("kernel '" + name + "' has two variants " +
                            llvm::Twine(variant.index));
  }
  // A variant may have several images for one target when their
  // assumptions (a generic one and fast paths) or kinds (PTX and cubin)
  // differ.
  using Place =
      std::tuple<size_t, int64_t, std::string, std::string, uint16_t>;
  std::map<Place, const Image *> placed;
  for (const Image &image : bundle.images) {
    auto k = kernelPos.find(image.kernel);
    if (k == kernelPos.end())
      return inconsistent("an image of kernel '" + image.kernel +
                          "', which the bundle's metadata lacks");
    if (!variantPos[k->second].count(image.variant))
      return inconsistent("an image of variant " + llvm::Twine(image.variant) +
                          " of kernel '" + image.kernel +
                          "', which the metadata lacks");
    if (image.target.empty())
      return inconsistent("an image of '" + image.kernel +
                          "' without a target name");
    Json assumes = Json::parse(image.assumesJson, nullptr,
                               /*allow_exceptions=*/false);
    if (!assumes.is_object())
      return inconsistent("the assumptions of variant " +
                          llvm::Twine(image.variant) + " of kernel '" +
                          image.kernel + "' for target '" + image.target +
                          "' are not a JSON object");
    Json tensorMaps = Json::parse(image.tensorMapsJson, nullptr,
                                  /*allow_exceptions=*/false);
    if (!tensorMaps.is_array())
      return inconsistent("the tensor maps of variant " +
                          llvm::Twine(image.variant) + " of kernel '" +
                          image.kernel + "' for target '" + image.target +
                          "' are not a JSON array");
    // Images of one target differ in their assumptions or their tensor
    // maps; they are ordered by both (an image without maps first).
    std::string assumesKey =
        assumes.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (!tensorMaps.empty())
      assumesKey += " tensor_maps " + tensorMaps.dump(
                                          -1, ' ', false,
                                          Json::error_handler_t::replace);
    if (!placed
             .emplace(Place{k->second, image.variant, image.target,
                            assumesKey, image.imageKind},
                      &image)
             .second)
      return inconsistent("two images of one kind of variant " +
                          llvm::Twine(image.variant) + " of kernel '" +
                          image.kernel + "' for target '" + image.target + "'" +
                          (assumes.empty() ? "" : " with the same assumptions"));
  }

  // The manifest lists the images in the order of the binaries. An image
  // whose code object (bytes, kinds, triple, arch and entry) equals an
  // earlier one's has no binary: its manifest entry says "shares": the
  // index of that image (counting every image of the manifest in order).
  std::vector<const Image *> ordered;
  std::map<std::tuple<uint16_t, uint16_t, std::string, std::string,
                      std::string, std::string>,
           int64_t>
      firstOf;
  int64_t imageIndex = 0;
  // The oldest format that holds the bundle (Bundle.h).
  unsigned formatVersion = kMinFormatVersion;
  Json kernels = Json::array();
  for (auto [k, kernel] : llvm::enumerate(bundle.kernels)) {
    const KernelSignature &sig = kernel.signature;
    Json params = Json::array();
    for (const ParamSignature &p : sig.params)
      params.push_back(paramJson(p));
    Json variants = Json::array();
    for (auto &[index, v] : variantPos[k]) {
      const VariantMetadata &variant = kernel.variants[v];
      Json constValues = Json::object();
      for (auto &[name, value] : variant.constValues)
        constValues[name] = value;
      Json images = Json::array();
      for (auto it = placed.lower_bound(Place{k, index, "", "", 0});
           it != placed.end() && std::get<0>(it->first) == k &&
           std::get<1>(it->first) == index;
           ++it) {
        const Image &image = *it->second;
        Json resources = Json::parse(image.resourcesJson, nullptr,
                                     /*allow_exceptions=*/false);
        if (!resources.is_object())
          return inconsistent("the resources of variant " +
                              llvm::Twine(index) + " of kernel '" + sig.name +
                              "' for target '" + image.target +
                              "' are not a JSON object");
        Json requirements = Json::parse(image.requiresJson, nullptr,
                                    /*allow_exceptions=*/false);
        if (!requirements.is_object())
          return inconsistent("the requirements of variant " +
                              llvm::Twine(index) + " of kernel '" + sig.name +
                              "' for target '" + image.target +
                              "' are not a JSON object");
        Json entry = {{"target", image.target},
                      {"triple", image.triple},
                      {"arch", image.arch},
                      {"entry", image.entry},
                      {"resources", std::move(resources)}};
        // Written only when there is something to say (docs/bundle.md).
        if (!requirements.empty())
          entry["requires"] = std::move(requirements);
        Json assumes = Json::parse(image.assumesJson, nullptr,
                                   /*allow_exceptions=*/false);
        if (!assumes.empty())
          entry["assumes"] = std::move(assumes);
        Json tensorMaps = Json::parse(image.tensorMapsJson, nullptr,
                                      /*allow_exceptions=*/false);
        if (!tensorMaps.empty()) {
          entry["tensor_maps"] = std::move(tensorMaps);
          formatVersion = std::max(formatVersion, kTensorMapsFormatVersion);
        }
        auto [first, isNew] = firstOf.emplace(
            std::make_tuple(image.imageKind, image.offloadKind, image.triple,
                            image.arch, image.entry, image.bytes),
            imageIndex);
        if (isNew)
          ordered.push_back(&image);
        else
          entry["shares"] = first->second;
        ++imageIndex;
        images.push_back(std::move(entry));
      }
      variants.push_back({{"index", index},
                          {"const", std::move(constValues)},
                          {"images", std::move(images)}});
    }
    Json entry = {{"name", sig.name},
                  {"params", std::move(params)},
                  {"const_params", toJson(sig.constParams)},
                  {"grid", toJson(kernel.grid)},
                  {"key", toJson(kernel.key)},
                  {"launch_conditions", toJson(kernel.launchConditions)},
                  {"writes", toJson(kernel.writes)},
                  {"variants", std::move(variants)}};
    if (!kernel.hash.empty())
      entry["hash"] = kernel.hash;
    if (!kernel.keyBuckets.empty())
      entry["key_buckets"] = toJson(kernel.keyBuckets);
    if (!kernel.tuned.empty()) {
      Json tuned = Json::array();
      for (const KernelMetadata::TunedChoice &t : kernel.tuned)
        tuned.push_back(
            {{"device", t.device}, {"bucket", t.bucket}, {"variant", t.variant}});
      entry["tuned"] = std::move(tuned);
    }
    kernels.push_back(std::move(entry));
  }
  Json manifest = {{"format", kFormatName},
                   {"version", formatVersion},
                   {"source", bundle.source},
                   {"kernels", std::move(kernels)}};
  if (!bundle.hostCpu.empty())
    manifest["host_cpu"] = bundle.hostCpu;
  std::string manifestText =
      manifest.dump(-1, ' ', false, Json::error_handler_t::replace);

  std::string version = std::to_string(formatVersion);
  std::string out;
  appendBinary(out, llvm::object::IMG_None, llvm::object::OFK_None,
               {{"kiln.format", kFormatName}, {"kiln.format-version", version}},
               manifestText);
  for (const Image *image : ordered)
    appendBinary(out, image->imageKind, image->offloadKind,
                 {{"arch", image->arch},
                  {"kiln.entry", image->entry},
                  {"kiln.format-version", version},
                  {"kiln.kernel", image->kernel},
                  {"kiln.variant", std::to_string(image->variant)},
                  {"triple", image->triple}},
                 image->bytes);
  return out;
}
