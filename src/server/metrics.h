// What wgx serve counts, in Prometheus' text format (GET /metrics): requests by endpoint and
// outcome, tokens, the queue, and latency histograms. Safe from any thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "server/openai.h"

namespace wgx::server {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);  // upper bounds in seconds, ascending
  void observe(double seconds);
  // Appends the _bucket, _sum and _count lines (the caller holds the metrics' lock).
  void write(std::string& out, const std::string& name, const std::string& help) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket, not cumulative
  double sum_ = 0;
  uint64_t count_ = 0;
};

enum class Outcome { Ok, Cancelled, Error, Rejected };

class Metrics {
 public:
  Metrics();
  void request(Endpoint endpoint, Outcome outcome);
  void tokens(int64_t prompt, int64_t cached, int64_t generated);
  void first_token(double seconds);  // from arrival to the first new token
  void inter_token(double seconds);
  void duration(double seconds);  // from arrival to the last token
  void set_queue(int64_t waiting, int64_t running);
  std::string text() const;

 private:
  mutable std::mutex mutex_;
  uint64_t requests_[2][4] = {};
  uint64_t prompt_ = 0, cached_ = 0, generated_ = 0;
  int64_t waiting_ = 0, running_ = 0;
  Histogram first_token_, inter_token_, duration_;
};

}  // namespace wgx::server
