// The order a run with the project index starts its translation units in: callees first.
#ifndef TORCHTIDY_DRIVER_CALLORDER_H
#define TORCHTIDY_DRIVER_CALLORDER_H

#include "Job.h"

#include <vector>

namespace torchtidy::driver {

/// The order the first pass of a run with the project index starts its translation units in,
/// and what each one waits for.
struct CallPlan {
  /// The indices of the jobs, each TU after the TUs that define the functions it calls, as a
  /// lexical scan sees them: of its main file and of the project headers it includes with
  /// quotes (their inline functions are analyzed with it). A name followed by `(...)` and a
  /// body outside any function body is defined (in the main file only), a name followed by
  /// `(` or a CUDA launch's `<<<` in a body is called. Call cycles are broken in favour of the
  /// TU with the fewest callees still waiting, ties in database order.
  std::vector<size_t> Order;
  /// For each job, the jobs before it in Order that define functions it calls: it starts
  /// once they have finished (an idle worker is cheaper than a second analysis).
  std::vector<std::vector<size_t>> WaitsFor;
};

/// A TU started after its callees' TUs have finished gets, from the summaries gathered so far,
/// the answers the complete index gives, and is not analyzed a second time. Only an
/// optimization: the driver still analyzes again every TU whose answers differ from the
/// complete index's.
CallPlan calleesFirst(const std::vector<Job> &Jobs);

} // namespace torchtidy::driver

#endif
