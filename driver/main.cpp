// Temporary standalone front end: stock clang-tidy main with the torch checks linked in.
#include "TorchTidyModule.h"
#include "clang-tidy/tool/ClangTidyMain.h"

[[maybe_unused]] static int TorchTidyModuleAnchorDestination = TorchTidyModuleAnchorSource;

int main(int argc, const char **argv) { return clang::tidy::clangTidyMain(argc, argv); }
