// wgx::Model: a Hugging Face folder, a .wgx file or a synthetic model, built for an Engine's GPU;
// wgx::convert.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "api/internal.h"
#include "format/layout.h"
#include "models/synthetic.h"
#include "models/wgx_model_file.h"

namespace wgx {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr int64_t kDefaultContext = 4096;

const char* weights_name(models::WeightFormat w) {
  switch (w) {
    case models::WeightFormat::Q4: return "q4";
    case models::WeightFormat::F16: return "f16";
    case models::WeightFormat::F32: return "f32";
  }
  return "?";
}

models::WeightFormat to_models(WeightFormat w) {
  switch (w) {
    case WeightFormat::Q4: return models::WeightFormat::Q4;
    case WeightFormat::F16: return models::WeightFormat::F16;
    case WeightFormat::F32: return models::WeightFormat::F32;
  }
  throw Error(ErrorKind::BadArgument, "unknown weight format");
}

// The models layer's options for `o`, with progress reported as LoadProgress.
models::LoadOptions load_options(const LoadOptions& o, Clock::time_point start) {
  models::LoadOptions m;
  if (o.weights) m.weights = to_models(*o.weights);
  if (o.kv) m.half_kv_cache = *o.kv == KvFormat::F16;
  m.max_seq = o.context.value_or(kDefaultContext);
  if (m.max_seq < 1) throw Error(ErrorKind::BadArgument, "the context must be at least 1 token");
  m.max_prefill = o.max_prefill;
  if (m.max_prefill < 1) throw Error(ErrorKind::BadArgument, "max_prefill must be at least 1 token");
  if (o.parallel < 0 || o.parallel > 4096) {
    throw Error(ErrorKind::BadArgument, "parallel is " + std::to_string(o.parallel) + ": it must be from 0 to 4096");
  }
  if (o.on_progress) {
    m.progress = [fn = o.on_progress, start](const models::ProgressEvent& e) {
      fn({e.stage, e.step, since(start)});
    };
  }
  return m;
}

void report(const LoadOptions& o, Clock::time_point start, const char* stage, const std::string& step = {}) {
  if (o.on_progress) o.on_progress({stage, step, since(start)});
}

// A .wgx file fixes weights, cache and context: options asking for others are refused rather than
// ignored; the same values are accepted.
void check_fixed(const std::string& path, const LoadOptions& asked, const models::WgxModel& file) {
  const models::LoadOptions& o = file.options;
  const auto refuse = [&](const std::string& what) {
    throw Error(ErrorKind::BadArgument,
                path + " holds " + weights_name(o.weights) + " weights, an " + (o.half_kv_cache ? "f16" : "f32") +
                    " KV cache and a context of " + std::to_string(o.max_seq) + ", fixed when it was converted: " +
                    what + " cannot change them (convert the model folder again to get others)");
  };
  if (asked.weights && to_models(*asked.weights) != o.weights) refuse("the weights asked for");
  if (asked.kv && (*asked.kv == KvFormat::F16) != o.half_kv_cache) refuse("the KV cache asked for");
  if (asked.context && std::min(*asked.context, file.model.config.max_position_embeddings) != o.max_seq) {
    refuse("the context asked for");
  }
}

// True for a file (a .wgx, whose reader says what is wrong with it), false for a model folder.
bool check_path(const std::string& path) {
  if (path.empty()) throw Error(ErrorKind::BadArgument, "no model path given (a Hugging Face model folder or a .wgx file)");
  const fs::path p(path);
  if (!fs::exists(p)) throw Error(ErrorKind::InvalidModel, path + ": no such file or folder");
  if (fs::is_regular_file(p)) return true;
  if (!fs::is_directory(p)) throw Error(ErrorKind::InvalidModel, path + ": not a folder or a .wgx file");
  for (const char* file : {"config.json", "tokenizer.json"}) {
    if (!fs::exists(p / file)) {
      throw Error(ErrorKind::InvalidModel,
                  path + ": no " + file +
                      " in it (a Hugging Face model folder holds config.json, tokenizer.json and the *.safetensors "
                      "weights; huggingface-cli download fetches all three)");
    }
  }
  return false;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::InvalidModel, path.string() + ": cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Source {
  std::string path;                  // a folder or .wgx file; empty for a synthetic model
  std::string synthetic;             // a models/synthetic.h name
  uint64_t seed = 1;                 // of the synthetic weights
  bool shared_layers = false;        // of the synthetic weights (a diagnostic)
  bool keep = false;                 // keep the graph and weights (Internals)

  static Source file(const std::string& path, bool keep) {
    Source s;
    s.path = path;
    s.keep = keep;
    return s;
  }
  static Source random(const std::string& name, uint64_t seed, bool shared_layers, bool keep) {
    Source s;
    s.synthetic = name;
    s.seed = seed;
    s.shared_layers = shared_layers;
    s.keep = keep;
    return s;
  }
};

// What `path` holds once built with `options`; `adapter` empty for none.
ModelInfo describe(const std::string& path, const models::ModelConfig& config, const models::LoadOptions& options,
                   const llm::ModelLimits& limits, std::optional<llm::ChatTemplate> chat_template,
                   const std::string& adapter) {
  ModelInfo info;
  info.path = path;
  info.architecture = config.architecture == models::Architecture::Qwen3 ? "qwen3" : "llama";
  info.weights = weights_name(options.weights);
  info.kv_cache = options.half_kv_cache ? "f16" : "f32";
  info.chat_template = chat_template ? llm::chat_template_name(*chat_template) : "";
  info.adapter = adapter;
  info.context = limits.max_seq;
  info.max_prefill = limits.max_prefill;
  info.vocab_size = limits.vocab;
  info.layers = config.num_layers;
  info.eos_ids = config.eos_token_ids;
  info.description = std::string(config.architecture == models::Architecture::Qwen3 ? "Qwen3" : "Llama") + ", " +
                     info.weights + " weights, " + info.kv_cache + " KV cache, context " +
                     std::to_string(info.context) + (adapter.empty() ? "" : ", " + adapter);
  return info;
}

// A .wgx file's model, tokenizer and fixed options into `m` (the mapping stays with `file`).
void take_wgx(Model::Impl& m, models::WgxModel& file, const std::string& name, const LoadOptions& asked,
              models::LoadOptions& options) {
  check_fixed(name, asked, file);
  options = file.options;
  const std::string* config = file.tokenizer_config_json();
  m.tokenizer = tokenizer::Tokenizer::from_json(file.tokenizer_json(),
                                                config ? std::optional<std::string_view>(*config) : std::nullopt, name);
}

// What the model says of itself once its program is built.
void describe_built(Model::Impl& m, const std::string& path, const models::LoadOptions& options,
                    double read_seconds, double build_seconds) {
  m.eos_ids = m.config.eos_token_ids;
  if (m.tokenizer) {
    if (const auto eos = m.tokenizer->special_tokens().eos;
        eos && std::find(m.eos_ids.begin(), m.eos_ids.end(), *eos) == m.eos_ids.end()) {
      m.eos_ids.push_back(*eos);
    }
    m.chat_template = llm::detect_chat_template(*m.tokenizer);
  }
  ModelInfo& info = m.info;
  info = describe(path, m.config, options, m.limits, m.chat_template, m.engine->gpu->adapter().device);
  info.eos_ids = m.eos_ids;
  for (const runtime::Program* p : {m.program.get(), m.rows_program.get()}) {
    if (!p) continue;
    const runtime::MemoryReport& mem = p->memory();
    info.memory.weights += mem.constants;
    info.memory.state += mem.state;
    info.memory.activations += mem.inputs + mem.intermediates + mem.scratch;
    info.memory.total += mem.total();
  }
  if (m.batch_limits) info.parallel = m.batch_limits->slots;
  info.read_seconds = read_seconds;
  info.build_seconds = build_seconds;
  info.kernels = m.program->kernels_compiled();
}

models::ModelConfig synthetic_config_or_error(const std::string& name) {
  const std::optional<models::ModelConfig> config = models::synthetic_config(name);
  if (!config) {
    std::string names;
    for (const std::string& n : models::synthetic_names()) names += (names.empty() ? "" : ", ") + n;
    throw Error(ErrorKind::BadArgument, "no synthetic model '" + name + "': choose one of " + names);
  }
  return *config;
}

// The program of a folder's model whose matrices are still to be made (LoadOptions::
// defer_weights): a thread makes them one after another (each over the host's cores) while this
// one builds the program (its kernels compile meanwhile), then each is written into the program's
// buffers as it is ready and its host copy freed. `then` runs once the program is built, before
// the weights are written (another program sharing its constants compiles meanwhile too);
// `progress` is told (k, n) after the k-th matrix.
std::unique_ptr<runtime::Program> build_while_converting(gpu::Context& gpu, models::BuiltModel& built,
                                                         const runtime::RuntimeOptions& options,
                                                         const std::function<void(const runtime::Program&)>& then,
                                                         const std::function<void(size_t, size_t)>& progress) {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::vector<uint8_t>> ready;
  std::exception_ptr failed;
  std::atomic<bool> stop{false};
  std::vector<models::BuiltModel::LaterConstant>& later = built.later;
  std::thread maker([&] {
    try {
      for (models::BuiltModel::LaterConstant& c : later) {
        if (stop) return;
        std::vector<uint8_t> bytes = c.make();
        c.make = nullptr;  // frees the sources it held
        const std::lock_guard lock(mutex);
        ready.push_back(std::move(bytes));
        changed.notify_one();
      }
    } catch (...) {
      const std::lock_guard lock(mutex);
      failed = std::current_exception();
      changed.notify_one();
    }
  });
  struct Join {  // on every way out, the maker stops after its matrix and is waited for
    std::thread& thread;
    std::atomic<bool>& stop;
    ~Join() {
      stop = true;
      thread.join();
    }
  } join{maker, stop};

  auto program = std::make_unique<runtime::Program>(gpu, built.graph, runtime::Program::LaterWeights{}, options);
  then(*program);
  std::vector<bool> is_later(built.graph.constants.size());
  for (const auto& c : later) is_later.at(c.constant) = true;
  for (size_t c = 0; c < is_later.size(); ++c) {
    if (!is_later[c]) program->write_constant(c, 0, built.weights.bytes(built.graph.constants[c].data));
  }
  for (size_t i = 0; i < later.size(); ++i) {
    std::vector<uint8_t> bytes;
    {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] { return !ready.empty() || failed; });
      if (ready.empty()) std::rethrow_exception(failed);
      bytes = std::move(ready.front());
      ready.pop_front();
    }
    program->write_constant(later[i].constant, 0, bytes);
    progress(i + 1, later.size());
  }
  program->check_constants_written();
  return program;
}

std::shared_ptr<Model::Impl> build(std::shared_ptr<Engine::Impl> engine, const Source& src, const LoadOptions& asked) {
  const auto start = Clock::now();
  auto m = std::make_shared<Model::Impl>();
  m->engine = std::move(engine);
  models::LoadOptions options = load_options(asked, start);
  std::optional<models::BuiltModel> built;
  double read_seconds = 0;
  // A folder's or a synthetic model's matrices are made while the programs build, unless the
  // host's copy is to be kept (a .wgx file holds them made).
  options.defer_weights = !src.keep;
  if (!src.synthetic.empty()) {
    options.share_layer_weights = src.shared_layers;
    built = models::build_decoder(synthetic_config_or_error(src.synthetic), models::synthetic_weights(src.seed), options);
    read_seconds = since(start);
  } else if (check_path(src.path)) {
    report(asked, start, "reading", src.path);
    models::WgxModel file = models::load_wgx(src.path);  // a mapping and the metadata: quick
    take_wgx(*m, file, src.path, asked, options);
    built = std::move(file.model);
    m->file = std::move(file.file);
    read_seconds = since(start);
  } else {
    m->tokenizer = tokenizer::Tokenizer::load(src.path);  // first: its errors are the quick ones
    built = models::load_hf(src.path, options);
    read_seconds = since(start);
  }
  m->config = built->config;
  options.defer_weights = false;
  m->load_options = options;
  m->limits = llm::model_limits(built->graph);
  report(asked, start, "building");
  const auto build_start = Clock::now();
  gpu::Context& gpu = *m->engine->gpu;
  // With a Batch: the rows graph over the same constants, whose buffers it shares.
  const auto add_rows = [&](const runtime::Program& first) {
    if (asked.parallel == 0) return;
    models::BuiltModel rows = models::build_rows_decoder(*built, asked.parallel);
    m->batch_limits = llm::batch_limits(rows.graph);
    m->rows_program =
        std::make_unique<runtime::Program>(gpu, std::move(rows.graph), rows.weights, first, m->engine->options);
  };
  if (!built->later.empty()) {
    m->program = build_while_converting(gpu, *built, m->engine->options, add_rows, [&](size_t k, size_t n) {
      report(asked, start, "building", "matrix " + std::to_string(k) + "/" + std::to_string(n));
    });
  } else {
    if (src.keep || asked.parallel > 0) {
      m->program = std::make_unique<runtime::Program>(gpu, built->graph, built->weights, m->engine->options);
    } else {
      m->program = std::make_unique<runtime::Program>(gpu, std::move(built->graph), built->weights, m->engine->options);
    }
    add_rows(*m->program);
  }
  if (src.keep) {
    m->built = std::move(built);
  } else {
    m->file.reset();  // the programs hold their own copies of the weights now
  }
  describe_built(*m, src.synthetic.empty() ? src.path : "synthetic " + src.synthetic, options, read_seconds,
                 since(build_start));
  m->info.load_seconds = since(start);
  report(asked, start, "done");
  return m;
}

}  // namespace

Model::Model(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;
Model::Model(const Model&) = default;
Model& Model::operator=(const Model&) = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

Model Model::load(const std::string& path, const LoadOptions& options) { return load(Engine(), path, options); }

Model Model::load(const Engine& engine, const std::string& path, const LoadOptions& options) {
  return translated(ErrorKind::InvalidModel, [&] { return Model(build(engine.impl_, Source::file(path, false), options)); });
}

Model Model::synthetic(const Engine& engine, const std::string& name, const LoadOptions& options, uint64_t seed) {
  return translated(ErrorKind::InvalidModel,
                    [&] { return Model(build(engine.impl_, Source::random(name, seed, false, false), options)); });
}

std::vector<std::string> Model::synthetic_names() { return models::synthetic_names(); }

Model Internals::load_kept(const Engine& engine, const std::string& path, const LoadOptions& options) {
  const Source src = Source::file(path, true);
  return translated(ErrorKind::InvalidModel, [&] { return Model(build(engine.impl_, src, options)); });
}

Model Internals::synthetic_kept(const Engine& engine, const std::string& name, const LoadOptions& options,
                                  uint64_t seed, bool shared_layers) {
  const Source src = Source::random(name, seed, shared_layers, true);
  return translated(ErrorKind::InvalidModel, [&] { return Model(build(engine.impl_, src, options)); });
}

Tokenizer Model::tokenizer() const {
  if (!impl_->tokenizer) throw Error(ErrorKind::InvalidModel, impl_->info.path + " has no tokenizer (a synthetic model)");
  return Tokenizer(std::make_shared<const Tokenizer::Impl>(Tokenizer::Impl{*impl_->tokenizer}));
}

ModelInfo Model::info() const { return impl_->info; }

std::string Model::render_chat(const std::vector<Message>& messages, bool thinking) const {
  if (!impl_->chat_template) {
    throw Error(ErrorKind::InvalidModel, impl_->info.path +
                                             ": its tokenizer has neither <|im_start|> (Qwen3) nor <|start_header_id|> "
                                             "(Llama 3): no chat template for it");
  }
  return translated(ErrorKind::BadArgument, [&] {
    std::vector<llm::ChatMessage> m;
    for (const Message& msg : messages) m.push_back({msg.role, msg.content, std::nullopt});
    llm::ChatOptions o;
    o.enable_thinking = thinking;
    return llm::render_chat(*impl_->chat_template, m, o);
  });
}

// ---- ModelStream ------------------------------------------------------------------------------

struct ModelStream::Impl {
  std::shared_ptr<Engine::Impl> engine;
  LoadOptions asked;
  std::string name;
  Clock::time_point start = Clock::now();
  std::vector<uint8_t> head;  // the bytes up to the end of the graph section
  std::optional<format::WgxLayout> layout;
  std::shared_ptr<Model::Impl> model;  // built once the head is in; its weights come after
  double read_seconds = 0, build_seconds = 0;
  uint64_t received = 0;
  // The constants' data in the weight section, by offset (constants may share their data).
  struct Range {
    uint64_t begin, end;
    size_t constant;
  };
  std::vector<Range> ranges;
  size_t next_range = 0;
  // Up to 3 bytes held back so that every piece starts on a 4-byte boundary of the file (queue
  // writes take whole words; each constant starts on a 256-byte boundary).
  std::vector<uint8_t> carry;
  bool ended = false;  // finished, or failed: nothing more can be written

  void build_from_head() {
    read_seconds = since(start);
    models::WgxModel file = models::load_wgx_head(std::span<const uint8_t>(head).first(layout->head_size()), name);
    auto m = std::make_shared<Model::Impl>();
    m->engine = engine;
    models::LoadOptions options;
    take_wgx(*m, file, name, asked, options);
    m->config = file.model.config;
    m->load_options = options;
    m->limits = llm::model_limits(file.model.graph);
    for (size_t c = 0; c < file.model.graph.constants.size(); ++c) {
      const graph::WeightRef& w = file.model.graph.constants[c].data;
      ranges.push_back({w.offset, w.offset + w.bytes, c});
    }
    std::stable_sort(ranges.begin(), ranges.end(), [](const Range& a, const Range& b) { return a.begin < b.begin; });
    report(asked, start, "building");
    const auto build_start = Clock::now();
    m->program = std::make_unique<runtime::Program>(*engine->gpu, std::move(file.model.graph),
                                                    runtime::Program::LaterWeights{}, engine->options);
    build_seconds = since(build_start);
    describe_built(*m, name, options, read_seconds, build_seconds);
    model = std::move(m);
    report(asked, start, "weights");
  }

  // Bytes of the weight section at file offset `at`, a multiple of 4 (or the file's last bytes).
  void place(uint64_t at, std::span<const uint8_t> bytes) {
    const uint64_t begin = at - layout->weights_offset, end = begin + bytes.size();
    while (next_range < ranges.size() && ranges[next_range].end <= begin) ++next_range;
    for (size_t r = next_range; r < ranges.size() && ranges[r].begin < end; ++r) {
      const uint64_t from = std::max(begin, ranges[r].begin), to = std::min(end, ranges[r].end);
      if (from >= to) continue;
      model->program->write_constant(ranges[r].constant, from - ranges[r].begin, bytes.subspan(from - begin, to - from));
    }
  }

  // Bytes of the file after its head, at file offset `at`.
  void weights(uint64_t at, std::span<const uint8_t> bytes) {
    if (at < layout->weights_offset) {  // the padding before the weight section
      const uint64_t skip = std::min<uint64_t>(bytes.size(), layout->weights_offset - at);
      bytes = bytes.subspan(skip);
      at += skip;
      if (bytes.empty()) return;
    }
    // From the weight section on, `at` is a multiple of 4 whenever nothing is carried.
    if (!carry.empty()) {
      const size_t take = std::min(bytes.size(), 4 - carry.size());
      carry.insert(carry.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
      bytes = bytes.subspan(take);
      at += take;
      if (carry.size() < 4) return;
      place(at - 4, carry);
      carry.clear();
    }
    const size_t whole = bytes.size() / 4 * 4;
    if (whole) place(at, bytes.first(whole));
    carry.assign(bytes.begin() + static_cast<std::ptrdiff_t>(whole), bytes.end());
  }

  void too_long() const {
    throw Error(ErrorKind::InvalidModel, name + ": more bytes than the " + std::to_string(layout->file_size) +
                                             " its header says the file has");
  }

  void write(std::span<const uint8_t> bytes) {
    while (!bytes.empty()) {
      if (layout && bytes.size() > layout->file_size - received) too_long();
      if (model) {
        weights(received, bytes);
        received += bytes.size();
        return;
      }
      // The head is gathered, and nothing past it: a file given in one piece is not copied.
      const uint64_t want = (layout ? layout->head_size() : format::kHeaderSize) - head.size();
      const size_t take = static_cast<size_t>(std::min<uint64_t>(want, bytes.size()));
      head.insert(head.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
      bytes = bytes.subspan(take);
      received += take;
      if (!layout && head.size() == format::kHeaderSize) {
        try {
          layout = format::read_wgx_layout(head);
        } catch (const format::FormatError& e) {
          throw format::FormatError(e.site(), e.detail(), name);
        }
      }
      if (layout && head.size() == layout->head_size()) {
        build_from_head();
        std::vector<uint8_t>().swap(head);
      }
    }
  }
};

ModelStream::ModelStream(const Engine& engine, const LoadOptions& options, std::string name)
    : impl_(std::make_unique<Impl>()) {
  if (options.parallel != 0) {
    throw Error(ErrorKind::BadArgument, "a streamed model runs no Batch (LoadOptions::parallel): load the file instead");
  }
  impl_->engine = engine.impl_;
  impl_->asked = options;
  impl_->name = std::move(name);
  report(options, impl_->start, "reading", impl_->name);
}
ModelStream::~ModelStream() = default;
ModelStream::ModelStream(ModelStream&&) noexcept = default;
ModelStream& ModelStream::operator=(ModelStream&&) noexcept = default;

uint64_t ModelStream::size() const { return impl_->layout ? impl_->layout->file_size : 0; }
uint64_t ModelStream::received() const { return impl_->received; }

void ModelStream::write(const void* data, size_t size) {
  Impl& s = *impl_;
  if (s.ended) throw Error(ErrorKind::BadArgument, s.name + ": the stream has ended (finished or failed); start a new one");
  try {
    translated(ErrorKind::InvalidModel, [&] { s.write({static_cast<const uint8_t*>(data), size}); });
  } catch (...) {
    s.ended = true;
    s.model.reset();
    throw;
  }
}

Model ModelStream::finish() {
  Impl& s = *impl_;
  if (s.ended) throw Error(ErrorKind::BadArgument, s.name + ": the stream has ended (finished or failed); start a new one");
  return translated(ErrorKind::InvalidModel, [&] {
    if (!s.layout || s.received < s.layout->file_size) {
      throw Error(ErrorKind::InvalidModel,
                  s.name + ": the file ended after " + std::to_string(s.received) + " bytes" +
                      (s.layout ? " of the " + std::to_string(s.layout->file_size) + " its header says" : "") +
                      " (a download cut short?)");
    }
    if (!s.carry.empty()) s.place(s.received - s.carry.size(), s.carry);
    s.carry.clear();
    s.model->program->check_constants_written();
    s.model->info.load_seconds = since(s.start);
    report(s.asked, s.start, "done");
    s.ended = true;  // ended: the model is handed over
    return Model(std::move(s.model));
  });
}

namespace {
// Writes the model `build(options, tokenizer)` makes to `output`, with the tokenizer of the folder
// `tokenizer_dir`.
template <typename Build>
ModelInfo write_converted(const fs::path& tokenizer_dir, const std::string& output, const LoadOptions& options,
                          Build&& build) {
  const auto start = Clock::now();
  if (output.empty()) throw Error(ErrorKind::BadArgument, "no output file named");
  // The tokenizer first: it is quick to check, and the file must hold one that loads.
  const tokenizer::Tokenizer tok = tokenizer::Tokenizer::load(tokenizer_dir);
  models::TokenizerTexts tokenizer{read_text(tokenizer_dir / "tokenizer.json"), std::nullopt};
  if (const fs::path config = tokenizer_dir / "tokenizer_config.json"; fs::exists(config)) {
    tokenizer.tokenizer_config_json = read_text(config);
  }
  const models::LoadOptions o = load_options(options, start);
  const models::BuiltModel built = build(o, tok);
  report(options, start, "writing", output);
  models::write_model_wgx(output, built, o, tokenizer);
  report(options, start, "done");
  ModelInfo info = describe(output, built.config, o, llm::model_limits(built.graph), llm::detect_chat_template(tok), "");
  info.load_seconds = since(start);
  return info;
}
}  // namespace

ModelInfo convert(const std::string& folder, const std::string& output, const LoadOptions& options) {
  return translated(ErrorKind::InvalidModel, [&] {
    const fs::path dir(folder);
    if (!fs::is_directory(dir)) throw Error(ErrorKind::InvalidModel, folder + " is not a model folder");
    return write_converted(dir, output, options,
                           [&](const models::LoadOptions& o, const tokenizer::Tokenizer&) { return models::load_hf(dir, o); });
  });
}

ModelInfo Internals::convert_synthetic(const std::string& name, const std::string& tokenizer_folder,
                                       const std::string& output, const LoadOptions& options, uint64_t seed) {
  return translated(ErrorKind::InvalidModel, [&] {
    const models::ModelConfig config = synthetic_config_or_error(name);
    if (!fs::is_directory(tokenizer_folder)) {
      throw Error(ErrorKind::BadArgument, tokenizer_folder + " is not a folder with a tokenizer.json");
    }
    return write_converted(tokenizer_folder, output, options,
                           [&](const models::LoadOptions& o, const tokenizer::Tokenizer& tok) {
                             if (tok.vocab_size() > config.vocab_size) {
                               throw Error(ErrorKind::BadArgument,
                                           "the tokenizer of " + tokenizer_folder + " has " +
                                               std::to_string(tok.vocab_size()) + " tokens, more than synthetic " +
                                               name + "'s vocabulary of " + std::to_string(config.vocab_size));
                             }
                             return models::build_decoder(config, models::synthetic_weights(seed), o);
                           });
  });
}

}  // namespace wgx
