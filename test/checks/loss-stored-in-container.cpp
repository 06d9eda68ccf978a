// RUN: %tidy --checks='-*,torch-loss-stored-in-container' %s -- %torch_flags 2>&1 | %filecheck %s
// RUN: cp %s %t.cpp
// RUN: %tidy --checks='-*,torch-loss-stored-in-container' --fix %t.cpp -- %torch_flags > /dev/null 2>&1
// RUN: FileCheck --check-prefix=FIXED --input-file=%t.cpp %s
// RUN: %clangxx -fsyntax-only %torch_flags %t.cpp
#include <torch/torch.h>

#include <deque>
#include <functional>
#include <iostream>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(4, 1))) {}
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

struct Pairs : torch::data::datasets::Dataset<Pairs> {
  torch::data::Example<> get(size_t) override { return {torch::randn({4}), torch::randn({1})}; }
  torch::optional<size_t> size() const override { return 8; }
};

auto makeLoader() {
  return torch::data::make_data_loader(Pairs().map(torch::data::transforms::Stack<>()), 4);
}

// ---- positives ----------------------------------------------------------------------------

void positiveRangeForOverDataLoader() {
  Net net;
  torch::optim::SGD optimizer(net->parameters(), 0.1);
  auto loader = makeLoader();
  std::vector<torch::Tensor> losses;
  for (auto &batch : *loader) {
    optimizer.zero_grad();
    auto output = net->forward(batch.data);
    auto loss = torch::mse_loss(output, batch.target);
    loss.backward();
    optimizer.step();
    losses.push_back(loss);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container inside a loop keeps its autograd graph alive; consider storing 'loss.item<float>()' or 'loss.detach()' [torch-loss-stored-in-container]
    // CHECK: :[[@LINE-6]]:19: note: the tensor became graph-attached here
    // CHECK: :[[@LINE-9]]:3: note: loop starts here
    // FIXED: {{^}}    losses.push_back(loss.detach());{{$}}
  }
  std::cout << torch::stack(losses).mean().item<float>() << "\n";
}

// A stored expression that binds looser than a member call is shown, and fixed, in parentheses.
void positiveScaledLossInParentheses(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> losses;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    losses.push_back(loss * 2);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss * 2' stored in a container inside a loop keeps its autograd graph alive; consider storing '(loss * 2).detach()'
    // FIXED: {{^}}    losses.push_back((loss * 2).detach());{{$}}
  }
}

void positiveCloneDoesNotDetach(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> losses;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    losses.push_back(loss.clone());
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss.clone()' stored in a container inside a loop keeps its autograd graph alive; consider storing 'loss.clone().item<float>()' or 'loss.clone().detach()'
    // FIXED: {{^}}    losses.push_back(loss.clone().detach());{{$}}
  }
}

void positiveEmplaceBack(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> losses;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    losses.emplace_back(loss);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container
    // FIXED: {{^}}    losses.emplace_back(loss.detach());{{$}}
  }
}

void positiveHistoryByEpoch(Net &net, torch::Tensor x, torch::Tensor y) {
  std::map<int, torch::Tensor> history;
  for (int epoch = 0; epoch < 5; ++epoch) {
    torch::Tensor loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    history[epoch] = loss;
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container
    // FIXED: {{^}}    history[epoch] = loss.detach();{{$}}
  }
}

void positiveInlineLoss(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> losses;
  for (int i = 0; i < 10; ++i)
    losses.push_back(torch::mse_loss(net->forward(x), y));
  // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'torch::mse_loss(net->forward(x), y)' stored in a container inside a loop keeps its autograd graph alive; consider storing 'torch::mse_loss(net->forward(x), y).item<float>()' or 'torch::mse_loss(net->forward(x), y).detach()'
  // CHECK: :[[@LINE-2]]:38: note: the tensor became graph-attached here
  // CHECK: :[[@LINE-4]]:3: note: loop starts here
  // FIXED: {{^}}    losses.push_back(torch::mse_loss(net->forward(x), y).detach());{{$}}
}

void positiveMovedIn(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> losses;
  int step = 0;
  while (step++ < 10) {
    auto loss = torch::mse_loss(net->forward(x), y);
    losses.push_back(std::move(loss));
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'std::move(loss)' stored in a container
    // FIXED: {{^}}    losses.push_back(std::move(loss).detach());{{$}}
  }
}

void positiveDoLoopSharedPtrModel(torch::Tensor x, torch::Tensor y) {
  auto net = std::make_shared<NetImpl>();
  std::deque<torch::Tensor> window;
  int i = 0;
  do {
    auto loss = (net->forward(x) - y).pow(2).mean();
    window.push_front(loss);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container
  } while (++i < 10);
}

void positivePlainModuleValue(torch::Tensor x, torch::Tensor y) {
  NetImpl net;
  std::list<torch::Tensor> losses;
  for (int i = 0; i < 3; ++i) {
    auto out = net.forward(x);
    losses.insert(losses.end(), (out - y).abs().sum());
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor '(out - y).abs().sum()' stored in a container
    // FIXED: {{^}}    losses.insert(losses.end(), (out - y).abs().sum().detach());{{$}}
  }
}

void positivePairsAndMaps(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<std::pair<int, torch::Tensor>> log;
  std::unordered_map<int, torch::Tensor> byStep;
  for (int i = 0; i < 3; ++i) {
    auto loss = torch::l1_loss(net(x), y);
    log.push_back({i, loss});
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container
    // FIXED: {{^}}    log.push_back({i, loss.detach()});{{$}}
    log.emplace_back(i, loss);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container
    log.push_back(std::make_pair(i, loss));
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container
    byStep.insert({i, loss});
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container
  }
}

void positivePredictionsWithoutNoGrad(Net &net) {
  auto loader = makeLoader();
  net->eval();
  std::vector<torch::Tensor> predictions;
  for (const auto &batch : *loader)
    predictions.push_back(torch::softmax(net->forward(batch.data), 1));
  // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'torch::softmax(net->forward(batch.data), 1)' stored in a container inside a loop keeps its autograd graph alive; consider storing 'torch::softmax(net->forward(batch.data), 1).detach()'
  auto all = torch::cat(predictions);
  std::cout << all.sizes() << "\n";
}

void positivePerEpochContainer(Net &net, torch::Tensor x, torch::Tensor y) {
  for (int epoch = 0; epoch < 3; ++epoch) {
    std::vector<torch::Tensor> epochLosses;
    for (int b = 0; b < 10; ++b) {
      auto loss = torch::mse_loss(net->forward(x), y);
      loss.backward();
      epochLosses.push_back(loss);
      // CHECK: :[[@LINE-1]]:7: warning: graph-attached tensor 'loss' stored in a container
      // CHECK: :[[@LINE-5]]:5: note: loop starts here
    }
  }
}

void positiveManualParameters(torch::Tensor x, torch::Tensor y) {
  auto w = torch::randn({4, 1}, torch::requires_grad());
  std::vector<torch::Tensor> losses;
  for (int i = 0; i < 100; ++i) {
    auto loss = (x.mm(w) - y).pow(2).mean();
    loss.backward();
    losses.push_back(loss);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container
    {
      torch::NoGradGuard noGrad;
      w -= 0.01 * w.grad();
      w.grad().zero_();
    }
  }
}

void positiveContainerFromCaller(Net &net, torch::Tensor x, std::vector<torch::Tensor> &out) {
  for (int i = 0; i < 3; ++i)
    out.push_back(net->forward(x));
  // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'net->forward(x)' stored in a container
  // FIXED: {{^}}    out.push_back(net->forward(x));{{$}}
}

torch::Tensor computeLoss(Net &net, const torch::Tensor &x, const torch::Tensor &y) {
  return torch::nll_loss(torch::log_softmax(net->forward(x), 1), y);
}

void positiveLossFromHelperFunction(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> losses;
  for (int i = 0; i < 3; ++i) {
    auto loss = computeLoss(net, x, y);
    losses.push_back(loss);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container
  }
}

template <typename Model, typename Loader>
void positiveTemplateTraining(Model &model, Loader &loader, torch::optim::Optimizer &optimizer) {
  std::vector<torch::Tensor> losses;
  for (auto &batch : *loader) {
    optimizer.zero_grad();
    auto loss = torch::mse_loss(model->forward(batch.data), batch.target);
    loss.backward();
    optimizer.step();
    losses.push_back(loss);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container
    // FIXED: {{^}}    losses.push_back(loss);{{$}}
  }
}

void instantiateTemplateTraining() {
  Net net;
  auto loader = makeLoader();
  torch::optim::Adam optimizer(net->parameters());
  positiveTemplateTraining(net, loader, optimizer);
}

void positiveLambdaBody(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> losses;
  auto trainSteps = [&](int n) {
    for (int i = 0; i < n; ++i) {
      auto loss = torch::mse_loss(net->forward(x), y);
      losses.push_back(loss);
      // CHECK: :[[@LINE-1]]:7: warning: graph-attached tensor 'loss' stored in a container
    }
  };
  trainSteps(3);
}

void record(std::vector<torch::Tensor> &into, const torch::Tensor &value) { into.push_back(value); }

void positiveHelperCalledFromLoop(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> losses;
  for (int i = 0; i < 3; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    record(losses, loss);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container inside a loop (by the called function) keeps its autograd graph alive; consider storing 'loss.item<float>()' or 'loss.detach()'
    // CHECK: :[[@LINE-8]]:77: note: the called function stores it here
  }
}

void positiveCapturingLambdaHelper(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> losses;
  auto keep = [&](const torch::Tensor &l) { losses.push_back(l); };
  for (int i = 0; i < 3; ++i)
    keep(torch::mse_loss(net->forward(x), y));
  // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'torch::mse_loss(net->forward(x), y)' stored in a container inside a loop (by the called function)
  // CHECK: :[[@LINE-4]]:45: note: the called function stores it here
}

class Trainer {
public:
  void trainEpoch(torch::Tensor x, torch::Tensor y) {
    for (int i = 0; i < 10; ++i) {
      optimizer_.zero_grad();
      auto loss = torch::mse_loss(model_->forward(x), y);
      loss.backward();
      optimizer_.step();
      losses_.push_back(loss);
      // CHECK: :[[@LINE-1]]:7: warning: graph-attached tensor 'loss' stored in a container
      // FIXED: {{^}}      losses_.push_back(loss);{{$}}
      remember(loss);
      // CHECK: :[[@LINE-1]]:7: warning: graph-attached tensor 'loss' stored in a container inside a loop (by the called function)
      // CHECK: :[[@LINE+6]]:46: note: the called function stores it here
    }
  }
  float meanLoss() const { return torch::stack(losses_).mean().item<float>(); }

private:
  void remember(const torch::Tensor &loss) { history_[step_++] = loss; }
  Net model_;
  torch::optim::SGD optimizer_{model_->parameters(), 0.1};
  std::vector<torch::Tensor> losses_;
  std::map<int, torch::Tensor> history_;
  int step_ = 0;
};

void positiveRecurrentOutputs(torch::nn::LSTM &lstm, torch::Tensor seq) {
  std::vector<torch::Tensor> outputs;
  std::vector<torch::Tensor> hidden;
  for (int i = 0; i < 3; ++i) {
    auto [out, state] = lstm->forward(seq);
    outputs.push_back(out);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'out' stored in a container inside a loop keeps its autograd graph alive; consider storing 'out.detach()'
    auto result = lstm->forward(seq);
    hidden.push_back(std::get<0>(std::get<1>(result)));
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'std::get<0>(std::get<1>(result))' stored in a container
  }
}

void positiveCallerMapKeyedByEpoch(Net &net, torch::Tensor x, torch::Tensor y,
                                   std::map<int64_t, torch::Tensor> &epoch_loss, int64_t epoch) {
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    epoch_loss[epoch] = loss;
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container inside a loop keeps its autograd graph alive; consider storing 'loss.item<float>()' or 'loss.detach()' [torch-loss-stored-in-container]
  }
}

std::map<int64_t, torch::Tensor> positiveLocalMapKeyedByOuterLoop(Net &net, torch::Tensor x, torch::Tensor y) {
  std::map<int64_t, torch::Tensor> epoch_loss;
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    for (int i = 0; i < 10; ++i) {
      auto loss = torch::mse_loss(net->forward(x), y);
      loss.backward();
      epoch_loss[epoch] = loss;
      // CHECK: :[[@LINE-1]]:7: warning: graph-attached tensor 'loss' stored in a container inside a loop keeps its autograd graph alive; consider storing 'loss.item<float>()' or 'loss.detach()' [torch-loss-stored-in-container]
    }
  }
  return epoch_loss;
}

// ---- negatives ----------------------------------------------------------------------------

void negativeItemValues(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<float> losses;
  std::vector<double> history;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    losses.push_back(loss.item<float>());
    history.push_back(loss.item().toDouble());
  }
}

void negativeDetachedAndData(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> losses;
  std::map<int, torch::Tensor> byEpoch;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    losses.push_back(loss.detach());
    losses.push_back(loss.detach().cpu());
    losses.push_back(loss.data());
    byEpoch[i] = loss.detach().clone();
    auto kept = loss.detach();
    losses.push_back(kept);
  }
}

void negativeInputBatches(torch::Device device) {
  auto loader = makeLoader();
  std::vector<torch::Tensor> inputs;
  std::vector<torch::Tensor> targets;
  for (auto &batch : *loader) {
    auto data = batch.data.to(device);
    inputs.push_back(data);
    targets.push_back(batch.target);
  }
}

void negativePredictionsUnderNoGrad(Net &net) {
  auto loader = makeLoader();
  net->eval();
  torch::NoGradGuard noGrad;
  std::vector<torch::Tensor> predictions;
  for (const auto &batch : *loader)
    predictions.push_back(net->forward(batch.data));
}

void negativeInferenceModeInLoop(Net &net, torch::Tensor x) {
  std::vector<torch::Tensor> outputs;
  for (int i = 0; i < 3; ++i) {
    c10::InferenceMode guard;
    outputs.push_back(net->forward(x));
  }
}

void collectPredictions(Net &net, torch::Tensor x, std::vector<torch::Tensor> &out) {
  for (int i = 0; i < 3; ++i)
    out.push_back(net->forward(x));
}

void negativeGuardInCaller(Net &net, torch::Tensor x) {
  std::vector<torch::Tensor> out;
  torch::NoGradGuard noGrad;
  collectPredictions(net, x, out);
}

void negativeContainerLocalToIteration(Net &net, torch::Tensor x) {
  for (int i = 0; i < 3; ++i) {
    std::vector<torch::Tensor> parts;
    parts.push_back(net->forward(x));
    parts.push_back(net->forward(x * 2));
    std::cout << torch::cat(parts).sum().item<float>() << "\n";
  }
}

void negativeNonTensorElements(Net &net, torch::Tensor x) {
  std::vector<std::string> names;
  std::vector<int64_t> shapes;
  for (int i = 0; i < 3; ++i) {
    auto out = net->forward(x);
    names.push_back(out.toString());
    shapes.push_back(out.size(0));
  }
}

void negativeNonDifferentiableResults(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> predictedClasses;
  std::vector<torch::Tensor> hits;
  for (int i = 0; i < 3; ++i) {
    auto out = net->forward(x);
    predictedClasses.push_back(out.argmax(1));
    hits.push_back(out.argmax(1).eq(y));
    hits.push_back(out > 0.5);
  }
}

void negativeIndicesOfMax(Net &net, torch::Tensor x) {
  std::vector<torch::Tensor> predicted;
  for (int i = 0; i < 3; ++i) {
    auto out = net->forward(x);
    predicted.push_back(std::get<1>(out.max(1)));
    auto [values, indices] = torch::max(out, 1);
    predicted.push_back(indices);
    auto sorted = out.sort(0);
    predicted.push_back(std::get<1>(sorted));
  }
}

void negativeParameterGradsAndSnapshots(Net &net) {
  std::vector<torch::Tensor> grads;
  std::vector<torch::Tensor> snapshot;
  for (auto &p : net->parameters()) {
    grads.push_back(p.grad().clone());
    snapshot.push_back(p.clone());
  }
}

void negativeDeliberateBackwardThroughStack(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> losses;
  for (int i = 0; i < 4; ++i)
    losses.push_back(torch::mse_loss(net->forward(x), y));
  torch::stack(losses).sum().backward();
}

void negativeDeliberateAutogradBackward(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> losses;
  for (int i = 0; i < 4; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    losses.push_back(loss);
  }
  torch::autograd::backward(losses);
}

void negativeDeliberateElementBackward(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> losses;
  for (int i = 0; i < 4; ++i)
    losses.emplace_back(torch::mse_loss(net->forward(x), y));
  torch::Tensor total = torch::zeros({});
  for (const auto &l : losses)
    total = total + l;
  total.backward();
}

struct UnrolledImpl : torch::nn::Module {
  UnrolledImpl() : cell(register_module("cell", torch::nn::RNNCell(4, 4))) {}
  torch::Tensor forward(torch::Tensor seq) {
    std::vector<torch::Tensor> outputs;
    auto h = torch::zeros({seq.size(1), 4});
    for (int64_t t = 0; t < seq.size(0); ++t) {
      h = cell(seq[t], h);
      outputs.push_back(h);
    }
    return torch::stack(outputs);
  }
  torch::nn::RNNCell cell;
};
TORCH_MODULE(Unrolled);

// A module method returning the chunks' outputs with the state in a braced list
// (Omegastick/pytorch-cpp-rl's forward_gru): they are the model's output.
struct ChunkedGruImpl : torch::nn::Module {
  ChunkedGruImpl() : gru(register_module("gru", torch::nn::GRU(4, 4))) {}
  std::vector<torch::Tensor> forward_gru(torch::Tensor x, torch::Tensor h, int chunks) {
    std::vector<torch::Tensor> outputs;
    for (int i = 0; i < chunks; ++i) {
      auto out = gru(x.narrow(0, i, 1), h);
      outputs.push_back(std::get<0>(out));
    }
    x = torch::cat(outputs, 0).squeeze(0);
    return {x, h};
  }
  torch::nn::GRU gru;
};
TORCH_MODULE(ChunkedGru);

class Accumulator {
public:
  void step(torch::Tensor x, torch::Tensor y) {
    for (int i = 0; i < 4; ++i)
      pending_.push_back(torch::mse_loss(net_->forward(x), y));
  }
  void flush() {
    torch::stack(pending_).sum().backward();
    pending_.clear();
  }

private:
  Net net_;
  std::vector<torch::Tensor> pending_;
};

void negativeConstantKeyKeepsOne(Net &net, torch::Tensor x, torch::Tensor y) {
  std::map<std::string, torch::Tensor> latest;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    latest["loss"] = loss;
    latest.insert_or_assign("loss", loss);
  }
}

void negativeLocalMapKeyedByParameter(Net &net, torch::Tensor x, torch::Tensor y, int64_t epoch) {
  std::map<int64_t, torch::Tensor> last_of_epoch;
  for (int i = 0; i < 10; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    last_of_epoch[epoch] = loss;
  }
}

void negativeClearedEveryIteration(Net &net, torch::Tensor x) {
  std::vector<torch::Tensor> scratch;
  for (int i = 0; i < 10; ++i) {
    scratch.clear();
    scratch.push_back(net->forward(x));
    std::cout << scratch.back().sum().item<float>() << "\n";
  }
}

void negativeOutsideAnyLoop(Net &net, torch::Tensor x) {
  std::vector<torch::Tensor> outputs;
  outputs.push_back(net->forward(x));
}

void negativeUnknownOrigin(std::vector<torch::Tensor> &all, const std::vector<torch::Tensor> &parts) {
  for (const auto &p : parts)
    all.push_back(p * 2);
}

void negativeGradientAccumulation(Net &net) {
  auto loader = makeLoader();
  torch::optim::Adam optimizer(net->parameters());
  std::vector<float> losses;
  const int accumulation = 4;
  int step = 0;
  for (auto &batch : *loader) {
    auto loss = torch::mse_loss(net->forward(batch.data), batch.target) / accumulation;
    loss.backward();
    if (++step % accumulation == 0) {
      optimizer.step();
      net->zero_grad();
    }
    losses.push_back(loss.item<float>());
  }
}

void negativeReinforceEpisode(Net &policy, torch::optim::Optimizer &optimizer) {
  std::vector<torch::Tensor> logProbs;
  std::vector<float> rewards;
  auto act = [&](const torch::Tensor &state) {
    auto probs = torch::softmax(policy->forward(state), -1);
    auto action = probs.multinomial(1);
    logProbs.push_back(probs.gather(-1, action).log());
    return action.item<int64_t>();
  };
  for (int episode = 0; episode < 10; ++episode) {
    for (int t = 0; t < 100; ++t) {
      act(torch::randn({4}));
      rewards.push_back(1.0f);
    }
    std::vector<torch::Tensor> terms;
    for (size_t i = 0; i < logProbs.size(); ++i)
      terms.push_back(-logProbs[i] * rewards[i]);
    auto loss = torch::stack(terms).sum();
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    logProbs.clear();
    rewards.clear();
  }
}

void negativeHelperWithIterationContainer(Net &net, torch::Tensor x, torch::Tensor y) {
  for (int i = 0; i < 3; ++i) {
    std::vector<torch::Tensor> local;
    record(local, torch::mse_loss(net->forward(x), y));
  }
}

void negativeHelperWithDetachedValue(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> losses;
  for (int i = 0; i < 3; ++i)
    record(losses, torch::mse_loss(net->forward(x), y).detach());
}

void negativeJitInputs(torch::jit::Module &module, torch::Tensor x) {
  for (int i = 0; i < 3; ++i) {
    std::vector<torch::jit::IValue> inputs;
    inputs.push_back(x);
    auto out = module.forward(inputs).toTensor();
    std::cout << out.sum().item<float>() << "\n";
  }
}

// Templates nobody instantiates (the pytorch/examples mnist shape): `batch` has a dependent
// type, so the loss does too and the store stays unresolved; it is recognised by name.
template <typename DataLoader>
void positiveUninstantiatedTemplate(Net &model, DataLoader &data_loader, torch::optim::Optimizer &optimizer) {
  std::vector<torch::Tensor> losses;
  std::map<int, torch::Tensor> epoch_loss;
  int epoch = 0;
  for (auto &batch : data_loader) {
    auto data = batch.data, targets = batch.target;
    optimizer.zero_grad();
    auto output = model->forward(data);
    auto loss = torch::nll_loss(output, targets);
    loss.backward();
    optimizer.step();
    losses.push_back(loss);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container inside a loop keeps its autograd graph alive; consider storing 'loss.item<float>()' or 'loss.detach()' [torch-loss-stored-in-container]
    // FIXED: {{^}}    losses.push_back(loss);{{$}}
    epoch_loss[epoch++] = loss;
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container
  }
}

template <typename DataLoader>
void positiveUninstantiatedTemplateOutputs(Net &model, DataLoader &data_loader) {
  std::vector<torch::Tensor> outputs;
  for (auto &batch : data_loader) {
    outputs.push_back(model(batch.data));
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'model(batch.data)' stored in a container
    outputs.emplace_back(model->forward(batch.data) * 2);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'model->forward(batch.data) * 2' stored in a container
  }
}

template <typename DataLoader>
void negativeUninstantiatedTemplateDetached(Net &model, DataLoader &data_loader, torch::optim::Optimizer &optimizer) {
  std::vector<torch::Tensor> losses;
  std::map<int, torch::Tensor> epoch_loss;
  std::vector<float> values;
  int epoch = 0;
  for (auto &batch : data_loader) {
    optimizer.zero_grad();
    auto loss = torch::nll_loss(model->forward(batch.data), batch.target);
    loss.backward();
    optimizer.step();
    losses.push_back(loss.detach());
    epoch_loss[epoch++] = loss.detach();
    values.push_back(loss.template item<float>());
  }
}

template <typename DataLoader>
void negativeUninstantiatedTemplateIterationContainer(Net &model, DataLoader &data_loader) {
  for (auto &batch : data_loader) {
    std::vector<torch::Tensor> perBatch;
    auto loss = torch::nll_loss(model->forward(batch.data), batch.target);
    perBatch.push_back(loss);
  }
}

template <typename DataLoader>
void negativeUninstantiatedTemplateNoGrad(Net &model, DataLoader &data_loader) {
  torch::NoGradGuard noGrad;
  std::vector<torch::Tensor> outputs;
  for (auto &batch : data_loader) {
    auto output = model->forward(batch.data);
    outputs.push_back(output);
  }
}

template <typename DataLoader>
void negativeUninstantiatedTemplatePlainData(DataLoader &data_loader) {
  std::vector<torch::Tensor> targets;
  for (auto &batch : data_loader)
    targets.push_back(batch.target);
}

template <typename DataLoader>
void negativeUninstantiatedTemplateBackpropagated(Net &model, DataLoader &data_loader, torch::optim::Optimizer &optimizer) {
  std::vector<torch::Tensor> losses;
  for (auto &batch : data_loader)
    losses.push_back(torch::nll_loss(model->forward(batch.data), batch.target));
  optimizer.zero_grad();
  torch::stack(losses).sum().backward();
  optimizer.step();
}

// Perfect forwarding in a template nobody instantiates: `std::forward<T>(value)` is no model
// forward, and the value is a parameter of unknown origin.
template <typename T>
void negativeUninstantiatedStdForward(std::vector<torch::Tensor> &out, T &&value, int n) {
  for (int i = 0; i < n; ++i)
    out.push_back(std::forward<T>(value));
}

template <typename T>
std::vector<torch::Tensor> negativeUninstantiatedStdForwardLocal(T &&value, int n) {
  std::vector<torch::Tensor> out;
  for (int i = 0; i < n; ++i) {
    auto v = std::forward<T>(value);
    out.push_back(v);
  }
  return out;
}

// A tensor field of a local struct, assigned a model output: the field is graph-attached.
struct Prediction {
  torch::Tensor logits;
  torch::Tensor target;
};

void positiveFieldOfALocalStruct(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> history;
  for (int i = 0; i < 3; ++i) {
    Prediction p;
    p.logits = net->forward(x);
    p.target = y;
    history.push_back(p.logits);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'p.logits' stored in a container inside a loop
    history.push_back(p.target);
  }
}

void negativeFieldDetachedBeforeStoring(Net &net, torch::Tensor x) {
  std::vector<torch::Tensor> history;
  for (int i = 0; i < 3; ++i) {
    Prediction p;
    p.logits = net->forward(x);
    p.logits = p.logits.detach();
    history.push_back(p.logits);
  }
}

// ---- aggregates, flow and clearing (read from the shared autograd model) -------------------

struct StepRecord {
  torch::Tensor loss;
  int step;
};

void positiveRecordHoldingLoss(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<StepRecord> records;
  for (int i = 0; i < 3; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    StepRecord record{loss, i};
    records.push_back(record);
    // CHECK: :[[@LINE-1]]:5: warning: value holding a graph-attached tensor 'record' stored in a container inside a loop keeps its autograd graph alive; consider storing detached tensors in it [torch-loss-stored-in-container]
    records.push_back(StepRecord{loss, i});
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container inside a loop keeps its autograd graph alive; consider storing 'loss.item<float>()' or 'loss.detach()' [torch-loss-stored-in-container]
    // FIXED: {{^}}    records.push_back(StepRecord{loss.detach(), i});{{$}}
  }
}

void negativeRecordOfDetachedLoss(Net &net, torch::Tensor x, torch::Tensor y) {
  std::vector<StepRecord> records;
  for (int i = 0; i < 3; ++i) {
    auto loss = torch::mse_loss(net->forward(x), y);
    loss.backward();
    StepRecord record{loss.detach(), i};
    records.push_back(record);
    records.push_back({loss.item<float>() > 1 ? loss.detach() : torch::zeros({}), i});
  }
}

void negativeDetachedBeforeStoring(Net &net, torch::Tensor x) {
  std::vector<torch::Tensor> outputs;
  torch::Tensor last;
  for (int i = 0; i < 3; ++i) {
    auto p = net->forward(x);
    p = p.detach();
    outputs.push_back(p);
    last = net->forward(x);
    last = last.detach();
    outputs.push_back(last);
  }
}

void positiveDetachedOnSomePathsOnly(Net &net, torch::Tensor x, bool keep) {
  std::vector<torch::Tensor> outputs;
  for (int i = 0; i < 3; ++i) {
    auto p = net->forward(x);
    if (!keep)
      p = p.detach();
    outputs.push_back(p);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'p' stored in a container inside a loop keeps its autograd graph alive; consider storing 'p.detach()' [torch-loss-stored-in-container]
    // FIXED: {{^}}    outputs.push_back(p.detach());{{$}}
  }
}

void negativeClearedLaterOnEveryPath(Net &net, torch::Tensor x, bool verbose) {
  std::vector<torch::Tensor> window;
  std::vector<torch::Tensor> recent;
  for (int i = 0; i < 10; ++i) {
    window.push_back(net->forward(x));
    recent.push_back(net->forward(x));
    std::cout << torch::stack(window).sum().item<float>() << "\n";
    if (verbose) {
      std::cout << recent.size() << "\n";
      recent.clear();
    } else {
      recent = {};
    }
    window = std::vector<torch::Tensor>();
  }
}

void positiveClearedOnSomePathsOnly(Net &net, torch::Tensor x, bool verbose) {
  std::vector<torch::Tensor> recent;
  for (int i = 0; i < 10; ++i) {
    recent.push_back(net->forward(x));
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'net->forward(x)' stored in a container inside a loop keeps its autograd graph alive; consider storing 'net->forward(x).detach()' [torch-loss-stored-in-container]
    // FIXED: {{^}}    recent.push_back(net->forward(x).detach());{{$}}
    if (verbose)
      recent.clear();
  }
}

// A replay pool of generated images (CycleGAN's ImagePool, marmikshah/cyclegan-libtorch): the
// helper loops over the batch it is handed and keeps each image in a member; what it hands
// back is detached. Called every step with the generator's output, it pins every graph.
class ImagePool {
public:
  torch::Tensor query(torch::Tensor images) {
    std::vector<torch::Tensor> batch;
    for (int64_t i = 0; i < images.size(0); ++i) {
      batch.push_back(images[i].detach().clone());
      pool_.push_back(images[i]);
    }
    return torch::stack(batch);
  }

private:
  std::deque<torch::Tensor> pool_;
};

void positivePoolOfGeneratorOutputs(Net &gen, Net &dis, torch::optim::SGD &opt, torch::Tensor z) {
  ImagePool pool;
  for (int step = 0; step < 10; ++step) {
    opt.zero_grad();
    auto fake = gen->forward(z);
    dis->forward(fake).mean().backward();
    opt.step();
    auto replay = pool.query(fake);
    // CHECK: :[[@LINE-1]]:19: warning: graph-attached tensor 'fake' stored in a container inside a loop (by the called function)
    // CHECK: :[[@LINE-18]]:7: note: the called function stores it here
    std::cout << dis->forward(replay).mean().item<float>() << "\n";
  }
}

void negativePoolOfDetachedOutputs(Net &gen, Net &dis, torch::optim::SGD &opt, torch::Tensor z) {
  ImagePool pool;
  for (int step = 0; step < 10; ++step) {
    opt.zero_grad();
    auto fake = gen->forward(z);
    dis->forward(fake).mean().backward();
    opt.step();
    auto replay = pool.query(fake.detach());
    std::cout << dis->forward(replay).mean().item<float>() << "\n";
  }
}

// The losses go to the std::function the only caller passes, which backpropagates them all:
// kept on purpose (before, the call of the parameter was followed nowhere).
void lossesToCallback(Net &net, const std::vector<torch::Tensor> &xs,
                      const std::function<void(const std::vector<torch::Tensor> &)> &done) {
  std::vector<torch::Tensor> losses;
  for (const auto &x : xs)
    losses.push_back(net->forward(x).sum());
  done(losses);
}
void negativeLossesBackpropagatedByCallback(Net &net, const std::vector<torch::Tensor> &xs) {
  lossesToCallback(net, xs, [](const std::vector<torch::Tensor> &l) { torch::stack(l).sum().backward(); });
}
// The same helper whose callback only counts them: every graph is kept for nothing.
void lossesToCounter(Net &net, const std::vector<torch::Tensor> &xs,
                     const std::function<void(const std::vector<torch::Tensor> &)> &done) {
  std::vector<torch::Tensor> losses;
  for (const auto &x : xs)
    losses.push_back(net->forward(x).sum());
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'net->forward(x).sum()' stored in a container inside a loop keeps its autograd graph alive
  done(losses);
}
void positiveLossesCountedByCallback(Net &net, const std::vector<torch::Tensor> &xs) {
  lossesToCounter(net, xs, [](const std::vector<torch::Tensor> &l) { std::cout << l.size() << "\n"; });
}

// A lambda, a functor or a helper that returns the loss it computes: what it returns is kept
// (before, the lambda's and the functor's calls were read as ops over their arguments, and a
// helper's parameters were unknown).
struct LossOf {
  Net &net;
  torch::Tensor operator()(const torch::Tensor &x, const torch::Tensor &y) {
    return torch::mse_loss(net->forward(x), y);
  }
};
torch::Tensor lossOver(const torch::Tensor &output, const torch::Tensor &target) {
  return torch::mse_loss(output, target);
}
void positiveLossReturnedByCallables(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> losses;
  auto trainStep = [&](const torch::Tensor &in, const torch::Tensor &target) {
    opt.zero_grad();
    auto loss = torch::mse_loss(net->forward(in), target);
    loss.backward();
    opt.step();
    return loss;
  };
  LossOf lossOf{net};
  for (int i = 0; i < 10; ++i) {
    losses.push_back(trainStep(x, y));
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'trainStep(x, y)' stored in a container
    // FIXED: {{^}}    losses.push_back(trainStep(x, y).detach());{{$}}
    losses.push_back(lossOf(x, y));
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'lossOf(x, y)' stored in a container
    // FIXED: {{^}}    losses.push_back(lossOf(x, y).detach());{{$}}
    auto output = net->forward(x);
    auto loss = lossOver(output, y);
    losses.push_back(loss);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'loss' stored in a container
    // FIXED: {{^}}    losses.push_back(loss.detach());{{$}}
  }
}

// The same callables returning what they compute detached, or over values with no graph:
// nothing is kept (before, the lambda's call over the model's output was read as attached).
void negativeValuesReturnedByCallables(Net &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor y) {
  std::vector<torch::Tensor> scores;
  auto score = [](const torch::Tensor &out) { return out.detach().sum(); };
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto output = net->forward(x);
    scores.push_back(score(output));
    scores.push_back(lossOver(output.detach(), y));
    torch::mse_loss(output, y).backward();
    opt.step();
  }
}

// A helper of this file writing the forward's output to a `Tensor &` out-parameter: the local
// it fills holds this step's graph (before, only a helper of another TU was read, through the
// project index).
void runModel(Net &net, const torch::Tensor &x, torch::Tensor &out) { out = net->forward(x); }
void runModelDetached(Net &net, const torch::Tensor &x, torch::Tensor &out) { out = net->forward(x).detach(); }
void runModelForEval(Net &net, const torch::Tensor &x, torch::Tensor &out) { out = net->forward(x); }
void fillPlaceholder(torch::Tensor &out) { out = torch::zeros({3}); }

void positiveOutParameterOfThisFile(Net &net, torch::optim::SGD &opt) {
  auto loader = makeLoader();
  std::vector<torch::Tensor> outputs;
  for (auto &batch : *loader) {
    torch::Tensor y;
    runModel(net, batch.data, y);
    auto loss = torch::mse_loss(y, batch.target);
    opt.zero_grad();
    loss.backward();
    opt.step();
    outputs.push_back(y);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'y' stored in a container inside a loop keeps its autograd graph alive; consider storing 'y.detach()' [torch-loss-stored-in-container]
    // CHECK: :[[@LINE-17]]:77: note: the tensor became graph-attached here
    // CHECK: :[[@LINE-10]]:3: note: loop starts here
    // FIXED: {{^}}    outputs.push_back(y.detach());{{$}}
  }
  std::cout << outputs.size() << "\n";
}

void negativeOutParameterDetachedOrOnTheHost(Net &net, torch::optim::SGD &opt) {
  auto loader = makeLoader();
  std::vector<torch::Tensor> outputs;
  for (auto &batch : *loader) {
    torch::Tensor y, z, placeholder;
    runModel(net, batch.data, y);
    runModelDetached(net, batch.data, z);
    fillPlaceholder(placeholder);
    auto loss = torch::mse_loss(y, batch.target);
    opt.zero_grad();
    loss.backward();
    opt.step();
    outputs.push_back(y.detach());
    outputs.push_back(z);
    outputs.push_back(placeholder);
  }
  std::cout << outputs.size() << "\n";
}

void negativeOutParameterUnderNoGrad(Net &net) {
  torch::NoGradGuard no_grad;
  auto loader = makeLoader();
  std::vector<torch::Tensor> outputs;
  for (auto &batch : *loader) {
    torch::Tensor y;
    runModelForEval(net, batch.data, y);
    outputs.push_back(y);
  }
  std::cout << outputs.size() << "\n";
}

// A member of the struct a module's forward returns: `o.loss` is the step's loss (before, a
// struct's field was followed only to assignments to it in the caller).
struct ForwardOutput {
  torch::Tensor logits;
  torch::Tensor loss;
};
struct ScoredNetImpl : torch::nn::Module {
  ScoredNetImpl() : fc(register_module("fc", torch::nn::Linear(4, 1))) {}
  ForwardOutput forward(torch::Tensor x, torch::Tensor t) {
    auto logits = fc(x);
    auto loss = torch::mse_loss(logits, t);
    return {logits, loss};
  }
  ForwardOutput predict(torch::Tensor x) {
    ForwardOutput out;
    out.logits = fc(x).detach();
    out.loss = torch::zeros({});
    return out;
  }
  torch::nn::Linear fc;
};
TORCH_MODULE(ScoredNet);

void positiveMemberOfForwardOutput(ScoredNet &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor t) {
  std::vector<torch::Tensor> losses;
  for (int i = 0; i < 10; ++i) {
    auto o = net->forward(x, t);
    opt.zero_grad();
    o.loss.backward();
    opt.step();
    losses.push_back(o.loss);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'o.loss' stored in a container inside a loop keeps its autograd graph alive; consider storing 'o.loss.item<float>()' or 'o.loss.detach()' [torch-loss-stored-in-container]
    // CHECK: :[[@LINE-23]]:19: note: the tensor became graph-attached here
    // FIXED: {{^}}    losses.push_back(o.loss.detach());{{$}}
    losses.push_back(net->forward(x, t).logits);
    // CHECK: :[[@LINE-1]]:5: warning: graph-attached tensor 'net->forward(x, t).logits' stored in a container
    // FIXED: {{^}}    losses.push_back(net->forward(x, t).logits.detach());{{$}}
  }
  std::cout << torch::stack(losses).mean().item<float>() << "\n";
}

void negativeMemberOfForwardOutput(ScoredNet &net, torch::optim::SGD &opt, torch::Tensor x, torch::Tensor t) {
  std::vector<torch::Tensor> losses;
  std::vector<float> values;
  for (int i = 0; i < 10; ++i) {
    auto o = net->forward(x, t);
    opt.zero_grad();
    o.loss.backward();
    opt.step();
    losses.push_back(o.loss.detach());
    values.push_back(o.loss.item<float>());
    auto p = net->predict(x);
    losses.push_back(p.logits);
    losses.push_back(p.loss);
  }
  std::cout << losses.size() << values.size() << "\n";
}
