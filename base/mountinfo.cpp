// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "base/mountinfo.hpp"

#include "base/number.hpp"
#include "base/small_file.hpp"
#include "base/text.hpp"

namespace cordon::base {

namespace {

bool octal(char c) {
    return c >= '0' && c <= '7';
}

// "major:minor", both decimal.
bool is_device(std::string_view text) {
    const auto colon = text.find(':');
    return colon != std::string_view::npos &&
           parse_number<unsigned>(text.substr(0, colon)).has_value() &&
           parse_number<unsigned>(text.substr(colon + 1)).has_value();
}

}  // namespace

std::string unescape_mount_field(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        // At most \377: a byte.
        if (text[i] == '\\' && i + 3 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '3' &&
            octal(text[i + 2]) && octal(text[i + 3])) {
            out += static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 +
                                     (text[i + 3] - '0'));
            i += 3;
            continue;
        }
        out += text[i];
    }
    return out;
}

std::variant<std::vector<mount_entry>, std::string> parse_mountinfo(std::string_view text) {
    std::vector<mount_entry> out;
    std::size_t number = 0;
    for (const std::string_view line : lines(text)) {
        ++number;
        const auto malformed = [&](std::string_view why) {
            return "mountinfo line " + std::to_string(number) + " " + std::string(why) + ": \"" +
                   std::string(line.substr(0, 200)) + "\"";
        };
        const auto separator = line.find(" - ");
        if (separator == std::string_view::npos) return malformed("has no \" - \" separator");
        const auto head = split(line.substr(0, separator), ' ');
        // "type source super-options", one space apart: an empty source leaves two spaces in a
        // row, which reading words would skip, taking the options for the source.
        const std::string_view tail = line.substr(separator + 3);
        const auto first = tail.find(' ');
        const auto second = first == std::string_view::npos ? first : tail.find(' ', first + 1);
        if (head.size() < 6 || second == std::string_view::npos) {
            return malformed("has too few fields");
        }
        if (!parse_number<unsigned long>(head[0]) || !parse_number<unsigned long>(head[1]) ||
            !is_device(head[2]) || head[3].empty() || head[4].empty() || head[5].empty() ||
            first == 0) {
            return malformed("has a field of the wrong form");
        }
        mount_entry entry;
        entry.id = std::string(head[0]);
        entry.parent = std::string(head[1]);
        entry.device = std::string(head[2]);
        entry.root = unescape_mount_field(head[3]);
        entry.point = unescape_mount_field(head[4]);
        entry.read_only = head[5] == "ro" || head[5].starts_with("ro,");
        entry.type = std::string(tail.substr(0, first));
        entry.source = unescape_mount_field(tail.substr(first + 1, second - first - 1));
        entry.super_options = std::string(tail.substr(second + 1));
        out.push_back(std::move(entry));
    }
    return out;
}

std::variant<std::vector<mount_entry>, std::string> read_mountinfo(
    const std::filesystem::path& path) {
    read_result text = read_small_file(path, table_file_limit);
    if (auto* error = std::get_if<read_error>(&text)) return error->describe(path);
    auto mounts = parse_mountinfo(std::get<std::string>(text));
    if (auto* reason = std::get_if<std::string>(&mounts)) return path.string() + ": " + *reason;
    if (std::get<std::vector<mount_entry>>(mounts).empty()) {
        return path.string() + " lists no mount";
    }
    return mounts;
}

}  // namespace cordon::base
