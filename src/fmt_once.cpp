// fmt's out-of-line code, compiled once for the whole program.
//
// libfmt-dev (Debian 12, fmt 9.1) ships only a shared library, and the command links
// statically; with FMT_HEADER_ONLY every object that includes <fmt/format.h> compiled
// fmt's implementation again, about 3.5 s of each such object's compile (bench/RESULTS.md,
// "CI time"). Without it, <fmt/format.h> declares that code and this object defines it:
// format-inl.h's non-template functions, and the templates fmt declares `extern` (the
// locale and floating-point helpers its headers only declare) instantiated here for the
// character types bitproof formats.
#include <fmt/format-inl.h>

#include <locale>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API locale_ref::locale_ref(const std::locale& loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API void buffer<char>::append(const char*, const char*);
template FMT_API void vformat_to(buffer<char>&, string_view, basic_format_args<FMT_BUFFER_CONTEXT(char)>,
                                 locale_ref);
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;
template FMT_API void buffer<wchar_t>::append(const wchar_t*, const wchar_t*);

}  // namespace detail
FMT_END_NAMESPACE
