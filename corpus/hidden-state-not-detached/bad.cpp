// A character-level language model trained on one long stream in chunks (truncated
// backpropagation through time). The LSTM's (h, c) is carried from chunk to chunk but never
// detached: the second chunk's backward() runs into the first chunk's graph, already freed.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <tuple>
#include <vector>

#include "../probe/torchtidy_probe.h"

struct CharModelImpl : torch::nn::Module {
  CharModelImpl(int64_t vocab, int64_t hidden)
      : embedding(register_module("embedding", torch::nn::Embedding(vocab, 16))),
        lstm(register_module("lstm", torch::nn::LSTM(torch::nn::LSTMOptions(16, hidden)))),
        head(register_module("head", torch::nn::Linear(hidden, vocab))) {}

  std::tuple<torch::Tensor, std::tuple<torch::Tensor, torch::Tensor>> forward(
      const torch::Tensor& tokens, const std::tuple<torch::Tensor, torch::Tensor>& state) {
    auto out = lstm->forward(embedding->forward(tokens), state);
    return {head->forward(std::get<0>(out)), std::get<1>(out)};
  }

  torch::nn::Embedding embedding;
  torch::nn::LSTM lstm;
  torch::nn::Linear head;
};
TORCH_MODULE(CharModel);

int main() {
  torch::manual_seed(0);
  const torch::Device device = probe::device();
  constexpr int64_t kVocab = 32, kHidden = 64, kBatch = 4, kChunk = 16, kChunks = 30;
  const torch::Tensor stream = torch::randint(kVocab, {kChunks * kChunk + 1, kBatch}, torch::TensorOptions(torch::kLong).device(device));
  CharModel model(kVocab, kHidden);
  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-3));

  std::tuple<torch::Tensor, torch::Tensor> state{torch::zeros({1, kBatch, kHidden}, device), torch::zeros({1, kBatch, kHidden}, device)};
  std::vector<float> losses;
  try {
    for (int64_t chunk = 0; chunk < kChunks; ++chunk) {
      probe::iteration();
      probe::keep(std::get<0>(state));  // what this chunk receives from the previous one
      const torch::Tensor inputs = stream.slice(0, chunk * kChunk, (chunk + 1) * kChunk);
      const torch::Tensor targets = stream.slice(0, chunk * kChunk + 1, (chunk + 1) * kChunk + 1);
      optimizer.zero_grad();
      auto [logits, next_state] = model->forward(inputs, state);
      state = next_state;
      torch::Tensor loss = torch::nn::functional::cross_entropy(logits.reshape({-1, kVocab}), targets.reshape({-1}));
      loss.backward();
      optimizer.step();
      losses.push_back(loss.item<float>());
    }
  } catch (const c10::Error& e) {
    probe::error(e);
    std::printf("training stopped after %zu chunks: %s\n", losses.size(), e.what_without_backtrace());
    return 1;
  }
  std::printf("first loss %.3f, last loss %.3f\n", losses.front(), losses.back());
  return 0;
}
