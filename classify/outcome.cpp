// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/outcome.hpp"

#include <cstring>

namespace cordon::classify {

std::string_view to_string(spawn_stage stage) noexcept {
    switch (stage) {
        case spawn_stage::policy:
            return "policy";
        case spawn_stage::resolve:
            return "resolve";
        case spawn_stage::resources:
            return "resources";
        case spawn_stage::signals:
            return "signals";
        case spawn_stage::session:
            return "session";
        case spawn_stage::cgroup:
            return "cgroup";
        case spawn_stage::fds:
            return "fds";
        case spawn_stage::chdir:
            return "chdir";
        case spawn_stage::exec:
            return "exec";
        case spawn_stage::confine:
            return "confine";
    }
    return "invalid";
}

std::string describe(const spawn_error& error, std::string_view program) {
    std::string text;
    switch (error.stage) {
        case spawn_stage::resolve:
        case spawn_stage::exec:
            text = std::string(program);
            break;
        case spawn_stage::chdir:
            text = "cannot enter the working directory";
            break;
        case spawn_stage::policy:
            text = "refused";
            break;
        case spawn_stage::resources:
        case spawn_stage::signals:
        case spawn_stage::session:
        case spawn_stage::cgroup:
        case spawn_stage::fds:
        case spawn_stage::confine:
            text = "spawn failed at stage " + std::string(to_string(error.stage));
            break;
    }
    return text + ": " + std::strerror(error.error);
}

std::string_view to_string(outcome_kind kind) noexcept {
    switch (kind) {
        case outcome_kind::exited:
            return "exited";
        case outcome_kind::signaled:
            return "signaled";
        case outcome_kind::timed_out:
            return "timed-out";
        case outcome_kind::out_of_memory:
            return "out-of-memory";
        case outcome_kind::aborted:
            return "aborted";
        case outcome_kind::not_started:
            return "not-started";
        case outcome_kind::runner_failed:
            return "runner-failed";
    }
    return "invalid";
}

std::string_view to_string(denial_source source) noexcept {
    switch (source) {
        case denial_source::path:
            return "path";
        case denial_source::dialect:
            return "dialect";
    }
    return "invalid";
}

std::string signal_name(int signal) {
    if (const char* abbrev = ::sigabbrev_np(signal); abbrev != nullptr) {
        return std::string("SIG") + abbrev;
    }
    return "SIG" + std::to_string(signal);
}

}  // namespace cordon::classify
