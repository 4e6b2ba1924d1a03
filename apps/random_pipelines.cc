// Runs random pipelines under random schedules for as long as asked, checking every result
// against the unscheduled pipeline and a plain reference; failures are shrunk and printed as
// C++ tests. Usage: random_pipelines [--seconds N] [--seed S] [--case I] [--features LIST] ...
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include "random_pipeline/auto_schedule/auto_schedule.h"
#include "random_pipeline/run.h"
#include "slinky/runtime/print.h"

int main(int argc, char** argv) {
  using namespace slinky::random_test;
  enable_auto_mode();
  batch_options o;
  o.seconds = 60;
  bool print = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    auto next = [&]() {
      if (!value) {
        std::cerr << a << " needs a value\n";
        std::exit(2);
      }
      ++i;
      return std::string(value);
    };
    if (a == "--seconds") {
      o.seconds = std::atof(next().c_str());
    } else if (a == "--seed") {
      o.seed = std::strtoull(next().c_str(), nullptr, 10);
    } else if (a == "--case") {
      o.only_case = std::strtoll(next().c_str(), nullptr, 10);
    } else if (a == "--cases") {
      o.max_cases = std::strtoll(next().c_str(), nullptr, 10);
    } else if (a == "--features") {
      const std::string list = next();
      if (!o.f.parse(list)) {
        std::cerr << "unknown feature in " << list << "\n";
        return 2;
      }
    } else if (a == "--max-failures") {
      o.max_failures = std::atoi(next().c_str());
    } else if (a == "--shrink-seconds") {
      o.shrink_seconds = std::atof(next().c_str());
    } else if (a == "--no-fork") {
      o.fork = false;
    } else if (a == "--print") {
      print = true;
    } else {
      std::cerr << "usage: random_pipelines [--seconds N] [--seed S] [--case I] [--cases N] [--features LIST]\n"
                   "                        [--max-failures N] [--shrink-seconds N] [--no-fork] [--print]\n"
                   "--print prints case I (default 0) as C++ tests and the program of each schedule.\n"
                   "--features: a comma-separated list of feature names to turn on, or off with a leading\n"
                   "'-', and stages=N (the most funcs per pipeline). The default:\n  "
                << features().to_string() << "\n";
      return 2;
    }
  }
  if (o.f.thread_pool && !SLINKY_RANDOM_HAVE_THREAD_POOL) o.f.thread_pool = false;
  if (print) {
    // The case as C++ tests (one per schedule), and the program of each schedule.
    const case_spec c = generate_case(case_seed(o.seed, std::max<std::int64_t>(o.only_case, 0)), o.f);
    const plan p = make_plan(c.graph);
    for (std::size_t i = 0; i < c.schedules.size(); ++i) {
      case_spec one = c;
      one.schedules = {c.schedules[i]};
      std::cout << to_cpp(one, "schedule_" + std::to_string(i), outcome{"print", "schedule " + std::to_string(i)});
      std::unique_ptr<built> b = build(c.graph, p, &c.schedules[i], nullptr, c.data_seed);
      std::cout << b->p.body << "\n";
    }
    return 0;
  }
  std::cout << "random pipelines: seed " << o.seed << ", " << o.seconds << " s; features " << o.f.to_string() << "\n";
  const batch_result r = run_batch(o);
  std::cout << r.cases << " cases, " << r.runs << " pipelines built and run in " << r.seconds << " s; "
            << r.failures.size() << " failed";
  if (r.slow_cases > 0) std::cout << "; " << r.slow_cases << " past the time limit that passed alone (not hangs)";
  std::cout << "\n";
  return r.failures.empty() ? 0 : 1;
}
