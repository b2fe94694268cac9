// The subcommands of the wgx command line.
#pragma once

#include <string>
#include <vector>

#include "wgx/wgx.hpp"

namespace wgx::cli {

// Options every subcommand accepts: the GPU context, and runtime options (runtime/options.h,
// checked before any command runs) for every program the command builds.
struct GlobalOptions {
  EngineOptions engine = EngineOptions::from_env();
};

int run_info(const GlobalOptions& global, const std::vector<std::string>& args);
int run_options(const GlobalOptions& global, const std::vector<std::string>& args);  // wgx options
int run_inspect(const GlobalOptions& global, const std::vector<std::string>& args);
int run_bench_op(const GlobalOptions& global, const std::vector<std::string>& args);
int run_tokenize(const GlobalOptions& global, const std::vector<std::string>& args);
int run_convert(const GlobalOptions& global, const std::vector<std::string>& args);
int run_generate(const GlobalOptions& global, const std::vector<std::string>& args);  // wgx run
int run_chat(const GlobalOptions& global, const std::vector<std::string>& args);
int run_bench(const GlobalOptions& global, const std::vector<std::string>& args);
int run_serve(const GlobalOptions& global, const std::vector<std::string>& args);  // wgx serve
int run_perplexity(const GlobalOptions& global, const std::vector<std::string>& args);
int run_transcribe(const GlobalOptions& global, const std::vector<std::string>& args);  // speech to text

// Ends the line that streamed text left open on stdout, if any: an error after some tokens
// then starts a line of its own.
void end_output_line();

}  // namespace wgx::cli
