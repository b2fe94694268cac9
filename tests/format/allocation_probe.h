// The largest single allocation (operator new) this test binary has made so far. Under
// AddressSanitizer, which has its own allocator and limits, it reports 0.
#pragma once

#include <cstddef>

namespace wgx::format::testing {
size_t largest_allocation();
}
