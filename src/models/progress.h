// One updating progress line on stderr for long loads ("loading Qwen3ForCausalLM from ...: layer
// 7/28"): each update rewrites the line with a carriage return; done() ends it with the time
// taken. Left without done() (an exception), the line is just ended, so an error message that
// follows starts on its own line.
#pragma once

#include <chrono>
#include <string>

namespace wgx::models {

class Progress {
 public:
  Progress(bool enabled, std::string what)
      : enabled_(enabled), what_(std::move(what)), start_(std::chrono::steady_clock::now()) {}
  ~Progress() { end_line(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(const std::string& step);
  void done();

 private:
  void end_line();

  bool enabled_;
  bool shown_ = false;
  size_t width_ = 0;  // of the last line, so a shorter one can blank out its tail
  std::string what_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace wgx::models
