//===- KilnDialect.td - The kiln dialect -------------------*- tablegen -*-===//
//
// The dialect definition, its enums and the base class of its ops.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILNDIALECT_TD
#define KILN_DIALECT_KILNDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let cppNamespace = "::kiln";
  let summary = "Tile-level ops of the Kiln kernel language";
  let description = [{
    The `kiln` dialect holds what the upstream dialects lack for tile-level
    GPU kernels: pointers to global memory and strided views, memory ops,
    shape ops, `dot`, reductions, scans, atomics and debugging ops. Tiles are
    builtin ranked tensors of rank 1 to 3; elementwise math uses `arith` and
    `math` on tensors.

    Before const-param specialization, tile dimensions that depend on const
    params are dynamic (`tensor<?x64xf32>`) and ops that create such tiles
    take one integer size operand per `?` dimension of their result.
  }];

  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;

  let extraClassDeclaration = [{
    // Names of the discardable attributes that the dialect verifies.
    static llvm::StringRef getKernelAttrName() { return "kiln.kernel"; }
    static llvm::StringRef getHelperAttrName() { return "kiln.helper"; }
    static llvm::StringRef getGridAttrName() { return "kiln.grid"; }
    static llvm::StringRef getVariantsAttrName() { return "kiln.variants"; }
    static llvm::StringRef getVariantAttrName() { return "kiln.variant"; }
    static llvm::StringRef getTuneAttrName() { return "kiln.tune"; }
    static llvm::StringRef getKeyAttrName() { return "kiln.key"; }
    static llvm::StringRef getWhereAttrName() { return "kiln.where"; }
    // Argument attributes.
    static llvm::StringRef getDivAttrName() { return "kiln.div"; }
    static llvm::StringRef getAlignAttrName() { return "kiln.align"; }

  private:
    void registerTypes();
  }];
}

//===----------------------------------------------------------------------===//
// Enums (stored as integer attributes, printed as keywords)
//===----------------------------------------------------------------------===//

def Kiln_ProgramAxisAttr : I32EnumAttr<"ProgramAxis", "launch grid axis", [
    I32EnumAttrCase<"x", 0>,
    I32EnumAttrCase<"y", 1>,
    I32EnumAttrCase<"z", 2>,
  ]> {
  let cppNamespace = "::kiln";
}

def Kiln_DotPrecisionAttr : I32EnumAttr<"DotPrecision",
    "precision of an f32 dot", [
    I32EnumAttrCase<"ieee", 0>,
    I32EnumAttrCase<"tf32", 1>,
  ]> {
  let cppNamespace = "::kiln";
}

// `and`, `or` and `xor` are C++ alternative tokens, hence the trailing `_`
// in their C++ names; the printed keywords are plain.
def Kiln_AtomicRMWKindAttr : I32EnumAttr<"AtomicRMWKind",
    "atomic read-modify-write operation", [
    I32EnumAttrCase<"add", 0>,
    I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"min", 2>,
    I32EnumAttrCase<"umax", 3>,
    I32EnumAttrCase<"umin", 4>,
    I32EnumAttrCase<"and_", 5, "and">,
    I32EnumAttrCase<"or_", 6, "or">,
    I32EnumAttrCase<"xor_", 7, "xor">,
    I32EnumAttrCase<"xchg", 8>,
  ]> {
  let cppNamespace = "::kiln";
}

//===----------------------------------------------------------------------===//
// Base class of the ops
//===----------------------------------------------------------------------===//

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, traits>;

#endif // KILN_DIALECT_KILNDIALECT_TD
