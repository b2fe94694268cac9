#include "models/progress.h"

#include <unistd.h>

#include <cstdio>

namespace wgx::models {

void Progress::update(const std::string& step) {
  if (!enabled_) return;
  // A log file gets the final line only; a terminal sees the line update in place.
  static const bool terminal = isatty(STDERR_FILENO) != 0;
  if (!terminal && step.rfind("done", 0) != 0) return;
  const std::string line = what_ + ": " + step;
  const size_t pad = width_ > line.size() ? width_ - line.size() : 0;
  std::fprintf(stderr, "\r%s%*s", line.c_str(), static_cast<int>(pad), "");
  std::fflush(stderr);
  width_ = line.size();
  shown_ = true;
}

void Progress::done() {
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start_;
  char text[48];
  std::snprintf(text, sizeof text, "done in %.1f s", took.count());
  update(text);
  end_line();
}

void Progress::end_line() {
  if (!shown_) return;
  std::fputc('\n', stderr);
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace wgx::models
