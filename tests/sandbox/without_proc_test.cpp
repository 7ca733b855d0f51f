// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The guard that nothing running unconfined later lies where a workspace-write command can write
// fails closed: without /proc (a private mount namespace with /proc detached) cordon cannot tell
// what it is, what it loads or which filesystems a workspace reaches, so every workspace-write
// workspace is refused, where before this one was accepted. The same for sysfs and loop devices,
// and for the verdict cache's key. Nothing here runs a runner: the probes are scripted.
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cordon/sandbox_error.hpp"
#include "sandbox/local_provider.hpp"
#include "sandbox/protected_paths.hpp"
#include "sandbox/verdict_cache.hpp"
#include "support.hpp"
#include "without_proc.hpp"

namespace cordon::sandbox {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr int test_abi = 7;

// The answer a scripted probe gives: the launcher's ABI, or a plain success.
probe_run_result usable(const confined_argv& wrapped) {
    probe_run_result result;
    if (wrapped.argv.back() == "--probe") result.abi = test_abi;
    return result;
}

class WithoutProc : public ::testing::Test {
protected:
    WithoutProc() {
        for (const fs::path& runner : {launcher_, bwrap_}) {
            std::ofstream(runner) << "#!/bin/sh\nexit 1\n";
            fs::permissions(runner, fs::perms::owner_all);
        }
        fs::create_directory(workspace_);
    }

    [[nodiscard]] local_provider_options options() const {
        local_provider_options out;
        out.choice = backend_choice::landlock;
        out.host = platform::linux_;
        out.bwrap_path = bwrap_;
        out.launcher_path = launcher_;
        out.run_probe = [](const confined_argv& wrapped, std::chrono::milliseconds) {
            return usable(wrapped);
        };
        return out;
    }

    // `body`'s answer without the mounts at `points`; skips when no such namespace can be made.
    std::string answer_without(std::initializer_list<const char*> points,
                               const std::function<std::string()>& body) {
        auto answer = test::without_mounts(points, body);
        if (auto* unavailable = std::get_if<test::proc_unavailable>(&answer)) {
            skipped_ = unavailable->reason;
            return {};
        }
        return std::get<std::string>(answer);
    }

    test::temp_dir dir_;
    fs::path launcher_ = dir_ / "cordon-landlock";
    fs::path bwrap_ = dir_ / "bwrap";
    fs::path workspace_ = dir_ / "ws";
    std::string skipped_;
};

#define SKIP_WITHOUT_NAMESPACE()                                                       \
    if (!skipped_.empty()) GTEST_SKIP() << "no private mount namespace: " << skipped_; \
    static_assert(true)

// The case the review measured: a workspace that holds the very program linking the library.
// With /proc it is refused; without, it was accepted. Now every workspace-write workspace is
// refused there, with the reason, and confine() refuses too.
TEST_F(WithoutProc, AWorkspaceWriteWorkspaceIsRefusedNotAllowed) {
    const fs::path self_dir = fs::canonical("/proc/self/exe").parent_path();
    {
        local_provider provider(options());
        auto refused = provider.refusal({sandbox_mode::workspace_write, self_dir}, {});
        ASSERT_TRUE(refused.has_value()) << "with /proc, cordon's own directory is protected";
        EXPECT_THAT(*refused, HasSubstr("runs unconfined in later runs"));
        EXPECT_FALSE(provider.refusal({sandbox_mode::workspace_write, workspace_}, {}).has_value());
    }
    const std::string answer = answer_without({"/proc"}, [&] {
        std::string out;
        // A provider made there: its probes and its protected set are all computed without /proc.
        local_provider provider(options());
        const std::vector<std::string> command{"true"};
        for (const fs::path& root : {self_dir, workspace_}) {
            auto refused = provider.refusal({sandbox_mode::workspace_write, root}, {});
            out += (refused ? *refused : std::string("ALLOWED")) + "\n";
            try {
                (void)provider.confine(command, {sandbox_mode::workspace_write, root}, root);
                out += "CONFINED\n";
            } catch (const request_refused_error& error) {
                out += "confine refused: " + error.reason() + "\n";
            }
        }
        // Read-only runs need no protected set: they are not refused.
        out += provider.refusal({sandbox_mode::read_only, workspace_}, {}).value_or("read-only ok");
        return out;
    });
    SKIP_WITHOUT_NAMESPACE();
    EXPECT_THAT(answer, Not(HasSubstr("ALLOWED")));
    EXPECT_THAT(answer, Not(HasSubstr("CONFINED")));
    const std::string reason =
        "refusing a workspace-write workspace: cannot read /proc/self/mountinfo: No such file or "
        "directory; cordon cannot tell which filesystems the command could write";
    EXPECT_THAT(answer, StartsWith(reason + "\nconfine refused: " + reason + "\n" + reason));
    EXPECT_THAT(answer, testing::EndsWith("\nread-only ok"));
}

// A provider whose protected set was never computed meets /proc going away: refused; and a set
// that could not be computed is not kept, so the provider protects again once /proc is back.
TEST_F(WithoutProc, AProtectedSetThatCouldNotBeComputedIsNotKept) {
    const std::string answer = answer_without({"/proc"}, [&] {
        local_provider provider(options());
        std::string out;
        auto first = provider.protected_set();
        out += std::holds_alternative<std::string>(first) ? std::get<std::string>(first) : "SET";
        out += "\n";
        if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
            return out + "cannot mount /proc again";
        }
        auto second = provider.protected_set();
        out +=
            std::holds_alternative<protected_paths>(second) ? "SET" : std::get<std::string>(second);
        return out;
    });
    SKIP_WITHOUT_NAMESPACE();
    EXPECT_EQ(answer,
              "cannot resolve /proc/self/exe: No such file or directory\n"
              "SET");
}

// The closure itself, from a maps file and an executable link that tests name.
TEST_F(WithoutProc, TheClosureFailsWhenTheMapsOrTheExecutableCannotBeRead) {
    const std::vector<fs::path> runners{launcher_};
    {
        auto closure =
            runner_closure(runners, {}, {.maps = dir_ / "no-maps", .exe = "/proc/self/exe"});
        ASSERT_TRUE(std::holds_alternative<std::string>(closure));
        EXPECT_EQ(std::get<std::string>(closure),
                  "cannot read " + (dir_ / "no-maps").string() + ": No such file or directory");
    }
    {
        auto closure =
            runner_closure(runners, {}, {.maps = "/proc/self/maps", .exe = dir_ / "no-exe"});
        ASSERT_TRUE(std::holds_alternative<std::string>(closure));
        EXPECT_THAT(std::get<std::string>(closure),
                    StartsWith("cannot resolve " + (dir_ / "no-exe").string() + ": "));
    }
    // An executable replaced since it started (an upgrade) is protected by its path: what lies
    // there now is what runs next.
    fs::create_symlink(dir_ / "bin" / "cordon (deleted)", dir_ / "exe");
    auto closure = runner_closure(runners, {}, {.maps = "/proc/self/maps", .exe = dir_ / "exe"});
    ASSERT_TRUE(std::holds_alternative<protected_paths>(closure));
    std::vector<fs::path> paths;
    for (const protected_path& p : std::get<protected_paths>(closure))
        paths.push_back(p.path);
    EXPECT_THAT(paths, testing::Contains(dir_ / "bin" / "cordon"));
    EXPECT_THAT(paths, testing::Contains(fs::canonical(launcher_)));
}

// A protected path on a block device whose loop image could lie in the workspace: without sysfs
// cordon cannot tell whether it is a loop device, and refuses.
TEST_F(WithoutProc, ABlockDeviceSysfsCannotDescribeIsRefused) {
    local_provider provider(options());
    ASSERT_FALSE(provider.refusal({sandbox_mode::workspace_write, workspace_}, {}).has_value());
    struct stat st {};
    ASSERT_EQ(::stat(launcher_.c_str(), &st), 0);
    if (major(st.st_dev) == 0) {
        GTEST_SKIP() << dir_.path() << " is on an anonymous device (no block device to describe)";
    }
    const std::string answer = answer_without({"/sys"}, [&] {
        return provider.refusal({sandbox_mode::workspace_write, workspace_}, {})
            .value_or("ALLOWED");
    });
    SKIP_WITHOUT_NAMESPACE();
    EXPECT_THAT(answer, StartsWith("refusing a workspace-write workspace: "));
    EXPECT_THAT(answer, HasSubstr("cordon cannot tell whether the block device "));
    EXPECT_THAT(answer, HasSubstr(" is a loop device whose image the command could write"));
}

// Without /proc two processes would share one key whatever their privileges and namespaces:
// no key is made, and a provider probes for itself rather than adopt a stored verdict.
TEST_F(WithoutProc, TheVerdictCacheIsNotUsedWithoutTheFactsOfItsKey) {
    const fs::path cache = dir_ / "verdicts";
    {
        local_provider_options stored = options();
        stored.verdict_directory = cache;
        local_provider provider(stored);
        ASSERT_TRUE(provider.selected().has_value());
    }
    ASSERT_TRUE(fs::exists(test::verdict_file_in(cache, "landlock")));
    const std::string answer = answer_without({"/proc"}, [&] {
        auto key = verdict_key(bwrap_, launcher_);
        std::string out = std::holds_alternative<unknown_facts>(key)
                              ? std::get<unknown_facts>(key).reason
                              : std::string("KEY MADE");
        int probes = 0;
        local_provider_options again = options();
        again.verdict_directory = cache;
        again.run_probe = [&probes](const confined_argv& wrapped, std::chrono::milliseconds) {
            ++probes;
            return usable(wrapped);
        };
        local_provider provider(again);
        (void)provider.selected();
        return out + "\n" + provider.verdict_origin() + "\nprobes " + std::to_string(probes);
    });
    SKIP_WITHOUT_NAMESPACE();
    const std::string reason =
        "cannot read /proc/sys/kernel/random/boot_id: No such file or directory";
    EXPECT_EQ(answer, reason + "\nprobed (verdict cache unusable: " + reason + ")\nprobes 3");
}

}  // namespace
}  // namespace cordon::sandbox
