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
config.substitutions.append(("%examples", os.path.join(config.kiln_src_root, "examples")))
config.substitutions.append(("%kiln_src", config.kiln_src_root))
# The CUDA driver's test double (test/runtime/FakeCuda.h).
config.substitutions.append(("%fakecuda", os.path.join(
    config.kiln_obj_root, "test", "runtime", "libfakecuda.so")))

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
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
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.kiln_tools_dir, append_path=True)
