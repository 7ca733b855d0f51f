// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Shared machinery of the hostile suite: the real providers, a staged copy of the test child,
// per-test host trees under /var/tmp, parsing of the child's ALLOWED/DENIED lines, a run in the
// background, and the parametrised fixtures. Files, processes and the cordon CLI come from the
// shared support (tests/support/).
//
// Every test here attacks through the real executor against the real bwrap and the real kernel
// Landlock, and checks both sides: the command saw its attempt fail, and the host shows nothing.
#pragma once

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <vector>

#include "cordon/executor.hpp"
#include "cordon/sandbox_error.hpp"
#include "real_backend.hpp"
#include "run_or_throw.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/unique_fd.hpp"
#include "sandbox/backends.hpp"
#include "sandbox/local_provider.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"
#include "support/files.hpp"
#include "support/processes.hpp"
#include "support/spawned_process.hpp"

// How GoogleTest prints the parameters in test names' comments and failure messages.
namespace cordon::sandbox {
inline void PrintTo(backend_choice choice, std::ostream* out) {
    *out << to_string(choice);
}
inline void PrintTo(sandbox_mode mode, std::ostream* out) {
    *out << to_string(mode);
}
}  // namespace cordon::sandbox

namespace cordon::hostile {

namespace fs = std::filesystem;
using sandbox::backend_choice;
using sandbox::backend_kind;
using sandbox::sandbox_mode;
using strings = std::vector<std::string>;
using namespace std::chrono_literals;
// The shared support, used unqualified throughout the suite.
using test::cli_result;
using test::descendants_of;
using test::live_processes_with_cmdline;
using test::publish_file;
using test::read_file;
using test::read_file_if_present;
using test::read_proc_stat;
using test::run_cordon;
using test::spawned_process;
using test::survivors_after;
using test::write_file;

// Generous bounds: nothing here asserts on timing, every wait just has an end.
constexpr std::chrono::milliseconds generous{60'000};
constexpr long child_wait_ms = 30'000;  // how long a child waits for the test's cue

inline std::string unique_suffix() {
    static std::atomic<int> counter{0};
    return std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

// Moves this test process into a mount namespace of its own whose mounts propagate nowhere. A
// test that mounts does so in there: the host's mount table, which every other test's runs read
// and which bwrap walks to remount, never changes (ctest runs the suites in parallel), and what
// the test mounted goes away with its process, however it ends. The runs the test starts inherit
// the namespace, so they see what it mounts. Call it before the test starts a thread:
// unshare(CLONE_NEWNS) refuses a process whose filesystem context is shared.
inline ::testing::AssertionResult in_private_mount_namespace() {
    if (::unshare(CLONE_NEWNS) != 0) {
        return ::testing::AssertionFailure() << "unshare(CLONE_NEWNS): " << std::strerror(errno);
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        return ::testing::AssertionFailure() << "making / private: " << std::strerror(errno);
    }
    return ::testing::AssertionSuccess();
}

inline std::string describe(const runtime::run_record& record) {
    std::ostringstream out;
    out << "exit="
        << (record.outcome.exit_code ? std::to_string(*record.outcome.exit_code) : "none")
        << " signal=" << (record.outcome.signal ? std::to_string(*record.outcome.signal) : "none")
        << " timed_out=" << (record.outcome.kind == classify::outcome_kind::timed_out)
        << " denied=" << record.sandbox.denied << "\nstdout: " << record.stdout_output.text
        << "\nstderr: " << record.stderr_output.text;
    if (record.outcome.kind == classify::outcome_kind::not_started)
        out << "\nnot started: " << record.outcome.message;
    return out.str();
}

inline std::string mode_name(sandbox_mode mode) {
    std::string name(sandbox::to_string(mode));
    std::replace(name.begin(), name.end(), '-', '_');
    return name;
}

// ---- the real providers -------------------------------------------------------------------------

// A provider for exactly one backend, or why that backend is unusable here.
struct selection {
    std::shared_ptr<sandbox::local_provider> provider;
    std::optional<sandbox::rung_report> rung;
    std::string reason;
};

inline selection make_selection(backend_choice choice) {
    sandbox::local_provider_options options;
    options.choice = choice;
    options.launcher_path = test::launcher_path();
    options.probe_timeout = generous;
    selection out;
    out.provider = runtime::make_local_provider(std::move(options));
    out.rung = out.provider->selected();
    if (!out.rung) {
        for (const auto& report : out.provider->probe_all()) {
            out.reason +=
                std::string(sandbox::to_string(report.kind)) + " unusable: " + report.reason + "; ";
        }
    }
    return out;
}

// Probed once per backend for the whole test process.
inline const selection& selected(backend_choice choice) {
    static std::mutex mutex;
    static std::map<backend_choice, selection> cache;
    std::lock_guard lock(mutex);
    auto it = cache.find(choice);
    if (it == cache.end()) it = cache.emplace(choice, make_selection(choice)).first;
    return it->second;
}

// ---- staged tools -------------------------------------------------------------------------------

// The test child and the preload library, copied once per test process into a private directory
// under /var/tmp: the build tree may live under /tmp, which bwrap's workspace-write profile hides.
class staged_tools {
public:
    staged_tools() : dir_("/var/tmp", "cordon-hostile-bin-") {
        fs::permissions(dir_.path(), fs::perms::owner_all | fs::perms::group_read |
                                         fs::perms::group_exec | fs::perms::others_read |
                                         fs::perms::others_exec);
        fs::copy_file(test::test_child_path(), child());
#ifdef CORDON_TEST_PRELOAD
        fs::copy_file(CORDON_TEST_PRELOAD, preload());
#endif
    }

    [[nodiscard]] fs::path child() const {
        return dir_ / "cordon-test-child";
    }
    [[nodiscard]] fs::path preload() const {
        return dir_ / "libcordon-test-preload.so";
    }

private:
    test::temp_dir dir_;
};

inline const staged_tools& tools() {
    static const staged_tools staged;
    return staged;
}

inline std::string child() {
    return tools().child().string();
}

// ---- host trees ---------------------------------------------------------------------------------

// A fresh directory under /var/tmp holding the workspace and a directory outside it.
class host_tree {
public:
    host_tree() : base_("/var/tmp", "cordon-hostile-") {
        fs::permissions(base_.path(), fs::perms::owner_all | fs::perms::group_read |
                                          fs::perms::group_exec | fs::perms::others_read |
                                          fs::perms::others_exec);
        fs::create_directories(workspace());
        fs::create_directories(outside());
    }

    [[nodiscard]] const fs::path& base() const { return base_.path(); }
    [[nodiscard]] fs::path workspace() const { return base_ / "ws"; }
    [[nodiscard]] fs::path outside() const { return base_ / "outside"; }

private:
    test::temp_dir base_;
};

// ---- the child's verdict lines ------------------------------------------------------------------

// `ALLOWED <what>` and `DENIED <what> <errno name>` lines of the test child's attack subcommands.
struct attempts {
    strings allowed;                            // <what>, in order
    std::map<std::string, std::string> denied;  // <what> -> errno name
    strings other;                              // every other line
};

inline attempts parse_attempts(const std::string& text) {
    attempts out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("ALLOWED ", 0) == 0) {
            out.allowed.push_back(line.substr(8));
        } else if (line.rfind("DENIED ", 0) == 0) {
            const auto space = line.rfind(' ');
            out.denied[line.substr(7, space - 7)] = line.substr(space + 1);
        } else {
            out.other.push_back(line);
        }
    }
    return out;
}

// The errno of the DENIED line whose <what> is `what` or starts with `what + " "` (a suffix such
// as " (getpriority)" says which step failed); nullopt when there is none.
inline std::optional<std::string> denial_of(const attempts& seen, const std::string& what) {
    for (const auto& [key, error] : seen.denied) {
        if (key == what || key.rfind(what + " ", 0) == 0) return error;
    }
    return std::nullopt;
}

// ---- a run in the background --------------------------------------------------------------------

// Runs a request on its own thread and lets the test wait for a line of the command's live stdout
// (a cue such as WAITING) before it acts on the host.
class background_run {
public:
    background_run(std::shared_ptr<sandbox::provider> provider, runtime::run_request request) {
        request.on_stdout = [this](std::string_view chunk) {
            std::lock_guard lock(mutex_);
            stdout_ += chunk;
            changed_.notify_all();
        };
        result_ = std::async(std::launch::async,
                             [provider = std::move(provider), request = std::move(request)]() {
                                 return test::run_or_throw(provider, request);
                             });
    }
    ~background_run() {
        if (result_.valid()) result_.wait();
    }
    background_run(const background_run&) = delete;
    background_run& operator=(const background_run&) = delete;

    // True once `line` (a whole line) appeared on the command's stdout within `bound`.
    bool wait_for_line(const std::string& line, std::chrono::milliseconds bound = generous) {
        std::unique_lock lock(mutex_);
        return changed_.wait_for(lock, bound, [&] {
            return ("\n" + stdout_).find("\n" + line + "\n") != std::string::npos;
        });
    }

    // The record (rethrows sandbox_unavailable_error). The run itself carries a timeout.
    runtime::run_record finish() { return result_.get(); }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::string stdout_;
    std::future<runtime::run_record> result_;
};

// ---- a run that holds what it took --------------------------------------------------------------

// A run that holds what it took until the test closes its stdin (the test child's quota-fill
// holds until stdin ends), so that the host's check falls while the run holds everything.
class held_run {
public:
    held_run(std::shared_ptr<sandbox::provider> provider, runtime::run_request request,
             runtime::executor_options options) {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category());
        writer_.reset(fds[1]);
        request.stdin_fd = std::make_shared<const runtime::unique_fd>(fds[0]);
        request.on_stdout = [this](std::string_view chunk) {
            std::lock_guard lock(mutex_);
            stdout_ += chunk;
            changed_.notify_all();
        };
        result_ = std::async(std::launch::async,
                             [provider = std::move(provider), request = std::move(request),
                              options = std::move(options)]() {
                                 return test::run_or_throw(provider, request, options);
                             });
    }
    ~held_run() {
        writer_.reset();
        if (result_.valid()) result_.wait();
    }
    held_run(const held_run&) = delete;
    held_run& operator=(const held_run&) = delete;

    // The first whole stdout line that begins with `prefix`, once it appeared.
    std::optional<std::string> wait_for_line_starting(const std::string& prefix) {
        std::unique_lock lock(mutex_);
        std::optional<std::string> found;
        changed_.wait_for(lock, generous, [&] {
            std::istringstream in(stdout_);
            std::string line;
            while (std::getline(in, line)) {
                if (in.eof()) break;  // not a whole line yet
                if (line.rfind(prefix, 0) == 0) {
                    found = line;
                    return true;
                }
            }
            return false;
        });
        return found;
    }

    // Whether the run ended by itself within `limit`.
    bool ended_within(std::chrono::milliseconds limit) {
        return result_.wait_for(limit) == std::future_status::ready;
    }

    // Lets the command end (its stdin closes) and returns the record.
    runtime::run_record release() {
        writer_.reset();
        return result_.get();
    }

private:
    runtime::unique_fd writer_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::string stdout_;
    std::future<runtime::run_record> result_;
};

// `HELD <count> <errno name>` of quota-fill.
struct held {
    long count = -1;
    std::string refusal;
};
inline held parse_held(const std::string& line) {
    held out;
    std::istringstream in(line.substr(5));
    in >> out.count >> out.refusal;
    return out;
}

// ---- the parametrized fixture -------------------------------------------------------------------

using test::real_backend;
using backend_and_mode = std::tuple<real_backend, sandbox_mode>;

inline std::string param_name(const ::testing::TestParamInfo<backend_and_mode>& info) {
    return std::string(test::to_string(std::get<0>(info.param))) + "_" +
           mode_name(std::get<1>(info.param));
}

inline std::string backend_name(const ::testing::TestParamInfo<real_backend>& info) {
    return std::string(test::to_string(info.param));
}

#define CORDON_HOSTILE_BOTH_MODES(fixture)                                                       \
    INSTANTIATE_TEST_SUITE_P(                                                                    \
        Real, fixture,                                                                           \
        ::testing::Combine(::cordon::test::all_real_backends(),                                  \
                           ::testing::Values(::cordon::sandbox::sandbox_mode::read_only,         \
                                             ::cordon::sandbox::sandbox_mode::workspace_write)), \
        ::cordon::hostile::param_name)

#define CORDON_HOSTILE_BACKENDS(fixture)                                         \
    INSTANTIATE_TEST_SUITE_P(Real, fixture, ::cordon::test::all_real_backends(), \
                             ::cordon::hostile::backend_name)

// Common state of a test against one backend: the selection, a host tree, request helpers.
class backend_fixture {
protected:
    // Picks the (cached) provider for `choice`; check usable() before using it.
    void select(real_backend backend) {
        backend_ = backend;
        selection_ = &selected(test::choice_of(backend));
        if (selection_->rung) kind_ = selection_->rung->kind;
    }
    [[nodiscard]] bool usable() const { return selection_ != nullptr && selection_->rung; }
    [[nodiscard]] const std::string& unusable_reason() const { return selection_->reason; }

    [[nodiscard]] runtime::run_request request(strings argv, sandbox_mode mode) const {
        runtime::run_request out;
        out.argv = std::move(argv);
        out.mode = mode;
        out.workspace_root = tree_.workspace();
        out.timeout = generous;
        return out;
    }

    [[nodiscard]] runtime::run_record run(runtime::run_request request) const {
        return test::run_or_throw(selection_->provider, std::move(request), path_options());
    }

    // The executor options that take this test's path through its backend.
    [[nodiscard]] runtime::executor_options path_options() const {
        runtime::executor_options options;
        options.landlock_in_child = test::landlock_in_child(backend_);
        return options;
    }

    [[nodiscard]] int landlock_abi() const { return selection_->rung->landlock_abi.value_or(0); }

    host_tree tree_;
    const selection* selection_ = nullptr;
    real_backend backend_ = real_backend::bwrap;
    backend_kind kind_ = backend_kind::bwrap;
};

class BackendAndModeTest : public ::testing::TestWithParam<backend_and_mode>,
                           protected backend_fixture {
protected:
    void SetUp() override {
        select(std::get<0>(GetParam()));
        if (!usable()) CORDON_SKIP_OR_FAIL(unusable_reason());
        mode_ = std::get<1>(GetParam());
    }

    [[nodiscard]] runtime::run_request request(strings argv) const {
        return backend_fixture::request(std::move(argv), mode_);
    }
    using backend_fixture::request;

    // Runs the child with `args` and returns its parsed lines; the run itself must have gone
    // through (started, exited 0).
    attempts attack(strings args, std::optional<std::string> stdin_data = std::nullopt) {
        strings argv{child()};
        argv.insert(argv.end(), args.begin(), args.end());
        runtime::run_request req = request(std::move(argv));
        req.network = network_;
        req.stdin_data = std::move(stdin_data);
        req.stdout_max_bytes = 16U << 20U;
        record_ = run(std::move(req));
        EXPECT_NE(record_.outcome.kind, classify::outcome_kind::not_started) << describe(record_);
        EXPECT_EQ(record_.outcome.exit_code, std::optional<int>(0)) << describe(record_);
        EXPECT_FALSE(record_.stdout_output.truncated) << "raise stdout_max_bytes";
        return parse_attempts(record_.stdout_output.text);
    }

    sandbox_mode mode_ = sandbox_mode::read_only;
    // The run's network policy: deny, as a confined run's default, unless a test names the wall
    // it tests behind the host's network.
    sandbox::network_rules network_;
    runtime::run_record record_;
};

class BackendTest : public ::testing::TestWithParam<real_backend>, protected backend_fixture {
protected:
    void SetUp() override {
        select(GetParam());
        if (!usable()) CORDON_SKIP_OR_FAIL(unusable_reason());
    }
};

}  // namespace cordon::hostile
