// Makes clang's frontend crash on purpose: the worker running this TU dies.
#pragma clang __debug crash
