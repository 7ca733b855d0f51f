#include "runtime/environment.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace cordon::runtime {

bool is_credential_name(std::string_view name) noexcept {
    static constexpr std::array<std::string_view, 4> markers{"KEY", "PASSWORD", "SECRET", "TOKEN"};
    for (std::string_view marker : markers) {
        if (name.size() < marker.size()) continue;
        for (std::size_t at = 0; at + marker.size() <= name.size(); ++at) {
            bool match = true;
            for (std::size_t i = 0; i < marker.size() && match; ++i) {
                match = std::toupper(static_cast<unsigned char>(name[at + i])) == marker[i];
            }
            if (match) return true;
        }
    }
    return false;
}

const std::map<std::string, std::string>& non_interactive_defaults() {
    static const std::map<std::string, std::string> defaults{
        {"NO_COLOR", "1"}, {"TERM", "dumb"}, {"PAGER", "cat"}, {"GIT_PAGER", "cat"}};
    return defaults;
}

std::vector<std::string> build_environment(
    const char* const* parent,
    const std::map<std::string, std::optional<std::string>>& explicit_vars) {
    std::map<std::string, std::string> merged;
    for (const char* const* entry = parent; entry != nullptr && *entry != nullptr; ++entry) {
        std::string_view text(*entry);
        auto equals = text.find('=');
        if (equals == std::string_view::npos || equals == 0) continue;
        std::string_view name = text.substr(0, equals);
        if (is_credential_name(name)) continue;
        merged.insert_or_assign(std::string(name), std::string(text.substr(equals + 1)));
    }
    for (const auto& [name, value] : non_interactive_defaults())
        merged[name] = value;
    for (const auto& [name, value] : explicit_vars) {
        if (value) {
            merged[name] = *value;
        } else {
            merged.erase(name);
        }
    }
    std::vector<std::string> out;
    out.reserve(merged.size());
    for (const auto& [name, value] : merged)
        out.push_back(name + "=" + value);
    return out;
}

}  // namespace cordon::runtime
