// Compatibility tests for the thread pool interface that hosts implement and the bundled
// thread_pool_impl (docs/api.md section 8 and the host pool of section 11; silent item S20 and
// checklist item 10 of README.md), written as a host (an inference engine with its own threads)
// would use them.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <type_traits>
#include <vector>

#include "slinky/base/function_ref.h"
#include "slinky/base/ref_count.h"
#include "slinky/base/thread_pool.h"
#include "slinky/base/thread_pool_impl.h"
#include "slinky/builder/pipeline.h"
#include "slinky/runtime/buffer.h"
#include "slinky/runtime/evaluate.h"

namespace {

using namespace slinky;
using namespace std::chrono_literals;

// Polls cond for up to 10 s.
template <typename F>
bool eventually(F cond) {
  for (int i = 0; i < 10000; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return cond();
}

// A host pool in the style of an inference engine's: its own background threads run "jobs"; the
// slinky work itself is scheduled by a worker-less thread_pool_impl, fed by jobs that call
// work_until_idle().
class host_pool : public thread_pool {
  thread_pool_impl inner_{0};
  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  int idle_ = 0;
  bool stop_ = false;

  void schedule(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> l(m_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
  }

public:
  std::atomic<int> jobs_run{0};

  int idle() {
    std::lock_guard<std::mutex> l(m_);
    return idle_;
  }

  explicit host_pool(int n) {
    inner_.expect_workers(n);
    for (int i = 0; i < n; ++i) {
      threads_.emplace_back([this]() {
        std::unique_lock<std::mutex> l(m_);
        while (true) {
          ++idle_;
          cv_.wait(l, [this]() { return stop_ || !jobs_.empty(); });
          --idle_;
          if (jobs_.empty() && stop_) return;
          std::function<void()> job = std::move(jobs_.front());
          jobs_.pop_front();
          l.unlock();
          job();
          ++jobs_run;
          l.lock();
        }
      });
    }
  }
  ~host_pool() override {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  int thread_count() const override { return static_cast<int>(threads_.size()); }
  using thread_pool::enqueue;
  ref_count<task> enqueue(std::size_t n, task_body body, int max_workers = std::numeric_limits<int>::max()) override {
    ref_count<task> t = inner_.enqueue(n, std::move(body), max_workers);
    int idle;
    {
      std::lock_guard<std::mutex> l(m_);
      idle = idle_;
    }
    const int jobs = std::min({max_workers, static_cast<int>(std::min<std::size_t>(n, 1 << 20)), idle});
    for (int i = 0; i < jobs; ++i) schedule([this]() { inner_.work_until_idle(); });
    return t;
  }
  void wait_for(task* t) override { inner_.wait_for(t); }
  void wait_for(predicate_ref condition) override { inner_.wait_for(condition); }
  void atomic_call(function_ref<void()> t) override { inner_.atomic_call(t); }
};

// A minimal pool implementing the interface from scratch, serially: checks that the interface
// can be implemented as the contract states (std::function bodies, task::done, destroy).
class serial_pool : public thread_pool {
public:
  class serial_task : public task {
  public:
    bool finished = false;
    static int destroyed;
    bool done() const override { return finished; }
    void destroy() override {
      ++destroyed;
      delete this;
    }
  };
  int thread_count() const override { return 0; }
  using thread_pool::enqueue;
  ref_count<task> enqueue(std::size_t n, task_body body, int = std::numeric_limits<int>::max()) override {
    serial_task* t = new serial_task();
    for (std::size_t i = 0; i < n; ++i) body(i);
    t->finished = true;
    return t;
  }
  void wait_for(task* t) override { EXPECT_TRUE(t->done()); }
  void wait_for(predicate_ref condition) override { EXPECT_TRUE(condition()); }
  void atomic_call(function_ref<void()> t) override { t(); }
};
int serial_pool::serial_task::destroyed = 0;

}  // namespace

TEST(compat_thread_pool, interface_types) {
  static_assert(std::is_same_v<thread_pool::task_body, std::function<void(std::size_t)>>, "task_body");
  static_assert(std::is_same_v<thread_pool::predicate_ref, function_ref<bool()>>, "predicate_ref");
  static_assert(std::is_base_of_v<ref_counted<thread_pool::task>, thread_pool::task>, "task is ref counted");
  static_assert(std::is_abstract_v<thread_pool::task>, "task::done is pure virtual");
  static_assert(std::is_final_v<thread_pool_impl>, "thread_pool_impl is final");
  static_assert(cache_line_size == 64, "cache_line_size");

  serial_pool::serial_task::destroyed = 0;
  serial_pool pool;
  {
    std::vector<int> order;
    ref_count<thread_pool::task> t = pool.enqueue(3, [&](std::size_t i) { order.push_back(static_cast<int>(i)); });
    pool.wait_for(t);
    EXPECT_TRUE(t->done());
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
  }
  EXPECT_EQ(serial_pool::serial_task::destroyed, 1);  // release goes through the virtual destroy()
  // enqueue(Fn): a one-item task.
  bool ran = false;
  ref_count<thread_pool::task> single = pool.enqueue([&]() { ran = true; });
  pool.wait_for(single);
  EXPECT_TRUE(ran);
  // parallel_for with thread_count() == 0: a serial loop in order on the caller.
  std::vector<std::size_t> seen;
  pool.parallel_for(4, [&](std::size_t i) { seen.push_back(i); });
  EXPECT_EQ(seen, (std::vector<std::size_t>{0, 1, 2, 3}));
}

TEST(compat_thread_pool_impl, default_workers_and_thread_count) {
  // S20: three workers by default; thread_count() counts the workers only.
  thread_pool_impl pool;
  EXPECT_EQ(pool.thread_count(), 3);
  thread_pool_impl one(1);
  EXPECT_EQ(one.thread_count(), 1);
  thread_pool_impl none(0);
  EXPECT_EQ(none.thread_count(), 0);
}

TEST(compat_thread_pool_impl, init_runs_on_every_worker) {
  std::atomic<int> inits{0};
  std::mutex m;
  std::set<std::thread::id> ids;
  {
    thread_pool_impl pool(2, [&]() {
      std::lock_guard<std::mutex> l(m);
      ids.insert(std::this_thread::get_id());
      ++inits;
    });
    EXPECT_TRUE(eventually([&]() { return inits == 2; }));
  }
  EXPECT_EQ(inits, 2);
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 0u);
}

TEST(compat_thread_pool_impl, tasks_and_parallel_for) {
  thread_pool_impl pool(3);
  std::vector<std::atomic<int>> hits(1000);
  ref_count<thread_pool::task> t = pool.enqueue(
      1000, [&](std::size_t i) { ++hits[i]; }, 2);
  pool.wait_for(t);
  EXPECT_TRUE(t->done());
  for (const auto& h : hits) ASSERT_EQ(h, 1);

  std::atomic<bool> ran{false};
  ref_count<thread_pool::task> single = pool.enqueue([&]() { ran = true; });
  pool.wait_for(single);
  EXPECT_TRUE(ran);

  // n == 1 runs inline on the caller; max_workers == 1 runs serially, in order, on the caller.
  std::thread::id inline_id;
  pool.parallel_for(1, [&](std::size_t) { inline_id = std::this_thread::get_id(); });
  EXPECT_EQ(inline_id, std::this_thread::get_id());
  std::vector<std::size_t> order;
  pool.parallel_for(
      5,
      [&](std::size_t i) {
        EXPECT_EQ(std::this_thread::get_id(), inline_id);
        order.push_back(i);
      },
      1);
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 3, 4}));

  // Nested parallel_for does not deadlock.
  std::atomic<int> total{0};
  pool.parallel_for(8, [&](std::size_t) { pool.parallel_for(8, [&](std::size_t) { ++total; }); });
  EXPECT_EQ(total, 64);

  // wait_for(condition) returns once a condition changed by atomic_call holds.
  bool flag = false;
  std::thread setter([&]() {
    std::this_thread::sleep_for(5ms);
    pool.atomic_call([&]() { flag = true; });
  });
  pool.wait_for([&]() { return flag; });
  EXPECT_TRUE(flag);
  setter.join();
}

TEST(compat_thread_pool_impl, each_thread_runs_its_own_copy_of_the_body) {
  // The reference evaluator keeps per-thread state inside the task body: every thread that runs
  // items must run them on its own copy.
  thread_pool_impl pool(3);
  std::mutex m;
  std::map<int, std::set<std::thread::id>> users;
  std::atomic<int> next_id{0};
  // Each object gets its own id, so a copy freed and another allocated at the same address are
  // told apart.
  struct body_fn {
    std::mutex* m;
    std::map<int, std::set<std::thread::id>>* users;
    std::atomic<int>* next_id;
    int id;
    body_fn(std::mutex* m, std::map<int, std::set<std::thread::id>>* users, std::atomic<int>* next_id)
        : m(m), users(users), next_id(next_id), id((*next_id)++) {}
    body_fn(const body_fn& o) : m(o.m), users(o.users), next_id(o.next_id), id((*next_id)++) {}
    body_fn& operator=(const body_fn&) = delete;
    void operator()(std::size_t) {
      {
        std::lock_guard<std::mutex> l(*m);
        (*users)[id].insert(std::this_thread::get_id());
      }
      std::this_thread::sleep_for(1ms);
    }
  };
  pool.parallel_for(64, body_fn(&m, &users, &next_id));
  std::set<std::thread::id> threads;
  for (const auto& u : users) {
    EXPECT_EQ(u.second.size(), 1u) << "a copy of the body was shared by several threads";
    threads.insert(u.second.begin(), u.second.end());
  }
  EXPECT_GE(threads.size(), 1u);
}

TEST(compat_thread_pool_impl, external_workers) {
  // A pool with no threads of its own, fed by external threads through run_worker.
  thread_pool_impl pool(0);
  EXPECT_EQ(pool.thread_count(), 0);
  bool stop = false;
  std::vector<std::thread> workers;
  for (int i = 0; i < 2; ++i) {
    workers.emplace_back([&]() { pool.run_worker([&]() { return stop; }); });
  }
  EXPECT_TRUE(eventually([&]() { return pool.thread_count() == 2; }));
  // Three threads (the caller and both workers) must take part at once to finish this.
  std::atomic<int> arrived{0};
  std::atomic<bool> timed_out{false};
  pool.parallel_for(3, [&](std::size_t) {
    ++arrived;
    if (!eventually([&]() { return arrived >= 3; })) timed_out = true;
  });
  EXPECT_FALSE(timed_out);
  pool.atomic_call([&]() { stop = true; });
  for (std::thread& t : workers) t.join();

  // work_until_idle runs what is queued and returns.
  std::atomic<int> done{0};
  ref_count<thread_pool::task> t = pool.enqueue(10, [&](std::size_t) { ++done; });
  pool.work_until_idle();
  EXPECT_EQ(done, 10);
  pool.wait_for(t);
  EXPECT_TRUE(t->done());
  pool.expect_workers(4);
  EXPECT_EQ(pool.thread_count(), 4);
}

TEST(compat_host_pool, nested_parallel_for_and_pipelines) {
  host_pool pool(3);
  EXPECT_EQ(pool.thread_count(), 3);
  ASSERT_TRUE(eventually([&]() { return pool.idle() == 3; }));  // the host's threads are waiting for jobs
  std::atomic<int> total{0};
  pool.parallel_for(6, [&](std::size_t) { pool.parallel_for(5, [&](std::size_t) { ++total; }); });
  EXPECT_EQ(total, 30);
  EXPECT_TRUE(eventually([&]() { return pool.jobs_run > 0; }));  // the host's threads took part

  // A parallel pipeline on the host pool.
  node_context ctx;
  var x(ctx, "x"), y(ctx, "y");
  auto in = buffer_expr::make(ctx, "in", 2, sizeof(int));
  auto t = buffer_expr::make(ctx, "t", 2, sizeof(int));
  auto out = buffer_expr::make(ctx, "out", 2, sizeof(int));
  auto add1 = [](const buffer<const int>& a, const buffer<int>& b) -> index_t {
    for (index_t j = b.dim(1).begin(); j < b.dim(1).end(); ++j) {
      for (index_t i = b.dim(0).begin(); i < b.dim(0).end(); ++i) b(i, j) = a(i, j) + 1;
    }
    return 0;
  };
  func f = func::make(add1, {{in, {point(x), point(y)}}}, {{t, {x, y}}});
  func g = func::make(add1, {{t, {point(x), point(y)}}}, {{out, {x, y}}});
  g.loops({{y, 2, loop::parallel}});
  f.compute_at({&g, y});
  pipeline p = build_pipeline(ctx, {in}, {out});
  eval_config cfg;
  cfg.thread_pool = &pool;
  eval_context ectx;
  ectx.config = &cfg;
  buffer<int, 2> in_buf({16, 40}), out_buf({16, 40});
  in_buf.allocate();
  out_buf.allocate();
  for (int j = 0; j < 40; ++j) {
    for (int i = 0; i < 16; ++i) in_buf(i, j) = i * j;
  }
  const raw_buffer* inputs[] = {&in_buf};
  const raw_buffer* outputs[] = {&out_buf};
  ASSERT_EQ(p.evaluate(inputs, outputs, ectx), 0);
  for (int j = 0; j < 40; ++j) {
    for (int i = 0; i < 16; ++i) ASSERT_EQ(out_buf(i, j), i * j + 2);
  }
}
