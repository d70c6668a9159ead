#pragma once
// Strings from outside (the model's file name, op and tensor names, module scopes, source lines, a
// candidate's plan) made safe for the place they land in generated CUDA and C++: every writer in
// core/gen passes them through these before they reach a comment, a string literal or an identifier.
// Printable ASCII without the few sequences each place reserves comes out unchanged, so the code
// written for ordinary names does not change.
#include <string>
#include <string_view>

namespace nova {

// `text` for the inside of a comment (// or /* */), on one line and unable to end it or to join the
// next line to it: control characters are written as C escapes (\n, \t, \x1b), every backslash as
// \x5c (none is left for a line splice), a '*' after '/' and a '/' after '*' get a backslash before
// them (no comment opens or closes), a '?' after '?' becomes \? (no trigraph), and Unicode
// characters that move or hide text (bidirectional controls, line separators, C1 controls) and bytes
// that are not UTF-8 are written as \u202e and \xff. Other UTF-8 text stays readable.
std::string comment_safe(std::string_view text);

// `text` as the characters between the quotes of a C++ string literal: \\, \", \n, \r, \t, \? after
// a '?', and every other byte outside printable ASCII as a three-digit octal escape (which, unlike
// \x, cannot swallow a digit that follows), so the literal holds exactly the bytes of `text`.
std::string cpp_string_body(std::string_view text);
// `text` as a complete C++ string literal, quotes included.
std::string cpp_string_literal(std::string_view text);

// True for a C identifier ([A-Za-z_][A-Za-z0-9_]*): what may stand as a name in generated code.
bool is_c_identifier(std::string_view text);

}  // namespace nova
