// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Differential: every input is a git configuration read by cordon (sandbox/git_config.hpp) and by
// the real git on this host (`git config --file F --list --null`, run for each input), and the two
// must agree: git refuses it and cordon refuses it, or both list the same entries with the same
// values, in the whitespace git here speaks (asked of it once). Slow (a process per input: a few
// hundred inputs a second), so it runs beside the fast `git_config` target, which checks cordon's
// own properties at a hundred times the rate; tests/sandbox/git_differential_test.cpp holds the
// generated table CI always runs. git is run without the user's or the system's configuration.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "sandbox/git_config.hpp"
#include "tests/fuzz/property.hpp"
#include "tests/fuzz/scratch.hpp"

extern char** environ;

using namespace cordon::sandbox;
using entries = std::vector<std::pair<std::string, std::optional<std::string>>>;

namespace {

// git's listing of `file`, or nullopt when git refuses it (or cannot be run).
std::optional<entries> as_git_reads(const std::filesystem::path& file) {
    int out[2];
    CORDON_FUZZ_CHECK(::pipe2(out, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    const std::string path = file.string();
    const char* argv[] = {"git", "config", "--file", path.c_str(), "--list", "--null", nullptr};
    const char* envp[] = {"GIT_CONFIG_NOSYSTEM=1", "HOME=/nonexistent", "PATH=/usr/bin:/bin",
                          "LC_ALL=C", nullptr};
    pid_t pid = 0;
    const int spawned = ::posix_spawnp(&pid, "git", &actions, nullptr, const_cast<char**>(argv),
                                       const_cast<char**>(envp));
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    CORDON_FUZZ_CHECK(spawned == 0);
    std::string text;
    char buffer[4096];
    for (;;) {
        const ssize_t got = ::read(out[0], buffer, sizeof buffer);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        text.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(out[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    CORDON_FUZZ_CHECK(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) return std::nullopt;
    entries listed;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = std::min(text.find('\0', at), text.size());
        const std::string item = text.substr(at, end - at);
        at = end + 1;
        const std::size_t newline = item.find('\n');
        if (newline == std::string::npos) {
            listed.emplace_back(item, std::nullopt);
        } else {
            listed.emplace_back(item.substr(0, newline), item.substr(newline + 1));
        }
    }
    return listed;
}

std::optional<entries> as_cordon_reads(std::string_view text, git_config::whitespace inside) {
    const auto parsed = git_config::parse(text, inside);
    if (std::holds_alternative<std::string>(parsed)) return std::nullopt;
    entries listed;
    for (const git_config::entry& e : std::get<std::vector<git_config::entry>>(parsed))
        listed.emplace_back(e.key(), e.value);
    return listed;
}

const std::filesystem::path& config_file() {
    static const std::filesystem::path file = cordon::fuzz::scratch_directory() / "config";
    return file;
}

git_config::whitespace hosts_whitespace() {
    static const git_config::whitespace inside = [] {
        cordon::fuzz::write_file(config_file(), "[a]\nk = x\ty\n");
        const auto read = as_git_reads(config_file());
        CORDON_FUZZ_CHECK(read && read->size() == 1);
        return read->front().second == "x y" ? git_config::whitespace::spaces
                                             : git_config::whitespace::kept;
    }();
    return inside;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const git_config::whitespace inside = hosts_whitespace();
    cordon::fuzz::write_file(config_file(), text);
    CORDON_FUZZ_CHECK(as_cordon_reads(text, inside) == as_git_reads(config_file()));
    return 0;
}
