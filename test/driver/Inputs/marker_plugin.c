/* Loading this library creates the file named by $TORCHTIDY_MARKER: hostile-compiledb.test
   checks that a compile database never gets it loaded. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void mark(void) {
  const char *Path = getenv("TORCHTIDY_MARKER");
  FILE *F = Path ? fopen(Path, "w") : NULL;
  if (F)
    fclose(F);
}
