#include "tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>
#include <string>

namespace wgx::tokenizer {

namespace {
std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0)
    return "PCRE2 error " + std::to_string(code);
  return reinterpret_cast<const char*>(buffer);
}

// Long runs (a megabyte of spaces against `\s+(?!\S)`) need more than PCRE2's default 32 KiB JIT
// stack; one per thread keeps encode() usable from several threads at once.
pcre2_match_context* thread_match_context() {
  struct Context {
    pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
    pcre2_match_context* context = pcre2_match_context_create(nullptr);
    Context() {
      if (stack && context) pcre2_jit_stack_assign(context, nullptr, stack);
    }
    ~Context() {
      pcre2_match_context_free(context);
      pcre2_jit_stack_free(stack);
    }
  };
  thread_local Context c;
  return c.context;
}
}  // namespace

struct Regex::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

Regex::Regex(std::string_view pattern, bool literal) : code_(std::make_unique<Code>()) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  // PCRE2 refuses UCP with LITERAL, where it would mean nothing anyway.
  const uint32_t options = PCRE2_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP);
  code_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options,
                              &error, &offset, nullptr);
  if (!code_->code) {
    throw std::invalid_argument("the pattern does not compile: " + pcre2_message(error) +
                                " at offset " + std::to_string(offset));
  }
  // Without JIT (an unsupported platform) the interpreter gives the same matches, slower.
  pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE);
}

Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

void Regex::find_all(std::string_view subject, std::vector<Span>& out) const {
  out.clear();
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(code_->code, nullptr);
  if (!data) throw std::runtime_error("out of memory for PCRE2 match data");
  struct Free {
    pcre2_match_data* d;
    ~Free() { pcre2_match_data_free(d); }
  } free_data{data};

  const auto* text = reinterpret_cast<PCRE2_SPTR>(subject.data());
  pcre2_match_context* context = thread_match_context();
  size_t pos = 0;
  while (pos <= subject.size()) {
    // The caller checked the text once; PCRE2 need not re-check it at every offset.
    const int rc =
        pcre2_match(code_->code, text, subject.size(), pos, PCRE2_NO_UTF_CHECK, data, context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) throw std::runtime_error("regex match failed: " + pcre2_message(rc));
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
    const Span match{ovector[0], ovector[1]};
    out.push_back(match);
    if (match.end > match.begin) {
      pos = match.end;
    } else {
      if (match.end >= subject.size()) break;
      pos = match.end + 1;
      while (pos < subject.size() && (static_cast<uint8_t>(subject[pos]) & 0xC0) == 0x80) ++pos;
    }
  }
}

}  // namespace wgx::tokenizer
