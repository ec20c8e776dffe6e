//===- CodeCacheTest.cpp - One build per distinct code in a compile -------===//
//
// compiler/Target/CodeCache.h: what keys equal code, which job builds,
// which reuses, and that the objects every image ends with do not depend
// on the order in which the jobs got to a key.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CodeCache.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace {

/// A module with one function `name` returning `value`.
std::unique_ptr<llvm::Module> moduleWith(llvm::LLVMContext &ctx,
                                         llvm::StringRef name, int value) {
  auto m = std::make_unique<llvm::Module>("m", ctx);
  auto *fnType = llvm::FunctionType::get(llvm::Type::getInt32Ty(ctx), false);
  auto *fn = llvm::Function::Create(fnType, llvm::Function::ExternalLinkage,
                                    name, *m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  b.CreateRet(b.getInt32(value));
  return m;
}

/// A build that records that it ran and names its object's entry.
struct Builder {
  std::atomic<int> runs{0};
  llvm::Expected<std::vector<kiln::CodeObject>> operator()(std::string entry) {
    ++runs;
    kiln::CodeObject o;
    o.entry = std::move(entry);
    o.bytes = "code of " + o.entry;
    kiln::CodeObject second = o;
    second.imageKind = 2;
    return std::vector<kiln::CodeObject>{o, second};
  }
};

TEST(CodeKey, LeavesTheEntryNameOut) {
  llvm::LLVMContext ctx;
  auto a = moduleWith(ctx, "k_v0", 1);
  auto b = moduleWith(ctx, "k_v3_a16", 1);
  auto c = moduleWith(ctx, "k_v0", 2);
  EXPECT_EQ(kiln::codeKey(*a, "k_v0", "t"), kiln::codeKey(*b, "k_v3_a16", "t"));
  EXPECT_NE(kiln::codeKey(*a, "k_v0", "t"), kiln::codeKey(*c, "k_v0", "t"));
  // The salt (target, options, metadata inputs) is part of the key.
  EXPECT_NE(kiln::codeKey(*a, "k_v0", "t"), kiln::codeKey(*a, "k_v0", "u"));
  // Without the name left out, the names differ.
  EXPECT_NE(kiln::codeKey(*a, "", "t"), kiln::codeKey(*b, "", "t"));
}

TEST(CodeCache, WithoutAScopeEveryCallBuilds) {
  Builder builder;
  for (int i = 0; i < 2; ++i) {
    auto objects = kiln::buildOnce("key", [&] { return builder("e"); });
    ASSERT_TRUE(bool(objects));
    ASSERT_EQ(objects->size(), 2u);
    EXPECT_EQ((*objects)[0].codeKey, "key/0");
    EXPECT_EQ((*objects)[1].codeKey, "key/1");
  }
  EXPECT_EQ(builder.runs, 2);
}

TEST(CodeCache, ALaterJobReusesAnEarlierJobsBuild) {
  kiln::CodeCache cache;
  Builder builder;
  std::vector<kiln::CodeObject> first, second, other;
  {
    kiln::CodeCacheScope scope(cache, 0);
    first = *kiln::buildOnce("k", [&] { return builder("k_v0"); });
  }
  {
    kiln::CodeCacheScope scope(cache, 1);
    second = *kiln::buildOnce("k", [&] { return builder("k_v1"); });
    other = *kiln::buildOnce("other", [&] { return builder("k_v1"); });
  }
  EXPECT_EQ(builder.runs, 2); // "k" once, "other" once
  EXPECT_EQ(second[0].entry, "k_v0");
  EXPECT_EQ(second[1].codeKey, "k/1");
  EXPECT_EQ(other[0].entry, "k_v1");
  EXPECT_EQ(cache.reusedBuilds(), 1u);
  EXPECT_EQ(cache.canonicalObject(second[1]).imageKind, 2);
  // An object without a key is its own canonical object.
  kiln::CodeObject plain;
  plain.entry = "p";
  EXPECT_EQ(&cache.canonicalObject(plain), &plain);
}

TEST(CodeCache, AJobNeverReusesALaterJobsBuild) {
  // Job 5 gets to the key first; job 2 builds its own and takes the key
  // over; job 7 then reuses job 2's, and job 5's objects canonicalize to
  // job 2's: what a serial compile (job 2 first) would have made.
  kiln::CodeCache cache;
  Builder builder;
  auto run = [&](uint64_t job) {
    kiln::CodeCacheScope scope(cache, job);
    return *kiln::buildOnce("k", [&] {
      return builder("k_v" + std::to_string(job));
    });
  };
  std::vector<kiln::CodeObject> five = run(5), two = run(2), seven = run(7);
  EXPECT_EQ(builder.runs, 2);
  EXPECT_EQ(five[0].entry, "k_v5");
  EXPECT_EQ(two[0].entry, "k_v2");
  EXPECT_EQ(seven[0].entry, "k_v2");
  for (const auto *objects : {&five, &two, &seven}) {
    EXPECT_EQ(cache.canonicalObject((*objects)[0]).entry, "k_v2");
    EXPECT_EQ(cache.canonicalObject((*objects)[1]).imageKind, 2);
  }
}

TEST(CodeCache, AFailedBuildIsNotReused) {
  kiln::CodeCache cache;
  {
    kiln::CodeCacheScope scope(cache, 0);
    auto failed = kiln::buildOnce(
        "k", []() -> llvm::Expected<std::vector<kiln::CodeObject>> {
          return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                         "ptxas rejected it");
        });
    ASSERT_FALSE(bool(failed));
    EXPECT_EQ(llvm::toString(failed.takeError()), "ptxas rejected it");
  }
  Builder builder;
  kiln::CodeCacheScope scope(cache, 1);
  auto objects = kiln::buildOnce("k", [&] { return builder("k_v1"); });
  ASSERT_TRUE(bool(objects));
  EXPECT_EQ(builder.runs, 1);
  EXPECT_EQ((*objects)[0].entry, "k_v1");
}

TEST(CodeCache, AJobWaitsForAnEarlierJobsBuildInProgress) {
  kiln::CodeCache cache;
  std::mutex m;
  std::condition_variable cv;
  bool building = false, release = false;
  Builder builder;
  std::vector<kiln::CodeObject> early, late;
  std::thread first([&] {
    kiln::CodeCacheScope scope(cache, 0);
    early = *kiln::buildOnce("k", [&] {
      std::unique_lock<std::mutex> lock(m);
      building = true;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
      return builder("k_v0");
    });
  });
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return building; });
  }
  std::thread second([&] {
    kiln::CodeCacheScope scope(cache, 1);
    late = *kiln::buildOnce("k", [&] { return builder("k_v1"); });
  });
  {
    std::lock_guard<std::mutex> lock(m);
    release = true;
    cv.notify_all();
  }
  first.join();
  second.join();
  EXPECT_EQ(builder.runs, 1);
  EXPECT_EQ(late[0].entry, "k_v0");
}

TEST(CodeCache, SameBuildsComparesKeysObjectForObject) {
  auto objects = [](std::vector<std::string> keys) {
    std::vector<kiln::CodeObject> out(keys.size());
    for (size_t i = 0; i < keys.size(); ++i)
      out[i].codeKey = keys[i];
    return out;
  };
  EXPECT_TRUE(kiln::sameBuilds(objects({"k/0", "k/1"}), objects({"k/0", "k/1"})));
  EXPECT_FALSE(kiln::sameBuilds(objects({"k/0", "k/1"}), objects({"k/0"})));
  EXPECT_FALSE(kiln::sameBuilds(objects({"k/0"}), objects({"j/0"})));
  // Objects built outside the cache have no key: never the same.
  EXPECT_FALSE(kiln::sameBuilds(objects({""}), objects({""})));
}

} // namespace
