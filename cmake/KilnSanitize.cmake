# Sanitizer builds (docs/testing.md, scripts/sanitize.sh).
#
#   -DKILN_SANITIZE=address,undefined   AddressSanitizer (with LeakSanitizer)
#                                       and UndefinedBehaviorSanitizer
#   -DKILN_SANITIZE=thread              ThreadSanitizer
#
# Every target of the tree is instrumented, and every finding is fatal
# (-fno-sanitize-recover=all): a test that trips a sanitizer fails. LLVM's
# and MLIR's shared libraries are not instrumented; that hides nothing of
# Kiln's own code. The runtime libraries carry the flags on their link
# interface, so that an executable built against a sanitized Kiln (the lit
# tests' CMake projects, examples/downstream) links the sanitizer runtime it
# needs.
set(KILN_SANITIZE "" CACHE STRING
  "Sanitizers to build with: address, undefined, address,undefined or thread (empty: none)")

set(KILN_SANITIZE_FLAGS "")
# Shared libraries link with -Wl,--no-undefined except in sanitized builds,
# where the sanitizer runtime lives in the executable and the libraries
# leave its symbols undefined.
set(KILN_NO_UNDEFINED_LINK_OPTION -Wl,--no-undefined)

if(KILN_SANITIZE)
  string(REPLACE "," ";" _kiln_sanitizers "${KILN_SANITIZE}")
  foreach(_s IN LISTS _kiln_sanitizers)
    if(NOT _s MATCHES "^(address|undefined|thread)$")
      message(FATAL_ERROR "KILN_SANITIZE: unknown sanitizer '${_s}' "
        "(expected address, undefined, address,undefined or thread)")
    endif()
  endforeach()
  if("thread" IN_LIST _kiln_sanitizers AND "address" IN_LIST _kiln_sanitizers)
    message(FATAL_ERROR "KILN_SANITIZE: thread cannot be combined with address")
  endif()
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "KILN_SANITIZE needs clang (clang-22 with "
      "libclang-rt-22-dev); this build uses ${CMAKE_CXX_COMPILER_ID}")
  endif()
  list(JOIN _kiln_sanitizers "," _kiln_joined)
  set(KILN_SANITIZE_FLAGS
    -fsanitize=${_kiln_joined} -fno-sanitize-recover=all
    -fno-omit-frame-pointer)
  # Line tables: reports name file:line.
  add_compile_options(${KILN_SANITIZE_FLAGS} -gline-tables-only)
  add_link_options(${KILN_SANITIZE_FLAGS})
  set(KILN_NO_UNDEFINED_LINK_OPTION "")
  # HandleLLVMOptions' -Wl,-z,defs has the same effect.
  string(REPLACE "-Wl,-z,defs" "" CMAKE_SHARED_LINKER_FLAGS
    "${CMAKE_SHARED_LINKER_FLAGS}")
  message(STATUS "Kiln: sanitized build (${_kiln_joined})")
endif()

# kiln_sanitizer_defaults(): gives every executable defined so far in this
# directory and below the AddressSanitizer defaults of
# cmake/SanitizerDefaults.cpp. Called once, after every target exists.
function(kiln_sanitizer_defaults)
  if(NOT KILN_SANITIZE MATCHES "address")
    return()
  endif()
  add_library(KilnSanitizerDefaults OBJECT
    ${PROJECT_SOURCE_DIR}/cmake/SanitizerDefaults.cpp)
  set(dirs ${CMAKE_CURRENT_SOURCE_DIR})
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t IN LISTS targets)
      get_target_property(type ${t} TYPE)
      if(type STREQUAL "EXECUTABLE")
        target_sources(${t} PRIVATE $<TARGET_OBJECTS:KilnSanitizerDefaults>)
      endif()
    endforeach()
  endwhile()
endfunction()
