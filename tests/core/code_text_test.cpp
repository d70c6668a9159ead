// Nothing from outside is injected into generated code: names with newlines, quotes, `*/`,
// backslashes, trigraphs and non-ASCII characters (the model's file name, tensor and op names, the
// group's kind, module scopes and source lines) go through every builtin rule and the extension
// writer, and come out as comments and string literals only. The generated code, comments and
// literals aside, is exactly the code generated for ordinary names; the device code compiles with
// NVRTC; the extension's literals hold the names byte for byte.
#include "core/gen/code_text.h"

#include <regex>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "core/build/nvrtc_compiler.h"
#include "core/gen/builtin_generator.h"
#include "core/gen/extension_writer.h"
#include "core/verify/static_checker.h"
#include "support/graph_fixtures.h"
#include "support/test_paths.h"

namespace nova {
namespace {

// Appended to every outside string. It starts with a newline: a byte below every printable one, so
// names sort as before. "\xe2\x80\xae" is U+202E (right-to-left override), "\xff" is not UTF-8.
const std::string kHostile =
    "\n#error injected\n*/ int injected_a; /* \"); system(\"id\"); //\\\n"
    "int injected_b; ?\?/\n\r\t\x1b caf\xc3\xa9 \xe2\x80\xae \xff end\\";

// What a C compiler sees once comments are gone and string literals emptied, line splices
// (backslash, optional blanks, newline) joined first as the compiler's phase 2 does.
std::string code_only(const std::string& source) {
  static const std::regex splice(R"(\\[ \t]*\n)");
  return StaticChecker::strip(std::regex_replace(source, splice, ""));
}

// The string literals of `source` (outside comments), decoded from their escapes.
std::vector<std::string> string_literals(const std::string& source) {
  std::vector<std::string> out;
  enum { Code, Line, Block } state = Code;
  for (std::size_t i = 0; i < source.size(); ++i) {
    const char c = source[i], n = i + 1 < source.size() ? source[i + 1] : '\0';
    if (state == Line) {
      if (c == '\n') state = Code;
    } else if (state == Block) {
      if (c == '*' && n == '/') state = Code, ++i;
    } else if (c == '/' && n == '/') {
      state = Line;
    } else if (c == '/' && n == '*') {
      state = Block;
    } else if (c == '\'') {
      i += source[i + 1] == '\\' ? 3 : 2;  // a character literal: '"' must not open a string
    } else if (c == '"') {
      std::string s;
      for (++i; i < source.size() && source[i] != '"'; ++i) {
        if (source[i] != '\\') {
          s += source[i];
          continue;
        }
        const char e = source[++i];
        if (e >= '0' && e <= '7') {
          s += static_cast<char>(std::stoi(source.substr(i, 3), nullptr, 8));
          i += 2;
        } else {
          s += e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
        }
      }
      out.push_back(s);
    }
  }
  return out;
}

// `g` with kHostile appended to every outside string: the model's path, every tensor name (and
// every reference to it), every op's readable name, scope and source line, and every group's kind.
ModelGraph hostile(ModelGraph g) {
  auto h = [](std::string& s) { s += kHostile; };
  h(g.model_path);
  for (auto& t : g.inputs) h(t.name);
  for (auto& t : g.outputs) h(t.name);
  for (auto& p : g.params) h(p.graph_input), h(p.tensor.name), h(p.name);
  for (auto& n : g.nodes) {
    h(n.op), h(n.scope), h(n.source_text), h(n.file);
    for (auto& a : n.args)
      if (!a.tensor.empty()) h(a.tensor);
    for (auto& o : n.outputs) h(o.name);
  }
  for (auto& grp : g.groups) {
    h(grp.kind);
    for (auto& t : grp.inputs) h(t);
    for (auto& t : grp.outputs) h(t);
  }
  return g;
}

TEST(CodeText, CommentTextStaysOnOneLineAndCannotEndOrSpliceTheComment) {
  EXPECT_EQ(comment_safe("conv2d_min_add_multiply.py"), "conv2d_min_add_multiply.py");
  EXPECT_EQ(comment_safe("x float32[128,3] -> y"), "x float32[128,3] -> y");
  EXPECT_EQ(comment_safe("a\nb\r\tc\x1b"), "a\\nb\\r\\tc\\x1b");
  EXPECT_EQ(comment_safe("*/ x /* y"), "*\\/ x /\\* y");
  EXPECT_EQ(comment_safe("end\\"), "end\\x5c");
  EXPECT_EQ(comment_safe("a\\ \n"), "a\\x5c \\n");
  EXPECT_EQ(comment_safe("what?\?/"), "what?\\?/");
  EXPECT_EQ(comment_safe("???"), "?\\?\\?");
  EXPECT_EQ(comment_safe("caf\xc3\xa9 \xe6\xa8\xa1\xe5\x9e\x8b.py"),
            "caf\xc3\xa9 \xe6\xa8\xa1\xe5\x9e\x8b.py");
  EXPECT_EQ(comment_safe("a\xe2\x80\xae"
                         "b\xe2\x80\xa8"
                         "c\xc2\x85"),
            "a\\u202eb\\u2028c\\u0085");
  EXPECT_EQ(comment_safe("\xff\xc3(\xed\xa0\x80"), "\\xff\\xc3(\\xed\\xa0\\x80");  // not UTF-8, a surrogate
  for (const std::string& s : {comment_safe(kHostile), comment_safe(std::string(1, '\0') + "x")}) {
    EXPECT_EQ(s.find_first_of(std::string("\n\r\v\f", 4) + std::string(1, '\0')), std::string::npos) << s;
    EXPECT_EQ(s.find("*/"), std::string::npos) << s;
    EXPECT_EQ(s.find("??"), std::string::npos) << s;
    EXPECT_NE(s.back(), '\\') << s;
  }
}

TEST(CodeText, StringLiteralsHoldExactlyTheBytesGiven) {
  EXPECT_EQ(cpp_string_literal("x"), "\"x\"");
  EXPECT_EQ(cpp_string_literal("a\"b\\c\nd"), R"("a\"b\\c\nd")");
  EXPECT_EQ(cpp_string_literal("?\?/"), R"("?\?/")");
  EXPECT_EQ(cpp_string_literal("\xc3\xa9"
                               "1\x01"),
            R"("\303\2511\001")");  // octal: never swallows the 1
  for (const std::string& s : {std::string("plain"), kHostile}) {
    auto literals = string_literals("const char* s = " + cpp_string_literal(s) + ";");
    ASSERT_EQ(literals.size(), 1u);
    EXPECT_EQ(literals[0], s);
  }
  EXPECT_TRUE(is_c_identifier("nova_g0_pointwise_0"));
  EXPECT_FALSE(is_c_identifier("0abc"));
  EXPECT_FALSE(is_c_identifier("f(); system(\"id\")"));
  EXPECT_FALSE(is_c_identifier(""));
}

TEST(CodeText, HostileNamesReachGeneratedCodeOnlyAsCommentsAndLiterals) {
  NvrtcCompiler nvrtc(test::scratch_dir("code_text_nvrtc"));
  GenerationTarget target;
  // Every rule: direct and library convolution, tiled, library and tensor-core GEMM (the anchor's
  // views included), row kernels, pointwise chains with masks and views.
  const std::vector<std::string> fixtures = {"conv2d_min_add_multiply",
                                             "conv2d_min_add_multiply_large.graph",
                                             "matmul_scaling_residual_add",
                                             "matmul_scaling_residual_add_large.graph",
                                             "layernorm_gelu",
                                             "swish_bias_clamp",
                                             "tiny_transformer_block"};
  const std::string suffix_identifier = GroupContext::c_identifier(kHostile);
  std::set<std::string> rules;
  for (const auto& name : fixtures) {
    const ModelGraph plain = test::graph_fixture(name);
    const ModelGraph bad = hostile(plain);
    for (std::size_t k = 0; k < plain.groups.size(); ++k) {
      SCOPED_TRACE(fmt::format("{} group {}", name, k));
      std::vector<Candidate> expected = {BuiltinGenerator(target).generate(plain, plain.groups[k])};
      std::vector<Candidate> got = {BuiltinGenerator(target).generate(bad, bad.groups[k])};
      for (auto& c : BuiltinGenerator(target).alternatives(plain, plain.groups[k])) expected.push_back(c);
      for (auto& c : BuiltinGenerator(target).alternatives(bad, bad.groups[k])) got.push_back(c);
      ASSERT_EQ(got.size(), expected.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        const Candidate &c = got[i], &e = expected[i];
        ASSERT_FALSE(c.declined.has_value()) << *c.declined;
        rules.insert(c.origin.rule);
        for (const auto& [source, reference] :
             {std::pair{c.cuda_source, e.cuda_source}, std::pair{c.extension_source, e.extension_source}}) {
          // Comments and literals aside, the code is the ordinary one with the suffix in identifiers.
          std::string code = code_only(source);
          for (std::size_t p; (p = code.find(suffix_identifier)) != std::string::npos;)
            code.erase(p, suffix_identifier.size());
          EXPECT_EQ(code, code_only(reference));
          EXPECT_EQ(source.find("??"), std::string::npos);
          EXPECT_EQ(std::count(source.begin(), source.end(), '\n'),
                    std::count(reference.begin(), reference.end(), '\n'));
        }
        // The model's file name is in the header comment, escaped.
        EXPECT_NE(c.cuda_source.find(comment_safe(bad.model_path)), std::string::npos);
        // The extension's checks name each input exactly.
        auto literals = string_literals(c.extension_source);
        for (const auto& t : c.plan.inputs)
          EXPECT_NE(
              std::find(literals.begin(), literals.end(), t.name + ": a contiguous CUDA tensor is expected"),
              literals.end())
              << t.name;
        NvrtcResult r = nvrtc.compile(c.cuda_source, "hostile.cu", "sm_90");
        EXPECT_TRUE(r.ok) << r.log;
      }
    }
  }
  for (const char* rule : {"conv2d_direct", "gemm_tiled", "gemm_tf32x3", "pointwise"})
    EXPECT_TRUE(rules.count(rule)) << rule;
}

TEST(CodeText, TheExtensionWriterEscapesPlanStringsAndRefusesNamesThatAreNotIdentifiers) {
  ModelGraph g = test::graph_fixture("conv2d_min_add_multiply_large.graph");
  Candidate c = BuiltinGenerator().generate(g, g.groups[0]);
  ASSERT_FALSE(c.declined.has_value()) << *c.declined;
  ASSERT_EQ(c.plan.steps.front().type, "library");
  c.summary = kHostile;
  c.plan.steps.front().args.push_back(PlanArg{"", "json", kHostile, ""});
  std::string source = ExtensionWriter::write(c);
  auto literals = string_literals(source);
  EXPECT_NE(std::find(literals.begin(), literals.end(), kHostile), literals.end());
  EXPECT_EQ(code_only(source).find("injected"), std::string::npos);

  // The package's source includes only the ATen headers its host code needs: the library call's.
  const auto headers = ExtensionWriter::aten_headers(c);
  EXPECT_EQ(headers, (std::vector<std::string>{"ATen/core/Tensor.h", "ATen/ops/empty.h", "ATen/ops/conv2d.h"}));

  Candidate bad_kernel = c;
  bad_kernel.plan.steps.back().kernel = "k<<<1,1>>>(); system(\"id\"); k";
  EXPECT_THROW(ExtensionWriter::write(bad_kernel), UnsupportedGroup);
  Candidate bad_op = c;
  bad_op.plan.steps.front().op = "aten.convolution(x); system(\"id\"); at::convolution.default";
  EXPECT_THROW(ExtensionWriter::write(bad_op), UnsupportedGroup);
  EXPECT_THROW(ExtensionWriter::aten_headers(bad_op), UnsupportedGroup);
  Candidate bad_ref = c;
  bad_ref.plan.steps.front().out = "output:0]; system(\"id\"); output:0";
  EXPECT_THROW(ExtensionWriter::write(bad_ref), UnsupportedGroup);
}

}  // namespace
}  // namespace nova
