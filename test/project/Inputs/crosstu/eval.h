// Validation helpers (eval.cpp).
#pragma once
#include "model.h"
#include "data.h"

// Switches to eval() and returns in evaluation mode.
float validate(Net &net, const std::vector<Batch> &batches);
// Switches to eval() and back to train() before returning.
float validate_restoring(Net &net, const std::vector<Batch> &batches);
