// Fuzzes chat-template rendering, llm::render_chat and llm::render_turns, with messages made from
// the input.
//
// The first byte holds the options: bit 0 the template (Qwen3, Llama 3), bit 1
// add_generation_prompt, bit 2 enable_thinking, bit 3 render_turns' `first`. The rest is a list of
// messages separated by 0xFE bytes (which UTF-8 never holds, so a content without them loses
// nothing). A message's first byte picks its role: system, user, assistant, tool, the empty role,
// or (any other value) the role spelled before the first ':' of the message; the rest is its
// content, and when the content holds a 0xFF byte (also never UTF-8), what follows it is the
// reasoning_content.
//
// Rendering must refuse a message that is not UTF-8 or whose role the template lacks with
// std::invalid_argument. What it renders must be UTF-8, no longer than the messages allow, start
// and end as the template does, and render_chat must equal render_turns for a first turn.
#include "fuzz_util.h"
#include "llm/chat.h"
#include "tokenizer/utf8.h"

namespace {

using namespace wgx;

llm::ChatMessage message(std::string_view record) {
  static constexpr std::string_view kRoles[] = {"system", "user", "assistant", "tool", ""};
  llm::ChatMessage m;
  if (record.empty()) return m;
  const auto pick = static_cast<uint8_t>(record[0]);
  record.remove_prefix(1);
  if (pick < std::size(kRoles)) {
    m.role = kRoles[pick];
  } else {
    const size_t colon = record.find(':');
    m.role = record.substr(0, colon);
    record = colon == std::string_view::npos ? std::string_view() : record.substr(colon + 1);
  }
  const size_t split = record.find('\xff');
  m.content = record.substr(0, split);
  if (split != std::string_view::npos) m.reasoning_content = std::string(record.substr(split + 1));
  return m;
}

std::string render(llm::ChatTemplate t, const std::vector<llm::ChatMessage>& messages, const llm::ChatOptions& options,
                   bool turns, bool first) {
  return turns ? llm::render_turns(t, messages, options, first) : llm::render_chat(t, messages, options);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  const llm::ChatTemplate t = (flags & 1) ? llm::ChatTemplate::Llama3 : llm::ChatTemplate::Qwen3;
  llm::ChatOptions options;
  options.add_generation_prompt = (flags & 2) != 0;
  options.enable_thinking = (flags & 4) != 0;
  const bool first = (flags & 8) != 0;

  std::vector<llm::ChatMessage> messages;
  const std::string_view rest = fuzz::as_text({data + 1, size - 1});
  if (!rest.empty()) {
    for (std::string_view record : fuzz::split(rest, '\xfe', rest.size() + 1)) messages.push_back(message(record));
  }

  std::string chat;
  try {
    chat = render(t, messages, options, false, true);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  fuzz::check(!tokenizer::find_invalid_utf8(chat), "the rendered chat is not UTF-8");
  fuzz::check(chat.size() <= 2 * size + 128 * (messages.size() + 1), "the rendered chat is longer than its messages allow");
  fuzz::check(render(t, messages, options, true, true) == chat, "render_chat and render_turns(first) disagree");

  const std::string turns = render(t, messages, options, true, first);
  fuzz::check(!tokenizer::find_invalid_utf8(turns), "the rendered turns are not UTF-8");
  const std::string_view prompt = t == llm::ChatTemplate::Llama3 ? "<|start_header_id|>assistant<|end_header_id|>\n\n"
                                  : options.enable_thinking       ? "<|im_start|>assistant\n"
                                                                  : "<|im_start|>assistant\n<think>\n\n</think>\n\n";
  if (options.add_generation_prompt) fuzz::check(chat.ends_with(prompt), "the generation prompt is missing");
  if (t == llm::ChatTemplate::Llama3 && !messages.empty()) {
    fuzz::check(chat.starts_with("<|begin_of_text|>"), "a Llama 3 chat does not start with <|begin_of_text|>");
    fuzz::check(turns.starts_with("<|begin_of_text|>") == first, "render_turns' `first` is not honoured");
  }
  return 0;
}
