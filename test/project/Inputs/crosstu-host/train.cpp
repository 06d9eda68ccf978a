#include "data.h"

void train(torch::nn::Linear model, torch::optim::SGD &opt, torch::Device device, std::vector<float> &row) {
  for (int step = 0; step < 100; ++step) {
    auto x = torch::randn({64, 10}, device);
    auto smooth = smoothing_mask().to(device);
    auto a = from_values(row).to(device);
    auto b = wrap_buffer(row).to(device);
    auto c = filled_row(row).to(device);
    auto d = mask_on(device).to(device);
    opt.zero_grad();
    auto loss = (model->forward(x) * smooth).sum() + (a + b + c).sum() + d.sum();
    loss.backward();
    opt.step();
  }
}
