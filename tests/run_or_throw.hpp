// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// runtime::run() with the contract's exception: a record whose sandbox could not run the command
// (runner_failed) is thrown as sandbox_unavailable_error. The suites that attack the runners and
// the backends tell a refusal from a run by catching it, as callers of the library may.
#pragma once

#include <memory>

#include "cordon/record.hpp"
#include "cordon/run.hpp"

namespace cordon::test {

inline runtime::run_record run_or_throw(std::shared_ptr<sandbox::provider> provider,
                                        runtime::run_request request,
                                        runtime::executor_options options = {}) {
    runtime::run_record record =
        runtime::run(std::move(provider), std::move(request), std::move(options));
    if (record.outcome.kind == runtime::outcome_kind::runner_failed) {
        throw runtime::sandbox_unavailable(record);
    }
    return record;
}

}  // namespace cordon::test
