// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/outcome.hpp"

#include "base/enum_text.hpp"

#include <cstring>

namespace cordon::classify {

constexpr auto spawn_stage_texts = base::enum_texts<spawn_stage>({
    {spawn_stage::policy, "policy"},
    {spawn_stage::resolve, "resolve"},
    {spawn_stage::resources, "resources"},
    {spawn_stage::signals, "signals"},
    {spawn_stage::session, "session"},
    {spawn_stage::cgroup, "cgroup"},
    {spawn_stage::fds, "fds"},
    {spawn_stage::chdir, "chdir"},
    {spawn_stage::exec, "exec"},
    {spawn_stage::confine, "confine"},
});

std::string_view to_string(spawn_stage stage) noexcept {
    return spawn_stage_texts.text(stage);
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

constexpr auto outcome_kind_texts = base::enum_texts<outcome_kind>({
    {outcome_kind::exited, "exited"},
    {outcome_kind::signaled, "signaled"},
    {outcome_kind::timed_out, "timed-out"},
    {outcome_kind::out_of_memory, "out-of-memory"},
    {outcome_kind::aborted, "aborted"},
    {outcome_kind::not_started, "not-started"},
    {outcome_kind::runner_failed, "runner-failed"},
});

std::string_view to_string(outcome_kind kind) noexcept {
    return outcome_kind_texts.text(kind);
}

constexpr auto denial_source_texts = base::enum_texts<denial_source>({
    {denial_source::path, "path"},
    {denial_source::dialect, "dialect"},
});

std::string_view to_string(denial_source source) noexcept {
    return denial_source_texts.text(source);
}

std::string signal_name(int signal) {
    if (const char* abbrev = ::sigabbrev_np(signal); abbrev != nullptr) {
        return std::string("SIG") + abbrev;
    }
    return "SIG" + std::to_string(signal);
}

}  // namespace cordon::classify
