// The requests wgx serve has taken, and the one thread that runs them on the model, in arrival
// order. With parallel = 1 they run one at a time on the model's sessions, which keep the cache of
// the last conversation, so a request that extends it (the next chat turn, a longer prompt) feeds
// only its new tokens. With parallel > 1 (a model loaded with LoadOptions::parallel) up to that
// many run together in a wgx::Batch: each step advances all of them by a token, and requests
// join as slots free up, their prompts fed beside the running ones (after the prefix that a free
// slot's rows hold already).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/metrics.h"
#include "server/openai.h"
#include "wgx/wgx.hpp"

namespace wgx::server {

using Clock = std::chrono::steady_clock;

// One request: what it asks, and what its generation has produced for the HTTP thread to send.
struct Job {
  CompletionRequest request;
  std::vector<int32_t> prompt_ids;  // completions: the prompt's tokens
  Clock::time_point arrived = Clock::now();
  Clock::time_point last_token{};      // the worker's, for the latency metrics
  std::atomic<bool> cancelled{false};  // the client is gone: stop at the next token

  // Waits up to `wait` for new text or the end; returns the text produced since the last call
  // and sets `*finished` once the generation is over (result or error set).
  std::string take(std::chrono::milliseconds wait, bool* finished);
  void wait_done();

  // Set by the worker.
  void append(std::string_view text);
  void finish(std::optional<Result> result, std::optional<ApiError> error);
  std::optional<Result> result;
  std::optional<ApiError> error;

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::string text_;
  bool done_ = false;
};

class Scheduler {
 public:
  // `parallel` > 1 needs a model loaded with LoadOptions::parallel = parallel.
  Scheduler(Model model, Metrics& metrics, size_t max_queue, int64_t parallel = 1);
  ~Scheduler();  // finishes the queue, then stops the worker

  // Queues a job. ApiError 429 (with retry_after()) when max_queue jobs wait; 503 while draining.
  void submit(const std::shared_ptr<Job>& job);
  // Takes no new jobs; returns once every queued and running job has finished.
  void drain();
  // Seconds a client turned away should wait: the queue's expected time, at least 1.
  int retry_after() const;
  // False once the device is lost: nothing can run any more (the process should be restarted).
  bool healthy() const { return healthy_; }

 private:
  void work();
  void work_batched();
  void run(Job& job);
  Session& session(bool thinking);
  // The callback a job's generation streams through (metrics, text, cancellation).
  TokenCallback token_callback(Job& job);
  // Counts a finished generation (`r`) or its failure (`e`), and hands it to the job.
  void finish(Job& job, std::optional<Result> r, std::optional<ApiError> e);

  Model model_;
  Metrics& metrics_;
  size_t max_queue_;
  int64_t parallel_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Job>> queue_;
  size_t running_ = 0;  // jobs generating now
  bool draining_ = false, stopping_ = false;
  double mean_seconds_ = 1;  // of recent requests, for Retry-After
  std::atomic<bool> healthy_{true};
  std::map<bool, Session> sessions_;  // by thinking; used by the worker only
  std::thread worker_;
};

}  // namespace wgx::server
