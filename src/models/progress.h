// Progress of long loads, reported to a callback: the stage ("converting", "writing") and the step
// within it ("layer 7/28"), with the seconds since the stage began. done() reports the end; a
// stage left without done() (an exception) reports nothing more. An empty callback: silence.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace wgx::models {

struct ProgressEvent {
  std::string stage;
  std::string step;  // "" for the stage's end
  double seconds = 0;
  bool done = false;
};
using ProgressFn = std::function<void(const ProgressEvent&)>;

class Progress {
 public:
  Progress(ProgressFn fn, std::string stage)
      : fn_(std::move(fn)), stage_(std::move(stage)), start_(std::chrono::steady_clock::now()) {}

  void update(const std::string& step) {
    if (fn_) fn_({stage_, step, seconds(), false});
  }
  void done() {
    if (fn_) fn_({stage_, "", seconds(), true});
  }

 private:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  ProgressFn fn_;
  std::string stage_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace wgx::models
