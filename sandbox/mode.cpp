#include "sandbox/mode.hpp"

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

}  // namespace cordon::sandbox
