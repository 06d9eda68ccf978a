// Checks the probe's CPU byte counting against the LibTorch it is built with; scripts/confirm
// runs it before the corpus. PyTorch 2.x calls raw_allocate() on the CPU allocator, which asserts
// that a DataPtr's context is its data: a counting allocator that hands out any other context
// stops the program there (hidden-state-not-detached did on PyTorch 2.11).
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

#include "../../corpus/probe/torchtidy_probe.h"

namespace {
int failures = 0;

void expect(bool ok, const char* what, int64_t got, int64_t want) {
  if (ok) return;
  std::fprintf(stderr, "probe self-test: %s: got %lld, want %lld\n", what, static_cast<long long>(got),
               static_cast<long long>(want));
  ++failures;
}
}  // namespace

int main() {
  auto& counting = probe::detail::allocator();
  c10::Allocator* cpu = c10::GetCPUAllocator();
  expect(cpu == &counting, "the CPU allocator is the probe's", 0, 1);
  const int64_t before = counting.live();

  void* raw = cpu->raw_allocate(4096);
  expect(counting.live() - before == 4096, "live bytes after raw_allocate(4096)", counting.live() - before, 4096);
  cpu->raw_deallocate(raw);
  expect(counting.live() == before, "live bytes after raw_deallocate", counting.live() - before, 0);

  {
    const torch::Tensor t = torch::empty({1024}, torch::kFloat);
    expect(counting.live() - before == 4096, "live bytes of a 1024-float tensor", counting.live() - before, 4096);
    // A tensor made on one thread and freed on another is counted both ways.
    torch::Tensor u;
    std::thread([&] { u = torch::ones({256}, torch::kFloat); }).join();
    expect(counting.live() - before == 5120, "live bytes with a worker thread's tensor", counting.live() - before,
           5120);
  }
  expect(counting.live() == before, "live bytes after every tensor is freed", counting.live() - before, 0);
  if (failures == 0) std::puts("probe self-test passed");
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
