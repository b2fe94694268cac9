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
#include "llm/chat_session.h"

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

uint64_t random_seed() {
  std::random_device rd;
  return (uint64_t{rd()} << 32) | rd();
}

bool line_open = false;  // stdout's last text did not end its line

void write_out(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  if (!text.empty()) line_open = text.back() != '\n';
}

llm::ChatTemplate chat_template_of(const LoadedModel& m) {
  const auto t = llm::detect_chat_template(*m.tokenizer);
  if (!t) {
    throw std::invalid_argument(
        "the tokenizer has neither <|im_start|> (Qwen3) nor <|start_header_id|> (Llama 3): "
        "no chat template for it; use wgx run without --chat");
  }
  return *t;
}

void announce(const ModelArgs& args, const LoadedModel& m) {
  std::fprintf(stderr, "wgx: %s (%s) ready in %.2f s (model read in %.3f s, program built in %.3f s)\n",
               args.path.c_str(), m.description.c_str(), m.load_seconds, m.read_seconds, m.build_seconds);
}

// --in-flight and --steps-per-submit (run and chat); `steps_given`: the latter was.
bool take_decode_option(ArgWalker& args, llm::GenerationOptions& options, bool& steps_given) {
  constexpr auto kMost = static_cast<int64_t>(runtime::Program::kMaxReadsInFlight);
  if (args.take("--in-flight")) {
    options.decode_in_flight = parse_int("--in-flight", args.value(), 0, kMost);
  } else if (args.take("--steps-per-submit")) {
    options.decode_steps_per_submit = parse_int("--steps-per-submit", args.value(), 1, kMost);
    steps_given = true;
  } else if (args.take("--host-sampling")) {
    options.sample_on_device = false;
  } else {
    return false;
  }
  return true;
}

// Steps a submit asked for that exceed the steps in flight are an error (the default shrinks).
void check_decode_options(const char* command, llm::GenerationOptions& options, bool steps_given) {
  if (!steps_given) {
    options.decode_steps_per_submit =
        std::min(options.decode_steps_per_submit, std::max<int64_t>(options.decode_in_flight, 1));
  }
  if (options.decode_steps_per_submit > std::max<int64_t>(options.decode_in_flight, 1)) {
    throw std::invalid_argument(std::string(command) + ": --steps-per-submit " +
                                std::to_string(options.decode_steps_per_submit) +
                                " is more than the steps in flight (--in-flight " +
                                std::to_string(options.decode_in_flight) + ")");
  }
}

// A hint on what to change, for a prompt that does not fit.
[[noreturn]] void context_full(const llm::ContextFullError& e) {
  throw std::invalid_argument(std::string(e.what()) + " (-n N: new tokens; --ctx N: context length)");
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
  llm::GenerationOptions options;
  options.sampling = default_sampling();
  bool seed_given = false, chat = false, have_prompt = false, steps_given = false;
  llm::ChatOptions chat_options;
  std::string prompt, system;
  ArgWalker args("run", argv);
  while (!args.done()) {
    if (take_model_option(args, model) || take_sampling_option(args, options.sampling, seed_given) ||
        take_decode_option(args, options, steps_given)) {
      continue;
    }
    if (args.take("--prompt", "-p")) {
      prompt = args.value();
      have_prompt = true;
    } else if (args.take("--max-tokens", "-n")) {
      options.max_new_tokens = parse_int("-n", args.value(), 1, int64_t{1} << 20);
    } else if (args.take("--chat")) {
      chat = true;
    } else if (args.take("--system")) {
      system = args.value();
      chat = true;
    } else if (args.take("--no-think")) {
      chat_options.enable_thinking = false;
      chat = true;
    } else if (args.take("--stop")) {
      options.stop_strings.push_back(args.value());
    } else {
      args.unknown();
    }
  }
  check_decode_options("run", options, steps_given);
  if (!have_prompt)
    throw std::invalid_argument("run: give a prompt with -p TEXT (or -p - to read stdin); see wgx run --help");
  if (prompt == "-") prompt.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  if (!seed_given) options.sampling.seed = random_seed();
  llm::validate(options.sampling);

  LoadedModel m = load_model(global, model);
  announce(model, m);
  options.eos_ids = m.eos_ids;
  std::vector<int32_t> ids;
  if (chat) {
    std::vector<llm::ChatMessage> messages;
    if (!system.empty()) messages.push_back({"system", system, std::nullopt});
    messages.push_back({"user", prompt, std::nullopt});
    ids = m.tokenizer->encode(llm::render_chat(chat_template_of(m), messages, chat_options));
  } else {
    // Hugging Face's tokenizer(prompt): what tokenizer.json's post-processor adds (Llama 3
    // starts with <|begin_of_text|>; Qwen3 and the demo add nothing).
    ids = m.tokenizer->encode(prompt, tokenizer::EncodeOptions{});
  }
  llm::Generator gen(*m.program, *m.tokenizer, m.limits);
  llm::GenerationResult r;
  try {
    r = gen.generate(ids, options, [](int32_t, std::string_view text) {
      write_out(text);
      return true;
    });
  } catch (const llm::ContextFullError& e) {
    context_full(e);
  }
  if (!r.text.empty() && r.text.back() != '\n') write_out("\n");
  std::fprintf(stderr, "wgx: %s | seed %llu\n", stats_line(r.stats, r.stop).c_str(),
               static_cast<unsigned long long>(options.sampling.seed));
  return 0;
}

int run_chat(const GlobalOptions& global, const std::vector<std::string>& argv) {
  if (wants_help(argv)) {
    print_help(kChatUsage);
    return 0;
  }
  ModelArgs model;
  llm::GenerationOptions options;
  options.sampling = default_sampling();
  options.max_new_tokens = 1024;
  bool seed_given = false, steps_given = false;
  llm::ChatOptions chat_options;
  std::string system;
  ArgWalker args("chat", argv);
  while (!args.done()) {
    if (take_model_option(args, model) || take_sampling_option(args, options.sampling, seed_given) ||
        take_decode_option(args, options, steps_given)) {
      continue;
    }
    if (args.take("--max-tokens", "-n")) {
      options.max_new_tokens = parse_int("-n", args.value(), 1, int64_t{1} << 20);
    } else if (args.take("--system")) {
      system = args.value();
    } else if (args.take("--no-think")) {
      chat_options.enable_thinking = false;
    } else {
      args.unknown();
    }
  }
  check_decode_options("chat", options, steps_given);
  if (!seed_given) options.sampling.seed = random_seed();
  llm::validate(options.sampling);

  LoadedModel m = load_model(global, model);
  const llm::ChatTemplate tmpl = chat_template_of(m);
  if (!chat_options.enable_thinking && tmpl != llm::ChatTemplate::Qwen3) {
    std::fputs("wgx: --no-think applies to Qwen3 only; ignored\n", stderr);
  }
  announce(model, m);
  std::fputs("wgx: type a message; /reset starts over, /quit or Ctrl-D ends\n", stderr);
  options.eos_ids = m.eos_ids;
  llm::Generator gen(*m.program, *m.tokenizer, m.limits);
  llm::ChatSession session(gen, tmpl, system, chat_options);
  const bool interactive = isatty(STDIN_FILENO);
  const uint64_t seed = options.sampling.seed;
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
    options.sampling.seed = seed + turn;  // each reply its own random stream, reproducibly
    try {
      const llm::GenerationResult r = session.send(line, options, [](int32_t, std::string_view text) {
        write_out(text);
        return true;
      });
      write_out("\n");
      std::fprintf(stderr, "wgx: %s | context %lld/%lld\n", stats_line(r.stats, r.stop).c_str(),
                   static_cast<long long>(gen.context().size()), static_cast<long long>(gen.limits().max_seq));
    } catch (const llm::ContextFullError& e) {
      std::fprintf(stderr, "wgx: %s\n", e.what());
    } catch (const std::invalid_argument& e) {  // e.g. a line that is not UTF-8: say so, go on
      std::fprintf(stderr, "wgx: %s\n", e.what());
    }
  }
  return 0;
}

}  // namespace wgx::cli
