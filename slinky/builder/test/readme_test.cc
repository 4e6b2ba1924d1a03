// The programs README.md shows ("Walkthrough: the examples and their programs") are the ones
// build_pipeline makes today: each README block marked `<!-- program: NAME -->` is compared with
// the printed program of the example NAME built here (without the checks of the inputs and
// outputs that every program starts with). SLINKY_UPDATE_README=1 rewrites the blocks instead,
// after a change that alters a program on purpose.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "slinky/builder/pipeline.h"
#include "slinky/runtime/print.h"

namespace slinky {
namespace {

index_t no_op_1(const buffer<const int>&, const buffer<int>&) { return 0; }
index_t no_op_f(const buffer<const float>&, const buffer<const float>&, const buffer<float>&) { return 0; }

// The program without its leading checks of the pipeline's buffers.
std::string program_of(const pipeline& p) {
  std::ostringstream os;
  os << p.body;
  std::istringstream lines(os.str());
  std::string result, line;
  while (std::getline(lines, line)) {
    if (line.rfind("check(", 0) == 0) continue;
    result.append(line).append("\n");
  }
  return result;
}

// The founding document's first example: intm = in * 2, out = intm + 1.
std::string elementwise(bool scheduled) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func mul = func::make(no_op_1, {{in, {point(x)}}}, {{intm, {x}}}, {.name = "multiply_2"});
  func add = func::make(no_op_1, {{intm, {point(x)}}}, {{out, {x}}}, {.name = "add_1"});
  if (scheduled) add.loops({{x, 1024}});
  return program_of(build_pipeline(ctx, {in}, {out}));
}

// The second: d = (a x b) x c, with (row, column) indices.
std::string matrix_product(bool scheduled) {
  node_context ctx;
  auto a = buffer_expr::make(ctx, "a", 2, sizeof(float));
  auto b = buffer_expr::make(ctx, "b", 2, sizeof(float));
  auto c = buffer_expr::make(ctx, "c", 2, sizeof(float));
  auto ab = buffer_expr::make(ctx, "ab", 2, sizeof(float));
  auto d = buffer_expr::make(ctx, "d", 2, sizeof(float));
  var i(ctx, "i"), j(ctx, "j");
  func f_ab = func::make(no_op_f, {{a, {point(i), a->dim(1).bounds}}, {b, {a->dim(1).bounds, point(j)}}},
                         {{ab, {i, j}}}, {.name = "ab"});
  func f_abc = func::make(no_op_f, {{ab, {point(i), c->dim(0).bounds}}, {c, {c->dim(0).bounds, point(j)}}},
                          {{d, {i, j}}}, {.name = "abc"});
  if (scheduled) f_abc.loops({{i, 1}});
  return program_of(build_pipeline(ctx, {a, b, c}, {d}));
}

// The README's own: intm = in * 2, out = the 3x3 sum of intm.
std::string stencil(bool scheduled) {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto intm = buffer_expr::make(ctx, "intm", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  var x(ctx, "x"), y(ctx, "y");
  func mul = func::make(no_op_1, {{in, {point(x), point(y)}}}, {{intm, {x, y}}}, {.name = "multiply_2"});
  func sum =
      func::make(no_op_1, {{intm, {bounds(x - 1, x + 1), bounds(y - 1, y + 1)}}}, {{out, {x, y}}}, {.name = "sum_3x3"});
  if (scheduled) sum.loops({{y, 1}});
  return program_of(build_pipeline(ctx, {in}, {out}));
}

const std::map<std::string, std::function<std::string()>>& examples() {
  static const std::map<std::string, std::function<std::string()>> all = {
      {"elementwise", [] { return elementwise(false); }},
      {"elementwise_loop", [] { return elementwise(true); }},
      {"matrix_product", [] { return matrix_product(false); }},
      {"matrix_product_rows", [] { return matrix_product(true); }},
      {"stencil", [] { return stencil(false); }},
      {"stencil_rows", [] { return stencil(true); }},
  };
  return all;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(readme, programs_are_current) {
  const std::string path = std::string(SLINKY_SOURCE_DIR).append("/README.md");
  std::string readme = read_file(path);
  ASSERT_FALSE(readme.empty()) << "cannot read " << path;
  const bool update = std::getenv("SLINKY_UPDATE_README") != nullptr;
  const std::string marker = "<!-- program: ";
  const std::string fence = "```\n";
  std::size_t found = 0;
  for (std::size_t at = readme.find(marker); at != std::string::npos; at = readme.find(marker, at + 1)) {
    const std::size_t name_end = readme.find(" -->", at);
    ASSERT_NE(name_end, std::string::npos);
    const std::string name = readme.substr(at + marker.size(), name_end - at - marker.size());
    auto example = examples().find(name);
    ASSERT_NE(example, examples().end()) << "README.md names an unknown example " << name;
    // The block: the first fence after the marker (with a language tag or none) to the next.
    const std::size_t open = readme.find("```", name_end);
    ASSERT_NE(open, std::string::npos);
    const std::size_t begin = readme.find('\n', open) + 1;
    const std::size_t end = readme.find(fence, begin);
    ASSERT_NE(end, std::string::npos) << "unterminated block of " << name;
    const std::string expected = example->second();
    if (update) {
      readme.replace(begin, end - begin, expected);
    } else {
      EXPECT_EQ(readme.substr(begin, end - begin), expected)
          << "README.md's program " << name << " is out of date: run this test with SLINKY_UPDATE_README=1";
    }
    ++found;
  }
  EXPECT_EQ(found, examples().size()) << "README.md should show every example";
  if (update) {
    std::ofstream out(path);
    out << readme;
  }
}

}  // namespace
}  // namespace slinky
