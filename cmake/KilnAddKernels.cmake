# kiln_add_kernels(): compile .tile files at build time into a library of
# typed C++ launchers with the bundles embedded (docs/cmake.md).
#
#   kiln_add_kernels(<target>
#     SOURCES a.tile [b.tile ...]
#     [TARGETS sm_90a gfx942 host ...]   default: all (every backend of kiln)
#     [TUNED table.json]                 kiln compile --tuned
#     [NAMESPACE ns]                     default: <target> as an identifier
#     [DEFINES NAME=VALUE ...]           kiln compile -D (pin const params)
#     [OPTIONS flag ...]                 more kiln compile flags
#     [SHARED]                           a shared library (default: static)
#     [STATIC_RUNTIME])                  link Kiln::runtime_static
#
# Per source, two commands: `kiln compile --emit=launcher-header` (the front
# end only: it reads the signatures) and `kiln compile --emit=launcher-source`
# (every variant for every target, the bundle as an array). Each depends on
# its .tile file and on the kiln executable, and kiln leaves an output it
# would write unchanged untouched, so that with Ninja (which checks the
# timestamps again after a command) editing a kernel's body recompiles its
# source alone and nothing that includes the header. Other generators have
# no such check: there each command also touches its output, so that a
# build ends up to date (and recompiles what depends on it).
#
# Layout, under ${CMAKE_CURRENT_BINARY_DIR}/<target>.kiln/:
#   include/<target>.h          includes every source's header (the one to use)
#   include/<target>/<stem>.h   one source's launchers
#   <stem>.cpp                  its launchers and its bundle
include_guard(GLOBAL)

function(kiln_add_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "SHARED;STATIC_RUNTIME" "TUNED;NAMESPACE"
    "SOURCES;TARGETS;DEFINES;OPTIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_add_kernels(${target}): unknown arguments "
      "'${ARG_UNPARSED_ARGUMENTS}' (expected SOURCES, TARGETS, TUNED, "
      "NAMESPACE, DEFINES, OPTIONS, SHARED or STATIC_RUNTIME)")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "kiln_add_kernels(${target}): SOURCES lists no .tile file")
  endif()
  if(TARGET ${target})
    message(FATAL_ERROR "kiln_add_kernels(${target}): a target named "
      "'${target}' already exists")
  endif()
  if(ARG_SHARED AND ARG_STATIC_RUNTIME)
    message(FATAL_ERROR "kiln_add_kernels(${target}): SHARED and "
      "STATIC_RUNTIME together would give the program two copies of the "
      "runtime (the library's and its own); use one")
  endif()
  if(NOT TARGET Kiln::kiln)
    message(FATAL_ERROR "kiln_add_kernels(${target}): Kiln::kiln is not "
      "defined; call find_package(Kiln) first")
  endif()

  if(DEFINED ARG_NAMESPACE)
    set(ns "${ARG_NAMESPACE}")
  else()
    string(MAKE_C_IDENTIFIER "${target}" ns)
  endif()
  if(ARG_TARGETS)
    list(JOIN ARG_TARGETS "," targets)
  else()
    set(targets all)
  endif()

  # Both commands get the same selection (-D, --kernel in OPTIONS, ...);
  # the header ignores the bundle's options.
  set(common_args --namespace=${ns})
  foreach(define IN LISTS ARG_DEFINES)
    list(APPEND common_args -D ${define})
  endforeach()
  list(APPEND common_args ${ARG_OPTIONS})
  set(source_args --targets=${targets})
  set(source_depends)
  if(ARG_TUNED)
    get_filename_component(tuned "${ARG_TUNED}" ABSOLUTE
      BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND source_args --tuned ${tuned})
    list(APPEND source_depends ${tuned})
  endif()

  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}.kiln")
  # Ninja makes output folders; the other generators do not.
  file(MAKE_DIRECTORY "${out}/include/${target}")
  set(touch_header)
  set(touch_source)
  set(umbrella_includes "")
  set(generated)
  set(stems)
  foreach(src IN LISTS ARG_SOURCES)
    # A misspelt keyword after SOURCES would be taken for a source.
    if(NOT src MATCHES "\\.tile$")
      message(FATAL_ERROR "kiln_add_kernels(${target}): SOURCES entry "
        "'${src}' is not a .tile file (a misspelt keyword?)")
    endif()
    get_filename_component(abs "${src}" ABSOLUTE
      BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(stem "${abs}" NAME_WLE)
    string(MAKE_C_IDENTIFIER "${stem}" ident)
    if(ident IN_LIST stems)
      message(FATAL_ERROR "kiln_add_kernels(${target}): two sources are "
        "named '${stem}' (each source's launchers and bundle are named by "
        "its file name; rename one)")
    endif()
    list(APPEND stems ${ident})
    set(header "${out}/include/${target}/${ident}.h")
    set(source "${out}/${ident}.cpp")
    if(NOT CMAKE_GENERATOR MATCHES "Ninja")
      set(touch_header COMMAND ${CMAKE_COMMAND} -E touch "${header}")
      set(touch_source COMMAND ${CMAKE_COMMAND} -E touch "${source}")
    endif()
    file(RELATIVE_PATH shown "${CMAKE_BINARY_DIR}" "${header}")
    add_custom_command(OUTPUT "${header}"
      COMMAND Kiln::kiln compile "${abs}" --emit=launcher-header
              ${common_args} -o "${header}"
      ${touch_header}
      DEPENDS "${abs}" "$<TARGET_FILE:Kiln::kiln>"
      COMMENT "kiln: launcher header ${shown}"
      VERBATIM)
    file(RELATIVE_PATH shown "${CMAKE_BINARY_DIR}" "${source}")
    add_custom_command(OUTPUT "${source}"
      COMMAND Kiln::kiln compile "${abs}" --emit=launcher-source
              ${common_args} ${source_args} -o "${source}"
      ${touch_source}
      DEPENDS "${abs}" "$<TARGET_FILE:Kiln::kiln>" ${source_depends}
      COMMENT "kiln: compiling ${stem}.tile for ${targets} (${shown})"
      VERBATIM)
    list(APPEND generated "${header}" "${source}")
    string(APPEND umbrella_includes "#include \"${target}/${ident}.h\"\n")
  endforeach()

  # The header to include, written at configure time (and only when it
  # changes).
  # Not KILN_LAUNCHERS_ (the per-source headers' prefix).
  string(MAKE_C_IDENTIFIER "KILN_TARGET_${target}_H" guard)
  file(CONFIGURE OUTPUT "${out}/include/${target}.h" CONTENT
"// Generated by kiln_add_kernels(${target}): the typed launchers of every
// source of the target (docs/cmake.md).
#ifndef ${guard}
#define ${guard}
${umbrella_includes}#endif
" @ONLY)

  if(ARG_SHARED)
    add_library(${target} SHARED ${generated} "${out}/include/${target}.h")
  else()
    add_library(${target} STATIC ${generated} "${out}/include/${target}.h")
  endif()
  target_include_directories(${target} PUBLIC
    "$<BUILD_INTERFACE:${out}/include>")
  if(ARG_STATIC_RUNTIME)
    target_link_libraries(${target} PUBLIC Kiln::runtime_static)
  else()
    target_link_libraries(${target} PUBLIC Kiln::runtime)
  endif()
  target_compile_features(${target} PUBLIC cxx_std_17)
  set_target_properties(${target} PROPERTIES
    KILN_NAMESPACE "${ns}" KILN_TARGETS "${targets}")
endfunction()
