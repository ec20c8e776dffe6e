//===- EmuDevice.h - The GPU emulator device, internals ---------*- C++ -*-===//
#ifndef KILN_RUNTIME_EMUDEVICE_H
#define KILN_RUNTIME_EMUDEVICE_H

#include "Internal.h"

#include <cstdint>
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

/// One warpgroup matrix instruction `Instr` ("nv.wgmma.m64n128k16.f16",
/// "nv.wgmma.m64n64k32.e4m3"),
/// the share of warp `WarpInGroup` (0-3: rows 16 w .. 16 w + 15) over 32
/// lanes: B read from shared memory through the PTX matrix descriptor
/// `DescB` (start field: shared offset / 16), A through `DescA` or, when
/// `A` is not null, from lane l's registers A[l]; `Flags` bit 0: A is
/// M-major, bit 1: B is N-major. `Read(Ctx, offset)` gives the 16 bytes
/// of shared memory at `offset` (a multiple of 16). `Scratch` holds at
/// least kWarpgroupScratch doubles. Allocates nothing (a failed read may
/// end the calling fiber). False, with `Message`, for an unknown
/// instruction. (EmuMatrix.cpp, from the PTX ISA's wgmma layouts.)
constexpr int kWarpgroupScratch = 16 * 32 + 32 * 256;
bool emulateWarpgroupMatrixInstr(const std::string &Instr, int WarpInGroup,
                                 uint64_t DescA, const void *const *A,
                                 uint64_t DescB, int Flags,
                                 const void *const *C, void *const *D,
                                 const uint8_t *(*Read)(void *Ctx,
                                                        int64_t Offset),
                                 void *Ctx, double *Scratch,
                                 std::string &Message);

} // namespace kiln::rt::detail

#endif // KILN_RUNTIME_EMUDEVICE_H
