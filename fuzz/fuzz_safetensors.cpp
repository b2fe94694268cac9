// Fuzzes the safetensors header reader, models::parse_safetensors, on bytes in memory.
//
// An input that starts with '{' is a header's JSON text, optionally followed by a NUL byte and the
// data area: the target puts the 8-byte length in front, so that mutations of the JSON keep a
// length that matches (an input of the other kind whose length's low byte is '{' is reachable
// this way too). Any other input is a whole file, length and all.
//
// The reader must reject a malformed file with a ModelError. Each tensor it accepts must view
// exactly its bytes, inside the data area, and convert to f32.
#include "fuzz_util.h"
#include "models/error.h"
#include "models/safetensors.h"

namespace {

using namespace wgx;

std::vector<uint8_t> wrap_header(std::string_view input) {
  const std::vector<std::string_view> parts = fuzz::split(input, '\0', 2);
  const std::string_view header = parts[0];
  std::vector<uint8_t> file;
  for (int i = 0; i < 8; ++i) file.push_back(static_cast<uint8_t>(uint64_t{header.size()} >> (8 * i)));
  file.insert(file.end(), header.begin(), header.end());
  if (parts.size() > 1) file.insert(file.end(), parts[1].begin(), parts[1].end());
  return file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> wrapped;
  std::span<const uint8_t> bytes(data, size);
  if (size > 0 && data[0] == '{') {
    wrapped = wrap_header(fuzz::as_text(bytes));
    bytes = wrapped;
  }

  models::SafetensorsContents contents;
  try {
    contents = models::parse_safetensors(bytes, "fuzz.safetensors");
  } catch (const models::ModelError&) {
    return 0;
  }

  const uint8_t* end = bytes.data() + bytes.size();
  for (const models::TensorView& t : contents.tensors) {
    fuzz::check(t.shape.size() <= 8, "a tensor has more than 8 dims");
    int64_t numel = 1;
    for (int64_t d : t.shape) {
      fuzz::check(d >= 0, "a tensor has a negative size");
      numel *= d;
    }
    fuzz::check(t.numel() == numel, "numel() disagrees with the shape");
    fuzz::check(t.data.size() == static_cast<uint64_t>(numel) * models::tensor_dtype_bytes(t.dtype),
                "a tensor's bytes are not numel * element size");
    fuzz::check(t.data.empty() || (t.data.data() >= bytes.data() + 8 && t.data.data() + t.data.size() <= end),
                "a tensor's bytes lie outside the file");
    const std::vector<float> values = models::to_f32(t);
    fuzz::check(values.size() == static_cast<size_t>(numel), "to_f32 gives the wrong count");
    models::expect_shape(t, t.shape, "its own shape");
    fuzz::check(models::tensor_dtype_name(t.dtype)[0] != '?', "an unknown dtype was accepted");
  }
  return 0;
}
