// wgx serve's HTTP side: an OpenAI-compatible API over one model (cpp-httplib; a thread per
// connection from a pool). The socket is bound and answering before the model is loaded
// (/health says "loading"); ready() hands it the model; drain() finishes what was taken.
//
//   Server server(options);
//   int port = server.bind();
//   server.start();
//   server.ready(wgx::Model::load(path));
//   ... wait for SIGTERM ...
//   server.drain();
//   server.stop();
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "wgx/wgx.hpp"

namespace wgx::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;             // 0: any free port
  std::string name;            // the model's id in /v1/models and replies
  std::string api_key;         // "": no key needed
  size_t max_queue = 64;       // requests that may wait beside the running ones
  int64_t parallel = 1;        // requests run together (> 1: the model has LoadOptions::parallel)
  size_t max_body = 8 << 20;   // bytes of a request body
  std::string cors = "*";      // Access-Control-Allow-Origin; "": no CORS headers
  bool log_requests = true;    // a line on stderr per completion request
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the socket; returns the port. Throws std::runtime_error when it cannot.
  int bind();
  // Serves on a thread of its own; until ready(), completion requests get 503.
  void start();
  // The model is loaded: requests are taken from now on.
  void ready(Model model);
  // New requests get 503 (and /health too); returns once every request taken is answered.
  void drain();
  // Closes the socket and waits for the connections' threads.
  void stop();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace wgx::server
