# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "Kiln"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".tile", ".test"]
config.excludes = ["Inputs", "unit", "fuzz", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test")

config.environment["FILECHECK_OPTS"] = "--enable-var-scope"
# Launches choose the default variant unless a test asks for tuning
# (docs/tuning.md), and a test that tunes writes its database under the
# build folder, never to the user's cache.
config.environment["KILN_TUNING"] = "off"
config.environment["KILN_CACHE_DIR"] = os.path.join(
    config.kiln_obj_root, "test", "tuning-cache")
config.substitutions.append(("%examples", os.path.join(config.kiln_src_root, "examples")))
config.substitutions.append(("%kiln_src", config.kiln_src_root))
# The CUDA driver's test double (test/runtime/FakeCuda.h), and one of a
# driver before CUDA 12 (first: %fakecuda is a prefix of its name).
config.substitutions.append(("%fakecuda11", os.path.join(
    config.kiln_obj_root, "test", "runtime", "libfakecuda11.so")))
config.substitutions.append(("%fakecuda", os.path.join(
    config.kiln_obj_root, "test", "runtime", "libfakecuda.so")))
config.substitutions.append(("%fakehip", os.path.join(
    config.kiln_obj_root, "test", "runtime", "libfakehip.so")))

# Feature `hip-runtime` where HIP's library (libamdhip64, Debian's
# libamdhip64-5 in CI) can be loaded; KILN_EXPECT_HIP_RUNTIME=1
# (scripts/test.sh) makes its absence an error instead of skipped tests.
import ctypes
hip_runtime = None
for name in ["libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6",
             "libamdhip64.so.5"]:
    try:
        ctypes.CDLL(name)
        hip_runtime = name
        break
    except OSError:
        pass
if hip_runtime:
    config.available_features.add("hip-runtime")
elif os.environ.get("KILN_EXPECT_HIP_RUNTIME") == "1":
    lit_config.error("KILN_EXPECT_HIP_RUNTIME=1 but libamdhip64 cannot be "
                     "loaded (scripts/deps.sh installs libamdhip64-5)")

llvm_config.with_system_environment(["HOME", "TMP", "TEMP", "LSAN_OPTIONS"])
llvm_config.use_default_substitutions()

tool_dirs = [config.kiln_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["kiln", "kiln-opt", "kiln-bundle-test",
                                    "KilnUnitTests", "KilnBundleTests",
                                    "kiln-run", "kiln-runtime-testgen"],
                                   tool_dirs)
# Backends in this build: features host-backend, nvptx-backend, ...
for backend in getattr(config, "kiln_backends", "").split(","):
    if backend:
        config.available_features.add(backend + "-backend")
# ptxas checks every PTX the NVIDIA backend writes where it is installed
# (the backend finds it the same way: KILN_PTXAS, PATH, /usr/local/cuda/bin).
import shutil
ptxas = os.environ.get("KILN_PTXAS") or shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas"
    if os.access("/usr/local/cuda/bin/ptxas", os.X_OK) else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
# Generated launchers and the CMake package: the compilers and the CMake of
# this build, the build tree's package (build/lib/cmake/Kiln), the runtime's
# headers and libraries.
config.substitutions.append(("%cmake", config.cmake_command))
config.substitutions.append(("%cxx", config.cxx_compiler))
# What a program that links the runtime by hand must add in a sanitized
# build (the CMake package's targets carry it themselves).
sanitize = getattr(config, "kiln_sanitize", "")
config.substitutions.append(("%sanitize_flags", (
    "-fsanitize=%s -fno-sanitize-recover=all" % sanitize) if sanitize else ""))
if sanitize:
    config.available_features.add("sanitized")
config.substitutions.append(("%cc", config.c_compiler))
config.substitutions.append(("%kiln_package", os.path.join(
    config.kiln_obj_root, "lib", "cmake", "Kiln")))
config.substitutions.append(("%runtime_include", os.path.join(
    config.kiln_src_root, "runtime", "include")))
config.substitutions.append(("%runtime_lib", os.path.join(
    config.kiln_obj_root, "lib")))
make = shutil.which("make")
if make:
    config.available_features.add("make")
    config.substitutions.append(("%make", make))
if os.path.basename(config.make_program) == "ninja":
    config.available_features.add("ninja")
    config.substitutions.append(("%ninja", config.make_program))
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.kiln_tools_dir, append_path=True)

# GPU tests (test/e2e/gpu, docs/testing-gpu.md). Features `gpu` and
# `cuda-device` when `kiln-run --list-devices` lists a CUDA device, probed
# with the environment the tests get; `compute-sanitizer` when the NVIDIA
# tool is found ($KILN_COMPUTE_SANITIZER, PATH, /usr/local/cuda/bin). The
# bundles the GPU tests run are those of the e2e GoogleTests, compiled at
# build time for host, sm_80 and sm_90a (%e2e_bundles), so that the tests
# need kiln-run alone (and run from a device pack on a machine without the
# compiler).
# `lit --param kiln_cuda_driver=PATH` gives every test KILN_CUDA_DRIVER=PATH:
# with the fake driver (build/test/runtime/libfakecuda.so) on
# build/test/e2e/gpu, the GPU tests take the CUDA path and fail at the first
# kernel load, loudly (the fake runs no code): a check of the plumbing on a
# machine without a GPU (docs/testing-gpu.md). Not meant for the whole suite.
import subprocess
if lit_config.params.get("kiln_cuda_driver"):
    config.environment["KILN_CUDA_DRIVER"] = os.path.abspath(
        lit_config.params["kiln_cuda_driver"])
config.substitutions.append(("%e2e_bundles", os.path.join(
    config.kiln_obj_root, "test", "e2e", "bundles")))


def probe_cuda_devices():
    """(list of CUDA device lines, why there is none)."""
    kiln_run = os.path.join(config.kiln_tools_dir, "kiln-run")
    if not os.access(kiln_run, os.X_OK):
        return [], "kiln-run is not built"
    try:
        p = subprocess.run([kiln_run, "--list-devices"], env=config.environment,
                           capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        return [], "kiln-run --list-devices failed: %s" % e
    devices = [l for l in p.stdout.splitlines() if l.startswith("cuda:")]
    why = " ".join(p.stderr.split()) or "exit code %d" % p.returncode
    return devices, why


cuda_devices, no_cuda_why = probe_cuda_devices()
if cuda_devices:
    config.available_features.update(["gpu", "cuda-device"])
    # sm_90a images (wgmma, TMA) run on sm_90 exactly.
    if ", sm_90," in cuda_devices[0]:
        config.available_features.add("cuda-sm90")
    lit_config.note("GPU tests run on " + cuda_devices[0])
else:
    lit_config.note("GPU tests (REQUIRES: gpu) are unsupported here: "
                    + no_cuda_why)
sanitizer = os.environ.get("KILN_COMPUTE_SANITIZER") or shutil.which(
    "compute-sanitizer") or (
    "/usr/local/cuda/bin/compute-sanitizer"
    if os.access("/usr/local/cuda/bin/compute-sanitizer", os.X_OK) else None)
if sanitizer:
    config.available_features.add("compute-sanitizer")
    config.substitutions.append(("%compute_sanitizer", sanitizer))
elif cuda_devices:
    lit_config.note("compute-sanitizer not found (PATH, /usr/local/cuda/bin, "
                    "$KILN_COMPUTE_SANITIZER): the sanitizer tests are "
                    "unsupported")
