//===- TargetBackend.cpp - The backend registry ---------------------------===//
//
// Backends register once at start-up (registerBuiltinBackends, or a test
// tool registering its own), before any lookup; the registry is not meant
// to change while the driver compiles. Backends are kept sorted by name so
// that lookups and listings never depend on the order of registration.
//
//===----------------------------------------------------------------------===//
#include "compiler/Target/TargetBackend.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>

using namespace kiln;

char ResourceLimitError::ID = 0;

TargetBackend::~TargetBackend() = default;

llvm::Expected<std::string>
TargetBackend::emitStage(mlir::ModuleOp, llvm::StringRef arch,
                         llvm::StringRef, llvm::StringRef stage) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "the " + getName() + " backend (" + arch +
                                     ") has no stage '" + stage + "'");
}

llvm::Error TargetBackend::setOption(llvm::StringRef name, llvm::StringRef) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "the " + getName() + " backend has no option '" +
                                     name + "'");
}

llvm::Expected<std::vector<CodeObject>>
TargetBackend::compileImages(mlir::ModuleOp variant, llvm::StringRef arch,
                             llvm::StringRef entry, ImageSet) {
  llvm::Expected<CodeObject> object = compile(variant, arch, entry);
  if (!object)
    return object.takeError();
  std::vector<CodeObject> objects;
  objects.push_back(std::move(*object));
  return objects;
}

static std::vector<std::unique_ptr<TargetBackend>> &registry() {
  static std::vector<std::unique_ptr<TargetBackend>> backends;
  return backends;
}

void kiln::registerBackend(std::unique_ptr<TargetBackend> backend) {
  assert(backend && "registering a null backend");
  auto &backends = registry();
  llvm::StringRef name = backend->getName();
  auto pos = llvm::partition_point(
      backends, [&](const auto &b) { return b->getName() < name; });
  assert((pos == backends.end() || (*pos)->getName() != name) &&
         "two backends with one name");
  backends.insert(pos, std::move(backend));
}

TargetBackend *kiln::lookupBackendForArch(llvm::StringRef arch) {
  for (auto &backend : registry())
    if (backend->handlesArch(arch))
      return backend.get();
  return nullptr;
}

std::vector<TargetBackend *> kiln::getRegisteredBackends() {
  std::vector<TargetBackend *> result;
  for (auto &backend : registry())
    result.push_back(backend.get());
  return result;
}
