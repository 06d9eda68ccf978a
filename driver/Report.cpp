#include "Report.h"

#include "clang/Tooling/Core/Replacement.h"

using nlohmann::json;

namespace torchtidy::driver {

void to_json(json &J, const Message::Range &R) {
  J = json{{"FilePath", R.FilePath}, {"Offset", R.Offset}, {"Length", R.Length}};
}
void from_json(const json &J, Message::Range &R) {
  J.at("FilePath").get_to(R.FilePath);
  J.at("Offset").get_to(R.Offset);
  J.at("Length").get_to(R.Length);
}
bool isCompilerError(const Finding &F) {
  return F.Level == "error" && llvm::StringRef(F.Check).starts_with("clang-diagnostic-");
}

static clang::tooling::DiagnosticMessage toDiagnosticMessage(const Message &M) {
  clang::tooling::DiagnosticMessage D;
  D.Message = M.Text;
  D.FilePath = M.FilePath;
  D.FileOffset = M.Offset;
  for (const Message::Range &R : M.Ranges)
  {
    clang::tooling::FileByteRange B;
    B.FilePath = R.FilePath;
    B.FileOffset = R.Offset;
    B.Length = R.Length;
    D.Ranges.push_back(B);
  }
  for (const Replacement &R : M.Fix) {
    // Replacements of one diagnostic never conflict: clang-tidy recorded them together.
    llvm::consumeError(D.Fix[R.FilePath].add(
        clang::tooling::Replacement(R.FilePath, R.Offset, R.Length, R.Text)));
  }
  return D;
}

clang::tidy::ClangTidyError toClangTidyError(const Finding &F) {
  using Level = clang::tooling::Diagnostic::Level;
  Level L = F.Level == "error"    ? Level::Error
            : F.Level == "remark" ? Level::Remark
                                  : Level::Warning;
  clang::tidy::ClangTidyError E(F.Check, L, F.BuildDirectory, F.WarningAsError);
  E.Message = toDiagnosticMessage(F.Primary);
  for (const Message &N : F.Notes)
    E.Notes.push_back(toDiagnosticMessage(N));
  E.EnabledDiagnosticAliases = F.Aliases;
  return E;
}

} // namespace torchtidy::driver
