// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The spellings of the sandbox contract's enumerations, in one small file that the pieces reading
// them (the CLI's options, the configuration, the verdict cache) can link without the provider.
#include "cordon/mode.hpp"

#include "sandbox/local_provider.hpp"
#include "sandbox/rung_report.hpp"

namespace cordon::sandbox {

std::string_view to_string(sandbox_mode mode) noexcept {
    switch (mode) {
        case sandbox_mode::read_only:
            return "read-only";
        case sandbox_mode::workspace_write:
            return "workspace-write";
        case sandbox_mode::danger_full_access:
            return "danger-full-access";
    }
    return "invalid";
}

std::string_view to_string(enforcement value) noexcept {
    switch (value) {
        case enforcement::full:
            return "full";
        case enforcement::partial:
            return "partial";
    }
    return "invalid";
}

std::optional<sandbox_mode> parse_sandbox_mode(std::string_view text) noexcept {
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write,
                      sandbox_mode::danger_full_access}) {
        if (text == to_string(mode)) return mode;
    }
    return std::nullopt;
}

std::string_view to_string(backend_choice choice) noexcept {
    switch (choice) {
        case backend_choice::automatic:
            return "auto";
        case backend_choice::bwrap:
            return "bwrap";
        case backend_choice::landlock:
            return "landlock";
        case backend_choice::seatbelt:
            return "seatbelt";
    }
    return "invalid";
}

std::optional<backend_choice> parse_backend_choice(std::string_view text) noexcept {
    for (auto choice : {backend_choice::automatic, backend_choice::bwrap, backend_choice::landlock,
                        backend_choice::seatbelt}) {
        if (text == to_string(choice)) return choice;
    }
    return std::nullopt;
}

std::string_view to_string(rung_state state) noexcept {
    switch (state) {
        case rung_state::usable:
            return "usable";
        case rung_state::unusable:
            return "unusable";
        case rung_state::not_probed:
            return "not probed";
    }
    return "invalid";
}

}  // namespace cordon::sandbox
