// ThreadSanitizer suppressions for programs that run the host pool adapters (their tests and
// apps/parallel_benchmark). libtbb and libpthreadpool are not instrumented, but the calls they
// make to intercepted functions (memcmp, new and delete, ...) are seen: oneTBB's own bookkeeping
// then shows as races between its threads, since the synchronization around it, in the library,
// is not (measured: a report in about one run of slinky_tbb_test in six at -O0). called_from_lib
// makes ThreadSanitizer ignore those calls; the adapters' code and the items stay checked. A
// client testing its own program under ThreadSanitizer with an adapter needs the same lines.
extern "C" const char* __tsan_default_suppressions() {
  return "called_from_lib:libtbb.so\n"
         "called_from_lib:libpthreadpool.so\n";
}
