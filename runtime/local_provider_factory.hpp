// Wires the sandbox library's local provider to the runtime's spawn path, so that its probes run
// exactly as real runs do (status channel included).
#pragma once

#include <memory>

#include "sandbox/local_provider.hpp"

namespace cordon::runtime {

[[nodiscard]] std::shared_ptr<sandbox::local_provider> make_local_provider(
    sandbox::local_provider_options options = {});

// The probe runner itself, exposed for tests.
[[nodiscard]] sandbox::probe_run_result run_probe(const sandbox::confined_argv& wrapped,
                                                  std::chrono::milliseconds timeout);

}  // namespace cordon::runtime
