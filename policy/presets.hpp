// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Permission presets: named pairs of the two knobs, a sandbox mode and an approval policy.
//
//   preset               sandbox/mode         approval/policy
//   workspace-write      workspace-write      ask
//   danger-full-access   danger-full-access   never
//   custom               (derived only: the knobs match no preset)
//
// current() reads the knobs from a session (falling back to the deployment's defaults), prefers
// the session's last permission/preset when it still matches, else the first preset of the table
// that matches, else "custom". set() writes only what changes: a permission/preset event when
// the preset changes, and each knob's event only when its effective value changes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cordon/mode.hpp"
#include "cordon/session_log.hpp"

namespace cordon::policy {

struct preset {
    std::string name;
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::workspace_write;
    approval_policy approval = approval_policy::ask;
    std::string description;
};

inline constexpr std::string_view custom_preset = "custom";

// The table above, in that order.
[[nodiscard]] std::vector<preset> default_presets();

// A table a deployment configured: an error for an empty table, a duplicate or empty name, or
// an entry named "custom".
[[nodiscard]] std::optional<std::string> check_presets(const std::vector<preset>& table);

struct knobs {
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::read_only;
    approval_policy approval = approval_policy::ask;
};

// The effective knobs: the session's events, else `defaults`.
[[nodiscard]] knobs effective_knobs(const session_state& state, const knobs& defaults);

// The preset's name, or "custom".
[[nodiscard]] std::string current_preset(const std::vector<preset>& table,
                                         const session_state& state, const knobs& defaults);

// The preset named `name`, or null.
[[nodiscard]] const preset* find_preset(const std::vector<preset>& table, std::string_view name);
//   unknown preset "<name>" (available: workspace-write, danger-full-access)
[[nodiscard]] std::string unknown_preset(const std::vector<preset>& table, std::string_view name);

// Selects preset `name` for the session (an unknown name is unknown_preset()'s error).
// Returns the events written (none when nothing changes).
[[nodiscard]] std::variant<std::vector<nlohmann::json>, log_error> set_preset(
    const session_log& log, const std::vector<preset>& table, std::string_view name,
    const knobs& defaults);

// Sets one knob: appends its event unless the session records that value already (a value it
// does not record is not pinned, even when it is the default: a configuration file below the
// session would choose it). True when written.
[[nodiscard]] std::variant<bool, log_error> set_mode(const session_log& log,
                                                     sandbox::sandbox_mode mode);
[[nodiscard]] std::variant<bool, log_error> set_approval_policy(const session_log& log,
                                                                approval_policy policy);

}  // namespace cordon::policy
