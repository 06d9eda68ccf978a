#include "views.h"

void ViewHistory::remember(const torch::Tensor &view) { views_.push_back(view); }

float ViewHistory::score(const torch::Tensor &view) { return total_ += view.sum().item<float>(); }
