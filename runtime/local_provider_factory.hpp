// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Wires the sandbox library's local provider to the runtime's spawn path, so that its probes run
// exactly as real runs do (status channel included) and are judged by the same classifier.
//
// Probing is a phase of its own, done here: make_local_provider() probes the ladder up to the
// first usable backend before it returns (a few real confined runs of `true`, typically tens of
// milliseconds, at most probe_timeout per run). Construct the provider at start-up, off any event
// loop that must stay responsive; after that, confine() never probes again, so an executor's
// async_run never blocks on a probe.
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
