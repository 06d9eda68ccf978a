#define LOCAL_VALUE 2
