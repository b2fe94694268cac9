// A model load's progress as one updating line on stderr ("wgx: loading models/x: converting,
// layer 7/28"), rewritten in place on a terminal and left out of logs; ended when the load is
// done, so what follows starts on its own line.
#pragma once

#include <string>

#include "wgx/wgx.hpp"

namespace wgx::cli {

class ProgressLine {
 public:
  explicit ProgressLine(std::string what);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void show(const LoadProgress& p);
  // The callback for LoadOptions::on_progress (this line must outlive the load).
  std::function<void(const LoadProgress&)> callback() {
    return [this](const LoadProgress& p) { show(p); };
  }

 private:
  void end();
  std::string what_;
  bool terminal_ = false;
  bool shown_ = false;
  size_t width_ = 0;  // of the last line, so that a shorter one blanks out its tail
};

}  // namespace wgx::cli
