// Replaces the global operator new/delete of the corruption test binary to record the largest
// allocation. Kept in its own file so that no new-expression is compiled next to the replacement.
#include "allocation_probe.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<size_t> g_largest{0};
}

namespace wgx::format::testing {
size_t largest_allocation() { return g_largest.load(); }
}  // namespace wgx::format::testing

#if !defined(__SANITIZE_ADDRESS__)
void* operator new(size_t size) {
  size_t seen = g_largest.load();
  while (size > seen && !g_largest.compare_exchange_weak(seen, size)) {
  }
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
#endif
