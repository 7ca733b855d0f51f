// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The spellings of the sandbox contract's enumerations, in one small file that the pieces reading
// them (the CLI's options, the configuration, the verdict cache) can link without the provider.
#include "cordon/mode.hpp"

#include "base/enum_text.hpp"
#include "sandbox/local_provider.hpp"
#include "sandbox/rung_report.hpp"

namespace cordon::sandbox {

constexpr auto sandbox_mode_texts = base::enum_texts<sandbox_mode>({
    {sandbox_mode::read_only, "read-only"},
    {sandbox_mode::workspace_write, "workspace-write"},
    {sandbox_mode::danger_full_access, "danger-full-access"},
});

std::string_view to_string(sandbox_mode mode) noexcept {
    return sandbox_mode_texts.text(mode);
}

constexpr auto enforcement_texts = base::enum_texts<enforcement>({
    {enforcement::full, "full"},
    {enforcement::partial, "partial"},
});

std::string_view to_string(enforcement value) noexcept {
    return enforcement_texts.text(value);
}

std::optional<sandbox_mode> parse_sandbox_mode(std::string_view text) noexcept {
    return sandbox_mode_texts.parse(text);
}

constexpr auto backend_choice_texts = base::enum_texts<backend_choice>({
    {backend_choice::automatic, "auto"},
    {backend_choice::bwrap, "bwrap"},
    {backend_choice::landlock, "landlock"},
    {backend_choice::seatbelt, "seatbelt"},
});

std::string_view to_string(backend_choice choice) noexcept {
    return backend_choice_texts.text(choice);
}

std::optional<backend_choice> parse_backend_choice(std::string_view text) noexcept {
    return backend_choice_texts.parse(text);
}

constexpr auto rung_state_texts = base::enum_texts<rung_state>({
    {rung_state::usable, "usable"},
    {rung_state::unusable, "unusable"},
    {rung_state::not_probed, "not probed"},
});

std::string_view to_string(rung_state state) noexcept {
    return rung_state_texts.text(state);
}

}  // namespace cordon::sandbox
