// wgx serve: the OpenAI-compatible HTTP server (src/server) over one model. The socket is bound
// first (so a port mistake costs nothing and probes see "loading"), then the model loads; SIGTERM
// or SIGINT drains the requests taken and exits.
#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>

#include "cli/commands.h"
#include "cli/llm_common.h"
#include "server/server.h"

namespace wgx::cli {

namespace {

constexpr const char* kServeUsage = R"(usage: wgx serve --model PATH [options]

Serves the model over HTTP with OpenAI's API: POST /v1/chat/completions and /v1/completions
(streamed as server-sent events or not), GET /v1/models, /health, /live and /metrics
(Prometheus). docs/serve.md has the details.

  --host H              the address to listen on (default 127.0.0.1; 0.0.0.0: every interface)
  --port N              the port (default 8080; 0: any free one, printed)
  --name NAME           the model's id in /v1/models and replies (default: the folder's or
                        file's name)
  --api-key KEY         require 'Authorization: Bearer KEY' (default: $WGX_API_KEY, or none);
                        /health and /live need none
  --parallel N          requests generated together, each step advancing all of them
                        (continuous batching; default 1: one at a time, the cache keeping the
                        last conversation so that its next turn feeds only its new tokens).
                        Each takes a KV cache of --ctx tokens
  --queue N             requests that may wait for their turn (default 64); more get 429
  --max-body BYTES      the largest request body taken (default 8388608); larger get 413
  --cors ORIGIN         Access-Control-Allow-Origin for browser clients (default *; none: off)
  --quiet               no line per request on stderr

)";

std::string default_name(const std::string& path) {
  std::filesystem::path p(path);
  while (!p.empty() && p.filename().empty()) p = p.parent_path();  // "models/demo/"
  if (p.extension() == ".wgx") return p.stem().string();
  return p.filename().string().empty() ? std::string("model") : p.filename().string();
}

}  // namespace

int run_serve(const GlobalOptions& global, const std::vector<std::string>& argv) {
  for (const std::string& a : argv) {
    if (a == "-h" || a == "--help") {
      std::fputs(kServeUsage, stdout);
      std::fputs(kModelOptionsHelp, stdout);
      return 0;
    }
  }
  ModelArgs model;
  server::ServerOptions options;
  if (const char* key = std::getenv("WGX_API_KEY")) options.api_key = key;
  ArgWalker args("serve", argv);
  while (!args.done()) {
    if (take_model_option(args, model)) continue;
    if (args.take("--host")) {
      options.host = args.value();
    } else if (args.take("--port")) {
      options.port = static_cast<int>(parse_int("--port", args.value(), 0, 65535));
    } else if (args.take("--name")) {
      options.name = args.value();
    } else if (args.take("--api-key")) {
      options.api_key = args.value();
    } else if (args.take("--parallel")) {
      options.parallel = parse_int("--parallel", args.value(), 1, 4096);
    } else if (args.take("--queue")) {
      options.max_queue = static_cast<size_t>(parse_int("--queue", args.value(), 0, 100000));
    } else if (args.take("--max-body")) {
      options.max_body = static_cast<size_t>(parse_int("--max-body", args.value(), 256, int64_t{1} << 32));
    } else if (args.take("--cors")) {
      options.cors = args.value();
      if (options.cors == "none") options.cors.clear();
    } else if (args.take("--quiet")) {
      options.log_requests = false;
    } else {
      args.unknown();
    }
  }
  if (model.path.empty()) {
    throw std::invalid_argument("serve: name the model with --model PATH (a Hugging Face folder or a .wgx file)");
  }
  if (options.name.empty()) options.name = default_name(model.path);
  if (options.parallel > 1) model.load.parallel = options.parallel;

  // Every thread started from here on (the server's, Dawn's) inherits these signals blocked;
  // this thread takes them with sigwait. A client that leaves must not end the process.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  server::Server server(options);
  const int port = server.bind();
  std::fprintf(stderr, "wgx serve: listening on http://%s:%d\n", options.host.c_str(), port);
  server.start();
  {
    const Engine engine = make_engine(global);
    Model m = load_model(engine, model);
    announce(m);
    server.ready(std::move(m));
  }
  std::fprintf(stderr, "wgx serve: ready: %s at http://%s:%d/v1\n", options.name.c_str(), options.host.c_str(), port);
  int signal = 0;
  sigwait(&stop_signals, &signal);
  std::fprintf(stderr, "wgx serve: %s: finishing the requests taken\n", signal == SIGTERM ? "SIGTERM" : "SIGINT");
  server.drain();
  server.stop();
  std::fprintf(stderr, "wgx serve: stopped\n");
  return 0;
}

}  // namespace wgx::cli
