//===- KilnGPUAttrInterfaces.td - Layout interface ---------*- tablegen -*-===//

#ifndef KILN_GPU_ATTR_INTERFACES_TD
#define KILN_GPU_ATTR_INTERFACES_TD

include "mlir/IR/OpBase.td"

def KilnGPU_DistributedLayout : AttrInterface<"DistributedLayoutAttr"> {
  let cppNamespace = "::kiln::gpu";
  let description = [{
    A tile encoding that distributes elements over registers, lanes and
    warps.
  }];
  let methods = [
    InterfaceMethod<"The layout of a tile of `shape`.",
      "::kiln::gpu::LinearLayout", "toLinearLayout",
      (ins "::llvm::ArrayRef<int64_t>":$shape)>,
    InterfaceMethod<"Warps of the program this layout spreads over.",
      "int32_t", "getNumWarps", (ins)>,
  ];
}

#endif // KILN_GPU_ATTR_INTERFACES_TD
