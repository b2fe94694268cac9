#include "models/parallel.h"

#include <algorithm>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace wgx::models {

void parallel_ranges(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  const int64_t parts = std::clamp<int64_t>(n / std::max<int64_t>(min_chunk, 1), 1, cores);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(parts));
  auto run = [&](int64_t p) {
    try {
      fn(n * p / parts, n * (p + 1) / parts);
    } catch (...) {
      errors[static_cast<size_t>(p)] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  int64_t p = 1;
  try {
    for (; p < parts; ++p) threads.emplace_back(run, p);
  } catch (const std::system_error&) {
    // No more threads to be had: the calling thread takes the ranges left.
  }
  for (int64_t rest = p; rest < parts; ++rest) run(rest);
  run(0);
  for (auto& t : threads) t.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace wgx::models
