#include "own_abseil.h"

#include <utility>

namespace absl {

Status::Status(int code, std::string message) : message_(std::move(message)), code_(code) {}

Status FailedPreconditionError(const std::string& message) { return Status(9, message); }

std::string StrCat(const std::string& a, const std::string& b) { return a + b; }

}  // namespace absl
