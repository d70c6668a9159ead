#include "core/gen/code_text.h"

#include <cstdint>
#include <optional>

#include <fmt/format.h>

namespace nova {
namespace {

struct CodePoint {
  char32_t value;
  std::size_t length;  // bytes
};

// The UTF-8 sequence at `i`, or nothing where the bytes are not UTF-8 (overlong forms, surrogates,
// values above U+10FFFF and cut sequences included).
std::optional<CodePoint> decode_utf8(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  char32_t value = 0, least = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, value = lead & 0x1F, least = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, value = lead & 0x0F, least = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, value = lead & 0x07, least = 0x10000;
  } else {
    return std::nullopt;
  }
  if (i + length > s.size()) return std::nullopt;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return std::nullopt;
    value = (value << 6) | (byte(i + k) & 0x3F);
  }
  if (value < least || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return std::nullopt;
  return CodePoint{value, length};
}

// Characters that are not control characters to a C compiler but change what a reader sees: C1
// controls, line and paragraph separators, bidirectional marks, embeddings, overrides and isolates,
// and the zero-width no-break space.
bool hides_or_moves_text(char32_t c) {
  return (c >= 0x80 && c <= 0x9F) || c == 0x2028 || c == 0x2029 || c == 0x200E || c == 0x200F ||
         (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) || c == 0xFEFF;
}

std::string c_escape(unsigned char c) {
  switch (c) {
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    default:
      return fmt::format("\\x{:02x}", c);
  }
}

}  // namespace

std::string comment_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const char previous = i ? text[i - 1] : '\0';
    if (c >= 0x80) {
      if (auto cp = decode_utf8(text, i)) {
        if (hides_or_moves_text(cp->value))
          out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(cp->value));
        else
          out.append(text.substr(i, cp->length));
        i += cp->length;
      } else {
        out += c_escape(c);
        ++i;
      }
      continue;
    }
    if (c < 0x20 || c == 0x7F || c == '\\')
      out += c_escape(c);
    else if ((c == '*' && previous == '/') || (c == '/' && previous == '*') || (c == '?' && previous == '?'))
      out += std::string("\\") + static_cast<char>(c);
    else
      out += static_cast<char>(c);
    ++i;
  }
  return out;
}

std::string cpp_string_body(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\\' || c == '"')
      out += std::string("\\") + static_cast<char>(c);
    else if (c == '\n' || c == '\r' || c == '\t')
      out += c_escape(c);
    else if (c == '?' && i && text[i - 1] == '?')
      out += "\\?";
    else if (c < 0x20 || c >= 0x7F)
      out += fmt::format("\\{:03o}", c);
    else
      out += static_cast<char>(c);
  }
  return out;
}

std::string cpp_string_literal(std::string_view text) { return "\"" + cpp_string_body(text) + "\""; }

bool is_c_identifier(std::string_view text) {
  if (text.empty()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(i && c >= '0' && c <= '9')) return false;
  }
  return true;
}

}  // namespace nova
