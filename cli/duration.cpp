#include "cli/duration.hpp"

#include <charconv>
#include <cstdint>
#include <string>

namespace cordon::cli {

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
    std::uint64_t value = 0;
    const char* end = text.data() + text.size();
    auto [rest, error] = std::from_chars(text.data(), end, value);
    if (error != std::errc() || rest == text.data() || value == 0) return std::nullopt;
    std::string_view unit(rest, static_cast<std::size_t>(end - rest));
    std::uint64_t scale;
    if (unit == "ms") {
        scale = 1;
    } else if (unit.empty() || unit == "s") {
        scale = 1000;
    } else if (unit == "m") {
        scale = 60'000;
    } else if (unit == "h") {
        scale = 3'600'000;
    } else {
        return std::nullopt;
    }
    if (value > UINT64_MAX / scale / 2) return std::nullopt;
    return std::chrono::milliseconds(static_cast<std::int64_t>(value * scale));
}

std::optional<std::uint64_t> parse_byte_count(std::string_view text) {
    std::uint64_t value = 0;
    const char* end = text.data() + text.size();
    auto [rest, error] = std::from_chars(text.data(), end, value);
    if (error != std::errc() || rest != end || value == 0) return std::nullopt;
    return value;
}

std::optional<std::uint64_t> parse_size(std::string_view text) {
    std::uint64_t value = 0;
    const char* end = text.data() + text.size();
    auto [rest, error] = std::from_chars(text.data(), end, value);
    if (error != std::errc() || rest == text.data() || value == 0) return std::nullopt;
    std::string suffix(rest, end);
    for (char& c : suffix)
        c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    int shift = 0;
    if (suffix.empty() || suffix == "B") {
        shift = 0;
    } else if (suffix == "K" || suffix == "KIB") {
        shift = 10;
    } else if (suffix == "M" || suffix == "MIB") {
        shift = 20;
    } else if (suffix == "G" || suffix == "GIB") {
        shift = 30;
    } else {
        return std::nullopt;
    }
    if (value > (UINT64_MAX >> shift)) return std::nullopt;
    return value << shift;
}

}  // namespace cordon::cli
