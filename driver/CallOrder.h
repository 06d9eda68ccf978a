// The order a run with the project index starts its translation units in: callees first.
#ifndef TORCHTIDY_DRIVER_CALLORDER_H
#define TORCHTIDY_DRIVER_CALLORDER_H

#include "Job.h"

#include <vector>

namespace torchtidy::driver {

/// The indices of \p Jobs, each TU after the TUs that define the functions it calls, as a
/// lexical scan of the main files sees them (a name followed by `(...)` and a body outside any
/// function body is defined, a name followed by `(` in a body is called); call cycles are
/// broken in favour of the TU with the fewest callees still waiting, ties in database order.
/// A TU started after its callees' TUs have finished gets, from the summaries gathered so far,
/// the answers the complete index gives, and is not analyzed a second time. Only an
/// optimization: the driver still analyzes again every TU whose answers differ from the
/// complete index's.
std::vector<size_t> calleesFirst(const std::vector<Job> &Jobs);

} // namespace torchtidy::driver

#endif
