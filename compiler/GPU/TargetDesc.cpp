//===- TargetDesc.cpp - The registry of GPU archs -------------------------===//

#include "compiler/GPU/TargetDesc.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

using namespace kiln::gpu;

namespace {

struct Registry {
  std::mutex mutex;
  // Pointers stay valid: targets are never removed, and a replaced one is
  // kept alive (lookups may still hold it).
  std::map<std::string, std::shared_ptr<GPUTarget>, std::less<>> targets;
  std::vector<std::shared_ptr<GPUTarget>> retired;
};

Registry &registry() {
  static Registry r;
  return r;
}

} // namespace

const MatrixInstr *GPUTarget::findMatrixInstr(llvm::StringRef a,
                                              llvm::StringRef b,
                                              llvm::StringRef acc,
                                              bool tf32, int64_t m,
                                              int64_t n, int64_t k,
                                              bool groups) const {
  for (const MatrixInstr &i : matrixInstrs)
    if ((groups || i.groupWarps == 1) && i.aType == a && i.bType == b &&
        i.accType == acc &&
        i.tf32 == tf32 && i.m <= m && i.n <= n && i.k <= k)
      return &i;
  return nullptr;
}

void kiln::gpu::registerGPUTarget(GPUTarget target) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.targets.find(target.arch);
  if (it != r.targets.end())
    r.retired.push_back(it->second);
  std::string arch = target.arch;
  r.targets[arch] = std::make_shared<GPUTarget>(std::move(target));
}

const GPUTarget *kiln::gpu::lookupGPUTarget(llvm::StringRef arch) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.targets.find(arch);
  return it == r.targets.end() ? nullptr : it->second.get();
}

const MatrixInstr *kiln::gpu::lookupMatrixInstr(llvm::StringRef name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto &[arch, t] : r.targets)
    for (const MatrixInstr &i : t->matrixInstrs)
      if (i.name == name)
        return &i;
  return nullptr;
}

std::vector<std::string> kiln::gpu::getGPUTargetNames() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (auto &[arch, t] : r.targets)
    names.push_back(arch);
  return names;
}

kiln::gpu::LinearLayout kiln::gpu::fragmentLayout(
    llvm::SmallVector<LinearLayout::Basis, 8> registers,
    llvm::SmallVector<LinearLayout::Basis, 8> lanes, int32_t rows,
    int32_t cols) {
  return LinearLayout({{"register", std::move(registers)},
                       {"lane", std::move(lanes)}},
                      {{"dim0", rows}, {"dim1", cols}});
}
