// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The mountinfo parser (proc_pid_mountinfo(5)), which reads what the kernel writes about mounts a
// command may have made. Round trip: a table that parses is written back as the kernel would
// write it (ROOT, MOUNT-POINT and SOURCE escaped as \ooo), and that text parses to the same
// mounts. unescape_mount_field never makes text longer.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "base/mountinfo.hpp"
#include "tests/fuzz/property.hpp"

using cordon::base::mount_entry;
using cordon::base::parse_mountinfo;
using cordon::base::unescape_mount_field;

namespace {

// The kernel's escaping (fs/proc_namespace.c, mangle()): space, tab, newline and backslash.
std::string escaped(const std::string& text) {
    std::string out;
    for (const char c : text) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\\') {
            const auto byte = static_cast<unsigned char>(c);
            out += '\\';
            out += static_cast<char>('0' + (byte >> 6));
            out += static_cast<char>('0' + ((byte >> 3) & 7));
            out += static_cast<char>('0' + (byte & 7));
        } else {
            out += c;
        }
    }
    return out;
}

bool same(const mount_entry& a, const mount_entry& b) {
    return a.id == b.id && a.parent == b.parent && a.device == b.device && a.root == b.root &&
           a.point == b.point && a.type == b.type && a.source == b.source &&
           a.read_only == b.read_only && a.super_options == b.super_options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    CORDON_FUZZ_CHECK(unescape_mount_field(text).size() <= text.size());

    const auto parsed = parse_mountinfo(text);
    if (const auto* reason = std::get_if<std::string>(&parsed)) {
        CORDON_FUZZ_CHECK(!reason->empty());
        return 0;
    }
    const auto& mounts = std::get<std::vector<mount_entry>>(parsed);
    std::string written;
    for (const mount_entry& mount : mounts) {
        written += mount.id + " " + mount.parent + " " + mount.device + " " +
                   escaped(mount.root.string()) + " " + escaped(mount.point.string()) + " " +
                   (mount.read_only ? "ro" : "rw") + " - " + mount.type + " " +
                   escaped(mount.source) + " " + mount.super_options + "\n";
    }
    const auto again = parse_mountinfo(written);
    CORDON_FUZZ_CHECK(std::holds_alternative<std::vector<mount_entry>>(again));
    const auto& reread = std::get<std::vector<mount_entry>>(again);
    CORDON_FUZZ_CHECK(reread.size() == mounts.size());
    for (std::size_t i = 0; i < mounts.size(); ++i)
        CORDON_FUZZ_CHECK(same(mounts[i], reread[i]));
    return 0;
}
