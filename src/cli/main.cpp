// wgx: the command line. Parses the global options, then hands over to a subcommand.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "format/error.h"
#include "gpu/error.h"
#include "graph/error.h"
#include "models/error.h"
#include "tokenizer/tokenizer.h"

namespace {

constexpr const char* kUsage = R"(usage: wgx [global options] <command> [args]

commands:
  info          adapter, features and limits; self-test kernels: bandwidth, cost per dispatch
  options       the runtime options --option takes: kinds, defaults, values, what each does
  inspect F     builds model file F (.wgx) for the adapter and prints each node's shapes and
                route and the memory plan (--why: also the routes passed over, and why)
  tokenize      text -> token ids with a Hugging Face tokenizer.json, or --decode ids -> text
                (--model PATH: the file, a model folder or a .wgx)
  bench-op      times single ops at Llama-3.2-1B / Qwen3-0.6B shapes on the GPU
                ([--filter REGEX] [--iters N] [--json])
  convert       a Hugging Face model folder -> one .wgx file that run, chat and bench load by
                memory mapping (DIR -o OUT.wgx [--weights q4|f16|f32] [--ctx N] [--kv f16|f32])
  run           generates text from a prompt with a model folder or .wgx file, streamed
                (--model PATH -p PROMPT [-n N] [--chat] [sampling options]; see wgx run --help)
  chat          an interactive conversation with a chat model (--model PATH; /reset, /quit)
  bench         prefill and decode tokens per second of a model, host and memory costs
                (--model PATH | --synthetic NAME, -p N -n N [--pos N] [--profile] [--json])
  serve         an OpenAI-compatible HTTP server for a model (--model PATH [--port N]
                [--host H] [--api-key KEY]; see wgx serve --help)
  perplexity    how well a model predicts a text file: mean NLL and perplexity in windows
                (--model PATH FILE [--ctx N] [--stride S])
  transcribe    the text of an audio file by a Whisper model folder (--model PATH FILE
                [--language L] [--task translate] [--timestamps]; see wgx transcribe --help)

global options:
  --adapter A   auto | gpu | swiftshader | gles (default: $WGX_ADAPTER or auto).
                auto takes a real GPU when the Vulkan loader finds one, else SwiftShader (CPU).
  --toggles L   Dawn device toggles, comma-separated; "-name" disables one
                (default: $WGX_TOGGLES), e.g. skip_validation,-lazy_clear_resource_on_first_use.
                disable_robustness and disable_workgroup_init are on unless turned
                off (-disable_robustness, -disable_workgroup_init)
  --option N=V  a runtime option for every program built, e.g. quant_gemv_x8=off
                (wgx options lists them); repeatable
  -h, --help    this text
  --version     the wgx version
)";

// Reports an error on stderr, on a line of its own, and gives the exit code.
int fail(const std::string& message, int code) {
  wgx::cli::end_output_line();
  std::fprintf(stderr, "wgx: %s\n", message.c_str());
  return code;
}

// What a failure of the API's kind exits with: 2 for a bad command line, 3 when the machine has
// no usable GPU (or SwiftShader), 4 for a model that cannot be used, 1 otherwise.
int exit_code(wgx::ErrorKind kind) {
  switch (kind) {
    case wgx::ErrorKind::BadArgument:
    case wgx::ErrorKind::ContextFull: return 2;
    case wgx::ErrorKind::NoAdapter: return 3;
    case wgx::ErrorKind::InvalidModel: return 4;
    default: return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace wgx;
  try {
    cli::GlobalOptions global;
    std::vector<std::string> rest;
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i];
      auto value = [&](const char* name) -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(std::string(name) + " needs a value");
        return argv[++i];
      };
      if (!rest.empty()) {
        rest.push_back(arg);
      } else if (arg == "-h" || arg == "--help") {
        std::fputs(kUsage, stdout);
        return 0;
      } else if (arg == "--version") {
        std::printf("wgx %s\n", wgx::version());
        return 0;
      } else if (arg == "--adapter") {
        global.engine.adapter = value("--adapter");
      } else if (arg == "--toggles") {
        global.engine.toggles.push_back(value("--toggles"));
      } else if (arg == "--option") {
        const std::string kv = value("--option");
        const size_t eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) throw std::invalid_argument("--option takes NAME=VALUE, got '" + kv + "'");
        global.engine.options[kv.substr(0, eq)] = kv.substr(eq + 1);
      } else if (arg.rfind("-", 0) == 0) {
        throw std::invalid_argument("unknown option '" + arg + "' (see wgx --help)");
      } else {
        rest.push_back(arg);
      }
    }
    check_options(global.engine.options);  // before any device: a mistake costs nothing
    if (rest.empty()) {
      std::fputs(kUsage, stderr);
      return 2;
    }
    const std::string command = rest.front();
    rest.erase(rest.begin());
    if (command == "info") return cli::run_info(global, rest);
    if (command == "options") return cli::run_options(global, rest);
    if (command == "inspect") return cli::run_inspect(global, rest);
    if (command == "bench-op") return cli::run_bench_op(global, rest);
    if (command == "tokenize") return cli::run_tokenize(global, rest);
    if (command == "convert") return cli::run_convert(global, rest);
    if (command == "run") return cli::run_generate(global, rest);
    if (command == "chat") return cli::run_chat(global, rest);
    if (command == "bench") return cli::run_bench(global, rest);
    if (command == "serve") return cli::run_serve(global, rest);
    if (command == "perplexity") return cli::run_perplexity(global, rest);
    if (command == "transcribe") return cli::run_transcribe(global, rest);
    throw std::invalid_argument("unknown command '" + command + "' (see wgx --help)");
  } catch (const wgx::Error& e) {
    return fail(e.what(), exit_code(e.kind()));
  } catch (const gpu::GpuError& e) {
    return fail(e.what(), e.kind() == gpu::ErrorKind::Setup ? 3 : 1);
  } catch (const format::FormatError& e) {
    return fail(e.what(), 4);
  } catch (const tokenizer::TokenizerError& e) {
    return fail(e.what(), 4);
  } catch (const models::ModelError& e) {
    return fail(e.what(), 4);
  } catch (const graph::GraphError& e) {
    return fail(e.what(), 4);
  } catch (const std::invalid_argument& e) {
    return fail(e.what(), 2);
  } catch (const std::exception& e) {
    return fail(std::string("error: ") + e.what(), 1);
  }
}
