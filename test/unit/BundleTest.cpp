//===- BundleTest.cpp - Bundle writer and reader --------------------------===//
//
// Round trips, determinism, ordering, and the reader's answer to every
// truncation and to corrupted bytes (an error, never a crash).
//
//===----------------------------------------------------------------------===//
#include "compiler/Bundle/BundleReader.h"
#include "compiler/Bundle/BundleWriter.h"

#include "llvm/Object/OffloadBinary.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

using namespace kiln::bundle;

namespace {

Bundle makeBundle() {
  Bundle b;
  b.source = "k.tile";
  b.hostCpu = "x86-64-v2";
  for (const char *name : {"zeta", "alpha"}) { // Source order, not sorted.
    KernelMetadata k;
    k.signature.name = name;
    k.signature.params = {{"x", "*f32", 16, 0}, {"n", "u32", 0, 4},
                          {"flag", "bool", 0, 0}};
    k.signature.constParams = {"BLOCK", "warps", "stages"};
    k.grid = {"(cdiv n BLOCK)"};
    k.key = {"n"};
    k.launchConditions = {"(>= BLOCK n)"};
    for (int64_t i : {1, 0}) { // Out of order on purpose.
      VariantMetadata v;
      v.index = i;
      v.constValues = {{"BLOCK", 64 << i}, {"warps", 4}, {"stages", 2}};
      k.variants.push_back(v);
    }
    b.kernels.push_back(k);
  }
  for (const char *kernel : {"alpha", "zeta"})
    for (int64_t v : {0, 1})
      for (const char *target : {"sm_90a", "host"}) {
        Image image;
        image.kernel = kernel;
        image.variant = v;
        image.target = target;
        image.triple = target == std::string("host") ? "x86_64-unknown-linux-gnu"
                                                     : "nvptx64-nvidia-cuda";
        image.arch = target == std::string("host") ? "x86-64-v2" : "sm_90a";
        image.entry = std::string(kernel) + "_v" + std::to_string(v);
        image.imageKind = llvm::object::IMG_Object;
        image.resourcesJson = R"({"registers": 32, "a": [1, 2]})";
        // Odd sizes: the padding between binaries matters.
        image.bytes = std::string(13 + v * 7, char('a' + v)) + kernel + target;
        b.images.push_back(image);
      }
  return b;
}

std::string write(const Bundle &b) {
  auto bytes = writeBundle(b);
  EXPECT_TRUE(bool(bytes)) << (bytes ? "" : llvm::toString(bytes.takeError()));
  return bytes ? *bytes : std::string();
}

llvm::Expected<BundleFile> read(llvm::StringRef bytes) {
  // An aligned copy, as a file read from disk would be.
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(bytes);
  auto file = readBundle(buffer->getMemBufferRef());
  if (file) // Detach from the buffer: BundleFile owns its strings.
    return std::move(*file);
  return file.takeError();
}

std::string readError(llvm::StringRef bytes) {
  auto file = read(bytes);
  if (file)
    return "";
  return llvm::toString(file.takeError());
}

TEST(BundleTest, WriteIsDeterministicAndIndependentOfImageOrder) {
  Bundle b = makeBundle();
  std::string first = write(b);
  EXPECT_EQ(first, write(b));
  std::mt19937 rng(42);
  for (int i = 0; i < 5; ++i) {
    std::shuffle(b.images.begin(), b.images.end(), rng);
    EXPECT_EQ(first, write(b));
  }
  EXPECT_EQ(first.size() % 8, 0u);
}

TEST(BundleTest, RoundTrip) {
  std::string bytes = write(makeBundle());
  auto file = read(bytes);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  const Bundle &b = file->bundle;
  EXPECT_EQ(b.source, "k.tile");
  EXPECT_EQ(b.hostCpu, "x86-64-v2");
  ASSERT_EQ(b.kernels.size(), 2u);
  EXPECT_EQ(b.kernels[0].signature.name, "zeta"); // Source order kept.
  ASSERT_EQ(b.kernels[0].signature.params.size(), 3u);
  EXPECT_EQ(b.kernels[0].signature.params[1].type, "u32");
  EXPECT_EQ(b.kernels[0].signature.params[1].div, 4);
  EXPECT_EQ(b.kernels[0].signature.params[0].align, 16);
  EXPECT_EQ(b.kernels[0].variants[0].index, 0); // Sorted by index.
  EXPECT_EQ(b.kernels[0].variants[1].constValues[0],
            std::make_pair(std::string("BLOCK"), int64_t(128)));
  // Images: kernel source order, variant index, target name.
  ASSERT_EQ(b.images.size(), 8u);
  EXPECT_EQ(b.images[0].kernel, "zeta");
  EXPECT_EQ(b.images[0].variant, 0);
  EXPECT_EQ(b.images[0].target, "host");
  EXPECT_EQ(b.images[1].target, "sm_90a");
  EXPECT_EQ(b.images[2].variant, 1);
  EXPECT_EQ(b.images[4].kernel, "alpha");
  EXPECT_EQ(b.images[0].resourcesJson, R"({"a":[1,2],"registers":32})");
  EXPECT_EQ(b.images[0].imageKind, llvm::object::IMG_Object);
  for (auto [image, placement] : llvm::zip_equal(b.images, file->placements)) {
    EXPECT_EQ(placement.binaryOffset % 8, 0u);
    EXPECT_EQ(bytes.substr(placement.imageOffset, image.bytes.size()),
              image.bytes);
  }
  // Reading and writing again gives the same bytes.
  EXPECT_EQ(write(b), bytes);
}

TEST(BundleTest, ManifestHasSortedKeysAndNoHostCpuWithoutHost) {
  Bundle b = makeBundle();
  b.hostCpu.clear();
  auto file = read(write(b));
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  const std::string &json = file->manifestJson;
  EXPECT_EQ(json.find("host_cpu"), std::string::npos);
  EXPECT_EQ(json.rfind(R"({"format":"kiln-bundle","kernels":[{"const_params":)",
                       0),
            0u);
  EXPECT_NE(json.find(R"("params":[{"align":16,"name":"x","type":"*f32"},)"
                      R"({"div":4,"name":"n","type":"u32"},)"
                      R"({"name":"flag","type":"bool"}])"),
            std::string::npos);
  EXPECT_NE(json.find(R"("source":"k.tile","version":3})"), std::string::npos);
}

TEST(BundleTest, EmptyBundle) {
  Bundle b;
  b.source = "empty.tile";
  auto file = read(write(b));
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_TRUE(file->bundle.kernels.empty());
  EXPECT_TRUE(file->bundle.images.empty());
}

TEST(BundleTest, WriterRejectsInconsistentContents) {
  auto error = [](const Bundle &b) {
    auto bytes = writeBundle(b);
    return bytes ? std::string() : llvm::toString(bytes.takeError());
  };
  Bundle b = makeBundle();
  b.images.push_back(b.images[0]);
  EXPECT_EQ(error(b), "cannot write bundle: two images of one kind of variant 0 of kernel "
                      "'alpha' for target 'sm_90a'");
  b = makeBundle();
  b.images[0].kernel = "beta";
  EXPECT_EQ(error(b), "cannot write bundle: an image of kernel 'beta', which "
                      "the bundle's metadata lacks");
  b = makeBundle();
  b.images[0].variant = 7;
  EXPECT_EQ(error(b), "cannot write bundle: an image of variant 7 of kernel "
                      "'alpha', which the metadata lacks");
  b = makeBundle();
  b.images[0].resourcesJson = "[1]";
  EXPECT_EQ(error(b), "cannot write bundle: the resources of variant 0 of "
                      "kernel 'alpha' for target 'sm_90a' are not a JSON "
                      "object");
  b = makeBundle();
  b.kernels[1].signature.name = "zeta";
  EXPECT_EQ(error(b), "cannot write bundle: two kernels named 'zeta'");
  b = makeBundle();
  b.kernels[0].variants[0].index = 0;
  EXPECT_EQ(error(b), "cannot write bundle: kernel 'zeta' has two variants 0");
}

TEST(BundleTest, RequiresAndAssumes) {
  auto error = [](const Bundle &b) {
    auto bytes = writeBundle(b);
    return bytes ? std::string() : llvm::toString(bytes.takeError());
  };
  // "requires" and "assumes" are written when they say something; a
  // target may have a generic image and a fast one with assumptions,
  // listed after the target name by their assumptions.
  Bundle b = makeBundle();
  for (Image &image : b.images)
    image.requiresJson = image.target == "host"
                             ? R"({"features": ["sse2"], "cpu": "x86-64-v2"})"
                             : "{}";
  Image fast = b.images[0]; // alpha, variant 0, sm_90a
  ASSERT_EQ(fast.target, "sm_90a");
  fast.assumesJson = R"({"div16": ["n"], "align16": ["x"]})";
  fast.bytes = "fast";
  b.images.push_back(fast);
  auto file = read(write(b));
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  const std::string &json = file->manifestJson;
  EXPECT_NE(json.find(R"("requires":{"cpu":"x86-64-v2","features":["sse2"]})"),
            std::string::npos);
  EXPECT_EQ(json.find(R"("requires":{})"), std::string::npos);
  EXPECT_EQ(json.find(R"("assumes":{})"), std::string::npos);
  size_t fastAt = json.find(R"("assumes":{"align16":["x"],"div16":["n"]})");
  ASSERT_NE(fastAt, std::string::npos);
  ASSERT_EQ(file->bundle.images.size(), 9u);
  // alpha is the second kernel: images 4.. are alpha's; variant 0 has
  // host, then sm_90a with assumptions, then the generic sm_90a.
  EXPECT_EQ(file->bundle.images[5].target, "sm_90a");
  EXPECT_EQ(file->bundle.images[5].bytes, "fast");
  EXPECT_EQ(file->bundle.images[6].target, "sm_90a");
  EXPECT_NE(file->bundle.images[6].bytes, "fast");

  b.images.push_back(fast);
  EXPECT_EQ(error(b), "cannot write bundle: two images of one kind of variant 0 of kernel "
                      "'alpha' for target 'sm_90a' with the same "
                      "assumptions");
  b = makeBundle();
  b.images[0].assumesJson = "[]";
  EXPECT_EQ(error(b), "cannot write bundle: the assumptions of variant 0 of "
                      "kernel 'alpha' for target 'sm_90a' are not a JSON "
                      "object");
  b = makeBundle();
  b.images[0].requiresJson = "not json";
  EXPECT_EQ(error(b), "cannot write bundle: the requirements of variant 0 of "
                      "kernel 'alpha' for target 'sm_90a' are not a JSON "
                      "object");
}

TEST(BundleTest, EveryTruncationIsAnError) {
  std::string bytes = write(makeBundle());
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::string msg = readError(llvm::StringRef(bytes).take_front(n));
    EXPECT_FALSE(msg.empty()) << "prefix of " << n << " bytes was accepted";
  }
  EXPECT_EQ(readError(""), "not a kiln bundle (the file is empty)");
  EXPECT_EQ(readError(llvm::StringRef(bytes).take_front(10)),
            "not a kiln bundle (the file has only 10 bytes)");
}

TEST(BundleTest, CorruptBytesNeverCrash) {
  std::string bytes = write(makeBundle());
  std::mt19937 rng(7);
  // Every byte of the headers, entries and string maps, and a sample of
  // the rest, set to values that stress offsets and sizes.
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (unsigned char v : {0x00, 0x01, 0x7f, 0x80, 0xff}) {
      if (i > 256 && rng() % 8 != 0)
        continue;
      std::string copy = bytes;
      copy[i] = char(v);
      (void)readError(copy); // Either outcome; it must not crash.
    }
  }
}

TEST(BundleTest, NotABundle) {
  EXPECT_EQ(readError("kernel add<BLOCK: i32>() grid (1) {}\n"),
            "not a kiln bundle (no offloading binary at its start)");
  // An offloading binary that is not a kiln manifest.
  llvm::object::OffloadBinary::OffloadingImage image;
  image.Image = llvm::MemoryBuffer::getMemBuffer("data", "", false);
  image.StringData["triple"] = "x86_64-unknown-linux-gnu";
  auto other = llvm::object::OffloadBinary::write(image);
  EXPECT_EQ(readError(other.str()),
            "not a kiln bundle (its first offloading binary has no "
            "kiln.format string)");
}

TEST(BundleTest, UnknownVersionsAreRefused) {
  std::string bytes = write(makeBundle());
  // The container version: bytes 4-7 of the first header.
  std::string container = bytes;
  container[4] = 2;
  EXPECT_EQ(readError(container),
            "unsupported offloading binary version 2 at offset 0 (this kiln "
            "reads version 1)");
  // The format version, in the manifest's strings.
  llvm::object::OffloadBinary::OffloadingImage image;
  image.Image = llvm::MemoryBuffer::getMemBuffer(
      R"({"format":"kiln-bundle","version":5})", "", false);
  image.StringData["kiln.format"] = "kiln-bundle";
  for (const char *version : {"5", "2"}) {
    image.StringData["kiln.format-version"] = version;
    auto manifest = llvm::object::OffloadBinary::write(image);
    EXPECT_EQ(readError(manifest.str()),
              std::string("unsupported kiln bundle format version ") +
                  version + " (this kiln reads versions 3 and 4)");
  }
}

// Images may carry tensor maps (format 4): written when there are some,
// with version 4 then (3 otherwise), read back, and shown apart from the
// images they differ from.
TEST(BundleTest, TensorMaps) {
  Bundle b = makeBundle();
  EXPECT_EQ(read(write(b))->formatVersion, 3u);
  Image tma = b.images[0]; // alpha, variant 0, sm_90a
  ASSERT_EQ(tma.target, "sm_90a");
  const char *maps = R"([{"box":[128,64],"param":"x","sizes":["n","64"],)"
                     R"("strides":["64","1"],"swizzle":128,"type":"f32"}])";
  tma.tensorMapsJson = maps;
  tma.bytes = "tma";
  b.images.push_back(tma);
  std::string bytes = write(b);
  auto file = read(bytes);
  ASSERT_TRUE(bool(file)) << llvm::toString(file.takeError());
  EXPECT_EQ(file->formatVersion, 4u);
  const std::string &json = file->manifestJson;
  EXPECT_NE(json.find(std::string("\"tensor_maps\":") + maps),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("version":4})"), std::string::npos);
  EXPECT_EQ(json.find(R"("tensor_maps":[])"), std::string::npos);
  // alpha's variant 0: host, sm_90a without maps, then with them.
  ASSERT_EQ(file->bundle.images.size(), 9u);
  EXPECT_EQ(file->bundle.images[5].tensorMapsJson, "[]");
  EXPECT_EQ(file->bundle.images[6].tensorMapsJson, maps);
  EXPECT_EQ(file->bundle.images[6].bytes, "tma");
  EXPECT_EQ(write(file->bundle), bytes);

  auto error = [](const Bundle &b) {
    auto bytes = writeBundle(b);
    return bytes ? std::string() : llvm::toString(bytes.takeError());
  };
  b.images.push_back(tma);
  EXPECT_EQ(error(b), "cannot write bundle: two images of one kind of "
                      "variant 0 of kernel 'alpha' for target 'sm_90a'");
  b.images.pop_back();
  b.images.back().tensorMapsJson = "{}";
  EXPECT_EQ(error(b), "cannot write bundle: the tensor maps of variant 0 of "
                      "kernel 'alpha' for target 'sm_90a' are not a JSON "
                      "array");

  // A version-3 manifest with tensor maps, and tensor maps that are not
  // objects, are corrupt; so is an image of another version than the
  // manifest's.
  auto binary = [](llvm::StringRef bytes, const char *version,
                   bool manifest) {
    llvm::object::OffloadBinary::OffloadingImage image;
    image.Image = llvm::MemoryBuffer::getMemBuffer(bytes, "", false);
    image.StringData["kiln.format-version"] = version;
    image.TheImageKind = llvm::object::IMG_None;
    image.TheOffloadKind = llvm::object::OFK_None;
    image.Flags = 0;
    if (manifest) {
      image.StringData["kiln.format"] = "kiln-bundle";
    } else {
      image.TheImageKind = llvm::object::IMG_Cubin;
      image.TheOffloadKind = llvm::object::OFK_Cuda;
      image.StringData["kiln.kernel"] = "k";
      image.StringData["kiln.variant"] = "0";
      image.StringData["kiln.entry"] = "k_v0";
      image.StringData["triple"] = "nvptx64-nvidia-cuda";
      image.StringData["arch"] = "sm_90a";
    }
    std::string out = llvm::object::OffloadBinary::write(image).str().str();
    out.resize((out.size() + 7) / 8 * 8, '\0');
    return out;
  };
  auto manifest = [](int version, const std::string &mapsJson) {
    return R"({"format":"kiln-bundle","version":)" + std::to_string(version) +
           R"(,"source":"k.tile","kernels":[{"name":"k","params":[],)"
           R"("const_params":[],"grid":["1"],"key":[],)"
           R"("launch_conditions":[],"variants":[{"index":0,"const":{},)"
           R"("images":[{"target":"sm_90a","triple":"nvptx64-nvidia-cuda",)"
           R"("arch":"sm_90a","entry":"k_v0","resources":{},)"
           R"("tensor_maps":)" +
           mapsJson + "}]}]}]}";
  };
  std::string good = binary(manifest(4, "[{}]"), "4", true) +
                     binary("code", "4", false);
  ASSERT_TRUE(bool(read(good))) << readError(good);
  EXPECT_EQ(readError(binary(manifest(3, "[{}]"), "3", true) +
                      binary("code", "3", false)),
            "corrupt bundle: manifest: kernels[0].variants[0].images[0]."
            "tensor_maps: needs format version 4, the bundle is version 3");
  EXPECT_EQ(readError(binary(manifest(4, "[{},7]"), "4", true) +
                      binary("code", "4", false)),
            "corrupt bundle: manifest: kernels[0].variants[0].images[0]."
            "tensor_maps[1]: expected an object");
  EXPECT_EQ(readError(binary(manifest(4, "{}"), "4", true) +
                      binary("code", "4", false)),
            "corrupt bundle: manifest: kernels[0].variants[0].images[0]."
            "tensor_maps: expected an array");
  std::string head = binary(manifest(4, "[{}]"), "4", true);
  EXPECT_EQ(readError(head + binary("code", "3", false)),
            "corrupt bundle: the offloading binary at offset " +
                std::to_string(head.size()) +
                " has format version 3, the manifest 4");
}

TEST(BundleTest, ManifestAndImagesMustAgree) {
  Bundle b = makeBundle();
  std::string bytes = write(b);
  auto file = read(bytes);
  ASSERT_TRUE(bool(file));
  // Drop the last image binary: the manifest still lists it.
  uint64_t last = file->placements.back().binaryOffset;
  EXPECT_EQ(readError(llvm::StringRef(bytes).take_front(last)),
            "corrupt bundle: truncated: the manifest lists 8 images, the file "
            "holds 7");
  // Trailing zero bytes are not another image.
  EXPECT_EQ(readError(bytes + std::string(8, '\0')),
            "corrupt bundle: truncated: 8 bytes at offset " +
                std::to_string(bytes.size()) +
                ", too few for an offloading binary");
  EXPECT_EQ(readError(bytes + std::string(32, '\0')),
            "corrupt bundle: no offloading binary at offset " +
                std::to_string(bytes.size()));
  // Two images swapped: the manifest's order no longer matches.
  uint64_t a = file->placements[0].binaryOffset;
  uint64_t c = file->placements[1].binaryOffset;
  uint64_t end = c + file->placements[1].binarySize;
  std::string swapped = bytes.substr(0, a) + bytes.substr(c, end - c) +
                        bytes.substr(a, c - a) + bytes.substr(end);
  std::string msg = readError(swapped);
  EXPECT_EQ(msg.rfind("corrupt bundle: the image at offset ", 0), 0u) << msg;
}

TEST(BundleTest, BadManifestJson) {
  auto manifestOnly = [](llvm::StringRef json) {
    llvm::object::OffloadBinary::OffloadingImage image;
    image.Image = llvm::MemoryBuffer::getMemBuffer(json, "", false);
    image.StringData["kiln.format"] = "kiln-bundle";
    image.StringData["kiln.format-version"] = "3";
    return readError(llvm::object::OffloadBinary::write(image).str());
  };
  EXPECT_EQ(manifestOnly("{"),
            "corrupt bundle: the manifest is not valid JSON");
  EXPECT_EQ(manifestOnly("[]"),
            "corrupt bundle: manifest: expected an object");
  EXPECT_EQ(manifestOnly(R"({"format":"kiln-bundle","version":3,)"
                         R"("source":"a.tile","kernels":[{"name":"k",)"
                         R"("params":[{"name":"x","type":3}]}]})"),
            "corrupt bundle: manifest: kernels[0].params[0].type: expected a "
            "string");
  EXPECT_EQ(manifestOnly(R"({"format":"kiln-bundle","version":3,)"
                         R"("source":"a.tile"})"),
            "corrupt bundle: manifest: missing 'kernels'");
  EXPECT_EQ(manifestOnly(R"({"format":"kiln-bundle","version":2,)"
                         R"("source":"a.tile","kernels":[]})"),
            "corrupt bundle: manifest: version: 2, but the binary's "
            "kiln.format-version is 3");
}

} // namespace
