// Random pipeline testing, part 6: see run.h.
#include "random_pipeline/run.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "random_pipeline/auto.h"

namespace slinky {
namespace random_test {

namespace internal_run {

std::string escape(const std::string& s) {
  std::string r;
  for (char ch : s) r += ch == '\n' ? std::string("\\n") : ch == '\\' ? std::string("\\\\") : std::string(1, ch);
  return r;
}
std::string unescape(const std::string& s) {
  std::string r;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      r += s[i + 1] == 'n' ? '\n' : s[i + 1];
      ++i;
    } else {
      r += s[i];
    }
  }
  return r;
}

// What a worker reports about a case.
struct report {
  std::int64_t index = -1;
  bool finished = false;
  outcome result;
};

// Runs cases first, first + 1, ... in a child process until the time is up or one fails, and
// returns what it reported: the last report is the failing case, or one that never finished
// (the child crashed or hung in it).
std::vector<report> run_worker(const batch_options& o, std::int64_t first, double seconds_left) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  std::FILE* err = std::tmpfile();
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fileno(err), 2);
    std::FILE* out = fdopen(fds[1], "w");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds_left);
    for (std::int64_t i = first;; ++i) {
      if (o.only_case >= 0 && i != o.only_case) break;
      if (o.max_cases >= 0 && i >= o.max_cases) break;
      if (o.only_case < 0 && std::chrono::steady_clock::now() >= deadline) break;
      std::fprintf(out, "begin %lld\n", static_cast<long long>(i));
      std::fflush(out);
      alarm(case_timeout_seconds());
      const outcome r = run_case(generate_case(case_seed(o.seed, i), o.f), o.f);
      std::fprintf(out, "end %lld %d %d %d %s\n%s\n", static_cast<long long>(i), r.runs, r.schedule, r.auto_looped,
                   r.ok() ? "ok" : r.kind.c_str(), escape(r.message).c_str());
      std::fflush(out);
      if (!r.ok()) break;
    }
    _exit(0);
  }
  close(fds[1]);
  std::FILE* in = fdopen(fds[0], "r");
  std::vector<report> reports;
  char* line = nullptr;
  std::size_t size = 0;
  while (getline(&line, &size, in) > 0) {
    long long index = 0;
    int runs = 0, schedule = 0, auto_looped = 0;
    char kind[64] = {};
    if (std::sscanf(line, "begin %lld", &index) == 1) {
      reports.push_back({index, false, outcome()});
    } else if (std::sscanf(line, "end %lld %d %d %d %63s", &index, &runs, &schedule, &auto_looped, kind) == 5 &&
               !reports.empty()) {
      report& r = reports.back();
      r.finished = true;
      r.result.runs = runs;
      r.result.auto_looped = auto_looped;
      r.result.schedule = schedule;
      r.result.kind = std::string(kind) == "ok" ? "" : kind;
      if (getline(&line, &size, in) > 0) {
        std::string message = line;
        if (!message.empty() && message.back() == '\n') message.pop_back();
        r.result.message = unescape(message);
      }
    }
  }
  std::free(line);
  std::fclose(in);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!reports.empty() && !reports.back().finished) {
    const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    outcome& r = reports.back().result;
    r.kind = sig == SIGALRM ? "timeout" : "crash";
    std::string errors;
    std::rewind(err);
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof(buf), err)) > 0;) errors.append(buf, n);
    if (errors.size() > 2000) errors = "..." + errors.substr(errors.size() - 2000);
    r.message = (sig ? "signal " + std::to_string(sig) : "exit status " + std::to_string(WEXITSTATUS(status))) +
                (errors.empty() ? "" : ": " + errors);
    r.schedule = -2;
  }
  std::fclose(err);
  return reports;
}

// Shrinks in one child process (candidates run in it without forking, which is much faster), so
// that a candidate that crashes ends only the shrinking. Returns the test of the smallest failing
// case the child reported.
std::string shrink_in_child(const case_spec& c, const outcome& failure, const features& f, const std::string& name,
                            double seconds) {
  int fds[2];
  if (pipe(fds) != 0) return to_cpp(c, name, failure);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    alarm(static_cast<unsigned>(seconds) + 60);
    std::FILE* out = fdopen(fds[1], "w");
    shrink(c, failure, f, false, seconds, [&](const case_spec& v, const outcome& o) {
      std::fprintf(out, "%s\n", escape(to_cpp(v, name, o)).c_str());
      std::fflush(out);
    });
    _exit(0);
  }
  close(fds[1]);
  std::FILE* in = fdopen(fds[0], "r");
  std::string best = to_cpp(c, name, failure);
  char* line = nullptr;
  std::size_t size = 0;
  for (ssize_t n; (n = getline(&line, &size, in)) > 0;) {
    std::string s(line, n);
    if (!s.empty() && s.back() == '\n') s.pop_back();
    best = unescape(s);
  }
  std::free(line);
  std::fclose(in);
  int status = 0;
  waitpid(pid, &status, 0);
  return best;
}

}  // namespace internal_run

batch_result run_batch(const batch_options& o) {
  batch_result r;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&]() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  std::int64_t next = o.only_case >= 0 ? o.only_case : 0;
  for (;;) {
    std::vector<internal_run::report> reports;
    if (o.fork) {
      reports = internal_run::run_worker(o, next, o.seconds - elapsed());
    } else {
      for (std::int64_t i = next;; ++i) {
        if (o.only_case >= 0 && i != o.only_case) break;
        if (o.max_cases >= 0 && i >= o.max_cases) break;
        if (o.only_case < 0 && elapsed() >= o.seconds) break;
        reports.push_back({i, true, run_case(generate_case(case_seed(o.seed, i), o.f), o.f)});
        if (!reports.back().result.ok()) break;
      }
    }
    if (reports.empty()) break;
    r.cases += static_cast<std::int64_t>(reports.size());
    for (const internal_run::report& rep : reports) {
      r.runs += rep.result.runs;
      r.auto_looped += rep.result.auto_looped;
      if (auto_case(case_seed(o.seed, rep.index), o.f)) ++r.auto_cases;
    }
    internal_run::report& last = reports.back();
    next = last.index + 1;
    if (last.result.ok()) continue;
    const std::int64_t i = last.index;
    std::ostream& log = *o.log;
    const case_spec c = generate_case(case_seed(o.seed, i), o.f);
    if (last.result.kind == "timeout") {
      // A case past the limit is a hang only if it is one alone too: on a loaded machine a heavy
      // case can take longer than the limit. It runs again in a process of its own, with a limit
      // confirm_timeout_factor times longer; if it ends, its result is the case's.
      const auto again = std::chrono::steady_clock::now();
      outcome rerun = run_isolated(c, true, o.f, confirm_timeout_factor * case_timeout_seconds());
      const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - again).count();
      if (rerun.kind != "timeout") {
        log << "random pipeline case " << i << " of seed " << o.seed << " ran past the " << case_timeout_seconds()
            << " s limit; run again alone, it ended in " << took << " s (" << (rerun.ok() ? "passed" : rerun.kind)
            << "): not a hang\n"
            << std::flush;
        ++r.slow_cases;
        r.runs += rerun.runs;
        last.result = rerun;
        if (rerun.ok()) continue;
      }
    }
    const outcome& out = last.result;
    log << "random pipeline case " << i << " of seed " << o.seed << " failed (" << out.kind << ")";
    if (out.schedule >= 0) log << " in schedule " << out.schedule;
    log << ": " << out.message << "\n";
    log << "reproduce: SLINKY_RANDOM_SEED=" << o.seed << " and case " << i << " (random_pipelines --seed " << o.seed
        << " --case " << i << ")";
    if (auto_case(case_seed(o.seed, i), o.f)) {
      // The mode of the failing schedule (all three if the case crashed), and the case's machine.
      const schedule_spec& a = c.schedules[out.schedule >= 0 ? out.schedule : 0];
      log << ", auto mode " << (out.schedule >= 0 ? to_string(a.automatic) : "fresh, keep or reschedule")
          << " on machine " << describe_auto_machine(a.auto_machine);
    }
    log << "\nshrinking...\n";
    const std::string name = "seed_" + std::to_string(o.seed) + "_case_" + std::to_string(i);
    const bool crashed = out.kind == "crash" || out.kind == "timeout";
    std::string test;
    if (o.fork && !crashed) {
      test = internal_run::shrink_in_child(c, out, o.f, name, o.shrink_seconds);
    } else {
      std::pair<case_spec, outcome> shrunk = shrink(c, out, o.f, crashed, o.shrink_seconds);
      test = to_cpp(shrunk.first, name, shrunk.second);
    }
    log << test << std::flush;
    r.failures.push_back(out.kind + ": " + out.message + "\n" + test);
    if (static_cast<int>(r.failures.size()) >= o.max_failures) break;
    if (o.only_case >= 0) break;
  }
  r.seconds = elapsed();
  return r;
}

}  // namespace random_test
}  // namespace slinky
