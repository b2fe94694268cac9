// The subcommands of the wgx command line.
#pragma once

#include <string>
#include <vector>

#include "wgx/wgx.hpp"

namespace wgx::cli {

// Options every subcommand accepts: the adapter, Dawn's toggles, and runtime options for every
// program the command builds (wgx options lists them).
struct GlobalOptions {
  EngineOptions engine = EngineOptions::from_env();
};

int run_info(const GlobalOptions& global, const std::vector<std::string>& args);
int run_inspect(const GlobalOptions& global, const std::vector<std::string>& args);
int run_bench_op(const GlobalOptions& global, const std::vector<std::string>& args);
int run_tokenize(const GlobalOptions& global, const std::vector<std::string>& args);
int run_convert(const GlobalOptions& global, const std::vector<std::string>& args);
int run_generate(const GlobalOptions& global, const std::vector<std::string>& args);  // wgx run
int run_chat(const GlobalOptions& global, const std::vector<std::string>& args);
int run_bench(const GlobalOptions& global, const std::vector<std::string>& args);

// Ends the line that streamed text left open on stdout, if any: an error after some tokens
// then starts a line of its own.
void end_output_line();

}  // namespace wgx::cli
