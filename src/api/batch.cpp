// wgx::Batch: continuous batching over the model's rows program (llm::Batch), holding the model's
// mutex while a step runs (sessions of the model take turns with it).
#include "api/internal.h"

namespace wgx {

struct Batch::Impl {
  std::shared_ptr<Model::Impl> model;
  std::unique_ptr<llm::Batch> batch;
  std::map<uint64_t, uint64_t> seeds;  // by sequence
  std::map<uint64_t, std::exception_ptr> thrown;  // by a sequence's callback: rethrown from step()
};

Batch::Batch(const Model& model) : impl_(std::make_unique<Impl>()) {
  Model::Impl& m = *model.impl_;
  if (!m.rows_program) {
    throw Error(ErrorKind::BadArgument, m.info.path + " was loaded without batching: load it with LoadOptions::parallel > 0");
  }
  std::lock_guard lock(m.mutex);
  if (m.batch_owner) throw Error(ErrorKind::BadArgument, "the model has a Batch already: one at a time");
  impl_->model = model.impl_;
  impl_->batch = std::make_unique<llm::Batch>(*m.rows_program, m.tokenizer, *m.batch_limits);
  m.batch_owner = impl_.get();
}

llm::Batch& Internals::batch(Batch& b) { return *b.impl_->batch; }

std::vector<double> Model::log_probs(std::span<const int32_t> tokens) const {
  Model::Impl& m = *impl_;
  if (!m.rows_program) {
    throw Error(ErrorKind::BadArgument,
                m.info.path + " was loaded without batching: load it with LoadOptions::parallel > 0 to score text");
  }
  std::lock_guard lock(m.mutex);
  if (m.batch_owner) throw Error(ErrorKind::BadArgument, "a Batch runs on the model: score text once it is gone");
  return translated(ErrorKind::BadArgument, [&] {
    try {
      return llm::log_probs(*m.rows_program, *m.batch_limits, tokens);
    } catch (const llm::ContextFullError& e) {
      throw Error(ErrorKind::ContextFull, e.what());
    }
  });
}

Batch::~Batch() {
  if (!impl_) return;
  std::lock_guard lock(impl_->model->mutex);
  impl_->model->batch_owner = nullptr;
}

Batch::Batch(Batch&&) noexcept = default;
Batch& Batch::operator=(Batch&& other) noexcept {
  if (this != &other) {
    Batch old(std::move(*this));
    impl_ = std::move(other.impl_);
  }
  return *this;
}

namespace {

// The callback the generator calls: the caller's, with what it throws kept for step() under the
// sequence's id (known once added: `id` is filled then).
llm::TokenCallback wrap(Batch::Impl& b, std::shared_ptr<uint64_t> id, TokenCallback on_token) {
  if (!on_token) return {};
  return [&b, id = std::move(id), on_token = std::move(on_token)](int32_t token, std::string_view text) {
    try {
      return on_token(text, token);
    } catch (...) {
      b.thrown[*id] = std::current_exception();
      return false;
    }
  };
}

uint64_t start(Batch::Impl& b, std::vector<int32_t> ids, const llm::GenerationOptions& g, TokenCallback on_token,
               uint64_t seed) {
  auto cell = std::make_shared<uint64_t>(0);
  llm::TokenCallback cb = wrap(b, cell, std::move(on_token));
  std::lock_guard lock(b.model->mutex);
  *cell = translated(ErrorKind::BadArgument, [&] {
    try {
      return b.batch->add(std::move(ids), g, std::move(cb));
    } catch (const llm::ContextFullError& e) {
      throw Error(ErrorKind::ContextFull, e.what());
    }
  });
  b.seeds[*cell] = seed;
  return *cell;
}

}  // namespace

uint64_t Batch::add(std::span<const int32_t> prompt, const GenerateOptions& options, TokenCallback on_token) {
  const uint64_t seed = seed_of(options);
  const llm::GenerationOptions g =
      translated(ErrorKind::BadArgument, [&] { return generation_options(options, *impl_->model, seed); });
  return start(*impl_, std::vector<int32_t>(prompt.begin(), prompt.end()), g, std::move(on_token), seed);
}

uint64_t Batch::add_chat(const std::vector<Message>& messages, const GenerateOptions& options, TokenCallback on_token,
                         bool thinking) {
  const uint64_t seed = seed_of(options);
  ChatPrompt p = chat_prompt(*impl_->model, messages, thinking, options, seed);
  return start(*impl_, std::move(p.ids), p.options, std::move(on_token), seed);
}

void Batch::cancel(uint64_t id) {
  std::lock_guard lock(impl_->model->mutex);
  impl_->batch->cancel(id);
}

std::vector<Batch::Finished> Batch::step() {
  Impl& b = *impl_;
  std::vector<llm::Batch::Finished> done;
  {
    std::lock_guard lock(b.model->mutex);
    // A session's turn may have used the device meanwhile; the batch's caches are its own.
    done = translated(ErrorKind::Internal, [&] { return b.batch->step(); });
  }
  std::vector<Finished> out;
  for (llm::Batch::Finished& f : done) {
    Finished r;
    r.id = f.id;
    r.result.text = std::move(f.result.text);
    r.result.tokens = std::move(f.result.tokens);
    r.result.stop = stop_reason(f.result.stop);
    r.result.stats = stats_of(f.result.stats);
    r.result.seed = b.seeds[f.id];
    b.seeds.erase(f.id);
    out.push_back(std::move(r));
  }
  for (const Finished& f : out) {
    if (const auto it = b.thrown.find(f.id); it != b.thrown.end()) {
      const std::exception_ptr e = it->second;
      b.thrown.erase(it);
      std::rethrow_exception(e);
    }
  }
  return out;
}

size_t Batch::running() const { return impl_->batch->running(); }
size_t Batch::free_slots() const { return impl_->batch->free_slots(); }

}  // namespace wgx
