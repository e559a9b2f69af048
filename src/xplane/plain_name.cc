#include "src/xplane/plain_name.h"

#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace xplane {
namespace {

constexpr size_t kMaxEchoBytes = 200;

}  // namespace

std::string QuoteForMessage(std::string_view input) {
  if (input.size() <= kMaxEchoBytes) return absl::StrCat("'", std::string(input), "'");
  return absl::StrCat("'", std::string(input.substr(0, kMaxEchoBytes)), "'...(", input.size(),
                      " bytes)");
}

bool IsPlainChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '-' || c == '_';
}

bool IsPlainName(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.size() > kMaxFileNameBytes) {
    return false;
  }
  for (char c : name) {
    if (!IsPlainChar(c)) return false;
  }
  return true;
}

absl::Status CheckPlainName(std::string_view name, std::string_view what, std::string_view suffix) {
  if (!IsPlainName(name.substr(0, kMaxFileNameBytes))) {
    return absl::InvalidArgumentError(
        absl::StrCat(std::string(what), " ", QuoteForMessage(name),
                     " is not a plain name: use letters, digits, '.', '-' and '_' only (no "
                     "spaces or path separators, not '.' or '..')"));
  }
  if (name.size() + suffix.size() > kMaxFileNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(what), " ", QuoteForMessage(name), " is too long: the name",
        suffix.empty() ? "" : absl::StrCat(" '<", std::string(what), ">", std::string(suffix), "'"),
        " is ", name.size() + suffix.size(), " bytes, the file system takes at most ",
        kMaxFileNameBytes, " (NAME_MAX)"));
  }
  return absl::OkStatus();
}

}  // namespace xplane
}  // namespace neuronprof
