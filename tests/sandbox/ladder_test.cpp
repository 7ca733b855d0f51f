// The local provider's backend ladder, driven by a scripted probe runner: which rungs are probed,
// how often, in which order, what a failing rung falls through to, and that every unavailable
// verdict fails closed. Nothing here spawns a process; the real runners are in
// real_runners_test.cpp.
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
#include <vector>

#include "sandbox/backends.hpp"
#include "sandbox/errors.hpp"
#include "sandbox/local_provider.hpp"
#include "sandbox/policy.hpp"
#include "support.hpp"

namespace cordon::sandbox {
namespace {

namespace fs = std::filesystem;
using scratch_dir = cordon::test::temp_dir;
using cordon::test::scoped_env;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using strings = std::vector<std::string>;

constexpr const char* fake_bwrap = "/fake/bin/bwrap";

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

probe_run_result ok(std::string stdout_text = {}) {
    probe_run_result r;
    r.exit_code = 0;
    r.stdout_text = std::move(stdout_text);
    return r;
}

probe_run_result failed(int code, std::string stderr_text) {
    probe_run_result r;
    r.exit_code = code;
    r.stderr_text = std::move(stderr_text);
    return r;
}

bool contains(const strings& argv, const std::string& item) {
    return std::find(argv.begin(), argv.end(), item) != argv.end();
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
    return wrapped.argv.size() == 2 && wrapped.argv[1] == "--probe";
}

class LadderTest : public ::testing::Test {
protected:
    LadderTest() : launcher_(dir_.path() / "cordon-landlock") {
        make_executable(launcher_);
        fs::create_directory(dir_.path() / "ws");
    }

    [[nodiscard]] local_provider_options options(const scripted_runner& runner,
                                                 backend_choice choice = backend_choice::automatic,
                                                 platform host = platform::linux_) const {
        local_provider_options out;
        out.choice = choice;
        out.host = host;
        out.bwrap_path = fake_bwrap;
        out.launcher_path = launcher_;
        out.probe_timeout = std::chrono::milliseconds(1234);
        out.run_probe = runner.runner();
        return out;
    }

    // The workspace sits beside the runners, not around them (see RunnerInsideTheWorkspace...).
    [[nodiscard]] sandbox_policy policy(sandbox_mode mode) const {
        return {mode, dir_.path() / "ws"};
    }

    scratch_dir dir_;
    fs::path launcher_;
    const strings command_{"bash", "-c", "true"};
};

// Each backend works; the launcher reports full enforcement at ABI 7.
probe_run_result all_usable(const confined_argv& wrapped) {
    if (is_launcher_probe(wrapped)) return ok("landlock: fully enforced\nabi: 7\n");
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
            confined_argv out = provider.confine(command_, policy(mode));
            EXPECT_EQ(out.backend, backend_kind::bwrap);
            EXPECT_EQ(out.argv.front(), fake_bwrap);
            EXPECT_EQ(out.argv, bwrap_confine(fake_bwrap, command_, policy(mode)).argv);
        }
    }
    // bwrap is the first rung and usable: its two functional profile runs, nothing else.
    const auto calls = runner.calls();
    ASSERT_EQ(calls.size(), 2u);
    for (const auto& call : calls) {
        EXPECT_EQ(call.argv.front(), fake_bwrap);
        EXPECT_EQ(call.argv.back(), "true");  // the probe really confines `true`
        ASSERT_TRUE(call.status.has_value()) << "the probe must run with the status channel";
        EXPECT_EQ(call.status->kind, status_channel::protocol::bwrap_json);
    }
    EXPECT_FALSE(contains(calls[0].argv, "--tmpfs")) << "first the read-only profile";
    EXPECT_TRUE(contains(calls[1].argv, "--tmpfs")) << "then the workspace-write profile";
    EXPECT_TRUE(contains(calls[1].argv, "--bind"));
    for (auto timeout : runner.timeouts())
        EXPECT_EQ(timeout, std::chrono::milliseconds(1234));

    auto chosen = provider.selected();
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(chosen->kind, backend_kind::bwrap);
    EXPECT_EQ(chosen->state, rung_state::usable);
    EXPECT_EQ(chosen->runner, fake_bwrap);
    EXPECT_EQ(runner.count(), 2u);
}

TEST_F(LadderTest, ProbeWorkspaceIsRemovedAfterProbing) {
    fs::path seen;
    scripted_runner runner([&seen](const confined_argv& wrapped) {
        auto bind = std::find(wrapped.argv.begin(), wrapped.argv.end(), "--bind");
        if (bind != wrapped.argv.end()) {
            seen = *(bind + 1);
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

// ---- unavailable verdicts are cached and fail closed ----------------------------------------

TEST_F(LadderTest, UnavailableVerdictIsCachedAndEveryConfineThrows) {
    scripted_runner runner([](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) {
            return failed(125,
                          "cordon-landlock: landlock is not supported by this kernel "
                          "(built without Landlock: ENOSYS)\n");
        }
        return failed(1, "bwrap: No permissions to create new namespace\n");
    });
    local_provider provider(options(runner));

    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        try {
            (void)provider.confine(command_, policy(mode));
            ADD_FAILURE() << "confine must throw when no rung is usable";
        } catch (const sandbox_unavailable_error& error) {
            EXPECT_EQ(error.mode(), mode);
            EXPECT_EQ(error.code(), "SANDBOX_UNAVAILABLE");
            EXPECT_FALSE(error.detail().has_value());
            EXPECT_EQ(std::string(error.what()), sandbox_unavailable_message(mode, std::nullopt));
        }
    }
    // bwrap's read-only profile failed (1 run), then the launcher's --probe failed (1 run).
    const std::size_t after_first = runner.count();
    EXPECT_EQ(after_first, 2u);

    for (int i = 0; i < 20; ++i) {
        EXPECT_THROW((void)provider.confine(command_, policy(sandbox_mode::read_only)),
                     sandbox_unavailable_error);
        EXPECT_THROW((void)provider.confine(command_, policy(sandbox_mode::workspace_write)),
                     sandbox_unavailable_error);
    }
    EXPECT_FALSE(provider.selected().has_value());
    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 2u);
    EXPECT_EQ(reports[0].state, rung_state::unusable);
    EXPECT_EQ(reports[1].state, rung_state::unusable);
    EXPECT_EQ(runner.count(), after_first) << "a cached verdict must not re-run probes";
}

TEST_F(LadderTest, ProbeThatTimesOutOrIsKilledIsUnusable) {
    scripted_runner runner([](const confined_argv& wrapped) {
        probe_run_result r;
        if (is_launcher_probe(wrapped)) {
            r.exit_code = std::nullopt;  // killed by a signal
            return r;
        }
        r.timed_out = true;
        return r;
    });
    local_provider provider(options(runner));
    EXPECT_THROW((void)provider.confine(command_, policy(sandbox_mode::read_only)),
                 sandbox_unavailable_error);
    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 2u);
    EXPECT_EQ(reports[0].state, rung_state::unusable);
    EXPECT_THAT(reports[0].reason, HasSubstr("timed out"));
    EXPECT_EQ(reports[1].state, rung_state::unusable);
    EXPECT_THAT(reports[1].reason, HasSubstr("signal"));
}

TEST_F(LadderTest, SpawnErrorAndStatusChannelFailureMakeARungUnusable) {
    scripted_runner runner([](const confined_argv& wrapped) {
        probe_run_result r;
        if (is_launcher_probe(wrapped)) {
            r.spawn_error = "cordon-landlock: Permission denied";
            return r;
        }
        // bwrap exit 0 but the status channel says the command never started.
        r.exit_code = 0;
        r.runner_failure = "bwrap: Can't mount proc on /newroot/proc: Operation not permitted";
        return r;
    });
    local_provider provider(options(runner));
    EXPECT_FALSE(provider.selected().has_value());
    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 2u);
    EXPECT_THAT(reports[0].reason, HasSubstr("bwrap: Can't mount proc on /newroot/proc"));
    EXPECT_THAT(reports[1].reason, HasSubstr("cordon-landlock: Permission denied"));
}

// ---- falling through ------------------------------------------------------------------------

TEST_F(LadderTest, FailingBwrapFallsThroughToTheLauncher) {
    scripted_runner runner([](const confined_argv& wrapped) {
        if (wrapped.argv.front() == fake_bwrap) {
            return failed(1, "bwrap: setting up uid map: Permission denied\n");
        }
        return all_usable(wrapped);
    });
    local_provider provider(options(runner));

    confined_argv out = provider.confine(command_, policy(sandbox_mode::workspace_write));
    EXPECT_EQ(out.backend, backend_kind::landlock);
    EXPECT_EQ(out.argv.front(), launcher_.string());
    EXPECT_EQ(out.argv[1], "--status-fd");  // the launcher's dialect, not bwrap's
    EXPECT_FALSE(contains(out.argv, "--ro-bind"));
    EXPECT_EQ(out.argv, landlock_confine(launcher_, command_, policy(sandbox_mode::workspace_write),
                                         enforcement::full)
                            .argv);
    EXPECT_EQ(out.level, enforcement::partial);  // Landlock workspace-write (see backends.hpp)
    EXPECT_EQ(provider.confine(command_, policy(sandbox_mode::read_only)).level, enforcement::full);
    ASSERT_TRUE(out.status.has_value());
    EXPECT_EQ(out.status->kind, status_channel::protocol::launcher_record);
    EXPECT_THAT(out.denial_signatures, ElementsAre("permission denied"));

    // bwrap RO (failed, stop), launcher --probe, launcher RO, launcher WW.
    const auto calls = runner.calls();
    ASSERT_EQ(calls.size(), 4u);
    EXPECT_EQ(calls[0].argv.front(), fake_bwrap);
    EXPECT_TRUE(is_launcher_probe(calls[1]));
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
    scripted_runner runner([](const confined_argv& wrapped) {
        if (wrapped.argv.front() == fake_bwrap) {
            if (contains(wrapped.argv, "--tmpfs")) {
                return failed(1, "bwrap: Can't mount tmpfs on /newroot/tmp: Permission denied\n");
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

TEST_F(LadderTest, ExplicitLandlockNeverProbesBwrap) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner, backend_choice::landlock));
    EXPECT_THAT(provider.ladder(), ElementsAre(backend_kind::landlock));

    confined_argv out = provider.confine(command_, policy(sandbox_mode::read_only));
    EXPECT_EQ(out.backend, backend_kind::landlock);
    EXPECT_EQ(out.argv.front(), launcher_.string());
    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].kind, backend_kind::landlock);
    for (const auto& call : runner.calls()) {
        EXPECT_NE(call.argv.front(), fake_bwrap);
        EXPECT_FALSE(contains(call.argv, "--ro-bind"));
    }
    EXPECT_EQ(runner.count(), 3u);  // --probe, read-only profile, workspace-write profile
}

TEST_F(LadderTest, ExplicitBwrapThatFailsDoesNotFallThrough) {
    scripted_runner runner([](const confined_argv& wrapped) {
        if (wrapped.argv.front() == fake_bwrap) return failed(1, "bwrap: nope\n");
        return all_usable(wrapped);
    });
    local_provider provider(options(runner, backend_choice::bwrap));
    EXPECT_THAT(provider.ladder(), ElementsAre(backend_kind::bwrap));
    EXPECT_THROW((void)provider.confine(command_, policy(sandbox_mode::read_only)),
                 sandbox_unavailable_error);
    for (const auto& call : runner.calls())
        EXPECT_EQ(call.argv.front(), fake_bwrap);
}

// ---- other platforms ------------------------------------------------------------------------

TEST_F(LadderTest, MacosSelectsSeatbeltWithoutAnyProbe) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner, backend_choice::automatic, platform::macos));
    EXPECT_THAT(provider.ladder(), ElementsAre(backend_kind::seatbelt));

    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        confined_argv out = provider.confine(command_, policy(mode));
        EXPECT_EQ(out.backend, backend_kind::seatbelt);
        ASSERT_GE(out.argv.size(), 4u);
        EXPECT_EQ(out.argv[0], "/usr/bin/sandbox-exec");
        EXPECT_EQ(out.argv[1], "-p");
        const auto roots = writable_roots(policy(mode));
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
    EXPECT_EQ(without_runner.confine(command_, policy(sandbox_mode::read_only)).backend,
              backend_kind::seatbelt);
}

TEST_F(LadderTest, OtherPlatformFailsClosedWithZeroProbes) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner, backend_choice::automatic, platform::other));
    EXPECT_THAT(provider.ladder(), IsEmpty());
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        try {
            (void)provider.confine(command_, policy(mode));
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
    bare.bwrap_path = fake_bwrap;
    bare.launcher_path = launcher_;
    local_provider provider(std::move(bare));
    EXPECT_THROW((void)provider.confine(command_, policy(sandbox_mode::read_only)),
                 std::logic_error);
}

// ---- the Landlock probe ---------------------------------------------------------------------

TEST_F(LadderTest, LandlockProbeParsesPartialEnforcementAndAbi) {
    scripted_runner runner([](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped))
            return ok("landlock: partially enforced (older ABI)\nabi: 3\n");
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
    for (std::size_t i : {1u, 2u}) {
        EXPECT_EQ(calls[i].backend, backend_kind::landlock);
        EXPECT_EQ(calls[i].level, enforcement::partial);
        EXPECT_EQ(calls[i].argv.front(), launcher_.string());
        EXPECT_EQ(calls[i].argv.back(), "true");
        ASSERT_TRUE(calls[i].status.has_value());
        EXPECT_EQ(calls[i].status->kind, status_channel::protocol::launcher_record);
    }
    EXPECT_FALSE(contains(calls[1].argv, "/tmp")) << "read-only profile first";
    EXPECT_TRUE(contains(calls[2].argv, "/tmp")) << "then workspace-write";

    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        EXPECT_EQ(provider.confine(command_, policy(mode)).level, enforcement::partial);
    }
    EXPECT_EQ(runner.count(), 3u);
}

TEST_F(LadderTest, LandlockProbeParsesFullEnforcement) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner, backend_choice::landlock));
    auto chosen = provider.selected();
    ASSERT_TRUE(chosen.has_value());
    EXPECT_EQ(chosen->level, enforcement::full);
    EXPECT_EQ(chosen->landlock_abi, std::optional<int>(7));
    EXPECT_EQ(provider.confine(command_, policy(sandbox_mode::read_only)).level, enforcement::full);
}

TEST_F(LadderTest, LandlockProfileRunFailureAfterAGoodProbeIsUnusable) {
    scripted_runner runner([](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) return ok("landlock: fully enforced\nabi: 6\n");
        probe_run_result r = failed(125, "cordon-landlock: cannot open rule path: /tmp: x\n");
        r.runner_failure = "cordon-landlock: cannot open rule path: /tmp: x";
        if (!contains(wrapped.argv, "/tmp")) return ok();
        return r;
    });
    local_provider provider(options(runner, backend_choice::landlock));
    EXPECT_THROW((void)provider.confine(command_, policy(sandbox_mode::read_only)),
                 sandbox_unavailable_error);
    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].state, rung_state::unusable);
    EXPECT_THAT(reports[0].reason, HasSubstr("workspace-write"));
    EXPECT_THAT(reports[0].reason, HasSubstr("cannot open rule path: /tmp"));
}

TEST_F(LadderTest, StaleTmpdirDoesNotBreakProbing) {
    // A TMPDIR naming a directory that no longer exists (a closed login session's private
    // tmp) must not turn probing into an exception: the probe workspace falls back to /tmp.
    scoped_env tmpdir("TMPDIR", (dir_.path() / "gone").string());
    fs::path seen;
    scripted_runner runner([&seen](const confined_argv& wrapped) {
        auto bind = std::find(wrapped.argv.begin(), wrapped.argv.end(), "--bind");
        if (bind != wrapped.argv.end()) seen = *(bind + 1);
        return ok();
    });
    local_provider provider(options(runner, backend_choice::bwrap));
    std::optional<rung_report> chosen;
    ASSERT_NO_THROW(chosen = provider.selected());
    ASSERT_TRUE(chosen.has_value()) << provider.probe_all()[0].reason;
    EXPECT_EQ(chosen->kind, backend_kind::bwrap);
    EXPECT_TRUE(seen.is_absolute()) << seen;
    EXPECT_FALSE(fs::exists(dir_.path() / "gone"));
}

// ---- probe_all ------------------------------------------------------------------------------

TEST_F(LadderTest, ProbeAllReportsEveryRungWithReasons) {
    scripted_runner runner([](const confined_argv& wrapped) {
        if (is_launcher_probe(wrapped)) {
            return failed(125,
                          "cordon-landlock: landlock is disabled on this kernel (EOPNOTSUPP: add "
                          "landlock to the lsm= boot parameter)\nsecond launcher line\n");
        }
        return failed(1, "bwrap: setting up uid map: Permission denied\nsecond bwrap line\n");
    });
    local_provider provider(options(runner));
    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 2u);

    EXPECT_EQ(reports[0].kind, backend_kind::bwrap);
    EXPECT_EQ(reports[0].runner, fake_bwrap);
    EXPECT_EQ(reports[0].state, rung_state::unusable);
    EXPECT_THAT(reports[0].reason, HasSubstr("bwrap: setting up uid map: Permission denied"));
    EXPECT_THAT(reports[0].reason, Not(HasSubstr("second")));
    EXPECT_THAT(reports[0].reason, Not(HasSubstr("\n")));

    EXPECT_EQ(reports[1].kind, backend_kind::landlock);
    EXPECT_EQ(reports[1].runner, launcher_.string());
    EXPECT_EQ(reports[1].state, rung_state::unusable);
    EXPECT_THAT(reports[1].reason, HasSubstr("cordon-landlock: landlock is disabled"));
    EXPECT_THAT(reports[1].reason, Not(HasSubstr("second")));
    EXPECT_THAT(reports[1].reason, Not(HasSubstr("\n")));

    const std::size_t probed = runner.count();
    auto again = provider.probe_all();
    EXPECT_EQ(runner.count(), probed) << "each rung is probed at most once";
    ASSERT_EQ(again.size(), 2u);
    EXPECT_EQ(again[0].reason, reports[0].reason);
    EXPECT_EQ(again[1].reason, reports[1].reason);
}

TEST_F(LadderTest, ProbeAllAlsoProbesRungsBelowTheSelectedOne) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner));
    ASSERT_EQ(provider.confine(command_, policy(sandbox_mode::read_only)).backend,
              backend_kind::bwrap);
    EXPECT_EQ(runner.count(), 2u);

    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 2u);
    EXPECT_EQ(reports[0].state, rung_state::usable);
    EXPECT_TRUE(reports[0].reason.empty());
    EXPECT_EQ(reports[1].state, rung_state::usable);
    EXPECT_EQ(reports[1].level, enforcement::full);
    EXPECT_EQ(reports[1].landlock_abi, std::optional<int>(7));
    EXPECT_EQ(runner.count(), 5u);
    // Diagnostics do not change the verdict.
    EXPECT_EQ(provider.confine(command_, policy(sandbox_mode::read_only)).backend,
              backend_kind::bwrap);
    EXPECT_EQ(runner.count(), 5u);
}

TEST_F(LadderTest, BwrapNotFoundOnPathIsUnusableWithAReason) {
    scratch_dir empty_bin;
    scoped_env path("PATH", empty_bin.path().string());
    EXPECT_TRUE(find_in_path("bwrap").empty());

    scripted_runner runner(all_usable);
    local_provider_options opts = options(runner);
    opts.bwrap_path.clear();  // resolve from PATH, which has no bwrap
    local_provider provider(std::move(opts));

    auto reports = provider.probe_all();
    ASSERT_EQ(reports.size(), 2u);
    EXPECT_EQ(reports[0].kind, backend_kind::bwrap);
    EXPECT_TRUE(reports[0].runner.empty());
    EXPECT_EQ(reports[0].state, rung_state::unusable);
    EXPECT_FALSE(reports[0].reason.empty());
    EXPECT_THAT(reports[0].reason, HasSubstr("bwrap"));
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
    EXPECT_THROW((void)provider.confine(command_, policy(sandbox_mode::read_only)),
                 sandbox_unavailable_error);
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
    EXPECT_THROW((void)provider.confine(command_, policy(sandbox_mode::read_only)),
                 sandbox_unavailable_error);
    EXPECT_EQ(runner.count(), 0u);
}

// ---- find_in_path / default_launcher_path ---------------------------------------------------

TEST(FindInPath, FindsAnExecutableInAnAbsoluteEntry) {
    scratch_dir dir;
    fs::create_directories(dir.path() / "bin");
    const std::string name = "cordon-fake-runner-" + std::to_string(::getpid());
    make_executable(dir.path() / "bin" / name);
    scoped_env path("PATH", "/nonexistent-cordon-dir:" + (dir.path() / "bin").string());
    EXPECT_EQ(find_in_path(name), dir.path() / "bin" / name);
    EXPECT_TRUE(find_in_path(name + "-other").empty());
}

TEST(FindInPath, SkipsRelativeAndEmptyEntries) {
    scratch_dir dir;
    fs::create_directories(dir.path() / "rel");
    const std::string name = "bwrap";
    make_executable(dir.path() / "rel" / name);
    make_executable(dir.path() / name);  // what an empty entry (the cwd) would find
    scoped_cwd cwd(dir.path());
    ASSERT_EQ(::access((fs::path("rel") / name).c_str(), X_OK), 0);  // it really is there

    for (const char* list : {"rel", "./rel", "rel:", ":rel", "", ":", "::", "."}) {
        scoped_env path("PATH", list);
        EXPECT_TRUE(find_in_path(name).empty())
            << "PATH=\"" << list << "\" found " << find_in_path(name);
    }
}

TEST(FindInPath, SkipsNonExecutablesAndDirectories) {
    scratch_dir dir;
    fs::create_directories(dir.path() / "a");
    fs::create_directories(dir.path() / "b" / "cordon-runner-x");  // a directory by that name
    std::ofstream(dir.path() / "a" / "cordon-runner-x") << "not executable\n";
    fs::permissions(dir.path() / "a" / "cordon-runner-x", fs::perms::owner_read);
    scoped_env path("PATH", (dir.path() / "a").string() + ":" + (dir.path() / "b").string());
    // Root passes access(X_OK) only when some execute bit is set; none is, so root too.
    EXPECT_TRUE(find_in_path("cordon-runner-x").empty());
}

TEST(DefaultLauncherPath, IsBesideTheRunningExecutable) {
    const fs::path path = default_launcher_path();
    EXPECT_EQ(path.filename(), "cordon-landlock");
    EXPECT_EQ(path.parent_path(), fs::canonical("/proc/self/exe").parent_path());
}

// ---- contract violations and concurrency ----------------------------------------------------

TEST_F(LadderTest, DangerFullAccessIntoConfineThrowsInvalidArgument) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner));
    EXPECT_THROW((void)provider.confine(command_, policy(sandbox_mode::danger_full_access)),
                 std::invalid_argument);
    EXPECT_EQ(runner.count(), 0u) << "a contract violation must not trigger probing";
    // Also after a verdict exists.
    (void)provider.confine(command_, policy(sandbox_mode::read_only));
    EXPECT_THROW((void)provider.confine(command_, policy(sandbox_mode::danger_full_access)),
                 std::invalid_argument);
}

TEST_F(LadderTest, EmptyArgvOrRelativeWorkspaceIntoConfineThrowsInvalidArgument) {
    scripted_runner runner(all_usable);
    local_provider provider(options(runner));
    EXPECT_THROW((void)provider.confine(strings{}, policy(sandbox_mode::read_only)),
                 std::invalid_argument);
    EXPECT_THROW((void)provider.confine(command_, {sandbox_mode::workspace_write, "rel/ws"}),
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
                results[static_cast<std::size_t>(t)] = provider.confine(command_, policy(mode));
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
    EXPECT_EQ(runner.count(), 2u) << "one probe sequence (bwrap RO + WW), not one per thread";
    EXPECT_EQ(runner.max_in_flight(), 1);
}

// The Landlock launcher's workspace-write profile writes the host's /tmp, so a launcher under
// /tmp is refused there too; bwrap's /tmp is private and does not count.
TEST_F(LadderTest, LandlockRunnerUnderTmpFailsClosedForWorkspaceWrite) {
    cordon::test::temp_dir under_tmp("/tmp", "cordon-ladder-runner-");
    for (auto choice : {backend_choice::bwrap, backend_choice::landlock}) {
        scripted_runner runner(all_usable);
        auto opts = options(runner, choice);
        opts.launcher_path = under_tmp / "cordon-landlock";
        opts.bwrap_path = under_tmp / "bwrap";
        make_executable(opts.launcher_path);
        make_executable(opts.bwrap_path);
        local_provider provider(opts);
        EXPECT_NO_THROW((void)provider.confine(command_, policy(sandbox_mode::read_only)));
        if (choice == backend_choice::landlock) {
            EXPECT_THROW((void)provider.confine(command_, policy(sandbox_mode::workspace_write)),
                         sandbox_unavailable_error);
        } else {
            EXPECT_NO_THROW(
                (void)provider.confine(command_, policy(sandbox_mode::workspace_write)));
        }
    }
}

}  // namespace
}  // namespace cordon::sandbox

namespace cordon::sandbox {
namespace {

// A workspace-write command could rewrite a runner inside its workspace, and the next process
// would load the rewritten file: such a call fails closed. Read-only calls write nothing.
TEST_F(LadderTest, RunnerInsideTheWritableWorkspaceFailsClosed) {
    for (auto choice : {backend_choice::bwrap, backend_choice::landlock}) {
        scripted_runner runner(all_usable);
        auto opts = options(runner, choice);
        opts.bwrap_path = launcher_.parent_path() / "bwrap";
        make_executable(opts.bwrap_path);
        local_provider provider(opts);
        const sandbox_policy around{sandbox_mode::workspace_write, dir_.path()};
        try {
            (void)provider.confine(command_, around);
            ADD_FAILURE() << "expected sandbox_unavailable_error for " << to_string(choice);
        } catch (const sandbox_unavailable_error& error) {
            EXPECT_THAT(error.what(), HasSubstr("which workspace-write makes writable"));
        }
        EXPECT_NO_THROW((void)provider.confine(command_, {sandbox_mode::read_only, dir_.path()}));
        EXPECT_NO_THROW((void)provider.confine(command_, policy(sandbox_mode::workspace_write)));
    }
}

}  // namespace
}  // namespace cordon::sandbox
