#include "server/server.h"

#include <httplib.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <random>
#include <stdexcept>
#include <thread>

#include "server/metrics.h"
#include "server/openai.h"
#include "server/scheduler.h"

namespace wgx::server {

using nlohmann::json;

namespace {

enum class State { Loading, Ready, Draining };

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(dump(body), "application/json");
}

// Compares without a timing signal of where the first difference is.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

std::string new_id(const char* prefix) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = [] {
    std::random_device rd;
    return (uint64_t{rd()} << 32) | rd();
  }();
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%016llx%08llx", prefix, static_cast<unsigned long long>(salt),
                static_cast<unsigned long long>(++counter));
  return buf;
}

Usage usage_of(const Result& r) {
  Usage u;
  u.prompt_tokens = r.stats.prompt_tokens + r.stats.cached_tokens;
  u.cached_tokens = r.stats.cached_tokens;
  u.completion_tokens = static_cast<int64_t>(r.tokens.size());
  return u;
}

}  // namespace

struct Server::Impl {
  ServerOptions options;
  httplib::Server http;
  std::thread listener;
  Metrics metrics;
  std::atomic<State> state{State::Loading};
  std::optional<Model> model;
  std::optional<Tokenizer> tokenizer;
  int64_t context = 0, vocab = 0;
  bool has_chat_template = false;
  std::unique_ptr<Scheduler> scheduler;

  explicit Impl(ServerOptions o) : options(std::move(o)) {}

  void send_error(httplib::Response& res, const ApiError& e) {
    send_json(res, e.status, error_body(e));
    if (e.status == 429 && scheduler) res.set_header("Retry-After", std::to_string(scheduler->retry_after()));
  }

  void log(const httplib::Request& req, int status, const std::string& what) {
    if (!options.log_requests) return;
    std::fprintf(stderr, "wgx serve: %s %s %d %s\n", req.method.c_str(), req.path.c_str(), status, what.c_str());
  }

  void routes();
  void complete(Endpoint endpoint, const httplib::Request& req, const std::string& body, httplib::Response& res);
  void prepare(Job& job);
  void stream(Endpoint endpoint, const std::shared_ptr<Job>& job, const ReplyHeader& header,
              const httplib::Request& req, httplib::Response& res);
};

// Tokenizes the prompt and checks that it leaves room for a reply, before the job is queued.
void Server::Impl::prepare(Job& job) {
  const CompletionRequest& r = job.request;
  if (r.endpoint == Endpoint::Chat) {
    if (!has_chat_template) {
      throw ApiError(400, "unsupported_value", "the model has no chat template: send its text to /v1/completions",
                     "messages");
    }
    std::string text;
    try {
      text = model->render_chat(r.messages, r.thinking);
    } catch (const Error& e) {
      throw ApiError(400, "invalid_value", e.what(), "messages");
    }
    EncodeOptions eo;
    eo.add_special_tokens = false;
    const int64_t n = static_cast<int64_t>(tokenizer->encode(text, eo).size());
    if (n >= context) {
      throw ApiError(400, "context_length_exceeded",
                     "the conversation is " + std::to_string(n) + " tokens; the context holds " +
                         std::to_string(context) + ", with room for at least one more for the reply",
                     "messages");
    }
    return;
  }
  if (r.prompt_ids) {
    for (int32_t id : *r.prompt_ids) {
      if (id >= vocab) {
        throw ApiError(400, "invalid_value",
                       "token id " + std::to_string(id) + " is outside the vocabulary (" + std::to_string(vocab) + ")",
                       "prompt");
      }
    }
    job.prompt_ids = *r.prompt_ids;
  } else {
    try {
      job.prompt_ids = tokenizer->encode(*r.prompt);
    } catch (const Error& e) {
      throw ApiError(400, "invalid_value", e.what(), "prompt");
    }
  }
  if (job.prompt_ids.empty()) throw ApiError(400, "invalid_value", "the prompt is empty", "prompt");
  const int64_t n = static_cast<int64_t>(job.prompt_ids.size());
  if (n >= context) {
    throw ApiError(400, "context_length_exceeded",
                   "the prompt is " + std::to_string(n) + " tokens; the context holds " + std::to_string(context) +
                       ", with room for at least one more for the reply",
                   "prompt");
  }
}

void Server::Impl::complete(Endpoint endpoint, const httplib::Request& req, const std::string& body,
                            httplib::Response& res) {
  auto job = std::make_shared<Job>();
  try {
    const State s = state.load();
    if (s != State::Ready) {
      throw ApiError(503, "unavailable", s == State::Loading ? "the model is still loading" : "the server is shutting down",
                     "", "server_error");
    }
    job->request = parse_request(endpoint, body);
    prepare(*job);
    scheduler->submit(job);
  } catch (const ApiError& e) {
    metrics.request(endpoint, Outcome::Rejected);
    send_error(res, e);
    log(req, e.status, std::string("(") + e.code + ") " + e.what());
    return;
  }
  ReplyHeader header;
  header.id = new_id(endpoint == Endpoint::Chat ? "chatcmpl-" : "cmpl-");
  header.created = static_cast<int64_t>(std::time(nullptr));
  header.model = options.name;
  if (job->request.stream) {
    stream(endpoint, job, header, req, res);
    return;
  }
  job->wait_done();
  if (job->error) {
    send_error(res, *job->error);
    log(req, job->error->status, job->error->what());
    return;
  }
  const Result& r = *job->result;
  const Usage u = usage_of(r);
  send_json(res, 200, reply_json(endpoint, header, r.text, r.stop, u));
  log(req, 200, "prompt " + std::to_string(u.prompt_tokens) + " (" + std::to_string(u.cached_tokens) + " cached) + " +
                    std::to_string(u.completion_tokens) + " tokens, stop: " + to_string(r.stop));
}

// Server-sent events: a chunk per piece of text as it becomes final, then the finish reason,
// the usage where asked, and [DONE]. A client that is gone (a failed write, or a closed socket
// seen while waiting) cancels the job.
void Server::Impl::stream(Endpoint endpoint, const std::shared_ptr<Job>& job, const ReplyHeader& header,
                          const httplib::Request& req, httplib::Response& res) {
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");
  const std::string method = req.method, path = req.path;
  res.set_chunked_content_provider("text/event-stream", [this, endpoint, job, header, method, path](
                                                            size_t, httplib::DataSink& sink) {
    auto send = [&](const json& j) {
      const std::string event = "data: " + dump(j) + "\n\n";
      return sink.write(event.data(), event.size());
    };
    auto gone = [&] {
      job->cancelled = true;
      if (options.log_requests) std::fprintf(stderr, "wgx serve: %s %s: the client left; stopped\n", method.c_str(), path.c_str());
      return false;
    };
    if (endpoint == Endpoint::Chat && !send(chunk_json(endpoint, header, "", true))) return gone();
    for (bool finished = false; !finished;) {
      const std::string piece = job->take(std::chrono::milliseconds(100), &finished);
      if (!piece.empty()) {
        if (!send(chunk_json(endpoint, header, piece, false))) return gone();
      } else if (!finished && !sink.is_writable()) {
        return gone();
      }
    }
    if (job->error) {
      send(error_body(*job->error));
      std::fprintf(stderr, "wgx serve: %s %s: %s\n", method.c_str(), path.c_str(), job->error->what());
      sink.done();
      return true;
    }
    if (!job->result) return gone();  // dropped before it ran: the client had left
    const Result& r = *job->result;
    const Usage u = usage_of(r);
    // Logged before the last events: a client that has seen [DONE] finds the line written.
    if (options.log_requests) {
      std::fprintf(stderr, "wgx serve: %s %s 200 (stream) prompt %lld (%lld cached) + %lld tokens, stop: %s\n",
                   method.c_str(), path.c_str(), static_cast<long long>(u.prompt_tokens),
                   static_cast<long long>(u.cached_tokens), static_cast<long long>(u.completion_tokens),
                   to_string(r.stop));
    }
    bool ok = send(chunk_json(endpoint, header, "", false, finish_reason(r.stop)));
    if (ok && job->request.include_usage) ok = send(usage_chunk_json(endpoint, header, u));
    static const char done[] = "data: [DONE]\n\n";
    if (ok) ok = sink.write(done, sizeof done - 1);
    if (!ok) return gone();
    sink.done();
    return true;
  });
}

void Server::Impl::routes() {
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!options.cors.empty()) {
      res.set_header("Access-Control-Allow-Origin", options.cors);
      if (req.method == "OPTIONS") {
        res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
        res.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
        res.set_header("Access-Control-Max-Age", "86400");
        res.status = 204;
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    if (!options.api_key.empty() && req.path != "/health" && req.path != "/live") {
      const std::string auth = req.get_header_value("Authorization");
      const std::string bearer = "Bearer ";
      if (auth.rfind(bearer, 0) != 0 || !same_secret(auth.substr(bearer.size()), options.api_key)) {
        send_json(res, 401,
                  error_body(ApiError(401, "invalid_api_key",
                                      auth.empty() ? "an API key is needed: send the header 'Authorization: Bearer KEY'"
                                                   : "the API key is not valid",
                                      "", "authentication_error")));
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string code = "http_error", message = "HTTP status " + std::to_string(res.status);
    if (res.status == 404) {
      code = "not_found";
      message = "no such endpoint: " + req.method + " " + req.path;
    } else if (res.status == 413) {
      code = "request_too_large";
      message = "the request body is larger than the server takes (--max-body)";
    } else if (res.status == 400) {
      code = "invalid_request";
      message = "the HTTP request is malformed";
    }
    send_json(res, res.status, error_body(ApiError(res.status, code, message)));
  });
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_json(res, 500, error_body(ApiError(500, "internal_error", what, "", "server_error")));
  });
  http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    const State s = state.load();
    if (s == State::Loading) return send_json(res, 503, {{"status", "loading"}});
    if (s == State::Draining) return send_json(res, 503, {{"status", "draining"}});
    if (!scheduler->healthy()) return send_json(res, 503, {{"status", "error"}, {"message", "the GPU device was lost"}});
    send_json(res, 200, {{"status", "ok"}});
  });
  http.Get("/live", [](const httplib::Request&, httplib::Response& res) { send_json(res, 200, {{"status", "alive"}}); });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.text(), "text/plain; version=0.0.4");
  });
  http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    json m = {{"id", options.name}, {"object", "model"}, {"created", 0}, {"owned_by", "wgx"}};
    if (model) m["meta"] = {{"context_length", context}, {"description", model->info().description}};
    send_json(res, 200, {{"object", "list"}, {"data", json::array({m})}});
  });
  // The body is read here, whatever its Content-Type says (httplib would parse a form body, as
  // curl -d sends, with a limit of its own).
  for (Endpoint e : {Endpoint::Chat, Endpoint::Completions}) {
    http.Post(endpoint_path(e), [this, e](const httplib::Request& req, httplib::Response& res,
                                          const httplib::ContentReader& read) {
      std::string body;
      bool too_large = false;
      const bool complete_body = read([&](const char* data, size_t size) {
        too_large = body.size() + size > options.max_body;
        if (!too_large) body.append(data, size);
        return !too_large;
      });
      // httplib refuses a Content-Length over the limit before reading anything.
      too_large = too_large || (!complete_body && req.get_header_value<uint64_t>("Content-Length") > options.max_body);
      if (!complete_body && !too_large) {
        metrics.request(e, Outcome::Rejected);
        send_error(res, ApiError(400, "invalid_request", "the request body could not be read whole"));
        return;
      }
      if (too_large) {
        metrics.request(e, Outcome::Rejected);
        send_error(res, ApiError(413, "request_too_large", "the request body is larger than the server takes (--max-body)"));
        return;
      }
      complete(e, req, body, res);
    });
  }
}

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  Impl& s = *impl_;
  s.http.set_payload_max_length(s.options.max_body);
  // A thread per connection: every waiting request holds one, with room for probes besides.
  const size_t threads = s.options.max_queue + static_cast<size_t>(s.options.parallel) + 32;
  s.http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.routes();
}

Server::~Server() {
  stop();
}

int Server::bind() {
  Impl& s = *impl_;
  int port = s.options.port;
  if (port == 0) {
    port = s.http.bind_to_any_port(s.options.host);
    if (port < 0) throw std::runtime_error("cannot listen on " + s.options.host + " (any port)");
  } else if (!s.http.bind_to_port(s.options.host, port)) {
    throw std::runtime_error("cannot listen on " + s.options.host + ":" + std::to_string(port) +
                             ": the port is in use or the address is not this machine's (--host, --port)");
  }
  return port;
}

void Server::start() {
  impl_->listener = std::thread([this] { impl_->http.listen_after_bind(); });
}

void Server::ready(Model model) {
  Impl& s = *impl_;
  const ModelInfo info = model.info();
  s.context = info.context;
  s.vocab = info.vocab_size;
  s.has_chat_template = !info.chat_template.empty();
  s.tokenizer = model.tokenizer();
  s.model = model;
  s.scheduler = std::make_unique<Scheduler>(std::move(model), s.metrics, s.options.max_queue, s.options.parallel);
  s.state = State::Ready;
}

void Server::drain() {
  Impl& s = *impl_;
  s.state = State::Draining;
  if (s.scheduler) s.scheduler->drain();
}

void Server::stop() {
  Impl& s = *impl_;
  if (s.listener.joinable()) {
    s.http.stop();
    s.listener.join();
  }
}

}  // namespace wgx::server
