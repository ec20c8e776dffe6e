//===- kiln-bundle-test.cpp - kiln with a fake backend, for tests ---------===//
//
// The kiln driver with one more backend, "kiln-test", whose images are the
// variant's printed MLIR: the bundle writer, reader and `kiln inspect` can
// be tested without a real code generator. Its archs:
//
//   kiln-test, kiln-test-b   compile (triple "kiln-test", resources {"ops": N})
//   kiln-test-user-error     variant 1 fails with an MLIR diagnostic at the
//                            kernel (a user error); variant 0 compiles
//   kiln-test-env-error      fails without a diagnostic: an environment error
//
//===----------------------------------------------------------------------===//
#include "compiler/Target/Backends.h"
#include "compiler/Target/TargetBackend.h"
#include "tools/kiln/Driver.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OperationSupport.h"

#include "llvm/Support/raw_ostream.h"

namespace {

class FakeBackend final : public kiln::TargetBackend {
public:
  llvm::StringRef getName() const override { return "kiln-test"; }

  bool handlesArch(llvm::StringRef arch) const override {
    return arch == "kiln-test" || arch == "kiln-test-b" ||
           arch == "kiln-test-user-error" || arch == "kiln-test-env-error";
  }

  llvm::Expected<kiln::CodeObject> compile(mlir::ModuleOp variant,
                                           llvm::StringRef arch,
                                           llvm::StringRef entry) override {
    auto index = variant->getAttrOfType<mlir::IntegerAttr>("kiln.variant_index");
    if (arch == "kiln-test-user-error" && index && index.getInt() == 1) {
      for (auto fn : variant.getOps<mlir::func::FuncOp>())
        fn.emitError("kiln-test cannot compile this kernel");
      return llvm::createStringError("kiln-test: compilation failed");
    }
    if (arch == "kiln-test-env-error")
      return llvm::createStringError("kiln-test: the fake assembler is missing");

    kiln::CodeObject object;
    object.triple = "kiln-test";
    object.arch = arch.str();
    object.entry = entry.str();
    llvm::raw_string_ostream os(object.bytes);
    mlir::OpPrintingFlags flags;
    flags.enableDebugInfo(false);
    variant->print(os, flags);
    os << "\n";
    size_t ops = 0;
    variant->walk([&](mlir::Operation *) { ++ops; });
    object.resourcesJson = "{\"ops\": " + std::to_string(ops) + "}";
    return object;
  }
};

} // namespace

int main(int argc, char **argv) {
  kiln::registerBuiltinBackends();
  kiln::registerBackend(std::make_unique<FakeBackend>());
  return kiln::runDriver(llvm::ArrayRef<const char *>(argv + 1, argv + argc));
}
