// The bundled thread pool: a task is a loop whose items any thread claims from an atomic counter,
// and threads waiting for a task or a condition run queued items meanwhile.
#include "slinky/base/thread_pool_impl.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "slinky/base/assert.h"

namespace slinky {

namespace {

// How long an idle thread watches for news before it goes to sleep: first spinning, then
// yielding its core to other runnable threads between checks. Waking a sleeping thread costs a
// system call, which was measured at about 30 us for the waker on a 2-core VM; with a shorter
// watch, a caller running one loop after the other paid that on every loop.
constexpr std::chrono::microseconds pause_time{10};
constexpr std::chrono::microseconds spin_time{200};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Calls news() until it returns true (then returns true) or spin_time has passed.
template <typename Fn>
bool spin_until(Fn&& news) {
  using clock = std::chrono::steady_clock;
  // Most waits are short: check a few times before reading the clock, which costs more.
  for (int i = 0; i < 64; ++i) {
    if (news()) return true;
    cpu_relax();
  }
  const clock::time_point start = clock::now();
  for (int i = 0;; ++i) {
    if (news()) return true;
    if ((i & 63) == 63 && clock::now() - start >= pause_time) break;
    cpu_relax();
  }
  for (;;) {
    if (news()) return true;
    if (clock::now() - start >= spin_time) return false;
    std::this_thread::yield();
  }
}

}  // namespace

class thread_pool_impl::task_impl final : public thread_pool::task {
public:
  using body_ref = function_ref<void(std::size_t)>;

  // A task owning its body: each thread calls its own copy.
  task_impl(std::size_t n, task_body body, int max_workers, int threads)
      : owned_body_(std::move(body)), n_(n), max_workers_(std::max(max_workers, 1)),
        chunk_divisor_(2 * static_cast<std::size_t>(std::min(max_workers_, threads))) {}
  // A task calling the caller's body, which outlives it (enqueue_ref).
  task_impl(std::size_t n, body_ref body, int max_workers, int threads)
      : body_(body), n_(n), max_workers_(std::max(max_workers, 1)),
        chunk_divisor_(2 * static_cast<std::size_t>(std::min(max_workers_, threads))) {}

  bool done() const override { return finished(); }

  int max_workers() const { return max_workers_; }
  // Whether every item has returned. Sequentially consistent, like the update in finish(): a
  // waiter that announces its sleep and then sees this false is sure to be woken (wait_until).
  bool finished() const { return done_.load() == n_; }
  // Whether every item has been claimed.
  bool exhausted() const { return next_.load(std::memory_order_relaxed) >= n_; }
  bool has_room() const { return active_.load(std::memory_order_relaxed) < max_workers_; }
  std::size_t size() const { return n_; }
  bool owns_body() const { return !body_; }
  const task_body& owned_body() const { return owned_body_; }
  body_ref body() const { return body_; }

  // Counts the calling thread among those running items, unless max_workers already are.
  bool try_join() {
    int active = active_.load(std::memory_order_relaxed);
    do {
      if (active >= max_workers_) return false;
    } while (!active_.compare_exchange_weak(active, active + 1, std::memory_order_acquire, std::memory_order_relaxed));
    return true;
  }
  // Releases the place taken by try_join, after the thread's last item returned.
  void leave() { active_.fetch_sub(1, std::memory_order_release); }

  // Claims the items [begin, end), the next chunk in order; returns false if none is left. A
  // chunk is a fraction of what is left, so claims are rare while there is a lot of work, and
  // the last items are claimed one by one to balance the load.
  bool claim(std::size_t& begin, std::size_t& end) {
    std::size_t next = next_.load(std::memory_order_relaxed);
    for (;;) {
      if (next >= n_) return false;
      std::size_t chunk = std::max<std::size_t>((n_ - next) / chunk_divisor_, 1);
      if (next_.compare_exchange_weak(next, next + chunk, std::memory_order_relaxed)) {
        begin = next;
        end = next + chunk;
        return true;
      }
    }
  }

  // Records that `count` claimed items returned; returns true if they were the last ones.
  bool finish(std::size_t count) { return done_.fetch_add(count) + count == n_; }

private:
  // Exactly one of the two is set. A function_ref is not meant to be stored, but enqueue_ref's
  // caller keeps the body valid until wait_for(task) returns, and no item is claimed after the
  // last one returned.
  const task_body owned_body_;
  const body_ref body_;
  const std::size_t n_;
  const int max_workers_;
  const std::size_t chunk_divisor_;

  std::atomic<std::size_t> next_{0};
  std::atomic<std::size_t> done_{0};
  std::atomic<int> active_{0};
};

namespace {

// The tasks a thread is running items of, innermost first: a linked list through the stack
// frames of run_items.
struct running_frame {
  const thread_pool::task* task;
  const running_frame* parent;
};
thread_local const running_frame* innermost_frame = nullptr;

bool running_on_this_thread(const thread_pool::task* t) {
  for (const running_frame* f = innermost_frame; f; f = f->parent) {
    if (f->task == t) return true;
  }
  return false;
}

}  // namespace

thread_pool_impl::thread_pool_impl(int workers, function_ref<void()> init) : workers_(std::max(workers, 0)) {
  expect_workers(workers_);
  running_workers_.store(workers_, std::memory_order_relaxed);
  // init refers to the caller's callable: wait until every thread is done with it.
  std::mutex init_mutex;
  std::condition_variable init_done;
  int initializing = init ? workers_ : 0;
  threads_.reserve(workers_);
  for (int i = 0; i < workers_; ++i) {
    if (!init) {
      threads_.emplace_back([this]() { worker_main(); });
      continue;
    }
    threads_.emplace_back([this, init, &init_mutex, &init_done, &initializing]() {
      init();
      {
        std::lock_guard<std::mutex> l(init_mutex);
        if (--initializing == 0) init_done.notify_one();
      }
      // The constructor may have returned: the captured references are dangling from here.
      worker_main();
    });
  }
  std::unique_lock<std::mutex> l(init_mutex);
  init_done.wait(l, [&]() { return initializing == 0; });
}

thread_pool_impl::~thread_pool_impl() {
  {
    std::lock_guard<std::mutex> l(mutex_);
    stop_.store(true, std::memory_order_relaxed);
  }
  cv_work_.notify_all();
  // Workers leave once they find nothing to run.
  for (std::thread& t : threads_) t.join();
  // Run what is left here if there were no workers.
  std::unique_lock<std::mutex> l(mutex_);
  while (ref_count<task_impl> t = find_work_locked()) {
    l.unlock();
    run_items(t.get());
    t = nullptr;
    l.lock();
  }
}

int thread_pool_impl::thread_count() const {
  return std::max(expected_workers_.load(std::memory_order_relaxed), running_workers_.load(std::memory_order_relaxed));
}

void thread_pool_impl::expect_workers(int n) { expected_workers_.store(std::max(n, 0), std::memory_order_relaxed); }

ref_count<thread_pool::task> thread_pool_impl::enqueue(std::size_t n, task_body body, int max_workers) {
  // The chunk size divides the work among the workers and the thread that waits.
  ref_count<task_impl> t = new task_impl(n, std::move(body), max_workers, thread_count() + 1);
  enqueue_task(t);
  return t;
}

ref_count<thread_pool::task> thread_pool_impl::enqueue_ref(std::size_t n, function_ref<void(std::size_t)> body,
                                                           int max_workers) {
  ref_count<task_impl> t = new task_impl(n, body, max_workers, thread_count() + 1);
  enqueue_task(t);
  return t;
}

void thread_pool_impl::enqueue_task(const ref_count<task_impl>& t) {
  if (t->size() == 0) return;

  // The thread that waits for t runs items too; wake threads for the rest. A task of one item
  // (enqueue(Fn)) is usually not waited for at once: wake a thread for it.
  const std::size_t helpers = t->size() == 1 ? 1 : std::min<std::size_t>(t->size(), t->max_workers()) - 1;
  std::size_t wake_workers;
  bool wake_waiters;
  {
    std::lock_guard<std::mutex> l(mutex_);
    // Tasks are dropped from the queue lazily; without this a pool whose callers run all the
    // items themselves would never drop any.
    prune_locked();
    queue_.push_back(t);
    enqueued_.fetch_add(1, std::memory_order_relaxed);
    wake_workers = std::min<std::size_t>(helpers, idle_sleepers_);
    idle_sleepers_ -= static_cast<int>(wake_workers);
    wake_tokens_ += static_cast<int>(wake_workers);
    // Threads in wait_for, run_worker or wait_for(condition) may help with the rest.
    wake_waiters = helpers > wake_workers && wake_waiters_locked();
  }
  for (std::size_t i = 0; i < wake_workers; ++i) cv_work_.notify_one();
  if (wake_waiters) cv_wait_.notify_all();
}

namespace {

// Runs the items [begin, end) and the chunks claimed after them.
template <typename Body, typename Finish>
void run_claimed(thread_pool_impl::task_impl* t, const Body& body, std::size_t begin, std::size_t end,
                 const Finish& finish) {
  do {
    for (std::size_t i = begin; i < end; ++i) body(i);
    finish(end - begin);
  } while (t->claim(begin, end));
}

}  // namespace

bool thread_pool_impl::run_items(task_impl* t) {
  if (!t->try_join()) return false;
  running_frame frame{t, innermost_frame};
  innermost_frame = &frame;
  auto finish = [this, t](std::size_t count) {
    if (t->finish(count) && waiting_sleepers_.load() > 0) {
      // Taking the lock means the waiter is either before its last check or asleep, so this
      // notification is not lost.
      std::lock_guard<std::mutex> l(mutex_);
      if (wake_waiters_locked()) cv_wait_.notify_all();
    }
  };
  std::size_t begin, end;
  if (t->claim(begin, end)) {
    if (t->owns_body()) {
      // This thread's own copy of the body, made only once it has items to run.
      const task_body body = t->owned_body();
      run_claimed(t, body, begin, end, finish);
    } else {
      // A local copy can stay in registers across the calls.
      const task_impl::body_ref body = t->body();
      run_claimed(t, body, begin, end, finish);
    }
  }
  innermost_frame = frame.parent;
  t->leave();
  return true;
}

void thread_pool_impl::prune_locked() {
  queue_.erase(
      std::remove_if(queue_.begin(), queue_.end(), [](const ref_count<task_impl>& t) { return t->exhausted(); }),
      queue_.end());
}

ref_count<thread_pool_impl::task_impl> thread_pool_impl::find_work_locked() {
  prune_locked();
  for (const ref_count<task_impl>& t : queue_) {
    if (t->has_room() && !running_on_this_thread(t.get())) return t;
  }
  return ref_count<task_impl>();
}

void thread_pool_impl::worker_main() {
  std::unique_lock<std::mutex> l(mutex_);
  for (;;) {
    if (ref_count<task_impl> t = find_work_locked()) {
      l.unlock();
      run_items(t.get());
      t = nullptr;
      l.lock();
      continue;
    }
    if (stop_.load(std::memory_order_relaxed)) return;

    // Nothing runnable is queued now, and a task that cannot be run now never can be later (its
    // threads leave only when its items are all claimed), so only an enqueue brings work.
    const std::uint64_t seen = enqueued_.load(std::memory_order_relaxed);
    l.unlock();
    const bool news = spin_until(
        [&]() { return enqueued_.load(std::memory_order_relaxed) != seen || stop_.load(std::memory_order_relaxed); });
    l.lock();
    if (news || enqueued_.load(std::memory_order_relaxed) != seen || stop_.load(std::memory_order_relaxed)) continue;
    ++idle_sleepers_;
    cv_work_.wait(l, [this]() { return wake_tokens_ > 0 || stop_.load(std::memory_order_relaxed); });
    if (wake_tokens_ > 0) {
      --wake_tokens_;
    } else {
      --idle_sleepers_;
    }
  }
}

void thread_pool_impl::wait_until(std::unique_lock<std::mutex>& l, function_ref<bool()> ready,
                                  const task_impl* waited) {
  for (;;) {
    if (ready()) return;
    if (ref_count<task_impl> t = find_work_locked()) {
      l.unlock();
      run_items(t.get());
      t = nullptr;
      l.lock();
      continue;
    }

    const std::uint64_t enqueued = enqueued_.load(std::memory_order_relaxed);
    const std::uint64_t calls = calls_.load(std::memory_order_relaxed);
    auto news = [&]() {
      return enqueued_.load(std::memory_order_relaxed) != enqueued || calls_.load(std::memory_order_relaxed) != calls ||
             (waited && waited->finished());
    };
    l.unlock();
    spin_until(news);
    l.lock();
    if (news()) continue;

    // Announce the sleep before the last check: a task finishing after that check sees the
    // announcement (both are sequentially consistent) and wakes us under the lock.
    waiting_sleepers_.fetch_add(1);
    if (ready()) {
      waiting_sleepers_.fetch_sub(1);
      return;
    }
    // Whoever bumps the generation has taken us off waiting_sleepers_.
    const std::uint64_t generation = wake_generation_;
    cv_wait_.wait(l, [&]() { return wake_generation_ != generation; });
  }
}

bool thread_pool_impl::wake_waiters_locked() {
  if (waiting_sleepers_.load(std::memory_order_relaxed) == 0) return false;
  waiting_sleepers_.store(0, std::memory_order_relaxed);
  ++wake_generation_;
  return true;
}

void thread_pool_impl::wait_for(task* base) {
  // The pool only hands out task_impl, and the library is built without RTTI.
  task_impl* t = static_cast<task_impl*>(base);
  if (t->finished()) return;
  SLINKY_ASSERT(!running_on_this_thread(t), "wait_for(task) called from an item of that task");
  run_items(t);
  // The last items may be running on other threads: they are likely to finish soon.
  if (t->finished() || spin_until([t]() { return t->finished(); })) return;
  auto finished = [t]() { return t->finished(); };
  std::unique_lock<std::mutex> l(mutex_);
  wait_until(l, finished, t);
}

void thread_pool_impl::wait_for(predicate_ref condition) {
  std::unique_lock<std::mutex> l(mutex_);
  wait_until(l, condition, nullptr);
}

void thread_pool_impl::atomic_call(function_ref<void()> fn) {
  bool wake;
  {
    std::lock_guard<std::mutex> l(mutex_);
    fn();
    calls_.fetch_add(1, std::memory_order_relaxed);
    wake = wake_waiters_locked();
  }
  if (wake) cv_wait_.notify_all();
}

void thread_pool_impl::run_worker(predicate_ref condition) {
  std::unique_lock<std::mutex> l(mutex_);
  running_workers_.fetch_add(1, std::memory_order_relaxed);
  // A worker is a thread waiting for a condition, running queued work meanwhile; enqueue wakes
  // such threads when the pool's own workers are too few for a task.
  wait_until(l, condition, nullptr);
  running_workers_.fetch_sub(1, std::memory_order_relaxed);
}

void thread_pool_impl::work_until_idle() {
  std::unique_lock<std::mutex> l(mutex_);
  while (ref_count<task_impl> t = find_work_locked()) {
    l.unlock();
    run_items(t.get());
    t = nullptr;
    l.lock();
  }
}

}  // namespace slinky
