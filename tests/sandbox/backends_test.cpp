// The backends as pure argv transformers (STYLE.md rule 8): golden argv and profiles for every
// backend and mode, the stderr dialects, the status channel, and the contract violations that
// must throw instead of producing an argv.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "sandbox/backends.hpp"
#include "sandbox/confined_argv.hpp"
#include "sandbox/launcher_status.hpp"

namespace cordon::sandbox {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using strings = std::vector<std::string>;

const strings command{"bash", "-c", "echo hi > out"};
const sandbox_policy read_only{sandbox_mode::read_only, "/work/ws"};
const sandbox_policy workspace_write{sandbox_mode::workspace_write, "/work/ws"};

strings concat(strings head, const strings& tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
}

// ---- bwrap ----------------------------------------------------------------------------------

TEST(BwrapBackend, ReadOnlyGoldenArgv) {
    confined_argv out = bwrap_confine("/usr/bin/bwrap", command, read_only);
    EXPECT_THAT(out.argv,
                ElementsAreArray(
                    concat({"/usr/bin/bwrap", "--unshare-user", "--disable-userns", "--unshare-pid",
                            "--cap-drop", "ALL", "--die-with-parent", "--ro-bind", "/", "/",
                            "--dev", "/dev", "--proc", "/proc", "--json-status-fd", "3", "--"},
                           command)));
    EXPECT_EQ(out.backend, backend_kind::bwrap);
    EXPECT_EQ(out.level, enforcement::full);
}

TEST(BwrapBackend, WorkspaceWriteGoldenArgv) {
    confined_argv out = bwrap_confine("/opt/bin/bwrap", command, workspace_write);
    EXPECT_THAT(out.argv, ElementsAreArray(concat({"/opt/bin/bwrap",
                                                   "--unshare-user",
                                                   "--disable-userns",
                                                   "--unshare-pid",
                                                   "--cap-drop",
                                                   "ALL",
                                                   "--die-with-parent",
                                                   "--ro-bind",
                                                   "/",
                                                   "/",
                                                   "--dev",
                                                   "/dev",
                                                   "--proc",
                                                   "/proc",
                                                   "--tmpfs",
                                                   "/tmp",
                                                   "--bind",
                                                   "/work/ws",
                                                   "/work/ws",
                                                   "--json-status-fd",
                                                   "3",
                                                   "--"},
                                                  command)));
    EXPECT_EQ(out.level, enforcement::full);
}

TEST(BwrapBackend, WorkspaceUnderTmpIsBoundAfterTheTmpfs) {
    // The bind must follow the tmpfs, or the private /tmp would hide the workspace.
    confined_argv out =
        bwrap_confine("/usr/bin/bwrap", command, {sandbox_mode::workspace_write, "/tmp/ws"});
    auto tmpfs = std::find(out.argv.begin(), out.argv.end(), "--tmpfs");
    auto bind = std::find(out.argv.begin(), out.argv.end(), "--bind");
    ASSERT_NE(tmpfs, out.argv.end());
    ASSERT_NE(bind, out.argv.end());
    EXPECT_LT(tmpfs, bind);
    EXPECT_EQ(*(bind + 1), "/tmp/ws");
    EXPECT_EQ(*(bind + 2), "/tmp/ws");
}

TEST(BwrapBackend, CallerArgvIsPassedVerbatimAfterTheSeparator) {
    const strings tricky{"--", "--bind", "/", "/", "arg with spaces", ""};
    confined_argv out = bwrap_confine("/usr/bin/bwrap", tricky, read_only);
    auto separator = std::find(out.argv.begin(), out.argv.end(), "--");
    ASSERT_NE(separator, out.argv.end());
    EXPECT_EQ(strings(separator + 1, out.argv.end()), tricky);
    // No --bind in the profile part of a read-only argv.
    EXPECT_EQ(std::find(out.argv.begin(), separator, "--bind"), separator);
}

TEST(BwrapBackend, DialectsAndStatusChannel) {
    confined_argv out = bwrap_confine("/usr/bin/bwrap", command, read_only);
    EXPECT_THAT(out.denial_signatures, ElementsAre("read-only file system"));
    ASSERT_EQ(out.runner_failure_rules.size(), 1u);
    EXPECT_TRUE(out.runner_failure_rules[0].allowed_exit_codes.empty());
    EXPECT_THAT(out.runner_failure_rules[0].fatal_signatures, ElementsAre("bwrap: "));
    EXPECT_TRUE(out.runner_failure_rules[0].informational_lines.empty());
    ASSERT_TRUE(out.status.has_value());
    EXPECT_EQ(out.status->kind, status_channel::protocol::bwrap_json);
    EXPECT_EQ(out.status->child_fd, 3);
    EXPECT_EQ(out.status->child_fd, runner_status_fd);
}

// ---- cordon-landlock ------------------------------------------------------------------------

TEST(LandlockBackend, ReadOnlyGoldenArgv) {
    confined_argv out =
        landlock_confine("/opt/cordon/bin/cordon-landlock", command, read_only, enforcement::full);
    EXPECT_THAT(out.argv,
                ElementsAreArray(concat({"/opt/cordon/bin/cordon-landlock", "--status-fd", "3",
                                         "--deny-metadata", "--ro", "/", "--rw", "/dev/null", "--"},
                                        command)));
    EXPECT_EQ(out.backend, backend_kind::landlock);
    EXPECT_EQ(out.level, enforcement::full);
}

// Landlock does not govern chmod/chown/utime/xattr; under workspace-write no filter can tell the
// workspace's paths from the rest, so the run is partial whatever the ABI.
TEST(LandlockBackend, WorkspaceWriteGoldenArgvIsPartial) {
    confined_argv out = landlock_confine("/opt/cordon/bin/cordon-landlock", command,
                                         workspace_write, enforcement::full);
    EXPECT_THAT(out.argv, ElementsAreArray(concat(
                              {"/opt/cordon/bin/cordon-landlock", "--status-fd", "3", "--ro", "/",
                               "--rw", "/dev/null", "--rw", "/tmp", "--rw", "/work/ws", "--"},
                              command)));
    EXPECT_EQ(out.level, enforcement::partial);
}

TEST(LandlockBackend, PartialLevelIsReportedNotUpgraded) {
    confined_argv ro = landlock_confine("/l", command, read_only, enforcement::partial);
    confined_argv ww = landlock_confine("/l", command, workspace_write, enforcement::partial);
    EXPECT_EQ(ro.level, enforcement::partial);
    EXPECT_EQ(ww.level, enforcement::partial);
    // The profile itself does not depend on the level.
    EXPECT_EQ(ro.argv, landlock_confine("/l", command, read_only, enforcement::full).argv);
    EXPECT_THAT(ww.argv,
                ElementsAreArray(concat({"/l", "--status-fd", "3", "--ro", "/", "--rw", "/dev/null",
                                         "--rw", "/tmp", "--rw", "/work/ws", "--"},
                                        command)));
}

TEST(LandlockBackend, DialectsAndStatusChannel) {
    confined_argv out = landlock_confine("/l", command, read_only, enforcement::full);
    // Read-only adds the metadata filter's EPERM to the dialect; workspace-write has no filter.
    EXPECT_THAT(out.denial_signatures, ElementsAre("permission denied", "operation not permitted"));
    EXPECT_THAT(
        landlock_confine("/l", command, workspace_write, enforcement::full).denial_signatures,
        ElementsAre("permission denied"));
    ASSERT_EQ(out.runner_failure_rules.size(), 1u);
    EXPECT_THAT(out.runner_failure_rules[0].allowed_exit_codes, ElementsAre(125));
    EXPECT_EQ(out.runner_failure_rules[0].allowed_exit_codes[0], launcher_failure_exit);
    EXPECT_THAT(out.runner_failure_rules[0].fatal_signatures, ElementsAre("cordon-landlock: "));
    EXPECT_THAT(out.runner_failure_rules[0].informational_lines,
                ElementsAre("cordon-landlock: partial enforcement (older Landlock ABI)"));
    EXPECT_EQ(launcher_notice_line, "cordon-landlock: partial enforcement (older Landlock ABI)");
    ASSERT_TRUE(out.status.has_value());
    EXPECT_EQ(out.status->kind, status_channel::protocol::launcher_record);
    EXPECT_EQ(out.status->child_fd, 3);
    // The argv tells the launcher the same fd the executor places the pipe at.
    EXPECT_EQ(out.argv[1], "--status-fd");
    EXPECT_EQ(out.argv[2], std::to_string(out.status->child_fd));
}

// ---- Seatbelt -------------------------------------------------------------------------------

constexpr const char* seatbelt_read_only_profile =
    "(version 1) (allow default) (deny file-write*) (allow file-write* (literal \"/dev/null\"))";

TEST(SeatbeltBackend, ReadOnlyProfile) {
    EXPECT_EQ(seatbelt_profile(sandbox_mode::read_only, {}), seatbelt_read_only_profile);
    // Roots never widen a read-only profile.
    const std::vector<fs::path> roots{"/R1", "/R2"};
    EXPECT_EQ(seatbelt_profile(sandbox_mode::read_only, roots), seatbelt_read_only_profile);
}

TEST(SeatbeltBackend, WorkspaceWriteProfile) {
    const std::vector<fs::path> roots{"/Users/me/ws", "/private/tmp"};
    EXPECT_EQ(seatbelt_profile(sandbox_mode::workspace_write, roots),
              std::string(seatbelt_read_only_profile) +
                  " (allow file-write* (subpath \"/Users/me/ws\") (subpath \"/private/tmp\"))");
    const std::vector<fs::path> one{"/R1"};
    EXPECT_EQ(seatbelt_profile(sandbox_mode::workspace_write, one),
              std::string(seatbelt_read_only_profile) + " (allow file-write* (subpath \"/R1\"))");
}

TEST(SeatbeltBackend, RootsAreQuoted) {
    const std::vector<fs::path> roots{"/a \"b\"/c\\d"};
    EXPECT_EQ(seatbelt_profile(sandbox_mode::workspace_write, roots),
              std::string(seatbelt_read_only_profile) +
                  " (allow file-write* (subpath \"/a \\\"b\\\"/c\\\\d\"))");
}

TEST(SeatbeltBackend, ConfineGoldenArgv) {
    const std::vector<fs::path> roots{"/work/ws", "/private/tmp"};
    confined_argv ro = seatbelt_confine("/usr/bin/sandbox-exec", command, read_only, {});
    EXPECT_THAT(ro.argv,
                ElementsAreArray(concat(
                    {"/usr/bin/sandbox-exec", "-p", seatbelt_read_only_profile, "--"}, command)));
    confined_argv ww = seatbelt_confine("/usr/bin/sandbox-exec", command, workspace_write, roots);
    EXPECT_THAT(ww.argv,
                ElementsAreArray(concat(
                    {"/usr/bin/sandbox-exec", "-p",
                     std::string(seatbelt_read_only_profile) +
                         " (allow file-write* (subpath \"/work/ws\") (subpath \"/private/tmp\"))",
                     "--"},
                    command)));
    EXPECT_EQ(ww.backend, backend_kind::seatbelt);
    EXPECT_EQ(ww.level, enforcement::full);
}

TEST(SeatbeltBackend, DialectsAndNoStatusChannel) {
    confined_argv out = seatbelt_confine("/usr/bin/sandbox-exec", command, read_only, {});
    EXPECT_THAT(out.denial_signatures, ElementsAre("operation not permitted"));
    ASSERT_EQ(out.runner_failure_rules.size(), 1u);
    EXPECT_TRUE(out.runner_failure_rules[0].allowed_exit_codes.empty());
    EXPECT_THAT(out.runner_failure_rules[0].fatal_signatures, ElementsAre("sandbox-exec: "));
    EXPECT_TRUE(out.runner_failure_rules[0].informational_lines.empty());
    EXPECT_FALSE(out.status.has_value());
}

TEST(SbplQuote, EscapesQuoteAndBackslash) {
    EXPECT_EQ(sbpl_quote(""), "\"\"");
    EXPECT_EQ(sbpl_quote("/plain/path"), "\"/plain/path\"");
    EXPECT_EQ(sbpl_quote("a\"b"), "\"a\\\"b\"");
    EXPECT_EQ(sbpl_quote("a\\b"), "\"a\\\\b\"");
    EXPECT_EQ(sbpl_quote("\\\""), "\"\\\\\\\"\"");
    // A root ending in a backslash cannot swallow the closing quote.
    EXPECT_EQ(sbpl_quote("x\\"), "\"x\\\\\"");
    // Other characters, parentheses included, pass through: they are inert inside a string.
    EXPECT_EQ(sbpl_quote("(allow default)"), "\"(allow default)\"");
}

// ---- the dialect tables ---------------------------------------------------------------------

TEST(Dialects, TablesMatchEachConfinedArgv) {
    const std::vector<fs::path> none;
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        const sandbox_policy policy{mode, "/w"};
        const confined_argv outs[] = {bwrap_confine("/b", command, policy),
                                      landlock_confine("/l", command, policy, enforcement::full),
                                      seatbelt_confine("/s", command, policy, none)};
        for (const auto& out : outs) {
            EXPECT_EQ(out.denial_signatures, denial_signatures(out.backend, mode));
            const auto rules = runner_failure_rules(out.backend);
            ASSERT_EQ(out.runner_failure_rules.size(), rules.size());
            for (std::size_t i = 0; i < rules.size(); ++i) {
                EXPECT_EQ(out.runner_failure_rules[i].allowed_exit_codes,
                          rules[i].allowed_exit_codes);
                EXPECT_EQ(out.runner_failure_rules[i].fatal_signatures, rules[i].fatal_signatures);
                EXPECT_EQ(out.runner_failure_rules[i].informational_lines,
                          rules[i].informational_lines);
            }
        }
    }
}

TEST(Dialects, SignaturesAreLowerCase) {
    // Matching is case-insensitive; the tables are spelled lower-case as in reference 5.1.
    for (auto kind : {backend_kind::bwrap, backend_kind::landlock, backend_kind::seatbelt}) {
        for (const auto& signature : denial_signatures(kind)) {
            for (char c : signature)
                EXPECT_FALSE(c >= 'A' && c <= 'Z') << signature;
        }
        for (const auto& rule : runner_failure_rules(kind)) {
            ASSERT_FALSE(rule.fatal_signatures.empty());
            for (const auto& signature : rule.fatal_signatures) {
                // The trailing space is significant (reference 5.1).
                EXPECT_EQ(signature.back(), ' ') << signature;
            }
        }
    }
}

// ---- contract violations --------------------------------------------------------------------

TEST(BackendContract, DangerFullAccessThrows) {
    const sandbox_policy danger{sandbox_mode::danger_full_access, "/work/ws"};
    EXPECT_THROW((void)bwrap_confine("/b", command, danger), std::invalid_argument);
    EXPECT_THROW((void)landlock_confine("/l", command, danger, enforcement::full),
                 std::invalid_argument);
    EXPECT_THROW((void)seatbelt_confine("/s", command, danger, {}), std::invalid_argument);
}

TEST(BackendContract, RelativeWorkspaceThrows) {
    for (auto mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        for (const char* root : {"work/ws", "", "./ws"}) {
            const sandbox_policy relative{mode, root};
            EXPECT_THROW((void)bwrap_confine("/b", command, relative), std::invalid_argument)
                << root;
            EXPECT_THROW((void)landlock_confine("/l", command, relative, enforcement::full),
                         std::invalid_argument)
                << root;
            EXPECT_THROW((void)seatbelt_confine("/s", command, relative, {}), std::invalid_argument)
                << root;
        }
    }
}

TEST(BackendContract, EmptyArgvThrows) {
    const strings empty;
    for (const auto& policy : {read_only, workspace_write}) {
        EXPECT_THROW((void)bwrap_confine("/b", empty, policy), std::invalid_argument);
        EXPECT_THROW((void)landlock_confine("/l", empty, policy, enforcement::full),
                     std::invalid_argument);
        EXPECT_THROW((void)seatbelt_confine("/s", empty, policy, {}), std::invalid_argument);
    }
}

}  // namespace
}  // namespace cordon::sandbox
