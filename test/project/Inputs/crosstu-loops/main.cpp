#include "model.h"

void train(Splats &model, int steps);
float evaluate(Splats &model, int n);

int main() {
  Splats model(torch::cuda::is_available() ? torch::kCUDA : torch::kCPU);
  train(model, 1000);
  std::cout << evaluate(model, 10) << " " << model.report() << "\n";
}
