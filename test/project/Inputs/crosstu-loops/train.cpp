#include "model.h"

void train(Splats &model, int steps) {
  for (int step = 1; step <= steps; ++step) { // the training loop
    model.zeroGrad();
    torch::Tensor rgb = model.forward(step);
    torch::Tensor loss = rgb.pow(2).mean();
    loss.backward();
    model.step();
    if (step % 10 == 0)
      model.render(step);
  }
}
