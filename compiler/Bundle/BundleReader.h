//===- BundleReader.h - Reading .kpack bundles -----------------*- C++ -*-===//
//
// The compiler's reader, for `kiln inspect` and tests (the runtime has its
// own, LLVM-free one). It checks every offset before LLVM's
// OffloadBinary::create sees the bytes, so a corrupt or truncated file is
// an error, never a crash; and it refuses container and format versions it
// does not know.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_BUNDLE_BUNDLEREADER_H
#define KILN_COMPILER_BUNDLE_BUNDLEREADER_H

#include "compiler/Bundle/Bundle.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::bundle {

/// Where an image lies in the file.
struct ImagePlacement {
  uint64_t binaryOffset = 0; ///< Of its offloading binary.
  uint64_t binarySize = 0;
  uint64_t imageOffset = 0;  ///< Of the image bytes.
};

struct BundleFile {
  /// `images` in file order, which is the manifest's order.
  Bundle bundle;
  std::vector<ImagePlacement> placements; ///< One per image.
  std::string manifestJson;               ///< As stored.
  unsigned formatVersion = 0;             ///< kiln.format-version
};

/// Reads a whole bundle. Errors are one line each: "not a kiln bundle
/// (...)", "unsupported ... version N (this kiln reads version 1)" or
/// "corrupt bundle: ...".
llvm::Expected<BundleFile> readBundle(llvm::MemoryBufferRef file);

} // namespace kiln::bundle

#endif // KILN_COMPILER_BUNDLE_BUNDLEREADER_H
