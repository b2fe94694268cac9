// wgx run (one prompt, streamed to stdout) and wgx chat (an interactive conversation), over a
// Hugging Face model folder or a .wgx file from wgx convert. Statistics go to stderr so stdout
// holds only the generated text.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <iterator>
#include <random>
#include <string>

#include "cli/commands.h"
#include "cli/llm_common.h"

namespace wgx::cli {

namespace {

constexpr const char* kRunUsage = R"(usage: wgx run --model PATH -p PROMPT [options]

Generates a continuation of PROMPT, streamed to stdout; statistics go to stderr.

  -p, --prompt TEXT     the prompt ('-' reads it from stdin)
  -n, --max-tokens N    tokens to generate at most (default 256)
  --chat                wrap the prompt in the model's chat template, as a user message
  --system S            system prompt (implies --chat)
  --no-think            Qwen3: answer without thinking first (implies --chat)
  --stop S              stop once the text contains S, which is not printed (repeatable)
  --in-flight N         decoding keeps up to N steps on the device, each token picked there
                        (default 6; 0: one step at a time, the token picked on the host): greedy
                        (--temp 0), or drawn with --top-k 1 to 128, --repeat-penalty too;
                        --top-k 0 or above 128 and --host-sampling pick on the host, one step at
                        a time (so does a repetition penalty with a model converted before the
                        device applied it)
  --steps-per-submit K  of those steps, K recorded into one submit (1 to --in-flight; default 3,
                        or --in-flight where that is less)
  --host-sampling       draw tokens with the host's sampler (its own random stream) instead of
                        the device's

)";

constexpr const char* kChatUsage = R"(usage: wgx chat --model PATH [options]

An interactive conversation in the model's chat template (Qwen3 or Llama 3). Type a message and
press Enter; the reply streams back. The conversation stays in the KV cache, so each turn feeds
only the new message. Lines starting with / are commands:
  /reset                start a new conversation
  /quit                 end (so does Ctrl-D)

  --system S            system prompt
  --no-think            Qwen3: reply without thinking first
  -n, --max-tokens N    tokens per reply at most (default 1024)
  --in-flight N         decoding steps kept on the device, each token picked there (default
                        6; 0: one at a time; see wgx run --help for the settings it takes)
  --steps-per-submit K  of those steps, K recorded into one submit (1 to --in-flight; default 3,
                        or --in-flight where that is less)
  --host-sampling       draw tokens with the host's sampler instead of the device's

)";

void print_help(const char* usage) {
  std::fputs(usage, stdout);
  std::fputs(kModelOptionsHelp, stdout);
  std::fputs("\n", stdout);
  std::fputs(kSamplingOptionsHelp, stdout);
}

bool wants_help(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "-h" || a == "--help") return true;
  }
  return false;
}

bool line_open = false;  // stdout's last text did not end its line

void write_out(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  if (!text.empty()) line_open = text.back() != '\n';
}

// --in-flight, --steps-per-submit and --host-sampling (run and chat); `steps_given`: the second was.
bool take_decode_option(ArgWalker& args, GenerateOptions& options, bool& steps_given) {
  constexpr int64_t kMost = 8;  // steps a model keeps in flight at most
  if (args.take("--in-flight")) {
    options.in_flight = parse_int("--in-flight", args.value(), 0, kMost);
  } else if (args.take("--steps-per-submit")) {
    options.steps_per_submit = parse_int("--steps-per-submit", args.value(), 1, kMost);
    steps_given = true;
  } else if (args.take("--host-sampling")) {
    options.host_sampling = true;
  } else {
    return false;
  }
  return true;
}

// Steps a submit asked for that exceed the steps in flight are an error (the default shrinks).
void check_decode_options(const char* command, GenerateOptions& options, bool steps_given) {
  if (!steps_given) options.steps_per_submit = std::min(options.steps_per_submit, std::max<int64_t>(options.in_flight, 1));
  if (options.steps_per_submit > std::max<int64_t>(options.in_flight, 1)) {
    throw std::invalid_argument(std::string(command) + ": --steps-per-submit " + std::to_string(options.steps_per_submit) +
                                " is more than the steps in flight (--in-flight " + std::to_string(options.in_flight) + ")");
  }
}

// The text of a generation as it streams.
bool stream(std::string_view text, int32_t) {
  write_out(text);
  return true;
}

}  // namespace

void end_output_line() {
  if (!line_open) return;
  write_out("\n");
}

int run_generate(const GlobalOptions& global, const std::vector<std::string>& argv) {
  if (wants_help(argv)) {
    print_help(kRunUsage);
    return 0;
  }
  ModelArgs model;
  GenerateOptions options;
  bool chat = false, have_prompt = false, steps_given = false;
  SessionOptions session_options;
  std::string prompt;
  ArgWalker args("run", argv);
  while (!args.done()) {
    if (take_model_option(args, model) || take_sampling_option(args, options.sampling) ||
        take_decode_option(args, options, steps_given)) {
      continue;
    }
    if (args.take("--prompt", "-p")) {
      prompt = args.value();
      have_prompt = true;
    } else if (args.take("--max-tokens", "-n")) {
      options.max_tokens = parse_int("-n", args.value(), 1, int64_t{1} << 20);
    } else if (args.take("--chat")) {
      chat = true;
    } else if (args.take("--system")) {
      session_options.system_prompt = args.value();
      chat = true;
    } else if (args.take("--no-think")) {
      session_options.thinking = false;
      chat = true;
    } else if (args.take("--stop")) {
      options.stop.push_back(args.value());
    } else {
      args.unknown();
    }
  }
  check_decode_options("run", options, steps_given);
  if (!have_prompt)
    throw std::invalid_argument("run: give a prompt with -p TEXT (or -p - to read stdin); see wgx run --help");
  if (prompt == "-") prompt.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());

  const Model m = load_model(make_engine(global), model);
  announce(m);
  Session session = m.session(session_options);
  Result r;
  try {
    // Text as Hugging Face's tokenizer(prompt) gives it, or a user message in the chat template.
    r = chat ? session.chat(prompt, options, stream) : session.generate(prompt, options, stream);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::ContextFull) throw;
    throw std::invalid_argument(std::string(e.what()) + " (-n N: new tokens; --ctx N: context length)");
  }
  if (!r.text.empty() && r.text.back() != '\n') write_out("\n");
  std::fprintf(stderr, "wgx: %s | seed %llu\n", stats_line(r).c_str(), static_cast<unsigned long long>(r.seed));
  return 0;
}

int run_chat(const GlobalOptions& global, const std::vector<std::string>& argv) {
  if (wants_help(argv)) {
    print_help(kChatUsage);
    return 0;
  }
  ModelArgs model;
  GenerateOptions options;
  options.max_tokens = 1024;
  bool steps_given = false;
  SessionOptions session_options;
  ArgWalker args("chat", argv);
  while (!args.done()) {
    if (take_model_option(args, model) || take_sampling_option(args, options.sampling) ||
        take_decode_option(args, options, steps_given)) {
      continue;
    }
    if (args.take("--max-tokens", "-n")) {
      options.max_tokens = parse_int("-n", args.value(), 1, int64_t{1} << 20);
    } else if (args.take("--system")) {
      session_options.system_prompt = args.value();
    } else if (args.take("--no-think")) {
      session_options.thinking = false;
    } else {
      args.unknown();
    }
  }
  check_decode_options("chat", options, steps_given);

  const Model m = load_model(make_engine(global), model);
  const ModelInfo info = m.info();
  if (info.chat_template.empty()) {
    throw std::invalid_argument("chat: " + info.path +
                                "'s tokenizer has neither <|im_start|> (Qwen3) nor <|start_header_id|> (Llama 3): no "
                                "chat template for it; use wgx run without --chat");
  }
  if (!session_options.thinking && info.chat_template != "qwen3") {
    std::fputs("wgx: --no-think applies to Qwen3 only; ignored\n", stderr);
  }
  announce(m);
  std::fputs("wgx: type a message; /reset starts over, /quit or Ctrl-D ends\n", stderr);
  Session session = m.session(session_options);
  const bool interactive = isatty(STDIN_FILENO);
  // Each reply its own random stream, reproducibly from one seed.
  const uint64_t seed = options.sampling.seed.value_or((uint64_t{std::random_device{}()} << 32) | std::random_device{}());
  std::string line;
  for (uint64_t turn = 0;; ++turn) {
    if (interactive) write_out("> ");
    if (!std::getline(std::cin, line)) break;
    if (line.empty()) continue;
    if (line == "/quit" || line == "/exit") break;
    if (line == "/reset") {
      session.reset();
      std::fputs("wgx: new conversation\n", stderr);
      continue;
    }
    if (line[0] == '/') {
      std::fprintf(stderr, "wgx: unknown command %s (/reset or /quit)\n", line.c_str());
      continue;
    }
    options.sampling.seed = seed + turn;
    try {
      const Result r = session.chat(line, options, stream);
      write_out("\n");
      std::fprintf(stderr, "wgx: %s | context %lld/%lld\n", stats_line(r).c_str(),
                   static_cast<long long>(session.context_used()), static_cast<long long>(session.context_size()));
    } catch (const Error& e) {  // a full context, a line that is not UTF-8: say so, go on
      if (e.kind() != ErrorKind::ContextFull && e.kind() != ErrorKind::BadArgument) throw;
      end_output_line();
      std::fprintf(stderr, "wgx: %s\n", e.what());
    }
  }
  std::fprintf(stderr, "wgx: seed %llu\n", static_cast<unsigned long long>(seed));
  return 0;
}

}  // namespace wgx::cli
