//===- CodeCache.h - One build per distinct code in a compile ----*- C++ -*-===//
//
// Many variants of a kernel make the same code for a target: the host
// backend ignores `warps` and `stages`, a loop the pipeliner leaves alone
// makes `stages` irrelevant on a GPU, a fast path's assumptions may buy
// nothing. The expensive part of a backend (LLVM's optimization and code
// generation, ptxas, linking) starts from an LLVM module; every backend
// keys that module (its text with the entry's name left out, plus what
// else decides the code objects' bytes and metadata) and builds through
// `buildOnce`, which reuses the objects a job before this one built for
// the same key in the same `kiln compile`.
//
// Determinism: a bundle must not depend on the number of workers. A job
// reuses only what a job earlier in the compile's order built (it waits
// for that build), never a later job's; so the first job of each key
// builds its own objects, and `canonicalObject` gives every later image
// with that key exactly those (the entry's name included).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_TARGET_CODECACHE_H
#define KILN_COMPILER_TARGET_CODECACHE_H

#include "compiler/Target/TargetBackend.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace llvm {
class Module;
} // namespace llvm

namespace kiln {

/// The key of the code that `module` (as it enters LLVM's optimization)
/// makes: a hash of its text with every occurrence of `entry` replaced by
/// one placeholder, and of `salt` (the target, the options and whatever
/// else the code objects' bytes and metadata depend on). Equal keys make
/// equal code objects but for the entry's name.
std::string codeKey(const llvm::Module &module, llvm::StringRef entry,
                     llvm::StringRef salt);

/// The key of a text that alone decides some code objects (with `salt`,
/// as for codeKey): for a backend that can tell before lowering that two
/// variants make the same code.
std::string textKey(llvm::StringRef text, llvm::StringRef salt);

/// True when `a` and `b` are the same builds, object for object (equal,
/// non-empty code keys): the same code whatever their entries' names.
bool sameBuilds(const std::vector<CodeObject> &a,
                const std::vector<CodeObject> &b);

/// The code objects built for each key, shared by the jobs (threads) of
/// one `kiln compile`.
class CodeCache {
public:
  CodeCache();
  ~CodeCache();
  CodeCache(const CodeCache &) = delete;
  CodeCache &operator=(const CodeCache &) = delete;

  /// `build`'s objects, each marked with `key` (CodeObject::codeKey), or
  /// those a job before `job` built for `key` (waiting for that build).
  llvm::Expected<std::vector<CodeObject>>
  get(uint64_t job, const std::string &key,
      llvm::function_ref<llvm::Expected<std::vector<CodeObject>>()> build);

  /// The object the first job of `object.codeKey` built at the position of
  /// `object` in its build (`object` itself for one without a key, or one
  /// never built through this cache).
  const CodeObject &canonicalObject(const CodeObject &object) const;

  /// Builds avoided: objects reused from an earlier job's build.
  uint64_t reusedBuilds() const;

private:
  struct Entry;
  mutable std::mutex mutex;
  std::map<std::string, std::shared_ptr<Entry>> entries;
  uint64_t reused = 0;
};

/// Makes the backends' `buildOnce` on this thread go through `cache` as
/// job `job` (the compile's order of (kernel, variant, target)) while it
/// lives.
class CodeCacheScope {
public:
  CodeCacheScope(CodeCache &cache, uint64_t job);
  ~CodeCacheScope();
  CodeCacheScope(const CodeCacheScope &) = delete;
  CodeCacheScope &operator=(const CodeCacheScope &) = delete;

private:
  CodeCache *previousCache;
  uint64_t previousJob;
};

/// What every backend calls with the key of the module it is about to
/// build: `build`'s objects marked with `key`, or, inside a CodeCacheScope,
/// those an earlier job of the compile built for `key`. Without a scope
/// (`--emit`, the unit tests) it always builds.
llvm::Expected<std::vector<CodeObject>>
buildOnce(const std::string &key,
          llvm::function_ref<llvm::Expected<std::vector<CodeObject>>()> build);

} // namespace kiln

#endif // KILN_COMPILER_TARGET_CODECACHE_H
