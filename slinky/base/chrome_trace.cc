// The Chrome trace writer: JSON duration events with per-thread ids and CPU times.
#include "slinky/base/chrome_trace.h"

#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>

namespace slinky {

namespace {

// Small integer ids for threads, in the order they first trace.
std::atomic<int> next_thread_id{0};
int this_thread_id() {
  thread_local const int id = next_thread_id.fetch_add(1, std::memory_order_relaxed);
  return id;
}

// Microseconds of CPU time used by the calling thread.
long long thread_cpu_us() {
#ifdef CLOCK_THREAD_CPUTIME_ID
  timespec t;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0) {
    return static_cast<long long>(t.tv_sec) * 1000000 + t.tv_nsec / 1000;
  }
#endif
  return 0;
}

// Writes s as the contents of a JSON string (without the quotes).
void write_json_string(std::ostream& os, const char* s) {
  for (; *s; ++s) {
    const unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      os << '\\' << *s;
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      os << escaped;
    } else {
      os << *s;
    }
  }
}

}  // namespace

chrome_trace::chrome_trace(std::ostream& os) : os_(os), start_(std::chrono::steady_clock::now()) { os_ << "["; }

chrome_trace::~chrome_trace() {
  os_ << "\n]\n";
  os_.flush();
}

void chrome_trace::write_event(const char* name, char phase) {
  // Read the clocks before taking the lock, so waiting for it is not part of the duration.
  const long long ts =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start_).count();
  const long long tts = thread_cpu_us();
  const int tid = this_thread_id();
  std::lock_guard<std::mutex> l(mutex_);
  os_ << (first_ ? "\n" : ",\n") << "{\"name\":\"";
  first_ = false;
  write_json_string(os_, name ? name : "");
  os_ << "\",\"cat\":\"slinky\",\"ph\":\"" << phase << "\",\"pid\":0,\"tid\":" << tid << ",\"ts\":" << ts
      << ",\"tts\":" << tts << "}";
}

void chrome_trace::begin(const char* name) { write_event(name, 'B'); }
void chrome_trace::end(const char* name) { write_event(name, 'E'); }

chrome_trace* chrome_trace::global() {
  // The trace is destroyed (closing the array) before its file, at exit.
  struct global_trace {
    std::ofstream file;
    chrome_trace trace;
    explicit global_trace(const char* path) : file(path), trace(file) {}
  };
  static const std::unique_ptr<global_trace> global = []() -> std::unique_ptr<global_trace> {
    const char* path = std::getenv("SLINKY_TRACE");
    if (!path || !*path) return nullptr;
    auto result = std::make_unique<global_trace>(path);
    if (!result->file) return nullptr;
    return result;
  }();
  return global ? &global->trace : nullptr;
}

scoped_trace::scoped_trace(chrome_trace* trace, const char* name) : trace_(trace), name_(name) {
  if (trace_) trace_->begin(name_);
}
scoped_trace::scoped_trace(const char* name) : scoped_trace(chrome_trace::global(), name) {}
scoped_trace::~scoped_trace() {
  if (trace_) trace_->end(name_);
}

}  // namespace slinky
