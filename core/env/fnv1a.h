#pragma once
// FNV-1a, 64-bit: a short, stable name for a string (cache entries, per-model project folders).
// Not for security; callers that need certainty compare the full key as well.
#include <cstdint>
#include <string_view>

namespace nova {

inline std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace nova
