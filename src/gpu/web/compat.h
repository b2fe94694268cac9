// Force-included into every file of the WebAssembly build (cmake/Web.cmake): what C++20 has and
// the standard library of the pinned Emscripten (3.1.6) lacks, defined as the standard does.
#pragma once

#include <bit>
#include <type_traits>

#if !defined(__cpp_lib_bit_cast)
namespace std {
template <class To, class From>
  requires(sizeof(To) == sizeof(From) && is_trivially_copyable_v<To> && is_trivially_copyable_v<From>)
constexpr To bit_cast(const From& from) noexcept {
  return __builtin_bit_cast(To, from);
}
}  // namespace std
#endif
