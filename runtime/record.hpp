// The record of one run: what happened (exit status, who ended it, output) and the sandbox facts
// (mode, enforcement, denied, backend). Plain values; converted to JSON in record_json.cpp and to
// the human rendering in render.cpp, nowhere else.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <variant>

#include "runtime/limits.hpp"
#include "runtime/output_collector.hpp"
#include "runtime/spawn.hpp"
#include "sandbox/confined_argv.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/mode.hpp"

namespace cordon::runtime {

struct sandbox_facts {
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::read_only;
    std::optional<sandbox::enforcement> level;  // absent for danger-full-access
    bool denied = false;
    std::optional<sandbox::backend_kind> backend;  // absent for danger-full-access
};

// The command could not be started (a missing program, an unusable working directory). Not a
// sandbox failure: for confined runs, a missing *runner* is reported as SANDBOX_UNAVAILABLE.
struct spawn_failure {
    spawn_error error;
    std::string message;  // "<program>: No such file or directory"
};

struct run_record {
    std::optional<int> exit_code;  // nullopt when killed by a signal or not started
    std::optional<int> signal;     // the signal number that killed the leader
    bool timed_out = false;
    bool aborted = false;
    std::chrono::milliseconds timeout{0};
    double duration_ms = 0;
    collected_output stdout_output;
    collected_output stderr_output;
    sandbox_facts sandbox;
    run_limits limits;        // the limits the run's cgroup enforced (nullopt: none)
    limit_events limits_hit;  // whether the run met them
    std::optional<spawn_failure> not_started;
};

// What an asynchronous run delivers: a record, or the fail-closed sandbox error (the command did
// not run).
using run_result = std::variant<run_record, sandbox::sandbox_unavailable_error>;

// "SIGTERM" for 15; "SIG<N>" for numbers without a name.
[[nodiscard]] std::string signal_name(int signal);

}  // namespace cordon::runtime
