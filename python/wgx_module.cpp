// The native part of the `wgx` Python package (wgx._wgx): pybind11 bindings over the public C++
// API, linked to the shared libwgx as any other application is. docs/python.md describes the
// Python API; python/wgx/_wgx.pyi has its signatures.
//
// Threads and the GIL: a generation runs Session::generate or Session::chat on a thread of its
// own that never touches Python; its callback queues the text pieces, which the Python thread
// takes with the GIL released while it waits. Every call that may wait for the GPU or for the
// model (loading, a session's creation, reset) releases the GIL too. No C++ lock is ever held
// while the GIL is being acquired, so the two cannot deadlock.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <wgx/wgx.hpp>

namespace py = pybind11;

namespace {

// ---- Errors ---------------------------------------------------------------------------------------

// wgx.Error and one subclass per wgx::ErrorKind, made when the module loads; the module holds them
// for the life of the process, so plain pointers do here.
struct ErrorClass {
  wgx::ErrorKind kind;
  const char* name;
  PyObject* extra_base;  // a builtin exception the class also derives from, or null
  const char* doc;
  PyObject* type = nullptr;
};

PyObject* g_error_base = nullptr;
std::array<ErrorClass, 7> g_errors = {{
    {wgx::ErrorKind::BadArgument, "BadArgumentError", nullptr,
     "A bad value or option passed to wgx: fix the call. Also a ValueError."},
    {wgx::ErrorKind::InvalidModel, "InvalidModelError", nullptr,
     "A model file or folder that cannot be used: missing, malformed or unsupported."},
    {wgx::ErrorKind::ContextFull, "ContextFullError", nullptr,
     "The conversation, the prompt and the tokens asked for do not fit the model's context."},
    {wgx::ErrorKind::OutOfMemory, "OutOfMemoryError", nullptr,
     "The GPU (or the host) could not allocate: a smaller context or weight format may fit. Also a MemoryError."},
    {wgx::ErrorKind::DeviceLost, "DeviceLostError", nullptr,
     "The GPU device is gone: load the model again with a new Engine."},
    {wgx::ErrorKind::NoAdapter, "NoAdapterError", nullptr, "No usable GPU adapter (or SwiftShader) was found."},
    {wgx::ErrorKind::Internal, "InternalError", nullptr,
     "A bug in wgx or the WebGPU implementation; the message has the details."},
}};

py::str utf8(std::string_view text) {
  // The API's text is UTF-8; a message quoting a path or a file's bytes might not be.
  PyObject* s = PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace");
  if (!s) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(s);
}

void set_python_error(const wgx::Error& e) {
  for (const ErrorClass& c : g_errors) {
    if (c.kind == e.kind()) {
      PyErr_SetObject(c.type, utf8(e.what()).ptr());
      return;
    }
  }
  PyErr_SetObject(g_error_base, utf8(e.what()).ptr());
}

void make_error_classes(py::module_& m) {
  g_errors[0].extra_base = PyExc_ValueError;
  g_errors[3].extra_base = PyExc_MemoryError;
  g_error_base = PyErr_NewExceptionWithDoc(
      "wgx.Error", "Every failure of wgx: the subclass says what happened, the message what to do.", nullptr, nullptr);
  if (!g_error_base) throw py::error_already_set();
  m.attr("Error") = py::reinterpret_borrow<py::object>(g_error_base);
  for (ErrorClass& c : g_errors) {
    py::tuple bases = c.extra_base ? py::make_tuple(py::handle(g_error_base), py::handle(c.extra_base))
                                   : py::make_tuple(py::handle(g_error_base));
    const std::string name = std::string("wgx.") + c.name;
    c.type = PyErr_NewExceptionWithDoc(name.c_str(), c.doc, bases.ptr(), nullptr);
    if (!c.type) throw py::error_already_set();
    py::handle(c.type).attr("kind") = py::str(wgx::to_string(c.kind));
    m.attr(c.name) = py::reinterpret_borrow<py::object>(c.type);
  }
}

[[noreturn]] void bad_argument(const std::string& message) { throw wgx::Error(wgx::ErrorKind::BadArgument, message); }

// ---- Load options ---------------------------------------------------------------------------------

wgx::WeightFormat weight_format(const std::string& name) {
  if (name == "q4") return wgx::WeightFormat::Q4;
  if (name == "f16") return wgx::WeightFormat::F16;
  if (name == "f32") return wgx::WeightFormat::F32;
  bad_argument("weights must be \"q4\", \"f16\" or \"f32\", not \"" + name + "\"");
}

wgx::KvFormat kv_format(const std::string& name) {
  if (name == "f16") return wgx::KvFormat::F16;
  if (name == "f32") return wgx::KvFormat::F32;
  bad_argument("kv must be \"f16\" or \"f32\", not \"" + name + "\"");
}

wgx::LoadOptions load_options(const std::optional<std::string>& weights, const std::optional<std::string>& kv,
                              std::optional<int64_t> context, int64_t max_prefill) {
  wgx::LoadOptions o;
  if (weights) o.weights = weight_format(*weights);
  if (kv) o.kv = kv_format(*kv);
  o.context = context;
  o.max_prefill = max_prefill;
  return o;
}

// Runs `load` (a model load or a conversion) with the GIL released, calling `on_progress` (a Python
// callable or None) with the GIL held as the load goes on. An exception that the callable raises
// ends the load and propagates as itself; so does Ctrl-C.
template <typename T, typename Options, typename Load>
T with_progress(Options& options, const py::object& on_progress, const Load& load) {
  // The model keeps a copy of the callback after the load: the state it points at outlives the
  // call, and the callback does nothing once the call has returned.
  struct State {
    PyObject* callable = nullptr;  // borrowed from `on_progress` while the call runs
    bool active = true;
    std::exception_ptr raised;
  };
  auto state = std::make_shared<State>();
  state->callable = on_progress.is_none() ? nullptr : on_progress.ptr();
  options.on_progress = [state](const wgx::LoadProgress& p) {
    if (!state->active) return;
    py::gil_scoped_acquire gil;
    try {
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (state->callable) py::handle(state->callable)(p);
    } catch (...) {
      state->raised = std::current_exception();
      state->active = false;
      throw std::runtime_error("the load was interrupted by its progress callback");
    }
  };
  std::optional<T> out;
  try {
    py::gil_scoped_release nogil;
    out.emplace(load(options));
  } catch (...) {
    state->active = false;
    if (state->raised) std::rethrow_exception(std::exchange(state->raised, nullptr));
    throw;
  }
  state->active = false;
  if (state->raised) std::rethrow_exception(std::exchange(state->raised, nullptr));
  return std::move(*out);
}

// ---- Speech -----------------------------------------------------------------------------------------

wgx::TranscribeOptions transcribe_options(const std::optional<std::string>& language, const std::string& task,
                                          bool timestamps, int64_t max_new_tokens, int64_t beams) {
  if (task != "transcribe" && task != "translate") {
    bad_argument("task must be \"transcribe\" or \"translate\", not \"" + task + "\"");
  }
  if (max_new_tokens < 0) bad_argument("max_new_tokens must be >= 0 (0: the model's default)");
  wgx::TranscribeOptions o;
  o.language = language.value_or("");
  o.translate = task == "translate";
  o.timestamps = timestamps;
  o.max_new_tokens = max_new_tokens;
  o.beams = beams;
  return o;
}

// 16 kHz mono samples from a float32 buffer (a numpy array, array.array("f")) or any sequence of
// numbers, copied.
std::vector<float> float_samples(const py::object& samples) {
  if (py::isinstance<py::buffer>(samples) && !py::isinstance<py::bytes>(samples)) {
    const py::buffer_info b = py::reinterpret_borrow<py::buffer>(samples).request();
    if (b.format == py::format_descriptor<float>::format() && b.ndim == 1 &&
        (b.shape[0] <= 1 || b.strides[0] == static_cast<py::ssize_t>(sizeof(float)))) {
      const auto* p = static_cast<const float*>(b.ptr);
      return std::vector<float>(p, p + b.shape[0]);
    }
  }
  if (!py::isinstance<py::iterable>(samples) || py::isinstance<py::str>(samples) || py::isinstance<py::bytes>(samples)) {
    throw py::type_error("samples must be a 1-D float32 buffer or a sequence of numbers (mono, 16 kHz, in [-1, 1]); "
                         "for a file's bytes use transcribe_bytes");
  }
  std::vector<float> v;
  for (const py::handle& x : samples) v.push_back(x.cast<float>());
  return v;
}

// ---- Sessions and generations ----------------------------------------------------------------------

class Generation;

// A session as Python holds it: its generations keep it alive while they run.
struct SessionBox {
  explicit SessionBox(wgx::Session s) : session(std::move(s)) {}
  wgx::Session session;
  std::mutex busy;                    // held by whoever uses `session`: a generation's thread, reset()
  std::weak_ptr<Generation> current;  // the latest generation; read and written with the GIL held
};

using Body = std::function<wgx::Result(wgx::Session&, const wgx::TokenCallback&)>;

// One generate() or chat() running on a thread of its own, its text pieces queued as they come.
class Generation {
 public:
  Generation(std::shared_ptr<SessionBox> session, Body body) : session_(std::move(session)) {
    worker_ = std::thread([this, body = std::move(body)] { run(body); });
  }

  // Python drops the object: the generation is cancelled and its thread joined (with the GIL held:
  // the thread never needs it, and a cancelled generation ends at its next token).
  ~Generation() {
    request_cancel();
    std::call_once(joined_, [this] { worker_.join(); });
  }

  Generation(const Generation&) = delete;
  Generation& operator=(const Generation&) = delete;

  // The next piece of text, or none at the end; a failure of the generation is thrown here.
  std::optional<std::string> next() {
    for (;;) {
      {
        std::lock_guard lock(mutex_);
        if (closed_) return std::nullopt;
        if (!pending_.empty()) {
          std::string piece = std::move(pending_.front());
          pending_.pop_front();
          return piece;
        }
        if (finished_) break;
      }
      wait_for_change();
    }
    join();
    if (error_) std::rethrow_exception(error_);
    return std::nullopt;
  }

  // Runs the generation to its end and returns its result (or throws its failure).
  const wgx::Result& result() {
    for (;;) {
      {
        std::lock_guard lock(mutex_);
        if (finished_) break;
      }
      wait_for_change();
    }
    join();
    if (error_) std::rethrow_exception(error_);
    return *result_;
  }

  // Asks the generation to end at its next token; returns at once. Any thread.
  void request_cancel() {
    cancel_ = true;
    std::lock_guard lock(mutex_);
    // While it runs it is its session's only generation: the session's cancel reaches this one.
    if (!finished_) session_->session.cancel();
  }

  // Cancels the generation, waits for its thread and drops the pieces not taken yet.
  void close() {
    request_cancel();
    join();
    std::lock_guard lock(mutex_);
    pending_.clear();
    closed_ = true;
  }

  // Cancels the generation and waits for its thread, keeping what it made.
  void cancel_and_wait() {
    request_cancel();
    join();
  }

  bool running() {
    std::lock_guard lock(mutex_);
    return !finished_;
  }

  std::string describe() {
    size_t waiting = 0;
    std::optional<wgx::Result> result;
    {
      std::lock_guard lock(mutex_);
      if (!finished_) {
        waiting = pending_.size();
      } else if (!error_) {
        result = result_;
      } else {
        return "<wgx.Generation failed>";
      }
    }
    if (!result) return "<wgx.Generation running, " + std::to_string(waiting) + " pieces waiting>";
    std::string text = result->text;
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    return "<wgx.Generation " + std::to_string(result->tokens.size()) + " tokens, stop: " + wgx::to_string(result->stop) +
           ", text: " + py::repr(utf8(text)).cast<std::string>() + ">";
  }

 private:
  void run(const Body& body) {
    std::optional<wgx::Result> result;
    std::exception_ptr error;
    try {
      std::lock_guard busy(session_->busy);
      result = body(session_->session, [this](std::string_view text, int32_t) {
        if (!text.empty()) {
          {
            std::lock_guard lock(mutex_);
            pending_.emplace_back(text);
          }
          changed_.notify_all();
        }
        return !cancel_.load(std::memory_order_relaxed);
      });
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      result_ = std::move(result);
      error_ = error;
      finished_ = true;
    }
    changed_.notify_all();
  }

  // Waits a while for a piece or the end with the GIL released. Ctrl-C (a signal Python has seen
  // since) ends the generation, as close() does, and raises KeyboardInterrupt.
  void wait_for_change() {
    bool changed = false;
    {
      py::gil_scoped_release nogil;
      std::unique_lock lock(mutex_);
      changed = changed_.wait_for(lock, std::chrono::milliseconds(50),
                                  [this] { return closed_ || !pending_.empty() || finished_; });
    }
    if (!changed && PyErr_CheckSignals() != 0) {
      py::error_already_set interrupted;  // takes the error out of the interpreter for now
      close();
      throw interrupted;
    }
  }

  void join() {
    py::gil_scoped_release nogil;
    std::call_once(joined_, [this] { worker_.join(); });
  }

  std::shared_ptr<SessionBox> session_;
  std::atomic<bool> cancel_{false};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string> pending_;  // pieces not taken yet
  bool finished_ = false;            // the thread's call has returned
  bool closed_ = false;
  std::optional<wgx::Result> result_;
  std::exception_ptr error_;
  std::once_flag joined_;
  std::thread worker_;  // last: started once everything above is ready
};

// Every generation alive, for the interpreter's exit: none may still run when it tears down.
std::mutex g_live_mutex;
std::vector<std::weak_ptr<Generation>> g_live;

void track(const std::shared_ptr<Generation>& g) {
  std::lock_guard lock(g_live_mutex);
  std::erase_if(g_live, [](const std::weak_ptr<Generation>& w) { return w.expired(); });
  g_live.push_back(g);
}

void end_all_generations() {
  std::vector<std::shared_ptr<Generation>> live;
  {
    std::lock_guard lock(g_live_mutex);
    for (const std::weak_ptr<Generation>& w : g_live) {
      if (std::shared_ptr<Generation> g = w.lock()) live.push_back(std::move(g));
    }
    g_live.clear();
  }
  for (const std::shared_ptr<Generation>& g : live) g->cancel_and_wait();
}

// A session runs one generation at a time: a new one, or reset(), cancels the one still running.
void end_current(SessionBox& box) {
  if (std::shared_ptr<Generation> g = box.current.lock()) g->cancel_and_wait();
}

// Reading a session's state while its generation runs is refused: the generation is changing it.
void require_idle(SessionBox& box) {
  if (std::shared_ptr<Generation> g = box.current.lock(); g && g->running()) {
    throw std::runtime_error(
        "the session is generating: iterate its generation to the end (or read its text), or close() it, first");
  }
}

std::shared_ptr<Generation> start(const std::shared_ptr<SessionBox>& box, Body body) {
  end_current(*box);
  auto g = std::make_shared<Generation>(box, std::move(body));
  box->current = g;
  track(g);
  return g;
}

// ---- Generation settings ---------------------------------------------------------------------------

std::vector<std::string> stop_strings(const py::object& stop) {
  std::vector<std::string> out;
  if (stop.is_none()) return out;
  if (py::isinstance<py::str>(stop)) {
    out.push_back(stop.cast<std::string>());
    return out;
  }
  if (!py::isinstance<py::iterable>(stop)) throw py::type_error("stop must be a str or a list of str");
  for (py::handle s : stop) {
    if (!py::isinstance<py::str>(s)) throw py::type_error("stop must be a str or a list of str");
    out.push_back(s.cast<std::string>());
  }
  return out;
}

std::vector<int32_t> token_ids(const py::handle& ids, const char* what) {
  try {
    return ids.cast<std::vector<int32_t>>();
  } catch (const py::cast_error&) {
    throw py::type_error(std::string(what) + " must be a sequence of int token ids (each fitting 32 bits)");
  }
}

struct Settings {
  int64_t max_tokens;
  double temperature;
  int32_t top_k;
  double top_p;
  double min_p;
  double repetition_penalty;
  std::optional<uint64_t> seed;
  py::object stop;
  bool ignore_eos;
  bool skip_special;
  bool add_special_tokens;
  int64_t in_flight;
  int64_t steps_per_submit;
  bool host_sampling;

  wgx::GenerateOptions options() const {
    wgx::GenerateOptions o;
    o.max_tokens = max_tokens;
    o.sampling.temperature = static_cast<float>(temperature);
    o.sampling.top_k = top_k;
    o.sampling.top_p = static_cast<float>(top_p);
    o.sampling.min_p = static_cast<float>(min_p);
    o.sampling.repetition_penalty = static_cast<float>(repetition_penalty);
    o.sampling.seed = seed;
    o.stop = stop_strings(stop);
    o.ignore_eos = ignore_eos;
    o.skip_special = skip_special;
    o.add_special_tokens = add_special_tokens;
    o.in_flight = in_flight;
    o.steps_per_submit = steps_per_submit;
    o.host_sampling = host_sampling;
    return o;
  }
};

// A float default as Python shows it: 0.8, not the float's 0.800000011920929.
double shown(float v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", static_cast<double>(v));
  return std::stod(text);
}

// A method taking the prompt (or message) and then the settings' keyword arguments, with the C++
// API's defaults: `f(box, first, options)` runs it.
template <typename Class, typename F>
void def_generating(Class& cls, const char* name, const char* first, F f, const char* doc) {
  using Holder = typename Class::holder_type;
  auto method = [f](const Holder& box, const py::object& arg, int64_t max_tokens, double temperature, int32_t top_k,
                    double top_p, double min_p, double repetition_penalty, std::optional<uint64_t> seed,
                    const py::object& stop, bool ignore_eos, bool skip_special, bool add_special_tokens,
                    int64_t in_flight, int64_t steps_per_submit, bool host_sampling) {
    return f(box, arg,
             Settings{max_tokens, temperature, top_k, top_p, min_p, repetition_penalty, seed, stop, ignore_eos,
                      skip_special, add_special_tokens, in_flight, steps_per_submit, host_sampling}
                 .options());
  };
  const wgx::GenerateOptions d;
  cls.def(name, method, doc, py::arg(first), py::kw_only(), py::arg("max_tokens") = d.max_tokens,
          py::arg("temperature") = shown(d.sampling.temperature), py::arg("top_k") = d.sampling.top_k,
          py::arg("top_p") = shown(d.sampling.top_p), py::arg("min_p") = shown(d.sampling.min_p),
          py::arg("repetition_penalty") = shown(d.sampling.repetition_penalty), py::arg("seed") = py::none(),
          py::arg("stop") = py::none(), py::arg("ignore_eos") = d.ignore_eos, py::arg("skip_special") = d.skip_special,
          py::arg("add_special_tokens") = d.add_special_tokens, py::arg("in_flight") = d.in_flight,
          py::arg("steps_per_submit") = d.steps_per_submit, py::arg("host_sampling") = d.host_sampling);
}

std::vector<wgx::Message> messages_of(const py::handle& list) {
  if (!py::isinstance<py::iterable>(list) || py::isinstance<py::bytes>(list)) {
    throw py::type_error("a chat message is a str, or a conversation a list of {\"role\": ..., \"content\": ...} dicts");
  }
  const py::object mapping = py::module_::import("collections.abc").attr("Mapping");
  std::vector<wgx::Message> out;
  for (py::handle item : list) {
    const std::string at = "messages[" + std::to_string(out.size()) + "]";
    if (!py::isinstance<py::dict>(item) && !py::isinstance(item, mapping)) {
      throw py::type_error(at + " is not a dict with \"role\" and \"content\"");
    }
    wgx::Message m;
    for (const auto& [key, field] : {std::pair{"role", &m.role}, std::pair{"content", &m.content}}) {
      if (!item.attr("__contains__")(key).cast<bool>()) bad_argument(at + " has no \"" + key + "\"");
      py::object value = item[key];
      if (!py::isinstance<py::str>(value)) throw py::type_error(at + "[\"" + key + "\"] must be a str");
      *field = value.cast<std::string>();
    }
    out.push_back(std::move(m));
  }
  return out;
}

py::list history_of(const std::vector<wgx::Message>& messages) {
  py::list out;
  for (const wgx::Message& m : messages) {
    py::dict d;
    d["role"] = utf8(m.role);
    d["content"] = utf8(m.content);
    out.append(d);
  }
  return out;
}

// ---- Reprs -------------------------------------------------------------------------------------------

std::string quoted(const std::string& s) { return py::repr(utf8(s)).cast<std::string>(); }

}  // namespace

PYBIND11_MODULE(_wgx, m) {
  m.doc() = "The native part of the wgx package: run Hugging Face language models on the GPU through WebGPU.";
  make_error_classes(m);
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    try {
      std::rethrow_exception(p);
    } catch (const wgx::Error& e) {
      set_python_error(e);
    }
  });

  m.def("version", &wgx::version, "The library's version, \"MAJOR.MINOR.PATCH\".");

  // ---- Engine ----
  py::class_<wgx::AdapterInfo>(m, "AdapterInfo", "The GPU adapter an Engine runs on.")
      .def_readonly("name", &wgx::AdapterInfo::name)
      .def_readonly("backend", &wgx::AdapterInfo::backend)
      .def_readonly("type", &wgx::AdapterInfo::type)
      .def_readonly("vendor", &wgx::AdapterInfo::vendor)
      .def_readonly("is_cpu", &wgx::AdapterInfo::is_cpu)
      .def_readonly("shader_f16", &wgx::AdapterInfo::shader_f16)
      .def_readonly("subgroups", &wgx::AdapterInfo::subgroups)
      .def_readonly("timestamps", &wgx::AdapterInfo::timestamps)
      .def_readonly("max_buffer_size", &wgx::AdapterInfo::max_buffer_size)
      .def_readonly("max_storage_binding_size", &wgx::AdapterInfo::max_storage_binding_size)
      .def("__repr__", [](const wgx::AdapterInfo& a) {
        return "<wgx.AdapterInfo " + quoted(a.name) + ", " + a.backend + ", " + a.type + ">";
      });

  py::class_<wgx::Engine>(m, "Engine", "One GPU device; models loaded with the same Engine share it.")
      .def(py::init([](const std::optional<std::string>& adapter, const std::vector<std::string>& toggles,
                       const std::map<std::string, std::string>& options, bool announce) {
             wgx::EngineOptions o = wgx::EngineOptions::from_env();
             if (adapter) o.adapter = *adapter;
             o.toggles.insert(o.toggles.end(), toggles.begin(), toggles.end());
             o.options = options;
             o.announce = announce;
             py::gil_scoped_release nogil;
             return wgx::Engine(o);
           }),
           "adapter: \"auto\" (default, or WGX_ADAPTER), \"gpu\", \"swiftshader\" or \"gles\"; toggles: Dawn "
           "device toggles after WGX_TOGGLES's (\"name\" on, \"-name\" off); options: runtime options by name; "
           "announce: say on stderr which adapter \"auto\" took.",
           py::kw_only(), py::arg("adapter") = py::none(), py::arg("toggles") = std::vector<std::string>{},
           py::arg("options") = std::map<std::string, std::string>{}, py::arg("announce") = true)
      .def_property_readonly("adapter", &wgx::Engine::adapter, "The adapter's name, backend, type and features.")
      .def("__repr__", [](const wgx::Engine& e) { return "<wgx.Engine " + quoted(e.adapter().name) + ">"; });

  // ---- Tokenizer ----
  py::class_<wgx::Tokenizer>(m, "Tokenizer", "A Hugging Face tokenizer.json byte-level BPE tokenizer.")
      .def(py::init([](const std::filesystem::path& path) {
             py::gil_scoped_release nogil;
             return wgx::Tokenizer::load(path.string());
           }),
           "A tokenizer.json, a folder holding one, or a .wgx file.", py::arg("path"))
      .def(
          "encode",
          [](const wgx::Tokenizer& t, const std::string& text, bool add_special_tokens, bool parse_special) {
            wgx::EncodeOptions o;
            o.add_special_tokens = add_special_tokens;
            o.parse_special = parse_special;
            py::gil_scoped_release nogil;
            return t.encode(text, o);
          },
          "Token ids of `text`, as transformers' tokenizer(text).input_ids. add_special_tokens=False leaves out what "
          "the post-processor adds; parse_special=False treats special tokens' text as plain text.",
          py::arg("text"), py::kw_only(), py::arg("add_special_tokens") = true, py::arg("parse_special") = true)
      .def(
          "decode",
          [](const wgx::Tokenizer& t, const py::handle& ids, bool skip_special) {
            const std::vector<int32_t> list = token_ids(ids, "ids");
            std::string text;
            {
              py::gil_scoped_release nogil;
              text = t.decode(list, skip_special);
            }
            return utf8(text);
          },
          "The text of `ids`; bytes that do not form UTF-8 become U+FFFD, unknown ids are skipped.", py::arg("ids"),
          py::kw_only(), py::arg("skip_special") = false)
      .def("token_id", &wgx::Tokenizer::token_id, "The id of a token as the file spells it (\"<|im_end|>\"), or None.",
           py::arg("token"))
      .def(
          "token", [](const wgx::Tokenizer& t, int32_t id) -> py::object {
            const std::optional<std::string> s = t.token(id);
            return s ? py::object(utf8(*s)) : py::object(py::none());
          },
          "The token of an id as the file spells it, or None.", py::arg("id"))
      .def("is_special", &wgx::Tokenizer::is_special, "Whether the id is a special token.", py::arg("id"))
      .def_property_readonly("vocab_size", &wgx::Tokenizer::vocab_size)
      .def_property_readonly("bos_id", &wgx::Tokenizer::bos_id, "As tokenizer_config.json names it, or None.")
      .def_property_readonly("eos_id", &wgx::Tokenizer::eos_id, "As tokenizer_config.json names it, or None.")
      .def("__len__", &wgx::Tokenizer::vocab_size)
      .def("__repr__",
           [](const wgx::Tokenizer& t) { return "<wgx.Tokenizer vocab_size=" + std::to_string(t.vocab_size()) + ">"; });

  // ---- Model ----
  py::class_<wgx::LoadProgress>(m, "LoadProgress", "What on_progress is called with as a model loads.")
      .def_readonly("stage", &wgx::LoadProgress::stage, "\"reading\", \"converting\", \"building\", \"done\"")
      .def_readonly("step", &wgx::LoadProgress::step, "\"layer 3/16\", or \"\"")
      .def_readonly("seconds", &wgx::LoadProgress::seconds, "since the load began")
      .def("__repr__", [](const wgx::LoadProgress& p) {
        return "<wgx.LoadProgress " + p.stage + (p.step.empty() ? "" : " " + p.step) + ">";
      });

  py::class_<wgx::ModelInfo::Memory>(m, "ModelMemory", "Bytes a model holds on the device.")
      .def_readonly("weights", &wgx::ModelInfo::Memory::weights)
      .def_readonly("state", &wgx::ModelInfo::Memory::state)
      .def_readonly("activations", &wgx::ModelInfo::Memory::activations)
      .def_readonly("total", &wgx::ModelInfo::Memory::total)
      .def("__repr__", [](const wgx::ModelInfo::Memory& mem) {
        return "<wgx.ModelMemory total=" + std::to_string(mem.total) + " weights=" + std::to_string(mem.weights) +
               " state=" + std::to_string(mem.state) + " activations=" + std::to_string(mem.activations) + ">";
      });

  py::class_<wgx::ModelInfo>(m, "ModelInfo", "What a model is and what it holds.")
      .def_readonly("path", &wgx::ModelInfo::path)
      .def_readonly("architecture", &wgx::ModelInfo::architecture, "\"llama\" or \"qwen3\"")
      .def_readonly("weights", &wgx::ModelInfo::weights, "\"q4\", \"f16\" or \"f32\"")
      .def_readonly("kv_cache", &wgx::ModelInfo::kv_cache, "\"f16\" or \"f32\"")
      .def_readonly("chat_template", &wgx::ModelInfo::chat_template, "\"qwen3\", \"llama3\", or \"\" for none")
      .def_readonly("adapter", &wgx::ModelInfo::adapter)
      .def_readonly("context", &wgx::ModelInfo::context, "tokens a session holds")
      .def_readonly("max_prefill", &wgx::ModelInfo::max_prefill, "prompt tokens one step feeds")
      .def_readonly("vocab_size", &wgx::ModelInfo::vocab_size)
      .def_readonly("layers", &wgx::ModelInfo::layers)
      .def_readonly("eos_ids", &wgx::ModelInfo::eos_ids)
      .def_readonly("memory", &wgx::ModelInfo::memory)
      .def_readonly("load_seconds", &wgx::ModelInfo::load_seconds)
      .def_readonly("read_seconds", &wgx::ModelInfo::read_seconds)
      .def_readonly("build_seconds", &wgx::ModelInfo::build_seconds)
      .def_readonly("kernels", &wgx::ModelInfo::kernels, "compute pipelines created")
      .def_readonly("description", &wgx::ModelInfo::description)
      .def("__repr__", [](const wgx::ModelInfo& i) { return "<wgx.ModelInfo " + quoted(i.description) + ">"; });

  py::class_<wgx::Model>(m, "Model", "A model on the GPU: weights, kernels and the memory its sessions use.")
      .def(py::init([](const std::filesystem::path& path, const std::optional<std::string>& weights,
                       const std::optional<std::string>& kv, std::optional<int64_t> context, int64_t max_prefill,
                       const py::object& on_progress, const std::optional<wgx::Engine>& engine) {
             wgx::LoadOptions o = load_options(weights, kv, context, max_prefill);
             return with_progress<wgx::Model>(o, on_progress, [&](const wgx::LoadOptions& lo) {
               return engine ? wgx::Model::load(*engine, path.string(), lo) : wgx::Model::load(path.string(), lo);
             });
           }),
           "Loads a Hugging Face model folder or a .wgx file. weights: \"q4\" (default), \"f16\" or \"f32\"; kv: the "
           "KV cache, \"f16\" (default) or \"f32\"; context: tokens a session holds (default 4096, at most the "
           "model's); on_progress: called with a LoadProgress as the load goes on; engine: the GPU (default: a new "
           "one from the environment).",
           py::arg("path"), py::kw_only(), py::arg("weights") = py::none(), py::arg("kv") = py::none(),
           py::arg("context") = py::none(), py::arg("max_prefill") = wgx::LoadOptions{}.max_prefill,
           py::arg("on_progress") = py::none(), py::arg("engine") = py::none())
      .def_static(
          "synthetic",
          [](const std::string& name, const std::optional<wgx::Engine>& engine, uint64_t seed,
             const std::optional<std::string>& weights, const std::optional<std::string>& kv,
             std::optional<int64_t> context, int64_t max_prefill) {
            wgx::LoadOptions o = load_options(weights, kv, context, max_prefill);
            py::gil_scoped_release nogil;
            return wgx::Model::synthetic(engine ? *engine : wgx::Engine(), name, o, seed);
          },
          "Random weights at a real geometry (Model.synthetic_names()), for benchmarks: no tokenizer, so its "
          "sessions take token ids.",
          py::arg("name"), py::kw_only(), py::arg("engine") = py::none(), py::arg("seed") = 1,
          py::arg("weights") = py::none(), py::arg("kv") = py::none(), py::arg("context") = py::none(),
          py::arg("max_prefill") = wgx::LoadOptions{}.max_prefill)
      .def_static("synthetic_names", &wgx::Model::synthetic_names)
      .def(
          "session",
          [](const wgx::Model& model, const std::string& system_prompt, bool thinking) {
            wgx::SessionOptions o;
            o.system_prompt = system_prompt;
            o.thinking = thinking;
            py::gil_scoped_release nogil;  // waits while another session generates
            return std::make_shared<SessionBox>(model.session(o));
          },
          "A new conversation. system_prompt: chat's system message; thinking=False: Qwen3 answers without "
          "thinking first.",
          py::kw_only(), py::arg("system_prompt") = "", py::arg("thinking") = true)
      .def_property_readonly("tokenizer", &wgx::Model::tokenizer)
      .def_property_readonly("info", &wgx::Model::info)
      .def(
          "render_chat",
          [](const wgx::Model& model, const py::handle& messages, bool thinking) {
            return utf8(model.render_chat(messages_of(messages), thinking));
          },
          "The chat template's text for `messages`, ending with the assistant's turn opened.", py::arg("messages"),
          py::kw_only(), py::arg("thinking") = true)
      .def("__repr__", [](const wgx::Model& model) { return "<wgx.Model " + quoted(model.info().description) + ">"; });

  m.def(
      "convert",
      [](const std::filesystem::path& folder, const std::filesystem::path& output,
         const std::optional<std::string>& weights, const std::optional<std::string>& kv,
         std::optional<int64_t> context, int64_t max_prefill, const py::object& on_progress) {
        wgx::LoadOptions o = load_options(weights, kv, context, max_prefill);
        with_progress<bool>(o, on_progress, [&](const wgx::LoadOptions& lo) {
          wgx::convert(folder.string(), output.string(), lo);
          return true;
        });
      },
      "Converts a Hugging Face folder into one .wgx file that loads without converting anything (weights, kv, "
      "context and max_prefill fixed in it). Needs no GPU.",
      py::arg("folder"), py::arg("output"), py::kw_only(), py::arg("weights") = py::none(),
      py::arg("kv") = py::none(), py::arg("context") = py::none(),
      py::arg("max_prefill") = wgx::LoadOptions{}.max_prefill, py::arg("on_progress") = py::none());

  // ---- Generation ----
  py::class_<wgx::Stats>(m, "Stats", "A generation's statistics.")
      .def_readonly("prompt_tokens", &wgx::Stats::prompt_tokens, "fed before the first new token")
      .def_readonly("cached_tokens", &wgx::Stats::cached_tokens,
                    "of the conversation before them, already in the cache (not fed)")
      .def_readonly("generated_tokens", &wgx::Stats::generated_tokens)
      .def_readonly("prefill_steps", &wgx::Stats::prefill_steps)
      .def_readonly("prefill_seconds", &wgx::Stats::prefill_seconds, "until the first new token was known")
      .def_readonly("first_token_seconds", &wgx::Stats::first_token_seconds, "from the call")
      .def_readonly("decode_seconds", &wgx::Stats::decode_seconds, "from the first new token to the last")
      .def_readonly("pipelined", &wgx::Stats::pipelined, "tokens picked on the GPU, steps kept in flight")
      .def_readonly("drawn_on_device", &wgx::Stats::drawn_on_device, "pipelined and sampled")
      .def_readonly("dispatches_per_step", &wgx::Stats::dispatches_per_step)
      .def_readonly("decode_cpu_seconds", &wgx::Stats::decode_cpu_seconds)
      .def_readonly("decode_thread_cpu_seconds", &wgx::Stats::decode_thread_cpu_seconds)
      .def_property_readonly("prefill_tokens_per_second", &wgx::Stats::prefill_tokens_per_second)
      .def_property_readonly("decode_tokens_per_second", &wgx::Stats::decode_tokens_per_second,
                             "tokens after the first, over decode_seconds")
      .def("__repr__", [](const wgx::Stats& s) {
        std::ostringstream text;
        text << std::fixed << std::setprecision(1) << "<wgx.Stats " << s.prompt_tokens << " prompt tokens at "
             << s.prefill_tokens_per_second() << " tok/s, " << s.generated_tokens << " generated at "
             << s.decode_tokens_per_second() << " tok/s>";
        return text.str();
      });

  py::class_<Generation, std::shared_ptr<Generation>>(
      m, "Generation",
      "A generation running: iterate it for the text as it streams; its result (text, tokens, stop_reason, seed, "
      "stats) waits for the end. Closing it, or dropping it, cancels it.")
      .def("__iter__", [](const std::shared_ptr<Generation>& g) { return g; })
      .def("__next__",
           [](Generation& g) {
             std::optional<std::string> piece = g.next();
             if (!piece) throw py::stop_iteration();
             return utf8(*piece);
           })
      .def_property_readonly(
          "text", [](Generation& g) { return utf8(g.result().text); },
          "The whole text (runs the generation to its end): no eos, nothing from a stop string on.")
      .def_property_readonly(
          "tokens", [](Generation& g) { return g.result().tokens; }, "Every new token, an ending eos included.")
      .def_property_readonly(
          "stop_reason", [](Generation& g) { return std::string(wgx::to_string(g.result().stop)); },
          "\"eos\", \"stop string\", \"max tokens\" or \"cancelled\".")
      .def_property_readonly(
          "seed", [](Generation& g) { return g.result().seed; }, "The seed it sampled with.")
      .def_property_readonly(
          "stats", [](Generation& g) { return g.result().stats; }, "Token counts, times and rates.")
      .def_property_readonly(
          "done", [](Generation& g) { return !g.running(); }, "Whether it has ended (without waiting).")
      .def(
          "wait", [](const std::shared_ptr<Generation>& g) { g->result(); return g; },
          "Runs it to its end; returns itself.")
      .def("cancel", &Generation::request_cancel,
           "Asks it to end at its next token and returns at once; the pieces made until then can still be taken.")
      .def("close", &Generation::close, "Cancels it and waits for it to end; iterating it ends.")
      .def("__enter__", [](const std::shared_ptr<Generation>& g) { return g; })
      .def("__exit__", [](Generation& g, const py::args&) { g.close(); })
      .def("__str__", [](Generation& g) { return utf8(g.result().text); })
      .def("__repr__", &Generation::describe);

  // ---- Session ----
  py::class_<SessionBox, std::shared_ptr<SessionBox>> session(
      m, "Session",
      "One conversation: its tokens, and the model's cache while it is the model's current session. It runs one "
      "generation at a time: a new one, or reset(), cancels the one still running.");
  def_generating(
      session, "generate", "prompt",
      [](const std::shared_ptr<SessionBox>& box, const py::object& prompt, const wgx::GenerateOptions& o) {
        if (py::isinstance<py::str>(prompt)) {
          return start(box, [text = prompt.cast<std::string>(), o](wgx::Session& s, const wgx::TokenCallback& cb) {
            return s.generate(text, o, cb);
          });
        }
        if (py::isinstance<py::bytes>(prompt)) throw py::type_error("prompt must be a str or a list of token ids");
        return start(box, [ids = token_ids(prompt, "prompt"), o](wgx::Session& s, const wgx::TokenCallback& cb) {
          return s.generate(std::span<const int32_t>(ids), o, cb);
        });
      },
      "Continues the session with `prompt` (a str, or a list of token ids) and generates; returns the running "
      "Generation. Settings: max_tokens; temperature (0: greedy), top_k (0: off), top_p (1: off), min_p (0: off), "
      "repetition_penalty (1: off), seed (None: a random one); stop: a str or a list of them that end the text; "
      "ignore_eos; skip_special: leave special tokens out of the text; add_special_tokens: at the start of a "
      "session, a text prompt gets the tokenizer's special tokens; in_flight, steps_per_submit, host_sampling: "
      "how decoding is pipelined.");
  def_generating(
      session, "chat", "message",
      [](const std::shared_ptr<SessionBox>& box, const py::object& message, const wgx::GenerateOptions& o) {
        if (py::isinstance<py::str>(message)) {
          return start(box, [text = message.cast<std::string>(), o](wgx::Session& s, const wgx::TokenCallback& cb) {
            return s.chat(text, o, cb);
          });
        }
        return start(box, [list = messages_of(message), o](wgx::Session& s, const wgx::TokenCallback& cb) {
          return s.chat(list, o, cb);
        });
      },
      "A user message (a str) after the conversation so far, or a whole conversation (a list of "
      "{\"role\": ..., \"content\": ...} dicts, OpenAI-style), in the model's chat template; the reply joins "
      "history. max_tokens is lowered to what the context has left. Returns the running Generation; the settings "
      "are generate()'s.");
  session
      .def(
          "cancel",
          [](SessionBox& box) {
            if (std::shared_ptr<Generation> g = box.current.lock()) g->request_cancel();
          },
          "Asks the running generation to end at its next token (any thread); no effect when none runs.")
      .def(
          "reset",
          [](SessionBox& box) {
            end_current(box);
            py::gil_scoped_release nogil;
            std::lock_guard busy(box.busy);
            box.session.reset();
          },
          "Forgets the conversation (cancelling a generation still running).")
      .def(
          "truncate",
          [](SessionBox& box, int64_t tokens) {
            require_idle(box);
            std::lock_guard busy(box.busy);
            box.session.truncate(tokens);
          },
          py::arg("tokens"),
          "Keeps the first `tokens` of the conversation; their cache rows stay, so what follows "
          "them is all that is fed next.")
      .def_property_readonly(
          "tokens",
          [](SessionBox& box) {
            require_idle(box);
            std::lock_guard busy(box.busy);
            return box.session.tokens();
          },
          "The conversation's token ids so far.")
      .def_property_readonly(
          "context_used",
          [](SessionBox& box) {
            require_idle(box);
            std::lock_guard busy(box.busy);
            return box.session.context_used();
          },
          "Tokens of the context the conversation takes.")
      .def_property_readonly(
          "context_size", [](SessionBox& box) { return box.session.context_size(); }, "Tokens the context holds.")
      .def_property_readonly(
          "history",
          [](SessionBox& box) {
            require_idle(box);
            std::lock_guard busy(box.busy);
            return history_of(box.session.history());
          },
          "The chat turns so far, as {\"role\": ..., \"content\": ...} dicts.")
      .def("__repr__", [](SessionBox& box) {
        std::string used = "?";
        if (std::shared_ptr<Generation> g = box.current.lock(); !g || !g->running()) {
          std::lock_guard busy(box.busy);
          used = std::to_string(box.session.context_used());
        }
        return "<wgx.Session " + used + "/" + std::to_string(box.session.context_size()) + " tokens>";
      });

  // ---- Speech ----
  py::class_<wgx::TranscriptSegment>(m, "TranscriptSegment", "A stretch of a transcript with its times.")
      .def_readonly("start", &wgx::TranscriptSegment::start, "seconds from the audio's start")
      .def_readonly("end", &wgx::TranscriptSegment::end, "seconds from the audio's start")
      .def_property_readonly("text", [](const wgx::TranscriptSegment& s) { return utf8(s.text); })
      .def("__repr__", [](const wgx::TranscriptSegment& s) {
        char times[64];
        std::snprintf(times, sizeof times, "%.2f-%.2f", s.start, s.end);
        return "<wgx.TranscriptSegment " + std::string(times) + " " + quoted(s.text) + ">";
      });
  py::class_<wgx::Transcript>(m, "Transcript", "What transcribe() returns: the text, its segments and timings.")
      .def_property_readonly("text", [](const wgx::Transcript& t) { return utf8(t.text); },
                             "every segment's text, joined (Whisper's text starts with a space)")
      .def_readonly("language", &wgx::Transcript::language, "given or detected; \"\" for an English-only model")
      .def_readonly("segments", &wgx::Transcript::segments)
      .def_readonly("windows", &wgx::Transcript::windows, "30 s windows decoded")
      .def_readonly("tokens", &wgx::Transcript::tokens, "tokens generated, timestamps and end tokens included")
      .def_readonly("audio_seconds", &wgx::Transcript::audio_seconds)
      .def_readonly("seconds", &wgx::Transcript::seconds, "the transcription's wall time")
      .def_readonly("encode_seconds", &wgx::Transcript::encode_seconds)
      .def_readonly("decode_seconds", &wgx::Transcript::decode_seconds)
      .def("__str__", [](const wgx::Transcript& t) { return utf8(t.text); })
      .def("__repr__", [](const wgx::Transcript& t) { return "<wgx.Transcript " + quoted(t.text) + ">"; });
  py::class_<wgx::SpeechModelInfo>(m, "SpeechModelInfo", "What a speech model is.")
      .def_readonly("path", &wgx::SpeechModelInfo::path)
      .def_readonly("adapter", &wgx::SpeechModelInfo::adapter)
      .def_readonly("mel_bins", &wgx::SpeechModelInfo::mel_bins)
      .def_readonly("encoder_layers", &wgx::SpeechModelInfo::encoder_layers)
      .def_readonly("decoder_layers", &wgx::SpeechModelInfo::decoder_layers)
      .def_readonly("d_model", &wgx::SpeechModelInfo::d_model)
      .def_readonly("vocab_size", &wgx::SpeechModelInfo::vocab_size)
      .def_readonly("languages", &wgx::SpeechModelInfo::languages, "empty for an English-only model")
      .def_readonly("load_seconds", &wgx::SpeechModelInfo::load_seconds);
  const char* transcribe_kwargs =
      " language: \"en\", \"de\", ... (default: detected from the first window); task: \"transcribe\" or "
      "\"translate\" (into English); timestamps: segments at the model's timestamp tokens; max_new_tokens: per "
      "30 s window (0: half the decoder's positions); beams: 1 greedy, 2 to 16 beam search (transformers' "
      "num_beams).";
  py::class_<wgx::SpeechModel>(m, "SpeechModel", "A Whisper model on the GPU: speech to text.")
      .def(py::init([](const std::filesystem::path& path, const std::optional<std::string>& weights,
                       const py::object& on_progress, const std::optional<wgx::Engine>& engine) {
             wgx::SpeechLoadOptions o;
             if (weights) {
               if (*weights != "f32" && *weights != "q4") bad_argument("weights must be \"f32\" or \"q4\", not \"" + *weights + "\"");
               o.weights = weight_format(*weights);
             }
             return with_progress<wgx::SpeechModel>(o, on_progress, [&](const wgx::SpeechLoadOptions& so) {
               return wgx::SpeechModel::load(engine ? *engine : wgx::Engine(), path.string(), so);
             });
           }),
           "Loads a Hugging Face Whisper folder (WhisperForConditionalGeneration). weights: \"f32\" (default) or "
           "\"q4\" (the encoder's and decoder's products); on_progress: called with a LoadProgress; engine: the GPU "
           "(default: a new one from the environment).",
           py::arg("path"), py::kw_only(), py::arg("weights") = py::none(), py::arg("on_progress") = py::none(),
           py::arg("engine") = py::none())
      .def_static("is_speech_model", [](const std::filesystem::path& path) {
        return wgx::SpeechModel::is_speech_model(path.string());
      }, "Whether a folder's config.json names a Whisper model.", py::arg("path"))
      .def(
          "transcribe_file",
          [](const wgx::SpeechModel& model, const std::filesystem::path& path, const std::optional<std::string>& language,
             const std::string& task, bool timestamps, int64_t max_new_tokens, int64_t beams) {
            const wgx::TranscribeOptions o = transcribe_options(language, task, timestamps, max_new_tokens, beams);
            py::gil_scoped_release nogil;
            return model.transcribe_file(path.string(), o);
          },
          (std::string("An audio file's text (WAV, FLAC or Ogg; any rate and channels).") + transcribe_kwargs).c_str(),
          py::arg("path"), py::kw_only(), py::arg("language") = py::none(), py::arg("task") = "transcribe",
          py::arg("timestamps") = false, py::arg("max_new_tokens") = 0, py::arg("beams") = 1)
      .def(
          "transcribe_bytes",
          [](const wgx::SpeechModel& model, const py::bytes& data, const std::optional<std::string>& language,
             const std::string& task, bool timestamps, int64_t max_new_tokens, int64_t beams) {
            const wgx::TranscribeOptions o = transcribe_options(language, task, timestamps, max_new_tokens, beams);
            const std::string_view view = data;
            py::gil_scoped_release nogil;
            return model.transcribe_file_bytes(
                std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(view.data()), view.size()), o);
          },
          (std::string("The text of an audio file's bytes.") + transcribe_kwargs).c_str(), py::arg("data"),
          py::kw_only(), py::arg("language") = py::none(), py::arg("task") = "transcribe",
          py::arg("timestamps") = false, py::arg("max_new_tokens") = 0, py::arg("beams") = 1)
      .def(
          "transcribe",
          [](const wgx::SpeechModel& model, const py::object& samples, const std::optional<std::string>& language,
             const std::string& task, bool timestamps, int64_t max_new_tokens, int64_t beams) {
            const wgx::TranscribeOptions o = transcribe_options(language, task, timestamps, max_new_tokens, beams);
            const std::vector<float> v = float_samples(samples);
            py::gil_scoped_release nogil;
            return model.transcribe(v, o);
          },
          (std::string("The text of mono samples at 16 kHz in [-1, 1]: a 1-D float32 buffer (numpy, array) or a "
                       "sequence of numbers.") + transcribe_kwargs).c_str(),
          py::arg("samples"), py::kw_only(), py::arg("language") = py::none(), py::arg("task") = "transcribe",
          py::arg("timestamps") = false, py::arg("max_new_tokens") = 0, py::arg("beams") = 1)
      .def(
          "stream",
          [](const wgx::SpeechModel& model, const std::optional<std::string>& language, const std::string& task,
             int64_t max_new_tokens, int64_t beams, double step, double max_buffer) {
            wgx::SpeechStreamOptions so;
            so.step = step;
            so.max_buffer = max_buffer;
            return model.stream(transcribe_options(language, task, false, max_new_tokens, beams), so);
          },
          "A SpeechStream for audio that arrives in pieces. step: seconds of audio between two hypotheses (a word "
          "is final once two in a row agree on it); max_buffer: seconds a hypothesis hears at most (longer audio "
          "is cut at a quiet point).",
          py::kw_only(), py::arg("language") = py::none(), py::arg("task") = "transcribe",
          py::arg("max_new_tokens") = 0, py::arg("beams") = 1, py::arg("step") = wgx::SpeechStreamOptions{}.step,
          py::arg("max_buffer") = wgx::SpeechStreamOptions{}.max_buffer)
      .def_property_readonly("info", &wgx::SpeechModel::info)
      .def("__repr__", [](const wgx::SpeechModel& model) {
        const wgx::SpeechModelInfo i = model.info();
        return "<wgx.SpeechModel " + quoted(i.path) + " " + std::to_string(i.encoder_layers) + "+" +
               std::to_string(i.decoder_layers) + " layers>";
      });

  py::class_<wgx::SpeechStream>(m, "SpeechStream",
                                "Speech to text as the audio arrives: push() samples, get the words that became final.")
      .def(
          "push",
          [](wgx::SpeechStream& s, const py::object& samples) {
            const std::vector<float> v = float_samples(samples);
            py::gil_scoped_release nogil;
            return s.push(v);
          },
          "Mono samples at 16 kHz in [-1, 1] (a float32 buffer or a sequence of numbers) -> the text they made "
          "final (often \"\").",
          py::arg("samples"))
      .def(
          "finish",
          [](wgx::SpeechStream& s) {
            py::gil_scoped_release nogil;
            return s.finish();
          },
          "The end of the audio: the text of what was left.")
      .def_property_readonly("text", [](const wgx::SpeechStream& s) { return utf8(s.text()); }, "final so far")
      .def_property_readonly("language", &wgx::SpeechStream::language)
      .def_property_readonly("audio_seconds", &wgx::SpeechStream::audio_seconds, "pushed so far")
      .def_property_readonly("windows", &wgx::SpeechStream::windows, "hypotheses decoded so far");

  // No generation may outlive the interpreter: they are cancelled and joined when it exits.
  py::module_::import("atexit").attr("register")(py::cpp_function(&end_all_generations));
}
