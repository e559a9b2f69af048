// core::Result: how core's control side (start, stop, snapshot, the step
// watch, the pool) reports failure. Core is libneuronprof_markers, which an
// application or plug-in with its own Abseil (of any version) links: it
// needs nothing but the C++ runtime and libunwind, so no absl::Status here.
// The modules above core turn a Result into an absl::Status with the same
// code and message (src/collectors/core_status.h).
#ifndef NEURONPROF_SRC_CORE_RESULT_H_
#define NEURONPROF_SRC_CORE_RESULT_H_

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace neuronprof {
namespace core {

// The failures core reports. The values are absl::StatusCode's, so the
// conversion above core keeps the code as it is.
enum class ErrorCode : int {
  kOk = 0,
  kInvalidArgument = 3,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
};

template <typename T = void>
class Result;

// Success, or a failure's code and message (Result<> is the status alone).
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;  // Success.
  Result(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

// A value, or the failure that left none.
template <typename T>
class [[nodiscard]] Result {
 public:
  // Implicit, so `return value;` works (T&&: a named local moves).
  Result(T&& value) : value_(std::move(value)) {}  // NOLINT
  Result(const T& value) : value_(value) {}        // NOLINT
  // `failure` must not be ok(): there would be no value to read.
  Result(Result<> failure) : status_(std::move(failure)) {  // NOLINT: `return failure;`.
    assert(!status_.ok());
  }

  bool ok() const { return value_.has_value(); }
  const Result<>& status() const { return status_; }

  // The value; only when ok().
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T&& operator*() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Result<> status_;
  std::optional<T> value_;
};

}  // namespace core
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_CORE_RESULT_H_
