// The record of one run: how it ended (one classify::run_outcome), its output, its limits and
// the sandbox facts (mode, enforcement, denied, backend). Plain values; converted to JSON in
// record_json.cpp and to the human rendering in render.cpp, nowhere else.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <variant>

#include "classify/outcome.hpp"
#include "runtime/limits.hpp"
#include "runtime/output_collector.hpp"
#include "sandbox/confined_argv.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/mode.hpp"

namespace cordon::runtime {

using classify::outcome_kind;
using classify::run_outcome;
using classify::signal_name;

struct sandbox_facts {
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::read_only;
    std::optional<sandbox::enforcement> enforcement;  // absent for danger-full-access
    bool denied = false;
    std::optional<sandbox::backend_kind> backend;  // absent for danger-full-access
};

struct run_record {
    run_outcome outcome;
    std::chrono::milliseconds timeout{0};
    double duration_ms = 0;
    collected_output stdout_output;
    collected_output stderr_output;
    sandbox_facts sandbox;
    run_limits limits;        // the limits the run's cgroup enforced (nullopt: none)
    limit_events limits_hit;  // whether the run met them
};

// What an asynchronous run delivers: a record, or the fail-closed sandbox error (the command did
// not run: no backend could enforce the mode, or its runner failed).
using run_result = std::variant<run_record, sandbox::sandbox_unavailable_error>;

}  // namespace cordon::runtime
