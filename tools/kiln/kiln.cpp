//===- kiln.cpp - The Kiln compiler driver --------------------------------===//
//
//   kiln compile FILE.tile [--emit=ast|tile|tile-generic] [-D NAME=VALUE]...
//                          [--kernel NAME] [-o OUT]
//   kiln compile FILE.tile --list-variants [-D ...] [--kernel NAME]
//   kiln --version | --help
//
// Exit codes: 0 success, 1 user error (bad input or usage), 2 environment
// error (cannot read or write a file). Nothing is written to -o on error.
//
//===----------------------------------------------------------------------===//
#include "compiler/Dialect/KilnDialect.h"
#include "compiler/MLIRGen/MLIRGen.h"
#include "compiler/Transforms/Passes.h"
#include "dsl/ASTPrinter.h"
#include "dsl/Diagnostics.h"
#include "dsl/Parser.h"
#include "dsl/Sema.h"
#include "dsl/TuneSpace.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

using namespace kiln;
namespace dsl = kiln::dsl;

#ifndef KILN_VERSION
#define KILN_VERSION "0.0.0"
#endif

namespace {

constexpr int kExitUser = 1;
constexpr int kExitEnv = 2;

const char *const kUsage = R"(OVERVIEW: kiln - ahead-of-time tile kernel compiler

USAGE:
  kiln compile FILE.tile [options]    compile a .tile file
  kiln --version                      print the version
  kiln --help                         print this help

COMPILE OPTIONS:
  --emit=ast            print the checked syntax tree (with inferred types)
  --emit=tile           print the kiln dialect, one module per tune variant
                        (default)
  --emit=tile-generic   print the kiln dialect before specialization
  --list-variants       print the pruned tune space, one line per variant
  --summary             compile and print one line per specialized variant:
                        its const params and op counts per dialect
  -D NAME=VALUE         pin a const param (or warps, stages) to one value
  --kernel NAME         only this kernel (repeatable)
  -o FILE               write the output to FILE instead of stdout
)";

struct Options {
  std::string input;
  std::string output = "-";
  std::string emit = "tile";
  bool listVariants = false;
  bool summary = false;
  dsl::Binding pins;
  std::vector<std::string> kernels;
};

int usageError(const llvm::Twine &msg) {
  llvm::errs() << "kiln: error: " << msg << "\n"
               << "run 'kiln --help' for usage\n";
  return kExitUser;
}

/// Parses `kiln compile` arguments; returns an exit code on error.
std::optional<int> parseCompileArgs(llvm::ArrayRef<const char *> args,
                                    Options &opts) {
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef a = args[i];
    auto value = [&](llvm::StringRef flag) -> std::optional<std::string> {
      if (a.size() > flag.size() && a.starts_with(flag) &&
          (a[flag.size()] == '=' || flag == "-D" || flag == "-o"))
        return a.drop_front(flag.size() + (a[flag.size()] == '=' ? 1 : 0)).str();
      if (a == flag && i + 1 < args.size())
        return std::string(args[++i]);
      return std::nullopt;
    };
    // Long options match whole (`--emit`, `--emit=V`), never as a prefix.
    auto isLong = [&](llvm::StringRef flag) {
      return a == flag || (a.starts_with(flag) && a[flag.size()] == '=');
    };
    if (a == "--list-variants") {
      opts.listVariants = true;
    } else if (a == "--summary") {
      opts.summary = true;
    } else if (isLong("--emit")) {
      auto v = value("--emit");
      if (!v)
        return usageError("--emit needs a value: ast, tile or tile-generic");
      if (*v != "ast" && *v != "tile" && *v != "tile-generic")
        return usageError("unknown --emit value '" + *v +
                          "' (expected ast, tile or tile-generic)");
      opts.emit = *v;
    } else if (a.starts_with("-D")) {
      auto v = value("-D");
      if (!v)
        return usageError("-D needs NAME=VALUE");
      auto [name, num] = llvm::StringRef(*v).split('=');
      int64_t parsed;
      if (name.empty() || num.empty() || num.getAsInteger(0, parsed))
        return usageError("-D expects NAME=INTEGER, found '" + *v + "'");
      opts.pins[name.str()] = parsed;
    } else if (isLong("--kernel")) {
      auto v = value("--kernel");
      if (!v)
        return usageError("--kernel needs a kernel name");
      opts.kernels.push_back(*v);
    } else if (a.starts_with("-o")) {
      auto v = value("-o");
      if (!v || v->empty())
        return usageError("-o needs a file name");
      opts.output = *v;
    } else if (a == "-" || !a.starts_with("-")) {
      if (!opts.input.empty())
        return usageError("more than one input file ('" + opts.input +
                          "' and '" + a + "')");
      opts.input = a.str();
    } else {
      return usageError("unknown option '" + a + "'");
    }
  }
  if (opts.input.empty())
    return usageError("no input file");
  return std::nullopt;
}

/// Writes `text` to the output only once everything succeeded.
int writeOutput(const Options &opts, llvm::StringRef text) {
  if (opts.output == "-") {
    llvm::outs() << text;
    llvm::outs().flush();
    return 0;
  }
  std::string err;
  auto out = mlir::openOutputFile(opts.output, &err);
  if (!out) {
    llvm::errs() << "kiln: error: " << err << "\n";
    return kExitEnv;
  }
  out->os() << text;
  out->os().flush();
  if (out->os().has_error()) {
    llvm::errs() << "kiln: error: cannot write '" << opts.output << "'\n";
    out->os().clear_error();
    return kExitEnv;
  }
  out->keep();
  return 0;
}

/// One line per specialized variant: name, const params, op counts.
void printSummary(mlir::ModuleOp mod, llvm::raw_ostream &os) {
  for (auto sub : mod.getOps<mlir::ModuleOp>()) {
    std::map<std::string, unsigned> perDialect;
    unsigned total = 0;
    sub.walk([&](mlir::Operation *op) {
      if (op == sub.getOperation())
        return;
      ++total;
      ++perDialect[op->getName().getDialectNamespace().str()];
    });
    os << (sub.getSymName() ? *sub.getSymName() : "?") << ": ";
    if (auto v = sub->getAttrOfType<mlir::DictionaryAttr>("kiln.variant")) {
      bool first = true;
      for (mlir::NamedAttribute na : v) {
        if (auto i = llvm::dyn_cast<mlir::IntegerAttr>(na.getValue()))
          os << (first ? "" : ", ") << na.getName().getValue() << "="
             << i.getInt();
        first = false;
      }
    }
    os << " | " << total << " ops (";
    bool first = true;
    for (auto &[dialect, n] : perDialect) {
      os << (first ? "" : ", ") << dialect << " " << n;
      first = false;
    }
    os << ")\n";
  }
}

int runCompile(const Options &opts) {
  auto bufOrErr = llvm::MemoryBuffer::getFileOrSTDIN(opts.input, /*IsText=*/false,
                                                     /*RequiresNullTerminator=*/true);
  if (!bufOrErr) {
    llvm::errs() << "kiln: error: cannot read '" << opts.input
                 << "': " << bufOrErr.getError().message() << "\n";
    return kExitEnv;
  }
  llvm::SourceMgr sm;
  unsigned bufferId = sm.AddNewSourceBuffer(std::move(*bufOrErr), llvm::SMLoc());
  dsl::DiagnosticEngine diag(sm);

  std::unique_ptr<dsl::Module> module = dsl::parseModule(sm, bufferId, diag);
  if (diag.hadError())
    return kExitUser;
  dsl::Sema sema(diag, sm);
  if (!sema.check(*module))
    return kExitUser;

  // Kernel selection.
  std::vector<const dsl::KernelDecl *> selected;
  for (auto &name : opts.kernels) {
    auto it = llvm::find_if(module->kernels,
                            [&](auto &k) { return k->name == name; });
    if (it == module->kernels.end()) {
      std::vector<std::string> names;
      for (auto &k : module->kernels)
        names.push_back(k->name);
      std::string sug = dsl::suggestName(name, names);
      llvm::errs() << "kiln: error: no kernel named '" << name << "' in '"
                   << opts.input << "'"
                   << (sug.empty() ? "" : "; did you mean '" + sug + "'?")
                   << "\n";
      return kExitUser;
    }
  }
  for (auto &k : module->kernels)
    if (opts.kernels.empty() || llvm::is_contained(opts.kernels, k->name))
      selected.push_back(k.get());

  if (opts.emit == "ast" && !opts.listVariants) {
    std::string text;
    llvm::raw_string_ostream os(text);
    dsl::printAST(*module, sm, os);
    return writeOutput(opts, text);
  }

  // Every -D must name a const param of some selected kernel.
  for (auto &[name, value] : opts.pins) {
    bool used = name == dsl::kWarpsName || name == dsl::kStagesName;
    for (auto *k : selected)
      for (auto &cp : k->constParams)
        used |= cp.name == name;
    if (!used) {
      std::vector<std::string> names{dsl::kWarpsName, dsl::kStagesName};
      for (auto *k : selected)
        for (auto &cp : k->constParams)
          names.push_back(cp.name);
      std::string sug = dsl::suggestName(name, names);
      llvm::errs() << "kiln: error: -D " << name << "=" << value
                   << ": no selected kernel has a const param '" << name << "'"
                   << (sug.empty() ? "" : "; did you mean '" + sug + "'?")
                   << "\n";
      return kExitUser;
    }
  }

  std::vector<KernelToEmit> toEmit;
  for (auto *k : selected) {
    auto space = dsl::buildTuneSpace(*k, opts.pins, diag, sm);
    if (!space)
      continue;
    toEmit.push_back({k, std::move(*space)});
  }
  if (diag.hadError())
    return kExitUser;

  if (opts.listVariants) {
    std::string text;
    llvm::raw_string_ostream os(text);
    for (auto &k : toEmit) {
      os << "kernel " << k.kernel->name << ": " << k.space.variants.size()
         << " variant" << (k.space.variants.size() == 1 ? "" : "s");
      if (!k.space.key.empty())
        os << ", key (" << llvm::join(k.space.key, ", ") << ")";
      os << "\n";
      for (auto &c : k.space.launchConditionTexts)
        os << "  at launch: " << c << "\n";
      for (auto [i, v] : llvm::enumerate(k.space.variants))
        os << "  " << k.kernel->name << "_v" << i << "  " << v.str() << "\n";
    }
    return writeOutput(opts, text);
  }

  mlir::MLIRContext ctx;
  ctx.printOpOnDiagnostic(false);
  ctx.printStackTraceOnDiagnostic(false);
  mlir::SourceMgrDiagnosticHandler handler(sm, &ctx);
  auto mod = emitModule(ctx, *module, sema, sm, toEmit);
  if (!mod)
    return kExitUser;
  if (opts.emit == "tile" || opts.summary) {
    mlir::PassManager pm(&ctx);
    buildTilePipeline(pm);
    if (mlir::failed(pm.run(*mod)))
      return kExitUser;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (opts.summary) {
    printSummary(*mod, os);
    return writeOutput(opts, text);
  }
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(false);
  mod->print(os, flags);
  os << "\n";
  return writeOutput(opts, text);
}

} // namespace

int main(int argc, char **argv) {
  llvm::ArrayRef<const char *> args(argv + 1, argv + argc);
  if (args.empty()) {
    llvm::errs() << kUsage;
    return kExitUser;
  }
  llvm::StringRef cmd = args[0];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    llvm::outs() << kUsage;
    return 0;
  }
  if (cmd == "--version") {
    llvm::outs() << "kiln " << KILN_VERSION << " (LLVM/MLIR "
                 << LLVM_VERSION_STRING << ")\n";
    return 0;
  }
  if (cmd == "compile") {
    Options opts;
    if (auto rc = parseCompileArgs(args.drop_front(), opts))
      return *rc;
    return runCompile(opts);
  }
  return usageError("unknown command '" + cmd + "' (expected 'compile')");
}
