//===- LLVMPipeline.cpp - LLVM's optimization pipeline for backends -------===//

#include "compiler/Target/LLVMPipeline.h"
#include "compiler/Target/TimeReport.h"

#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"

std::unique_ptr<llvm::Module>
kiln::translateToLLVMIR(mlir::Operation *module, llvm::LLVMContext &ctx,
                        llvm::StringRef name) {
  timing::Phase phase("LLVM translation");
  return mlir::translateModuleToLLVMIR(module, ctx, name);
}

void kiln::optimizeLLVMModule(llvm::Module &module, llvm::TargetMachine &tm,
                              llvm::OptimizationLevel level) {
  timing::Phase phase("LLVM optimization");
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
}

kiln::TempFile::~TempFile() {
  if (!path.empty())
    llvm::sys::fs::remove(path);
}

static llvm::Error makeLinkError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Expected<std::string> kiln::findLld() {
  for (const char *name : {"ld.lld-22", "ld.lld"}) {
    if (auto path = llvm::sys::findProgramByName(name))
      return *path;
    if (auto path = llvm::sys::findProgramByName(name, {"/usr/lib/llvm-22/bin"}))
      return *path;
  }
  return makeLinkError("ld.lld not found (install the Debian package lld-22)");
}

llvm::Expected<std::string>
kiln::emitAndLinkShared(llvm::Module &module, llvm::TargetMachine &tm,
                        llvm::ArrayRef<std::string> args,
                        llvm::ArrayRef<std::string> inputs,
                        llvm::StringRef what) {
  TempFile object, shared;
  int fd;
  if (auto ec = llvm::sys::fs::createTemporaryFile("kiln", "o", fd, object.path))
    return makeLinkError("cannot create a temporary file: " + ec.message());
  {
    timing::Phase phase("LLVM code generation");
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    llvm::legacy::PassManager codegen;
    if (tm.addPassesToEmitFile(codegen, os, nullptr,
                               llvm::CodeGenFileType::ObjectFile))
      return makeLinkError("the " + tm.getTargetTriple().str() +
                           " target machine cannot emit object files");
    codegen.run(module);
  }
  if (auto ec = llvm::sys::fs::createTemporaryFile("kiln", "so", shared.path))
    return makeLinkError("cannot create a temporary file: " + ec.message());
  llvm::Expected<std::string> linker = findLld();
  if (!linker)
    return linker.takeError();
  llvm::SmallVector<llvm::StringRef> argv = {*linker, "-shared",
                                             "--build-id=none"};
  for (const std::string &a : args)
    argv.push_back(a);
  argv.append({"-o", shared.path, object.path});
  for (const std::string &i : inputs)
    argv.push_back(i);
  std::string linkError;
  std::optional<llvm::sys::ProcessStatistics> stats;
  int rc;
  {
    timing::Phase phase("ld.lld");
    rc = llvm::sys::ExecuteAndWait(*linker, argv, std::nullopt, {}, 0, 0,
                                   &linkError, nullptr, &stats);
    timing::addChildProcess(stats);
  }
  if (rc != 0)
    return makeLinkError("linking '" + what + "' with " + *linker +
                         " failed" +
                         (linkError.empty() ? "" : ": " + linkError));
  auto bytes = llvm::MemoryBuffer::getFile(shared.path, /*IsText=*/false);
  if (!bytes)
    return makeLinkError("cannot read the linked object: " +
                         bytes.getError().message());
  return (*bytes)->getBuffer().str();
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
kiln::createTargetMachine(llvm::StringRef tripleName, llvm::StringRef cpu,
                          llvm::StringRef features, bool pic) {
  static bool initialized = [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    return true;
  }();
  (void)initialized;
  llvm::Triple triple(tripleName);
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeLinkError("LLVM has no target for " + tripleName + ": " +
                         error);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features, options,
      pic ? std::optional<llvm::Reloc::Model>(llvm::Reloc::PIC_)
          : std::nullopt,
      std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    return makeLinkError("cannot create a target machine for " + tripleName +
                         " CPU '" + cpu + "'");
  return tm;
}
