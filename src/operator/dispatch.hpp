// The catalogue recipes an mxfp4_gemm stage may dequantise with (e2m1 × ue8m0 →
// fp16), picked at run time by registry index and handed to a functor as a type:
// f.template run<Recipe>(). Host and device share it; the switch is generated
// from recipes.def, so a new dequant recipe needs no code here.
#pragma once

#include <cstdint>

#include "hd.hpp"
#include "recipes/recipe.hpp"

#define BITPROOF_RECIPE_HEADERS
#include "recipes/recipes.def"
#undef BITPROOF_RECIPE_HEADERS

namespace bitproof::op {

template <class R>
constexpr bool kIsMxfp4Dequant = R::kCard.arity == 2 && R::kCard.inputs[0] == FormatId::e2m1 &&
                                 R::kCard.inputs[1] == FormatId::ue8m0 && R::kCard.output == FormatId::fp16;

// Calls f.template run<R>() for the recipe with registry index `index` when it is
// an mxfp4 dequant; returns false (and calls nothing) otherwise.
template <class F>
BP_HD bool with_dequant(int index, F& f) {
  int i = 0;
  bool called = false;
#define BITPROOF_RECIPE(Type)                                       \
  if constexpr (kIsMxfp4Dequant<Type>) {                            \
    if (i == index) {                                               \
      f.template run<Type>();                                       \
      called = true;                                                \
    }                                                               \
  }                                                                 \
  ++i;
#include "recipes/recipes.def"
#undef BITPROOF_RECIPE
  return called;
}

}  // namespace bitproof::op
