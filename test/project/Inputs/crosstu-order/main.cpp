#include "fit.h"

int main() {
  Net net;
  torch::optim::SGD opt(net->parameters(), 0.1);
  fit(net, opt, 3);
}
