// Row loops split over the host's cores: loading a 1B-parameter model converts, quantizes (or
// generates) over a billion weights, which on one core takes long enough to matter.
#pragma once

#include <cstdint>
#include <functional>

namespace wgx::models {

// Calls fn(begin, end) on contiguous ranges that cover [0, n), one per thread on up to
// std::thread::hardware_concurrency() threads, each range at least `min_chunk` long (a small
// job stays on the calling thread). Rethrows the exception of the lowest range that threw, once
// every range has ended, so errors do not depend on the thread count.
void parallel_ranges(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace wgx::models
