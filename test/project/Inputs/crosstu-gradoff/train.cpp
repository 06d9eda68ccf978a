#include "engine.h"
#include "tools.h"

#include <thread>

// Its call of nudge_bias runs where train() calls it, under the guard.
static void adjust(Engine &engine, Net &net, const torch::Tensor &delta) { engine.nudge_bias(net, delta); }

void train(Engine &engine, Net &net, torch::optim::SGD &opt, const std::vector<torch::Tensor> &batches,
           const torch::Tensor &delta) {
  warm_start(engine, net, delta);
  for (const auto &x : batches) {
    opt.zero_grad();
    auto loss = net->forward(x).sum();
    loss.backward();
    opt.step();
    {
      torch::NoGradGuard guard;
      engine.nudge_bias(net, delta);
      adjust(engine, net, delta);
      engine.shift_weight(net, delta);
      engine.clip_weight(net);
      engine.nudge_weight(net, delta);
      std::thread worker([&] { engine.decay_bias(net); });
      worker.join();
    }
    {
      torch::AutoGradMode enable_grad(false);
      engine.nudge_bias(net, delta);
    }
    engine.shift_weight(net, delta);
    engine.scale_weight(net);
  }
  {
    torch::NoGradGuard guard;
    engine.accuracy(net, batches);
  }
  engine.loss_on(net, batches);
}
