// RUN: %tidy --checks='-*,torch-cat-in-loop' %s -- %torch_flags 2>&1 | %filecheck %s
#include <torch/torch.h>

#include <vector>

struct NetImpl : torch::nn::Module {
  NetImpl() : fc(register_module("fc", torch::nn::Linear(8, 4))) {}
  torch::Tensor forward(torch::Tensor x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Net);

using Dataset = torch::data::datasets::TensorDataset;

auto makeLoader() {
  return torch::data::make_data_loader(
      Dataset(torch::randn({64, 8})).map(torch::data::transforms::Stack<torch::data::TensorExample>()), 16);
}

// ---- positives ----------------------------------------------------------------------------

torch::Tensor positiveRangeForPredictions(Net model, torch::Device device) {
  torch::NoGradGuard no_grad;
  auto loader = makeLoader();
  torch::Tensor predictions = torch::empty({0}, torch::kLong);
  for (auto &batch : *loader) {
    auto output = model->forward(batch.data.to(device));
    predictions = torch::cat({predictions, output.argmax(1).cpu()});
    // CHECK: :[[@LINE-1]]:19: warning: 'predictions' is grown by 'torch::cat' of itself on every iteration, copying everything accumulated so far (quadratic time); consider collecting the pieces in a std::vector<torch::Tensor> and calling 'torch::cat' once after the loop [torch-cat-in-loop]
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
  }
  return predictions;
}

torch::Tensor positiveWhileUndefinedFirst(Net model, torch::Tensor x) {
  torch::Tensor features;
  int step = 0;
  while (step++ < 100) {
    auto out = model->forward(x).detach();
    if (!features.defined())
      features = out;
    else
      features = torch::cat({features, out}, 0);
    // CHECK: :[[@LINE-1]]:18: warning: 'features' is grown by 'torch::cat' of itself
    // CHECK: :[[@LINE-7]]:3: note: loop starts here
  }
  return features;
}

torch::Tensor positiveSwitchFirstPiece(const std::vector<torch::Tensor> &boxes) {
  torch::Tensor all;
  int state = 0;
  for (const auto &box : boxes) {
    switch (state) {
    case 0:
      all = box;
      state = 1;
      break;
    default:
      all = torch::cat({all, box}, 0);
      // CHECK: :[[@LINE-1]]:13: warning: 'all' is grown by 'torch::cat' of itself
      // CHECK: :[[@LINE-9]]:3: note: loop starts here
    }
  }
  return all;
}

torch::Tensor positiveConditionalPrepend(torch::Tensor x) {
  torch::Tensor history;
  for (int i = 0; i < 50; ++i) {
    auto frame = x * i;
    history = history.defined() ? torch::cat({frame, history}) : frame;
    // CHECK: :[[@LINE-1]]:35: warning: 'history' is grown by 'torch::cat' of itself
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
  }
  return history;
}

torch::Tensor positiveVstackUnderInterval(Net model, torch::optim::SGD &opt, torch::Tensor x) {
  torch::Tensor snapshots = torch::empty({0, 4});
  for (int step = 0; step < 1000; ++step) {
    opt.zero_grad();
    auto out = model->forward(x);
    out.sum().backward();
    opt.step();
    // Every tenth step still copies everything kept so far.
    if (step % 10 == 0)
      snapshots = torch::vstack({snapshots, out.detach()});
    // CHECK: :[[@LINE-1]]:19: warning: 'snapshots' is grown by 'torch::vstack' of itself
    // CHECK: :[[@LINE-9]]:3: note: loop starts here
  }
  return snapshots;
}

std::vector<torch::Tensor> positiveInnerLoopPerEpisode(torch::Tensor obs) {
  std::vector<torch::Tensor> episodes;
  for (int episode = 0; episode < 10; ++episode) {
    torch::Tensor states = torch::empty({0, 8});
    for (int t = 0; t < 200; ++t) {
      states = torch::cat({states, obs.unsqueeze(0) * t});
      // CHECK: :[[@LINE-1]]:16: warning: 'states' is grown by 'torch::cat' of itself
      // CHECK: :[[@LINE-3]]:5: note: loop starts here
    }
    episodes.push_back(states);
  }
  return episodes;
}

struct Stats {
  torch::Tensor targets;
  double loss = 0;
};

Stats positiveStructField(torch::Tensor y) {
  Stats stats;
  for (int i = 0; i < 20; ++i) {
    stats.targets = torch::cat({stats.targets, y});
    // CHECK: :[[@LINE-1]]:21: warning: 'targets' is grown by 'torch::cat' of itself
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
    stats.loss += 1;
  }
  return stats;
}

template <typename Model>
torch::Tensor positiveTemplate(Model &model, torch::Tensor x) {
  torch::Tensor outputs = torch::empty({0, 4});
  for (int i = 0; i < 10; ++i) {
    outputs = torch::cat({outputs, model->forward(x)});
    // CHECK: :[[@LINE-1]]:15: warning: 'outputs' is grown by 'torch::cat' of itself
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
  }
  return outputs;
}
template torch::Tensor positiveTemplate(Net &, torch::Tensor);

template <typename Model>
torch::Tensor positiveTemplateNeverInstantiated(Model &model, torch::Tensor x) {
  torch::Tensor outputs;
  for (int i = 0; i < 10; ++i) {
    auto out = model->forward(x);
    outputs = torch::cat({outputs, out});
    // CHECK: :[[@LINE-1]]:15: warning: 'outputs' is grown by 'torch::cat' of itself
    // CHECK: :[[@LINE-4]]:3: note: loop starts here
  }
  return outputs;
}

torch::Tensor positiveLambda(torch::Tensor x) {
  torch::Tensor all = torch::empty({0});
  auto collect = [&](const torch::Tensor &piece) { all = torch::cat({all, piece.flatten()}); };
  // CHECK: :[[@LINE-1]]:58: warning: 'all' is grown by 'torch::cat' of itself
  for (int i = 0; i < 30; ++i) {
    // CHECK: :[[@LINE+1]]:5: note: called on every iteration here
    collect(x * i);
    // CHECK: :[[@LINE-3]]:3: note: loop starts here
  }
  return all;
}

class RolloutBuffer {
public:
  void add(const torch::Tensor &reward) {
    rewards_ = torch::cat({rewards_, reward.view({1})});
    // CHECK: :[[@LINE-1]]:16: warning: 'rewards_' is grown by 'torch::cat' of itself
  }
  torch::Tensor rewards() const { return rewards_; }

private:
  torch::Tensor rewards_ = torch::empty({0});
};

void positiveMemberHelper(RolloutBuffer &buffer, torch::Tensor reward) {
  for (int t = 0; t < 2048; ++t)
    // CHECK: :[[@LINE+2]]:5: note: called on every iteration here
    // CHECK: :[[@LINE-2]]:3: note: loop starts here
    buffer.add(reward * t);
}

void appendRow(torch::Tensor &table, const torch::Tensor &row) {
  table = torch::cat({table, row.unsqueeze(0)});
  // CHECK: :[[@LINE-1]]:11: warning: 'table' is grown by 'torch::cat' of itself
}

torch::Tensor positiveReferenceParameterHelper(torch::Tensor x) {
  torch::Tensor table = torch::empty({0, 8});
  for (int i = 0; i < 64; ++i)
    // CHECK: :[[@LINE+2]]:5: note: called on every iteration here
    // CHECK: :[[@LINE-2]]:3: note: loop starts here
    appendRow(table, x * i);
  return table;
}

class EpisodeLog {
public:
  void push(const torch::Tensor &step) {
    steps_ = torch::cat({steps_, step.flatten()});
    // CHECK: :[[@LINE-1]]:14: warning: 'steps_' is grown by 'torch::cat' of itself
  }

private:
  torch::Tensor steps_ = torch::empty({0});
};

void recordStep(EpisodeLog &log, const torch::Tensor &obs) { log.push(obs * 2); }

void positiveHelperTwoCallsDeep(EpisodeLog &log, torch::Tensor obs) {
  // The note names the call in the loop (as every check's "loop here, else the caller's"
  // does), not the helper's own call in recordStep, which runs in no loop of its function.
  for (int t = 0; t < 512; ++t)
    // CHECK: :[[@LINE+2]]:5: note: called on every iteration here
    // CHECK: :[[@LINE-2]]:3: note: loop starts here
    recordStep(log, obs + t);
}

// ---- negatives ----------------------------------------------------------------------------

torch::Tensor negativeCollectThenCatOnce(Net model) {
  torch::NoGradGuard no_grad;
  auto loader = makeLoader();
  std::vector<torch::Tensor> predictions;
  for (auto &batch : *loader)
    predictions.push_back(model->forward(batch.data).argmax(1));
  return torch::cat(predictions);
}

void negativeFreshEachIteration(torch::Tensor a, torch::Tensor b) {
  for (int i = 0; i < 10; ++i) {
    torch::Tensor pair = a * i;
    pair = torch::cat({pair, b});
    std::vector<float> row(pair.data_ptr<float>(), pair.data_ptr<float>() + pair.numel());
  }
}

void negativeResetAtTopOfIteration(torch::Tensor a, torch::Tensor b) {
  torch::Tensor joined;
  for (int i = 0; i < 10; ++i) {
    joined = a * i;
    joined = torch::cat({joined, b});
  }
}

torch::Tensor negativePerIterationPieces(Net model, torch::optim::Adam &opt, torch::Tensor x, torch::Tensor y) {
  torch::Tensor last;
  for (int i = 0; i < 10; ++i) {
    opt.zero_grad();
    auto input = torch::cat({x, y}, 1).slice(1, 0, 8);
    auto pair = torch::stack({model->forward(input), model->forward(input)});
    pair.sum().backward();
    opt.step();
    last = pair.detach();
  }
  return last;
}

torch::Tensor negativeDenseBlock(std::vector<torch::nn::Linear> &layers, torch::Tensor x) {
  // Each layer reads every feature so far: the concatenation is needed on every iteration.
  torch::Tensor features = x;
  for (auto &layer : layers)
    features = torch::cat({features, torch::relu(layer->forward(features))}, 1);
  return features;
}

torch::Tensor negativeAutoregressiveDecoding(Net model, torch::Tensor prompt) {
  torch::NoGradGuard no_grad;
  torch::Tensor sequence = prompt;
  for (int i = 0; i < 16; ++i) {
    auto next = model->forward(sequence).slice(1, 0, 1);
    sequence = torch::cat({sequence, next}, 0);
  }
  return sequence;
}

torch::Tensor negativeSlidingWindow(torch::Tensor frame) {
  torch::Tensor window = torch::zeros({4, 8});
  for (int t = 0; t < 100; ++t)
    window = torch::cat({window.slice(0, 1), frame.unsqueeze(0)});
  return window;
}

torch::Tensor negativeTrimmedBuffer(torch::Tensor x) {
  torch::Tensor recent = torch::empty({0, 8});
  for (int t = 0; t < 100; ++t) {
    recent = torch::cat({recent, x.unsqueeze(0)});
    if (recent.size(0) > 32)
      recent = recent.slice(0, 1);
  }
  return recent;
}

void negativeFlushedBuffer(Net model, torch::Tensor x) {
  torch::Tensor pending = torch::empty({0, 8});
  for (int t = 0; t < 100; ++t) {
    pending = torch::cat({pending, x.unsqueeze(0)});
    if (pending.size(0) == 16) {
      model->forward(pending);
      pending = torch::empty({0, 8});
    }
  }
}

torch::Tensor negativeOnceOutsideLoops(torch::Tensor a, torch::Tensor b) {
  a = torch::cat({a, b});
  return a;
}

void negativeLogsOnlyTheItem(Net model, torch::optim::SGD &opt, torch::Tensor x) {
  std::vector<float> losses;
  for (int i = 0; i < 10; ++i) {
    model->zero_grad();
    auto loss = model->forward(x).pow(2).mean();
    loss.backward();
    opt.step();
    losses.push_back(loss.item<float>());
  }
}
