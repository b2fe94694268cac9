#include "server/scheduler.h"

#include <algorithm>
#include <cmath>

namespace wgx::server {

std::string Job::take(std::chrono::milliseconds wait, bool* finished) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, wait, [&] { return done_ || !text_.empty(); });
  *finished = done_;
  return std::exchange(text_, {});
}

void Job::wait_done() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return done_; });
}

void Job::append(std::string_view text) {
  {
    std::lock_guard lock(mutex_);
    text_ += text;
  }
  changed_.notify_all();
}

void Job::finish(std::optional<Result> r, std::optional<ApiError> e) {
  {
    std::lock_guard lock(mutex_);
    result = std::move(r);
    error = std::move(e);
    done_ = true;
  }
  changed_.notify_all();
}

Scheduler::Scheduler(Model model, Metrics& metrics, size_t max_queue)
    : model_(std::move(model)), metrics_(metrics), max_queue_(max_queue), worker_([this] { work(); }) {}

Scheduler::~Scheduler() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void Scheduler::submit(const std::shared_ptr<Job>& job) {
  {
    std::lock_guard lock(mutex_);
    if (draining_) throw ApiError(503, "unavailable", "the server is shutting down", "", "server_error");
    if (!healthy_) throw ApiError(503, "unavailable", "the GPU device was lost: the server must be restarted", "", "server_error");
    if (queue_.size() >= max_queue_) {
      throw ApiError(429, "queue_full",
                     "the server's queue is full (" + std::to_string(max_queue_) + " requests wait): try again later",
                     "", "rate_limit_error");
    }
    queue_.push_back(job);
    metrics_.set_queue(static_cast<int64_t>(queue_.size()), running_ ? 1 : 0);
  }
  changed_.notify_all();
}

void Scheduler::drain() {
  std::unique_lock lock(mutex_);
  draining_ = true;
  changed_.wait(lock, [&] { return queue_.empty() && !running_; });
}

int Scheduler::retry_after() const {
  std::lock_guard lock(mutex_);
  const double s = mean_seconds_ * static_cast<double>(queue_.size() + 1);
  return static_cast<int>(std::clamp(std::ceil(s), 1.0, 3600.0));
}

void Scheduler::work() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
      metrics_.set_queue(static_cast<int64_t>(queue_.size()), 1);
    }
    const Clock::time_point start = Clock::now();
    if (job->cancelled) {
      job->finish(std::nullopt, std::nullopt);
      metrics_.request(job->request.endpoint, Outcome::Cancelled);
    } else {
      run(*job);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    {
      std::lock_guard lock(mutex_);
      running_ = false;
      mean_seconds_ = 0.8 * mean_seconds_ + 0.2 * seconds;
      metrics_.set_queue(static_cast<int64_t>(queue_.size()), 0);
    }
    changed_.notify_all();
  }
}

Session& Scheduler::session(bool thinking) {
  auto it = sessions_.find(thinking);
  if (it == sessions_.end()) {
    SessionOptions o;
    o.thinking = thinking;
    it = sessions_.emplace(thinking, model_.session(o)).first;
  }
  return it->second;
}

namespace {

ApiError api_error(const Error& e) {
  switch (e.kind()) {
    case ErrorKind::ContextFull: return ApiError(400, "context_length_exceeded", e.what());
    case ErrorKind::BadArgument: return ApiError(400, "invalid_value", e.what());
    case ErrorKind::OutOfMemory: return ApiError(500, "out_of_memory", e.what(), "", "server_error");
    case ErrorKind::DeviceLost: return ApiError(500, "device_lost", e.what(), "", "server_error");
    default: return ApiError(500, "internal_error", e.what(), "", "server_error");
  }
}

}  // namespace

void Scheduler::run(Job& job) {
  const CompletionRequest& req = job.request;
  GenerateOptions o;
  o.sampling = req.sampling;
  o.stop = req.stop;
  o.ignore_eos = req.ignore_eos;
  Clock::time_point last{};
  const TokenCallback on_token = [&](std::string_view text, int32_t) {
    const Clock::time_point now = Clock::now();
    if (last == Clock::time_point{}) {
      metrics_.first_token(std::chrono::duration<double>(now - job.arrived).count());
    } else {
      metrics_.inter_token(std::chrono::duration<double>(now - last).count());
    }
    last = now;
    if (!text.empty()) job.append(text);
    return !job.cancelled.load(std::memory_order_relaxed);
  };
  try {
    Result r;
    const int64_t context = model_.info().context;
    if (req.endpoint == Endpoint::Chat) {
      o.max_tokens = req.max_tokens.value_or(context);  // chat lowers it to what is left
      r = session(req.thinking).chat(req.messages, o, on_token);
    } else {
      // The prompt replaces the session's tokens; the prefix they share stays in the cache.
      Session& s = session(true);
      const std::vector<int32_t> before = s.tokens();
      const std::vector<int32_t>& ids = job.prompt_ids;
      size_t keep = 0;
      while (keep < before.size() && keep + 1 < ids.size() && before[keep] == ids[keep]) ++keep;
      s.truncate(static_cast<int64_t>(keep));
      const int64_t room = context - static_cast<int64_t>(ids.size());
      o.max_tokens = std::min(req.max_tokens.value_or(room), room);
      r = s.generate(std::span<const int32_t>(ids).subspan(keep), o, on_token);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - job.arrived).count();
    metrics_.tokens(r.stats.prompt_tokens + r.stats.cached_tokens, r.stats.cached_tokens,
                    static_cast<int64_t>(r.tokens.size()));
    metrics_.duration(seconds);
    metrics_.request(req.endpoint, job.cancelled ? Outcome::Cancelled : Outcome::Ok);
    job.finish(std::move(r), std::nullopt);
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::DeviceLost) healthy_ = false;
    metrics_.request(req.endpoint, Outcome::Error);
    job.finish(std::nullopt, api_error(e));
  } catch (const std::exception& e) {
    metrics_.request(req.endpoint, Outcome::Error);
    job.finish(std::nullopt, ApiError(500, "internal_error", e.what(), "", "server_error"));
  }
}

}  // namespace wgx::server
