//===- NVPTXBackend.cpp - PTX code objects for NVIDIA GPUs ----------------===//
//
// The TargetBackend for NVIDIA archs: the GPU stage and the NVVM lowering
// (NVPTXPipeline.cpp), LLVM IR at O1, PTX from the NVPTX target in
// process; when ptxas is found (KILN_PTXAS, PATH, /usr/local/cuda/bin), it
// checks the PTX and reports registers, spills and stack.
//
//===----------------------------------------------------------------------===//

#include "codegen/nvptx/NVPTXBackend.h"

#include "codegen/nvptx/NVPTXPasses.h"
#include "codegen/nvptx/NVPTXTargets.h"
#include "codegen/nvptx/RegisterOffsets.h"
#include "compiler/Dialect/KilnDialect.h"
#include "compiler/GPU/IR/KilnGPUDialect.h"
#include "compiler/GPU/StageDriver.h"
#include "compiler/GPU/StageUtils.h"
#include "compiler/GPU/TargetDesc.h"
#include "compiler/Target/CodeCache.h"
#include "compiler/Target/LLVMPipeline.h"
#include "compiler/Target/TargetBackend.h"
#include "compiler/Target/TimeReport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/OffloadBinary.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <nlohmann/json.hpp>

#include <optional>

using namespace mlir;

namespace {

constexpr const char *kTriple = "nvptx64-nvidia-cuda";

/// LLVM's optimization level for PTX: O1. The GPU stage hands LLVM
/// per-thread code whose tiles are already unrolled into registers,
/// canonicalized and CSE'd, its address arithmetic laid out, and ptxas
/// optimizes what LLVM leaves; O2 and O3 (GVN, the vectorizers, loop
/// unswitching) find nothing more. Measured over examples/ for sm_90a
/// (docs/bench.md, "LLVM's optimization level"): the cubins of attention,
/// matmul, softmax and layer norm byte-identical to O3's, the row
/// reductions' within one instruction, at a third less optimization time.
/// (The AMDGPU backend stays at O3: there LLVM's output is the code, and O1
/// moved gfx1100's register-bound matmul variants across the spill line
/// in both directions.)
const llvm::OptimizationLevel &kPTXOptimizationLevel =
    llvm::OptimizationLevel::O1;

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// What `ptxas -v` says of one kernel, and the cubin it wrote.
struct PtxasReport {
  int64_t registers = -1, spillStores = 0, spillLoads = 0, stack = 0;
  std::string cubin;
};

/// "sm_90a" -> 90; "sm_100" -> 100.
int64_t smNumber(llvm::StringRef arch) {
  int64_t n = 0;
  arch.drop_front(3).take_while(llvm::isDigit).getAsInteger(10, n);
  return n;
}

/// The ISA of `.version 8.0` in PTX text, times ten (80); 0 if absent.
int64_t ptxIsa(llvm::StringRef ptx) {
  llvm::SmallVector<llvm::StringRef> m;
  if (!llvm::Regex("\\.version ([0-9]+)\\.([0-9]+)").match(ptx, &m))
    return 0;
  int64_t major = 0, minor = 0;
  m[1].getAsInteger(10, major);
  m[2].getAsInteger(10, minor);
  return major * 10 + minor;
}

PtxasReport parsePtxasReport(llvm::StringRef text) {
  PtxasReport r;
  llvm::SmallVector<llvm::StringRef> m;
  if (llvm::Regex("Used ([0-9]+) registers").match(text, &m))
    m[1].getAsInteger(10, r.registers);
  if (llvm::Regex("([0-9]+) bytes stack frame").match(text, &m))
    m[1].getAsInteger(10, r.stack);
  if (llvm::Regex("([0-9]+) bytes spill stores").match(text, &m))
    m[1].getAsInteger(10, r.spillStores);
  if (llvm::Regex("([0-9]+) bytes spill loads").match(text, &m))
    m[1].getAsInteger(10, r.spillLoads);
  return r;
}

class NVPTXBackend : public kiln::gpu::GPUBackend {
public:
  llvm::StringRef getName() const override { return "nvptx"; }

  std::vector<std::string> getStages() const override {
    return {"gpu", "llvm", "ptx", "cubin"};
  }
  bool isBinaryStage(llvm::StringRef stage) const override {
    return stage == "cubin";
  }

  llvm::Expected<std::string> emitStage(ModuleOp variant, llvm::StringRef arch,
                                        llvm::StringRef entry,
                                        llvm::StringRef stage) override {
    llvm::Expected<kiln::gpu::StagedVariant> lowered = lower(variant, arch, entry, stage == "gpu");
    if (!lowered)
      return lowered.takeError();
    if (stage == "gpu") {
      std::string text;
      llvm::raw_string_ostream os(text);
      lowered->module->print(os);
      return text;
    }
    if (stage == "llvm") {
      auto tm = targetMachine(arch, minPtxOf(*lowered->module));
      if (!tm)
        return tm.takeError();
      llvm::LLVMContext llvmCtx;
      auto llvmModule = optimizedLLVM(*lowered->module, **tm, llvmCtx, entry);
      if (!llvmModule)
        return llvmModule.takeError();
      std::string text;
      llvm::raw_string_ostream os(text);
      (*llvmModule)->print(os, nullptr);
      return text;
    }
    llvm::Expected<std::string> ptx = emitPTX(*lowered->module, arch, entry);
    if (!ptx || stage == "ptx")
      return ptx;
    std::optional<std::string> ptxas = findPtxas();
    if (!ptxas)
      return makeError("--emit=cubin needs ptxas (set KILN_PTXAS, put it on "
                       "PATH, or install it in /usr/local/cuda/bin)");
    llvm::Expected<PtxasReport> report = runPtxas(*ptxas, *ptx, arch);
    if (!report)
      return report.takeError();
    return std::move(report->cubin);
  }

private:
  /// After the GPU stage: the NVVM and LLVM dialects.
  static const kiln::gpu::BackendLowering &nvvm() {
    static const kiln::gpu::BackendLowering lowering{
        "NVIDIA", kiln::nvptx::registerNVPTXDialects,
        kiln::nvptx::addNVVMLoweringPasses};
    return lowering;
  }

  /// A variant after the GPU stage (`gpuOnly`: its per-thread form) or
  /// in the LLVM dialect.
  static llvm::Expected<kiln::gpu::StagedVariant>
  lower(ModuleOp variant, llvm::StringRef arch, llvm::StringRef entry,
        bool gpuOnly) {
    kiln::nvptx::registerNVPTXTargets();
    return nvvm().lower(variant, arch, entry, arch, gpuOnly);
  }

protected:
  void registerTargets() const override {
    kiln::nvptx::registerNVPTXTargets();
  }
  const kiln::gpu::BackendLowering &lowering() const override {
    return nvvm();
  }

  /// One PTX image (and a cubin when ptxas is found) for `entry`.
  llvm::Expected<std::vector<kiln::CodeObject>>
  compileOne(kiln::gpu::StagedVariant &lowered, llvm::StringRef arch,
             llvm::StringRef entry) override {
    auto tm = targetMachine(arch, minPtxOf(*lowered.module));
    if (!tm)
      return tm.takeError();
    llvm::LLVMContext llvmCtx;
    auto llvmModule = translatedLLVM(*lowered.module, **tm, llvmCtx, entry);
    if (!llvmModule)
      return llvmModule.takeError();
    int64_t warps = lowered.warps, sharedBytes = lowered.sharedBytes;
    std::optional<std::string> ptxas = findPtxas();
    // What decides the code objects besides the module: the arch and PTX
    // features, the launch shape, the tensor maps, and the ptxas that
    // checks it (all in the metadata).
    std::string salt = "nvptx;" + arch.str() + ";" +
                       (*tm)->getTargetFeatureString().str() + ";O1;" +
                       std::to_string(warps) + ";" +
                       std::to_string(sharedBytes) + ";" +
                       lowered.tensorMaps + ";" + ptxas.value_or("");
    return kiln::buildOnce(
        kiln::codeKey(**llvmModule, entry, salt),
        [&]() -> llvm::Expected<std::vector<kiln::CodeObject>> {
          optimize(**llvmModule, **tm);
          llvm::Expected<std::string> ptx = ptxOf(**llvmModule, **tm);
          if (!ptx)
            return ptx.takeError();
          return images(std::move(*ptx), arch, entry, warps, sharedBytes,
                        lowered.tensorMaps, ptxas);
        });
  }

  /// The PTX image of `entry` and, when ptxas is found, its cubin.
  static llvm::Expected<std::vector<kiln::CodeObject>>
  images(std::string ptx, llvm::StringRef arch, llvm::StringRef entry,
         int64_t warps, int64_t sharedBytes, const std::string &tensorMaps,
         const std::optional<std::string> &ptxas) {
    bool archSpecific = arch.ends_with("a");
    nlohmann::json resources = {{"threads", warps * 32},
                                {"shared_bytes", sharedBytes}};
    std::optional<PtxasReport> report;
    if (ptxas) {
      llvm::Expected<PtxasReport> r = runPtxas(*ptxas, ptx, arch);
      if (!r)
        return r.takeError();
      report = std::move(*r);
      resources["registers"] = report->registers;
      resources["spill_store_bytes"] = report->spillStores;
      resources["spill_load_bytes"] = report->spillLoads;
      resources["stack_bytes"] = report->stack;
      resources["source"] = "ptxas";
    } else {
      resources["source"] = "llvm";
    }

    std::vector<kiln::CodeObject> objects;
    kiln::CodeObject object;
    object.triple = kTriple;
    object.arch = arch.str();
    object.entry = entry.str();
    object.imageKind = llvm::object::IMG_PTX;
    object.offloadKind = llvm::object::OFK_Cuda;
    object.requiresJson = nlohmann::json{{"sm", smNumber(arch)},
                                         {"arch_specific", archSpecific},
                                         {"ptx_isa", ptxIsa(ptx)}}
                              .dump();
    object.bytes = std::move(ptx);
    object.resourcesJson = resources.dump();
    if (!tensorMaps.empty())
      object.tensorMapsJson = tensorMaps;
    objects.push_back(object);
    if (report && !report->cubin.empty()) {
      object.imageKind = llvm::object::IMG_Cubin;
      object.requiresJson =
          nlohmann::json{{"sm", smNumber(arch)}, {"arch_specific", archSpecific}}
              .dump();
      object.bytes = std::move(report->cubin);
      objects.push_back(std::move(object));
    }
    return objects;
  }

  /// The NVPTX target machine for `arch`.
  static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
  targetMachine(llvm::StringRef arch, int64_t minPtx = 0) {
    // LLVM writes the lowest ISA the arch needs (8.0 for sm_90, 8.6 from
    // sm_100 on); ask for more only where that is below what the module
    // uses.
    std::string features;
    if (minPtx == 84 && smNumber(arch) < 100)
      features = "+ptx84";
    return kiln::createTargetMachine(kTriple, arch, features, /*pic=*/false);
  }

  /// The LLVM dialect module as LLVM IR for `tm`, not yet optimized.
  static llvm::Expected<std::unique_ptr<llvm::Module>>
  translatedLLVM(ModuleOp module, llvm::TargetMachine &tm,
                 llvm::LLVMContext &llvmCtx, llvm::StringRef entry) {
    std::unique_ptr<llvm::Module> llvmModule =
        kiln::translateToLLVMIR(module, llvmCtx, entry);
    if (!llvmModule)
      return makeError("translation of '" + entry + "' to LLVM IR failed");
    llvmModule->setTargetTriple(tm.getTargetTriple());
    llvmModule->setDataLayout(tm.createDataLayout());
    markAlignedAsmConvergent(*llvmModule);
    return llvmModule;
  }

  /// The LLVM dialect module as optimized LLVM IR (kPTXOptimizationLevel).
  static llvm::Expected<std::unique_ptr<llvm::Module>>
  optimizedLLVM(ModuleOp module, llvm::TargetMachine &tm,
                llvm::LLVMContext &llvmCtx, llvm::StringRef entry) {
    auto llvmModule = translatedLLVM(module, tm, llvmCtx, entry);
    if (llvmModule)
      optimize(**llvmModule, tm);
    return llvmModule;
  }

  /// LLVM's pipeline at kPTXOptimizationLevel, then the constant register
  /// offsets moved into the addresses' immediates (RegisterOffsets.h).
  static void optimize(llvm::Module &module, llvm::TargetMachine &tm) {
    kiln::optimizeLLVMModule(module, tm, kPTXOptimizationLevel);
    kiln::nvptx::foldRegisterOffsets(module);
  }

  /// The wgmma statements (inline PTX: `.sync.aligned`, executed by every
  /// thread of the warpgroup together) are convergent, as NVVM's own
  /// intrinsics for such instructions are: no optimization may move or
  /// duplicate them under a condition the threads do not share. LLVM
  /// dialect's inline_asm op cannot say so, hence after translation.
  static void markAlignedAsmConvergent(llvm::Module &m) {
    for (llvm::Function &f : m)
      for (llvm::BasicBlock &bb : f)
        for (llvm::Instruction &inst : bb)
          if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst))
            if (auto *asmCall =
                    llvm::dyn_cast<llvm::InlineAsm>(call->getCalledOperand()))
              if (llvm::StringRef(asmCall->getAsmString()).contains("wgmma") ||
                  llvm::StringRef(asmCall->getAsmString())
                      .contains("fence.proxy.async"))
                call->addFnAttr(llvm::Attribute::Convergent);
  }

  /// The PTX ISA the lowering asked for (kMinPtxAttr), or 0.
  static int64_t minPtxOf(ModuleOp module) {
    if (auto a = module->getAttrOfType<IntegerAttr>(kiln::nvptx::kMinPtxAttr))
      return a.getInt();
    return 0;
  }

  /// PTX text for the LLVM dialect module.
  static llvm::Expected<std::string> emitPTX(ModuleOp module,
                                             llvm::StringRef arch,
                                             llvm::StringRef entry) {
    auto tm = targetMachine(arch, minPtxOf(module));
    if (!tm)
      return tm.takeError();
    llvm::LLVMContext llvmCtx;
    auto llvmModule = optimizedLLVM(module, **tm, llvmCtx, entry);
    if (!llvmModule)
      return llvmModule.takeError();
    return ptxOf(**llvmModule, **tm);
  }

  /// PTX text for the optimized LLVM IR.
  static llvm::Expected<std::string> ptxOf(llvm::Module &module,
                                           llvm::TargetMachine &tm) {
    std::string ptx;
    {
      kiln::timing::Phase phase("LLVM code generation");
      llvm::raw_string_ostream os(ptx);
      llvm::buffer_ostream bos(os);
      llvm::legacy::PassManager codegen;
      if (tm.addPassesToEmitFile(codegen, bos, nullptr,
                                 llvm::CodeGenFileType::AssemblyFile))
        return makeError("the NVPTX target machine cannot emit PTX");
      codegen.run(module);
    }
    return ptx;
  }

  static std::optional<std::string> findPtxas() {
    if (const char *env = std::getenv("KILN_PTXAS"))
      return *env ? std::optional<std::string>(env) : std::nullopt;
    if (llvm::ErrorOr<std::string> p = llvm::sys::findProgramByName("ptxas"))
      return *p;
    if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
      return std::string("/usr/local/cuda/bin/ptxas");
    return std::nullopt;
  }

  /// Assembles the PTX (checking it) and reads `ptxas -v`.
  static llvm::Expected<PtxasReport> runPtxas(const std::string &ptxas,
                                       llvm::StringRef ptx,
                                       llvm::StringRef arch) {
    kiln::TempFile in, out, log;
    int fd;
    if (auto ec = llvm::sys::fs::createTemporaryFile("kiln", "ptx", fd, in.path))
      return makeError("cannot create a temporary file: " + ec.message());
    {
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      os << ptx;
    }
    if (auto ec = llvm::sys::fs::createTemporaryFile("kiln", "cubin", out.path))
      return makeError("cannot create a temporary file: " + ec.message());
    if (auto ec = llvm::sys::fs::createTemporaryFile("kiln", "log", log.path))
      return makeError("cannot create a temporary file: " + ec.message());
    std::string archFlag = "-arch=" + arch.str();
    llvm::SmallVector<llvm::StringRef> argv = {ptxas, archFlag, "-v", "-o",
                                               out.path, in.path};
    std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.path.str(),
                                                  log.path.str()};
    std::string execError;
    std::optional<llvm::sys::ProcessStatistics> stats;
    int rc;
    {
      kiln::timing::Phase phase("ptxas");
      rc = llvm::sys::ExecuteAndWait(ptxas, argv, std::nullopt, redirects, 0,
                                     0, &execError, nullptr, &stats);
      kiln::timing::addChildProcess(stats);
    }
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
        llvm::MemoryBuffer::getFile(log.path);
    std::string output = text ? (*text)->getBuffer().str() : std::string();
    if (rc != 0)
      return makeError(ptxas + " rejected the PTX for " + arch + ": " +
                       (output.empty() ? execError : output));
    PtxasReport report = parsePtxasReport(output);
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> cubin =
        llvm::MemoryBuffer::getFile(out.path, /*IsText=*/false);
    if (!cubin)
      return makeError("cannot read the cubin ptxas wrote: " +
                       cubin.getError().message());
    report.cubin = (*cubin)->getBuffer().str();
    return report;
  }
};

} // namespace

std::unique_ptr<kiln::TargetBackend> kiln::nvptx::createNVPTXBackend() {
  return std::make_unique<NVPTXBackend>();
}

void kiln::nvptx::registerNVPTXBackend() {
  registerNVPTXTargets();
  kiln::registerBackend(createNVPTXBackend());
}
