//===- FiberSanitizer.h - Telling the sanitizers about fibers ---*- C++ -*-===//
//
// The emulator (EmuDevice.cpp) runs each GPU thread on a fiber of its own
// stack and switches between them with _setjmp/_longjmp. AddressSanitizer
// and ThreadSanitizer follow one stack per OS thread unless told: without
// these calls, a switch looks like a wild stack-pointer jump (false
// stack-buffer reports, lost fake stacks) or, to TSan, like one thread whose
// shadow call stack no longer matches. Each switch is therefore bracketed:
//
//   fiber::leave(From, To);   // just before _longjmp / setcontext
//   ...                       // now running on To's stack
//   fiber::arrive(To, &From); // first thing on arrival
//
// In a build without sanitizers everything here is empty and inline.
//
// Known limit: ThreadSanitizer's view of a fiber does not survive the
// emulator's restart of every fiber at the top of its stack at each launch
// (the previous launch's frames are abandoned, and TSan's shadow call stack
// of the fiber keeps them until it overflows); the emulator's tests are
// left out of the ThreadSanitizer run (scripts/sanitize.sh) and run under
// AddressSanitizer + UBSan instead.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_FIBERSANITIZER_H
#define KILN_RUNTIME_FIBERSANITIZER_H

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#define KILN_FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KILN_FIBER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define KILN_FIBER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KILN_FIBER_TSAN 1
#endif
#endif

#ifdef KILN_FIBER_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef KILN_FIBER_TSAN
#include <sanitizer/tsan_interface.h>
#endif

/// What switches fibers: _longjmp saves and restores no signal mask (no
/// system call). ThreadSanitizer intercepts longjmp but not _longjmp, and
/// must see every jump to keep its shadow call stack of each fiber; glibc's
/// longjmp on a _setjmp buffer does not restore a mask either.
#ifdef KILN_FIBER_TSAN
#define KILN_FIBER_LONGJMP longjmp
#else
#define KILN_FIBER_LONGJMP _longjmp
#endif

/// Functions that switch TSan's fiber are not instrumented themselves: the
/// entry of an instrumented one would be recorded on the fiber left and
/// its exit on the fiber entered, leaving both shadow call stacks off by
/// one (and TSan's longjmp checks failing).
#ifdef KILN_FIBER_TSAN
#define KILN_FIBER_SWITCH __attribute__((no_sanitize("thread")))
#else
#define KILN_FIBER_SWITCH
#endif

namespace kiln::rt::detail::fiber {

/// What the sanitizers know of one stack: a fiber's, or the OS thread's
/// own (the scheduler's), whose bounds are learnt on the first switch.
struct Stack {
  const void *Bottom = nullptr;
  size_t Size = 0;
  void *FakeStack = nullptr; ///< ASan's fake frames while switched out
  void *Tsan = nullptr;      ///< TSan's fiber
  bool OwnsTsan = false;     ///< created here (not the OS thread's)
};

/// A fiber over [Bottom, Bottom + Size).
inline void create(Stack &S, void *Bottom, size_t Size) {
  S.Bottom = Bottom;
  S.Size = Size;
#ifdef KILN_FIBER_TSAN
  S.Tsan = __tsan_create_fiber(0);
  S.OwnsTsan = true;
#endif
}

inline void destroy(Stack &S) {
#ifdef KILN_FIBER_TSAN
  if (S.OwnsTsan && S.Tsan)
    __tsan_destroy_fiber(S.Tsan);
#endif
  S = Stack();
}

/// The OS thread's own stack, on that thread (TSan's handle for it).
inline void adoptCurrentThread(Stack &S) {
#ifdef KILN_FIBER_TSAN
  S.Tsan = __tsan_get_current_fiber();
  S.OwnsTsan = false;
#endif
}

/// Just before switching from `From`'s stack to `To`'s.
KILN_FIBER_SWITCH inline void leave(Stack &From, const Stack &To) {
#ifdef KILN_FIBER_ASAN
  __sanitizer_start_switch_fiber(&From.FakeStack, To.Bottom, To.Size);
#endif
#ifdef KILN_FIBER_TSAN
  __tsan_switch_to_fiber(To.Tsan, 0);
#endif
  (void)From;
  (void)To;
}

/// First thing after arriving on `Now`'s stack; `Came`, when given, learns
/// the bounds of the stack left (the OS thread's, the first time).
inline void arrive(Stack &Now, Stack *Came = nullptr) {
#ifdef KILN_FIBER_ASAN
  const void *Bottom = nullptr;
  size_t Size = 0;
  __sanitizer_finish_switch_fiber(Now.FakeStack, &Bottom, &Size);
  Now.FakeStack = nullptr;
  if (Came) {
    Came->Bottom = Bottom;
    Came->Size = Size;
  }
#endif
  (void)Now;
  (void)Came;
}

} // namespace kiln::rt::detail::fiber

#endif // KILN_RUNTIME_FIBERSANITIZER_H
