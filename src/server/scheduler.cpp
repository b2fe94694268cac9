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

Scheduler::Scheduler(Model model, Metrics& metrics, size_t max_queue, int64_t parallel)
    : model_(std::move(model)), metrics_(metrics), max_queue_(max_queue), parallel_(parallel),
      worker_([this] { parallel_ > 1 ? work_batched() : work(); }) {}

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
    metrics_.set_queue(static_cast<int64_t>(queue_.size()), static_cast<int64_t>(running_));
  }
  changed_.notify_all();
}

void Scheduler::drain() {
  std::unique_lock lock(mutex_);
  draining_ = true;
  changed_.wait(lock, [&] { return queue_.empty() && running_ == 0; });
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
      running_ = 1;
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
      running_ = 0;
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

TokenCallback Scheduler::token_callback(Job& job) {
  return [this, &job](std::string_view text, int32_t) {
    const Clock::time_point now = Clock::now();
    if (job.last_token == Clock::time_point{}) {
      metrics_.first_token(std::chrono::duration<double>(now - job.arrived).count());
    } else {
      metrics_.inter_token(std::chrono::duration<double>(now - job.last_token).count());
    }
    job.last_token = now;
    if (!text.empty()) job.append(text);
    return !job.cancelled.load(std::memory_order_relaxed);
  };
}

void Scheduler::finish(Job& job, std::optional<Result> r, std::optional<ApiError> e) {
  if (r) {
    metrics_.tokens(r->stats.prompt_tokens + r->stats.cached_tokens, r->stats.cached_tokens,
                    static_cast<int64_t>(r->tokens.size()));
    metrics_.duration(std::chrono::duration<double>(Clock::now() - job.arrived).count());
    metrics_.request(job.request.endpoint, job.cancelled ? Outcome::Cancelled : Outcome::Ok);
  } else {
    metrics_.request(job.request.endpoint, e ? Outcome::Error : Outcome::Cancelled);
  }
  job.finish(std::move(r), std::move(e));
}

namespace {

// The API's failure as the client's error; a lost device also makes the server unhealthy.
ApiError failure(std::atomic<bool>& healthy) {
  try {
    throw;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::DeviceLost) healthy = false;
    return api_error(e);
  } catch (const std::exception& e) {
    return ApiError(500, "internal_error", e.what(), "", "server_error");
  }
}

GenerateOptions generate_options(const CompletionRequest& req) {
  GenerateOptions o;
  o.sampling = req.sampling;
  o.stop = req.stop;
  o.ignore_eos = req.ignore_eos;
  return o;
}

}  // namespace

void Scheduler::run(Job& job) {
  const CompletionRequest& req = job.request;
  GenerateOptions o = generate_options(req);
  const TokenCallback on_token = token_callback(job);
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
    finish(job, std::move(r), std::nullopt);
  } catch (...) {
    finish(job, std::nullopt, failure(healthy_));
  }
}

void Scheduler::work_batched() {
  std::optional<Batch> batch(std::in_place, model_);
  const int64_t context = model_.info().context;
  std::map<uint64_t, std::shared_ptr<Job>> running;  // by sequence
  for (;;) {
    // Requests join while slots are free; the worker sleeps only when nothing runs.
    std::vector<std::shared_ptr<Job>> joining;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty() || !running.empty(); });
      if (stopping_ && queue_.empty() && running.empty()) return;
      while (!queue_.empty() && joining.size() < batch->free_slots()) {
        joining.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      running_ = running.size() + joining.size();
      metrics_.set_queue(static_cast<int64_t>(queue_.size()), static_cast<int64_t>(running_));
    }
    for (const std::shared_ptr<Job>& job : joining) {
      if (job->cancelled) {
        finish(*job, std::nullopt, std::nullopt);
        continue;
      }
      const CompletionRequest& req = job->request;
      GenerateOptions o = generate_options(req);
      try {
        uint64_t id = 0;
        if (req.endpoint == Endpoint::Chat) {
          o.max_tokens = req.max_tokens.value_or(context);  // lowered to what is left
          id = batch->add_chat(req.messages, o, token_callback(*job), req.thinking);
        } else {
          const int64_t room = context - static_cast<int64_t>(job->prompt_ids.size());
          o.max_tokens = std::min(req.max_tokens.value_or(room), room);
          id = batch->add(job->prompt_ids, o, token_callback(*job));
        }
        running[id] = job;
      } catch (...) {
        finish(*job, std::nullopt, failure(healthy_));
      }
    }
    for (const auto& [id, job] : running) {
      if (job->cancelled) batch->cancel(id);
    }
    std::vector<Batch::Finished> done;
    try {
      done = batch->step();
    } catch (...) {
      // A failed step fails every running request; the batch starts over empty.
      const ApiError e = failure(healthy_);
      for (const auto& [id, job] : running) finish(*job, std::nullopt, e);
      running.clear();
      batch.reset();
      batch.emplace(model_);
    }
    for (Batch::Finished& f : done) {
      const auto it = running.find(f.id);
      if (it == running.end()) continue;
      finish(*it->second, std::move(f.result), std::nullopt);
      running.erase(it);
    }
    {
      std::lock_guard lock(mutex_);
      running_ = running.size();
      metrics_.set_queue(static_cast<int64_t>(queue_.size()), static_cast<int64_t>(running_));
    }
    changed_.notify_all();
  }
}

}  // namespace wgx::server
