#include "cli/progress_line.h"

#include <unistd.h>

#include <cstdio>

namespace wgx::cli {

ProgressLine::ProgressLine(std::string what) : what_(std::move(what)), terminal_(isatty(STDERR_FILENO) != 0) {}

ProgressLine::~ProgressLine() { end(); }

void ProgressLine::show(const LoadProgress& p) {
  if (!terminal_) return;
  if (p.stage == "done") {
    end();
    return;
  }
  const std::string line = "wgx: " + what_ + ": " + p.stage + (p.step.empty() ? "" : ", " + p.step);
  const size_t pad = width_ > line.size() ? width_ - line.size() : 0;
  std::fprintf(stderr, "\r%s%*s", line.c_str(), static_cast<int>(pad), "");
  std::fflush(stderr);
  width_ = line.size();
  shown_ = true;
}

void ProgressLine::end() {
  if (!shown_) return;
  // The line is blanked, not kept: the message that follows says how the load went.
  std::fprintf(stderr, "\r%*s\r", static_cast<int>(width_), "");
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace wgx::cli
