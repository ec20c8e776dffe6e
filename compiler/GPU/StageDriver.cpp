//===- StageDriver.cpp - A variant through the GPU stage ------------------===//

#include "compiler/GPU/StageDriver.h"

#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/Passes.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"
#include "compiler/Target/CodeCache.h"
#include "compiler/Target/TargetBackend.h"
#include "compiler/Target/TimeReport.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace {
llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// 32-bit registers of a vector value (bf16 and fp8 packed), 0 otherwise
/// (masks too: they live in predicate registers or lane masks).
int64_t vectorRegisters(Type type) {
  auto vt = dyn_cast<VectorType>(type);
  return vt && vt.getElementTypeBitWidth() > 1
             ? (vt.getNumElements() * vt.getElementTypeBitWidth() + 31) / 32
             : 0;
}

/// A lower bound of the registers a thread holds at once in a loop: at
/// each matrix product's result (a `kiln_gpu.mma`, or the `warpgroup_wait`
/// that hands over a warpgroup product's accumulators), that result plus
/// every tile the loop carries that an op depending on the result still
/// reads whole (elementwise arithmetic, another product, the yield).
/// Those are distinct values live at the same point whatever the
/// schedule, each element in a register of its own; values read only in
/// part, or by ops a scheduler could move above the product, or defined
/// before the loop, are left out, so the bound never counts what the
/// register allocator could free. (Attention's 128x128 scores beside its
/// 128x128 accumulator on one warpgroup of sm_90a: 264 registers each
/// thread with the row statistics, more than it has.)
int64_t productPressure(ModuleOp module) {
  int64_t most = 0;
  auto readWhole = [](Operation *user) {
    Dialect *d = user->getDialect();
    return isa<scf::YieldOp, kiln::gpu::MmaOp, kiln::gpu::WarpgroupMmaOp>(
               user) ||
           (d && (d->getNamespace() == "arith" || d->getNamespace() == "math"));
  };
  module->walk([&](scf::ForOp loop) {
    Block *body = loop.getBody();
    for (Operation &op : *body) {
      if (!isa<kiln::gpu::MmaOp, kiln::gpu::WarpgroupWaitOp>(op))
        continue;
      // The body's ops that must run after `op`: those that read its
      // results, or contain an op that does (an `scf.if` masking the
      // scores), and so on.
      llvm::SmallPtrSet<Operation *, 32> after;
      SmallVector<Operation *> work = {&op};
      while (!work.empty())
        for (Value r : work.pop_back_val()->getResults())
          for (Operation *user : r.getUsers())
            if (Operation *top = body->findAncestorOpInBlock(*user))
              if (after.insert(top).second)
                work.push_back(top);
      int64_t regs = 0;
      for (Value r : op.getResults())
        if (!r.use_empty())
          regs += vectorRegisters(r.getType());
      for (Value arg : loop.getRegionIterArgs())
        if (llvm::any_of(arg.getUsers(), [&](Operation *user) {
              return readWhole(user) &&
                     after.contains(body->findAncestorOpInBlock(*user));
            }))
          regs += vectorRegisters(arg.getType());
      most = std::max(most, regs);
    }
  });
  return most;
}

} // namespace

llvm::Expected<kiln::gpu::StagedVariant> kiln::gpu::runGPUStage(
    ModuleOp variant, llvm::StringRef arch, llvm::StringRef entry,
    const StageNames &names,
    llvm::function_ref<void(OpPassManager &)> addBackendPasses,
    StageCheckpoints checkpoints) {
  StagedVariant result;
  result.target = lookupGPUTarget(arch);
  if (!result.target)
    return makeError("unknown GPU arch '" + arch + "' for " + names.target);
  const GPUTarget &target = *result.target;

  OwningOpRef<ModuleOp> module(cast<ModuleOp>(variant->clone()));
  (*module)->removeAttr("sym_name");
  func::FuncOp kernel;
  for (auto fn : module->getOps<func::FuncOp>())
    if (fn->hasAttr("kiln.kernel"))
      kernel = fn;
  if (!kernel)
    return makeError("variant module has no kernel");
  kernel.setSymName(entry);

  if (auto v = variant->getAttrOfType<DictionaryAttr>("kiln.variant"))
    if (auto w = v.getAs<IntegerAttr>("warps"))
      result.warps = w.getInt();
  if (result.warps * target.warpSize > target.maxThreadsPerBlock)
    return llvm::make_error<ResourceLimitError>(
        "needs " + std::to_string(result.warps * target.warpSize) +
        " threads per program; " + arch.str() + " has at most " +
        std::to_string(target.maxThreadsPerBlock));

  MLIRContext *ctx = variant.getContext();
  timing::Phase phase(names.phase);
  for (unsigned part = 0; part < kGPUStageParts; ++part) {
    PassManager stage(ctx);
    buildGPUStagePart(stage, arch, part);
    timing::instrument(stage);
    if (failed(stage.run(*module)))
      return makeError(names.what + " lowering of '" + entry + "' for " +
                       names.target + " failed");
    // After pipelining, not after layout assignment: a trial's layouts
    // may differ where its code does not (the loads that pipelining makes
    // tensor copies; docs/codegen-gpu.md, "Unannotated kernels: the fast
    // path").
    if (part != 0 || (!checkpoints.record && !checkpoints.compare))
      continue;
    std::string code = moduleCode(*module);
    if (checkpoints.record)
      *checkpoints.record = std::move(code);
    else if (*checkpoints.compare != code)
      return makeError("differs from the reference after pipelining");
  }
  if (auto w = (*module)->getAttrOfType<IntegerAttr>(
          KilnGPUDialect::getWarpsAttrName()))
    result.warps = w.getInt();
  if (auto maps = (*module)->getAttrOfType<StringAttr>(kTensorMapsAttr))
    result.tensorMaps = maps.getValue().str();
  module->walk([&](Operation *op) {
    if (auto s = op->getAttrOfType<IntegerAttr>(
            KilnGPUDialect::getSharedBytesAttrName()))
      result.sharedBytes = std::max(result.sharedBytes, s.getInt());
  });
  if (result.sharedBytes > target.maxSharedBytes)
    return llvm::make_error<ResourceLimitError>(
        "needs " + std::to_string(result.sharedBytes) +
        " bytes of shared memory; " + arch.str() + " has at most " +
        std::to_string(target.maxSharedBytes));
  // Tiles a loop carries (accumulators above all) stay in registers across
  // its iterations: a loop that carries more than the register file holds
  // spills every iteration (and makes register allocation crawl: a 128x256
  // f32 accumulator over 128 lanes is 256 registers each).
  int64_t carried = 0;
  module->walk([&](scf::ForOp loop) {
    int64_t regs = 0;
    for (Value arg : loop.getRegionIterArgs())
      regs += vectorRegisters(arg.getType());
    carried = std::max(carried, regs);
  });
  if (carried > target.maxRegistersPerThread)
    return llvm::make_error<ResourceLimitError>(
        "keeps " + std::to_string(carried) +
        " registers per thread live across a loop (the tiles it carries); " +
        arch.str() + " has " + std::to_string(target.maxRegistersPerThread));
  int64_t atProduct = productPressure(*module);
  if (atProduct > target.maxRegistersPerThread)
    return llvm::make_error<ResourceLimitError>(
        "keeps " + std::to_string(atProduct) +
        " registers per thread live at once in a loop (a matrix product's "
        "result and the tiles the loop carries past it); " +
        arch.str() + " has " + std::to_string(target.maxRegistersPerThread));
  result.module = std::move(module);
  if (addBackendPasses)
    if (llvm::Error e =
            lowerStagedVariant(result, entry, names, addBackendPasses))
      return std::move(e);
  return result;
}

void kiln::gpu::BackendLowering::loadDialects(MLIRContext &ctx) const {
  DialectRegistry registry;
  registerDialects(registry);
  ctx.appendDialectRegistry(registry);
  ctx.loadAllAvailableDialects();
}

llvm::Expected<kiln::gpu::StagedVariant>
kiln::gpu::BackendLowering::lower(ModuleOp variant, llvm::StringRef arch,
                                  llvm::StringRef entry,
                                  llvm::StringRef target,
                                  bool gpuOnly) const {
  loadDialects(*variant.getContext());
  if (gpuOnly)
    return runGPUStage(variant, arch, entry, names(target), nullptr);
  return runGPUStage(variant, arch, entry, names(target), addPasses);
}

llvm::Error kiln::gpu::lowerStagedVariant(
    StagedVariant &staged, llvm::StringRef entry, const StageNames &names,
    llvm::function_ref<void(OpPassManager &)> addPasses) {
  for (auto fn : staged.module->getOps<func::FuncOp>())
    if (fn->hasAttr("kiln.kernel"))
      fn.setSymName(entry);
  timing::Phase phase("lowering to " + names.what);
  PassManager backend(staged.module->getContext());
  // The per-thread form's marks first (after every fast-path trial).
  backend.addPass(createTileGPUComputeOncePerRun());
  addPasses(backend);
  timing::instrument(backend);
  if (failed(backend.run(*staged.module)))
    return makeError(names.what + " lowering of '" + entry + "' for " +
                     names.target + " failed");
  return llvm::Error::success();
}

std::string kiln::gpu::perThreadCode(const StagedVariant &staged) {
  return moduleCode(*staged.module);
}

std::string kiln::gpu::moduleCode(ModuleOp module) {
  // The kernel's name, argument attributes and the equal-runs marks (what
  // tile-gpu-compute-once-per-run does after the trials) are left out for
  // the print and put back.
  timing::Phase phase("GPU stage: per-thread text");
  std::vector<std::pair<func::FuncOp, std::pair<StringAttr, ArrayAttr>>> saved;
  for (auto fn : module.getOps<func::FuncOp>()) {
    saved.push_back({fn, {fn.getSymNameAttr(), fn.getAllArgAttrs()}});
    fn.removeArgAttrsAttr();
    if (fn->hasAttr("kiln.kernel"))
      fn.setSymName("kiln_kernel");
  }
  StringRef runs = KilnGPUDialect::getEqualRunsAttrName();
  std::vector<std::pair<Operation *, Attribute>> marks;
  module.walk([&](Operation *op) {
    if (Attribute a = op->removeAttr(runs))
      marks.push_back({op, a});
  });
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  for (auto &[fn, attrs] : saved) {
    fn.setSymNameAttr(attrs.first);
    if (attrs.second)
      fn.setAllArgAttrs(attrs.second);
  }
  for (auto &[op, a] : marks)
    op->setAttr(runs, a);
  return text;
}

kiln::gpu::FastPathAssumptions kiln::gpu::addUsefulFastPathAssumptions(
    ModuleOp module, llvm::StringRef arch, const GPUTarget &target,
    const std::string *generic, StagedVariant *staged,
    const LazyGeneric *lazyGeneric) {
  StageNames names{"fast-path", arch.str()};
  // `trial` through the stage, and its per-thread code ("" when the stage
  // fails, or stops where it differs from the reference's).
  std::string checkpoint;
  auto stage = [&](ModuleOp trial, StagedVariant &out, const char *phase,
                   StageCheckpoints check) {
    names.phase = phase;
    llvm::Expected<StagedVariant> s = runGPUStage(
        trial, arch, "kiln_fast_path", names, nullptr, check);
    if (!s) {
      llvm::consumeError(s.takeError());
      return std::string();
    }
    out = std::move(*s);
    return perThreadCode(out);
  };
  std::vector<std::string> exclude;
  OwningOpRef<ModuleOp> full(cast<ModuleOp>(module->clone()));
  FastPathAssumptions all = addFastPathAssumptions(*full, target);
  StagedVariant kept;
  // (Tensor maps' range conditions may be all there is: every parameter
  // promised.)
  std::string reference =
      all.assumes.empty()
          ? std::string()
          : stage(*full, kept, "GPU stage: fast path", {&checkpoint, nullptr});
  // Whether the generic form's code is known to differ from the
  // reference's; with a lazy generic form, its trial tells.
  bool genericDiffers = generic && reference != *generic;
  bool noFastPath = !reference.empty() && generic && !genericDiffers;
  if (!reference.empty() && !generic && lazyGeneric) {
    StagedVariant tried;
    if (stage(lazyGeneric->variant, tried, "GPU stage",
              {nullptr, &checkpoint}) == reference) {
      noFastPath = true;
      if (lazyGeneric->staged)
        *lazyGeneric->staged = std::move(tried);
    } else {
      genericDiffers = true;
    }
  }
  if (noFastPath) {
    // The full set changes nothing: no fast path.
    exclude = all.params;
  } else if (!reference.empty()) {
    // Trial `without` (parameters that get no assumption): true when it
    // makes the reference's code (then its staged form is kept). A trial
    // that assumes nothing at all is the generic form, which differs.
    auto sameCode = [&](llvm::ArrayRef<std::string> without) {
      OwningOpRef<ModuleOp> trial(cast<ModuleOp>(module->clone()));
      if (addFastPathAssumptions(*trial, target, without).assumes.empty() &&
          genericDiffers)
        return false;
      StagedVariant tried;
      if (stage(*trial, tried, "GPU stage: fast-path trials",
                {nullptr, &checkpoint}) != reference)
        return false;
      kept = std::move(tried);
      return true;
    };
    // Most parameters' assumptions change nothing (an integer that only
    // bounds a loop or a mask): one trial without any of them first.
    if (all.params.size() > 1 && sameCode(all.params)) {
      exclude = all.params;
    } else {
      for (const std::string &param : all.params) {
        exclude.push_back(param);
        if (!sameCode(exclude))
          exclude.pop_back();
      }
    }
  }
  FastPathAssumptions result = addFastPathAssumptions(module, target, exclude);
  if (staged && kept.module && !result.assumes.empty())
    *staged = std::move(kept);
  return result;
}

llvm::Expected<std::vector<kiln::CodeObject>>
kiln::gpu::compileWithFastPath(ModuleOp variant, llvm::StringRef arch,
                               llvm::StringRef entry,
                               const BackendLowering &lowering,
                               llvm::StringRef targetName,
                               CompileOneFn compileOne, ImageSet set) {
  const GPUTarget *target = lookupGPUTarget(arch);
  if (!target)
    return makeError("unknown GPU arch '" + arch + "'");
  lowering.loadDialects(*variant.getContext());
  StageNames names = lowering.names(targetName);
  // A form after the stage through the backend's passes, then compiled.
  auto lowerAndCompile = [&](StagedVariant &staged, llvm::StringRef e)
      -> llvm::Expected<std::vector<CodeObject>> {
    if (llvm::Error err =
            lowerStagedVariant(staged, e, names, lowering.addPasses))
      return std::move(err);
    return compileOne(staged, e);
  };
  // The generic form through the stage first, but for the fast path
  // alone, where it runs (lazily) only as far as it takes to tell that it
  // differs from the fast path's (LazyGeneric).
  std::optional<StagedVariant> generic;
  auto runGeneric = [&]() -> llvm::Error {
    llvm::Expected<StagedVariant> staged =
        runGPUStage(variant, arch, entry, names, nullptr);
    if (!staged)
      return staged.takeError();
    generic = std::move(*staged);
    return llvm::Error::success();
  };
  if (set != ImageSet::FastPath)
    if (llvm::Error e = runGeneric())
      return std::move(e);
  if (set == ImageSet::Generic)
    return lowerAndCompile(*generic, entry);
  std::string genericCode = generic ? perThreadCode(*generic) : "";
  OwningOpRef<ModuleOp> fast(cast<ModuleOp>(variant->clone()));
  StagedVariant fastStaged;
  StagedVariant lazyStaged;
  LazyGeneric lazy{variant, &lazyStaged};
  FastPathAssumptions fastPath = addUsefulFastPathAssumptions(
      *fast, arch, *target, generic ? &genericCode : nullptr, &fastStaged,
      generic ? nullptr : &lazy);
  if (!generic && (fastPath.assumes.empty() || !fastStaged.module)) {
    // No fast path: the generic image after all (its stage ran to the end
    // when it made the fast path's code).
    if (lazyStaged.module)
      generic = std::move(lazyStaged);
    else if (llvm::Error e = runGeneric())
      return std::move(e);
  }
  if (!fastPath.assumes.empty() && !fastStaged.module) {
    // The stage failed on the fast path: over a limit (more shared memory
    // for its tensor copies, say), the generic image serves alone; any
    // other failure is reported.
    llvm::Expected<StagedVariant> failed =
        runGPUStage(*fast, arch, (entry + "_a16").str(), names, nullptr);
    if (!failed && !failed.errorIsA<ResourceLimitError>())
      return failed.takeError();
    if (!failed)
      llvm::consumeError(failed.takeError());
    else
      fastStaged = std::move(*failed);
  }
  bool hasFastPath = !fastPath.assumes.empty() && fastStaged.module;
  if (set == ImageSet::FastPath && hasFastPath) {
    llvm::Expected<std::vector<CodeObject>> fastImages =
        lowerAndCompile(fastStaged, (entry + "_a16").str());
    if (fastImages)
      for (CodeObject &o : *fastImages)
        o.assumesJson = fastPath.assumes;
    return fastImages;
  }
  llvm::Expected<std::vector<CodeObject>> images =
      lowerAndCompile(*generic, entry);
  if (!images || !hasFastPath)
    return images;
  llvm::Expected<std::vector<CodeObject>> fastImages =
      lowerAndCompile(fastStaged, (entry + "_a16").str());
  if (!fastImages)
    return fastImages.takeError();
  // Same code after all (the keys leave the entry's name out; they hold
  // the tensor maps too): inside a compile the fast path's build was the
  // generic image's.
  if (kiln::sameBuilds(*images, *fastImages))
    return images;
  for (CodeObject &o : *fastImages) {
    o.assumesJson = fastPath.assumes;
    images->push_back(std::move(o));
  }
  return images;
}

bool kiln::gpu::makeFastPath(ModuleOp variant, llvm::StringRef arch,
                             const BackendLowering &lowering,
                             llvm::StringRef targetName) {
  const GPUTarget *target = lookupGPUTarget(arch);
  if (!target)
    return false;
  lowering.loadDialects(*variant.getContext());
  llvm::Expected<StagedVariant> generic = runGPUStage(
      variant, arch, "kiln_fast_path", lowering.names(targetName), nullptr);
  if (!generic) {
    llvm::consumeError(generic.takeError());
    return false;
  }
  std::string genericCode = perThreadCode(*generic);
  return !addUsefulFastPathAssumptions(variant, arch, *target, &genericCode)
              .assumes.empty();
}

bool kiln::gpu::GPUBackend::makeFastPath(ModuleOp variant,
                                        llvm::StringRef arch) {
  registerTargets();
  return kiln::gpu::makeFastPath(variant, arch, lowering(), arch);
}

void kiln::gpu::canonicalizeStages(ModuleOp variant, const GPUTarget &target) {
  if (target.hasAsyncCopy || target.hasTensorCopy)
    return;
  auto dict = variant->getAttrOfType<DictionaryAttr>("kiln.variant");
  auto stages = dict ? dict.getAs<IntegerAttr>("stages") : IntegerAttr();
  if (!stages || stages.getInt() <= 2)
    return;
  NamedAttrList attrs(dict);
  attrs.set("stages", IntegerAttr::get(stages.getType(), 2));
  variant->setAttr("kiln.variant", attrs.getDictionary(variant.getContext()));
}

void kiln::gpu::GPUBackend::canonicalizeVariant(ModuleOp variant,
                                                llvm::StringRef arch) {
  registerTargets();
  if (const GPUTarget *target = lookupGPUTarget(arch))
    canonicalizeStages(variant, *target);
}

bool kiln::gpu::GPUBackend::handlesArch(llvm::StringRef arch) const {
  registerTargets();
  const GPUTarget *t = lookupGPUTarget(arch);
  return t && t->backend == getName();
}

llvm::Expected<kiln::CodeObject>
kiln::gpu::GPUBackend::compile(ModuleOp variant, llvm::StringRef arch,
                               llvm::StringRef entry) {
  registerTargets();
  llvm::Expected<StagedVariant> staged =
      lowering().lower(variant, arch, entry, arch, /*gpuOnly=*/false);
  if (!staged)
    return staged.takeError();
  llvm::Expected<std::vector<CodeObject>> images =
      compileOne(*staged, arch, entry);
  if (!images)
    return images.takeError();
  return std::move(images->front());
}

llvm::Expected<std::vector<kiln::CodeObject>>
kiln::gpu::GPUBackend::compileImages(ModuleOp variant, llvm::StringRef arch,
                                     llvm::StringRef entry, ImageSet set) {
  registerTargets();
  return compileWithFastPath(
      variant, arch, entry, lowering(), arch,
      [&](StagedVariant &lowered, llvm::StringRef e) {
        return compileOne(lowered, arch, e);
      },
      set);
}
