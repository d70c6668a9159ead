#pragma once
// Base64 (RFC 4648, with padding) for binary contents a worker request carries inline: a cubin.
#include <string>
#include <string_view>

namespace nova {

std::string base64_encode(std::string_view bytes);

}  // namespace nova
