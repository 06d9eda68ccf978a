// Compiles only when every option that changes parsing reached the compiler: -isystem,
// -I, -D, -U, -include, -Xclang -include, -std.
#include <keep.h>
#include "local.h"
#if !defined(FROM_D) || defined(UNDEFINED_BY_U) || !defined(FROM_INCLUDE) || !defined(FROM_XCLANG_INCLUDE)
#error "an option that changes parsing was lost"
#endif
template <typename T> int f(T t) {
  if constexpr (sizeof(T) > 1)
    return 1;
  return KEEP_VALUE + LOCAL_VALUE;
}
int g() { return f(1); }
