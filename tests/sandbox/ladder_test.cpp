// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The local provider's backend ladder, driven by a scripted probe runner: which rungs are probed,
// how often, in which order, what a failing rung falls through to, and that every unavailable
// verdict fails closed. Nothing here spawns a process; the real runners are in
// tests/backends/real_runners_test.cpp.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <variant>
#include <vector>

#include "cordon/policy.hpp"
#include "cordon/sandbox_error.hpp"
#include "sandbox/backends.hpp"
#include "sandbox/identity.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/local_provider.hpp"
#include "sandbox/runner_path.hpp"
#include "sandbox/verdict_cache.hpp"
#include "support.hpp"

namespace cordon::sandbox {
namespace {

namespace fs = std::filesystem;
using scratch_dir = cordon::test::temp_dir;
using cordon::test::scoped_env;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using strings = std::vector<std::string>;

class scoped_cwd {
public:
    explicit scoped_cwd(const fs::path& to) : old_(fs::current_path()) { fs::current_path(to); }
    ~scoped_cwd() {
        std::error_code ec;
        fs::current_path(old_, ec);
    }
    scoped_cwd(const scoped_cwd&) = delete;
    scoped_cwd& operator=(const scoped_cwd&) = delete;

private:
    fs::path old_;
};

void make_executable(const fs::path& path, const std::string& text = "#!/bin/sh\nexit 1\n") {
    std::ofstream(path) << text;
    fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
}

// A profile run that the classifier judged a success (the launcher reported the exec, `true`
// exited 0). How a run is judged is classify's business, tested in tests/classify.
probe_run_result ok() {
    return {};
}

// The launcher's answer to --probe.
probe_run_result probed(int abi) {
    probe_run_result r;
    r.abi = abi;
    return r;
}

// A probe run judged a failure, with the one line saying why.
probe_run_result failed(std::string why) {
    probe_run_result r;
    r.failure = std::move(why);
    return r;
}

bool contains(const strings& argv, const std::string& item) {
    return std::find(argv.begin(), argv.end(), item) != argv.end();
}

// bwrap's workspace-write profile: a private /tmp (every profile mounts a tmpfs on /dev/shm).
bool private_tmp(const strings& argv) {
    const strings mount{"--tmpfs", "/tmp"};
    return std::search(argv.begin(), argv.end(), mount.begin(), mount.end()) != argv.end();
}

// Records every probe it is asked to run (thread-safe) and answers from a script.
class scripted_runner {
public:
    using script = std::function<probe_run_result(const confined_argv&)>;

    explicit scripted_runner(script answer, std::chrono::milliseconds delay = {})
        : state_(std::make_shared<state>()) {
        state_->answer = std::move(answer);
        state_->delay = delay;
    }

    [[nodiscard]] probe_runner runner() const {
        return [s = state_](const confined_argv& wrapped, std::chrono::milliseconds timeout) {
            {
                std::lock_guard lock(s->mutex);
                s->calls.push_back(wrapped);
                s->timeouts.push_back(timeout);
            }
            ++s->in_flight;
            s->max_in_flight = std::max(s->max_in_flight.load(), s->in_flight.load());
            if (s->delay.count() > 0) std::this_thread::sleep_for(s->delay);
            --s->in_flight;
            return s->answer(wrapped);
        };
    }

    [[nodiscard]] std::vector<confined_argv> calls() const {
        std::lock_guard lock(state_->mutex);
        return state_->calls;
    }
    [[nodiscard]] std::size_t count() const { return calls().size(); }
    [[nodiscard]] std::vector<std::chrono::milliseconds> timeouts() const {
        std::lock_guard lock(state_->mutex);
        return state_->timeouts;
    }
    [[nodiscard]] int max_in_flight() const { return state_->max_in_flight.load(); }

private:
    struct state {
        std::mutex mutex;
        std::vector<confined_argv> calls;
        std::vector<std::chrono::milliseconds> timeouts;
        script answer;
        std::chrono::milliseconds delay{};
        std::atomic<int> in_flight{0};
        std::atomic<int> max_in_flight{0};
    };
    std::shared_ptr<state> state_;
};

bool is_launcher_probe(const confined_argv& wrapped) {
    return wrapped.argv.back() == "--probe";
}

// The value after `flag` in an argv ("" when absent).
std::string after(const strings& argv, const std::string& flag, std::size_t skip = 0) {
    auto at = std::find(argv.begin(), argv.end(), flag);
    if (at == argv.end() || static_cast<std::size_t>(argv.end() - at) <= skip + 1) return {};
    return *(at + 1 + static_cast<std::ptrdiff_t>(skip));
}

class LadderTest : public ::testing::Test {
protected:
    LadderTest() : launcher_(dir_.path() / "cordon-landlock"), fake_bwrap_(dir_.path() / "bwrap") {
        make_executable(launcher_);
        make_executable(fake_bwrap_);
        fs::create_directory(dir_.path() / "ws");
    }

    [[nodiscard]] local_provider_options options(const scripted_runner& runner,
                                                 backend_choice choice = backend_choice::automatic,
                                                 platform host = platform::linux_) const {
        local_provider_options out;
        out.choice = choice;
        out.host = host;
        out.bwrap_path = fake_bwrap_;
        out.launcher_path = launcher_;
        out.probe_timeout = std::chrono::milliseconds(1234);
        out.run_probe = runner.runner();
        return out;
    }

    // The workspace sits beside the runners, not around them (see RunnerInsideTheWorkspace...).
    // No protected names: the Landlock rung refuses them (protected_names_test.cpp), and these
    // tests are about the ladder.
    [[nodiscard]] sandbox_policy policy(sandbox_mode mode) const {
        sandbox_policy out{mode, dir_.path() / "ws"};
        out.rules.protect.clear();
        return out;
    }

    [[nodiscard]] confined_argv confine(local_provider& provider, sandbox_mode mode) const {
        return provider.confine(command_, policy(mode), policy(mode).workspace_root);
    }

    scratch_dir dir_;
    fs::path launcher_;
    fs::path fake_bwrap_;
    const strings command_{"bash", "-c", "true"};
};

// Each backend works; the launcher reports Landlock ABI 7.
probe_run_result all_usable(const confined_argv& wrapped) {
    if (is_launcher_probe(wrapped)) return probed(7);
    return ok();
}
// ---- one probe sequence ---------------------------------------------------------------------

TEST_F(LadderTest, OneProbeSequenceServesManyConfines) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner));
    EXPECT_THAT(provider.ladder(), ElementsAre(backend_kind::bwrap, backend_kind::landlock));
    EXPECT_EQ(runner.count(), 0u) << "constructing a provider must not probe";

    for (int i = 0; i < 50; ++i) {
        for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
            confined_argv out = confine(provider, mode);
            EXPECT_EQ(out.backend, backend_kind::bwrap);
            EXPECT_EQ(out.argv.front(), fake_bwrap_.string());
            EXPECT_EQ(out.level, enforcement::full);
            ASSERT_TRUE(out.runner) << "bwrap is executed from the descriptor it was checked by";
            EXPECT_TRUE(*out.runner);
        }
    }
    // The launcher's --probe (it runs inside every bwrap sandbox), then bwrap's two functional
    // profile runs, nothing else.
    const auto calls = runner.calls();
    ASSERT_EQ(calls.size(), 3u);
    EXPECT_TRUE(is_launcher_probe(calls[0]));
    EXPECT_EQ(calls[0].argv.front(), launcher_.string());
    ASSERT_TRUE(calls[0].runner) << "the sealed launcher image runs the probe";
    for (const auto& call : {calls[1], calls[2]}) {
        EXPECT_EQ(call.argv.front(), fake_bwrap_.string());
        // The probe really confines `true`, taken by absolute path from a trusted directory.
        EXPECT_EQ(call.argv.back(), find_trusted_executable("true").string());
        ASSERT_TRUE(call.status.has_value()) << "the probe must run with the status channel";
        EXPECT_EQ(call.environment_fd, command_environment_fd);
    }
    EXPECT_FALSE(private_tmp(calls[1].argv)) << "first the read-only profile";
    EXPECT_TRUE(private_tmp(calls[2].argv)) << "then the workspace-write profile";
    EXPECT_TRUE(contains(calls[2].argv, "--bind-fd"));
    for (auto timeout : runner.timeouts())
        EXPECT_EQ(timeout, std::chrono::milliseconds(1234));

    auto chosen = provider.selected();
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(chosen->kind, backend_kind::bwrap);
    EXPECT_EQ(chosen->state, rung_state::usable);
    EXPECT_EQ(chosen->runner, fake_bwrap_.string());
    EXPECT_EQ(chosen->landlock_abi, std::optional<int>(7));
    EXPECT_TRUE(chosen->bind_fd);
    EXPECT_EQ(runner.count(), 3u);
}

TEST_F(LadderTest, ProbeWorkspaceIsRemovedAfterProbing) {
    fs::path seen;
    scripted_runner runner([&seen](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) return probed(7);
        if (contains(wrapped.argv, "--bind-fd")) {
            seen = after(wrapped.argv, "--bind-fd", 1);
            EXPECT_TRUE(fs::is_directory(seen)) << "the probe workspace exists while probing";
        }
        return ok();
    });
    local_provider provider(options(runner, backend_choice::bwrap));
    ASSERT_TRUE(provider.selected().has_value());
    ASSERT_FALSE(seen.empty());
    EXPECT_TRUE(seen.is_absolute());
    EXPECT_FALSE(fs::exists(seen)) << seen;
}

// ---- the verdict cache: one probe serves the processes after it -----------------------------

// A cached verdict must hold the kernel's own Landlock ABI.
int kernel_abi() {
    return landlock::query_abi();
}

probe_run_result usable_here(const confined_argv& wrapped) {
    if (is_launcher_probe(wrapped)) return probed(kernel_abi());
    return ok();
}

class VerdictCacheTest : public LadderTest {
protected:
    [[nodiscard]] local_provider_options cached(const scripted_runner& runner,
                                                backend_choice choice = backend_choice::automatic,
                                                bool refresh = false) const {
        local_provider_options out = options(runner, choice);
        out.verdict_directory = cache_;
        out.refresh_verdict = refresh;
        return out;
    }

    // A probe runner that fails the test when it is asked anything.
    static scripted_runner must_not_probe() {
        return scripted_runner([](const confined_argv& wrapped) {
            ADD_FAILURE() << "probed despite a current cached verdict: " << wrapped.argv.front();
            return failed("unexpected probe");
        });
    }

    // Where a provider of these options keeps its verdict for `choice`.
    [[nodiscard]] fs::path verdict_file(backend_choice choice = backend_choice::automatic) const {
        return cache_ / verdict_file_name(choice, fake_bwrap_, launcher_);
    }

    [[nodiscard]] std::string stored() const { return test::read_file(verdict_file()); }

    // Replaces the stored verdict's key and body, as a process with other facts would have.
    void restore(const std::string& key, const std::string& body) const {
        auto cache = verdict_cache::open(cache_);
        ASSERT_TRUE(std::holds_alternative<verdict_cache>(cache));
        ASSERT_TRUE(
            std::get<verdict_cache>(cache).store(verdict_file().filename().string(), key, body));
    }

    [[nodiscard]] std::string key() const {
        auto made = verdict_key(fake_bwrap_, launcher_);
        if (auto* unknown = std::get_if<unknown_facts>(&made)) {
            ADD_FAILURE() << unknown->reason;
            return {};
        }
        return std::get<std::string>(made);
    }

    // The body of the stored verdict (what follows the key).
    [[nodiscard]] std::string body() const {
        const std::string text = stored();
        const auto at = text.find("\n\n");
        return at == std::string::npos ? std::string() : text.substr(at + 2);
    }

    scratch_dir elsewhere_;
    fs::path cache_ = elsewhere_.path() / "verdicts";
};

TEST_F(VerdictCacheTest, AStoredVerdictServesTheNextProviderWithoutAProbe) {
    scripted_runner first(usable_here);
    {
        local_provider provider(cached(first));
        ASSERT_TRUE(provider.selected().has_value());
        EXPECT_THAT(provider.verdict_origin(), HasSubstr("probed (none cached)"));
    }
    EXPECT_EQ(first.count(), 3u);
    struct stat st {};
    ASSERT_EQ(::stat(verdict_file().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    ASSERT_EQ(::stat(cache_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u);

    scripted_runner second = must_not_probe();
    local_provider provider(cached(second));
    auto chosen = provider.selected();
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(provider.verdict_origin(), "cached");
    EXPECT_EQ(chosen->kind, backend_kind::bwrap);
    EXPECT_EQ(chosen->landlock_abi, std::optional<int>(kernel_abi()));
    EXPECT_TRUE(chosen->bind_fd);
    EXPECT_EQ(chosen->level, enforcement::full);
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        confined_argv out = confine(provider, mode);
        EXPECT_EQ(out.backend, backend_kind::bwrap);
        EXPECT_EQ(out.level, enforcement::full);
        ASSERT_TRUE(out.runner) << "this process opened the runner itself";
        EXPECT_TRUE(*out.runner);
    }
    EXPECT_EQ(second.count(), 0u);
}

TEST_F(VerdictCacheTest, EveryFactOfTheKeyInvalidatesTheVerdict) {
    scripted_runner first(usable_here);
    (void)local_provider(cached(first)).selected();
    const std::string current = key();
    const std::string verdict = body();
    ASSERT_FALSE(verdict.empty());
    for (const std::string& fact :
         std::vector<std::string>{"boot", "euid", "userns", "mntns", "privileges", "landlock",
                                  "lsm", "bwrap", "launcher", "prober"}) {
        SCOPED_TRACE(fact);
        const auto at = current.find(fact + " ");
        ASSERT_NE(at, std::string::npos) << current;
        std::string other = current;
        other.insert(other.find('\n', at), "-other");
        restore(other, verdict);
        scripted_runner runner(usable_here);
        local_provider provider(cached(runner));
        ASSERT_TRUE(provider.selected().has_value());
        EXPECT_GT(runner.count(), 0u) << "a verdict for other facts was adopted";
        EXPECT_EQ(provider.verdict_origin(), "probed (" + fact + " changed)");
    }
    // Each fact holds the value read from this host.
    EXPECT_THAT(current, HasSubstr("landlock " + std::to_string(kernel_abi()) + "\n"));
    EXPECT_THAT(current, HasSubstr("euid " + std::to_string(::geteuid()) + "\n"));
    EXPECT_THAT(current, HasSubstr("CapEff: "));
    EXPECT_THAT(current, HasSubstr("Seccomp_filters: "));
    EXPECT_THAT(current, HasSubstr("userns user:["));
    EXPECT_THAT(current, Not(HasSubstr("boot -\n")));
    EXPECT_THAT(current, Not(HasSubstr(" missing\n")));
    // The sysctls that gate user namespaces and executable memfds are facts too.
    EXPECT_THAT(current, HasSubstr("/proc/sys/kernel/unprivileged_userns_clone "));
    EXPECT_THAT(current, HasSubstr("/proc/sys/user/max_user_namespaces "));
    EXPECT_THAT(current, HasSubstr("/proc/sys/vm/memfd_noexec "));
}

TEST_F(VerdictCacheTest, ARewrittenRunnerIsProbedAgain) {
    scripted_runner first(usable_here);
    (void)local_provider(cached(first)).selected();
    make_executable(fake_bwrap_, "#!/bin/sh\n# another bubblewrap\nexit 1\n");
    scripted_runner second(usable_here);
    local_provider provider(cached(second));
    ASSERT_TRUE(provider.selected().has_value());
    EXPECT_EQ(second.count(), 3u);
    EXPECT_EQ(provider.verdict_origin(), "probed (bwrap changed)");
}

TEST_F(VerdictCacheTest, AnUntrustedDirectoryOrFileIsNeverRead) {
    scripted_runner first(usable_here);
    (void)local_provider(cached(first)).selected();

    ASSERT_EQ(::chmod(verdict_file().c_str(), 0620), 0);
    {
        scripted_runner runner(usable_here);
        local_provider provider(cached(runner));
        ASSERT_TRUE(provider.selected().has_value());
        EXPECT_EQ(runner.count(), 3u) << "a file others could have written was trusted";
        EXPECT_THAT(provider.verdict_origin(), HasSubstr("not this user's own"));
    }
    ASSERT_EQ(::chmod(cache_.c_str(), 0755), 0);
    scripted_runner runner(usable_here);
    local_provider provider(cached(runner));
    ASSERT_TRUE(provider.selected().has_value());
    EXPECT_EQ(runner.count(), 3u) << "a directory others may enter was trusted";
    EXPECT_THAT(provider.verdict_origin(), HasSubstr("not a private directory"));
}

// Every verdict below differs from a valid one in one way; none may be adopted, and the probe
// that replaces it is adopted by the next provider. The valid one itself is (the control).
TEST_F(VerdictCacheTest, ACorruptForeignOrInconsistentVerdictIsProbedOverAndReplaced) {
    scripted_runner first(usable_here);
    (void)local_provider(cached(first)).selected();
    const std::string valid = body();
    const std::string abi = std::to_string(kernel_abi());
    const auto edit = [&valid](const std::string& from, const std::string& to) {
        const auto at = valid.find(from);
        EXPECT_NE(at, std::string::npos) << from << " not in " << valid;
        std::string out = valid;
        if (at != std::string::npos) out.replace(at, from.size(), to);
        return out;
    };
    const std::string bwrap_line = "rung bwrap 0 " + abi + " 1 \n";
    const std::string landlock_line = "rung landlock 2 - 0 \n";
    ASSERT_NE(valid.find(bwrap_line), std::string::npos) << valid;
    ASSERT_NE(valid.find(landlock_line), std::string::npos) << valid;
    const std::vector<std::pair<std::string, std::string>> cases{
        {"not a verdict", "rung nonsense\n"},
        {"a rung missing", edit(landlock_line, "")},
        {"rungs out of order", edit(bwrap_line + landlock_line, landlock_line + bwrap_line)},
        {"a state out of range", edit("rung bwrap 0 ", "rung bwrap 9 ")},
        {"an ABI that is not a number", edit(bwrap_line, "rung bwrap 0 " + abi + "x 1 \n")},
        {"a second probed line", "probed 1\n" + valid},
        {"probed in the future", edit("probed ", "probed 9")},
        {"a usable rung without the kernel's ABI", edit(bwrap_line, "rung bwrap 0 - 1 \n")},
        {"a usable rung with another ABI", edit(bwrap_line, "rung bwrap 0 1 1 \n")},
        {"the launcher's probe failed on a kernel with Landlock",
         edit("launcher 1 " + abi + " ", "launcher 1 0 timed out after 5000ms")},
    };
    for (const auto& [what, garbage] : cases) {
        SCOPED_TRACE(what);
        restore(key(), garbage);
        scripted_runner runner(usable_here);
        local_provider provider(cached(runner));
        ASSERT_TRUE(provider.selected().has_value());
        EXPECT_EQ(runner.count(), 3u) << "adopted: " << garbage;
        EXPECT_EQ(provider.verdict_origin(), "probed (the cached verdict did not apply)");
        scripted_runner next = must_not_probe();
        local_provider after(cached(next));
        ASSERT_TRUE(after.selected().has_value()) << "the probed verdict replaced the bad one";
        EXPECT_EQ(after.verdict_origin(), "cached");
    }
    restore(key(), valid);
    scripted_runner control = must_not_probe();
    local_provider provider(cached(control));
    ASSERT_TRUE(provider.selected().has_value());
    EXPECT_EQ(provider.verdict_origin(), "cached");
}

// A launcher probe that failed (a timeout on a loaded host) leaves bwrap usable without the
// Landlock wall inside it. That verdict holds for the process that probed; no other adopts it.
TEST_F(VerdictCacheTest, AVerdictWithoutTheLandlockWallIsNeverShared) {
    scripted_runner first([](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) return failed("timed out after 5000ms");
        return ok();
    });
    {
        local_provider provider(cached(first));
        auto chosen = provider.selected();
        ASSERT_TRUE(chosen.has_value());
        EXPECT_EQ(chosen->kind, backend_kind::bwrap);
        EXPECT_FALSE(chosen->landlock_abi.has_value());
    }
    scripted_runner runner(usable_here);
    local_provider provider(cached(runner));
    auto chosen = provider.selected();
    ASSERT_TRUE(chosen.has_value());
    EXPECT_GT(runner.count(), 0u) << "a verdict without Landlock was adopted";
    EXPECT_EQ(chosen->landlock_abi, std::optional<int>(kernel_abi()));
}

TEST_F(VerdictCacheTest, AVerdictThatPassedOverARungIsReusedForMinutesOnly) {
    // bwrap unusable, the Landlock rung selected: perhaps only because a probe timed out.
    const auto bwrap_broken = [this](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) return probed(kernel_abi());
        if (wrapped.argv.front() == fake_bwrap_.string())
            return failed("bwrap: setting up uid map");
        return ok();
    };
    scripted_runner first(bwrap_broken);
    (void)local_provider(cached(first)).selected();
    {
        scripted_runner runner = must_not_probe();
        local_provider provider(cached(runner));
        auto chosen = provider.selected();
        ASSERT_TRUE(chosen.has_value());
        EXPECT_EQ(chosen->kind, backend_kind::landlock);
        EXPECT_EQ(provider.verdict_origin(), "cached");
    }
    // The same verdict, probed long ago.
    std::string old = body();
    old.replace(0, old.find('\n'), "probed 0");
    restore(key(), old);
    scripted_runner runner(usable_here);
    local_provider provider(cached(runner));
    auto chosen = provider.selected();
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(chosen->kind, backend_kind::bwrap) << "the old degraded verdict was reused";
    EXPECT_GT(runner.count(), 0u);
}

TEST_F(VerdictCacheTest, RefreshAlwaysProbesAndSaysWhetherTheCacheWasCurrent) {
    scripted_runner first(usable_here);
    (void)local_provider(cached(first)).selected();
    {
        scripted_runner runner(usable_here);
        local_provider provider(cached(runner, backend_choice::automatic, true));
        const auto rungs = provider.probe_all();
        EXPECT_EQ(runner.count(), 5u) << "the launcher, then two profiles per rung";
        EXPECT_EQ(provider.verdict_origin(), "probed (the cached verdict was current)");
    }
    scripted_runner broken([this](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) return probed(kernel_abi());
        if (wrapped.argv.front() == fake_bwrap_.string()) return failed("bwrap: no user namespace");
        return ok();
    });
    {
        local_provider provider(cached(broken, backend_choice::automatic, true));
        (void)provider.probe_all();
        EXPECT_EQ(provider.verdict_origin(),
                  "probed (the cached verdict was stale: bwrap was usable, is unusable "
                  "(read-only profile: bwrap: no user namespace))");
    }
    // What the refresh found is what the next provider adopts.
    scripted_runner next = must_not_probe();
    local_provider provider(cached(next));
    auto chosen = provider.selected();
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(chosen->kind, backend_kind::landlock);
}

TEST_F(VerdictCacheTest, ARunnerFailureMakesTheNextProviderProbe) {
    scripted_runner first(usable_here);
    {
        local_provider provider(cached(first));
        ASSERT_TRUE(provider.selected().has_value());
        // What the executor calls when a run's runner failed before its command started.
        provider.runner_failed(confine(provider, sandbox_mode::read_only));
    }
    EXPECT_FALSE(fs::exists(verdict_file()));
    scripted_runner runner(usable_here);
    local_provider provider(cached(runner));
    ASSERT_TRUE(provider.selected().has_value());
    EXPECT_EQ(runner.count(), 3u);
}

TEST_F(VerdictCacheTest, EachLadderHasItsOwnVerdict) {
    scripted_runner first(usable_here);
    (void)local_provider(cached(first, backend_choice::landlock)).selected();
    EXPECT_TRUE(fs::exists(verdict_file(backend_choice::landlock)));
    EXPECT_FALSE(fs::exists(verdict_file()));
    scripted_runner runner(usable_here);
    local_provider provider(cached(runner));
    auto chosen = provider.selected();
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(chosen->kind, backend_kind::bwrap);
    EXPECT_EQ(runner.count(), 3u);
}

TEST_F(VerdictCacheTest, NoWorkspaceMayHoldTheVerdicts) {
    scripted_runner runner(usable_here);
    local_provider provider(cached(runner));
    auto refused = provider.refusal({sandbox_mode::workspace_write, elsewhere_.path()}, {});
    ASSERT_TRUE(refused.has_value());
    EXPECT_THAT(*refused, HasSubstr("holds cordon's probe verdicts"));
    refused = provider.refusal({sandbox_mode::workspace_write, cache_}, {});
    ASSERT_TRUE(refused.has_value());
    EXPECT_THAT(*refused, HasSubstr("holds cordon's probe verdicts"));
    EXPECT_FALSE(provider.refusal({sandbox_mode::read_only, elsewhere_.path()}, {}).has_value());
}

TEST_F(VerdictCacheTest, ConcurrentProvidersAllReadAWholeVerdict) {
    scripted_runner first(usable_here);
    (void)local_provider(cached(first)).selected();
    std::atomic<int> adopted{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 25; ++i) {
                // Half refresh (probe and replace the file), half read it: a reader always
                // finds a whole verdict, never a torn one.
                const bool refresh = t % 2 == 0;
                scripted_runner runner = refresh ? scripted_runner(usable_here) : must_not_probe();
                local_provider provider(cached(runner, backend_choice::automatic, refresh));
                auto chosen = provider.selected();
                EXPECT_TRUE(chosen.has_value());
                if (!refresh) {
                    EXPECT_EQ(provider.verdict_origin(), "cached");
                    ++adopted;
                }
            }
        });
    }
    for (auto& thread : threads)
        thread.join();
    EXPECT_GT(adopted.load(), 0);
    strings names;
    for (const auto& entry : fs::directory_iterator(cache_))
        names.push_back(entry.path().filename().string());
    EXPECT_THAT(names, ElementsAre(verdict_file().filename().string()))
        << "a temporary file was left behind";
}

// Two programs with runners of their own (an agent that links the library and the cordon
// command; two builds) each keep their verdict: neither replaces the other's, so neither probes
// at every call. A verdict file nobody wrote for a week goes when another is stored.
TEST_F(VerdictCacheTest, EachProberKeepsItsOwnVerdictAndUnusedOnesGo) {
    scripted_runner first(usable_here);
    (void)local_provider(cached(first)).selected();
    const fs::path other_launcher = dir_.path() / "elsewhere-cordon-landlock";
    make_executable(other_launcher);
    scripted_runner second(usable_here);
    local_provider_options elsewhere = cached(second);
    elsewhere.launcher_path = other_launcher;
    (void)local_provider(elsewhere).selected();
    EXPECT_EQ(second.count(), 3u) << "another launcher: its own probe";
    const fs::path theirs =
        cache_ / verdict_file_name(backend_choice::automatic, fake_bwrap_, other_launcher);
    EXPECT_NE(theirs, verdict_file());
    EXPECT_TRUE(fs::exists(theirs));

    scripted_runner none = must_not_probe();
    local_provider again(cached(none));
    ASSERT_TRUE(again.selected().has_value());
    EXPECT_EQ(again.verdict_origin(), "cached") << "the other prober left this one's verdict";

    // Another boot's verdict, untouched for eight days, and one written yesterday.
    const fs::path old = cache_ / "verdict-auto-00000000000000aa";
    const fs::path recent = cache_ / "verdict-auto-00000000000000bb";
    // And the temporaries of stores whose cordon was killed before the rename: one a minute old
    // is left, one being written now is not.
    const fs::path left = cache_ / ".verdict-auto-00000000000000aa.1.1.1";
    const fs::path writing = cache_ / ".verdict-auto-00000000000000bb.1.1.1";
    test::write_file(old, "x");
    test::write_file(recent, "x");
    test::write_file(left, "x");
    test::write_file(writing, "x");
    const auto set_age = [](const fs::path& path, std::chrono::hours age) {
        const timespec when{::time(nullptr) - std::chrono::seconds(age).count(), 0};
        const timespec times[2] = {when, when};
        ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
    };
    set_age(old, std::chrono::hours(24 * 8));
    set_age(recent, std::chrono::hours(24));
    set_age(left, std::chrono::hours(1));
    scripted_runner refresh(usable_here);
    (void)local_provider(cached(refresh, backend_choice::automatic, true)).selected();
    EXPECT_FALSE(fs::exists(old));
    EXPECT_TRUE(fs::exists(recent));
    EXPECT_FALSE(fs::exists(left)) << "a killed store's temporary was left";
    EXPECT_TRUE(fs::exists(writing));
    EXPECT_TRUE(fs::exists(theirs));
}

// ---- unavailable verdicts are cached and fail closed ----------------------------------------

TEST_F(LadderTest, UnavailableVerdictIsCachedAndEveryConfineThrows) {
    scripted_runner runner([](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) {
            return failed("cordon-landlock: landlock is not supported by this kernel");
        }
        return failed("bwrap: No permissions to create new namespace");
    });
    local_provider provider(options(runner));

    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        try {
            (void)confine(provider, mode);
            ADD_FAILURE() << "confine must throw when no rung is usable";
        } catch (const sandbox_unavailable_error& error) {
            EXPECT_EQ(error.mode(), mode);
            EXPECT_EQ(error.code(), "SANDBOX_UNAVAILABLE");
            EXPECT_FALSE(error.detail().has_value());
            // The message says why, backend by backend, after the contract's sentence.
            ASSERT_EQ(error.backends().size(), 2u);
            EXPECT_EQ(error.backends()[0].backend, "bwrap");
            EXPECT_THAT(error.backends()[0].reason,
                        HasSubstr("bwrap: No permissions to create new namespace"));
            EXPECT_EQ(error.backends()[1].backend, "landlock");
            EXPECT_THAT(error.backends()[1].reason, HasSubstr("not supported by this kernel"));
            EXPECT_EQ(std::string(error.what()),
                      sandbox_unavailable_message(mode, std::nullopt, error.backends()));
            EXPECT_THAT(std::string(error.what()),
                        HasSubstr(sandbox_unavailable_message(mode, std::nullopt)));
            EXPECT_THAT(std::string(error.what()),
                        HasSubstr(" Unusable backends: bwrap: read-only profile: bwrap: No "
                                  "permissions to create new namespace; landlock: "));
        }
    }
    // The launcher's --probe failed (1 run), bwrap's read-only profile failed (1 run); the
    // Landlock rung needs no run to know it is unusable.
    const std::size_t after_first = runner.count();
    EXPECT_EQ(after_first, 2u);

    for (int i = 0; i < 20; ++i) {
        EXPECT_THROW((void)confine(provider, sandbox_mode::read_only), sandbox_unavailable_error);
        EXPECT_THROW((void)confine(provider, sandbox_mode::workspace_write),
                     sandbox_unavailable_error);
    }
    EXPECT_FALSE(provider.selected().has_value());
    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 2u);
    EXPECT_EQ(reports[0].state, rung_state::unusable);
    EXPECT_EQ(reports[1].state, rung_state::unusable);
    EXPECT_THAT(reports[1].reason, HasSubstr("not supported"));
    EXPECT_EQ(runner.count(), after_first) << "a cached verdict must not re-run probes";
}

// Whatever the classifier judged a failure (a timeout, a signal, a spawn error, a silent status
// channel, a failure record) makes the rung unusable, with its line as the reason.
TEST_F(LadderTest, AFailedProbeMakesTheRungUnusableWithItsLine) {
    scripted_runner runner([](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) return failed("cordon-landlock: Permission denied");
        return failed("the sandbox runner exited with status 0 without starting the command");
    });
    local_provider provider(options(runner));
    EXPECT_FALSE(provider.selected().has_value());
    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 2u);
    EXPECT_EQ(reports[0].state, rung_state::unusable);
    EXPECT_EQ(reports[0].reason,
              "read-only profile: the sandbox runner exited with status 0 without starting the "
              "command");
    EXPECT_EQ(reports[1].state, rung_state::unusable);
    EXPECT_EQ(reports[1].reason, "cordon-landlock: Permission denied");
}

// A launcher whose probe answer holds no ABI cannot confine anything.
TEST_F(LadderTest, AProbeAnswerWithoutAnAbiIsUnusable) {
    scripted_runner runner([](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) return probed(0);
        return ok();
    });
    local_provider provider(options(runner, backend_choice::landlock));
    EXPECT_FALSE(provider.selected().has_value());
    EXPECT_THAT(provider.probe_all()[0].reason, HasSubstr("holds no ABI"));
}

// ---- falling through ------------------------------------------------------------------------

TEST_F(LadderTest, FailingBwrapFallsThroughToTheLauncher) {
    const std::string bwrap = fake_bwrap_.string();
    scripted_runner runner([bwrap](const confined_argv& wrapped) {
        if (wrapped.argv.front() == bwrap) {
            return failed("bwrap: setting up uid map: Permission denied");
        }
        return all_usable(wrapped);
    });
    local_provider provider(options(runner));

    confined_argv out = confine(provider, sandbox_mode::workspace_write);
    EXPECT_EQ(out.backend, backend_kind::landlock);
    EXPECT_EQ(out.argv.front(), launcher_.string());
    EXPECT_EQ(out.argv[1], "--status-fd");  // the launcher's dialect, not bwrap's
    EXPECT_FALSE(contains(out.argv, "--ro-bind"));
    EXPECT_EQ(out.level, enforcement::partial);  // Landlock workspace-write (see backends.hpp)
    // Read-only has the host's processes as its one gap.
    EXPECT_THAT(confine(provider, sandbox_mode::read_only).gaps,
                ElementsAre(HasSubstr("no pid namespace")));
    ASSERT_TRUE(out.status.has_value());
    // Cordon as root shows the run the trees of its own on the way read-only (identity.hpp):
    // their refusals are the mount's.
    const bool read_only_trees =
        out.identity_setup != nullptr &&
        std::any_of(out.identity_setup->trees.begin(), out.identity_setup->trees.end(),
                    [](const sandbox::idmapped_tree& tree) { return tree.read_only; });
    if (read_only_trees) {
        EXPECT_THAT(
            out.denial_signatures,
            ElementsAre("permission denied", "invalid cross-device link", "read-only file system"));
    } else {
        EXPECT_THAT(out.denial_signatures,
                    ElementsAre("permission denied", "invalid cross-device link"));
    }
    ASSERT_EQ(out.fds.size(), 2u) << "the workspace and the run's private /tmp, by descriptor";
    EXPECT_EQ(out.fds[0].child_fd, workspace_fd);
    ASSERT_TRUE(out.fds[0].fd);
    EXPECT_TRUE(*out.fds[0].fd);
    EXPECT_EQ(out.fds[1].child_fd, writable_fd);
    ASSERT_FALSE(out.tmpdir.empty());
    EXPECT_TRUE(fs::is_directory(out.tmpdir));
    EXPECT_TRUE(out.tmpdir.starts_with("/tmp/cordon-tmp-")) << out.tmpdir;

    // launcher --probe, bwrap RO (failed, stop), launcher RO, launcher WW.
    const auto calls = runner.calls();
    ASSERT_EQ(calls.size(), 4u);
    EXPECT_TRUE(is_launcher_probe(calls[0]));
    EXPECT_EQ(calls[1].argv.front(), bwrap);
    EXPECT_EQ(calls[2].argv.front(), launcher_.string());
    EXPECT_EQ(calls[3].argv.front(), launcher_.string());

    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 2u);
    EXPECT_EQ(reports[0].state, rung_state::unusable);
    EXPECT_EQ(reports[1].state, rung_state::usable);
    EXPECT_EQ(runner.count(), 4u);
}

TEST_F(LadderTest, BwrapFailingOnlyTheWorkspaceWriteProfileFallsThrough) {
    // A host that refuses the tmpfs/bind of the workspace-write profile but not the read-only
    // one: selecting bwrap on the strength of the read-only run alone would fail every later
    // workspace-write command at run time.
    const std::string bwrap = fake_bwrap_.string();
    scripted_runner runner([bwrap](const confined_argv& wrapped) {
        if (wrapped.argv.front() == bwrap) {
            if (private_tmp(wrapped.argv)) {
                return failed("bwrap: Can't mount tmpfs on /newroot/tmp: Permission denied");
            }
            return ok();
        }
        return all_usable(wrapped);
    });
    local_provider provider(options(runner));
    auto chosen = provider.selected();
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(chosen->kind, backend_kind::landlock);
    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 2u);
    EXPECT_EQ(reports[0].state, rung_state::unusable);
    EXPECT_THAT(reports[0].reason, HasSubstr("workspace-write"));
    EXPECT_THAT(reports[0].reason, HasSubstr("Can't mount tmpfs"));
}

// bubblewrap before 0.10 has no --bind-fd: the workspace is then bound by path, and the launcher
// inside still grants it from the checked descriptor.
TEST_F(LadderTest, BwrapWithoutBindFdBindsTheWorkspaceByPath) {
    const std::string bwrap = fake_bwrap_.string();
    scripted_runner runner([bwrap](const confined_argv& wrapped) {
        if (wrapped.argv.front() == bwrap && contains(wrapped.argv, "--bind-fd")) {
            return failed("bwrap: Unknown option --bind-fd");
        }
        return all_usable(wrapped);
    });
    local_provider provider(options(runner, backend_choice::bwrap));
    auto chosen = provider.selected();
    ASSERT_TRUE(chosen.has_value()) << provider.probe_all()[0].reason;
    EXPECT_FALSE(chosen->bind_fd);
    confined_argv out = confine(provider, sandbox_mode::workspace_write);
    EXPECT_FALSE(contains(out.argv, "--bind-fd"));
    EXPECT_EQ(after(out.argv, "--bind"), policy(sandbox_mode::workspace_write).workspace_root);
    EXPECT_TRUE(contains(out.argv, "--rw-fd"));
}

// Without Landlock in the kernel bwrap still confines, with the launcher applying the rest
// (capabilities, seccomp), and the record says `partial`.
TEST_F(LadderTest, BwrapWithoutLandlockIsPartial) {
    scripted_runner runner([](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) {
            return failed("cordon-landlock: landlock is disabled on this kernel");
        }
        return ok();
    });
    local_provider provider(options(runner));
    auto chosen = provider.selected();
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(chosen->kind, backend_kind::bwrap);
    EXPECT_EQ(chosen->level, enforcement::partial);
    EXPECT_FALSE(chosen->landlock_abi.has_value());
    confined_argv out = confine(provider, sandbox_mode::read_only);
    EXPECT_EQ(out.level, enforcement::partial);
    EXPECT_TRUE(contains(out.argv, "--no-landlock"));
    EXPECT_FALSE(out.gaps.empty());
    auto reports = provider.probe_all();
    EXPECT_EQ(reports[1].state, rung_state::unusable);
    EXPECT_THAT(reports[1].reason, HasSubstr("landlock is disabled"));
}

TEST_F(LadderTest, BwrapNeedsTheLauncherInsideTheSandbox) {
    scripted_runner runner(all_usable);
    local_provider_options opts = options(runner, backend_choice::bwrap);
    opts.launcher_path = dir_.path() / "no-such-launcher";
    local_provider provider(std::move(opts));
    EXPECT_THROW((void)confine(provider, sandbox_mode::read_only), sandbox_unavailable_error);
    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].state, rung_state::unusable);
    EXPECT_THAT(reports[0].reason, HasSubstr("cordon-landlock is needed inside the sandbox"));
    EXPECT_EQ(runner.count(), 0u);
}

TEST_F(LadderTest, ExplicitLandlockNeverProbesBwrap) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner, backend_choice::landlock));
    EXPECT_THAT(provider.ladder(), ElementsAre(backend_kind::landlock));

    confined_argv out = confine(provider, sandbox_mode::read_only);
    EXPECT_EQ(out.backend, backend_kind::landlock);
    EXPECT_EQ(out.argv.front(), launcher_.string());
    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].kind, backend_kind::landlock);
    for (const auto& call : runner.calls()) {
        EXPECT_NE(call.argv.front(), fake_bwrap_.string());
        EXPECT_FALSE(contains(call.argv, "--ro-bind"));
    }
    EXPECT_EQ(runner.count(), 3u);  // --probe, read-only profile, workspace-write profile
}

TEST_F(LadderTest, ExplicitBwrapThatFailsDoesNotFallThrough) {
    const std::string bwrap = fake_bwrap_.string();
    scripted_runner runner([bwrap](const confined_argv& wrapped) {
        if (wrapped.argv.front() == bwrap) return failed("bwrap: nope");
        return all_usable(wrapped);
    });
    local_provider provider(options(runner, backend_choice::bwrap));
    EXPECT_THAT(provider.ladder(), ElementsAre(backend_kind::bwrap));
    EXPECT_THROW((void)confine(provider, sandbox_mode::read_only), sandbox_unavailable_error);
    for (const auto& call : runner.calls()) {
        if (!is_launcher_probe(call)) {
            EXPECT_EQ(call.argv.front(), bwrap);
        }
    }
}

// ---- other platforms ------------------------------------------------------------------------

TEST_F(LadderTest, MacosSelectsSeatbeltWithoutAnyProbe) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner, backend_choice::automatic, platform::macos));
    EXPECT_THAT(provider.ladder(), ElementsAre(backend_kind::seatbelt));

    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        // The parts Seatbelt's profile does not implement yet are left out here (see the next
        // test for the refusal).
        sandbox_policy plain = policy(mode);
        plain.rules.deny_credential_stores = false;
        plain.rules.tmp = tmp_policy::host;
        plain.network.policy = network_policy::allow;
        confined_argv out = provider.confine(command_, plain, plain.workspace_root);
        EXPECT_EQ(out.backend, backend_kind::seatbelt);
        ASSERT_GE(out.argv.size(), 4u);
        EXPECT_EQ(out.argv[0], "/usr/bin/sandbox-exec");
        EXPECT_EQ(out.argv[1], "-p");
        const auto roots = writable_roots(plain);
        EXPECT_EQ(out.argv[2], seatbelt_profile(mode, roots));
        EXPECT_FALSE(out.status.has_value());
    }
    auto chosen = provider.selected();
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(chosen->kind, backend_kind::seatbelt);
    EXPECT_EQ(chosen->state, rung_state::usable);
    EXPECT_EQ(runner.count(), 0u);

    // Without any probe runner at all, too (a probe would throw std::logic_error).
    local_provider_options bare;
    bare.host = platform::macos;
    local_provider without_runner(std::move(bare));
    sandbox_policy plain = policy(sandbox_mode::read_only);
    plain.rules.deny_credential_stores = false;
    plain.network.policy = network_policy::allow;
    EXPECT_EQ(without_runner.confine(command_, plain, plain.workspace_root).backend,
              backend_kind::seatbelt);
}

// The Seatbelt profile does not implement denied reads, protected names, a private /tmp or the
// network's deny yet:
// a policy that asks for them is refused with each part named, never run without them, unless
// the caller accepts the gap, and then the record says partial.
TEST_F(LadderTest, SeatbeltRefusesThePartsItCannotEnforce) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner, backend_choice::automatic, platform::macos));
    sandbox_policy asked = policy(sandbox_mode::workspace_write);
    asked.rules.deny_read = {dir_.path()};  // exists
    try {
        (void)provider.confine(command_, asked, asked.workspace_root);
        ADD_FAILURE() << "expected sandbox_unavailable_error";
    } catch (const sandbox_unavailable_error& error) {
        EXPECT_THAT(error.what(), HasSubstr("denied reads are readable under Seatbelt"));
        EXPECT_THAT(error.what(), HasSubstr("/tmp is the host's under Seatbelt"));
        EXPECT_THAT(error.what(), HasSubstr("Seatbelt profile has no network rule"));
        EXPECT_THAT(error.what(), HasSubstr("--accept-partial"));
    }
    asked.rules.accept_partial = true;
    const confined_argv accepted = provider.confine(command_, asked, asked.workspace_root);
    EXPECT_EQ(accepted.level, enforcement::partial);
    EXPECT_THAT(accepted.gaps, Contains(HasSubstr("denied reads are readable under Seatbelt")));
    EXPECT_THAT(accepted.gaps, Contains(HasSubstr("no network rule")));
}

TEST_F(LadderTest, OtherPlatformFailsClosedWithZeroProbes) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner, backend_choice::automatic, platform::other));
    EXPECT_THAT(provider.ladder(), IsEmpty());
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        try {
            (void)confine(provider, mode);
            ADD_FAILURE() << "an empty ladder must fail closed";
        } catch (const sandbox_unavailable_error& error) {
            EXPECT_EQ(error.mode(), mode);
            EXPECT_EQ(std::string(error.what()), sandbox_unavailable_message(mode, std::nullopt));
        }
    }
    EXPECT_FALSE(provider.selected().has_value());
    EXPECT_THAT(provider.probe_all(), IsEmpty());
    EXPECT_EQ(runner.count(), 0u);
}

TEST_F(LadderTest, MissingProbeRunnerIsAProgrammerError) {
    local_provider_options bare;
    bare.host = platform::linux_;
    bare.bwrap_path = fake_bwrap_;
    bare.launcher_path = launcher_;
    local_provider provider(std::move(bare));
    EXPECT_THROW((void)confine(provider, sandbox_mode::read_only), std::logic_error);
}

// ---- the Landlock probe ---------------------------------------------------------------------

TEST_F(LadderTest, LandlockProbeRecordGivesTheAbiAndPartialEnforcement) {
    scripted_runner runner([](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) return probed(3);
        return ok();
    });
    local_provider provider(options(runner, backend_choice::landlock));
    auto chosen = provider.selected();
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(chosen->kind, backend_kind::landlock);
    EXPECT_EQ(chosen->level, enforcement::partial);
    ASSERT_TRUE(chosen->landlock_abi.has_value());
    EXPECT_EQ(*chosen->landlock_abi, 3);

    // The functional profile runs are the real profiles at the probed level.
    const auto calls = runner.calls();
    ASSERT_EQ(calls.size(), 3u);
    EXPECT_TRUE(is_launcher_probe(calls[0]));
    EXPECT_EQ(calls[0].backend, backend_kind::landlock);
    EXPECT_EQ(calls[0].environment_fd, command_environment_fd) << "no runner inherits an env";
    for (std::size_t i : {1u, 2u}) {
        EXPECT_EQ(calls[i].backend, backend_kind::landlock);
        EXPECT_EQ(calls[i].level, enforcement::partial);
        EXPECT_EQ(calls[i].argv.front(), launcher_.string());
        EXPECT_EQ(calls[i].argv.back(), find_trusted_executable("true").string());
        ASSERT_TRUE(calls[i].status.has_value());
    }
    EXPECT_FALSE(contains(calls[1].argv, "/tmp")) << "read-only profile first";
    EXPECT_TRUE(contains(calls[2].argv, "/tmp")) << "then workspace-write";

    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        EXPECT_EQ(confine(provider, mode).level, enforcement::partial);
    }
    EXPECT_EQ(runner.count(), 3u);
}

// From ABI 6 the kernel lacks nothing the rung uses: its one gap is the pid namespace it has not.
TEST_F(LadderTest, LandlockProbeAtAbi6LacksOnlyAPidNamespace) {
    scripted_runner runner([](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) return probed(6);
        return ok();
    });
    local_provider provider(options(runner, backend_choice::landlock));
    auto chosen = provider.selected();
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(chosen->level, enforcement::partial);
    EXPECT_EQ(chosen->landlock_abi, std::optional<int>(6));
    EXPECT_THAT(confine(provider, sandbox_mode::read_only).gaps,
                ElementsAre(HasSubstr("no pid namespace")));
}

TEST_F(LadderTest, LandlockProfileRunFailureAfterAGoodProbeIsUnusable) {
    scripted_runner runner([](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) return probed(6);
        if (!contains(wrapped.argv, "/tmp")) return ok();
        return failed("cordon-landlock: cannot open rule path: /tmp: x");
    });
    local_provider provider(options(runner, backend_choice::landlock));
    EXPECT_THROW((void)confine(provider, sandbox_mode::read_only), sandbox_unavailable_error);
    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].state, rung_state::unusable);
    EXPECT_THAT(reports[0].reason, HasSubstr("workspace-write"));
    EXPECT_THAT(reports[0].reason, HasSubstr("cannot open rule path: /tmp"));
}

// The probe workspace is made under /var/tmp, which no confined command can write, whatever
// TMPDIR says: a TMPDIR naming a directory that is gone (a closed session's private tmp) does not
// break probing, and a TMPDIR inside a workspace does not hand the probe's directory to a command.
TEST_F(LadderTest, ProbeWorkspaceIsUnderVarTmpWhateverTmpdirSays) {
    scoped_env tmpdir("TMPDIR", (dir_.path() / "gone").string());
    fs::path seen;
    scripted_runner runner([&seen](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) return probed(7);
        if (contains(wrapped.argv, "--bind-fd")) seen = after(wrapped.argv, "--bind-fd", 1);
        return ok();
    });
    local_provider provider(options(runner, backend_choice::bwrap));
    std::optional<rung_report> chosen;
    ASSERT_NO_THROW(chosen = provider.selected());
    ASSERT_TRUE(chosen.has_value()) << provider.probe_all()[0].reason;
    EXPECT_EQ(chosen->kind, backend_kind::bwrap);
    EXPECT_EQ(seen.parent_path(), fs::canonical("/var/tmp")) << seen;
    EXPECT_FALSE(fs::exists(dir_.path() / "gone"));
}

// cordon removes its probe workspace outside any sandbox. A command that swapped the directory
// for a symlink (or for a directory of its own) while the probe ran must not get a host directory
// removed: cleanup is rmdir relative to the base's descriptor, never a recursive removal by path.
TEST_F(LadderTest, ASwappedProbeWorkspaceNeverTakesAHostDirectoryWithIt) {
    const fs::path victim = dir_.path() / "victim";
    fs::create_directories(victim / "sub");
    std::ofstream(victim / "sub" / "keep") << "keep\n";
    fs::path seen;
    scripted_runner runner([&](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) return probed(7);
        if (contains(wrapped.argv, "--bind-fd") && seen.empty()) {
            seen = after(wrapped.argv, "--bind-fd", 1);
            std::error_code ec;
            fs::rename(seen, seen.string() + ".moved", ec);
            EXPECT_FALSE(ec) << ec.message();
            fs::create_directory_symlink(victim, seen, ec);
            EXPECT_FALSE(ec) << ec.message();
        }
        return ok();
    });
    local_provider provider(options(runner, backend_choice::bwrap));
    (void)provider.selected();
    ASSERT_FALSE(seen.empty());
    EXPECT_TRUE(fs::exists(victim / "sub" / "keep")) << "the probe's cleanup removed the victim";
    std::error_code ec;
    fs::remove(seen, ec);
    fs::remove(seen.string() + ".moved", ec);
}

// ---- probe_all ------------------------------------------------------------------------------

TEST_F(LadderTest, ProbeAllReportsEveryRungWithReasons) {
    scripted_runner runner([](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) {
            return failed(
                "cordon-landlock: landlock is disabled on this kernel (EOPNOTSUPP: add landlock "
                "to the lsm= boot parameter)");
        }
        return failed("bwrap: setting up uid map: Permission denied");
    });
    local_provider provider(options(runner));
    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 2u);

    EXPECT_EQ(reports[0].kind, backend_kind::bwrap);
    EXPECT_EQ(reports[0].runner, fake_bwrap_.string());
    EXPECT_EQ(reports[0].state, rung_state::unusable);
    EXPECT_THAT(reports[0].reason, HasSubstr("bwrap: setting up uid map: Permission denied"));

    EXPECT_EQ(reports[1].kind, backend_kind::landlock);
    EXPECT_EQ(reports[1].runner, launcher_.string());
    EXPECT_EQ(reports[1].state, rung_state::unusable);
    EXPECT_THAT(reports[1].reason, HasSubstr("cordon-landlock: landlock is disabled"));

    const std::size_t probed_runs = runner.count();
    auto again = provider.probe_all();
    EXPECT_EQ(runner.count(), probed_runs) << "each rung is probed at most once";
    ASSERT_EQ(again.size(), 2u);
    EXPECT_EQ(again[0].reason, reports[0].reason);
    EXPECT_EQ(again[1].reason, reports[1].reason);
}

TEST_F(LadderTest, ProbeAllAlsoProbesRungsBelowTheSelectedOne) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner));
    ASSERT_EQ(confine(provider, sandbox_mode::read_only).backend, backend_kind::bwrap);
    EXPECT_EQ(runner.count(), 3u);

    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 2u);
    EXPECT_EQ(reports[0].state, rung_state::usable);
    EXPECT_TRUE(reports[0].reason.empty());
    EXPECT_EQ(reports[1].state, rung_state::usable);
    EXPECT_EQ(reports[0].level, enforcement::full);
    EXPECT_EQ(reports[1].level, enforcement::partial);  // no pid namespace
    EXPECT_EQ(reports[1].landlock_abi, std::optional<int>(7));
    EXPECT_EQ(runner.count(), 5u) << "the launcher's --probe is shared by both rungs";
    // Diagnostics do not change the verdict.
    EXPECT_EQ(confine(provider, sandbox_mode::read_only).backend, backend_kind::bwrap);
    EXPECT_EQ(runner.count(), 5u);
}

TEST_F(LadderTest, UnopenableBwrapIsUnusableWithAReason) {
    scripted_runner runner(all_usable);
    local_provider_options opts = options(runner);
    opts.bwrap_path = "/nonexistent-cordon-dir/bwrap";
    local_provider provider(std::move(opts));

    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 2u);
    EXPECT_EQ(reports[0].kind, backend_kind::bwrap);
    EXPECT_EQ(reports[0].state, rung_state::unusable);
    EXPECT_THAT(reports[0].reason, HasSubstr("/nonexistent-cordon-dir/bwrap"));
    EXPECT_EQ(reports[1].state, rung_state::usable);

    // Nothing was spawned for the missing rung; selection fell through to the launcher.
    for (const auto& call : runner.calls())
        EXPECT_EQ(call.argv.front(), launcher_.string());
    auto chosen = provider.selected();
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(chosen->kind, backend_kind::landlock);
}

TEST_F(LadderTest, MissingLauncherIsUnusableWithoutAProbe) {
    scripted_runner runner(all_usable);
    local_provider_options opts = options(runner, backend_choice::landlock);
    opts.launcher_path = dir_.path() / "no-such-launcher";
    local_provider provider(std::move(opts));
    EXPECT_THROW((void)confine(provider, sandbox_mode::read_only), sandbox_unavailable_error);
    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].state, rung_state::unusable);
    EXPECT_THAT(reports[0].reason, HasSubstr("no-such-launcher"));
    EXPECT_EQ(runner.count(), 0u);
}

TEST_F(LadderTest, ExplicitSeatbeltOnLinuxWithoutSandboxExecFailsClosed) {
    scripted_runner runner(all_usable);
    local_provider_options opts = options(runner, backend_choice::seatbelt);
    opts.sandbox_exec_path = dir_.path() / "no-sandbox-exec";
    local_provider provider(std::move(opts));
    EXPECT_THROW((void)confine(provider, sandbox_mode::read_only), sandbox_unavailable_error);
    EXPECT_EQ(runner.count(), 0u);
}

// ---- where runners come from ----------------------------------------------------------------

TEST(TrustedExecutable, FindsARootOwnedRunnerOnPath) {
    const fs::path sh = find_trusted_executable("sh");
    ASSERT_FALSE(sh.empty());
    EXPECT_TRUE(sh.is_absolute());
    EXPECT_EQ(sh, fs::canonical(sh)) << "the path is canonical";
    EXPECT_EQ(untrusted_because(sh), "");
}

// An active virtualenv's bin/, a build tree, anything under the world-writable /var/tmp: a
// confined command could have planted the runner there.
TEST(TrustedExecutable, SkipsACandidateInADirectorySomeoneElseCanWrite) {
    scratch_dir dir;
    fs::create_directories(dir.path() / ".venv" / "bin");
    const std::string name = "cordon-fake-runner-" + std::to_string(::getpid());
    make_executable(dir.path() / ".venv" / "bin" / name);
    scoped_env path("PATH", (dir.path() / ".venv" / "bin").string() + ":/usr/bin");
    std::string skipped;
    EXPECT_TRUE(find_trusted_executable(name, &skipped).empty());
    EXPECT_THAT(skipped, HasSubstr(name));
    EXPECT_THAT(skipped, HasSubstr("not in a directory runners are taken from"));
    // A real runner later on PATH is still found.
    scoped_env with_sh("PATH", (dir.path() / ".venv" / "bin").string() + ":/usr/bin:/bin");
    EXPECT_FALSE(find_trusted_executable("sh").empty());
}

// A PATH entry is matched by the directory it names, so a symlink to a trusted directory puts
// that directory first, and what is found is spelled canonically, never through the link.
TEST(TrustedExecutable, AnEntryLinkingToATrustedDirectoryOrdersThatDirectory) {
    scratch_dir dir;
    fs::create_directory_symlink("/usr/bin", dir.path() / "bin-link");
    scoped_env path("PATH", (dir.path() / "bin-link").string());
    const fs::path sh = find_trusted_executable("sh");
    EXPECT_EQ(sh, fs::canonical("/usr/bin/sh"));
    // The same for a link to a directory nobody trusts: it is passed over, whatever it holds.
    fs::create_directories(dir.path() / "other");
    make_executable(dir.path() / "other" / "cordon-runner-only-there");
    fs::create_directory_symlink(dir.path() / "other", dir.path() / "other-link");
    scoped_env other("PATH", (dir.path() / "other-link").string() + ":/usr/bin");
    std::string skipped;
    EXPECT_TRUE(find_trusted_executable("cordon-runner-only-there", &skipped).empty());
    EXPECT_THAT(skipped, HasSubstr("not in a directory runners are taken from"));
}

TEST(TrustedExecutable, SkipsRelativeAndEmptyEntries) {
    scratch_dir dir;
    fs::create_directories(dir.path() / "rel");
    const std::string name = "cordon-runner-only-here";
    make_executable(dir.path() / "rel" / name);
    make_executable(dir.path() / name);  // what an empty entry (the cwd) would find
    scoped_cwd cwd(dir.path());
    for (const char* list : {"rel", "./rel", "rel:", ":rel", "", ":", "::", "."}) {
        scoped_env path("PATH", list);
        EXPECT_TRUE(find_trusted_executable(name).empty()) << "PATH=\"" << list << "\"";
    }
}

TEST(TrustedExecutable, UntrustedBecauseNamesTheFlaw) {
    scratch_dir dir;
    const fs::path file = dir.path() / "runner";
    make_executable(file);
    fs::permissions(dir.path(), fs::perms::group_write, fs::perm_options::add);
    EXPECT_THAT(untrusted_because(file), HasSubstr("writable by group or others"));
    EXPECT_THAT(untrusted_because(dir.path() / "missing"), HasSubstr("No such file"));
    EXPECT_THAT(untrusted_because("/usr/bin"), HasSubstr("not a regular file"));
    if (::geteuid() == 0) {
        ASSERT_EQ(::chown(file.c_str(), 65534, 65534), 0);
        EXPECT_THAT(untrusted_because(file), HasSubstr("owned by uid 65534"));
    }
}

// A directory anyone may write but whose sticky bit keeps others' entries in place (/tmp,
// /var/tmp) may lie above a runner, not hold it: a file there could be a hard link to anything.
TEST(TrustedExecutable, AStickyDirectoryMayLieAboveARunnerButNotHoldIt) {
    scratch_dir dir;
    const uid_t self = ::geteuid();
    for (const char* name : {"sticky", "open"}) {
        fs::create_directories(dir.path() / name / "sub");
        make_executable(dir.path() / name / "runner");
        make_executable(dir.path() / name / "sub" / "runner");
    }
    ASSERT_EQ(::chmod((dir.path() / "sticky").c_str(), 01777), 0);
    ASSERT_EQ(::chmod((dir.path() / "open").c_str(), 0777), 0);
    EXPECT_EQ(untrusted_because(dir.path() / "sticky" / "sub" / "runner", self), "");
    EXPECT_THAT(untrusted_because(dir.path() / "sticky" / "runner", self),
                HasSubstr("sticky is writable by group or others"));
    EXPECT_THAT(untrusted_because(dir.path() / "open" / "sub" / "runner", self),
                HasSubstr("open is writable by group or others"));
}

// ---- where the launcher comes from -----------------------------------------------------------

TEST(LauncherLookup, BesideTheProgramThenItsLibexecThenTheConfiguredOne) {
    EXPECT_THAT(
        launcher_candidates("/opt/agent/bin/agent", "../libexec/cordon", "/usr/libexec/cordon"),
        ElementsAre("/opt/agent/bin/cordon-landlock", "/opt/agent/libexec/cordon/cordon-landlock",
                    "/usr/libexec/cordon/cordon-landlock"));
    // An installed cordon: its own libexec is the configured one, looked at once.
    EXPECT_THAT(launcher_candidates("/usr/bin/cordon", "../libexec/cordon", "/usr/libexec/cordon"),
                ElementsAre("/usr/bin/cordon-landlock", "/usr/libexec/cordon/cordon-landlock"));
    // A relative "absolute" directory is no place to look (it would depend on the cwd).
    EXPECT_THAT(launcher_candidates("/opt/bin/cordon", "", "libexec/cordon"),
                ElementsAre("/opt/bin/cordon-landlock"));
}

// A program linked with libcordon.so: after its own directory, the libexec of the prefix the
// library was installed to (moved or not), before the configured one.
TEST(LauncherLookup, ASharedLibraryLooksInItsOwnPrefixBeforeTheConfiguredOne) {
    EXPECT_THAT(
        launcher_candidates("/opt/agent/bin/agent", "../libexec/cordon", "/usr/libexec/cordon",
                            "/srv/cordon/lib/libcordon.so.0.1", "../libexec/cordon"),
        ElementsAre("/opt/agent/bin/cordon-landlock", "/opt/agent/libexec/cordon/cordon-landlock",
                    "/srv/cordon/libexec/cordon/cordon-landlock",
                    "/usr/libexec/cordon/cordon-landlock"));
    // A multiarch libdir is one level deeper; the library's own prefix is still the one found.
    EXPECT_THAT(
        launcher_candidates("/usr/bin/agent", "../libexec/cordon", "/usr/libexec/cordon",
                            "/usr/lib/x86_64-linux-gnu/libcordon.so.0.1", "../../libexec/cordon"),
        ElementsAre("/usr/bin/cordon-landlock", "/usr/libexec/cordon/cordon-landlock"));
    // No library (a static program), or no relative path: nothing more.
    EXPECT_THAT(
        launcher_candidates("/opt/bin/agent", "", "/usr/libexec/cordon", "", "../libexec/cordon"),
        ElementsAre("/opt/bin/cordon-landlock", "/usr/libexec/cordon/cordon-landlock"));
}

// A program that links the static library, built with find_package(cordon): the libexec of the
// prefix it was built against (CORDON_INSTALLED_LIBEXEC_DIR), installed or moved anywhere,
// before the configured one; a relative one is no place to look.
TEST(LauncherLookup, AStaticProgramLooksInThePrefixItWasBuiltAgainst) {
    EXPECT_THAT(
        launcher_candidates("/opt/agent/bin/agent", "", "/usr/local/libexec/cordon", "", "",
                            "/srv/moved/libexec/cordon"),
        ElementsAre("/opt/agent/bin/cordon-landlock", "/srv/moved/libexec/cordon/cordon-landlock",
                    "/usr/local/libexec/cordon/cordon-landlock"));
    EXPECT_THAT(
        launcher_candidates("/opt/agent/bin/agent", "", "/usr/local/libexec/cordon", "", "",
                            "libexec/cordon"),
        ElementsAre("/opt/agent/bin/cordon-landlock", "/usr/local/libexec/cordon/cordon-landlock"));
}

TEST(LauncherLookup, ThisProcessLooksBesideItselfFirstAndNeverOnPath) {
    scoped_env path("PATH", "/nonexistent-cordon-bin");
    const std::vector<fs::path> candidates = launcher_candidates();
    ASSERT_GE(candidates.size(), 2u);
    EXPECT_EQ(candidates.front(),
              fs::canonical("/proc/self/exe").parent_path() / "cordon-landlock");
    for (const fs::path& candidate : candidates) {
        EXPECT_TRUE(candidate.is_absolute()) << candidate;
        EXPECT_EQ(candidate.filename(), "cordon-landlock");
        EXPECT_THAT(candidate.string(), Not(HasSubstr("nonexistent-cordon-bin")));
    }
    EXPECT_EQ(candidates.back().parent_path().filename(), "cordon");
}

// The layout of an installed prefix, under a scratch directory: bin/ without the launcher, and
// libexec/cordon/ with it.
class LauncherLookupTest : public ::testing::Test {
protected:
    LauncherLookupTest() {
        fs::create_directories(dir_.path() / "bin");
        fs::create_directories(libexec_);
    }

    scratch_dir dir_;
    fs::path beside_ = dir_.path() / "bin" / "cordon-landlock";
    fs::path libexec_ = dir_.path() / "libexec" / "cordon";
    fs::path installed_ = libexec_ / "cordon-landlock";
};

TEST_F(LauncherLookupTest, TakesTheFirstThatExistsAndRemembersWhereItLookedBefore) {
    make_executable(installed_);
    const std::vector<fs::path> candidates{beside_, installed_};
    launcher_lookup found = find_launcher(candidates);
    EXPECT_EQ(found.path, installed_);
    EXPECT_EQ(found.refused, "");
    EXPECT_THAT(found.passed_over, ElementsAre(beside_));

    make_executable(beside_);
    found = find_launcher(candidates);
    EXPECT_EQ(found.path, beside_);
    EXPECT_THAT(found.passed_over, IsEmpty());
}

TEST_F(LauncherLookupTest, AnUntrustedLauncherIsRefusedNotPassedOverForTheNext) {
    make_executable(beside_);
    make_executable(installed_);
    fs::permissions(beside_, fs::perms::group_write, fs::perm_options::add);
    const std::vector<fs::path> candidates{beside_, installed_};
    const launcher_lookup found = find_launcher(candidates);
    EXPECT_EQ(found.path, beside_);
    EXPECT_THAT(found.refused, HasSubstr("cordon-landlock at " + beside_.string() + " is refused"));
    EXPECT_THAT(found.refused, HasSubstr("writable by group or others"));
}

TEST_F(LauncherLookupTest, ALinkOthersCouldReplaceIsRefused) {
    make_executable(installed_);
    const fs::path links = dir_.path() / "links";
    fs::create_directory(links);
    fs::create_symlink(installed_, links / "cordon-landlock");
    const std::vector<fs::path> candidates{links / "cordon-landlock"};
    launcher_lookup found = find_launcher(candidates);
    EXPECT_EQ(found.path, installed_) << "the link is followed";
    EXPECT_EQ(found.refused, "");

    fs::permissions(links, fs::perms::group_write, fs::perm_options::add);
    found = find_launcher(candidates);
    EXPECT_THAT(found.refused,
                HasSubstr("the symbolic link " + (links / "cordon-landlock").string() +
                          " could be replaced"));
}

// A link on the way that points to nothing hides where a launcher would appear: whoever may create
// its target would choose the launcher, and that place cannot be protected. Refused, never
// passed over for the next candidate.
TEST_F(LauncherLookupTest, ALinkOnTheWayThatPointsToNothingIsRefused) {
    make_executable(installed_);
    const fs::path elsewhere = dir_.path() / "elsewhere";
    fs::create_directory_symlink(dir_.path() / "gone", elsewhere);
    const fs::path planted = elsewhere / "cordon" / "cordon-landlock";
    const std::vector<fs::path> candidates{planted, installed_};
    launcher_lookup found = find_launcher(candidates);
    EXPECT_EQ(found.path, planted);
    EXPECT_THAT(found.refused, HasSubstr("the symbolic link " + elsewhere.string() +
                                         " on the way points to nothing"));
    EXPECT_THAT(found.links, ElementsAre(elsewhere));

    // Once it points to a directory, the candidate is passed over like any missing one, and
    // the link is still among what is protected.
    fs::create_directory(dir_.path() / "gone");
    found = find_launcher(candidates);
    EXPECT_EQ(found.path, installed_);
    EXPECT_EQ(found.refused, "");
    EXPECT_THAT(found.passed_over, ElementsAre(planted));
    EXPECT_THAT(found.links, ElementsAre(elsewhere));
}

// A relative candidate is looked for only in a prefix whose root nobody else may write: an agent
// built in /tmp/agent/bin would otherwise look in /tmp/libexec, where any user can put a file.
TEST_F(LauncherLookupTest, APrefixOthersMayWriteIsNoPlaceToLook) {
    EXPECT_FALSE(prefix_open_to_others(dir_.path() / "bin", "../libexec/cordon"));
    const fs::path shared = dir_.path() / "shared";
    fs::create_directories(shared / "agent" / "bin");
    fs::permissions(shared, fs::perms::all | fs::perms::sticky_bit);
    EXPECT_TRUE(prefix_open_to_others(shared / "agent" / "bin", "../../libexec/cordon"));
    EXPECT_FALSE(prefix_open_to_others(shared / "agent" / "bin", "../libexec/cordon"));
    EXPECT_TRUE(prefix_open_to_others(dir_.path() / "missing" / "bin", "../libexec/cordon"));
    EXPECT_TRUE(prefix_open_to_others("/tmp/agent", "../libexec/cordon"));
}

// Whether a relative candidate counts depends on the modes of directories a run's own user may
// change (chmod from inside a Landlock run): every place this process could look is protected,
// the ones left out today included, and the found launcher's later ones too.
TEST(LauncherLookup, ThisProcessProtectsEveryPlaceItCouldLook) {
    const std::vector<fs::path> places = launcher_places();
    const fs::path program = fs::canonical("/proc/self/exe");
    EXPECT_THAT(places,
                Contains((program.parent_path() / CORDON_LAUNCHER_RELATIVE_DIR / "cordon-landlock")
                             .lexically_normal()))
        << "the relative place, whatever the prefix root's mode";
    for (const fs::path& candidate : launcher_candidates()) {
        EXPECT_THAT(places, Contains(candidate));
    }
}

TEST_F(LauncherLookupTest, NoneFoundSaysWhereItLooked) {
    const std::vector<fs::path> candidates{beside_, installed_};
    const launcher_lookup found = find_launcher(candidates);
    EXPECT_TRUE(found.path.empty());
    EXPECT_EQ(found.refused, "cordon-landlock not found (looked for " + beside_.string() + ", " +
                                 installed_.string() + ")");
}

// ---- contract violations and concurrency ----------------------------------------------------

TEST_F(LadderTest, DangerFullAccessIntoConfineThrowsInvalidArgument) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner));
    EXPECT_THROW((void)confine(provider, sandbox_mode::danger_full_access), std::invalid_argument);
    EXPECT_EQ(runner.count(), 0u) << "a contract violation must not trigger probing";
    // Also after a verdict exists.
    (void)confine(provider, sandbox_mode::read_only);
    EXPECT_THROW((void)confine(provider, sandbox_mode::danger_full_access), std::invalid_argument);
}

TEST_F(LadderTest, EmptyArgvOrRelativeWorkspaceIntoConfineThrowsInvalidArgument) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner));
    EXPECT_THROW((void)provider.confine(strings{}, policy(sandbox_mode::read_only), dir_.path()),
                 std::invalid_argument);
    EXPECT_THROW((void)provider.confine(command_, {sandbox_mode::read_only, "rel/ws"}, "/"),
                 std::invalid_argument);
}

TEST_F(LadderTest, ConcurrentConfinesOnAFreshProviderProbeExactlyOnce) {
    // Each probe takes a while, so that all eight threads arrive while the first is probing.
    scripted_runner runner(all_usable, std::chrono::milliseconds(100));
    local_provider provider(options(runner));
    constexpr int threads = 8;
    std::latch start(threads);
    std::vector<std::optional<confined_argv>> results(threads);
    std::vector<std::string> errors(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            start.arrive_and_wait();
            try {
                auto mode = t % 2 == 0 ? sandbox_mode::read_only : sandbox_mode::workspace_write;
                results[static_cast<std::size_t>(t)] = confine(provider, mode);
            } catch (const std::exception& error) {
                errors[static_cast<std::size_t>(t)] = error.what();
            }
        });
    }
    for (auto& thread : pool)
        thread.join();

    for (int t = 0; t < threads; ++t) {
        const auto i = static_cast<std::size_t>(t);
        EXPECT_TRUE(errors[i].empty()) << errors[i];
        ASSERT_TRUE(results[i].has_value());
        EXPECT_EQ(results[i]->backend, backend_kind::bwrap);
    }
    EXPECT_EQ(runner.count(), 3u) << "one probe sequence (--probe, bwrap RO + WW), not one per "
                                     "thread";
    EXPECT_EQ(runner.max_in_flight(), 1);
}

// ---- what a workspace-write run may not be able to write ------------------------------------

// With tmp = host a workspace-write profile writes the host's /tmp, so a runner under /tmp is
// refused, whichever rung was selected: the next process would load it from disk. A private /tmp
// (bwrap's tmpfs, the Landlock rung's own directory) and no /tmp do not expose it.
TEST_F(LadderTest, ARunnerUnderTmpFailsClosedWhenTheHostsTmpIsWritable) {
    cordon::test::temp_dir under_tmp("/tmp", "cordon-ladder-runner-");
    for (auto choice : {backend_choice::bwrap, backend_choice::landlock}) {
        for (auto tmp : {tmp_policy::private_tmp, tmp_policy::host, tmp_policy::none}) {
            SCOPED_TRACE(std::string(to_string(choice)) + " tmp " + std::string(to_string(tmp)));
            scripted_runner runner(all_usable);
            auto opts = options(runner, choice);
            opts.launcher_path = under_tmp / "cordon-landlock";
            make_executable(opts.launcher_path);
            local_provider provider(opts);
            EXPECT_NO_THROW((void)confine(provider, sandbox_mode::read_only));
            sandbox_policy ww = policy(sandbox_mode::workspace_write);
            ww.rules.tmp = tmp;
            if (tmp == tmp_policy::host) {
                EXPECT_THROW((void)provider.confine(command_, ww, ww.workspace_root),
                             sandbox_unavailable_error);
            } else {
                EXPECT_NO_THROW((void)provider.confine(command_, ww, ww.workspace_root));
            }
        }
    }
}

// A workspace-write command could rewrite a runner inside its workspace (the one this run uses
// or the other rung's), and the next process would load the rewritten file: such a call fails
// closed. Read-only calls write nothing.
TEST_F(LadderTest, AnyRunnerInsideTheWritableWorkspaceFailsClosed) {
    for (auto choice : {backend_choice::bwrap, backend_choice::landlock}) {
        for (const fs::path& runner_dir : {dir_.path() / "bwrap-dir", dir_.path() / "ll-dir"}) {
            fs::create_directories(runner_dir);
            scripted_runner runner(all_usable);
            auto opts = options(runner, choice);
            // One of the two runners (not necessarily the selected rung's) sits in runner_dir.
            if (runner_dir.filename() == "bwrap-dir") {
                opts.bwrap_path = runner_dir / "bwrap";
                make_executable(opts.bwrap_path);
            } else {
                opts.launcher_path = runner_dir / "cordon-landlock";
                make_executable(opts.launcher_path);
            }
            local_provider provider(opts);
            for (const fs::path& root : {runner_dir, dir_.path()}) {
                try {
                    (void)provider.confine(command_, {sandbox_mode::workspace_write, root}, root);
                    ADD_FAILURE() << "expected sandbox_unavailable_error for " << to_string(choice)
                                  << " with workspace " << root;
                } catch (const sandbox_unavailable_error& error) {
                    EXPECT_THAT(error.what(), HasSubstr("lies inside " + root.string()));
                }
                EXPECT_NO_THROW(
                    (void)provider.confine(command_, {sandbox_mode::read_only, root}, root));
            }
            EXPECT_NO_THROW((void)confine(provider, sandbox_mode::workspace_write));
        }
    }
}

// Without a launcher path the provider looks for one: the one it finds is the Landlock rung's
// runner, and a workspace-write run is refused when its workspace holds the launcher or a place
// looked at before it (a launcher planted there would be the next process's).
TEST_F(LadderTest, TheLauncherFoundAndWhereItWasLookedForFirstAreProtected) {
    const fs::path first = dir_.path() / "bin" / "cordon-landlock";
    const fs::path found = dir_.path() / "libexec" / "cordon" / "cordon-landlock";
    fs::create_directories(first.parent_path());
    fs::create_directories(found.parent_path());
    make_executable(found);
    scripted_runner runner(all_usable);
    auto opts = options(runner, backend_choice::landlock);
    opts.launcher_path.clear();
    opts.launcher_candidates = {first, found};
    local_provider provider(opts);
    EXPECT_EQ(confine(provider, sandbox_mode::read_only).argv.front(), found.string());
    EXPECT_NO_THROW((void)confine(provider, sandbox_mode::workspace_write));
    for (const auto& [root, says] :
         {std::pair{dir_.path() / "libexec", found.string() + " lies inside"},
          std::pair{dir_.path() / "bin", first.string() + " lies inside"}}) {
        try {
            (void)provider.confine(command_, {sandbox_mode::workspace_write, root}, root);
            ADD_FAILURE() << "expected sandbox_unavailable_error with workspace " << root;
        } catch (const sandbox_unavailable_error& error) {
            EXPECT_THAT(error.what(), HasSubstr(says));
        }
    }
}

// A link on the way to the launcher is protected with it: a workspace-write command that could
// point it elsewhere would choose the next process's launcher.
TEST_F(LadderTest, ALinkOnTheWayToTheLauncherIsProtected) {
    const fs::path found = dir_.path() / "real" / "cordon" / "cordon-landlock";
    fs::create_directories(found.parent_path());
    make_executable(found);
    const fs::path prefix = dir_.path() / "prefix";
    fs::create_directories(prefix / "libexec");
    fs::create_directory_symlink(found.parent_path(), prefix / "libexec" / "cordon");
    scripted_runner runner(all_usable);
    auto opts = options(runner, backend_choice::landlock);
    opts.launcher_path.clear();
    opts.launcher_candidates = {prefix / "libexec" / "cordon" / "cordon-landlock"};
    local_provider provider(opts);
    EXPECT_EQ(confine(provider, sandbox_mode::read_only).argv.front(), found.string());
    const fs::path root = prefix / "libexec";
    try {
        (void)provider.confine(command_, {sandbox_mode::workspace_write, root}, root);
        ADD_FAILURE() << "a workspace holding the link to the launcher was accepted";
    } catch (const sandbox_unavailable_error& error) {
        EXPECT_THAT(error.what(), HasSubstr((root / "cordon").string() + " lies inside"));
    }
}

// The reproduction of a break: a workspace-write run in a prefix's libexec plants a launcher where
// the next cordon would look once the run has changed which candidate counts (it closed a
// prefix root, or made the launcher it used fail the trust check). Every place is protected:
// before the launcher found and after it.
TEST_F(LadderTest, EveryPlaceTheLauncherIsLookedForIsProtected) {
    const fs::path first = dir_.path() / "bin" / "cordon-landlock";
    const fs::path found = dir_.path() / "found" / "cordon" / "cordon-landlock";
    const fs::path later = dir_.path() / "later" / "cordon" / "cordon-landlock";
    fs::create_directories(first.parent_path());
    fs::create_directories(found.parent_path());
    fs::create_directories(later.parent_path());
    make_executable(found);
    scripted_runner runner(all_usable);
    auto opts = options(runner, backend_choice::landlock);
    opts.launcher_path.clear();
    opts.launcher_candidates = {first, found, later};
    local_provider provider(opts);
    EXPECT_EQ(confine(provider, sandbox_mode::read_only).argv.front(), found.string());
    for (const fs::path& root : {dir_.path() / "bin", dir_.path() / "later"}) {
        try {
            (void)provider.confine(command_, {sandbox_mode::workspace_write, root}, root);
            ADD_FAILURE() << "a workspace holding a place the launcher is looked for: " << root;
        } catch (const sandbox_unavailable_error& error) {
            EXPECT_THAT(error.what(), HasSubstr(" lies inside")) << root;
        }
    }
}

// A launcher that fails the trust check is the reason both Linux rungs are unusable: the
// provider never runs it, nor falls back to one looked at later.
TEST_F(LadderTest, AnUntrustedLauncherMakesBothRungsUnusableAndSaysWhy) {
    const fs::path first = dir_.path() / "bin" / "cordon-landlock";
    const fs::path later = dir_.path() / "libexec" / "cordon-landlock";
    fs::create_directories(first.parent_path());
    fs::create_directories(later.parent_path());
    make_executable(first);
    make_executable(later);
    fs::permissions(first.parent_path(), fs::perms::others_write, fs::perm_options::add);
    scripted_runner runner(all_usable);
    auto opts = options(runner);
    opts.launcher_path.clear();
    opts.launcher_candidates = {first, later};
    local_provider provider(opts);
    EXPECT_THROW((void)confine(provider, sandbox_mode::read_only), sandbox_unavailable_error);
    const auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 2u);
    for (const auto& report : reports) {
        EXPECT_EQ(report.state, rung_state::unusable);
        EXPECT_THAT(report.reason, HasSubstr("cordon-landlock at " + first.string() +
                                             " is refused: " + first.parent_path().string() +
                                             " is writable by group or others"));
    }
    EXPECT_EQ(reports[1].runner, first.string());
    EXPECT_EQ(runner.count(), 0u);
}

// The process's cgroup watchdog is the launcher of the default lookup
// (runtime/cgroup_watchdog.hpp), started outside any sandbox: its places are protected by a
// provider given a launcher of its own too, or a run could plant the next process's watchdog there.
TEST_F(LadderTest, TheDefaultLaunchersPlacesAreProtectedWhateverLauncherTheProviderRuns) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner, backend_choice::bwrap));
    auto set = provider.protected_set();
    ASSERT_TRUE(std::holds_alternative<protected_paths>(set)) << std::get<std::string>(set);
    std::vector<fs::path> paths;
    for (const auto& entry : std::get<protected_paths>(set))
        paths.push_back(entry.path);
    const std::vector<fs::path> places = launcher_places();
    ASSERT_FALSE(places.empty());
    for (const fs::path& place : places) {
        EXPECT_THAT(paths, ::testing::Contains(fs::weakly_canonical(place))) << place;
    }
}

// What runs unconfined later includes cordon itself and what every runner loads.
TEST_F(LadderTest, CordonItselfAndWhatTheRunnersLoadAreProtected) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner, backend_choice::bwrap));
    auto set = provider.protected_set();
    ASSERT_TRUE(std::holds_alternative<protected_paths>(set)) << std::get<std::string>(set);
    const protected_paths& closure = std::get<protected_paths>(set);
    std::vector<fs::path> paths;
    for (const auto& entry : closure)
        paths.push_back(entry.path);
    const fs::path self = fs::canonical("/proc/self/exe");
    EXPECT_THAT(paths, ::testing::Contains(self));
    EXPECT_THAT(paths, ::testing::Contains(fs::canonical(fake_bwrap_)));
    EXPECT_THAT(paths, ::testing::Contains(fs::canonical(launcher_)));
    for (const char* root : {"/", "/usr", "/etc", "/usr/lib"}) {
        try {
            (void)provider.confine(command_, {sandbox_mode::workspace_write, root}, root);
            ADD_FAILURE() << "a workspace of " << root << " must be refused";
        } catch (const sandbox_unavailable_error& error) {
            EXPECT_THAT(error.what(), HasSubstr("refusing a workspace-write workspace"));
        }
    }
    try {
        (void)provider.confine(command_, {sandbox_mode::workspace_write, self.parent_path()},
                               self.parent_path());
        ADD_FAILURE() << "a workspace holding cordon itself must be refused";
    } catch (const sandbox_unavailable_error& error) {
        EXPECT_THAT(error.what(), HasSubstr(self.parent_path().string()));
    }
}

// Pseudo filesystems are never a workspace: a "write" there reaches sysctls, other processes,
// cgroup membership, devices or cordon's own liveness locks.
TEST_F(LadderTest, PseudoFilesystemWorkspacesAreRefusedForEveryBackend) {
    for (auto choice : {backend_choice::bwrap, backend_choice::landlock}) {
        scripted_runner runner(all_usable);
        local_provider provider(options(runner, choice));
        for (const char* root : {"/proc", "/proc/sys", "/sys", "/sys/fs/cgroup", "/dev", "/dev/shm",
                                 "/dev/pts", "/"}) {
            SCOPED_TRACE(std::string(to_string(choice)) + " " + root);
            const sandbox_policy ww{sandbox_mode::workspace_write, root};
            auto refused = provider.refusal(ww, {});
            ASSERT_TRUE(refused.has_value());
            EXPECT_THAT(*refused, HasSubstr("refusing a workspace-write workspace"));
            EXPECT_THROW((void)provider.confine(command_, ww, root), sandbox_unavailable_error);
            EXPECT_FALSE(provider.refusal({sandbox_mode::read_only, root}, {}).has_value());
        }
        EXPECT_FALSE(provider.refusal(policy(sandbox_mode::workspace_write), {}).has_value());
    }
}

TEST_F(LadderTest, ADirectoryRunnersAreTakenFromIsProtected) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner));
    for (const fs::path& dir : trusted_directories()) {
        SCOPED_TRACE(dir.string());
        auto refused = provider.refusal({sandbox_mode::workspace_write, dir}, {});
        ASSERT_TRUE(refused.has_value());
        EXPECT_THAT(*refused, HasSubstr(" lies inside " + dir.string()));
    }
}

TEST_F(LadderTest, TheCallersOwnProtectedPathsAreRefusedToo) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner));
    const fs::path ws = policy(sandbox_mode::workspace_write).workspace_root;
    fs::create_directories(ws / "inner");
    const fs::path records = ws / "records" / "cordon-spill-*";
    const std::vector<fs::path> mine{records};
    auto refused = provider.refusal({sandbox_mode::workspace_write, ws}, mine);
    ASSERT_TRUE(refused.has_value());
    EXPECT_THAT(*refused, HasSubstr(records.string() + " lies inside " + ws.string()));
    EXPECT_FALSE(provider.refusal({sandbox_mode::workspace_write, ws / "inner"}, mine).has_value());
}

TEST_F(LadderTest, AWorkspaceGivenThroughASymlinkIsRefused) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner));
    fs::create_directory_symlink(dir_.path() / "ws", dir_.path() / "ws-link");
    auto refused = provider.refusal({sandbox_mode::workspace_write, dir_.path() / "ws-link"}, {});
    ASSERT_TRUE(refused.has_value());
    EXPECT_THAT(*refused, HasSubstr("give the real path"));
}

// What ldconfig will search next (any package install runs it) is as good as a library directory
// already: a library planted there would be loaded by the runners, unconfined, as root.
TEST(LoaderConfiguration, EveryDirectoryItNamesIsFoundIncludesAndOldSyntaxToo) {
    scratch_dir dir;
    fs::create_directories(dir.path() / "conf.d");
    std::ofstream(dir.path() / "ld.so.conf")
        << "# comment\ninclude " << (dir / "conf.d").string() << "/*.conf\n/opt/one\n\n";
    std::ofstream(dir.path() / "conf.d" / "a.conf") << "/opt/two=libc6 /opt/three # trailing\n"
                                                       "relative/ignored\ninclude b.inc\n";
    std::ofstream(dir.path() / "conf.d" / "b.inc") << "/opt/four,/opt/five\n";
    std::ofstream(dir.path() / "conf.d" / "loop.conf")
        << "include " << (dir / "ld.so.conf").string() << "\n";
    const auto found = loader_configuration_directories(dir.path() / "ld.so.conf");
    for (const char* expected : {"/opt/one", "/opt/two", "/opt/three", "/opt/four", "/opt/five"}) {
        EXPECT_THAT(found, ::testing::Contains(fs::path(expected))) << expected;
    }
    EXPECT_THAT(found, Not(::testing::Contains(fs::path("relative/ignored"))));
}

// The workspace is opened once without following a symlink: a path that is not canonical by the
// time the provider opens it is refused, never resolved to somewhere else.
TEST_F(LadderTest, AWorkspaceThatIsNotWhatItsPathSaysIsRefused) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner));
    fs::create_directories(dir_.path() / "real");
    fs::create_directory_symlink(dir_.path() / "real", dir_.path() / "link");
    const fs::path through_link = dir_.path() / "link";
    try {
        (void)provider.confine(command_, {sandbox_mode::workspace_write, through_link},
                               through_link);
        ADD_FAILURE() << "a workspace path through a symlink must be refused";
    } catch (const sandbox_unavailable_error& error) {
        EXPECT_THAT(error.what(), HasSubstr("give the real path"));
    }
}

}  // namespace
}  // namespace cordon::sandbox
