#include "server/metrics.h"

#include <cstdio>

namespace wgx::server {

namespace {

std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double seconds) {
  size_t i = 0;
  while (i < bounds_.size() && seconds > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += seconds;
  ++count_;
}

void Histogram::write(std::string& out, const std::string& name, const std::string& help) const {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += name + "_bucket{le=\"" + number(bounds_[i]) + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum " + number(sum_) + "\n" + name + "_count " + std::to_string(count_) + "\n";
}

Metrics::Metrics()
    : first_token_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}),
      inter_token_({0.0005, 0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1}),
      duration_({0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}) {}

void Metrics::request(Endpoint endpoint, Outcome outcome) {
  std::lock_guard lock(mutex_);
  ++requests_[static_cast<int>(endpoint)][static_cast<int>(outcome)];
}

void Metrics::tokens(int64_t prompt, int64_t cached, int64_t generated) {
  std::lock_guard lock(mutex_);
  prompt_ += static_cast<uint64_t>(prompt);
  cached_ += static_cast<uint64_t>(cached);
  generated_ += static_cast<uint64_t>(generated);
}

void Metrics::first_token(double seconds) {
  std::lock_guard lock(mutex_);
  first_token_.observe(seconds);
}

void Metrics::inter_token(double seconds) {
  std::lock_guard lock(mutex_);
  inter_token_.observe(seconds);
}

void Metrics::duration(double seconds) {
  std::lock_guard lock(mutex_);
  duration_.observe(seconds);
}

void Metrics::set_queue(int64_t waiting, int64_t running) {
  std::lock_guard lock(mutex_);
  waiting_ = waiting;
  running_ = running;
}

std::string Metrics::text() const {
  static const char* const outcomes[] = {"ok", "cancelled", "error", "rejected"};
  std::lock_guard lock(mutex_);
  std::string out =
      "# HELP wgx_requests_total Completion requests by endpoint and outcome (rejected: refused before "
      "running; cancelled: the client left).\n# TYPE wgx_requests_total counter\n";
  for (Endpoint e : {Endpoint::Chat, Endpoint::Completions}) {
    for (int o = 0; o < 4; ++o) {
      out += std::string("wgx_requests_total{endpoint=\"") + endpoint_name(e) + "\",outcome=\"" + outcomes[o] +
             "\"} " + std::to_string(requests_[static_cast<int>(e)][o]) + "\n";
    }
  }
  auto counter = [&](const char* name, const char* help, uint64_t v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n" + name + " " +
           std::to_string(v) + "\n";
  };
  auto gauge = [&](const char* name, const char* help, int64_t v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n" + name + " " +
           std::to_string(v) + "\n";
  };
  counter("wgx_prompt_tokens_total", "Prompt tokens of finished requests, cached ones included.", prompt_);
  counter("wgx_cached_prompt_tokens_total", "Prompt tokens found in the cache (not computed again).", cached_);
  counter("wgx_generated_tokens_total", "Tokens generated.", generated_);
  gauge("wgx_queue_length", "Requests waiting for their turn.", waiting_);
  gauge("wgx_requests_running", "Requests generating now.", running_);
  first_token_.write(out, "wgx_time_to_first_token_seconds", "From a request's arrival to its first new token.");
  inter_token_.write(out, "wgx_inter_token_latency_seconds", "Between consecutive tokens of a request.");
  duration_.write(out, "wgx_request_duration_seconds", "From a request's arrival to its last token.");
  return out;
}

}  // namespace wgx::server
