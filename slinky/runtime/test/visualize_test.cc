// visualize: the page replays the run it recorded (the same calls, allocations and frees as a
// real run), runs no callback, touches no input or output, and is self-contained.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"
#include "slinky/runtime/expr.h"
#include "slinky/runtime/pipeline.h"
#include "slinky/runtime/stmt.h"
#include "slinky/runtime/visualize.h"

namespace slinky {
namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// in -> intm (a ring buffer of 2 rows, computed a row at a time in a loop over the rows of out)
// -> out, and a copy of in to out2.
struct sliding_pipeline {
  node_context ctx;
  var in{ctx, "in"}, intm{ctx, "intm"}, out{ctx, "out"}, out2{ctx, "out2"}, y{ctx, "y"};
  var intm_y{ctx, "intm.y"}, out_y{ctx, "out.y"}, x{ctx, "x"}, yy{ctx, "yy"};
  std::atomic<int> calls{0};
  std::atomic<int> copies{0};
  pipeline p;

  sliding_pipeline() {
    auto counting = [this](const call_stmt*, eval_context&) -> index_t {
      ++calls;
      return 0;
    };
    call_attributes producer_attrs;
    producer_attrs.name = "producer";
    call_attributes consumer_attrs;
    consumer_attrs.name = "consumer";
    stmt body = block::make({
        crop_dim::make(intm_y, intm, 1, point(y), call_stmt::make(counting, {in}, {intm_y}, {}, producer_attrs)),
        crop_dim::make(out_y, out, 1, point(y), call_stmt::make(counting, {intm}, {out_y}, {}, consumer_attrs)),
    });
    stmt program = block::make({
        allocate::make(intm, memory_type::heap, 4,
                       {{bounds(buffer_min(out, 0), buffer_max(out, 0)), expr(), expr()},
                        {bounds(buffer_min(out, 1), buffer_max(out, 1)), expr(), 2}},
                       loop::make(y, loop::serial, bounds(buffer_min(out, 1), buffer_max(out, 1)), 1, body)),
        copy_stmt::make([this](const raw_buffer&, const raw_buffer&, const raw_buffer&) { ++copies; }, in, {x, yy},
                        out2, {x, yy}),
    });
    p = pipeline{.args = {}, .inputs = {in}, .outputs = {out, out2}, .constants = {}, .body = program};
    p.body.symbols = std::make_shared<node_context>(ctx);
  }
};

struct buffers {
  buffer<int, 2> in{{8, 6}}, out{{8, 6}}, out2{{8, 6}};
  buffers() {
    for (buffer<int, 2>* b : {&in, &out, &out2}) {
      b->allocate();
      for (index_t yy = 0; yy < 6; ++yy) {
        for (index_t xx = 0; xx < 8; ++xx) (*b)(xx, yy) = -7;
      }
    }
  }
};

TEST(visualize, replays_the_run_without_running_callbacks) {
  sliding_pipeline s;
  buffers b;
  const raw_buffer* ins[] = {&b.in};
  const raw_buffer* outs[] = {&b.out, &b.out2};

  // A real run, with every allocation through the hooks.
  eval_config config;
  config.auto_stack_threshold = 0;
  int allocations = 0, frees = 0;
  config.allocate = [&](var sym, raw_buffer* buf) {
    ++allocations;
    return default_allocate(sym, buf, 64);
  };
  config.free = [&](var sym, raw_buffer* buf, void* block) {
    ++frees;
    default_free(sym, buf, block);
  };
  eval_context c;
  c.config = &config;
  ASSERT_EQ(s.p.evaluate(ins, outs, c), 0);
  const int calls = s.calls + s.copies;
  EXPECT_EQ(s.calls, 12);
  EXPECT_GE(s.copies, 1);
  EXPECT_EQ(allocations, 1);

  s.calls = 0;
  s.copies = 0;
  std::ostringstream page;
  visualize(page, s.p, ins, outs);
  const std::string html = page.str();
  EXPECT_EQ(s.calls, 0);
  EXPECT_EQ(s.copies, 0);
  EXPECT_EQ(b.out(3, 2), -7);
  EXPECT_EQ(b.out2(0, 0), -7);

  EXPECT_NE(html.find("\"calls\":" + std::to_string(calls) + ","), std::string::npos) << html;
  EXPECT_EQ(count(html, "\"k\":\"call\""), 12u);
  EXPECT_EQ(count(html, "\"k\":\"copy\""), static_cast<std::size_t>(calls - 12));
  EXPECT_EQ(count(html, "\"k\":\"alloc\""), static_cast<std::size_t>(allocations));
  EXPECT_EQ(count(html, "\"k\":\"free\""), static_cast<std::size_t>(frees));
  // Names from the pipeline's node_context; the ring buffer is one memory of 8 x 2 elements.
  // (dims: [elements in memory, stride in bytes, folded]: 8 of 4 bytes, the fold of 2 rows of 32 bytes).
  EXPECT_NE(html.find("{\"name\":\"intm\",\"elem\":4,\"size\":16,\"kind\":\"allocation\",\"base\":0,"
                      "\"dims\":[[8,4,0],[2,32,1]]}"),
            std::string::npos)
      << html;
  EXPECT_NE(
      html.find("{\"name\":\"in\",\"elem\":4,\"size\":48,\"kind\":\"input\",\"base\":0,\"dims\":[[8,4,0],[6,32,0]]}"),
      std::string::npos);
  EXPECT_NE(html.find("\"n\":\"producer\""), std::string::npos);
  EXPECT_EQ(html.find("id=\"failure\""), std::string::npos);
  EXPECT_NE(html.find("\"failed\":false"), std::string::npos);
  // Self-contained.
  EXPECT_EQ(html.find("http"), std::string::npos);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(count(html, "</script>"), 1u);
}

TEST(visualize, a_failing_pipeline_shows_the_failure) {
  sliding_pipeline s;
  s.p.body = block::make({s.p.body, check::make(buffer_max(s.out, 0) < 3)});
  buffers b;
  const raw_buffer* ins[] = {&b.in};
  const raw_buffer* outs[] = {&b.out, &b.out2};
  std::ostringstream page;
  visualize(page, s.p, ins, outs);
  const std::string html = page.str();
  EXPECT_NE(html.find("The pipeline stopped: check failed: buffer_max(out, 0) &lt; 3"), std::string::npos) << html;
  EXPECT_NE(html.find("\"failed\":true"), std::string::npos);
  EXPECT_EQ(count(html, "\"k\":\"call\""), 12u);
}

// An allocation inside a loop is one memory, allocated and freed in each iteration.
TEST(visualize, an_allocation_in_a_loop_is_one_memory) {
  node_context ctx;
  var in(ctx, "in"), out(ctx, "out"), t(ctx, "t"), y(ctx, "y"), out_y(ctx, "out.y");
  auto nothing = [](const call_stmt*, eval_context&) -> index_t { return 0; };
  stmt body = loop::make(
      y, loop::serial, bounds(buffer_min(out, 1), buffer_max(out, 1)), 1,
      allocate::make(
          t, memory_type::heap, 4, {{bounds(buffer_min(out, 0), buffer_max(out, 0)), expr(), expr()}},
          block::make({call_stmt::make(nothing, {in}, {t}, {}, {}),
                       crop_dim::make(out_y, out, 1, point(y), call_stmt::make(nothing, {t}, {out_y}, {}, {}))})));
  pipeline p{.args = {}, .inputs = {in}, .outputs = {out}, .constants = {}, .body = body};
  p.body.symbols = std::make_shared<node_context>(ctx);
  buffers b;
  const raw_buffer* ins[] = {&b.in};
  const raw_buffer* outs[] = {&b.out};
  std::ostringstream page;
  visualize(page, p, ins, outs);
  const std::string html = page.str();
  EXPECT_EQ(count(html, "{\"name\":\"t\","), 1u) << html;
  EXPECT_EQ(count(html, "{\"k\":\"alloc\",\"n\":\"t\",\"m\":2,"), 6u) << html;
  EXPECT_EQ(count(html, "{\"k\":\"free\",\"n\":\"t\",\"m\":2,"), 6u) << html;
}

// The page's replay logic, run by node (when installed) to the last step: it must count the calls
// the run made and find every element of the outputs written.
TEST(visualize, the_replay_counts_every_call_and_write) {
  if (std::system("node --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "node is not installed";
  sliding_pipeline s;
  buffers b;
  const raw_buffer* ins[] = {&b.in};
  const raw_buffer* outs[] = {&b.out, &b.out2};
  std::ostringstream page;
  visualize(page, s.p, ins, outs);
  const std::string html = page.str();
  const std::size_t begin = html.find("<script>") + 8, end = html.find("</script>");
  ASSERT_LT(begin, end);
  const std::string path = testing::TempDir() + "slinky_visualize_test.js";
  {
    std::ofstream js(path);
    // A stand-in for the browser's DOM, enough for the page's drawing code: the slider is moved
    // to the last step and the page must say it replayed every call.
    js << R"js(
const handlers = {};
function element() {
  return {style: {}, dataset: {}, children: [], textContent: "", value: "0", max: "0",
          appendChild(c) { this.children.push(c); },
          addEventListener(e, f) { handlers[e] = f; },
          getContext() {
            return {createImageData: (w, h) => ({data: new Uint8ClampedArray(w * h * 4)}), putImageData() {}};
          }};
}
const elements = {};
var document = {body: element(), createElement: element, addEventListener(e, f) { handlers["document " + e] = f; },
                getElementById(id) { return elements[id] || (elements[id] = element()); }};
)js" << html.substr(begin, end - begin)
       << R"js(
elements.slider.value = elements.slider.max;
handlers.input();
if (document.body.dataset.replayedCalls != data.calls) throw new Error("replayed " + document.body.dataset.replayedCalls);
if (!elements.status.textContent.startsWith("step " + data.steps.length + " of ")) throw new Error(elements.status.textContent);
const s = makeState();
advance(s, data.steps.length);
console.log(s.calls + ' ' + data.calls + ' ' + s.written.map(w => w.reduce((a, b) => a + b, 0)).join(' '));
)js";
  }
  FILE* f = popen(("node " + path + " 2>&1").c_str(), "r");
  ASSERT_NE(f, nullptr);
  char line[256] = {};
  ASSERT_NE(fgets(line, sizeof(line), f), nullptr);
  pclose(f);
  std::remove(path.c_str());
  std::istringstream result(line);
  ASSERT_TRUE(std::isdigit(static_cast<unsigned char>(line[0]))) << line;
  int replayed, calls, written_in, written_out, written_out2, written_intm;
  result >> replayed >> calls >> written_in >> written_out >> written_out2 >> written_intm;
  EXPECT_EQ(replayed, calls);
  EXPECT_GE(calls, 13);
  // An input holds data from the start.
  EXPECT_EQ(written_in, 8 * 6);
  EXPECT_EQ(written_out, 8 * 6);
  EXPECT_EQ(written_out2, 8 * 6);
  EXPECT_EQ(written_intm, 8 * 2);
}

}  // namespace
}  // namespace slinky
