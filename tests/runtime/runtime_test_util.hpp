// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Helpers shared by the suites that run real processes through cordon_runtime (runtime, cli, and
// the real-runner tests in tests/sandbox): a cgroup host, a provider restricted to one backend,
// the default child environment, the spawn methods. The /proc-based checks (a process is gone, no
// zombie was left, no fd leaked) are in tests/support/processes.hpp, which this file includes;
// helpers that need no cordon_runtime (scratch directories, files, the test child) are in
// tests/support.hpp and tests/support/.
#pragma once

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "cordon/environment.hpp"
#include "runtime/cgroup.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/process.hpp"
#include "runtime/spawn.hpp"
#include "sandbox/local_provider.hpp"
#include "support.hpp"
#include "support/processes.hpp"

extern char** environ;

namespace cordon::test {

// A cgroup host, or nullptr with the reason in `why`.
inline std::shared_ptr<runtime::cgroup_host> cgroup_host_or(
    std::string& why, runtime::cgroup_host_options options = {}) {
    auto host = runtime::cgroup_host::create(options);
    if (auto* reason = std::get_if<std::string>(&host)) {
        why = "cgroup containment unavailable: " + *reason;
        return nullptr;
    }
    return std::get<std::shared_ptr<runtime::cgroup_host>>(std::move(host));
}

// The environment the executor would give a child: the test's own, scrubbed, plus the defaults.
inline std::vector<std::string> child_env() {
    return runtime::build_environment(environ, {});
}

// A spec for `argv` run from "/" with the test environment, a timeout that fails a hung test
// instead of hanging it, and the standard kill plan.
inline runtime::process_spec child_spec(
    std::vector<std::string> argv, std::chrono::milliseconds timeout = std::chrono::seconds(30),
    std::chrono::milliseconds grace = std::chrono::seconds(3)) {
    runtime::process_spec spec;
    spec.argv = std::move(argv);
    spec.env = child_env();
    spec.cwd = "/";
    spec.timeout = timeout;
    spec.plan = runtime::kill_plan::standard(grace);
    return spec;
}

// A provider that may use only `choice`, or nullptr with why that choice is unusable on this host
// in `why` (for CORDON_SKIP_OR_FAIL). The launcher is the one built beside the tests, and the
// probe timeout is generous: a loaded CI machine must not turn a slow probe into a skip.
// `adjust` may change the options further (where what a run leaves is quarantined, say).
inline std::shared_ptr<sandbox::local_provider> provider_for(
    sandbox::backend_choice choice, std::string& why,
    const std::function<void(sandbox::local_provider_options&)>& adjust = {}) {
    sandbox::local_provider_options options;
    if (adjust) adjust(options);
    options.choice = choice;
    options.launcher_path = launcher_path();
    options.probe_timeout = std::chrono::seconds(60);
    auto provider = runtime::make_local_provider(std::move(options));
    if (provider->selected()) return provider;
    why.clear();
    for (const auto& report : provider->probe_all()) {
        if (!why.empty()) why += "; ";
        why += std::string(sandbox::to_string(report.kind)) + " unusable: " + report.reason;
    }
    if (why.empty()) why = std::string(sandbox::to_string(choice)) + ": no rung to probe";
    return nullptr;
}

inline std::optional<pid_t> read_pid_file(const std::filesystem::path& path) {
    std::string text = read_file(path);
    if (text.empty()) return std::nullopt;
    return static_cast<pid_t>(std::stol(text));
}

// The TSan build spawns with fork(): ThreadSanitizer cannot follow a CLONE_VM child, so the
// vfork parameter must not run there (runtime/spawn.cpp). The ASan+UBSan build runs it.
inline bool vfork_unusable() {
    return runtime::default_spawn_method() == runtime::spawn_method::fork;
}

inline std::string method_name(runtime::spawn_method method) {
    switch (method) {
        case runtime::spawn_method::vfork:
            return "vfork";
        case runtime::spawn_method::fork:
            return "fork";
    }
    return "invalid";
}

// Lines of `text`, without their '\n'.
inline std::vector<std::string> split_lines(std::string_view text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        lines.emplace_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

}  // namespace cordon::test

// Skips a test parameterised on spawn_method when it is vfork in the TSan build.
#define CORDON_SKIP_VFORK_UNDER_TSAN(method)                              \
    do {                                                                  \
        if ((method) == ::cordon::runtime::spawn_method::vfork &&         \
            ::cordon::test::vfork_unusable()) {                           \
            GTEST_SKIP() << "spawn_method::vfork is not used under TSan"; \
        }                                                                 \
    } while (0)
