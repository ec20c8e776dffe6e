//===- EmuBackend.cpp - Emulated GPU code objects ---------------------------===//
//
// Targets "emu:<arch>" for every GPU arch a backend registered: the
// variant goes through the GPU stage exactly as for <arch> (the same
// target description, warp size, layouts, pipelining, shared-memory plan
// and barriers), then the per-thread form becomes host code for one thread
// (convert-kiln-gpu-to-emu), linked into a host shared object that the
// runtime's emulator device runs, one fiber per GPU thread
// (docs/emulator.md).
//
//===----------------------------------------------------------------------===//

#include "codegen/emu/EmuPasses.h"


#include "codegen/host/HostBackend.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/StageDriver.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"
#include "compiler/Target/CodeCache.h"
#include "compiler/Target/LLVMPipeline.h"
#include "compiler/Target/TargetBackend.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <nlohmann/json.hpp>

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kPrefix = "emu:";

llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

class EmuBackend final : public kiln::TargetBackend {
public:
  llvm::StringRef getName() const override { return "emu"; }

  bool handlesArch(llvm::StringRef arch) const override {
    return arch.starts_with(kPrefix) &&
           kiln::gpu::lookupGPUTarget(arch.drop_front(kPrefix.size()));
  }

  llvm::Expected<kiln::CodeObject> compile(ModuleOp variant,
                                           llvm::StringRef arch,
                                           llvm::StringRef entry) override {
    llvm::Expected<kiln::gpu::StagedVariant> lowered =
        lower(variant, arch, entry, false);
    if (!lowered)
      return lowered.takeError();
    return compileLowered(*lowered, arch, entry,
                          variant->hasAttr("kiln.check_bounds"));
  }

  /// The image of a variant for the emulated arch after the GPU stage and
  /// the emulation passes; `checked`: compiled with --check-bounds.
  llvm::Expected<kiln::CodeObject>
  compileLowered(kiln::gpu::StagedVariant &lowered, llvm::StringRef arch,
                 llvm::StringRef entry, bool checked) {
    llvm::LLVMContext llvmCtx;
    std::unique_ptr<llvm::Module> llvmModule =
        kiln::translateToLLVMIR(*lowered.module, llvmCtx, entry);
    if (!llvmModule)
      return makeError("translation of '" + entry + "' to LLVM IR failed");
    // A portable baseline, as host images; f16 conversions come from
    // libgcc_s (present wherever the runtime's C++ library is).
    llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
    std::string cpu = triple.isX86() ? "x86-64-v2" : "generic";
    const kiln::gpu::GPUTarget *target = lowered.target;
    nlohmann::json resources = {
        {"threads", lowered.warps * target->warpSize},
        {"warp_size", target->warpSize},
        {"shared_bytes", lowered.sharedBytes},
        {"emulated", true}};
    if (checked)
      resources["check_bounds"] = true;
    // What decides the code object besides the module: its metadata.
    std::string salt = "emu;" + arch.str() + ";" + cpu + ";O1;" +
                       resources.dump() + ";" + lowered.tensorMaps;
    llvm::Expected<std::vector<kiln::CodeObject>> objects = kiln::buildOnce(
        kiln::codeKey(*llvmModule, entry, salt),
        [&]() -> llvm::Expected<std::vector<kiln::CodeObject>> {
          llvm::Expected<kiln::host::SharedObject> so =
              kiln::host::emitSharedObject(*llvmModule, cpu, "", entry,
                                           llvm::OptimizationLevel::O1,
                                           {"libgcc_s.so.1"});
          if (!so)
            return so.takeError();
          kiln::CodeObject obj;
          obj.triple = so->triple;
          obj.arch = arch.str();
          obj.entry = entry.str();
          obj.imageKind = 1;   // llvm::object::IMG_Object
          obj.offloadKind = 0; // llvm::object::OFK_None
          obj.bytes = std::move(so->bytes);
          if (!lowered.tensorMaps.empty())
            obj.tensorMapsJson = lowered.tensorMaps;
          obj.resourcesJson = resources.dump();
          // What the runtime matches: an emulator of this arch (the host
          // device never runs these: their entry takes a thread, not a
          // program).
          obj.requiresJson =
              nlohmann::json{{"emu", target->arch}, {"cpu", so->cpu}}.dump();
          return std::vector<kiln::CodeObject>{std::move(obj)};
        });
    if (!objects)
      return objects.takeError();
    return std::move(objects->front());
  }

  /// The image of the variant, then the fast path's (pointers assumed
  /// 16-byte aligned, integers multiples of 16, view strides bounded on
  /// targets with range-checked accesses, as the GPU backends do),
  /// unless both make the same code; `set` narrows them as for the GPU
  /// backends.
  llvm::Expected<std::vector<kiln::CodeObject>>
  compileImages(ModuleOp variant, llvm::StringRef arch, llvm::StringRef entry,
                kiln::ImageSet set) override {
    bool checked = variant->hasAttr("kiln.check_bounds");
    return kiln::gpu::compileWithFastPath(
        variant, arch.drop_front(kPrefix.size()), entry, emulation(), arch,
        [&](kiln::gpu::StagedVariant &lowered, llvm::StringRef e)
            -> llvm::Expected<std::vector<kiln::CodeObject>> {
          llvm::Expected<kiln::CodeObject> image =
              compileLowered(lowered, arch, e, checked);
          if (!image)
            return image.takeError();
          return std::vector<kiln::CodeObject>{std::move(*image)};
        },
        set);
  }

  void canonicalizeVariant(ModuleOp variant, llvm::StringRef arch) override {
    if (const kiln::gpu::GPUTarget *target =
            kiln::gpu::lookupGPUTarget(arch.drop_front(kPrefix.size())))
      kiln::gpu::canonicalizeStages(variant, *target);
  }

  bool makeFastPath(ModuleOp variant, llvm::StringRef arch) override {
    return kiln::gpu::makeFastPath(variant, arch.drop_front(kPrefix.size()),
                                   emulation(), arch);
  }

  std::vector<std::string> getStages() const override {
    return {"gpu", "llvm"};
  }
  bool isBinaryStage(llvm::StringRef) const override { return false; }

  llvm::Expected<std::string> emitStage(ModuleOp variant, llvm::StringRef arch,
                                        llvm::StringRef entry,
                                        llvm::StringRef stage) override {
    llvm::Expected<kiln::gpu::StagedVariant> lowered =
        lower(variant, arch, entry, stage == "gpu");
    if (!lowered)
      return lowered.takeError();
    std::string text;
    llvm::raw_string_ostream os(text);
    if (stage == "gpu") {
      lowered->module->print(os);
      return text;
    }
    llvm::LLVMContext llvmCtx;
    std::unique_ptr<llvm::Module> llvmModule =
        kiln::translateToLLVMIR(*lowered->module, llvmCtx, entry);
    if (!llvmModule)
      return makeError("translation of '" + entry + "' to LLVM IR failed");
    llvmModule->print(os, nullptr);
    return text;
  }

private:
  /// After the GPU stage: host code for one thread, in the LLVM dialect.
  static const kiln::gpu::BackendLowering &emulation() {
    static const kiln::gpu::BackendLowering lowering{
        "emulated", kiln::emu::registerEmuDialects,
        kiln::emu::addEmuLoweringPasses};
    return lowering;
  }

  /// A variant after the GPU stage for the emulated arch (`gpuOnly`: its
  /// per-thread form) or as host code in the LLVM dialect.
  static llvm::Expected<kiln::gpu::StagedVariant>
  lower(ModuleOp variant, llvm::StringRef arch, llvm::StringRef entry,
        bool gpuOnly) {
    return emulation().lower(variant, arch.drop_front(kPrefix.size()), entry,
                             arch, gpuOnly);
  }
};

} // namespace

void kiln::emu::registerEmuBackend() {
  kiln::registerBackend(std::make_unique<EmuBackend>());
}
