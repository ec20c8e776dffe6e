//===- NVPTXBackend.h - The NVIDIA backend ----------------------*- C++ -*-===//
//
// The public entries of codegen/nvptx: the backend factory and the
// registration of its archs, passes and dialects.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_CODEGEN_NVPTX_NVPTXBACKEND_H
#define KILN_CODEGEN_NVPTX_NVPTXBACKEND_H

#include <memory>

namespace kiln {
class TargetBackend;
namespace nvptx {

/// The backend for sm_80, sm_86, sm_89, sm_90, sm_90a and sm_100.
std::unique_ptr<TargetBackend> createNVPTXBackend();

/// Registers the backend with the TargetBackend registry.
void registerNVPTXBackend();

} // namespace nvptx
} // namespace kiln

#endif // KILN_CODEGEN_NVPTX_NVPTXBACKEND_H
