//===- AMDGPUBackend.cpp - Code objects for AMD GPUs ----------------------===//
//
// The TargetBackend for AMD archs: the GPU stage and the ROCDL lowering
// (AMDGPUPipeline.cpp), LLVM IR, O3, an object from LLVM's AMDGPU target in
// process, linked by ld.lld into a code object (hsaco) — no ROCm, no device
// library. The image's resources come from the code object's own metadata
// note (registers, LDS, scratch, spills).
//
//===----------------------------------------------------------------------===//

#include "codegen/amdgpu/AMDGPUBackend.h"

#include "codegen/amdgpu/AMDGPUPasses.h"
#include "codegen/amdgpu/AMDGPUTargets.h"
#include "compiler/GPU/StageDriver.h"
#include "compiler/GPU/TargetDesc.h"
#include "compiler/Target/CodeCache.h"
#include "compiler/Target/LLVMPipeline.h"
#include "compiler/Target/TargetBackend.h"
#include "compiler/Target/TimeReport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ELF.h"
#include "llvm/Object/ELFTypes.h"
#include "llvm/Object/OffloadBinary.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <nlohmann/json.hpp>

#include <optional>

using namespace mlir;

namespace {

constexpr const char *kTriple = "amdgcn-amd-amdhsa";

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// What the code object's metadata note says of its kernel.
struct KernelResources {
  int64_t vgprs = -1, sgprs = -1, agprs = 0, ldsBytes = 0, scratchBytes = 0,
          vgprSpills = 0, sgprSpills = 0, waveSize = 0;
};

/// Reads the NT_AMDGPU_METADATA note (MessagePack) of a linked code object.
llvm::Expected<KernelResources> readKernelResources(llvm::StringRef hsaco,
                                                    llvm::StringRef entry) {
  using ELFT = llvm::object::ELF64LE;
  llvm::Expected<llvm::object::ELFFile<ELFT>> elf =
      llvm::object::ELFFile<ELFT>::create(hsaco);
  if (!elf)
    return elf.takeError();
  auto sections = elf->sections();
  if (!sections)
    return sections.takeError();
  for (const typename ELFT::Shdr &section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_NOTE)
      continue;
    llvm::Error err = llvm::Error::success();
    for (const typename ELFT::Note &note : elf->notes(section, err)) {
      if (note.getName() != "AMDGPU" ||
          note.getType() != llvm::ELF::NT_AMDGPU_METADATA)
        continue;
      llvm::ArrayRef<uint8_t> desc = note.getDesc(section.sh_addralign);
      llvm::msgpack::Document doc;
      if (!doc.readFromBlob(
              llvm::StringRef(reinterpret_cast<const char *>(desc.data()),
                              desc.size()),
              /*Multi=*/false))
        return makeError("the code object's metadata note is not MessagePack");
      auto &root = doc.getRoot().getMap(/*Convert=*/true);
      auto &kernels = root["amdhsa.kernels"].getArray(/*Convert=*/true);
      for (auto &k : kernels) {
        auto &m = k.getMap(/*Convert=*/true);
        if (m[".name"].getString() != entry)
          continue;
        auto get = [&](const char *key) -> int64_t {
          auto it = m.find(doc.getNode(key));
          return it == m.end() ? 0 : int64_t(it->second.getUInt());
        };
        KernelResources r;
        r.vgprs = get(".vgpr_count");
        r.sgprs = get(".sgpr_count");
        r.agprs = get(".agpr_count");
        r.ldsBytes = get(".group_segment_fixed_size");
        r.scratchBytes = get(".private_segment_fixed_size");
        r.vgprSpills = get(".vgpr_spill_count");
        r.sgprSpills = get(".sgpr_spill_count");
        r.waveSize = get(".wavefront_size");
        llvm::consumeError(std::move(err));
        return r;
      }
    }
    if (err)
      return std::move(err);
  }
  return makeError("the code object has no metadata for kernel '" + entry +
                   "'");
}

/// Waves each SIMD can hold by registers, as AMD's occupancy tables count
/// them: CDNA, 512 registers per lane (VGPRs and AGPRs, in granules of 8)
/// for up to 8 waves; RDNA, 1536 (gfx11) or 1024 VGPRs per lane of a
/// wave32 (granules of 24 / 16) for up to 16 waves. Then the LDS: 64 KiB
/// per CU (160 KiB on gfx950), four SIMDs.
int64_t wavesPerSimd(const kiln::gpu::GPUTarget &t, const KernelResources &r,
                     int64_t ldsBytes, int64_t wavesPerGroup) {
  auto roundUp = [](int64_t v, int64_t g) { return (v + g - 1) / g * g; };
  bool cdna = t.warpSize == 64;
  // On CDNA2/3 `.vgpr_count` is already the unified total (architectural
  // VGPRs rounded up to 4, then the AGPRs): adding `.agpr_count` again would
  // count the accumulators twice.
  int64_t regs = std::max<int64_t>(1, r.vgprs);
  int64_t byRegs;
  if (cdna)
    byRegs = std::min<int64_t>(8, 512 / roundUp(regs, 8));
  else if (t.arch == "gfx1100")
    byRegs = std::min<int64_t>(16, 1536 / roundUp(regs, 24));
  else
    byRegs = std::min<int64_t>(16, 1024 / roundUp(regs, 16));
  if (ldsBytes <= 0)
    return byRegs;
  int64_t groups = t.maxSharedBytes / ldsBytes; // per CU
  int64_t byLds = groups * wavesPerGroup / 4;
  return std::max<int64_t>(0, std::min(byRegs, byLds));
}

class AMDGPUBackend : public kiln::gpu::GPUBackend {
public:
  llvm::StringRef getName() const override { return "amdgpu"; }

  std::vector<std::string> getStages() const override {
    return {"gpu", "llvm", "amdgcn", "hsaco"};
  }
  bool isBinaryStage(llvm::StringRef stage) const override {
    return stage == "hsaco";
  }

  /// "code-object": 5 (the default: what ROCm 6 and later load) or 4 (for
  /// older runtimes; ROCm 5 loads both).
  llvm::Error setOption(llvm::StringRef name, llvm::StringRef value) override {
    if (name != "code-object")
      return TargetBackend::setOption(name, value);
    if (value != "4" && value != "5")
      return makeError("the AMD code object version must be 4 or 5, not '" +
                       value + "'");
    codeObjectVersion = value == "4" ? 4 : 5;
    return llvm::Error::success();
  }

  llvm::Expected<std::string> emitStage(ModuleOp variant, llvm::StringRef arch,
                                        llvm::StringRef entry,
                                        llvm::StringRef stage) override {
    llvm::Expected<kiln::gpu::StagedVariant> lowered =
        lower(variant, arch, entry, stage == "gpu");
    if (!lowered)
      return lowered.takeError();
    if (stage == "gpu") {
      std::string text;
      llvm::raw_string_ostream os(text);
      lowered->module->print(os);
      return text;
    }
    auto tm = targetMachine(arch);
    if (!tm)
      return tm.takeError();
    llvm::LLVMContext llvmCtx;
    auto llvmModule = optimizedLLVM(*lowered->module, **tm, llvmCtx, entry);
    if (!llvmModule)
      return llvmModule.takeError();
    if (stage == "llvm") {
      std::string text;
      llvm::raw_string_ostream os(text);
      (*llvmModule)->print(os, nullptr);
      return text;
    }
    if (stage == "amdgcn")
      return emitAssembly(**llvmModule, **tm);
    return kiln::emitAndLinkShared(**llvmModule, **tm, {}, {}, entry);
  }

private:
  /// After the GPU stage: the ROCDL and LLVM dialects.
  static const kiln::gpu::BackendLowering &rocdl() {
    static const kiln::gpu::BackendLowering lowering{
        "AMD", kiln::amdgpu::registerAMDGPUDialects,
        kiln::amdgpu::addROCDLLoweringPasses};
    return lowering;
  }

  static llvm::Expected<kiln::gpu::StagedVariant>
  lower(ModuleOp variant, llvm::StringRef arch, llvm::StringRef entry,
        bool gpuOnly) {
    return rocdl().lower(variant, arch, entry, arch, gpuOnly);
  }

protected:
  void registerTargets() const override {
    kiln::amdgpu::registerAMDGPUTargets();
  }
  const kiln::gpu::BackendLowering &lowering() const override {
    return rocdl();
  }

  /// The code object for `entry`.
  llvm::Expected<std::vector<kiln::CodeObject>>
  compileOne(kiln::gpu::StagedVariant &lowered, llvm::StringRef arch,
             llvm::StringRef entry) override {
    auto tm = targetMachine(arch);
    if (!tm)
      return tm.takeError();
    llvm::LLVMContext llvmCtx;
    auto llvmModule = translatedLLVM(*lowered.module, **tm, llvmCtx, entry);
    if (!llvmModule)
      return llvmModule.takeError();
    // A kernel that prints takes Kiln's print buffer as a last argument
    // the runtime adds, and these formats read its records
    // (ConvertGPUToROCDL.cpp, lowerPrintf; docs/bundle.md).
    std::optional<nlohmann::json> printFormats;
    if (auto formats = (*lowered.module)
                           ->getAttrOfType<mlir::ArrayAttr>(
                               "kiln_gpu.print_formats")) {
      printFormats = nlohmann::json::array();
      for (mlir::Attribute f : formats)
        printFormats->push_back(mlir::cast<mlir::StringAttr>(f).str());
    }
    // What decides the code object besides the module: the launch shape
    // and the print formats (its metadata; the code object version is a
    // module flag).
    std::string salt =
        "amdgpu;" + arch.str() + ";O3;" + std::to_string(lowered.warps) +
        ";" + std::to_string(lowered.sharedBytes) + ";" +
        (printFormats ? printFormats->dump() : std::string());
    return kiln::buildOnce(
        kiln::codeKey(**llvmModule, entry, salt),
        [&]() -> llvm::Expected<std::vector<kiln::CodeObject>> {
          kiln::optimizeLLVMModule(**llvmModule, **tm,
                                   llvm::OptimizationLevel::O3);
          llvm::Expected<std::string> hsaco =
              kiln::emitAndLinkShared(**llvmModule, **tm, {}, {}, entry);
          if (!hsaco)
            return hsaco.takeError();
          return codeObject(std::move(*hsaco), lowered, arch, entry,
                            printFormats);
        });
  }

  /// The code object's image and metadata.
  llvm::Expected<std::vector<kiln::CodeObject>>
  codeObject(std::string hsaco, const kiln::gpu::StagedVariant &lowered,
             llvm::StringRef arch, llvm::StringRef entry,
             const std::optional<nlohmann::json> &printFormats) const {
    llvm::Expected<KernelResources> r = readKernelResources(hsaco, entry);
    if (!r)
      return makeError("reading the code object of '" + entry +
                       "': " + llvm::toString(r.takeError()));
    const kiln::gpu::GPUTarget &target = *lowered.target;
    int64_t threads = lowered.warps * target.warpSize;
    // Dynamic LDS (the stage's plan) on top of any static LDS.
    int64_t lds = lowered.sharedBytes + r->ldsBytes;
    nlohmann::json resources = {
        {"threads", threads},
        {"wave_size", target.warpSize},
        {"shared_bytes", lowered.sharedBytes},
        {"vgprs", r->vgprs},
        {"sgprs", r->sgprs},
        {"agprs", r->agprs},
        {"lds_bytes", lds},
        {"scratch_bytes", r->scratchBytes},
        {"vgpr_spills", r->vgprSpills},
        {"sgpr_spills", r->sgprSpills},
        {"waves_per_simd", wavesPerSimd(target, *r, lds, lowered.warps)},
        {"code_object", codeObjectVersion},
        {"source", "code object"}};
    if (printFormats)
      resources["print_formats"] = *printFormats;
    kiln::CodeObject object;
    object.triple = kTriple;
    object.arch = arch.str();
    object.entry = entry.str();
    object.imageKind = llvm::object::IMG_Object;
    object.offloadKind = llvm::object::OFK_HIP;
    object.bytes = std::move(hsaco);
    object.resourcesJson = resources.dump();
    object.requiresJson =
        nlohmann::json{{"gfx", arch.str()},
                       {"wave_size", target.warpSize},
                       {"code_object", codeObjectVersion}}
            .dump();
    return std::vector<kiln::CodeObject>{std::move(object)};
  }

  static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
  targetMachine(llvm::StringRef arch) {
    static const bool configured = [] {
      // The AMDGPU code generator's straight-line scalar passes (separate
      // constant offsets from GEPs, straight-line strength reduction,
      // n-ary reassociation) redo what the GPU stage's address arithmetic
      // already did: on the suite's code objects they change a handful of
      // registers either way (192 matmul images: 12 use fewer VGPRs, 9
      // more, none spills more) and cost up to 40% of code generation on
      // the element-wise masked code of generic variants. Without the
      // option (a renamed one, say) test/codegen/amdgpu's gfx1100 variant
      // counts change (docs/codegen-amdgpu.md).
      auto &options = llvm::cl::getRegisteredOptions();
      if (llvm::cl::Option *o = options.lookup("amdgpu-scalar-ir-passes"))
        o->addOccurrence(0, o->ArgStr, "false");
      return true;
    }();
    (void)configured;
    return kiln::createTargetMachine(kTriple, arch, "", /*pic=*/true);
  }

  /// The LLVM dialect module as LLVM IR for `tm`, marked with the code
  /// object version, not yet optimized.
  llvm::Expected<std::unique_ptr<llvm::Module>>
  translatedLLVM(ModuleOp module, llvm::TargetMachine &tm,
                 llvm::LLVMContext &llvmCtx, llvm::StringRef entry) const {
    std::unique_ptr<llvm::Module> llvmModule =
        kiln::translateToLLVMIR(module, llvmCtx, entry);
    if (!llvmModule)
      return makeError("translation of '" + entry + "' to LLVM IR failed");
    llvmModule->setTargetTriple(tm.getTargetTriple());
    llvmModule->setDataLayout(tm.createDataLayout());
    llvmModule->addModuleFlag(llvm::Module::Error,
                              "amdhsa_code_object_version",
                              codeObjectVersion * 100);
    return llvmModule;
  }

  /// The same, optimized (O3).
  llvm::Expected<std::unique_ptr<llvm::Module>>
  optimizedLLVM(ModuleOp module, llvm::TargetMachine &tm,
                llvm::LLVMContext &llvmCtx, llvm::StringRef entry) const {
    auto llvmModule = translatedLLVM(module, tm, llvmCtx, entry);
    if (llvmModule)
      kiln::optimizeLLVMModule(**llvmModule, tm, llvm::OptimizationLevel::O3);
    return llvmModule;
  }

  static llvm::Expected<std::string> emitAssembly(llvm::Module &module,
                                                  llvm::TargetMachine &tm) {
    // Code generation changes the module: work on a copy.
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(module);
    std::string text;
    {
      kiln::timing::Phase phase("LLVM code generation");
      llvm::raw_string_ostream os(text);
      llvm::buffer_ostream bos(os);
      llvm::legacy::PassManager codegen;
      if (tm.addPassesToEmitFile(codegen, bos, nullptr,
                                 llvm::CodeGenFileType::AssemblyFile))
        return makeError("the AMDGPU target machine cannot emit assembly");
      codegen.run(*copy);
    }
    return text;
  }

  int codeObjectVersion = 5;
};

} // namespace

std::unique_ptr<kiln::TargetBackend> kiln::amdgpu::createAMDGPUBackend() {
  return std::make_unique<AMDGPUBackend>();
}

void kiln::amdgpu::registerAMDGPUBackend() {
  registerAMDGPUTargets();
  kiln::registerBackend(createAMDGPUBackend());
}
