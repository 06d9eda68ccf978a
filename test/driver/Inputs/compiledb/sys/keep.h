#define KEEP_VALUE 1
