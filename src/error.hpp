// Errors travel as values from the libraries to src/cli, which alone prints
// and exits. A message names the file and the field: "spec.json: claims[0]: ...".
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace bitproof {

enum ExitCode : int { kExitHolds = 0, kExitRefuted = 1, kExitBadInput = 2, kExitNoBackend = 3 };

struct Error {
  std::string message;
  int exit_code = kExitBadInput;
};

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Expected(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] T& value() { return std::get<0>(state_); }
  [[nodiscard]] const T& value() const { return std::get<0>(state_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  [[nodiscard]] const Error& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

struct Ok {};

}  // namespace bitproof
