// Compatibility tests for slinky/base/chrome_trace.h (docs/api.md section 10; checklist item 14
// of README.md): the JSON it writes, scoped_trace, global(), and its use as a pipeline's tracing
// hook.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "slinky/base/chrome_trace.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"

namespace {

using namespace slinky;

// One trace event: the string and number fields of a flat JSON object.
struct event {
  std::map<std::string, std::string> strings;
  std::map<std::string, double> numbers;
};

// A parser for what a trace is: a JSON array of flat objects with string and number values.
class trace_parser {
  const std::string& s_;
  std::size_t i_ = 0;

  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool consume(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool parse_string(std::string& out) {
    if (!consume('"')) return false;
    out.clear();
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
      out += s_[i_++];
    }
    return consume('"');
  }
  bool parse_number(double& out) {
    skip_space();
    const char* begin = s_.c_str() + i_;
    char* end = nullptr;
    out = std::strtod(begin, &end);
    if (end == begin) return false;
    i_ += end - begin;
    return true;
  }
  bool parse_object(event& e) {
    if (!consume('{')) return false;
    if (consume('}')) return true;
    do {
      std::string key;
      if (!parse_string(key) || !consume(':')) return false;
      skip_space();
      if (i_ < s_.size() && s_[i_] == '"') {
        if (!parse_string(e.strings[key])) return false;
      } else if (!parse_number(e.numbers[key])) {
        return false;
      }
    } while (consume(','));
    return consume('}');
  }

public:
  explicit trace_parser(const std::string& s) : s_(s) {}
  // Parses the whole text; false if it is not an array of flat objects.
  bool parse(std::vector<event>& events) {
    if (!consume('[')) return false;
    if (consume(']')) return true;
    do {
      events.emplace_back();
      if (!parse_object(events.back())) return false;
    } while (consume(','));
    if (!consume(']')) return false;
    skip_space();
    return i_ == s_.size();
  }
};

std::vector<event> named_events(const std::vector<event>& all, const std::string& name) {
  std::vector<event> result;
  for (const event& e : all) {
    auto n = e.strings.find("name");
    if (n != e.strings.end() && n->second == name) result.push_back(e);
  }
  return result;
}

}  // namespace

TEST(compat_chrome_trace, writes_duration_events) {
  std::stringstream os;
  {
    chrome_trace trace(os);
    trace.begin("outer");
    trace.begin("inner");
    trace.end("inner");
    std::thread other([&]() { scoped_trace s(&trace, "on_other_thread"); });
    other.join();
    trace.end("outer");
  }
  std::vector<event> events;
  ASSERT_TRUE(trace_parser(os.str()).parse(events)) << os.str();
  const std::vector<event> outer = named_events(events, "outer");
  const std::vector<event> inner = named_events(events, "inner");
  const std::vector<event> other = named_events(events, "on_other_thread");
  ASSERT_EQ(outer.size(), 2u);
  ASSERT_EQ(inner.size(), 2u);
  ASSERT_EQ(other.size(), 2u);
  for (const std::vector<event>* pair : {&outer, &inner, &other}) {
    const event& b = (*pair)[0];
    const event& e = (*pair)[1];
    EXPECT_EQ(b.strings.at("ph"), "B");
    EXPECT_EQ(e.strings.at("ph"), "E");
    for (const event* ev : {&b, &e}) {
      EXPECT_EQ(ev->strings.at("cat"), "slinky");
      EXPECT_EQ(ev->numbers.at("pid"), 0);
      EXPECT_TRUE(ev->numbers.count("tid"));
      EXPECT_TRUE(ev->numbers.count("ts"));
      EXPECT_TRUE(ev->numbers.count("tts"));
    }
    EXPECT_LE(b.numbers.at("ts"), e.numbers.at("ts"));
  }
  EXPECT_EQ(outer[0].numbers.at("tid"), inner[0].numbers.at("tid"));
  EXPECT_NE(outer[0].numbers.at("tid"), other[0].numbers.at("tid"));
  EXPECT_LE(outer[0].numbers.at("ts"), inner[0].numbers.at("ts"));
  EXPECT_GE(outer[1].numbers.at("ts"), inner[1].numbers.at("ts"));
}

TEST(compat_chrome_trace, global_and_null_scoped_trace) {
  // SLINKY_TRACE is not set for the tests: there is no global trace, and scoped traces do nothing.
  ASSERT_EQ(std::getenv("SLINKY_TRACE"), nullptr);
  EXPECT_EQ(chrome_trace::global(), nullptr);
  { scoped_trace s("nothing"); }
  { scoped_trace s(nullptr, "nothing"); }
}

TEST(compat_chrome_trace, as_the_tracing_hook_of_a_pipeline) {
  node_context ctx;
  var x(ctx, "x");
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  call_stmt::attributes attrs;
  attrs.name = "negate";
  func f = func::make(
      [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
        for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i) = -a(i);
        return 0;
      },
      {{in, {point(x)}}}, {{out, {x}}}, attrs);
  f.loops({{x, 4}});
  build_options options;
  options.trace = true;
  pipeline p = build_pipeline(ctx, {in}, {out}, options);

  std::stringstream os;
  {
    chrome_trace t(os);
    eval_config cfg;
    cfg.trace_begin = [&](const char* n) {
      t.begin(n);
      return (index_t)n;
    };
    cfg.trace_end = [&](index_t k) { t.end((const char*)k); };
    eval_context ectx;
    ectx.config = &cfg;
    buffer<int, 1> in_buf({10}), out_buf({10});
    in_buf.allocate();
    out_buf.allocate();
    for (int i = 0; i < 10; ++i) in_buf(i) = i;
    const raw_buffer* inputs[] = {&in_buf};
    const raw_buffer* outputs[] = {&out_buf};
    ASSERT_EQ(p.evaluate(inputs, outputs, ectx), 0);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(out_buf(i), -i);
  }
  std::vector<event> events;
  ASSERT_TRUE(trace_parser(os.str()).parse(events)) << os.str();
  EXPECT_EQ(named_events(events, "pipeline").size(), 2u);
  EXPECT_EQ(named_events(events, "loop x").size(), 2u);
  EXPECT_GE(named_events(events, "negate").size(), 2u);
}
