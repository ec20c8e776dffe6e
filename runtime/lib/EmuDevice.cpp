//===- EmuDevice.cpp - The GPU emulator device ----------------------------===//
//
// Runs `emu:<arch>` images (kiln/emu_abi.h, docs/emulator.md): each program
// of the grid runs on one worker of a thread pool as warps x warp size
// fibers, one per GPU thread (started with makecontext, then switched with
// _setjmp/_longjmp, which save no signal mask: no system call per
// switch), scheduled cooperatively: a thread
// runs until it reaches a barrier or a warp-collective op (shuffle, matrix
// load, matrix instruction), and those complete when every thread (or
// every lane of the warp) has arrived. Memory is host memory (the host
// device's); shared memory is one buffer per program, every access checked
// against its size and against the other threads' accesses since the last
// barrier (an epoch per barrier, a shadow record per byte), so that races,
// reads of bytes nothing wrote, out-of-range accesses, barriers not reached
// by every thread and lanes that diverge at a warp-collective op fail the
// launch with a message naming the kernel's source location and the
// threads. Asynchronous copies are queued per thread and land at the wait
// that covers them. Hopper's mbarriers count arrivals and transaction
// bytes per phase; a tensor load (TMA) writes its whole box at once and
// completes its bytes on its barrier, and each thread may read those bytes
// only after its own wait saw that phase complete.
//
//===----------------------------------------------------------------------===//

// Fibers switch with _setjmp/_longjmp between their own stacks, which the
// fortified longjmp would refuse.
#undef _FORTIFY_SOURCE

#include "CudaDevice.h"
#include "EmuDevice.h"
#include "Fault.h"
#include "FiberSanitizer.h"
#include "HostDevice.h"
#include "ThreadPool.h"

#include "kiln/emu_abi.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include <csetjmp>

#include <setjmp.h>
#include <sys/mman.h>
#include <ucontext.h>

using namespace kiln::rt;
using namespace kiln::rt::detail;

namespace {

constexpr size_t kFiberStackBytes = size_t(1) << 20;
constexpr size_t kWorkerStackBytes = size_t(8) << 20;

class EmuDevice;
struct EmuLaunch;
struct EmuProgram;

enum class Status { Runnable, AtBarrier, AtWarpOp, AtMbarrier, Done, Stopped };

static_assert(sizeof(KilnEmuTensorMap) == 128 &&
                  offsetof(KilnEmuTensorMap, sizes) == 16 &&
                  offsetof(KilnEmuTensorMap, strides) == 56 &&
                  offsetof(KilnEmuTensorMap, box) == 96 &&
                  offsetof(KilnEmuTensorMap, swizzle) == 116,
              "the layout kiln/emu_abi.h documents");

/// A warp-collective op in progress: what each lane brings.
enum class WarpOp { None, Shuffle, LoadMatrix, Mma, WarpgroupMma,
                     WarpgroupWait };

struct PendingCopy {
  int32_t Offset;
  const void *Src;
  int32_t Bytes;
  bool Valid;
  const char *Where;
};

struct EmuThread {
  KilnEmuThread Abi; ///< first: what the generated code reads
  EmuProgram *Program = nullptr;
  ucontext_t Context; ///< the fiber's first start
  jmp_buf Start;      ///< where a program's thread begins
  jmp_buf Jump;       ///< where it resumes
  bool Started = false;
  void *Stack = nullptr;
  fiber::Stack Fiber; ///< the sanitizers' view of `Stack`
  Status State = Status::Done;
  const char *Where = nullptr; ///< where it waits
  // The warp-collective op it brings.
  WarpOp Op = WarpOp::None;
  int32_t Kind = 0, Offset = 0, Count = 0;
  bool Transpose = false;
  uint64_t Value = 0, Result = 0;
  const char *Instr = nullptr;
  const void *A = nullptr, *B = nullptr, *C = nullptr;
  uint64_t DescA = 0, DescB = 0; // warpgroup_mma
  int32_t Flags = 0;
  void *Out = nullptr;
  // Asynchronous copies: committed groups (oldest first) and the open one.
  std::deque<std::vector<PendingCopy>> Groups;
  std::vector<PendingCopy> Open;
  /// The mbarrier and parity it waits for (Status::AtMbarrier).
  int32_t WaitBarrier = 0, WaitParity = 0;
  /// Per mbarrier (by shared offset): the phases this thread saw complete
  /// (EmuProgram::MBarrier::Completed when its last wait returned). It may
  /// read what a tensor load completed in phase P once this is above P.
  std::map<int32_t, uint32_t> Observed;
  /// The last line it printed (a failed assertion prints its message
  /// before it traps).
  std::string LastPrint;
};

/// What the race check remembers of one byte of shared memory.
struct Shadow {
  int32_t Writer = -1;
  uint32_t WriteEpoch = 0;
  const char *WriteWhere = nullptr;
  int32_t Reader = -1;    ///< the first reader in ReadEpoch
  bool OthersRead = false; ///< threads besides Reader read it too
  uint32_t ReadEpoch = 0;
  const char *ReadWhere = nullptr;
  bool Written = false;
  /// Where the asynchronous copy that will write it started; null when
  /// none is in flight.
  const char *CopyWhere = nullptr;
  /// Warpgroup matrix instructions that read it and are not waited for
  /// yet (their warps' batches), and where the last one was issued.
  int32_t MatrixReaders = 0;
  const char *MatrixWhere = nullptr;
  /// Written by a tensor load (TMA) whose bytes complete phase TmaPhase
  /// (counted from the program's start) of the mbarrier at TmaBarrier; -1
  /// when the last write was not a tensor load's.
  int32_t TmaBarrier = -1;
  uint32_t TmaPhase = 0;
  const char *TmaWhere = nullptr;
};

/// One launch, shared by its workers.
struct EmuLaunch {
  EmuDevice *Device = nullptr;
  HostMemoryDevice *Memory = nullptr; ///< the same device, complete here
  KilnEmuEntry Entry = nullptr;
  void **Args = nullptr;
  GridDims Grid;
  int32_t Threads = 0, WarpSize = 32;
  int64_t SharedBytes = 0;
  /// A --check-bounds image: tensor loads check their global reads too.
  bool CheckBounds = false;
  std::atomic<uint64_t> Next{0};
  /// Programs past the first failed one do not start; the report is the
  /// failure of the lowest program index, whatever the workers' timing.
  std::atomic<uint64_t> FailedIndex{UINT64_MAX};
  std::mutex ErrorMutex;
  std::string ErrorMessage;
  ErrorCode Code = ErrorCode::Success;

  bool failed() const { return FailedIndex.load() != UINT64_MAX; }

  void fail(uint64_t Index, ErrorCode C, std::string Message) {
    std::lock_guard<std::mutex> Lock(ErrorMutex);
    if (Index >= FailedIndex.load())
      return;
    Code = C;
    ErrorMessage = std::move(Message);
    FailedIndex.store(Index);
  }
};

extern const KilnEmuOps kOps;

/// The fibers, shared memory and shadow of one worker, reused for every
/// program it runs.
struct EmuProgram {
  EmuLaunch *Launch = nullptr;
  std::vector<EmuThread> T;
  ucontext_t Scheduler; ///< uc_link of the threads (never reached)
  jmp_buf SchedulerJump;
  fiber::Stack SchedulerStack; ///< the worker's own stack
  std::vector<uint8_t> Shared;
  std::vector<Shadow> ShadowMem;
  uint32_t Epoch = 1;
  int32_t BarrierArrived = 0;
  const char *BarrierWhere = nullptr; ///< where the first arrival waits
  int32_t Done = 0;                   ///< threads that have exited
  /// Per warp: lanes arrived at its collective op, which op and where,
  /// and lanes that have exited.
  struct WarpState {
    int32_t Arrived = 0, Done = 0;
    WarpOp Op = WarpOp::None;
    const char *Where = nullptr;
    /// The 16-byte chunks of shared memory read by this warp's warpgroup
    /// matrix instructions not waited for yet, one batch per wait (the
    /// last one open): they must not be written until a wait covers them.
    std::deque<std::vector<int32_t>> MatrixReads;
  };
  std::vector<WarpState> Warps;
  /// Reads of bytes nothing had written, checked at the next barrier.
  struct UnwrittenRead {
    int32_t Byte, Thread;
    const char *Where;
  };
  std::vector<UnwrittenRead> Unwritten;
  /// Hopper's mbarriers, by shared offset, from their first init.
  struct MBarrier {
    int32_t Count = 1;      ///< arrivals per phase
    int32_t Arrived = 0;    ///< in the current phase
    int64_t PendingTx = 0;  ///< transaction bytes the phase still expects
    uint32_t Completed = 0; ///< phases completed since the program started
    uint32_t InitAt = 0;    ///< Completed at the last init (parity base)
    uint32_t parity() const { return (Completed - InitAt) & 1; }
  };
  std::map<int32_t, MBarrier> MBarriers;
  /// The tag a tensor load's writes give the bytes (access(TmaWrite)).
  int32_t TmaBarrierTag = -1;
  uint32_t TmaPhaseTag = 0;
  /// A tensor load's box, dense, before it is swizzled into place.
  std::vector<uint8_t> TmaScratch;

  /// The first read of bytes still unwritten, as a message; "" if none.
  std::string unwrittenReads() {
    for (const UnwrittenRead &R : Unwritten)
      if (!ShadowMem[size_t(R.Byte)].Written)
        return "read of shared memory nothing wrote: byte " +
               std::to_string(R.Byte) + " by " + thread(R.Thread) +
               at(R.Where);
    Unwritten.clear();
    return "";
  }
  bool Failed = false;
  int32_t Id[3] = {0, 0, 0};
  uint64_t ProgramIndex = 0; ///< the program running, x fastest

  ~EmuProgram() {
    for (EmuThread &Th : T)
      if (Th.Stack) {
        fiber::destroy(Th.Fiber);
        munmap(Th.Stack, kFiberStackBytes);
      }
  }

  std::string program() const {
    return "program (" + std::to_string(Id[0]) + ", " + std::to_string(Id[1]) +
           ", " + std::to_string(Id[2]) + ")";
  }
  std::string thread(int32_t I) const {
    if (I < 0)
      return "another thread";
    int32_t W = Launch->WarpSize;
    return "thread " + std::to_string(I) + " (warp " + std::to_string(I / W) +
           ", lane " + std::to_string(I % W) + ")";
  }
  static std::string at(const char *Where) {
    return Where && *Where ? std::string(" at ") + Where : std::string();
  }

  /// Records the error that ends the program; `stop` then leaves the
  /// fiber. The two are apart because the fiber is abandoned, not unwound:
  /// nothing on its stack is destroyed, so `stop` must come once the
  /// message and every other string and vector of the calling frames are
  /// gone (`report(...); stop(Th);`, two statements), or their memory
  /// leaks with each failed launch.
  void report(EmuThread &Th, ErrorCode C, const std::string &Msg) {
    Failed = true;
    Launch->fail(ProgramIndex, C, Msg + " (in " + program() + ")");
    Th.State = Status::Stopped;
  }
  /// Back to the scheduler for good, after `report`.
  [[noreturn]] void stop(EmuThread &Th) {
    fiber::leave(Th.Fiber, SchedulerStack);
    KILN_FIBER_LONGJMP(SchedulerJump, 1);
  }

  /// Back to the scheduler until it resumes this thread.
  void yield(EmuThread &Th) {
    if (_setjmp(Th.Jump) == 0) {
      fiber::leave(Th.Fiber, SchedulerStack);
      KILN_FIBER_LONGJMP(SchedulerJump, 1);
    }
    fiber::arrive(Th.Fiber, &SchedulerStack);
  }

  /// Runs `Th` until it yields, ends or fails.
  void resume(EmuThread &Th) {
    if (_setjmp(SchedulerJump) != 0) {
      fiber::arrive(SchedulerStack);
      return;
    }
    fiber::leave(SchedulerStack, Th.Fiber);
    if (!Th.Started) {
      Th.Started = true;
      KILN_FIBER_LONGJMP(Th.Start, 1);
    }
    KILN_FIBER_LONGJMP(Th.Jump, 1);
  }

  bool prepare(EmuLaunch &L) {
    Launch = &L;
    size_t N = size_t(L.Threads);
    if (T.size() < N)
      T.resize(N);
    // Stacks a failed launch could not map are mapped by the next.
    for (size_t I = 0; I < N; ++I) {
      if (T[I].Stack)
        continue;
      void *S = fault::inject(fault::Point::Allocate, "mmap")
                    ? MAP_FAILED
                    : mmap(nullptr, kFiberStackBytes, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (S == MAP_FAILED)
        return false;
      T[I].Stack = S;
      fiber::create(T[I].Fiber, S, kFiberStackBytes);
    }
    Shared.assign(size_t(L.SharedBytes), 0);
    ShadowMem.assign(size_t(L.SharedBytes), Shadow());
    Warps.assign(size_t((L.Threads + L.WarpSize - 1) / L.WarpSize),
                 WarpState());
    // Each fiber starts once per launch and records where a program's
    // thread begins (threadMain); programs restart it from there.
    fiber::adoptCurrentThread(SchedulerStack);
    for (size_t I = 0; I < N; ++I) {
      EmuThread &Th = T[I];
      Th.Program = this;
      getcontext(&Th.Context);
      Th.Context.uc_stack.ss_sp = Th.Stack;
      Th.Context.uc_stack.ss_size = kFiberStackBytes;
      Th.Context.uc_link = &Scheduler;
      uintptr_t Self = uintptr_t(&Th);
      makecontext(&Th.Context, reinterpret_cast<void (*)()>(&threadMain), 2,
                  int(uint32_t(Self)), int(uint32_t(Self >> 32)));
      if (_setjmp(SchedulerJump) == 0) {
        fiber::leave(SchedulerStack, Th.Fiber);
        setcontext(&Th.Context);
      }
      fiber::arrive(SchedulerStack);
    }
    return true;
  }

  static void threadMain(int Lo, int Hi) {
    EmuThread *volatile Th = reinterpret_cast<EmuThread *>(
        (uintptr_t(uint32_t(Hi)) << 32) | uintptr_t(uint32_t(Lo)));
    fiber::arrive(Th->Fiber, &Th->Program->SchedulerStack);
    // The first entry only records the start; each program's thread
    // begins here.
    if (_setjmp(Th->Start) == 0) {
      fiber::leave(Th->Fiber, Th->Program->SchedulerStack);
      KILN_FIBER_LONGJMP(Th->Program->SchedulerJump, 1);
    }
    fiber::arrive(Th->Fiber, &Th->Program->SchedulerStack);
    EmuProgram &P = *Th->Program;
    P.Launch->Entry(P.Launch->Args, &Th->Abi);
    // Copies still in flight land when the thread ends.
    P.completeCopies(*Th, 0);
    Th->State = Status::Done;
    ++P.Done;
    ++P.Warps[size_t(Th->Abi.warp)].Done;
    fiber::leave(Th->Fiber, P.SchedulerStack);
    KILN_FIBER_LONGJMP(P.SchedulerJump, 1);
  }

  /// Runs one program to the end; false when it failed.
  bool run(uint64_t Index) {
    EmuLaunch &L = *Launch;
    ProgramIndex = Index;
    uint64_t X = uint64_t(L.Grid.X), Y = uint64_t(L.Grid.Y);
    Id[0] = int32_t(Index % X);
    Id[1] = int32_t((Index / X) % Y);
    Id[2] = int32_t(Index / (X * Y));
    std::fill(Shared.begin(), Shared.end(), 0);
    std::fill(ShadowMem.begin(), ShadowMem.end(), Shadow());
    std::fill(Warps.begin(), Warps.end(), WarpState());
    Done = 0;
    Epoch = 1;
    BarrierArrived = 0;
    Unwritten.clear();
    MBarriers.clear();
    Failed = false;
    for (int32_t I = 0; I < L.Threads; ++I) {
      EmuThread &Th = T[size_t(I)];
      Th.Program = this;
      Th.Abi.ops = &kOps;
      Th.Abi.thread = I;
      Th.Abi.lane = I % L.WarpSize;
      Th.Abi.warp = I / L.WarpSize;
      for (int D = 0; D < 3; ++D)
        Th.Abi.program_id[D] = Id[D];
      Th.Abi.num_programs[0] = int32_t(L.Grid.X);
      Th.Abi.num_programs[1] = int32_t(L.Grid.Y);
      Th.Abi.num_programs[2] = int32_t(L.Grid.Z);
      Th.Abi.reserved = 0;
      Th.State = Status::Runnable;
      Th.Started = false;
      Th.Op = WarpOp::None;
      Th.Groups.clear();
      Th.Open.clear();
      Th.Observed.clear();
      Th.LastPrint.clear();
    }
    for (;;) {
      bool Ran = false;
      for (int32_t I = 0; I < L.Threads; ++I) {
        EmuThread &Th = T[size_t(I)];
        if (Th.State != Status::Runnable)
          continue;
        Ran = true;
        resume(Th);
        if (Failed)
          return false;
      }
      bool AllDone = std::all_of(T.begin(), T.begin() + L.Threads,
                                 [](const EmuThread &Th) {
                                   return Th.State == Status::Done;
                                 });
      if (AllDone) {
        if (std::string Why = unwrittenReads(); !Why.empty()) {
          L.fail(Index, ErrorCode::KernelTrapped,
                 Why + " (in " + program() + ")");
          return false;
        }
        return true;
      }
      if (!Ran) {
        L.fail(Index, ErrorCode::KernelTrapped,
               deadlock() + " (in " + program() + ")");
        return false;
      }
    }
  }

  /// Why no thread can run: threads wait at a barrier or a warp op that
  /// others never reach.
  std::string deadlock() const {
    const EmuLaunch &L = *Launch;
    int32_t Waiting = -1, Exited = -1;
    for (int32_t I = 0; I < L.Threads; ++I) {
      const EmuThread &Th = T[size_t(I)];
      if (Th.State == Status::Done) {
        if (Exited < 0)
          Exited = I;
      } else if (Waiting < 0) {
        Waiting = I;
      }
    }
    if (Waiting < 0)
      return "the emulated program stopped";
    // An mbarrier wait first: the barrier or warp op the others wait at
    // is usually a consequence.
    for (int32_t I = 0; I < L.Threads; ++I) {
      const EmuThread &Th = T[size_t(I)];
      if (Th.State != Status::AtMbarrier)
        continue;
      auto It = MBarriers.find(Th.WaitBarrier);
      std::string State;
      if (It != MBarriers.end()) {
        const MBarrier &B = It->second;
        State = " (its phase has " + std::to_string(B.Arrived) + " of " +
                std::to_string(B.Count) + " arrivals and " +
                std::to_string(B.PendingTx) + " transaction bytes pending)";
      }
      return "mbarrier wait that nothing can end: " + thread(I) + " waits" +
             at(Th.Where) + " for the phase of parity " +
             std::to_string(Th.WaitParity) +
             " of the mbarrier at shared offset " +
             std::to_string(Th.WaitBarrier) + " to complete" + State +
             "; every other thread has exited or waits";
    }
    const EmuThread &W = T[size_t(Waiting)];
    if (W.State == Status::AtBarrier)
      return "barrier not reached by every thread: " + thread(Waiting) +
             " waits" + at(W.Where) +
             (Exited >= 0 ? ", " + thread(Exited) + " has exited" : "");
    return "lanes of warp " + std::to_string(Waiting / L.WarpSize) +
           " wait at a warp-wide op" + at(W.Where) +
           " that other lanes never reach" +
           (Exited >= 0 ? " (" + thread(Exited) + " has exited)" : "");
  }

  //===--------------------------------------------------------------------===//
  // Shared memory
  //===--------------------------------------------------------------------===//

  /// Checks an access of [Offset, Offset + Bytes) by `Th` and records it.
  /// How an access touches its bytes: a plain read or write, an
  /// asynchronous copy starting (checked like a write; the bytes are in
  /// flight until it lands) or landing.
  /// A tensor load's write (TmaWrite) is checked like a write of the
  /// issuing thread and tags the bytes with TmaBarrierTag / TmaPhaseTag.
  enum class Access { Read, Write, CopyStart, CopyLand, TmaWrite };

  uint8_t *access(EmuThread &Th, int32_t Offset, int32_t Bytes, bool IsWrite,
                  const char *Where) {
    return access(Th, Offset, Bytes, IsWrite ? Access::Write : Access::Read,
                  Where);
  }

  /// A thread's shared_load / shared_store or asynchronous copy: as the
  /// hardware's vector accesses and cp.async, one of 2^n bytes (up to 16)
  /// must start on a multiple of its size (the compiler tells LLVM so: a
  /// misplaced one would fault there).
  uint8_t *sharedAccess(EmuThread &Th, int32_t Offset, int32_t Bytes,
                        Access Kind, const char *Where) {
    if (Bytes > 0 && Bytes <= 16 && (Bytes & (Bytes - 1)) == 0 &&
        Offset % Bytes != 0) {
      report(Th, ErrorCode::KernelTrapped,
             "misaligned shared-memory " +
                 std::string(Kind == Access::Read       ? "read"
                             : Kind == Access::CopyStart ? "copy"
                                                         : "write") +
                 " of " + std::to_string(Bytes) + " bytes at byte " +
                 std::to_string(Offset) + " by " + thread(Th.Abi.thread) +
                 at(Where) + " (a vector access must start on a multiple "
                 "of its size)");
      stop(Th);
    }
    return access(Th, Offset, Bytes, Kind, Where);
  }

  uint8_t *access(EmuThread &Th, int32_t Offset, int32_t Bytes, Access Kind,
                  const char *Where) {
    bool IsWrite = Kind != Access::Read;
    int64_t Size = int64_t(Shared.size());
    if (Offset < 0 || Bytes < 0 || int64_t(Offset) + Bytes > Size) {
      report(Th, ErrorCode::KernelTrapped,
             "out-of-range shared-memory " + std::string(IsWrite ? "write" : "read") +
                 " of bytes [" + std::to_string(Offset) + ", " +
                 std::to_string(int64_t(Offset) + Bytes) + ") by " +
                 thread(Th.Abi.thread) + at(Where) + "; the program has " +
                 std::to_string(Size) + " bytes");
      stop(Th);
    }
    int32_t Me = Th.Abi.thread;
    for (int32_t B = Offset; B < Offset + Bytes; ++B) {
      Shadow &S = ShadowMem[size_t(B)];
      if (S.MatrixReaders && IsWrite) {
        report(Th, ErrorCode::KernelTrapped,
               "write of shared memory that a warpgroup matrix instruction "
               "still reads: byte " +
                   std::to_string(B) + " by " + thread(Me) + at(Where) +
                   " (the instruction was issued" + at(S.MatrixWhere) +
                   "; a warpgroup_wait is missing before the write)");
        stop(Th);
      }
      if (S.CopyWhere && Kind != Access::CopyLand) {
        report(Th, ErrorCode::KernelTrapped,
               std::string(IsWrite ? "write" : "read") +
                   " of shared memory before the asynchronous copy that "
                   "writes it landed: byte " +
                   std::to_string(B) + " by " + thread(Me) + at(Where) +
                   " (the copy started" + at(S.CopyWhere) +
                   "; a wait is missing)");
        stop(Th);
      }
      if (IsWrite) {
        if (S.WriteEpoch == Epoch && S.Writer != Me)
          race(Th, B, "writes", Where, S.Writer, "wrote", S.WriteWhere);
        if (S.ReadEpoch == Epoch && (S.Reader != Me || S.OthersRead))
          race(Th, B, "writes", Where, S.Reader != Me ? S.Reader : -1, "read",
               S.ReadWhere);
        S.Writer = Me;
        S.WriteEpoch = Epoch;
        S.WriteWhere = Where;
        if (Kind == Access::CopyStart) {
          S.CopyWhere = Where;
          continue;
        }
        S.CopyWhere = nullptr;
        S.Written = true;
        S.TmaBarrier = Kind == Access::TmaWrite ? TmaBarrierTag : -1;
        S.TmaPhase = TmaPhaseTag;
        S.TmaWhere = Where;
      } else {
        // A read of bytes nothing wrote yet: a write by another thread
        // later in this epoch is a race (reported there); if none comes
        // before the next barrier, nothing ever wrote them.
        if (!S.Written)
          Unwritten.push_back({B, Me, Where});
        // A tensor load's bytes: readable once this thread's own wait saw
        // their phase complete, which orders them (no barrier needed).
        bool TmaOrdered = false;
        if (S.TmaBarrier >= 0) {
          auto Seen = Th.Observed.find(S.TmaBarrier);
          if (Seen == Th.Observed.end() || Seen->second <= S.TmaPhase) {
            report(Th, ErrorCode::KernelTrapped,
                   "read of shared memory before the tensor load that "
                   "writes it completed for this thread: byte " +
                       std::to_string(B) + " by " + thread(Me) + at(Where) +
                       " (the load was issued" + at(S.TmaWhere) +
                       " on the mbarrier at shared offset " +
                       std::to_string(S.TmaBarrier) +
                       "; an mbarrier_wait for its phase is missing)");
            stop(Th);
          }
          TmaOrdered = true;
        }
        if (S.WriteEpoch == Epoch && S.Writer != Me && !TmaOrdered)
          race(Th, B, "reads", Where, S.Writer, "wrote", S.WriteWhere);
        if (S.ReadEpoch != Epoch) {
          S.Reader = Me;
          S.OthersRead = false;
        } else if (S.Reader != Me) {
          S.OthersRead = true;
        }
        S.ReadEpoch = Epoch;
        S.ReadWhere = Where;
      }
    }
    return Shared.data() + Offset;
  }

  [[noreturn]] void race(EmuThread &Th, int32_t Byte, const char *What,
                         const char *Where, int32_t Other,
                         const char *OtherWhat, const char *OtherWhere) {
    report(Th, ErrorCode::KernelTrapped,
           "shared-memory race on byte " + std::to_string(Byte) + ": " +
               thread(Th.Abi.thread) + " " + What + " it" + at(Where) + ", " +
               thread(Other) + " " + OtherWhat + " it" + at(OtherWhere) +
               ", with no barrier between");
    stop(Th);
  }

  /// Lands the copies of all but the `Pending` newest committed groups
  /// (and, with Pending = 0, the open group too).
  void completeCopies(EmuThread &Th, int32_t Pending) {
    if (Pending == 0 && !Th.Open.empty()) {
      Th.Groups.push_back(std::move(Th.Open));
      Th.Open.clear();
    }
    while (int32_t(Th.Groups.size()) > Pending) {
      for (const PendingCopy &C : Th.Groups.front()) {
        uint8_t *Dst = access(Th, C.Offset, C.Bytes, Access::CopyLand, C.Where);
        if (C.Valid)
          std::memcpy(Dst, C.Src, size_t(C.Bytes));
        else
          std::memset(Dst, 0, size_t(C.Bytes));
      }
      Th.Groups.pop_front();
    }
  }

  //===--------------------------------------------------------------------===//
  // Hopper's mbarriers and tensor loads (TMA)
  //===--------------------------------------------------------------------===//

  /// The mbarrier at `Offset` for `What` ("mbarrier_wait"), its 8 bytes
  /// checked like a read (an init: a write) of `Th`; reports one that is
  /// misaligned or not initialized.
  MBarrier &mbarrier(EmuThread &Th, int32_t Offset, bool Init, const char *What,
                     const char *Where) {
    if (Offset % 8 != 0) {
      report(Th, ErrorCode::KernelTrapped,
             std::string(What) + " of an mbarrier at shared offset " +
                 std::to_string(Offset) + ", which is not 8-byte aligned, by " +
                 thread(Th.Abi.thread) + at(Where));
      stop(Th);
    }
    access(Th, Offset, 8, Init ? Access::Write : Access::Read, Where);
    auto It = MBarriers.find(Offset);
    if (It == MBarriers.end() && !Init) {
      report(Th, ErrorCode::KernelTrapped,
             std::string(What) + " of the mbarrier at shared offset " +
                 std::to_string(Offset) + " before any mbarrier_init of it, by " +
                 thread(Th.Abi.thread) + at(Where));
      stop(Th);
    }
    return Init ? MBarriers[Offset] : It->second;
  }

  /// Completes the barrier's phase if every arrival came and no
  /// transaction bytes are pending; its waiters then run again (each
  /// checks its parity).
  void completePhase(MBarrier &B, int32_t Offset) {
    if (B.Arrived < B.Count || B.PendingTx != 0)
      return;
    ++B.Completed;
    B.Arrived = 0;
    for (int32_t I = 0; I < Launch->Threads; ++I) {
      EmuThread &W = T[size_t(I)];
      if (W.State == Status::AtMbarrier && W.WaitBarrier == Offset)
        W.State = Status::Runnable;
    }
  }

  void mbarrierInit(EmuThread &Th, int32_t Offset, int32_t Count,
                    const char *Where) {
    // Pending arrivals first: the more precise report (the other threads'
    // arrivals are also races with the init's write).
    auto It = MBarriers.find(Offset);
    if (It != MBarriers.end() &&
        (It->second.Arrived != 0 || It->second.PendingTx != 0)) {
      const MBarrier &B = It->second;
      report(Th, ErrorCode::KernelTrapped,
             "mbarrier_init of the mbarrier at shared offset " +
                 std::to_string(Offset) + " by " + thread(Th.Abi.thread) +
                 at(Where) + " while its phase has " +
                 std::to_string(B.Arrived) +
                 (B.Arrived == 1 ? " arrival and " : " arrivals and ") +
                 std::to_string(B.PendingTx) +
                 " transaction bytes pending");
      stop(Th);
    }
    MBarrier &B = mbarrier(Th, Offset, /*Init=*/true, "mbarrier_init", Where);
    if (Count < 1) {
      report(Th, ErrorCode::KernelTrapped,
             "mbarrier_init of the mbarrier at shared offset " +
                 std::to_string(Offset) + " with a count of " +
                 std::to_string(Count) + " by " + thread(Th.Abi.thread) +
                 at(Where));
      stop(Th);
    }
    B.Count = Count;
    B.Arrived = 0;
    B.PendingTx = 0;
    B.InitAt = B.Completed;
  }

  void mbarrierArriveExpectTx(EmuThread &Th, int32_t Offset, int32_t Bytes,
                              const char *Where) {
    MBarrier &B = mbarrier(Th, Offset, false, "mbarrier_arrive_expect_tx",
                           Where);
    if (B.Arrived >= B.Count) {
      report(Th, ErrorCode::KernelTrapped,
             "arrival of " + thread(Th.Abi.thread) + at(Where) +
                 " at the mbarrier at shared offset " + std::to_string(Offset) +
                 ", whose phase already has all its " +
                 std::to_string(B.Count) + " arrivals");
      stop(Th);
    }
    B.PendingTx += Bytes;
    ++B.Arrived;
    completePhase(B, Offset);
  }

  void mbarrierWait(EmuThread &Th, int32_t Offset, int32_t Parity,
                    const char *Where) {
    MBarrier &B = mbarrier(Th, Offset, false, "mbarrier_wait", Where);
    while (B.parity() == uint32_t(Parity & 1)) {
      Th.State = Status::AtMbarrier;
      Th.Where = Where;
      Th.WaitBarrier = Offset;
      Th.WaitParity = Parity & 1;
      yield(Th);
    }
    uint32_t &Seen = Th.Observed[Offset];
    Seen = std::max(Seen, B.Completed);
  }

  /// cp.async.bulk.tensor: the box of `Map` at `Coords` into shared memory
  /// at `SharedOffset` (dense row-major, then swizzled: byte A goes to A ^
  /// (((A >> 7) & m) << 4), A counted from the shared base, which is 1024-
  /// byte aligned), completing its bytes on the mbarrier at `BarOffset`.
  void tensorLoad(EmuThread &Th, const KilnEmuTensorMap *Map,
                  int32_t SharedOffset, const int32_t *Coords,
                  int32_t BarOffset, const char *Where) {
    int32_t Me = Th.Abi.thread;
    static const KilnEmuTensorMap None = {};
    const KilnEmuTensorMap &M = Map ? *Map : None;
    int32_t Rank = M.rank;
    bool Valid = Map && Coords && Rank >= 1 &&
                 Rank <= int32_t(kMaxTensorMapRank) &&
                 (M.elem_bytes == 1 || M.elem_bytes == 2 ||
                  M.elem_bytes == 4 || M.elem_bytes == 8) &&
                 (M.swizzle == 0 || M.swizzle == 32 || M.swizzle == 64 ||
                  M.swizzle == 128);
    for (int32_t D = 0; Valid && D < Rank; ++D)
      Valid = M.box[D] >= 1 && M.box[D] <= 256;
    if (!Valid) {
      report(Th, ErrorCode::KernelTrapped,
             "tensor_load by " + thread(Me) + at(Where) +
                 " with a bad tensor map or coordinates");
      stop(Th);
    }
    MBarrier &B = mbarrier(Th, BarOffset, false, "tensor_load", Where);
    int64_t Rows = 1;
    for (int32_t D = 0; D + 1 < Rank; ++D)
      Rows *= M.box[D];
    int64_t Inner = M.box[Rank - 1];
    int64_t RowBytes = Inner * M.elem_bytes;
    int64_t Bytes = Rows * RowBytes;
    int32_t Align = M.swizzle ? 8 * M.swizzle : 128;
    if (SharedOffset % Align != 0) {
      report(Th, ErrorCode::KernelTrapped,
             "tensor_load by " + thread(Me) + at(Where) +
                 " into shared offset " + std::to_string(SharedOffset) +
                 ", which is not " + std::to_string(Align) +
                 "-byte aligned" +
                 (M.swizzle ? " (as its " + std::to_string(M.swizzle) +
                                  "-byte swizzle needs)"
                            : std::string()));
      stop(Th);
    }
    if (SharedOffset < 0 || SharedOffset + Bytes > int64_t(Shared.size())) {
      report(Th, ErrorCode::KernelTrapped,
             "tensor_load by " + thread(Me) + at(Where) + " of a box of " +
                 std::to_string(Bytes) + " bytes into shared offset " +
                 std::to_string(SharedOffset) + "; the program has " +
                 std::to_string(Shared.size()) + " bytes");
      stop(Th);
    }
    // The box, dense: elements outside the tensor are zeros and are not
    // read.
    TmaScratch.assign(size_t(Bytes), 0);
    const uint8_t *Base = static_cast<const uint8_t *>(M.base);
    for (int64_t R = 0; R < Rows; ++R) {
      int64_t Offset = 0, Rest = R;
      bool Inside = true;
      for (int32_t D = Rank - 2; D >= 0; --D) {
        int64_t G = int64_t(Coords[D]) + Rest % M.box[D];
        Rest /= M.box[D];
        Inside &= G >= 0 && G < M.sizes[D];
        Offset += G * M.strides[D];
      }
      int64_t First = std::max<int64_t>(0, -int64_t(Coords[Rank - 1]));
      int64_t Last = std::min<int64_t>(
          Inner, M.sizes[Rank - 1] - int64_t(Coords[Rank - 1]));
      if (!Inside || First >= Last)
        continue;
      const uint8_t *Src = Base + Offset +
                           (int64_t(Coords[Rank - 1]) + First) * M.elem_bytes;
      int64_t Run = (Last - First) * M.elem_bytes;
      if (Launch->CheckBounds &&
          !Launch->Memory->isAllocated(uintptr_t(Src), uint64_t(Run))) {
        char Addr[32];
        std::snprintf(Addr, sizeof(Addr), "%p", static_cast<const void *>(Src));
        report(Th, ErrorCode::KernelTrapped,
               "out-of-range load of " + std::to_string(Run) + " bytes at " +
                   Addr + " by " + thread(Me) + at(Where) +
                   " (a tensor load)");
        stop(Th);
      }
      std::memcpy(TmaScratch.data() + R * RowBytes + First * M.elem_bytes,
                  Src, size_t(Run));
    }
    // Into place, 16 bytes at a time (rows are multiples of 16 bytes), each
    // checked like a write of this thread and tagged with the phase.
    int32_t Mask = M.swizzle == 128 ? 7 : M.swizzle == 64 ? 3
                   : M.swizzle == 32 ? 1 : 0;
    TmaBarrierTag = BarOffset;
    TmaPhaseTag = B.Completed;
    for (int64_t Chunk = 0; Chunk < Bytes; Chunk += 16) {
      int32_t A = SharedOffset + int32_t(Chunk);
      int32_t To = A ^ (((A >> 7) & Mask) << 4);
      int32_t N = int32_t(std::min<int64_t>(16, Bytes - Chunk));
      uint8_t *Dst = access(Th, To, N, Access::TmaWrite, Where);
      std::memcpy(Dst, TmaScratch.data() + Chunk, size_t(N));
    }
    TmaBarrierTag = -1;
    B.PendingTx -= Bytes;
    completePhase(B, BarOffset);
  }

  //===--------------------------------------------------------------------===//
  // Barriers and warp-collective ops
  //===--------------------------------------------------------------------===//

  static bool sameWhere(const char *A, const char *B) {
    return A == B || std::strcmp(A ? A : "", B ? B : "") == 0;
  }

  /// The first thread that has exited, or -1.
  int32_t firstDone(int32_t Begin, int32_t End) const {
    for (int32_t I = Begin; I < End; ++I)
      if (T[size_t(I)].State == Status::Done)
        return I;
    return -1;
  }

  void barrier(EmuThread &Th, const char *Where) {
    EmuLaunch &L = *Launch;
    Th.State = Status::AtBarrier;
    Th.Where = Where;
    if (Done) {
      report(Th, ErrorCode::KernelTrapped,
             "barrier not reached by every thread: " + thread(Th.Abi.thread) +
                 " waits" + at(Where) + ", " +
                 thread(firstDone(0, L.Threads)) + " has exited");
      stop(Th);
    }
    if (BarrierArrived == 0)
      BarrierWhere = Where;
    else if (!sameWhere(BarrierWhere, Where)) {
      report(Th, ErrorCode::KernelTrapped,
             "threads wait at different barriers: " + thread(Th.Abi.thread) +
                 at(Where) + ", others" + at(BarrierWhere));
      stop(Th);
    }
    if (++BarrierArrived < L.Threads) {
      yield(Th);
      return;
    }
    BarrierArrived = 0;
    if (std::string Why = unwrittenReads(); !Why.empty())
      report(Th, ErrorCode::KernelTrapped, Why);
    if (Failed) // `Why` is gone
      stop(Th);
    ++Epoch;
    for (int32_t I = 0; I < L.Threads; ++I)
      T[size_t(I)].State = Status::Runnable;
  }

  /// Waits until every lane of Th's warp brought the same op; the last one
  /// to arrive computes every lane's result.
  void warpOp(EmuThread &Th, WarpOp Op, const char *Where) {
    EmuLaunch &L = *Launch;
    Th.State = Status::AtWarpOp;
    Th.Op = Op;
    Th.Where = Where;
    int32_t Warp = Th.Abi.warp, W = L.WarpSize;
    EmuThread *Lanes = &T[size_t(Warp * W)];
    WarpState &WS = Warps[size_t(Warp)];
    if (WS.Done) {
      report(Th, ErrorCode::KernelTrapped,
             "lanes of warp " + std::to_string(Warp) + " diverge: " +
                 thread(Th.Abi.thread) + " waits for the warp" + at(Where) +
                 ", " + thread(firstDone(Warp * W, Warp * W + W)) +
                 " has exited");
      stop(Th);
    }
    if (WS.Arrived == 0) {
      WS.Op = Op;
      WS.Where = Where;
    } else if (WS.Op != Op || !sameWhere(WS.Where, Where)) {
      report(Th, ErrorCode::KernelTrapped,
               "lanes of warp " + std::to_string(Warp) + " diverge: " +
                   thread(Th.Abi.thread) + at(Where) + ", other lanes" +
                   at(WS.Where));
      stop(Th);
    }
    if (++WS.Arrived < W) {
      yield(Th);
      return;
    }
    WS.Arrived = 0;
    switch (Op) {
    case WarpOp::Shuffle:
      shuffle(Lanes, W);
      break;
    case WarpOp::LoadMatrix:
      loadMatrix(Th, Lanes, W);
      break;
    case WarpOp::Mma: {
      std::string Message;
      size_t N = static_cast<size_t>(W);
      std::vector<const void *> A(N), B(N), C(N);
      std::vector<void *> D(N);
      for (int32_t Lane = 0; Lane < W; ++Lane) {
        A[size_t(Lane)] = Lanes[Lane].A;
        B[size_t(Lane)] = Lanes[Lane].B;
        C[size_t(Lane)] = Lanes[Lane].C;
        D[size_t(Lane)] = Lanes[Lane].Out;
      }
      if (!emulateMatrixInstr(Th.Instr ? Th.Instr : "", W, A.data(), B.data(),
                              C.data(), D.data(), Message))
        report(Th, ErrorCode::KernelTrapped, Message + at(Where));
      break; // `Message` and the operand vectors are gone after this
    }
    case WarpOp::WarpgroupMma: {
      // No heap memory lives in this frame while shared memory is read: a
      // failed read ends the fiber (stop) without unwinding.
      if (W != 32) {
        report(Th, ErrorCode::KernelTrapped,
               "warpgroup matrix instructions need 32 lanes per warp" +
                   at(Where));
        break;
      }
      const void *A[32], *C[32];
      void *D[32];
      for (int32_t Lane = 0; Lane < 32; ++Lane) {
        A[Lane] = Lanes[Lane].A;
        C[Lane] = Lanes[Lane].C;
        D[Lane] = Lanes[Lane].Out;
      }
      WarpgroupRead = {this, &Th, Where, &Warps[size_t(Warp)]};
      if (Warps[size_t(Warp)].MatrixReads.empty())
        Warps[size_t(Warp)].MatrixReads.emplace_back();
      if (WarpgroupScratch.empty())
        WarpgroupScratch.resize(kWarpgroupScratch);
      bool Known = emulateWarpgroupMatrixInstr(
          Th.Instr ? Th.Instr : "", Warp % 4, Th.DescA, Th.A ? A : nullptr,
          Th.DescB, Th.Flags, C, D, &readForWarpgroup, &WarpgroupRead,
          WarpgroupScratch.data(), WarpgroupMessage);
      if (!Known)
        report(Th, ErrorCode::KernelTrapped, WarpgroupMessage + at(Where));
      break;
    }
    case WarpOp::WarpgroupWait:
      completeMatrixReads(Warps[size_t(Warp)], Th.Count);
      break;
    case WarpOp::None:
      break;
    }
    if (Failed)
      stop(Th);
    for (int32_t Lane = 0; Lane < W; ++Lane) {
      Lanes[Lane].State = Status::Runnable;
      Lanes[Lane].Op = WarpOp::None;
    }
  }

  /// What a warpgroup instruction's shared reads need: they are checked
  /// like reads of the thread that completed the warp (a missing barrier
  /// before them is a race), 16-byte chunks at a time.
  struct WarpgroupReadContext {
    EmuProgram *Program;
    EmuThread *Th;
    const char *Where;
    WarpState *Warp;
  } WarpgroupRead{};
  std::vector<double> WarpgroupScratch;
  std::string WarpgroupMessage;
  static const uint8_t *readForWarpgroup(void *Ctx, int64_t Offset) {
    auto *R = static_cast<WarpgroupReadContext *>(Ctx);
    const uint8_t *P =
        R->Program->access(*R->Th, int32_t(Offset), 16, false, R->Where);
    // In flight until a wait: the chunk's bytes must not change before.
    std::vector<int32_t> &Batch = R->Warp->MatrixReads.back();
    if (Batch.empty() || Batch.back() != int32_t(Offset)) {
      Batch.push_back(int32_t(Offset));
      for (int32_t B = int32_t(Offset); B < int32_t(Offset) + 16; ++B) {
        Shadow &S = R->Program->ShadowMem[size_t(B)];
        ++S.MatrixReaders;
        S.MatrixWhere = R->Where;
      }
    }
    return P;
  }

  /// kiln_gpu.warpgroup_wait: the warp's batches but the last `Pending`
  /// are complete; the batch issued since the previous wait is closed.
  void completeMatrixReads(WarpState &WS, int32_t Pending) {
    if (!WS.MatrixReads.empty() && !WS.MatrixReads.back().empty())
      WS.MatrixReads.emplace_back(); // the next batch
    // The open (empty) batch does not count.
    while (int32_t(WS.MatrixReads.size()) - 1 > std::max(Pending, 0)) {
      for (int32_t Offset : WS.MatrixReads.front())
        for (int32_t B = Offset; B < Offset + 16; ++B)
          --ShadowMem[size_t(B)].MatrixReaders;
      WS.MatrixReads.pop_front();
    }
  }

  static void shuffle(EmuThread *Lanes, int32_t W) {
    for (int32_t Lane = 0; Lane < W; ++Lane) {
      EmuThread &Me = Lanes[Lane];
      int32_t Src = Lane;
      switch (Me.Kind) {
      case KILN_EMU_SHFL_XOR: Src = Lane ^ Me.Offset; break;
      case KILN_EMU_SHFL_IDX: Src = Me.Offset; break;
      case KILN_EMU_SHFL_UP: Src = Lane - Me.Offset; break;
      case KILN_EMU_SHFL_DOWN: Src = Lane + Me.Offset; break;
      default: break;
      }
      if (Src < 0 || Src >= W)
        Src = Lane;
      Me.Result = Lanes[Src].Value;
    }
  }

  /// ldmatrix semantics (PTX ISA, "ldmatrix"): lanes 8j .. 8j + 7 give the
  /// row addresses of matrix j; lane l receives, from each matrix, row
  /// l / 4, columns 2 (l mod 4) and 2 (l mod 4) + 1 — or, transposed, the
  /// elements at rows 2 (l mod 4) and 2 (l mod 4) + 1 of column l / 4.
  void loadMatrix(EmuThread &Th, EmuThread *Lanes, int32_t W) {
    int32_t Count = Th.Count;
    // Each row provider reads its 16 bytes.
    std::vector<const uint8_t *> Rows(size_t(8 * Count));
    for (int32_t R = 0; R < 8 * Count; ++R)
      Rows[size_t(R)] = access(Lanes[R], Lanes[R].Offset, 16, false,
                               Lanes[R].Where);
    for (int32_t Lane = 0; Lane < W; ++Lane) {
      auto *Out = static_cast<uint8_t *>(Lanes[Lane].Out);
      int32_t Group = (Lane % 32) / 4, InGroup = Lane % 4;
      for (int32_t J = 0; J < Count; ++J)
        for (int32_t K = 0; K < 2; ++K) {
          int32_t Row = Lanes[Lane].Transpose ? 2 * InGroup + K : Group;
          int32_t Col = Lanes[Lane].Transpose ? Group : 2 * InGroup + K;
          std::memcpy(Out + 2 * (2 * J + K), Rows[size_t(8 * J + Row)] + 2 * Col,
                      2);
        }
    }
  }
};

/// The program a callback's thread belongs to.
EmuThread &self(KilnEmuThread *T) { return *reinterpret_cast<EmuThread *>(T); }

//===----------------------------------------------------------------------===//
// Callbacks
//===----------------------------------------------------------------------===//

void cbBarrier(KilnEmuThread *T, const char *Where) {
  EmuThread &Th = self(T);
  Th.Program->barrier(Th, Where);
}

uint64_t cbShuffle(KilnEmuThread *T, int32_t Kind, uint64_t Value,
                   int32_t Bits, int32_t Offset, const char *Where) {
  EmuThread &Th = self(T);
  Th.Kind = Kind;
  Th.Value = Value;
  Th.Offset = Offset;
  Th.Program->warpOp(Th, WarpOp::Shuffle, Where);
  return Th.Result;
}

uint8_t *cbShared(KilnEmuThread *T, int32_t Offset, int32_t Bytes,
                  int32_t IsWrite, const char *Where) {
  EmuThread &Th = self(T);
  return Th.Program->sharedAccess(
      Th, Offset, Bytes,
      IsWrite ? EmuProgram::Access::Write : EmuProgram::Access::Read, Where);
}

void cbLoadMatrix(KilnEmuThread *T, int32_t Offset, int32_t Count,
                  int32_t Transpose, void *Out, const char *Where) {
  EmuThread &Th = self(T);
  Th.Offset = Offset;
  Th.Count = Count;
  Th.Transpose = Transpose != 0;
  Th.Out = Out;
  Th.Program->warpOp(Th, WarpOp::LoadMatrix, Where);
}

void cbMma(KilnEmuThread *T, const char *Instr, const void *A, const void *B,
           const void *C, void *D, const char *Where) {
  EmuThread &Th = self(T);
  Th.Instr = Instr;
  Th.A = A;
  Th.B = B;
  Th.C = C;
  Th.Out = D;
  Th.Program->warpOp(Th, WarpOp::Mma, Where);
}

void cbWarpgroupMma(KilnEmuThread *T, const char *Instr, uint64_t DescA,
                    const void *A, uint64_t DescB, int32_t Flags,
                    const void *C, void *D, const char *Where) {
  EmuThread &Th = self(T);
  Th.Instr = Instr;
  Th.DescA = DescA;
  Th.A = A;
  Th.DescB = DescB;
  Th.Flags = Flags;
  Th.C = C;
  Th.Out = D;
  Th.Program->warpOp(Th, WarpOp::WarpgroupMma, Where);
}

void cbWarpgroupWait(KilnEmuThread *T, int32_t Pending, const char *Where) {
  EmuThread &Th = self(T);
  Th.Count = Pending;
  Th.Program->warpOp(Th, WarpOp::WarpgroupWait, Where);
}

void cbAsyncCopy(KilnEmuThread *T, int32_t Offset, const void *Src,
                 int32_t Bytes, int32_t Valid, const char *Where) {
  EmuThread &Th = self(T);
  // Checked like a write now (other threads' accesses in this epoch race
  // with it); the bytes are in flight until the wait lands them.
  Th.Program->sharedAccess(Th, Offset, Bytes, EmuProgram::Access::CopyStart,
                           Where);
  Th.Open.push_back({Offset, Src, Bytes, Valid != 0, Where});
}

void cbAsyncCommit(KilnEmuThread *T) {
  EmuThread &Th = self(T);
  Th.Groups.push_back(std::move(Th.Open));
  Th.Open.clear();
}

void cbAsyncWait(KilnEmuThread *T, int32_t Pending, const char *Where) {
  EmuThread &Th = self(T);
  Th.Program->completeCopies(Th, std::max(Pending, 0));
}

void cbPrintf(KilnEmuThread *T, const char *Format, const void *Args);

void cbTrap(KilnEmuThread *T, const char *Where) {
  EmuThread &Th = self(T);
  Th.Program->report(Th, ErrorCode::KernelTrapped,
                     "kernel trapped" +
                         (Th.LastPrint.empty() ? EmuProgram::at(Where)
                                               : ": " + Th.LastPrint) +
                         " in " + Th.Program->thread(Th.Abi.thread));
  Th.Program->stop(Th);
}

int32_t cbCheck(KilnEmuThread *T, const void *Address, int64_t Bytes,
                int32_t IsStore, const char *Where);

void cbMbarrierInit(KilnEmuThread *T, int32_t Offset, int32_t Count,
                    const char *Where) {
  EmuThread &Th = self(T);
  Th.Program->mbarrierInit(Th, Offset, Count, Where);
}

void cbMbarrierArriveExpectTx(KilnEmuThread *T, int32_t Offset, int32_t Bytes,
                              const char *Where) {
  EmuThread &Th = self(T);
  Th.Program->mbarrierArriveExpectTx(Th, Offset, Bytes, Where);
}

void cbTensorLoad(KilnEmuThread *T, const KilnEmuTensorMap *Map,
                  int32_t SharedOffset, const int32_t *Coords,
                  int32_t BarOffset, const char *Where) {
  EmuThread &Th = self(T);
  Th.Program->tensorLoad(Th, Map, SharedOffset, Coords, BarOffset, Where);
}

void cbMbarrierWait(KilnEmuThread *T, int32_t Offset, int32_t Parity,
                    const char *Where) {
  EmuThread &Th = self(T);
  Th.Program->mbarrierWait(Th, Offset, Parity, Where);
}

// In the order of KilnEmuOps: generated code calls them by position.
const KilnEmuOps kOps = {&cbBarrier,       &cbShuffle,
                         &cbShared,        &cbLoadMatrix,
                         &cbMma,           &cbAsyncCopy,
                         &cbAsyncCommit,   &cbAsyncWait,
                         &cbPrintf,        &cbTrap,
                         &cbCheck,         &cbWarpgroupMma,
                         &cbWarpgroupWait, &cbMbarrierInit,
                         &cbMbarrierArriveExpectTx, &cbTensorLoad,
                         &cbMbarrierWait};

//===----------------------------------------------------------------------===//
// The device
//===----------------------------------------------------------------------===//

class EmuImage : public LoadedImage {
public:
  std::unique_ptr<HostImage> Host;
  int32_t Threads = 128, WarpSize = 32;
  int64_t SharedBytes = 0;
  bool CheckBounds = false;
};

class EmuDevice : public HostMemoryDevice {
public:
  EmuDevice(std::string Arch, unsigned Workers)
      : Arch(std::move(Arch)), Workers(Workers) {}

  DeviceKind kind() const override { return DeviceKind::Emulator; }
  std::string name() const override { return "emu:" + Arch; }
  std::string description() const override {
    return "emulated " + Arch + " on the host (" + std::to_string(Workers) +
           (Workers == 1 ? " worker)" : " workers)");
  }
  DeviceProperties properties() const override {
    DeviceProperties P;
    P.Kind = DeviceKind::Emulator;
    P.Model = "emulated " + Arch;
    P.Arch = Arch;
    P.ComputeUnits = Workers;
    P.MemoryBytes = physicalMemoryBytes();
    return P;
  }

  /// Tensor maps (TMA) are Hopper's: emulated for sm_90 and newer.
  bool hasTensorMaps() const {
    std::optional<SmArch> A = parseSmArch(Arch);
    return A && A->Sm >= 90;
  }

  int rankImage(const ImageInfo &Image) const override {
    if (Image.Requires.Emu != Arch || !hostTarget().matchesTriple(Image))
      return 0;
    if (!Image.TensorMaps.empty() && !hasTensorMaps())
      return 0;
    // The image's CPU level must be one this CPU runs.
    if (const std::vector<std::string> *Needed =
            levelFeatures(Image.Requires.Cpu))
      if (!hostTarget().missing(*Needed).empty())
        return 0;
    return 1;
  }
  std::string whyNot(const ImageInfo &Image) const override {
    if (!Image.Requires.Emu.empty() && Image.Requires.Emu != Arch)
      return "emulates " + Image.Requires.Emu;
    if (!Image.TensorMaps.empty() && !hasTensorMaps())
      return "takes TMA tensor maps, which " + Arch + " does not have";
    return "";
  }
  std::string targetDescription() const override {
    return "emu:" + Arch + " (images compiled with --targets=emu:" + Arch + ")";
  }
  Expected<std::unique_ptr<LoadedImage>>
  loadImage(const ImageInfo &Image, const uint8_t *Bytes) override {
    Expected<std::unique_ptr<HostImage>> H =
        HostImage::load(Image, Bytes, Image.Entry);
    if (!H)
      return H.takeError();
    auto I = std::make_unique<EmuImage>();
    I->Host = std::move(*H);
    I->Threads = int32_t(resourceInt(Image.Resources, "threads").value_or(128));
    I->WarpSize =
        int32_t(resourceInt(Image.Resources, "warp_size").value_or(32));
    I->SharedBytes = resourceInt(Image.Resources, "shared_bytes").value_or(0);
    I->CheckBounds = resourceFlag(Image.Resources, "check_bounds");
    if (I->Threads <= 0 || I->WarpSize <= 0 || I->Threads % I->WarpSize ||
        I->Threads > 4096 || I->SharedBytes > (int64_t(1) << 24))
      return Error(ErrorCode::InvalidBundle,
                   "emulated image '" + Image.Entry +
                       "' has inconsistent resources " + Image.Resources);
    return std::unique_ptr<LoadedImage>(std::move(I));
  }
  int64_t maxGridAxis(unsigned) const override { return INT32_MAX; }

  Error launch(StreamImpl &, LoadedImage &Image, void **Args,
               const GridDims &Grid,
               const std::vector<TensorMap> &Maps) override {
    // The tensor maps, as kiln/emu_abi.h has them: args[i] points at a
    // pointer to the map.
    std::vector<KilnEmuTensorMap> EmuMaps(Maps.size());
    std::vector<const KilnEmuTensorMap *> MapArgs(Maps.size());
    size_t Slot = 0;
    while (Args[Slot])
      ++Slot;
    for (size_t I = 0; I < Maps.size(); ++I) {
      const TensorMap &M = Maps[I];
      KilnEmuTensorMap &E = EmuMaps[I];
      E = KilnEmuTensorMap();
      E.base = reinterpret_cast<const void *>(uintptr_t(M.Base));
      E.rank = int32_t(M.Rank);
      E.elem_bytes = int32_t(M.ElemBytes);
      for (unsigned D = 0; D < M.Rank; ++D) {
        E.sizes[D] = M.Sizes[D];
        E.strides[D] = M.Strides[D];
        E.box[D] = M.Box[D];
      }
      E.swizzle = M.Swizzle;
      MapArgs[I] = &E;
      Args[Slot + I] = &MapArgs[I];
    }
    std::lock_guard<std::mutex> Lock(LaunchMutex);
    std::call_once(PoolOnce, [&] {
      Pool.reset(new ThreadPool(Workers, kWorkerStackBytes));
      Programs.resize(Pool->size());
    });
    auto &I = static_cast<EmuImage &>(Image);
    EmuLaunch L;
    L.Device = this;
    L.Memory = this;
    L.CheckBounds = I.CheckBounds;
    L.Entry = reinterpret_cast<KilnEmuEntry>(I.Host->entry());
    L.Args = Args;
    L.Grid = Grid;
    L.Threads = I.Threads;
    L.WarpSize = I.WarpSize;
    L.SharedBytes = I.SharedBytes;
    uint64_t Total = uint64_t(Grid.X) * uint64_t(Grid.Y) * uint64_t(Grid.Z);
    std::function<void(unsigned)> Body = [&](unsigned W) {
      std::unique_ptr<EmuProgram> &P = Programs[W];
      if (!P)
        P.reset(new EmuProgram());
      if (!P->prepare(L)) {
        L.fail(0, ErrorCode::OutOfMemory,
               "cannot allocate the stacks of " + std::to_string(L.Threads) +
                   " emulated threads");
        return;
      }
      for (;;) {
        uint64_t Index = L.Next.fetch_add(1, std::memory_order_relaxed);
        if (Index >= Total || Index > L.FailedIndex.load())
          break;
        P->run(Index);
      }
    };
    Pool->run(Body);
    if (L.failed())
      return Error(L.Code, "emu:" + Arch + ": " + L.ErrorMessage);
    return Error::success();
  }

private:
  std::string Arch;
  unsigned Workers;
  std::once_flag PoolOnce;
  std::unique_ptr<ThreadPool> Pool;
  std::vector<std::unique_ptr<EmuProgram>> Programs;
  std::mutex LaunchMutex;
};

/// Formats a packed vprintf argument buffer: each conversion reads its
/// argument at its natural alignment (integers 32 bits unless `l`/`ll`,
/// floating point as double).
std::string formatPacked(const char *Format, const uint8_t *Args) {
  std::string Out;
  size_t Pos = 0;
  auto Take = [&](size_t Size) {
    Pos = (Pos + Size - 1) / Size * Size;
    const uint8_t *P = Args + Pos;
    Pos += Size;
    return P;
  };
  for (const char *F = Format; *F;) {
    if (*F != '%') {
      Out += *F++;
      continue;
    }
    const char *Start = F++;
    if (*F == '%') {
      Out += '%';
      ++F;
      continue;
    }
    while (*F && std::strchr("-+ #0123456789.", *F))
      ++F;
    int Longs = 0;
    while (*F == 'l' || *F == 'h' || *F == 'z') {
      Longs += *F == 'l';
      ++F;
    }
    char Conv = *F ? *F++ : 'd';
    std::string Spec(Start, F);
    char Buf[128];
    if (std::strchr("diouxXc", Conv)) {
      if (Longs) {
        long long V;
        std::memcpy(&V, Take(8), 8);
        std::snprintf(Buf, sizeof(Buf), Spec.c_str(), V);
      } else {
        int V;
        std::memcpy(&V, Take(4), 4);
        std::snprintf(Buf, sizeof(Buf), Spec.c_str(), V);
      }
    } else if (std::strchr("feEgGaA", Conv)) {
      double V;
      std::memcpy(&V, Take(8), 8);
      std::snprintf(Buf, sizeof(Buf), Spec.c_str(), V);
    } else {
      std::snprintf(Buf, sizeof(Buf), "<%%%c>", Conv);
    }
    Out += Buf;
  }
  return Out;
}

void cbPrintf(KilnEmuThread *T, const char *Format, const void *Args) {
  EmuThread &Th = self(T);
  std::string Text =
      formatPacked(Format ? Format : "", static_cast<const uint8_t *>(Args));
  // One print line per call, without its final newline.
  if (!Text.empty() && Text.back() == '\n')
    Text.pop_back();
  Th.Program->Launch->Device->emitPrint(Text);
  Th.LastPrint = std::move(Text);
}

int32_t cbCheck(KilnEmuThread *T, const void *Address, int64_t Bytes,
                int32_t IsStore, const char *Where) {
  EmuThread &Th = self(T);
  if (Bytes >= 0 && Th.Program->Launch->Device->isAllocated(
                        uintptr_t(Address), uint64_t(Bytes)))
    return 1;
  char Addr[32];
  std::snprintf(Addr, sizeof(Addr), "%p", Address);
  Th.Program->report(Th, ErrorCode::KernelTrapped,
                     std::string("out-of-range ") + (IsStore ? "store" : "load") +
                         " of " + std::to_string(Bytes) + " bytes at " + Addr +
                         " by " + Th.Program->thread(Th.Abi.thread) +
                         EmuProgram::at(Where));
  Th.Program->stop(Th);
}

} // namespace

Expected<std::shared_ptr<DeviceImpl>>
kiln::rt::detail::openEmuDevice(const std::string &Arch) {
  if (Arch.empty() || Arch.size() > 32 ||
      !std::all_of(Arch.begin(), Arch.end(), [](char C) {
        return std::isalnum(static_cast<unsigned char>(C)) || C == '_';
      }))
    return Error(ErrorCode::InvalidArgument,
                 "emu:<arch> needs a GPU arch name such as sm_80 or gfx942");
  unsigned N = std::thread::hardware_concurrency();
  if (const char *Env = std::getenv("KILN_HOST_THREADS"))
    N = unsigned(std::max(1, std::atoi(Env)));
  return std::shared_ptr<DeviceImpl>(
      std::make_shared<EmuDevice>(Arch, N ? N : 1));
}
