//===- HostPasses.h - Passes of the host backend ---------------*- C++ -*-===//
#ifndef KILN_CODEGEN_HOST_HOSTPASSES_H
#define KILN_CODEGEN_HOST_HOSTPASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace mlir {
class DialectRegistry;
class OpPassManager;
class RewritePatternSet;
} // namespace mlir

namespace kiln {

#define GEN_PASS_DECL
#include "codegen/host/HostPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/host/HostPasses.h.inc"

/// The dialects and interface models the host pipeline needs (LLVM,
/// linalg, memref, bufferization; bufferization models of the upstream
/// dialects; translation to LLVM IR).
void registerHostDialects(mlir::DialectRegistry &registry);

/// Conversions between f64 and the half types that x86 lacks:
/// arith.truncf from f64 to f16 or bf16 (scalars or vectors) as a
/// conversion to f32 rounded to odd, then to the narrow type (one rounding
/// to nearest even), and arith.extf from bf16 to f64 through f32.
/// kiln-host-legalize-floats uses them; so does the emulator backend.
void populateHalfF64ConversionPatterns(mlir::RewritePatternSet &patterns);

/// Registers convert-tile-to-host and the upstream passes the pipeline uses.
void registerHostPipelinePasses();

/// convert-tile-to-host, then the upstream pipeline down to the LLVM
/// dialect (elementwise ops to linalg, bufferization with deallocation,
/// loops, bf16 expansion, LLVM conversion).
void buildHostLoweringPipeline(mlir::OpPassManager &pm,
                               const std::string &entrySuffix);

} // namespace kiln

#endif // KILN_CODEGEN_HOST_HOSTPASSES_H
