// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The cgroup parsers: /proc/self/cgroup and mountinfo together locate this process's cgroup
// (own_directory), cgroup.controllers is searched for a word, and a cgroup's keyed files
// (memory.events, pids.events) and cgroup.procs are read for values and members. A command that
// can write its own cgroup's files (cgroup delegation) controls these bytes.
//
// Input: three parts separated by NUL bytes: the mountinfo text, the cgroup text, and a file's
// text, which is read as a keyed file and as cgroup.procs.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <variant>

#include "base/mountinfo.hpp"
#include "runtime/cgroup_files.hpp"
#include "tests/fuzz/property.hpp"
#include "tests/fuzz/scratch.hpp"

namespace files = cordon::runtime::cgroup_files;
namespace fs = std::filesystem;

namespace {

std::string_view next_part(std::string_view& text) {
    const std::size_t end = std::min(text.find('\0'), text.size());
    const std::string_view part = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    return part;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::string_view mountinfo = next_part(input);
    const std::string_view cgroups = next_part(input);
    const std::string_view file = input;

    files::cgroup_view view;
    view.cgroups = std::string(cgroups);
    if (auto mounts = cordon::base::parse_mountinfo(mountinfo);
        std::holds_alternative<std::vector<cordon::base::mount_entry>>(mounts)) {
        view.mounts = std::move(std::get<std::vector<cordon::base::mount_entry>>(mounts));
    }
    for (const std::string_view controller : {"", "memory", "pids"}) {
        const auto directory = files::own_directory(view, controller);
        if (const auto* found = std::get_if<fs::path>(&directory)) {
            // Only ever a directory below the hierarchy's mount point, never beside it.
            bool below = false;
            for (const auto& mount : view.mounts) {
                const auto relative = found->lexically_relative(mount.point);
                below = below || (!relative.empty() && *relative.begin() != "..");
            }
            CORDON_FUZZ_CHECK(below);
        }
    }
    (void)files::has_word(file, "memory");
    (void)files::has_word(cgroups, "pids");

    const fs::path keyed = cordon::fuzz::scratch_directory() / "keyed";
    cordon::fuzz::write_file(keyed, file);
    (void)files::keyed_value(keyed, "oom_kill");
    (void)files::keyed_value(keyed, "max");
    for (const pid_t pid : files::members(keyed))
        CORDON_FUZZ_CHECK(pid > 0);
    return 0;
}
