//===- GenericImages.h - Which variants get a generic image ----*- C++ -*-===//
//
// A GPU variant's fast-path image assumes things of the arguments (16-byte
// aligned pointers, integers that are multiples of 16, bounded strides);
// its generic image assumes nothing and costs three to five times as much
// to compile (docs/bench.md, "Where the rest goes"). `kiln compile
// --generic-images=cover` (the default) builds a generic image for only
// enough variants that every launch some variant accepts still finds one:
// per target, per group of variants whose launch conditions read the same
// const-param values, the variant that needs the least shared memory
// (docs/codegen-gpu.md, "Which variants get a generic image").
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TOOLS_KILN_GENERICIMAGES_H
#define KILN_TOOLS_KILN_GENERICIMAGES_H

#include "compiler/Target/TargetBackend.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::driver {

/// --generic-images.
enum class GenericImagePolicy {
  All,   ///< every variant: launches of any arguments tune among them all
  Cover, ///< one variant per launch-condition group and target
};

/// The names that launch conditions in prefix form (docs/bundle.md) read:
/// every identifier that is not an operator (`(cdiv a b)`'s `cdiv`).
std::vector<std::string>
namesInConditions(const std::vector<std::string> &conditions);

/// The group of a variant: the values of its const params that the
/// launch conditions read (`read`, from namesInConditions). Variants of
/// one group have the same launch conditions.
std::vector<int64_t>
conditionGroup(const std::vector<std::pair<std::string, int64_t>> &constValues,
               const std::vector<std::string> &read);

/// True when `object` assumes nothing of the arguments: no assumptions
/// and no tensor maps (whose requirements the runtime checks at launch).
bool isGenericImage(const CodeObject &object);

/// The most shared memory any of `objects` needs (their resources'
/// `shared_bytes`; 0 where absent).
int64_t sharedBytesOf(const std::vector<CodeObject> &objects);

/// One compiled (variant, target) of a kernel, as the policy sees it.
struct CompiledVariant {
  int64_t variant = 0;       ///< its index
  std::vector<int64_t> group; ///< conditionGroup
  bool kept = false;         ///< not dropped for the target
  bool hasGeneric = false;   ///< one of its images assumes nothing
  int64_t sharedBytes = 0;   ///< sharedBytesOf its images
};

/// For one kernel and target: per group that has kept variants but no
/// generic image, its kept variants' positions in `variants`, in the order
/// to try them for one (least shared memory first, then lowest index).
/// Groups come in the order of their first variant.
std::vector<std::vector<size_t>>
uncoveredGroups(const std::vector<CompiledVariant> &variants);

} // namespace kiln::driver

#endif // KILN_TOOLS_KILN_GENERICIMAGES_H
