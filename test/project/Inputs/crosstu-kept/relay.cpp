#include "views.h"

void record(ViewHistory &history, const torch::Tensor &view) { history.remember(view); }

// A new tensor made from it is kept, not the one it was handed.
void recordScaled(ViewHistory &history, const torch::Tensor &view) { history.remember(view * 2); }
