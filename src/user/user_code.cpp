#include "user/user_code.hpp"

#include <fmt/format.h>

#include "user/user_recipes.hpp"

namespace bitproof::user {
namespace {

std::string& refusal() {
  static std::string why;
  return why;
}

}  // namespace

void set_user_code_refusal(std::string why) { refusal() = std::move(why); }

const std::string& user_code_refusal() { return refusal(); }

std::optional<Error> refuse_user_code(std::string_view where, std::string_view what) {
  if (refusal().empty()) return std::nullopt;
  return Error{
      fmt::format("{}: {} is user code (compiled and run on this machine with the rights of whoever runs "
                  "bitproof): refused by {}",
                  where, what, refusal())};
}

std::optional<Error> refuse_user_code(const UserRecipes& user) {
  if (refusal().empty()) return std::nullopt;
  for (std::size_t i = 0; i < user.recipes.size(); ++i) {
    const UserRecipe& r = user.recipes[i];
    if (r.function.empty()) continue;  // an output table: data
    std::string files;
    for (const std::string& f : user.files) files += (files.empty() ? "" : ", ") + f;
    return refuse_user_code(fmt::format("{}: user_recipes[{}] ({})", user.spec_path, i, r.name),
                            fmt::format("function {} of {}", r.function, files));
  }
  return std::nullopt;
}

}  // namespace bitproof::user
