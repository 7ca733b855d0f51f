// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The memory a host gives cordon, the default memory limit of a run, and the descriptor limit
// cordon raises for itself and gives back to its commands (limits.hpp): the one place that changes
// a limit of cordon's own process.
#include "cordon/limits.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <string_view>
#include <variant>

#include "base/mountinfo.hpp"
#include "base/number.hpp"
#include "base/small_file.hpp"
#include "base/text.hpp"
#include "runtime/cgroup_files.hpp"

namespace cordon::runtime {

namespace fs = std::filesystem;

namespace {

// MemTotal of /proc/meminfo in bytes ("MemTotal:       24683628 kB").
std::optional<std::uint64_t> mem_total() {
    const base::read_result read = base::read_small_file("/proc/meminfo");
    const std::string* text = std::get_if<std::string>(&read);
    if (text == nullptr) return std::nullopt;
    for (const std::string_view line : base::lines(*text)) {
        constexpr std::string_view key = "MemTotal:";
        if (!line.starts_with(key)) continue;
        std::string_view value = line.substr(key.size());
        value.remove_prefix(std::min(value.find_first_not_of(' '), value.size()));
        if (!value.ends_with(" kB")) return std::nullopt;
        value.remove_suffix(3);
        const auto kib = base::parse_number<std::uint64_t>(value);
        if (!kib || *kib > UINT64_MAX / 1024) return std::nullopt;
        return *kib * 1024;
    }
    return std::nullopt;
}

// The lowest memory limit on the way from `directory` up to its hierarchy's root: `file` is
// memory.max (v2, "max" when none) or memory.limit_in_bytes (v1, a huge number when none). The
// walk stops at the first directory without the file (the v2 root, or above the mount).
std::optional<std::uint64_t> lowest_limit(fs::path directory, const char* file) {
    std::optional<std::uint64_t> lowest;
    for (;;) {
        const base::read_result read = base::read_small_file(directory / file);
        const std::string* text = std::get_if<std::string>(&read);
        if (text == nullptr) return lowest;
        std::string_view value = *text;
        while (!value.empty() && value.back() == '\n')
            value.remove_suffix(1);
        if (const auto limit = base::parse_number<std::uint64_t>(value)) {
            lowest = std::min(lowest.value_or(*limit), *limit);
        }
        if (directory == directory.root_path() || !directory.has_parent_path()) return lowest;
        directory = directory.parent_path();
    }
}

std::optional<std::uint64_t> read_host_memory() {
    std::optional<std::uint64_t> total = mem_total();
    if (!total) return std::nullopt;
    auto mounts = base::read_mountinfo();
    base::read_result cgroups = base::read_small_file("/proc/self/cgroup");
    if (!std::holds_alternative<std::vector<base::mount_entry>>(mounts) ||
        !std::holds_alternative<std::string>(cgroups)) {
        return total;
    }
    const cgroup_files::cgroup_view view{
        std::get<std::vector<base::mount_entry>>(std::move(mounts)),
        std::get<std::string>(std::move(cgroups))};
    for (const auto& [controller, file] :
         {std::pair{"", "memory.max"}, std::pair{"memory", "memory.limit_in_bytes"}}) {
        auto own = cgroup_files::own_directory(view, controller);
        if (const auto* directory = std::get_if<fs::path>(&own)) {
            if (const auto limit = lowest_limit(*directory, file)) {
                total = std::min(*total, *limit);
            }
        }
    }
    return total;
}

// The soft limit raise_descriptor_limit() found; 0 until it ran.
std::atomic<std::uint64_t> found_descriptor_limit{0};

}  // namespace

std::uint64_t raise_descriptor_limit() noexcept {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
    std::uint64_t expected = 0;
    // The first call's finding stands: a second would find the raised limit.
    found_descriptor_limit.compare_exchange_strong(expected, limit.rlim_cur);
    if (limit.rlim_cur < limit.rlim_max) {
        rlimit raised = limit;
        raised.rlim_cur = limit.rlim_max;
        if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) return raised.rlim_cur;
    }
    return limit.rlim_cur;
}

std::optional<std::uint64_t> commands_descriptor_limit() noexcept {
    const std::uint64_t found = found_descriptor_limit.load();
    if (found == 0) return std::nullopt;
    return found;
}

std::optional<std::uint64_t> host_memory() {
    static const std::optional<std::uint64_t> memory = read_host_memory();
    return memory;
}

std::optional<std::uint64_t> default_max_memory() {
    const auto memory = host_memory();
    if (!memory) return std::nullopt;
    constexpr std::uint64_t mib = std::uint64_t{1} << 20;
    return std::max<std::uint64_t>(*memory / 2 / mib, 4) * mib;
}

}  // namespace cordon::runtime
