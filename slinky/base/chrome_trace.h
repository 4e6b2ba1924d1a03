/// \file
/// `chrome_trace` writes a trace of named, nested durations per thread in the Chrome/Perfetto JSON
/// format (open it in ui.perfetto.dev or chrome://tracing); scoped_trace brackets a scope.
#ifndef SLINKY_BASE_CHROME_TRACE_H
#define SLINKY_BASE_CHROME_TRACE_H

#include <chrono>
#include <mutex>
#include <ostream>

namespace slinky {

/// Writes a JSON array of duration events to a stream: begin(name) and end(name) write the
/// events {"name": name, "cat": "slinky", "ph": "B" or "E", "pid": 0, "tid": t, "ts": us,
/// "tts": us}, where t is a small integer per thread (0, 1, ... in the order threads first
/// trace, shared by all traces of the process), ts the microseconds of wall time since the
/// trace was constructed, and tts the microseconds of CPU time the thread has used. The
/// constructor writes the array's '[', the destructor its ']' (the stream holds a complete JSON
/// document only after that). Writes are serialized by a mutex, so any thread may trace; a
/// thread's begin and end calls must nest.
///
/// Example, with eval_config's tracing hooks:
///
///     chrome_trace t(file);
///     cfg.trace_begin = [&](const char* n) { t.begin(n); return (index_t)n; };
///     cfg.trace_end = [&](index_t k) { t.end((const char*)k); };
class chrome_trace {
public:
  /// Starts a trace on os (writes the array's '['); os must outlive the trace.
  explicit chrome_trace(std::ostream& os);
  /// Ends the trace (writes the array's ']') and flushes the stream.
  ~chrome_trace();

  /// Not copyable.
  chrome_trace(const chrome_trace&) = delete;
  /// Not copyable.
  chrome_trace& operator=(const chrome_trace&) = delete;

  /// Writes the begin event ("ph": "B") of a duration named name (null is written as "") on
  /// the calling thread.
  void begin(const char* name);
  /// Writes the end event ("ph": "E") of the calling thread's innermost open duration, which
  /// should have the same name.
  void end(const char* name);

  /// A trace of the whole process, written to the file named by the environment variable
  /// SLINKY_TRACE (read at the first call) and closed at exit; null when SLINKY_TRACE is unset
  /// or empty, or the file cannot be opened. Threads must stop tracing before exit.
  static chrome_trace* global();

private:
  void write_event(const char* name, char phase);

  std::ostream& os_;
  std::mutex mutex_;
  const std::chrono::steady_clock::time_point start_;
  bool first_ = true;
};

/// Calls trace->begin(name) at construction and trace->end(name) at destruction; does nothing
/// when trace is null. The one-argument form uses chrome_trace::global().
class scoped_trace {
public:
  /// Begins a duration named name on trace (if not null); name must outlive the object.
  scoped_trace(chrome_trace* trace, const char* name);
  /// Begins a duration named name on chrome_trace::global() (if not null).
  explicit scoped_trace(const char* name);
  /// Ends the duration.
  ~scoped_trace();

  /// Not copyable.
  scoped_trace(const scoped_trace&) = delete;
  /// Not copyable.
  scoped_trace& operator=(const scoped_trace&) = delete;

private:
  chrome_trace* trace_;
  const char* name_;
};

}  // namespace slinky

#endif  // SLINKY_BASE_CHROME_TRACE_H
