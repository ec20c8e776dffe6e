//===- BundleWriter.h - Writing .kpack bundles -----------------*- C++ -*-===//
//
// A bundle is a sequence of LLVM offloading binaries (docs/bundle.md): the
// manifest first, then one image per (kernel, variant, target) ordered by
// kernel source order, variant index and target name.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_BUNDLE_BUNDLEWRITER_H
#define KILN_COMPILER_BUNDLE_BUNDLEWRITER_H

#include "compiler/Bundle/Bundle.h"

#include "llvm/Support/Error.h"

#include <string>

namespace kiln::bundle {

/// Serializes `bundle`. The bytes depend only on the contents (not on the
/// order of `bundle.images`, nor on time or paths): JSON keys are sorted.
/// Inconsistent contents are an error: two kernels of one name, two
/// variants of one index, an image of a kernel or variant that the metadata
/// lacks, two images of one (kernel, variant, target) with the same
/// assumptions, an empty target name, or resources, requirements or
/// assumptions that are not a JSON object.
llvm::Expected<std::string> writeBundle(const Bundle &bundle);

} // namespace kiln::bundle

#endif // KILN_COMPILER_BUNDLE_BUNDLEWRITER_H
