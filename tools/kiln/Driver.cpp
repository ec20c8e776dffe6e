//===- Driver.cpp - The Kiln compiler driver ------------------------------===//
//
//   kiln compile FILE.tile [--emit=ast|tile|tile-generic|bundle|
//                           launcher-header|launcher-source]
//                          [--targets=T,...] [--host-cpu=CPU]
//                          [-D NAME=VALUE]... [--kernel NAME] [-o OUT]
//   kiln compile FILE.tile --list-variants [-D ...] [--kernel NAME]
//   kiln inspect FILE.kpack [--json]
//   kiln --version | --help
//
// Exit codes: 0 success, 1 user error (bad input or usage), 2 environment
// error (cannot read or write a file, a tool failed). Nothing is written to
// -o on error.
//
//===----------------------------------------------------------------------===//
#include "tools/kiln/Driver.h"

#include "compiler/Bundle/BundleWriter.h"
#include "compiler/Bundle/KernelMetadata.h"
#include "compiler/Dialect/KilnDialect.h"
#include "compiler/MLIRGen/MLIRGen.h"
#include "compiler/GPU/TargetDesc.h"
#include "compiler/Target/CodeCache.h"
#include "compiler/Target/TargetBackend.h"
#include "compiler/Target/TimeReport.h"
#include "compiler/Transforms/Passes.h"
#include "dsl/ASTPrinter.h"
#include "dsl/Diagnostics.h"
#include "dsl/Parser.h"
#include "dsl/Sema.h"
#include "dsl/TuneSpace.h"

#include "RunReport.h"
#include "kiln/runtime.h"
#include "RunTool.h"
#include "TuneTool.h"
#include "tools/kiln/GenericImages.h"
#include "tools/kiln/Launchers.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/Parser/Parser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/PrettyStackTrace.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/xxhash.h"

#include <nlohmann/json.hpp>
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

using namespace kiln;
namespace dsl = kiln::dsl;

#ifndef KILN_VERSION
#define KILN_VERSION "0.0.0"
#endif

int kiln::usageError(const llvm::Twine &msg) {
  llvm::errs() << "kiln: error: " << msg << "\n"
               << "run 'kiln --help' for usage\n";
  return kExitUser;
}

namespace {

/// An error that is not about the command line's form: no pointer to --help.
int userError(const llvm::Twine &msg) {
  llvm::errs() << "kiln: error: " << msg << "\n";
  return kExitUser;
}

/// Each command's USAGE lines and its options: `kiln --help` prints them
/// all (fullUsage), `kiln COMMAND --help` one command's (subcommandUsage).
const char *const kCompileUsage =
    "  kiln compile FILE.tile [options]    compile a .tile file\n";
const char *const kRunUsage =
    "  kiln run FILE.tile --kernel NAME [options] ARG=VALUE...\n"
    "                                      compile for the host and run a kernel\n"
    "                                      on .npy inputs (as kiln-run does)\n";
const char *const kInspectUsage =
    "  kiln inspect FILE.kpack [--json]    list the kernels, variants and images\n"
    "                                      of a bundle\n";
const char *const kTuneUsage =
    "  kiln tune FILE.tile|BUNDLE --kernel NAME --shapes ... [options]\n"
    "                                      measure every variant at each point\n"
    "                                      into the tuning database; also\n"
    "                                      'kiln tune merge', 'kiln tune export'\n";
const char *const kOtherUsage = R"(  kiln --version                      print the version
  kiln --help                         print this help
  kiln COMMAND --help, kiln help COMMAND
                                      one command's usage and options
)";

const char *const kCompileOptions = R"(COMPILE OPTIONS:
  --emit=ast            print the checked syntax tree (with inferred types)
  --emit=tile           print the kiln dialect, one module per tune variant
                        (default)
  --emit=tile-generic   print the kiln dialect before specialization
  --emit=bundle         compile every variant for every target into a .kpack
                        bundle (the default when -o ends in .kpack or
                        --targets is given)
  --emit=launcher-header
                        a C++ header declaring one typed launcher per kernel
                        (reads the signatures only: no code is compiled)
  --emit=launcher-source
                        the C++ source defining them, with the bundle (as for
                        --emit=bundle) embedded as an array; an output that
                        would not change is left untouched (docs/cmake.md)
  --namespace=NS        the launchers' C++ namespace (default: the file's
                        stem, e.g. 'softmax'); 'a::b' nests
  --emit=STAGE          with exactly one target: a backend's stage of every
                        selected variant, each after a comment naming kernel
                        and const params; NVIDIA: gpu (the GPU stage's
                        per-thread form), llvm, ptx, cubin (binary: exactly
                        one variant, pinned with -D)
  --targets=T,...       the bundle's targets (default: host); repeatable;
                        'all': every backend of this kiln at its standard
                        archs (kiln --version lists them)
  --amdgpu-code-object=N
                        the code object version of AMD images: 5 (the
                        default, ROCm 6 and later) or 4 (older runtimes)
  --host-cpu=CPU        the CPU of target 'host' (default: a portable
                        baseline, x86-64-v2 on x86-64; 'native': this machine)
  --check-bounds        checked mode: every load, store and atomic asks the
                        runtime first; the first out-of-range access fails the
                        launch with its source location
  --fast-path           with --emit of a GPU stage: show each variant's
                        fast-path image (aligned arguments; TMA on sm_90a)
                        instead of its generic one
  --generic-images=cover|all
                        which GPU variants also get a generic image (for
                        arguments the fast path's assumptions do not hold
                        for: unaligned pointers, sizes not multiples of 16):
                        cover (default) one per target and launch-condition
                        group, the one needing the least shared memory, so
                        every launch still runs; all: every variant, so such
                        launches tune among them all (compiles take about
                        twice as long)
  --tuned TABLE.json    keep only the variants a tuning table chose (kiln
                        tune export) plus each kernel's default variant, and
                        ship the table in the bundle: launches then use it
                        and never measure (docs/tuning.md)
  --list-variants       print the pruned tune space, one line per variant
  --summary             compile and print one line per specialized variant:
                        its const params and op counts per dialect
  -j N, --jobs N        compile variants on N workers (default: $KILN_JOBS,
                        else one per core); the bundle is the same for any N
  --time-report         after the compile, print on stderr the CPU time of
                        each phase (front end, GPU stage, LLVM, ptxas, ...)
                        summed over the workers, and the slowest passes
  -D NAME=VALUE         pin a const param (or warps, stages) to one value
  --kernel NAME         only this kernel (repeatable)
  -o FILE               write the output to FILE instead of stdout

)";

const char *const kRunOptions = R"(RUN OPTIONS:
  --kernel NAME         the kernel to run (only it is compiled)
  -D NAME=VALUE, --host-cpu=CPU, --check-bounds   as for compile
  --device, --config, --out-dir, ARG=VALUE   as for kiln-run (kiln-run --help)
  --check               compare with a second run on the host (kiln run
                        compiles for the host only, so both runs are on the
                        host: a determinism check); exit code 1 beyond the
                        dtype's tolerance (kiln-run --help)
  --bench[=N], --flops EXPR, --peak-tflops X   time N launches (default 100)
                        as kiln-run does

)";

const char *const kInspectOptions = R"(INSPECT OPTIONS:
  --json                print the manifest JSON with a table of the images
)";

/// The whole usage, for `kiln --help` and a bare `kiln`.
std::string fullUsage() {
  return std::string("OVERVIEW: kiln - ahead-of-time tile kernel compiler\n\n"
                     "USAGE:\n") +
         kCompileUsage + kRunUsage + kInspectUsage + kTuneUsage + kOtherUsage +
         "\n" +
         kCompileOptions + kRunOptions + kInspectOptions;
}

/// One command's usage (its USAGE lines, then its options); none for an
/// unknown command.
std::optional<std::string> subcommandUsage(llvm::StringRef cmd) {
  if (cmd == "compile")
    return std::string("USAGE:\n") + kCompileUsage + "\n" + kCompileOptions;
  if (cmd == "run")
    return std::string("USAGE:\n") + kRunUsage + "\n" + kRunOptions;
  if (cmd == "inspect")
    return std::string("USAGE:\n") + kInspectUsage + "\n" + kInspectOptions;
  if (cmd == "tune")
    return kiln::runtool::tuneUsage("kiln");
  return std::nullopt;
}

/// True when a subcommand's arguments ask for its help.
bool wantsHelp(llvm::ArrayRef<const char *> args) {
  return llvm::any_of(args, [](const char *a) {
    return llvm::StringRef(a) == "--help" || llvm::StringRef(a) == "-h";
  });
}

/// Targets whose backend may be missing from a build, for messages: an
/// arch that no registered backend handles is either one of these (its
/// backend is switched off) or unknown.
struct KnownTarget {
  const char *arch;
  const char *backend;
  /// Part of `--targets=all` when the backend is built: host, the oldest
  /// NVIDIA arch (its PTX runs on every later GPU) and Hopper's, and the
  /// two CDNA data-center GPUs.
  bool standard = false;
};
const KnownTarget kKnownTargets[] = {
    {"host", "host", true},     {"native", "host"},
    {"sm_80", "nvptx", true},   {"sm_86", "nvptx"},
    {"sm_89", "nvptx"},         {"sm_90", "nvptx"},
    {"sm_90a", "nvptx", true},  {"sm_100", "nvptx"},
    {"gfx90a", "amdgpu", true}, {"gfx942", "amdgpu", true},
    {"gfx950", "amdgpu"},       {"gfx1100", "amdgpu"},
    {"gfx1201", "amdgpu"},
};

/// What `--targets=all` means in this build: the standard targets of the
/// registered backends.
std::vector<std::string> standardTargets() {
  std::vector<std::string> names;
  for (const KnownTarget &k : kKnownTargets)
    if (k.standard && lookupBackendForArch(k.arch))
      names.push_back(k.arch);
  return names;
}

/// The target whose CPU --host-cpu chooses.
constexpr const char *kHostTarget = "host";

struct Options {
  std::string input;
  std::string output = "-";
  std::string emit; ///< Empty until chosen (see finishCompileArgs).
  bool listVariants = false;
  bool summary = false;
  dsl::Binding pins;
  std::vector<std::string> kernels;
  std::vector<std::string> targets; ///< As given; empty: none given.
  std::optional<std::string> hostCpu;
  /// --amdgpu-code-object=N: the AMD backend's code object version.
  std::optional<std::string> amdgpuCodeObject;
  /// --check-bounds: code objects ask the runtime before every access.
  bool checkBounds = false;
  /// kiln run: the bundle is kept in memory here instead of being written.
  std::string *bundleSink = nullptr;
  /// --tuned FILE: a tuning table (kiln tune export) whose winners, plus
  /// each kernel's default variant, are the only variants compiled.
  std::string tuned;
  /// --jobs N: compile workers (0: $KILN_JOBS, else one per core).
  unsigned jobs = 0;
  /// kiln run: compile one variant and give its code objects to every
  /// variant, a bundle only good for planning a launch (which variant).
  bool planOnly = false;
  /// --fast-path: --emit shows the fast-path images.
  bool fastPath = false;
  /// --generic-images: which GPU variants get a generic image.
  driver::GenericImagePolicy genericImages = driver::GenericImagePolicy::Cover;
  /// --namespace NS: the launchers' C++ namespace (empty: the file's stem).
  std::string launcherNamespace;
  /// --time-report: print where the compile's time went.
  bool timeReport = false;
};

/// A requested target and the backend that compiles it.
struct ResolvedTarget {
  std::string name; ///< As requested; the bundle's `target`.
  std::string arch; ///< Passed to the backend (--host-cpu changes 'host').
  TargetBackend *backend = nullptr;
};

/// --emit values of the front end and the bundle; anything else names a
/// backend stage.
bool isDriverEmit(llvm::StringRef emit) {
  return emit == "ast" || emit == "tile" || emit == "tile-generic" ||
         emit == "bundle" || emit == "launcher-header" ||
         emit == "launcher-source";
}

/// The outputs that compile a bundle.
bool compilesBundle(llvm::StringRef emit) {
  return emit == "bundle" || emit == "launcher-source";
}

/// Chooses the output kind and checks the options that go with it.
std::optional<int> finishCompileArgs(Options &opts) {
  if (!opts.emit.empty() && !isDriverEmit(opts.emit)) {
    if (opts.targets.size() != 1)
      return usageError("--emit=" + opts.emit + " shows one target's stage: "
                        "give exactly one --targets (e.g. --targets=sm_90a)");
    if (opts.listVariants || opts.summary)
      return usageError(std::string(opts.listVariants ? "--list-variants"
                                                      : "--summary") +
                        " cannot be combined with --emit=" + opts.emit);
    return std::nullopt;
  }
  if (opts.fastPath)
    return usageError("--fast-path applies to --emit of a GPU target's stage "
                      "(gpu, llvm, ptx, cubin, amdgcn, hsaco), not " +
                      (opts.emit.empty() ? std::string("a bundle")
                                         : "--emit=" + opts.emit));
  bool bundleOptions = !opts.targets.empty() || opts.hostCpu ||
                       opts.checkBounds || opts.amdgpuCodeObject;
  if (opts.emit.empty()) {
    bool text = opts.listVariants || opts.summary;
    opts.emit = !text && (bundleOptions ||
                          llvm::StringRef(opts.output).ends_with(".kpack"))
                    ? "bundle"
                    : "tile";
  }
  bool launcher = llvm::StringRef(opts.emit).starts_with("launcher-");
  // A launcher header ignores the bundle's options, so that one list of
  // flags serves both launcher commands of a build rule.
  if (!compilesBundle(opts.emit) && opts.emit != "launcher-header" &&
      bundleOptions)
    return usageError(std::string(opts.targets.empty() ? "--host-cpu"
                                                       : "--targets") +
                      " applies to --emit=bundle or launcher-source, not "
                      "--emit=" + opts.emit);
  if (!launcher && !opts.launcherNamespace.empty())
    return usageError("--namespace applies to --emit=launcher-header and "
                      "launcher-source, not --emit=" + opts.emit);
  if ((compilesBundle(opts.emit) || launcher) &&
      (opts.listVariants || opts.summary))
    return usageError(std::string(opts.listVariants ? "--list-variants"
                                                    : "--summary") +
                      " prints text; it cannot be combined with --emit=" +
                      opts.emit);
  if (compilesBundle(opts.emit) && opts.targets.empty())
    opts.targets.push_back(kHostTarget);
  return std::nullopt;
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
    } else if (a == "--time-report") {
      opts.timeReport = true;
    } else if (a == "--summary") {
      opts.summary = true;
    } else if (isLong("--emit")) {
      auto v = value("--emit");
      if (!v || v->empty())
        return usageError("--emit needs a value: ast, tile, tile-generic, "
                          "bundle, launcher-header, launcher-source, or a "
                          "backend stage (gpu, llvm, ptx, cubin, ...) with "
                          "one --targets");
      // Backend stages are checked against the target's backend later.
      opts.emit = *v;
    } else if (isLong("--namespace")) {
      auto v = value("--namespace");
      std::string why;
      if (!v || v->empty())
        return usageError("--namespace needs a C++ namespace name, e.g. "
                          "--namespace=mylib::kernels");
      if (!isLauncherNamespace(*v, why))
        return usageError("--namespace: " + why);
      opts.launcherNamespace = *v;
    } else if (isLong("--targets")) {
      auto v = value("--targets");
      if (!v)
        return usageError("--targets needs a list of targets, e.g. "
                          "--targets=host");
      llvm::SmallVector<llvm::StringRef> names;
      llvm::StringRef(*v).split(names, ',');
      for (llvm::StringRef name : names) {
        if (name.empty())
          return usageError("--targets: empty target name in '" + *v + "'");
        opts.targets.push_back(name.str());
      }
    } else if (a == "--check-bounds") {
      opts.checkBounds = true;
    } else if (a == "--fast-path") {
      opts.fastPath = true;
    } else if (isLong("--generic-images")) {
      auto v = value("--generic-images");
      if (v && *v == "cover")
        opts.genericImages = driver::GenericImagePolicy::Cover;
      else if (v && *v == "all")
        opts.genericImages = driver::GenericImagePolicy::All;
      else
        return usageError("--generic-images takes 'cover' (a generic image "
                          "for enough variants that every launch runs) or "
                          "'all' (every variant)" +
                          (v ? ", not '" + *v + "'" : std::string()));
    } else if (isLong("--host-cpu")) {
      auto v = value("--host-cpu");
      if (!v || v->empty())
        return usageError("--host-cpu needs a CPU name, e.g. "
                          "--host-cpu=native");
      opts.hostCpu = *v;
    } else if (isLong("--amdgpu-code-object")) {
      auto v = value("--amdgpu-code-object");
      if (!v || v->empty())
        return usageError("--amdgpu-code-object needs a version, 4 or 5");
      opts.amdgpuCodeObject = *v;
    } else if (a.starts_with("-D")) {
      auto v = value("-D");
      if (!v)
        return usageError("-D needs NAME=VALUE");
      auto [name, num] = llvm::StringRef(*v).split('=');
      int64_t parsed;
      if (name.empty() || num.empty() || num.getAsInteger(0, parsed))
        return usageError("-D expects NAME=INTEGER, found '" + *v + "'");
      opts.pins[name.str()] = parsed;
    } else if (isLong("--jobs") || a == "-j" ||
               (a.starts_with("-j") && a.size() > 2 &&
                llvm::isDigit(a[2]))) {
      std::optional<std::string> v =
          a.starts_with("-j") && a.size() > 2 ? std::optional(a.drop_front(2).str())
                                             : value(a == "-j" ? "-j" : "--jobs");
      unsigned n = 0;
      if (!v || llvm::StringRef(*v).getAsInteger(10, n) || n == 0)
        return usageError("--jobs needs a number of workers from 1");
      opts.jobs = n;
    } else if (isLong("--tuned")) {
      auto v = value("--tuned");
      if (!v || v->empty())
        return usageError("--tuned needs a tuning table (kiln tune export "
                          "-o TABLE.json)");
      opts.tuned = *v;
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
  return finishCompileArgs(opts);
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

/// Writes a bundle: to a file next to the output that is then renamed over
/// it, so that no reader ever sees half a bundle and a failure leaves an
/// existing file as it was. Devices and pipes (-o /dev/null) are written in
/// place.
int writeBinaryOutput(const Options &opts, llvm::StringRef bytes) {
  llvm::sys::fs::file_status status;
  if (opts.output == "-" ||
      (!llvm::sys::fs::status(opts.output, status) &&
       llvm::sys::fs::exists(status) &&
       !llvm::sys::fs::is_regular_file(status)))
    return writeOutput(opts, bytes);
  auto temp = llvm::sys::fs::TempFile::create(opts.output + ".tmp-%%%%%%%%");
  if (!temp) {
    llvm::errs() << "kiln: error: cannot open output file '" << opts.output
                 << "': " << llvm::toString(temp.takeError()) << "\n";
    return kExitEnv;
  }
  bool written;
  {
    llvm::raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    os << bytes;
    os.flush();
    written = !os.has_error();
    os.clear_error();
  }
  if (!written) {
    llvm::consumeError(temp->discard());
    llvm::errs() << "kiln: error: cannot write '" << opts.output << "'\n";
    return kExitEnv;
  }
  if (llvm::Error err = temp->keep(opts.output)) {
    llvm::errs() << "kiln: error: cannot write '" << opts.output
                 << "': " << llvm::toString(std::move(err)) << "\n";
    return kExitEnv;
  }
  return 0;
}

/// Writes a generated file unless it already holds exactly `text`: build
/// systems that compare timestamps (ninja's restat) then rebuild nothing
/// that depends on it.
int writeIfChanged(const Options &opts, llvm::StringRef text) {
  if (opts.output != "-")
    if (auto old = llvm::MemoryBuffer::getFile(opts.output, /*IsText=*/false,
                                               /*RequiresNullTerminator=*/false))
      if ((*old)->getBuffer() == text)
        return 0;
  return writeBinaryOutput(opts, text);
}

/// An arch that no registered backend handles: a known target whose
/// backend this build lacks, or an unknown one.
int unavailableTarget(llvm::StringRef name) {
  if (name.starts_with("emu:")) {
    // The emulator runs the archs the GPU backends describe.
    bool haveEmu = llvm::any_of(getRegisteredBackends(), [](TargetBackend *b) {
      return b->getName() == "emu";
    });
    if (!haveEmu)
      return userError("target '" + name +
                       "' needs the emu backend, which this build of kiln "
                       "does not include");
    std::vector<std::string> emulated;
    for (const std::string &arch : gpu::getGPUTargetNames())
      emulated.push_back("emu:" + arch);
    std::string sug = dsl::suggestName(name.str(), emulated);
    return usageError("target '" + name + "' emulates '" + name.drop_front(4) +
                      "', which no GPU backend of this build describes "
                      "(emulated targets: " + llvm::join(emulated, ", ") +
                      ")" + (sug.empty() ? "" : "; did you mean '" + sug +
                                                    "'?"));
  }
  std::vector<std::string> known;
  for (const KnownTarget &k : kKnownTargets) {
    known.push_back(k.arch);
    if (name != k.arch)
      continue;
    for (TargetBackend *backend : getRegisteredBackends())
      if (backend->getName() == k.backend)
        return userError("the " + backend->getName() +
                         " backend does not compile for '" + name + "'");
    return userError("target '" + name + "' needs the " + k.backend +
                     " backend, which this build of kiln does not include");
  }
  std::string sug = dsl::suggestName(name.str(), known);
  return usageError("unknown target '" + name + "' (known targets: " +
                    llvm::join(known, ", ") + ")" +
                    (sug.empty() ? "" : "; did you mean '" + sug + "'?"));
}

/// The backends of the requested targets, sorted by name (the bundle's
/// order) without repeats; applies --host-cpu.
std::optional<int> resolveTargets(const Options &opts,
                                  std::vector<ResolvedTarget> &targets) {
  std::set<std::string> names;
  for (const std::string &name : opts.targets)
    if (name == "all") {
      std::vector<std::string> all = standardTargets();
      if (all.empty())
        return userError("--targets=all: this build of kiln has no backend "
                         "with standard targets");
      names.insert(all.begin(), all.end());
    } else {
      names.insert(name);
    }
  for (const std::string &name : names) {
    TargetBackend *backend = lookupBackendForArch(name);
    if (!backend)
      return unavailableTarget(name);
    targets.push_back({name, name, backend});
  }
  if (opts.amdgpuCodeObject) {
    auto amd = llvm::find_if(targets, [](const ResolvedTarget &t) {
      return t.backend->getName() == "amdgpu";
    });
    if (amd == targets.end())
      return usageError("--amdgpu-code-object applies to AMD targets "
                        "(gfx90a, gfx942, ...), which --targets does not list");
    if (llvm::Error e = amd->backend->setOption("code-object",
                                                *opts.amdgpuCodeObject))
      return userError("--amdgpu-code-object=" + *opts.amdgpuCodeObject +
                       ": " + llvm::toString(std::move(e)));
  }
  if (!opts.hostCpu)
    return std::nullopt;
  auto host = llvm::find_if(
      targets, [](const ResolvedTarget &t) { return t.name == kHostTarget; });
  if (host == targets.end())
    return usageError("--host-cpu applies to target 'host', which --targets "
                      "does not list");
  if (!host->backend->handlesArch(*opts.hostCpu))
    return userError("--host-cpu=" + *opts.hostCpu + ": the " +
                     host->backend->getName() + " backend does not compile "
                     "for '" + *opts.hostCpu + "'");
  host->arch = *opts.hostCpu;
  return std::nullopt;
}

/// A kernel's signature as the language declares it (the MLIR types lose
/// signedness and bool-ness).
bundle::KernelSignature signatureOf(const dsl::KernelDecl &kernel,
                                    const dsl::Sema &sema) {
  bundle::KernelSignature sig;
  sig.name = kernel.name;
  for (const dsl::Param &p : kernel.params) {
    bundle::ParamSignature param;
    param.name = p.name;
    param.type = (p.type.kind == dsl::TypeExpr::Kind::Pointer ? "*" : "") +
                 dsl::spelling(p.type.elem).str();
    for (const dsl::Annotation &a : p.annotations) {
      std::optional<dsl::ConstInt> c =
          a.value ? sema.getConstInt(a.value.get()) : std::nullopt;
      if (!c || !c->value)
        continue;
      if (a.name == "align")
        param.align = *c->value;
      else if (a.name == "div")
        param.div = *c->value;
    }
    sig.params.push_back(std::move(param));
  }
  for (const dsl::ConstParam &cp : kernel.constParams)
    sig.constParams.push_back(cp.name);
  sig.constParams.push_back(dsl::kWarpsName);
  sig.constParams.push_back(dsl::kStagesName);
  return sig;
}

/// Compiles one variant for one target into `objects` (one or more code
/// objects; `set` says which images); returns an exit code on failure. A
/// variant that does not fit the target leaves `objects` empty and says
/// why in `dropped`.
std::optional<int> compileVariant(mlir::ModuleOp variantModule,
                                  const bundle::KernelMetadata &kernel,
                                  const bundle::VariantMetadata &variant,
                                  const ResolvedTarget &target,
                                  ImageSet set,
                                  std::vector<CodeObject> &objects,
                                  std::string &dropped,
                                  llvm::raw_ostream &errs) {
  kiln::timing::Phase phase("backend (other)");
  const std::string &name = kernel.signature.name;
  std::string values;
  for (auto &[param, value] : variant.constValues)
    values += (values.empty() ? "" : ", ") + param + "=" +
              std::to_string(value);
  std::string context = "in variant " + values + " of kernel '" + name +
                        "', for target '" + target.name + "'";
  // What a crash report names (kiln.cpp): this thread's job.
  llvm::PrettyStackTraceFormat crashContext(
      "compiling variant %u (%s) of kernel '%s' for target '%s'",
      unsigned(variant.index), values.c_str(), name.c_str(),
      target.name.c_str());
  // Tests of that report crash here on request (docs/testing.md).
  if (const char *crash = std::getenv("KILN_TEST_CRASH_IN_KERNEL"))
    if (name == crash)
      std::abort();
  bool reported = false;
  mlir::ScopedDiagnosticHandler handler(
      variantModule.getContext(), [&](mlir::Diagnostic &diag) {
        if (diag.getSeverity() == mlir::DiagnosticSeverity::Error) {
          reported = true;
          diag.attachNote() << context;
        }
        return mlir::failure(); // Let the outer handler print it.
      });
  // The backend gets a copy: the module serves every target.
  mlir::OwningOpRef<mlir::ModuleOp> copy(
      llvm::cast<mlir::ModuleOp>(variantModule->clone()));
  std::string entry = target.backend->kernelNamedEntries()
                          ? name
                          : bundle::variantName(name, variant.index);
  llvm::Expected<std::vector<CodeObject>> compiled =
      target.backend->compileImages(*copy, target.arch, entry, set);
  if (!compiled) {
    llvm::Error error = compiled.takeError();
    if (error.isA<ResourceLimitError>() && !reported) {
      dropped = llvm::toString(std::move(error));
      return std::nullopt;
    }
    std::string msg = llvm::toString(std::move(error));
    if (reported) // The diagnostics said what was wrong.
      return kExitUser;
    errs << "kiln: error: cannot compile variant " << variant.index
         << " of kernel '" << name << "' for target '" << target.name
         << "': " << msg << "\n";
    return kExitEnv;
  }
  if (reported)
    return kExitUser;
  for (CodeObject &object : *compiled)
    if (object.entry.empty())
      object.entry = entry;
  objects = std::move(*compiled);
  return std::nullopt;
}

/// The bundle's image of `object`, one code object of `variant` of
/// `kernel` for `target`.
bundle::Image imageOf(const bundle::KernelMetadata &kernel,
                      const bundle::VariantMetadata &variant,
                      const ResolvedTarget &target, CodeObject object) {
  bundle::Image image;
  image.kernel = kernel.signature.name;
  image.variant = variant.index;
  image.target = target.name;
  image.triple = std::move(object.triple);
  image.arch = std::move(object.arch);
  image.entry = std::move(object.entry);
  image.imageKind = object.imageKind;
  image.offloadKind = object.offloadKind;
  image.resourcesJson = std::move(object.resourcesJson);
  image.requiresJson = std::move(object.requiresJson);
  image.assumesJson = std::move(object.assumesJson);
  image.tensorMapsJson = std::move(object.tensorMapsJson);
  image.bytes = std::move(object.bytes);
  return image;
}

/// Compiles every variant of every kernel for every target and writes the
/// bundle, or nothing at all.
/// A diagnostic of a worker's context, kept to be reported again, in job
/// order, through the driver's context (and its source-line printer).
/// A location, independent of its context: file:line:col, call sites (an
/// inlined helper's "called from"), names and fused locations keep their
/// shape when rebuilt in another context.
struct PortableLoc {
  enum Kind { Unknown, File, CallSite, Name, Fused } kind = Unknown;
  std::string text; ///< the file, or the name
  unsigned line = 0, col = 0;
  std::vector<PortableLoc> children; ///< callee, caller / child / fused
};

PortableLoc capture(mlir::Location loc) {
  PortableLoc p;
  if (auto f = llvm::dyn_cast<mlir::FileLineColLoc>(loc)) {
    p.kind = PortableLoc::File;
    p.text = f.getFilename().str();
    p.line = f.getLine();
    p.col = f.getColumn();
  } else if (auto c = llvm::dyn_cast<mlir::CallSiteLoc>(loc)) {
    p.kind = PortableLoc::CallSite;
    p.children = {capture(c.getCallee()), capture(c.getCaller())};
  } else if (auto n = llvm::dyn_cast<mlir::NameLoc>(loc)) {
    p.kind = PortableLoc::Name;
    p.text = n.getName().str();
    p.children = {capture(n.getChildLoc())};
  } else if (auto f = llvm::dyn_cast<mlir::FusedLoc>(loc)) {
    p.kind = PortableLoc::Fused;
    for (mlir::Location l : f.getLocations())
      p.children.push_back(capture(l));
  }
  return p;
}

mlir::Location rebuild(mlir::MLIRContext &ctx, const PortableLoc &p) {
  switch (p.kind) {
  case PortableLoc::File:
    return mlir::FileLineColLoc::get(&ctx, p.text, p.line, p.col);
  case PortableLoc::CallSite:
    return mlir::CallSiteLoc::get(rebuild(ctx, p.children[0]),
                                  rebuild(ctx, p.children[1]));
  case PortableLoc::Name:
    return mlir::NameLoc::get(mlir::StringAttr::get(&ctx, p.text),
                              rebuild(ctx, p.children[0]));
  case PortableLoc::Fused: {
    llvm::SmallVector<mlir::Location> locs;
    for (const PortableLoc &c : p.children)
      locs.push_back(rebuild(ctx, c));
    return mlir::FusedLoc::get(&ctx, locs);
  }
  case PortableLoc::Unknown:
    break;
  }
  return mlir::UnknownLoc::get(&ctx);
}

struct CollectedDiagnostic {
  mlir::DiagnosticSeverity severity;
  PortableLoc loc;
  std::string message;
  std::vector<CollectedDiagnostic> notes;
};

CollectedDiagnostic collect(mlir::Diagnostic &diag) {
  CollectedDiagnostic c;
  c.severity = diag.getSeverity();
  c.loc = capture(diag.getLocation());
  c.message = diag.str();
  for (mlir::Diagnostic &note : diag.getNotes())
    c.notes.push_back(collect(note));
  return c;
}

mlir::Location relocate(mlir::MLIRContext &ctx, const CollectedDiagnostic &c) {
  return rebuild(ctx, c.loc);
}

/// Reports a worker's diagnostic through `ctx`'s handlers.
void reemit(mlir::MLIRContext &ctx, const CollectedDiagnostic &c) {
  mlir::Location loc = relocate(ctx, c);
  mlir::InFlightDiagnostic d =
      c.severity == mlir::DiagnosticSeverity::Error     ? mlir::emitError(loc)
      : c.severity == mlir::DiagnosticSeverity::Warning ? mlir::emitWarning(loc)
      : c.severity == mlir::DiagnosticSeverity::Remark  ? mlir::emitRemark(loc)
                                                         : mlir::emitRemark(loc);
  d << c.message;
  for (const CollectedDiagnostic &n : c.notes)
    d.attachNote(relocate(ctx, n)) << n.message;
}

/// One (kernel, variant, target) of a bundle, compiled by a worker.
struct CompileJob {
  const bundle::KernelMetadata *kernel = nullptr;
  const bundle::VariantMetadata *variant = nullptr;
  const ResolvedTarget *target = nullptr;
  const std::string *ir = nullptr; ///< the variant module, as text
  uint64_t order = 0; ///< its place in the compile (CodeCache)
  ImageSet set = ImageSet::All; ///< which images (--generic-images)
  /// The earlier job whose code objects this one takes: its variant's
  /// module is the same for the target's backend (canonicalizeVariant).
  std::optional<size_t> aliasOf;
  std::vector<CodeObject> objects;
  std::string dropped;
  std::optional<int> rc;
  std::string errors; ///< what compileVariant printed
  std::vector<CollectedDiagnostic> diagnostics;
};

/// A variant module as text, for a worker to parse in its own context
/// (MLIR contexts are not shared between threads here).
std::string workerText(mlir::ModuleOp variant) {
  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(true).printGenericOpForm();
  variant->print(os, flags);
  return text;
}

/// Runs `work` on the variant module parsed from `ir` in a context of its
/// own, its diagnostics kept in `diagnostics`; false when the text does
/// not parse back.
bool inWorkerContext(const std::string &ir,
                     std::vector<CollectedDiagnostic> &diagnostics,
                     llvm::function_ref<void(mlir::ModuleOp)> work) {
  kiln::timing::Phase phase("worker: read the variant");
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  ctx.printOpOnDiagnostic(false);
  ctx.printStackTraceOnDiagnostic(false);
  loadKilnDialects(ctx);
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &diag) {
    diagnostics.push_back(collect(diag));
    return mlir::success();
  });
  mlir::ParserConfig config(&ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(ir, config);
  if (!module)
    return false;
  work(*module);
  return true;
}

/// The key of a variant module as `target`'s backend sees it
/// (TargetBackend::canonicalizeVariant): equal keys, equal code objects.
/// The values of the const params that the launch conditions read are
/// part of it: tile-gpu-bind-launch-conditions builds them into the code
/// (a condition on `stages` makes it matter on any target).
std::string canonicalVariantKey(mlir::ModuleOp variant,
                                const bundle::KernelMetadata &kernel,
                                const bundle::VariantMetadata &info,
                                const ResolvedTarget &target) {
  kiln::timing::Phase phase("code key");
  mlir::OwningOpRef<mlir::ModuleOp> copy(
      llvm::cast<mlir::ModuleOp>(variant->clone()));
  (*copy)->removeAttr("sym_name");
  (*copy)->removeAttr("kiln.variant_index");
  target.backend->canonicalizeVariant(*copy, target.arch);
  std::string text;
  llvm::raw_string_ostream os(text);
  copy->print(os);
  std::string salt = "variant;" + target.name;
  for (int64_t value : driver::conditionGroup(
           info.constValues, driver::namesInConditions(kernel.launchConditions)))
    salt += ";" + std::to_string(value);
  return textKey(text, salt);
}

/// Compiles a job in a context of its own.
void runCompileJob(CompileJob &job, CodeCache &cache) {
  CodeCacheScope scope(cache, job.order);
  llvm::raw_string_ostream errs(job.errors);
  if (!inWorkerContext(*job.ir, job.diagnostics, [&](mlir::ModuleOp module) {
        job.rc = compileVariant(module, *job.kernel, *job.variant,
                                *job.target, job.set, job.objects,
                                job.dropped, errs);
      })) {
    errs << "kiln: error: internal: variant " << job.variant->index
         << " of kernel '" << job.kernel->signature.name
         << "' does not parse back\n";
    job.rc = kExitEnv;
  }
}

/// The number of compile workers: --jobs, else $KILN_JOBS, else one per
/// core.
unsigned compileWorkers(const Options &opts) {
  if (opts.jobs)
    return opts.jobs;
  if (const char *env = std::getenv("KILN_JOBS")) {
    unsigned n = 0;
    if (!llvm::StringRef(env).getAsInteger(10, n) && n > 0)
      return n;
  }
  return std::max(1u, llvm::hardware_concurrency().compute_thread_count());
}

/// One choice of a tuning table (kiln tune export).
struct TableEntry {
  std::string kernel, hash, device, bucket, winner;
};

/// Reads a tuning table; false after an error naming the file.
bool readTuningTable(const std::string &path, std::vector<TableEntry> &out) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf) {
    llvm::errs() << "kiln: error: --tuned: cannot read '" << path
                 << "': " << buf.getError().message() << "\n";
    return false;
  }
  auto fail = [&](const std::string &why) {
    llvm::errs() << "kiln: error: --tuned: '" << path << "' " << why << "\n";
    return false;
  };
  nlohmann::json j = nlohmann::json::parse((*buf)->getBuffer().begin(),
                                           (*buf)->getBuffer().end(), nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded())
    return fail("is not valid JSON");
  if (!j.is_object() || !j.contains("format") ||
      j["format"] != "kiln-tuning-table")
    return fail("is not a Kiln tuning table (expected \"format\": "
                "\"kiln-tuning-table\", as kiln tune export writes)");
  if (!j.contains("version") || j["version"] != 1)
    return fail("has a tuning table version this kiln does not read "
                "(it reads version 1)");
  if (!j.contains("entries") || !j["entries"].is_array())
    return fail("has no \"entries\" array");
  for (const nlohmann::json &e : j["entries"]) {
    TableEntry t;
    for (auto [key, field] :
         {std::pair<const char *, std::string *>{"kernel", &t.kernel},
          {"hash", &t.hash},
          {"device", &t.device},
          {"bucket", &t.bucket},
          {"winner", &t.winner}}) {
      if (!e.is_object() || !e.contains(key) || !e[key].is_string())
        return fail("has an entry without a string \"" + std::string(key) +
                    "\"");
      *field = e[key].get<std::string>();
    }
    out.push_back(std::move(t));
  }
  return true;
}

/// --tuned: keeps, per kernel the table knows (at this kernel's hash), its
/// default variant and the table's winners, and returns the choices to
/// ship. Entries of another version of a kernel, and winners that are not
/// variants here, are warned about and left out.
std::map<std::string, std::vector<bundle::KernelMetadata::TunedChoice>>
applyTuningTable(const Options &opts, const std::vector<TableEntry> &table,
                 const std::map<std::string, std::string> &hashes,
                 std::vector<KernelToEmit> &toEmit) {
  std::map<std::string, std::vector<bundle::KernelMetadata::TunedChoice>>
      shipped;
  for (KernelToEmit &k : toEmit) {
    const std::string &name = k.kernel->name;
    std::string hash = hashes.count(name) ? hashes.at(name) : "";
    std::vector<const TableEntry *> mine;
    size_t stale = 0;
    for (const TableEntry &e : table) {
      if (e.kernel != name)
        continue;
      if (e.hash != hash)
        ++stale;
      else
        mine.push_back(&e);
    }
    if (stale)
      llvm::errs() << "kiln: warning: --tuned " << opts.tuned << ": " << stale
                   << " entr" << (stale == 1 ? "y" : "ies") << " for kernel '"
                   << name << "' were measured for another version of it "
                   << "(its hash is now " << hash << "): left out\n";
    if (mine.empty()) {
      llvm::errs() << "kiln: note: --tuned " << opts.tuned
                   << ": no entry for kernel '" << name
                   << "': all its variants are kept\n";
      continue;
    }
    std::vector<dsl::Variant> kept;
    std::set<std::string> keptNames;
    auto keep = [&](const dsl::Variant &v) {
      if (keptNames.insert(v.str()).second)
        kept.push_back(v);
    };
    keep(k.space.variants.front());
    for (const dsl::Variant &v : k.space.variants)
      for (const TableEntry *e : mine)
        if (e->winner == v.str())
          keep(v);
    for (const TableEntry *e : mine) {
      if (!keptNames.count(e->winner)) {
        llvm::errs() << "kiln: warning: --tuned " << opts.tuned
                     << ": the winner '" << e->winner << "' of kernel '"
                     << name << "' (" << e->device << ", "
                     << (e->bucket.empty() ? "no key" : e->bucket)
                     << ") is not one of its variants here: left out\n";
        continue;
      }
      shipped[name].push_back({e->device, e->bucket, e->winner});
    }
    // Variant order stays the tune space's (the default first).
    std::vector<dsl::Variant> ordered;
    for (const dsl::Variant &v : k.space.variants)
      if (keptNames.count(v.str()))
        ordered.push_back(v);
    k.space.variants = std::move(ordered);
  }
  return shipped;
}

/// Each kernel's content hash (bundle::KernelMetadata::hash): 16 hex
/// digits of the xxh3 of its generic tile IR without the tune space
/// (kiln.tune, kiln.variants, kiln.where) and of the checked mode.
std::map<std::string, std::string> kernelHashes(mlir::ModuleOp generic,
                                                bool checkBounds) {
  std::map<std::string, std::string> hashes;
  for (auto fn : generic.getOps<mlir::func::FuncOp>()) {
    if (!fn->hasAttr("kiln.kernel"))
      continue;
    mlir::func::FuncOp copy = fn.clone();
    for (const char *attr : {"kiln.tune", "kiln.variants", "kiln.where"})
      copy->removeAttr(attr);
    std::string text = checkBounds ? "check-bounds\n" : "\n";
    llvm::raw_string_ostream os(text);
    mlir::OpPrintingFlags flags;
    flags.enableDebugInfo(false);
    copy->print(os, flags);
    copy->erase();
    hashes[fn.getSymName().str()] =
        llvm::utohexstr(llvm::xxh3_64bits(text), /*LowerCase=*/true, 16);
  }
  return hashes;
}

/// The launchers of the selected kernels, or nullopt after reporting a
/// kernel whose name no launcher can have (at the name, with a caret).
std::optional<LauncherFile>
launcherFile(const Options &opts, llvm::ArrayRef<KernelToEmit> kernels,
             llvm::ArrayRef<ResolvedTarget> targets,
             dsl::DiagnosticEngine &diag) {
  LauncherFile file;
  std::string name = opts.input == "-"
                         ? std::string("stdin.tile")
                         : llvm::sys::path::filename(opts.input).str();
  for (char c : name)
    file.sourceName += c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? c : '_';
  file.ident = launcherIdent(name);
  file.ns = opts.launcherNamespace.empty() ? file.ident : opts.launcherNamespace;
  std::string why;
  if (!isLauncherNamespace(file.ns, why)) {
    llvm::errs() << "kiln: error: the launchers' namespace would be the "
                    "file's stem, but "
                 << why << "; give one with --namespace\n";
    return std::nullopt;
  }
  std::vector<std::string> targetNames;
  for (const ResolvedTarget &t : targets)
    targetNames.push_back(t.name);
  file.targets = llvm::join(targetNames, ", ");
  for (const KernelToEmit &k : kernels) {
    const dsl::KernelDecl &decl = *k.kernel;
    std::string problem = launcherNameProblem(decl.name, file);
    if (!problem.empty()) {
      diag.error(decl.nameRange,
                 "kernel name '" + decl.name + "' " + problem +
                     ": it cannot name a C++ launcher; rename the kernel");
      continue;
    }
    LauncherKernel lk;
    lk.name = decl.name;
    for (const dsl::Param &p : decl.params)
      lk.params.push_back({p.name, p.type.kind == dsl::TypeExpr::Kind::Pointer,
                           dsl::spelling(p.type.elem).str()});
    const char *begin = decl.range.Start.getPointer();
    const char *end = decl.body ? decl.body->range.Start.getPointer()
                                : decl.range.End.getPointer();
    std::string text;
    for (char c : llvm::StringRef(begin, end - begin))
      text += llvm::isSpace(c) ? ' ' : c;
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(text).split(parts, ' ', -1, /*KeepEmpty=*/false);
    lk.declaration = llvm::join(parts, " ");
    lk.variants = k.space.variants.size();
    file.kernels.push_back(std::move(lk));
  }
  if (diag.hadError())
    return std::nullopt;
  return file;
}

/// --generic-images=cover, after every job compiled its fast path: per
/// kernel, target and launch-condition group that has no generic image,
/// its variant that needs the least shared memory gets one (the next one
/// where that is over a limit of the target), added before its other
/// images. The new jobs come after `jobs` in the compile's order, so the
/// bundle is the same for any number of workers.
std::optional<int> addGenericImages(
    const std::vector<bundle::KernelMetadata> &kernels,
    llvm::ArrayRef<ResolvedTarget> targets, std::vector<CompileJob> &jobs,
    llvm::function_ref<std::optional<int>(std::vector<CompileJob> &)>
        runBatch) {
  struct Group {
    std::vector<size_t> tries; ///< jobs, in the order to try them
    size_t next = 0;
    std::string read; ///< "BM=64": the const params the conditions read
  };
  std::vector<Group> groups;
  for (const bundle::KernelMetadata &kernel : kernels) {
    std::vector<std::string> read =
        driver::namesInConditions(kernel.launchConditions);
    for (const ResolvedTarget &target : targets) {
      std::vector<size_t> ids;
      std::vector<driver::CompiledVariant> compiled;
      for (size_t i = 0; i < jobs.size(); ++i) {
        const CompileJob &job = jobs[i];
        if (job.kernel != &kernel || job.target != &target)
          continue;
        driver::CompiledVariant v;
        v.variant = job.variant->index;
        v.group = driver::conditionGroup(job.variant->constValues, read);
        v.kept = job.dropped.empty();
        v.hasGeneric = llvm::any_of(job.objects, driver::isGenericImage);
        v.sharedBytes = driver::sharedBytesOf(job.objects);
        ids.push_back(i);
        compiled.push_back(std::move(v));
      }
      for (const std::vector<size_t> &tries :
           driver::uncoveredGroups(compiled)) {
        Group g;
        for (size_t t : tries)
          g.tries.push_back(ids[t]);
        for (const auto &[name, value] : jobs[g.tries[0]].variant->constValues)
          if (llvm::is_contained(read, name))
            g.read += (g.read.empty() ? "" : ", ") + name + "=" +
                      std::to_string(value);
        groups.push_back(std::move(g));
      }
    }
  }
  uint64_t order = jobs.size();
  std::vector<size_t> pending;
  for (size_t g = 0; g < groups.size(); ++g)
    pending.push_back(g);
  while (!pending.empty()) {
    std::vector<CompileJob> batch;
    for (size_t g : pending) {
      const CompileJob &from = jobs[groups[g].tries[groups[g].next]];
      CompileJob job;
      job.kernel = from.kernel;
      job.variant = from.variant;
      job.target = from.target;
      job.ir = from.ir;
      job.order = order++;
      job.set = ImageSet::Generic;
      batch.push_back(std::move(job));
    }
    if (std::optional<int> rc = runBatch(batch))
      return rc;
    std::vector<size_t> again;
    for (size_t b = 0; b < batch.size(); ++b) {
      Group &g = groups[pending[b]];
      CompileJob &done = batch[b];
      if (done.dropped.empty()) {
        // A fast path whose code came out the same (equal code keys) is no
        // image of its own, as under --generic-images=all.
        std::vector<CodeObject> &objects = jobs[g.tries[g.next]].objects;
        if (sameBuilds(objects, done.objects))
          objects.clear();
        objects.insert(objects.begin(),
                       std::make_move_iterator(done.objects.begin()),
                       std::make_move_iterator(done.objects.end()));
      } else if (++g.next < g.tries.size()) {
        again.push_back(pending[b]);
      } else {
        llvm::errs() << "kiln: note: no variant of kernel '"
                     << done.kernel->signature.name << "'"
                     << (g.read.empty() ? "" : " with " + g.read)
                     << " has a generic image for target '"
                     << done.target->name << "' (" << done.dropped
                     << "): its launches need arguments that its fast "
                        "paths' assumptions hold for\n";
      }
    }
    pending = std::move(again);
  }
  return std::nullopt;
}

int emitBundle(
    const Options &opts, mlir::ModuleOp specialized,
    llvm::ArrayRef<KernelToEmit> kernels, const dsl::Sema &sema,
    llvm::ArrayRef<ResolvedTarget> targets,
    const std::map<std::string, std::string> &hashes,
    const std::map<std::string,
                   std::vector<bundle::KernelMetadata::TunedChoice>> &tuned) {
  std::vector<bundle::KernelSignature> signatures;
  for (const KernelToEmit &k : kernels)
    signatures.push_back(signatureOf(*k.kernel, sema));
  auto metadata = bundle::collectKernelMetadata(specialized, signatures);
  if (!metadata)
    return userError("internal: " + llvm::toString(metadata.takeError()));
  for (bundle::KernelMetadata &kernel : *metadata) {
    if (auto it = hashes.find(kernel.signature.name); it != hashes.end())
      kernel.hash = it->second;
    if (auto it = tuned.find(kernel.signature.name); it != tuned.end())
      kernel.tuned = it->second;
  }

  // Variants that do not fit a target are dropped with a note; a kernel
  // left with none for a target is an error naming the limit.
  std::map<std::pair<std::string, std::string>, std::string> lastDropReason;
  std::set<std::pair<std::string, std::string>> kept;
  bundle::Bundle contents;
  contents.source = opts.input == "-"
                        ? std::string("<stdin>")
                        : llvm::sys::path::filename(opts.input).str();
  // Every (kernel, variant, target), in this order; with several workers
  // each compiles from the variant module's text in a context of its own,
  // and the results are gathered in the same order, so the bundle is the
  // same whatever the number of workers.
  std::vector<CompileJob> jobs;
  std::vector<std::string> texts;
  unsigned workers = compileWorkers(opts);
  size_t variantCount = 0;
  for (const bundle::KernelMetadata &kernel : *metadata)
    variantCount += kernel.variants.size();
  bool parallel = workers > 1 && variantCount * targets.size() > 1 &&
                  !opts.planOnly;
  // Variants that make the same code for a target share one build.
  CodeCache cache;
  assert((!opts.planOnly || targets.size() == 1) &&
         "a plan-only bundle has one target");
  // --generic-images=cover: every variant gets its fast path first, then
  // the groups left without a generic image get one (GenericImages.h).
  bool cover = opts.genericImages == driver::GenericImagePolicy::Cover &&
               !opts.planOnly;
  // Runs `batch`: on the workers, each in a context of its own, or here,
  // in order, printing as it goes.
  auto runBatch = [&](std::vector<CompileJob> &batch) -> std::optional<int> {
    if (parallel) {
      llvm::DefaultThreadPool pool(llvm::hardware_concurrency(workers));
      for (CompileJob &job : batch)
        if (!job.aliasOf)
          pool.async([&job, &cache] { runCompileJob(job, cache); });
      pool.wait();
      mlir::MLIRContext &ctx = *specialized.getContext();
      for (CompileJob &job : batch) {
        for (const CollectedDiagnostic &d : job.diagnostics)
          reemit(ctx, d);
        llvm::errs() << job.errors;
        if (job.rc)
          return *job.rc;
      }
      return std::nullopt;
    }
    for (CompileJob &job : batch) {
      if (job.aliasOf)
        continue;
      mlir::ModuleOp variantModule = bundle::lookupVariantModule(
          specialized, job.kernel->signature.name, job.variant->index);
      CodeCacheScope scope(cache, job.order);
      llvm::raw_string_ostream errs(job.errors);
      job.rc = compileVariant(variantModule, *job.kernel, *job.variant,
                              *job.target, job.set, job.objects, job.dropped,
                              errs);
      llvm::errs() << job.errors;
      if (job.rc)
        return *job.rc;
    }
    return std::nullopt;
  };
  texts.reserve(variantCount);
  // Per kernel and target, the first job of each canonical variant key
  // (canonicalVariantKey): later jobs with that key take its objects.
  std::map<std::string, size_t> firstOfKey;
  // Gives an alias job its leader's outcome.
  auto takeLeader = [&](CompileJob &job) {
    const CompileJob &leader = jobs[*job.aliasOf];
    job.objects = leader.objects;
    job.dropped = leader.dropped;
  };
  for (const bundle::KernelMetadata &kernel : *metadata)
    for (const bundle::VariantMetadata &variant : kernel.variants) {
      mlir::ModuleOp variantModule = bundle::lookupVariantModule(
          specialized, kernel.signature.name, variant.index);
      assert(variantModule && "metadata lists only variants it found");
      if (parallel)
        texts.push_back(workerText(variantModule));
      for (const ResolvedTarget &target : targets) {
        CompileJob job;
        job.kernel = &kernel;
        job.variant = &variant;
        job.target = &target;
        job.ir = parallel ? &texts.back() : nullptr;
        job.order = jobs.size();
        job.set = cover ? ImageSet::FastPath : ImageSet::All;
        if (opts.planOnly) {
          // kiln run plans for the host alone (which drops no variant):
          // the first job's objects stand for every job.
          if (!jobs.empty())
            job.aliasOf = 0;
        } else {
          auto [it, first] = firstOfKey.try_emplace(
              kernel.signature.name + '\0' +
                  canonicalVariantKey(variantModule, kernel, variant,
                                      target),
              jobs.size());
          if (!first)
            job.aliasOf = it->second;
        }
        jobs.push_back(std::move(job));
      }
    }
  if (std::optional<int> rc = runBatch(jobs))
    return *rc;
  for (CompileJob &job : jobs)
    if (job.aliasOf)
      takeLeader(job);
  if (cover)
    if (std::optional<int> rc = addGenericImages(*metadata, targets, jobs,
                                                 runBatch))
      return *rc;
  for (CompileJob &job : jobs) {
    const bundle::KernelMetadata &kernel = *job.kernel;
    const bundle::VariantMetadata &variant = *job.variant;
    const ResolvedTarget &target = *job.target;
    if (!job.dropped.empty()) {
      std::string config;
      for (auto &[param, value] : variant.constValues)
        config += (config.empty() ? "" : ", ") + param + "=" +
                  std::to_string(value);
      llvm::errs() << "kiln: note: variant " << variant.index
                   << " of kernel '" << kernel.signature.name << "' ("
                   << config << ") dropped for target '" << target.name
                   << "': " << job.dropped << "\n";
      lastDropReason[{kernel.signature.name, target.name}] = job.dropped;
      continue;
    }
    kept.insert({kernel.signature.name, target.name});
    // Each image of a shared build as the first job that made it built it
    // (its entry's name included), whichever job got to it first.
    for (const CodeObject &object : job.objects) {
      CodeObject canonical = cache.canonicalObject(object);
      canonical.assumesJson = object.assumesJson;
      contents.images.push_back(
          imageOf(kernel, variant, target, std::move(canonical)));
    }
    if (target.name == kHostTarget && contents.hostCpu.empty())
      contents.hostCpu = contents.images.back().arch;
  }
  for (auto &[key, reason] : lastDropReason)
    if (!kept.count(key))
      return userError("kernel '" + key.first + "' has no variant that fits "
                       "target '" + key.second + "': every one " + reason);
  contents.kernels = std::move(*metadata);
  kiln::timing::Phase writing("bundle write");
  llvm::Expected<std::string> bytes = bundle::writeBundle(contents);
  if (!bytes)
    return userError("internal: " + llvm::toString(bytes.takeError()));
  if (opts.bundleSink) {
    *opts.bundleSink = std::move(*bytes);
    return 0;
  }
  return writeBinaryOutput(opts, *bytes);
}

/// `BLOCK=1024, warps=4` of a variant module's `kiln.variant`.
std::string variantConfig(mlir::ModuleOp variant) {
  std::string text;
  if (auto v = variant->getAttrOfType<mlir::DictionaryAttr>("kiln.variant"))
    for (mlir::NamedAttribute na : v)
      if (auto i = llvm::dyn_cast<mlir::IntegerAttr>(na.getValue()))
        text += (text.empty() ? "" : ", ") + na.getName().str() + "=" +
                std::to_string(i.getInt());
  return text;
}

/// What --emit made of one variant.
struct StageResult {
  enum Status { Written, Dropped, Failed } status = Written;
  std::string text;    ///< the stage (text stages: with its comment line)
  std::string message; ///< what to print on stderr (notes, errors)
  std::string dropped; ///< why it was dropped
  int rc = 0;          ///< the exit code when Failed
  std::vector<CollectedDiagnostic> diagnostics; ///< a worker's
};

/// The stage of one variant (its fast path with --fast-path); `several`:
/// other variants are selected, so one over the target's limits is
/// dropped with a note.
StageResult emitVariantStage(const Options &opts, mlir::ModuleOp v,
                             const ResolvedTarget &target, bool several) {
  kiln::timing::Phase phase("backend (other)");
  StageResult r;
  std::string entry = v.getSymName() ? v.getSymName()->str() : "kernel";
  std::string config = variantConfig(v);
  auto fail = [&](int rc, const std::string &message) {
    r.status = StageResult::Failed;
    r.rc = rc;
    r.message += message;
    return std::move(r);
  };
  mlir::OwningOpRef<mlir::ModuleOp> fast;
  if (opts.fastPath) {
    fast = mlir::cast<mlir::ModuleOp>(v->clone());
    if (!target.backend->makeFastPath(*fast, target.arch))
      return fail(kExitUser,
                  "kiln: error: " + entry + " (" + config +
                      ") has no fast-path image for target '" + target.name +
                      "': every argument carries its promise, or no "
                      "assumption about one changes the code\n");
    v = *fast;
    entry += "_a16";
  }
  llvm::Expected<std::string> text =
      target.backend->emitStage(v, target.arch, entry, opts.emit);
  if (!text) {
    llvm::Error error = text.takeError();
    // As for bundles: with several variants, one over the target's limits
    // is dropped with a note.
    if (error.isA<ResourceLimitError>() && several) {
      r.status = StageResult::Dropped;
      r.dropped = llvm::toString(std::move(error));
      r.message += "kiln: note: " + entry + " (" + config +
                   ") dropped for target '" + target.name +
                   "': " + r.dropped + "\n";
      return r;
    }
    return fail(kExitUser, "kiln: error: --emit=" + opts.emit + " of " +
                               entry + " for '" + target.name + "': " +
                               llvm::toString(std::move(error)) + "\n");
  }
  if (target.backend->isBinaryStage(opts.emit)) {
    r.text = std::move(*text);
    return r;
  }
  std::string comment = opts.emit == "llvm" ? ";" : "//";
  r.text = comment + " kernel " + entry + " (" + config + ") for " +
           target.name + "\n" + *text + "\n";
  return r;
}

/// --emit=STAGE: the backend's stage of every specialized variant (text),
/// or of the one variant (binary).
int emitStage(const Options &opts, mlir::ModuleOp specialized,
              const ResolvedTarget &target) {
  std::vector<mlir::ModuleOp> variants(
      specialized.getOps<mlir::ModuleOp>().begin(),
      specialized.getOps<mlir::ModuleOp>().end());
  bool binary = target.backend->isBinaryStage(opts.emit);
  if (binary && variants.size() != 1) {
    std::string list;
    for (mlir::ModuleOp v : variants)
      list += "\n  " + (v.getSymName() ? v.getSymName()->str() : "?") +
              "  " + variantConfig(v);
    return userError("--emit=" + opts.emit + " writes one code object, but " +
                     llvm::Twine(variants.size()) +
                     " variants are selected; pin one with --kernel and -D:" +
                     list);
  }
  // Each variant's stage; with several workers each in a context of its
  // own (as for bundles), reported in variant order.
  std::vector<StageResult> results(variants.size());
  unsigned workers = compileWorkers(opts);
  if (workers > 1 && variants.size() > 1 && !binary) {
    std::vector<std::string> texts;
    for (mlir::ModuleOp v : variants)
      texts.push_back(workerText(v));
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(workers));
    for (size_t i = 0; i < variants.size(); ++i)
      pool.async([&, i] {
        StageResult &r = results[i];
        if (!inWorkerContext(texts[i], r.diagnostics, [&](mlir::ModuleOp v) {
              StageResult done = emitVariantStage(opts, v, target, true);
              done.diagnostics = std::move(r.diagnostics);
              r = std::move(done);
            })) {
          r.status = StageResult::Failed;
          r.rc = kExitEnv;
          r.message = "kiln: error: internal: variant module " +
                      std::to_string(i) + " does not parse back\n";
        }
      });
    pool.wait();
  } else {
    // Diagnostics are kept and reported with the notes, in the same
    // order as with several workers.
    for (size_t i = 0; i < variants.size(); ++i) {
      std::vector<CollectedDiagnostic> diagnostics;
      {
        mlir::ScopedDiagnosticHandler handler(
            specialized.getContext(), [&](mlir::Diagnostic &diag) {
              diagnostics.push_back(collect(diag));
              return mlir::success();
            });
        results[i] = emitVariantStage(opts, variants[i], target,
                                      variants.size() > 1);
      }
      results[i].diagnostics = std::move(diagnostics);
      if (results[i].status == StageResult::Failed)
        break;
    }
  }
  mlir::MLIRContext &ctx = *specialized.getContext();
  std::string out;
  size_t written = 0;
  std::string lastDrop;
  for (StageResult &r : results) {
    for (const CollectedDiagnostic &d : r.diagnostics)
      reemit(ctx, d);
    llvm::errs() << r.message;
    if (r.status == StageResult::Failed)
      return r.rc;
    if (r.status == StageResult::Dropped) {
      lastDrop = r.dropped;
      continue;
    }
    ++written;
    if (binary)
      return writeBinaryOutput(opts, r.text);
    out += r.text;
  }
  if (!written)
    return userError("no variant fits target '" + target.name +
                     "': " + lastDrop);
  return writeOutput(opts, out);
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
  // Command-line problems first, before reading anything.
  std::vector<ResolvedTarget> targets;
  bool stage = !isDriverEmit(opts.emit);
  if (stage) {
    if (auto rc = resolveTargets(opts, targets))
      return *rc;
    TargetBackend *backend = targets.front().backend;
    std::vector<std::string> stages = backend->getStages();
    if (!llvm::is_contained(stages, opts.emit))
      return usageError(
          "unknown --emit value '" + opts.emit + "' for target '" +
          targets.front().name +
          "' (expected ast, tile, tile-generic, bundle, launcher-header, "
          "launcher-source" +
          (stages.empty() ? std::string()
                          : ", or one of the " + backend->getName().str() +
                                " stages: " + llvm::join(stages, ", ")) +
          ")");
    if (backend->isBinaryStage(opts.emit) && opts.output == "-" &&
        llvm::outs().is_displayed())
      return usageError("--emit=" + opts.emit + " is binary; refusing to "
                        "write it to a terminal (use -o FILE)");
  }
  if (compilesBundle(opts.emit)) {
    if (auto rc = resolveTargets(opts, targets))
      return *rc;
    if (opts.emit == "bundle" && !opts.bundleSink && opts.output == "-" &&
        llvm::outs().is_displayed())
      return usageError("a bundle is binary; refusing to write it to a "
                        "terminal (use -o FILE.kpack)");
  }
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
      if (!k.space.key.empty()) {
        std::vector<std::string> keys;
        for (auto [i, name] : llvm::enumerate(k.space.key))
          keys.push_back(i < k.space.keyBuckets.size() &&
                                 k.space.keyBuckets[i] != "pow2"
                             ? name + ": " + k.space.keyBuckets[i]
                             : name);
        os << ", key (" << llvm::join(keys, ", ") << ")";
      }
      os << "\n";
      for (auto &c : k.space.launchConditionTexts)
        os << "  at launch: " << c << "\n";
      for (auto [i, v] : llvm::enumerate(k.space.variants))
        os << "  " << k.kernel->name << "_v" << i << "  " << v.str() << "\n";
    }
    return writeOutput(opts, text);
  }

  // Launchers: the header needs the signatures only; the source, the
  // bundle too.
  std::optional<LauncherFile> launchers;
  if (llvm::StringRef(opts.emit).starts_with("launcher-")) {
    launchers = launcherFile(opts, toEmit, targets, diag);
    if (!launchers)
      return kExitUser;
    if (opts.emit == "launcher-header")
      return writeIfChanged(opts, launcherHeader(*launchers));
  }

  mlir::MLIRContext ctx;
  ctx.printOpOnDiagnostic(false);
  ctx.printStackTraceOnDiagnostic(false);
  mlir::SourceMgrDiagnosticHandler handler(sm, &ctx);
  auto mod = emitModule(ctx, *module, sema, sm, toEmit);
  if (!mod)
    return kExitUser;
  std::map<std::string, std::string> hashes;
  if (compilesBundle(opts.emit) || !opts.tuned.empty())
    hashes = kernelHashes(*mod, opts.checkBounds);
  // --tuned: fewer variants, so the module is built again from them (the
  // hashes do not depend on the variants).
  std::map<std::string, std::vector<bundle::KernelMetadata::TunedChoice>>
      tuned;
  if (!opts.tuned.empty()) {
    std::vector<TableEntry> table;
    if (!readTuningTable(opts.tuned, table))
      return kExitUser;
    tuned = applyTuningTable(opts, table, hashes, toEmit);
    mod = emitModule(ctx, *module, sema, sm, toEmit);
    if (!mod)
      return kExitUser;
  }
  if (opts.emit == "tile" || compilesBundle(opts.emit) || opts.summary ||
      stage) {
    mlir::PassManager pm(&ctx);
    buildTilePipeline(pm);
    kiln::timing::instrument(pm);
    if (mlir::failed(pm.run(*mod)))
      return kExitUser;
  }
  // The checked mode travels to the backends as a module attribute (for
  // bundles and --emit=STAGE alike).
  if (opts.checkBounds)
    for (auto variant : mod->getOps<mlir::ModuleOp>())
      variant->setAttr("kiln.check_bounds", mlir::UnitAttr::get(&ctx));
  if (opts.emit == "bundle")
    return emitBundle(opts, *mod, toEmit, sema, targets, hashes, tuned);
  if (launchers) {
    std::string bytes;
    Options sinkOpts = opts;
    sinkOpts.bundleSink = &bytes;
    if (int rc = emitBundle(sinkOpts, *mod, toEmit, sema, targets, hashes,
                            tuned))
      return rc;
    return writeIfChanged(opts, launcherSource(*launchers, bytes));
  }
  if (stage)
    return emitStage(opts, *mod, targets.front());
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

/// The const params of the variant that a launch of `kernel` with the
/// scalar arguments of `runArgs` (NAME=VALUE) takes with tuning off, from a
/// plan-only bundle on the host; nullopt when that cannot be said (a
/// scalar missing or malformed: the real run reports it).
std::optional<std::vector<std::pair<std::string, int64_t>>>
plannedVariant(const std::string &bundle, const std::string &kernel,
               const std::vector<std::string> &runArgs) {
  namespace rt = kiln::rt;
  rt::Expected<rt::Device> dev = rt::Device::open("host");
  if (!dev)
    return std::nullopt;
  rt::Expected<rt::Module> mod =
      dev->loadModuleMemory(bundle.data(), bundle.size(), "plan");
  if (!mod)
    return std::nullopt;
  rt::Expected<rt::Kernel> k = mod->kernel(kernel);
  if (!k)
    return std::nullopt;
  const rt::KernelInfo &info = k->info();
  std::vector<rt::Arg> args;
  for (const rt::ParamInfo &p : info.Params) {
    if (p.Type.IsPointer) {
      // Pointers do not choose a host variant.
      args.push_back(rt::Arg::pointer(nullptr, p.Type.Element));
      continue;
    }
    std::optional<rt::Arg> value;
    for (const std::string &a : runArgs)
      if (llvm::StringRef(a).starts_with(p.Name + "="))
        if (auto parsed = kiln::runtool::parseScalar(
                p, a.substr(p.Name.size() + 1)))
          value = *parsed;
    if (!value)
      return std::nullopt;
    args.push_back(*value);
  }
  rt::LaunchOptions off;
  off.Tuning = rt::TuningMode::Off;
  rt::Expected<rt::LaunchPlan> plan = k->plan(args, off);
  if (!plan)
    return std::nullopt;
  for (const rt::VariantInfo &v : info.Variants)
    if (v.Index == plan->Variant) {
      std::vector<std::pair<std::string, int64_t>> out;
      for (size_t i = 0; i < info.ConstParams.size(); ++i)
        out.emplace_back(info.ConstParams[i], v.ConstValues[i]);
      return out;
    }
  return std::nullopt;
}

/// `kiln run FILE.tile --kernel NAME [-D N=V]... [--host-cpu=CPU] ...`:
/// compiles the kernel for the host into a bundle in memory, then runs it
/// exactly as `kiln-run` runs a bundle file (the remaining options and the
/// ARG=VALUE arguments are kiln-run's).
int runRun(llvm::ArrayRef<const char *> args) {
  Options opts;
  opts.emit = "bundle";
  std::vector<std::string> runArgs{"kiln run"};
  std::string emuTarget;
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef a = args[i];
    auto takeValue = [&](llvm::StringRef flag) -> std::optional<std::string> {
      if (a.starts_with(flag.str() + "="))
        return a.drop_front(flag.size() + 1).str();
      if (a == flag && i + 1 < args.size())
        return std::string(args[++i]);
      return std::nullopt;
    };
    if (a == "-D" || (a.starts_with("-D") && a.size() > 2)) {
      std::string v = a == "-D" ? (i + 1 < args.size() ? args[++i] : "")
                                : a.drop_front(2).str();
      auto [name, num] = llvm::StringRef(v).split('=');
      int64_t parsed;
      if (name.empty() || num.empty() || num.getAsInteger(0, parsed))
        return usageError("-D expects NAME=INTEGER, found '" + v + "'");
      opts.pins[name.str()] = parsed;
    } else if (a == "--check-bounds") {
      opts.checkBounds = true;
    } else if (a.starts_with("--host-cpu")) {
      auto v = takeValue("--host-cpu");
      if (!v || v->empty())
        return usageError("--host-cpu needs a CPU name");
      opts.hostCpu = *v;
    } else if (a.starts_with("--kernel")) {
      auto v = takeValue("--kernel");
      if (!v || v->empty())
        return usageError("--kernel needs a kernel name");
      opts.kernels = {*v};
      runArgs.push_back("--kernel");
      runArgs.push_back(*v);
    } else if ((a == "--device" || a.starts_with("--device=")) &&
               (a != "--device" || i + 1 < args.size())) {
      // An emulated GPU runs images compiled for it (emu:<arch>).
      std::string device = *takeValue("--device");
      if (llvm::StringRef(device).starts_with("emu:"))
        emuTarget = device;
      runArgs.push_back("--device");
      runArgs.push_back(device);
    } else if ((a == "--config" || a == "--out-dir" ||
                a == "--flops" || a == "--peak-tflops") &&
               i + 1 < args.size()) {
      // kiln-run's options that take a value: the value is never the input.
      runArgs.push_back(a.str());
      runArgs.push_back(args[++i]);
    } else if (opts.input.empty() && !a.starts_with("-") && !a.contains('=')) {
      opts.input = a.str();
    } else {
      runArgs.push_back(a.str());
    }
  }
  if (opts.input.empty())
    return usageError("kiln run: no .tile file given");
  if (opts.kernels.empty())
    return usageError("kiln run: no kernel given: use --kernel NAME");
  // The host, so the bundle always has the host images that --check's
  // reference run needs (with --check on the host, both runs are on the
  // host), and the emulated GPU that --device emu:<arch> names.
  opts.targets = {std::string(kHostTarget)};
  if (!emuTarget.empty())
    opts.targets.push_back(emuTarget);
  // Without tuning, only the variant the launch will take is compiled:
  // --config names it, else a plan-only bundle (one code object shared by
  // every variant) lets the runtime choose it from the scalar arguments.
  std::string config;
  for (size_t i = 0; i < runArgs.size(); ++i) {
    if (runArgs[i] == "--config" && i + 1 < runArgs.size())
      config = runArgs[i + 1];
    else if (llvm::StringRef(runArgs[i]).starts_with("--config="))
      config = runArgs[i].substr(9);
  }
  std::optional<std::vector<std::pair<std::string, int64_t>>> chosen;
  if (!config.empty()) {
    if (auto parsed = kiln::rt::parseConfig(config))
      chosen = *parsed;
  } else if (emuTarget.empty() &&
             kiln::rt::tuningMode() == kiln::rt::TuningMode::Off) {
    Options planOpts = opts;
    planOpts.planOnly = true;
    std::string planBytes;
    planOpts.bundleSink = &planBytes;
    if (int rc = runCompile(planOpts))
      return rc;
    chosen = plannedVariant(planBytes, opts.kernels.front(), runArgs);
  }
  size_t pinned = 0;
  if (chosen)
    for (const auto &[name, value] : *chosen)
      if (!opts.pins.count(name)) {
        opts.pins[name] = value;
        ++pinned;
      }
  std::string bundleBytes;
  opts.bundleSink = &bundleBytes;
  if (int rc = runCompile(opts))
    return rc;
  if (pinned)
    llvm::errs() << "kiln run: note: compiled only the variant "
                 << (config.empty() ? "the launch takes with tuning off"
                                    : "--config names")
                 << "\n";
  std::vector<char *> argv;
  for (std::string &s : runArgs)
    argv.push_back(s.data());
  std::string label = llvm::sys::path::filename(opts.input).str() + " (compiled)";
  return kiln::runtool::runInMemoryBundle("kiln run", bundleBytes, label,
                                          int(argv.size()), argv.data());
}

/// `kiln tune ...`: the tune tool, able to compile .tile sources in memory
/// (for their targets, default host, with their pins).
int runTune(llvm::ArrayRef<const char *> args) {
  kiln::runtool::TileCompiler compile =
      [](const std::string &path, const std::string &kernel,
         const std::vector<std::string> &targets,
         const std::vector<std::pair<std::string, int64_t>> &pins)
      -> kiln::rt::Expected<std::string> {
    Options opts;
    opts.emit = "bundle";
    opts.input = path;
    opts.kernels = {kernel};
    opts.targets = targets.empty() ? std::vector<std::string>{kHostTarget}
                                   : targets;
    for (const auto &[name, value] : pins)
      opts.pins[name] = value;
    std::string bytes;
    opts.bundleSink = &bytes;
    if (int rc = runCompile(opts))
      // runCompile printed the error.
      return kiln::rt::Error(rc == kExitUser ? kiln::rt::ErrorCode::InvalidArgument
                                             : kiln::rt::ErrorCode::IO,
                             "");
    return bytes;
  };
  std::vector<std::string> rest{"tune"};
  for (const char *a : args)
    rest.push_back(a);
  std::vector<char *> argv;
  for (std::string &s : rest)
    argv.push_back(s.data());
  return kiln::runtool::runTuneTool("kiln", int(argv.size()), argv.data(),
                                    &compile);
}

int kiln::runDriver(llvm::ArrayRef<const char *> args) {
  if (args.empty()) {
    llvm::errs() << fullUsage();
    return kExitUser;
  }
  llvm::StringRef cmd = args[0];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    // `kiln help compile`: that subcommand's usage.
    if (args.size() > 1) {
      if (auto usage = subcommandUsage(args[1])) {
        llvm::outs() << *usage;
        return 0;
      }
      return usageError("no help for '" + llvm::Twine(args[1]) +
                        "' (expected 'compile', 'run', 'inspect' or 'tune')");
    }
    llvm::outs() << fullUsage();
    return 0;
  }
  // `kiln compile --help` and the like: the subcommand's own usage, before
  // any of its arguments is looked at.
  if (auto usage = subcommandUsage(cmd); usage && wantsHelp(args.drop_front())) {
    llvm::outs() << *usage;
    return 0;
  }
  if (cmd == "--version") {
    std::vector<std::string> backends;
    for (TargetBackend *b : getRegisteredBackends())
      backends.push_back(b->getName().str());
    llvm::sort(backends);
    llvm::outs() << "kiln " << KILN_VERSION << " (LLVM/MLIR "
                 << LLVM_VERSION_STRING << ")\n"
                 << "backends: " << llvm::join(backends, ", ") << "\n"
                 << "--targets=all: " << llvm::join(standardTargets(), ", ")
                 << "\n";
    return 0;
  }
  if (cmd == "compile") {
    Options opts;
    if (auto rc = parseCompileArgs(args.drop_front(), opts))
      return *rc;
    if (!opts.timeReport)
      return runCompile(opts);
    kiln::timing::enable();
    auto start = std::chrono::steady_clock::now();
    int rc;
    {
      kiln::timing::Phase phase("front end");
      rc = runCompile(opts);
    }
    std::chrono::duration<double> wall =
        std::chrono::steady_clock::now() - start;
    kiln::timing::print(llvm::errs(), wall.count());
    return rc;
  }
  if (cmd == "inspect")
    return runInspect(args.drop_front());
  if (cmd == "run")
    return runRun(args.drop_front());
  if (cmd == "tune")
    return runTune(args.drop_front());
  return usageError("unknown command '" + cmd +
                    "' (expected 'compile', 'run', 'inspect' or 'tune')");
}
