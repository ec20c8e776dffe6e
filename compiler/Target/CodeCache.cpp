//===- CodeCache.cpp - One build per distinct code in a compile -----------===//

#include "compiler/Target/CodeCache.h"
#include "compiler/Target/TimeReport.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/raw_ostream.h"

#include <condition_variable>
#include <optional>

namespace kiln {

namespace {

/// A key's hash, started with its salt (a NUL ends it: no IR text holds
/// one).
llvm::BLAKE3 saltedHasher(llvm::StringRef salt) {
  llvm::BLAKE3 hasher;
  hasher.update(salt);
  hasher.update(llvm::StringRef("\0", 1));
  return hasher;
}

std::string hexDigest(llvm::BLAKE3 &hasher) {
  llvm::BLAKE3Result<> digest = hasher.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

} // namespace

std::string codeKey(const llvm::Module &module, llvm::StringRef entry,
                    llvm::StringRef salt) {
  timing::Phase phase("code key");
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    module.print(os, nullptr);
  }
  llvm::BLAKE3 hasher = saltedHasher(salt);
  // The text with the entry's name left out: hashed piecewise between its
  // occurrences (a NUL stands for each).
  llvm::StringRef rest(text);
  for (size_t pos; !entry.empty() && (pos = rest.find(entry)) !=
                                         llvm::StringRef::npos;) {
    hasher.update(rest.take_front(pos));
    hasher.update(llvm::StringRef("\0", 1));
    rest = rest.drop_front(pos + entry.size());
  }
  hasher.update(rest);
  return hexDigest(hasher);
}

std::string textKey(llvm::StringRef text, llvm::StringRef salt) {
  llvm::BLAKE3 hasher = saltedHasher(salt);
  hasher.update(text);
  return hexDigest(hasher);
}

bool sameBuilds(const std::vector<CodeObject> &a,
                const std::vector<CodeObject> &b) {
  auto keyOf = [](const CodeObject &o) { return o.codeKey; };
  return llvm::equal(llvm::map_range(a, keyOf), llvm::map_range(b, keyOf)) &&
         llvm::none_of(a, [](const CodeObject &o) { return o.codeKey.empty(); });
}

/// One key's build: the job that does it, and its objects once done.
struct CodeCache::Entry {
  uint64_t owner = 0;
  bool done = false;
  bool failed = false;
  std::vector<CodeObject> objects;
  std::condition_variable ready;
};

CodeCache::CodeCache() = default;
CodeCache::~CodeCache() = default;

namespace {

/// `objects` marked as `key`'s build: each carries its position in it.
void markObjects(std::vector<CodeObject> &objects, const std::string &key) {
  for (size_t i = 0; i < objects.size(); ++i)
    objects[i].codeKey = key + "/" + std::to_string(i);
}

} // namespace

llvm::Expected<std::vector<CodeObject>> CodeCache::get(
    uint64_t job, const std::string &key,
    llvm::function_ref<llvm::Expected<std::vector<CodeObject>>()> build) {
  std::shared_ptr<Entry> mine;
  {
    std::unique_lock<std::mutex> lock(mutex);
    std::shared_ptr<Entry> &slot = entries[key];
    if (slot && slot->owner <= job) {
      // An earlier job's build (or this job's own, as for a fast path
      // that makes the generic code): wait for it.
      std::shared_ptr<Entry> theirs = slot;
      theirs->ready.wait(lock, [&] { return theirs->done; });
      if (!theirs->failed) {
        ++reused;
        return theirs->objects;
      }
      // It failed: this job builds (and reports) on its own, without
      // taking the key over.
    } else {
      // First for this key, or before the job that got here first: the
      // key is this job's, so that the first job of each key builds.
      slot = std::make_shared<Entry>();
      slot->owner = job;
      mine = slot;
    }
  }
  llvm::Expected<std::vector<CodeObject>> built = build();
  if (built)
    markObjects(*built, key);
  if (mine) {
    std::lock_guard<std::mutex> lock(mutex);
    mine->done = true;
    mine->failed = !built;
    if (built)
      mine->objects = *built;
    mine->ready.notify_all();
  }
  return built;
}

const CodeObject &CodeCache::canonicalObject(const CodeObject &object) const {
  size_t slash = object.codeKey.rfind('/');
  if (slash == std::string::npos)
    return object;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = entries.find(object.codeKey.substr(0, slash));
  if (it == entries.end() || !it->second->done || it->second->failed)
    return object;
  size_t index = std::stoul(object.codeKey.substr(slash + 1));
  const std::vector<CodeObject> &objects = it->second->objects;
  return index < objects.size() ? objects[index] : object;
}

uint64_t CodeCache::reusedBuilds() const {
  std::lock_guard<std::mutex> lock(mutex);
  return reused;
}

namespace {
thread_local CodeCache *currentCache = nullptr;
thread_local uint64_t currentJob = 0;
} // namespace

CodeCacheScope::CodeCacheScope(CodeCache &cache, uint64_t job)
    : previousCache(currentCache), previousJob(currentJob) {
  currentCache = &cache;
  currentJob = job;
}

CodeCacheScope::~CodeCacheScope() {
  currentCache = previousCache;
  currentJob = previousJob;
}

llvm::Expected<std::vector<CodeObject>> buildOnce(
    const std::string &key,
    llvm::function_ref<llvm::Expected<std::vector<CodeObject>>()> build) {
  if (currentCache)
    return currentCache->get(currentJob, key, build);
  llvm::Expected<std::vector<CodeObject>> built = build();
  if (built)
    markObjects(*built, key);
  return built;
}

} // namespace kiln
