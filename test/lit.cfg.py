# lit configuration of specc's test suite.
import os
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "SPECC"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.specc_obj_root, "test")
# Inputs and helpers that are not tests.
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "lib", "vectors", "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%kernels", os.path.join(config.specc_src_root, "kernels")))
# The stage ops on their own (every dtype variant written out): inputs of the
# stage lowerings' tests; the runtime builds kernels/ only.
config.substitutions.append(("%stages", os.path.join(config.test_source_root, "Inputs", "stages")))

llvm_config.with_system_environment(["HOME", "TMP", "TEMP", "CUDA_HOME", "CUDA_PATH"])
llvm_config.use_default_substitutions()

# FileCheck always runs with --enable-var-scope: captured names die at each
# CHECK-LABEL, so one function's match cannot satisfy another's check.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

tool_dirs = [config.specc_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["specc-opt", "specc"], tool_dirs)
llvm_config.add_tool_substitutions(["llvm-readelf", "split-file"], [config.llvm_tools_dir])


# ptxas: the `ptxas` feature and the %ptxas substitution, the ptxas that
# specc's driver itself finds (its --version names it), in the tests'
# environment.
def find_ptxas():
    specc = os.path.join(config.specc_tools_dir, "specc")
    try:
        out = subprocess.run([specc, "--version"], env=config.environment,
                             capture_output=True, text=True, timeout=60).stdout
    except OSError:
        return None
    for line in out.splitlines():
        key, _, value = line.strip().partition(": ")
        if key == "ptxas" and os.path.isabs(value):
            return value
    return None


ptxas = find_ptxas()
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
