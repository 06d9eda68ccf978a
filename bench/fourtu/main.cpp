#include "model.h"

#include <iostream>

int main() {
  Net model;
  torch::optim::SGD optimizer(model->parameters(), 0.01);
  for (int epoch = 0; epoch < 3; ++epoch) {
    double loss = trainEpoch(model, optimizer, 100);
    std::cout << epoch << " " << loss << " " << evaluate(model, 10) << "\n";
  }
}
