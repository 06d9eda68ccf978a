#include "model.h"

torch::Tensor makeBatch(int64_t Size) { return torch::randn({Size, 1, 28, 28}); }
