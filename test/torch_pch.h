// Precompiled for the tests only; built from the real libtorch-dev headers.
#include <torch/torch.h>
