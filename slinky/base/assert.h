// Assertions with messages. SLINKY_ASSERT is for internal invariants and compiles away in
// release builds (NDEBUG), unless SLINKY_ASSERTIONS is defined (the sanitizer builds of
// tools/test.sh define it); SLINKY_CHECK stays in every build, for conditions whose violation
// would otherwise corrupt memory.
#ifndef SLINKY_BASE_ASSERT_H
#define SLINKY_BASE_ASSERT_H

namespace slinky {

// Prints the failed condition and message, then aborts.
[[noreturn]] void assert_failed(const char* file, int line, const char* condition, const char* message);

}  // namespace slinky

#define SLINKY_CHECK(condition, message)                                                                               \
  do {                                                                                                                 \
    if (!(condition)) ::slinky::assert_failed(__FILE__, __LINE__, #condition, message);                                \
  } while (0)

#if defined(NDEBUG) && !defined(SLINKY_ASSERTIONS)
#define SLINKY_ASSERT(condition, message)                                                                              \
  do {                                                                                                                 \
    (void)sizeof(condition);                                                                                           \
  } while (0)
#else
#define SLINKY_ASSERT(condition, message) SLINKY_CHECK(condition, message)
#endif

#endif  // SLINKY_BASE_ASSERT_H
