#include "views.h"

void train(Net model, torch::optim::SGD &opt, ViewHistory &history, torch::Tensor x) {
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto scored = torch::eye(4); // only read by score: made anew for nothing on every step
    history.score(scored);
    auto kept = torch::eye(4); // kept by remember: each step's is a new one
    history.remember(kept);
    auto relayed = torch::eye(4); // kept by remember, through record
    record(history, relayed);
    auto scaled = torch::eye(4); // only a product of it is kept
    recordScaled(history, scaled);
    model->forward(x).sum().backward();
    opt.step();
  }
}
