#include "model.h"

double evaluate(Net &model, int Steps) {
  model->eval();
  double total = 0;
  for (int step = 0; step < Steps; ++step) {
    auto target = torch::randint(0, 10, {64});
    auto output = model->forward(makeBatch(64));
    total += output.argmax(1).eq(target).sum().item<double>();
  }
  return total / (64.0 * Steps);
}
