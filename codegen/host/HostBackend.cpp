//===- HostBackend.cpp - Host code objects: LLVM IR -> .so ----------------===//
//
// One specialized variant module -> one ELF shared object exporting the
// variant's entry (runtime/include/kiln/host_abi.h): the host lowering
// pipeline to the LLVM dialect, translation to LLVM IR, O2, code generation
// for the requested CPU (a portable baseline by default), and a link with
// ld.lld into a shared object that needs only libc and libm. The code
// object records what it requires of the CPU (its name and the features
// the target machine compiles for), which the runtime checks against the
// CPU it runs on.
//
//===----------------------------------------------------------------------===//
#include "codegen/host/HostBackend.h"
#include "codegen/host/HostPasses.h"

#include "compiler/Target/CodeCache.h"
#include "compiler/Target/LLVMPipeline.h"
#include "compiler/Target/TargetBackend.h"
#include "compiler/Target/TimeReport.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/TargetParser/X86TargetParser.h"

using namespace mlir;

namespace {

/// Removes a temporary file when it goes out of scope.
llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

class HostBackend final : public kiln::TargetBackend {
public:
  llvm::StringRef getName() const override { return "host"; }
  bool kernelNamedEntries() const override { return true; }

  bool handlesArch(llvm::StringRef arch) const override {
    return arch == "host" || arch == "native" || arch == "generic" ||
           arch.starts_with("x86-64") || arch == "x86_64";
  }

  llvm::Expected<kiln::CodeObject> compile(ModuleOp variant,
                                           llvm::StringRef arch,
                                           llvm::StringRef entry) override;

  /// Variants that differ only in `warps` and `stages` are one job: the
  /// driver compiles the first and gives the others its code object, so
  /// that no worker waits on another's build of the same code.
  void canonicalizeVariant(ModuleOp variant, llvm::StringRef arch) override {
    dropThreadParams(variant);
  }

  /// Host code ignores `warps` and `stages` (a CPU runs a program as one
  /// thread): `variant`'s `kiln.variant` without them.
  static void dropThreadParams(ModuleOp variant) {
    if (auto v = variant->getAttrOfType<DictionaryAttr>("kiln.variant")) {
      NamedAttrList kept(v);
      kept.erase("warps");
      kept.erase("stages");
      variant->setAttr("kiln.variant", kept.getDictionary(variant.getContext()));
    }
  }
};

/// The CPU name for `arch`: the portable baseline unless asked otherwise.
std::string cpuFor(llvm::StringRef arch) {
  if (arch == "native")
    return llvm::sys::getHostCPUName().str();
  if (arch == "host" || arch == "generic")
    return llvm::Triple(llvm::sys::getDefaultTargetTriple()).isX86() ? "x86-64-v2"
                                                                       : "generic";
  return arch.str();
}

/// The target features for `arch`: for `native`, this machine's as LLVM
/// detects them (what clang -march=native passes), so that the code uses
/// what the CPU really has (a virtual machine may hide features of its CPU
/// model); none otherwise (the CPU name implies them).
std::string featuresFor(llvm::StringRef arch) {
  if (arch != "native")
    return "";
  std::vector<std::string> features;
  for (const auto &f : llvm::sys::getHostCPUFeatures())
    features.push_back((f.second ? "+" : "-") + f.first().str());
  llvm::sort(features);
  return llvm::join(features, ",");
}

/// The image's "requires" (docs/bundle.md): the CPU and every feature the
/// target machine compiles for: those the CPU implies (x86), then the
/// feature string's additions and removals, with what they imply. Switches
/// that do not restrict where code runs (retpolines, LVI hardening) are
/// left out.
std::string requiresJsonFor(const llvm::Triple &triple, llvm::StringRef cpu,
                            llvm::StringRef featureString) {
  llvm::StringMap<bool> enabled;
  if (triple.isX86()) {
    llvm::SmallVector<llvm::StringRef> implied;
    llvm::X86::getFeaturesForCPU(cpu, implied);
    for (llvm::StringRef f : implied) {
      llvm::X86::updateImpliedFeatures(f, true, enabled);
      enabled[f] = true;
    }
  }
  llvm::SmallVector<llvm::StringRef> parts;
  featureString.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef f : parts) {
    bool on = f.consume_front("+");
    if (!on && !f.consume_front("-"))
      continue;
    if (triple.isX86())
      llvm::X86::updateImpliedFeatures(f, on, enabled);
    enabled[f] = on;
  }
  std::vector<std::string> names;
  for (const auto &e : enabled) {
    llvm::StringRef name = e.first();
    if (e.second && !name.starts_with("retpoline") &&
        !name.starts_with("lvi-"))
      names.push_back(name.str());
  }
  llvm::sort(names);
  llvm::json::Array features;
  for (std::string &name : names)
    features.push_back(std::move(name));
  llvm::json::Object object{{"cpu", cpu.str()},
                            {"features", std::move(features)}};
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::json::Value(std::move(object));
  return out;
}

/// The host lowering of `module` (a copy of the variant's, the entry
/// named by the kernel's name and `suffix`), then its code object, built
/// once per LLVM module (`salt`: what else decides it; `checked`: the
/// checked mode).
llvm::Expected<std::vector<kiln::CodeObject>>
lowerAndBuild(ModuleOp module, llvm::StringRef entry, llvm::StringRef suffix,
              llvm::StringRef arch, const std::string &salt, bool checked) {
  MLIRContext *ctx = module.getContext();
  {
    kiln::timing::Phase phase("host lowering");
    PassManager pm(ctx);
    kiln::buildHostLoweringPipeline(pm, suffix.str());
    kiln::timing::instrument(pm);
    if (failed(pm.run(module)))
      return makeError("host lowering of '" + entry + "' failed");
  }

  llvm::LLVMContext llvmCtx;
  std::unique_ptr<llvm::Module> llvmModule =
      kiln::translateToLLVMIR(module, llvmCtx, entry);
  if (!llvmModule)
    return makeError("translation of '" + entry + "' to LLVM IR failed");

  return kiln::buildOnce(
      kiln::codeKey(*llvmModule, entry, salt),
      [&]() -> llvm::Expected<std::vector<kiln::CodeObject>> {
        llvm::Expected<kiln::host::SharedObject> so =
            kiln::host::emitSharedObject(*llvmModule, cpuFor(arch),
                                         featuresFor(arch), entry,
                                         llvm::OptimizationLevel::O2, {});
        if (!so)
          return so.takeError();
        llvm::Triple triple(so->triple);
        kiln::CodeObject obj;
        obj.triple = so->triple;
        obj.arch = cpuFor(arch);
        obj.entry = entry.str();
        obj.imageKind = 1;   // llvm::object::IMG_Object
        obj.offloadKind = 0; // llvm::object::OFK_None
        obj.bytes = std::move(so->bytes);
        // The checked mode (--check-bounds) is recorded so that `kiln
        // inspect` shows which images guard their accesses.
        obj.resourcesJson = checked ? "{\"check_bounds\":true}" : "{}";
        obj.requiresJson = requiresJsonFor(triple, so->cpu, so->features);
        return std::vector<kiln::CodeObject>{std::move(obj)};
      });
}

llvm::Expected<kiln::CodeObject>
HostBackend::compile(ModuleOp variant, llvm::StringRef arch,
                     llvm::StringRef entry) {
  MLIRContext *ctx = variant.getContext();
  DialectRegistry registry;
  kiln::registerHostDialects(registry);
  ctx->appendDialectRegistry(registry);
  ctx->loadDialect<LLVM::LLVMDialect, linalg::LinalgDialect,
                   memref::MemRefDialect, bufferization::BufferizationDialect>();

  // Work on a copy: the caller's module is reused for other targets.
  OwningOpRef<ModuleOp> module(cast<ModuleOp>(variant->clone()));
  (*module)->removeAttr("sym_name");
  std::string kernelName;
  for (auto fn : module->getOps<func::FuncOp>())
    if (fn->hasAttr("kiln.kernel"))
      kernelName = fn.getSymName().str();
  if (kernelName.empty())
    return makeError("variant module has no kernel");
  std::string suffix = entry.str();
  if (llvm::StringRef(suffix).starts_with(kernelName))
    suffix = suffix.substr(kernelName.size());
  else
    return makeError("entry '" + entry + "' must start with the kernel name '" +
                     kernelName + "'");

  // Host code ignores `warps` and `stages` (a CPU runs a program as one
  // thread): variants that differ only there make the same code object,
  // which the tile IR without them (and without the variant's index)
  // already tells, before any lowering.
  bool checked = variant->hasAttr("kiln.check_bounds");
  std::string salt = "host;" + cpuFor(arch) + ";" + featuresFor(arch) +
                     ";O2;" + (checked ? "checked" : "unchecked");
  std::string tileText;
  {
    kiln::timing::Phase phase("code key");
    HostBackend::dropThreadParams(*module);
    (*module)->removeAttr("kiln.variant_index");
    llvm::raw_string_ostream os(tileText);
    module->print(os);
  }
  llvm::Expected<std::vector<kiln::CodeObject>> objects = kiln::buildOnce(
      kiln::textKey(tileText, "tile;" + salt),
      [&]() -> llvm::Expected<std::vector<kiln::CodeObject>> {
        return lowerAndBuild(*module, entry, suffix, arch, salt, checked);
      });
  if (!objects)
    return objects.takeError();
  return std::move(objects->front());
}

} // namespace

llvm::Expected<kiln::host::SharedObject> kiln::host::emitSharedObject(
    llvm::Module &llvmModule, llvm::StringRef cpu, llvm::StringRef features,
    llvm::StringRef entry, llvm::OptimizationLevel level,
    llvm::ArrayRef<std::string> libraries) {
  std::string tripleName = llvm::sys::getDefaultTargetTriple();
  llvm::Triple triple(tripleName);
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> created =
      kiln::createTargetMachine(tripleName, cpu, features, /*pic=*/true);
  if (!created)
    return created.takeError();
  std::unique_ptr<llvm::TargetMachine> tm = std::move(*created);
  llvmModule.setTargetTriple(triple);
  llvmModule.setDataLayout(tm->createDataLayout());

  // Only the entry is visible; everything else may be inlined and dropped.
  for (llvm::Function &f : llvmModule)
    if (!f.isDeclaration() && f.getName() != entry)
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  kiln::optimizeLLVMModule(llvmModule, *tm, level);

  // Link: a shared object that needs libm (math functions), libc and what
  // the caller names.
  std::string libDir = "/lib/" + triple.getArchName().str() + "-linux-gnu/";
  std::vector<std::string> libs = {libDir + "libm.so.6"};
  for (const std::string &l : libraries)
    libs.push_back(libDir + l);
  std::vector<std::string> inputs;
  for (const std::string &l : libs)
    if (llvm::sys::fs::exists(l))
      inputs.push_back(l);
  llvm::Expected<std::string> bytes = kiln::emitAndLinkShared(
      llvmModule, *tm, {"--hash-style=gnu", "-O1"}, inputs, entry);
  if (!bytes)
    return bytes.takeError();
  SharedObject so;
  so.triple = tripleName;
  so.cpu = tm->getTargetCPU().str();
  so.features = tm->getTargetFeatureString().str();
  so.bytes = std::move(*bytes);
  return so;
}

void kiln::registerHostBackend() {
  kiln::registerBackend(std::make_unique<HostBackend>());
}

void kiln::registerHostPasses() { registerHostPipelinePasses(); }
