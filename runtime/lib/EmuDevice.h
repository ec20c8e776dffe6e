//===- EmuDevice.h - The GPU emulator device, internals ---------*- C++ -*-===//
#ifndef KILN_RUNTIME_EMUDEVICE_H
#define KILN_RUNTIME_EMUDEVICE_H

#include "Internal.h"

#include <string>

namespace kiln::rt::detail {

/// Opens an emulator of GPU arch `Arch` ("sm_80"): it runs the bundle's
/// `emu:<Arch>` images (docs/emulator.md).
Expected<std::shared_ptr<DeviceImpl>> openEmuDevice(const std::string &Arch);

/// One warp-wide matrix instruction `Instr` (a target description's name,
/// "nv.mma.m16n8k16.f16") over `Lanes` lanes: lane l's registers of A, B
/// and C are at A[l], B[l], C[l] (elements in the order of the vendor's
/// fragment tables), and its registers of D go to D[l]. False, with
/// `Message`, for an instruction the emulator does not know.
/// (EmuMatrix.cpp: written from the vendors' ISA documents, independently
/// of the compiler's layouts.)
bool emulateMatrixInstr(const std::string &Instr, int Lanes,
                        const void *const *A, const void *const *B,
                        const void *const *C, void *const *D,
                        std::string &Message);

} // namespace kiln::rt::detail

#endif // KILN_RUNTIME_EMUDEVICE_H
