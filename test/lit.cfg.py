# lit configuration. Every test runs twice: through stock clang-tidy-16 with the plugin
# (--param mode=plugin) and through the torchtidy driver (--param mode=driver).
import os
import shutil
import lit.formats

config.name = "torchtidy-" + lit_config.params.get("mode", "plugin")
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".cpp", ".test"]
# utils/ holds the GoogleTest unit tests (CTest "vocabulary"), fuzz/ the libFuzzer target
# (CTest "fuzz-readers"), not lit tests.
config.excludes = ["Inputs", "torch_pch.h", "utils", "fuzz"]
config.test_source_root = os.path.dirname(__file__)

mode = lit_config.params.get("mode", "plugin")
# --param driver=<path> runs the tests against another build of the driver (the ASan/UBSan
# one, or an older binary to see a regression test fail).
config.driver_path = lit_config.params.get("driver", config.driver_path)
# A second run next to the usual one (CTest -j) needs its own %t directories.
config.test_exec_root = lit_config.params.get("exec_root", config.test_exec_root)
# The sanitized driver runs its workers without a memory limit (ASan reserves terabytes).
if "asan" in os.path.basename(config.driver_path):
    config.available_features.add("asan")
for sanitizer_options in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
    if sanitizer_options in os.environ:
        config.environment[sanitizer_options] = os.environ[sanitizer_options]
if mode == "driver":
    # clang-tidy exits 0 on findings, the driver 1 (CI gating); lit runs pipes with
    # pipefail, so check tests ask the driver for clang-tidy's status.
    tidy = config.driver_path + " --findings-exit-code=0"
elif mode == "plugin":
    if not os.path.exists(config.plugin_path):
        lit_config.fatal("the plugin is not built: %s" % config.plugin_path)
    tidy = "%s --load=%s" % (config.clang_tidy, config.plugin_path)
else:
    lit_config.fatal("unknown mode %r (plugin|driver)" % mode)
config.available_features.add("mode-" + mode)
# --param llvm=19: the run is meant for the clang-tidy and plugin of that LLVM (CTest
# lit-plugin-llvm19 runs the configuration of the LLVM 19 build tree); any other fails.
llvm = lit_config.params.get("llvm", config.llvm_version_major)
if llvm != config.llvm_version_major:
    lit_config.fatal("this build tree is configured for LLVM %s, not %s (%s)"
                     % (config.llvm_version_major, llvm, config.project_binary_dir))
config.available_features.add("llvm-" + config.llvm_version_major)
# The clang-tidy of the other LLVM (16 or 19), to show that a plugin does not register into it.
other_clang_tidy = "/usr/lib/llvm-%s/bin/clang-tidy" % ("16" if config.llvm_version_major != "16" else "19")
if os.path.exists(other_clang_tidy):
    config.available_features.add("other-clang-tidy")
config.substitutions.append(("%other_clang_tidy", other_clang_tidy))

# --param torch=2.6 runs the tests against the LibTorch 2.6 headers from scripts/setup instead of
# Debian 12's 1.13 (CTest runs the check tests both ways).
torch = lit_config.params.get("torch", "1.13")
if torch == "1.13":
    torch_isystem = "-isystem " + config.torch_include
    torch_pch = config.torch_pch
elif torch == "2.6":
    if not config.torch2_root:
        lit_config.fatal("LibTorch 2.6 headers not found (TORCHTIDY_TORCH2_ROOT is empty): "
                         "run scripts/setup, then configure the build again")
    torch_isystem = "-isystem {0}/usr/include -isystem {0}/usr/include/torch/csrc/api/include".format(
        config.torch2_root)
    torch_pch = config.torch2_pch
else:
    lit_config.fatal("unknown torch %r (1.13|2.6)" % torch)
config.name += "-torch" + torch
torch_flags = "-std=c++17 %s -include-pch %s" % (torch_isystem, torch_pch)
# The checks about CUDA calls parse LibTorch's c10/cuda headers, which need the CUDA runtime
# API and the one generated header CPU-only LibTorch packages lack (test/Inputs/libtorch-cuda).
# Without the toolkit those tests fail on the missing header rather than pass by skipping.
cuda_include = getattr(config, "cuda_include", "")
if not cuda_include or cuda_include.endswith("NOTFOUND"):
    lit_config.note("CUDA toolkit headers not found (TORCHTIDY_CUDA_INCLUDE): the CUDA check tests will fail")
    cuda_include = "/cuda-toolkit-headers-not-found"
cuda_flags = "-isystem %s -isystem %s" % (
    os.path.join(config.test_source_root, "Inputs", "libtorch-cuda"), cuda_include)
config.substitutions.append(("%cuda_flags", cuda_flags))
config.substitutions.append(("%cuda_root", os.path.dirname(cuda_include.rstrip("/"))))
config.substitutions.append(("%torch2_root", config.torch2_root))
# The LibTorch 2.6 headers whatever --param torch says (tests of version-dependent behaviour).
config.substitutions.append(("%torch2_isystem",
    "-isystem {0}/usr/include -isystem {0}/usr/include/torch/csrc/api/include".format(config.torch2_root)))
config.substitutions.append(("%tidy", tidy))
config.substitutions.append(("%plugin", config.plugin_path))
config.substitutions.append(("%clang_tidy", config.clang_tidy))
config.substitutions.append(("%torchtidy", config.driver_path))
config.substitutions.append(("%torch_flags", torch_flags))
config.substitutions.append(("%torch_include", config.torch_include))
config.substitutions.append(("%torch_pch", torch_pch))
config.substitutions.append(("%clangxx", config.clangxx))
config.substitutions.append(("%python", config.python))
config.substitutions.append(("%srcroot", config.project_source_dir))
config.substitutions.append(("%binroot", config.project_binary_dir))
# Every check test must fail on any warning or error it does not expect. [[ERROR]] is how a
# check whose registry level is "error" (torch-inplace-on-leaf) is reported: an error by the
# driver, a warning by stock clang-tidy (whose check diagnostics are warnings; WarningsAsErrors
# escalates them).
# A diagnostic starts its line; the source lines clang echoes under one start with a space and
# may hold a test's own CHECK comments ("warning: ..."): clang 19 echoes every line a
# diagnostic's ranges and fix-its span, as " 46 | text".
config.substitutions.append(("%filecheck",
    "FileCheck --implicit-check-not='{{^([^ ].*)?(warning|error)}}:' -DERROR=%s"
    % ("error" if mode == "driver" else "warning")))

config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", "")])
# Editors start `torchtidy lsp` from PATH (lit's shell expands no variables).
config.substitutions.append(("%{path_with_driver}", os.pathsep.join(
    [os.path.dirname(config.driver_path), config.environment["PATH"]])))
# The Neovim test needs Debian's neovim (scripts/setup installs it); without it, UNSUPPORTED.
if shutil.which("nvim"):
    config.available_features.add("nvim")

# The driver's cache: a fresh directory for every lit run (one per mode: CTest runs both
# modes at once), never the user's own ~/.cache/torchtidy.
cache_home = os.path.join(config.test_exec_root, "xdg-cache-" + mode)
shutil.rmtree(cache_home, ignore_errors=True)
config.environment["XDG_CACHE_HOME"] = cache_home
