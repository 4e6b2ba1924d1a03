// A client of an installed slinky that does what hosts do: brings its own thread pool (a subclass
// of slinky::thread_pool whose work runs on the threads that wait for it) and inspects a built
// program with an IR visitor (a subclass of recursive_node_visitor). tools/check_install.sh
// builds it in every usual client configuration (RTTI on and off, AddressSanitizer with
// UndefinedBehaviorSanitizer, ThreadSanitizer) against the installed package, and runs it.
#include <cstdio>
#include <deque>
#include <mutex>
#include <utility>

#include "slinky/base/thread_pool.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/stmt.h"

namespace {

using namespace slinky;

// Work runs only on threads that wait (thread_count() is 0): wait_for runs queued items.
class caller_runs_pool : public thread_pool {
  class work : public task {
  public:
    std::size_t n, next = 0, finished = 0;
    task_body body;
    work(std::size_t n, task_body body) : n(n), body(std::move(body)) {}
    bool done() const override { return finished == n; }
  };
  std::recursive_mutex mutex_;
  std::deque<ref_count<work>> queue_;

  // Runs one queued item; false if there is none.
  bool run_one() {
    ref_count<work> w;
    std::size_t i = 0;
    {
      std::lock_guard<std::recursive_mutex> lock(mutex_);
      while (!queue_.empty() && queue_.front()->next == queue_.front()->n) queue_.pop_front();
      if (queue_.empty()) return false;
      w = queue_.front();
      i = w->next++;
    }
    w->body(i);
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    ++w->finished;
    return true;
  }

public:
  using thread_pool::enqueue;
  int thread_count() const override { return 0; }
  ref_count<task> enqueue(std::size_t n, task_body body, int) override {
    ref_count<work> w(new work(n, std::move(body)));
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    queue_.push_back(w);
    return ref_count<task>(w.get());
  }
  void wait_for(task* t) override {
    while (!t->done()) {
      if (!run_one()) break;
    }
  }
  void wait_for(predicate_ref condition) override {
    while (!condition()) {
      if (!run_one()) break;
    }
  }
  void atomic_call(function_ref<void()> fn) override {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    fn();
  }
};

// Counts the calls of a program.
class call_counter : public recursive_node_visitor {
public:
  int calls = 0;
  using recursive_node_visitor::visit;
  void visit(const call_stmt* op) override {
    ++calls;
    recursive_node_visitor::visit(op);
  }
};

index_t add_one(const buffer<const int>& in, const buffer<int>& out) {
  for (index_t x = out.dim(0).begin(); x < out.dim(0).end(); ++x) out(x) = in(x) + 1;
  return 0;
}

}  // namespace

int main() {
  node_context ctx;
  auto in = buffer_expr::make(ctx, "in", 1, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 1, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 1, sizeof(int));
  var x(ctx, "x");
  func f = func::make(add_one, {{in, {point(x)}}}, {{t, {x}}});
  func g = func::make(add_one, {{t, {point(x)}}}, {{out, {x}}});
  g.loops({{x, 16, loop::parallel}});
  pipeline p = build_pipeline(ctx, {in}, {out});

  call_counter counter;
  p.body.accept(&counter);
  if (counter.calls != 2) {
    std::printf("hosts: %d calls in the program, expected 2\n", counter.calls);
    return 1;
  }

  buffer<int, 1> in_buf({1000}), out_buf({1000});
  in_buf.allocate();
  out_buf.allocate();
  for (int i = 0; i < 1000; ++i) in_buf(i) = i;
  caller_runs_pool pool;
  eval_config config;
  config.thread_pool = &pool;
  eval_context c;
  c.config = &config;
  if (p.evaluate({&in_buf}, {&out_buf}, c) != 0) return 1;
  for (int i = 0; i < 1000; ++i) {
    if (out_buf(i) != i + 2) {
      std::printf("hosts: wrong result at %d\n", i);
      return 1;
    }
  }
  return 0;
}
