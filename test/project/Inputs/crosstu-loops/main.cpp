#include "model.h"

void train(Splats &model, int steps);
float evaluate(Splats &model, int n);

int main() {
  Splats model(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  // An epoch loop: train() (train.cpp) steps in its own loop, so the print is once per epoch.
  for (int epoch = 0; epoch < 3; ++epoch) {
    train(model, 1000);
    std::cout << "epoch " << epoch << " " << model.means.sum().item<float>() << "\n";
  }
  std::cout << evaluate(model, 10) << " " << model.report() << "\n";
}
