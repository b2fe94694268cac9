// A JSON value as text short enough for an error message. A value in a config.json or safetensors
// header is whatever the file holds: printed whole, a deeply nested one would overflow the stack
// (nlohmann's dump() recurses) and a huge one would flood the message.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace wgx::models {

// As nlohmann's compact dump() for small values; deeper than two levels a container shows as
// "[...]" or "{...}", and past about 200 characters the text is cut and ends in "...".
std::string json_excerpt(const nlohmann::json& value);

}  // namespace wgx::models
