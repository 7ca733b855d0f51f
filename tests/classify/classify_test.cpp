// The classification matrix: runner failure before denial, out-of-band proof before stderr text.
#include <gtest/gtest.h>

#include <string>

#include "classify/classify.hpp"
#include "classify/signature_scanner.hpp"
#include "sandbox/backends.hpp"

namespace cordon::classify {
namespace {

using sandbox::backend_kind;
using sandbox::confined_argv;

confined_argv wrapped(backend_kind kind) {
    confined_argv out;
    out.backend = kind;
    out.denial_signatures = sandbox::denial_signatures(kind);
    out.runner_failure_rules = sandbox::runner_failure_rules(kind);
    return out;
}

run_evidence evidence(std::optional<int> exit_code, std::string_view stderr_text,
                      runner_status status, bool denial_seen = false) {
    run_evidence out;
    out.exit_code = exit_code;
    out.stderr_tail = stderr_text;
    out.status = status;
    out.denial_seen = denial_seen;
    return out;
}

TEST(Classify, LauncherRecordIsARunnerFailureWithItsMessage) {
    auto e = evidence(125, "cordon-landlock: cannot open rule path: /x: Permission denied\n",
                      runner_status::runner_failed, true);
    e.status_detail = "cordon-landlock: cannot open rule path: /x: Permission denied";
    verdict v = classify(wrapped(backend_kind::landlock), e);
    ASSERT_TRUE(v.runner_failure.has_value());
    EXPECT_EQ(*v.runner_failure, e.status_detail);
    // Runner failure outranks denial even though the line carries denial words.
    EXPECT_FALSE(v.denied);
}

TEST(Classify, BwrapWithoutExitCodeRecordIsARunnerFailureNamingItsLine) {
    auto e = evidence(1, "bwrap: Can't find source path /nope: No such file or directory\n",
                      runner_status::no_proof);
    verdict v = classify(wrapped(backend_kind::bwrap), e);
    ASSERT_TRUE(v.runner_failure.has_value());
    EXPECT_EQ(*v.runner_failure, "bwrap: Can't find source path /nope: No such file or directory");
}

TEST(Classify, BwrapWithoutProofButKilledByCordonIsNotARunnerFailure) {
    auto e = evidence(std::nullopt, "", runner_status::no_proof);
    e.killed_by_cordon = true;
    verdict v = classify(wrapped(backend_kind::bwrap), e);
    EXPECT_FALSE(v.runner_failure.has_value());
    EXPECT_FALSE(v.denied);
}

TEST(Classify, BwrapWithoutProofAndWithoutStderrStillNamesTheRunner) {
    verdict v = classify(wrapped(backend_kind::bwrap), evidence(1, "", runner_status::no_proof));
    ASSERT_TRUE(v.runner_failure.has_value());
    EXPECT_NE(v.runner_failure->find("status 1"), std::string::npos);
}

TEST(Classify, SpoofedRunnerTextIsOrdinaryWhenTheChannelProvesTheCommandRan) {
    for (auto kind : {backend_kind::bwrap, backend_kind::landlock}) {
        auto text = kind == backend_kind::bwrap ? "bwrap: fake\n" : "cordon-landlock: fake\n";
        verdict v = classify(wrapped(kind), evidence(125, text, runner_status::command_started));
        EXPECT_FALSE(v.runner_failure.has_value()) << sandbox::to_string(kind);
        EXPECT_FALSE(v.denied);
    }
}

TEST(Classify, DenialNeedsNonZeroNonSignalExitAndTheDialect) {
    auto kind = backend_kind::bwrap;
    EXPECT_TRUE(
        classify(wrapped(kind), evidence(1, "x", runner_status::command_started, true)).denied);
    EXPECT_FALSE(
        classify(wrapped(kind), evidence(0, "x", runner_status::command_started, true)).denied);
    // A signal is never a denial.
    EXPECT_FALSE(
        classify(wrapped(kind), evidence(std::nullopt, "x", runner_status::command_started, true))
            .denied);
    EXPECT_FALSE(
        classify(wrapped(kind), evidence(1, "x", runner_status::command_started, false)).denied);
}

TEST(Classify, StderrRulesApplyOnlyWithoutAChannel) {
    auto seatbelt = wrapped(backend_kind::seatbelt);
    verdict v = classify(
        seatbelt, evidence(1, "sandbox-exec: profile error\n", runner_status::no_channel, true));
    ASSERT_TRUE(v.runner_failure.has_value());
    EXPECT_EQ(*v.runner_failure, "sandbox-exec: profile error");
    EXPECT_FALSE(v.denied);
}

TEST(MatchRunnerFailure, LauncherRuleNeedsExit125AndSkipsTheNotice) {
    auto rules = sandbox::runner_failure_rules(backend_kind::landlock);
    std::string notice = std::string(sandbox::launcher_notice_line) + "\n";
    // The notice alone is never fatal, at any exit code.
    for (int code : {1, 2, 125}) {
        EXPECT_FALSE(match_runner_failure(code, notice, rules).has_value()) << code;
    }
    // Upper-cased notice still excluded.
    std::string upper = notice;
    for (char& c : upper)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_FALSE(match_runner_failure(125, upper, rules).has_value());
    // A fatal line after the notice is returned, verbatim.
    auto fatal = match_runner_failure(
        125, notice + "cordon-landlock: exec failed: x: No such file or directory\n", rules);
    ASSERT_TRUE(fatal.has_value());
    EXPECT_EQ(*fatal, "cordon-landlock: exec failed: x: No such file or directory");
    // The same fatal line at another exit code is the command's own business.
    EXPECT_FALSE(match_runner_failure(1, "cordon-landlock: exec failed\n", rules).has_value());
    // Notice plus extra text on the same line is fatal.
    EXPECT_TRUE(match_runner_failure(125,
                                     "cordon-landlock: partial enforcement (older Landlock "
                                     "ABI) and more\n",
                                     rules)
                    .has_value());
}

TEST(MatchRunnerFailure, ZeroAndSignalNeverMatchAndBlankSignaturesAreIgnored) {
    std::vector<sandbox::runner_failure_rule> rules{{{}, {"  ", "bwrap: "}, {}}};
    EXPECT_FALSE(match_runner_failure(0, "bwrap: x\n", rules).has_value());
    EXPECT_FALSE(match_runner_failure(std::nullopt, "bwrap: x\n", rules).has_value());
    EXPECT_FALSE(match_runner_failure(1, "anything at all\n", rules).has_value());
    EXPECT_EQ(match_runner_failure(1, "first\r\nBWRAP: second\r\n", rules).value(),
              "BWRAP: second");
}

TEST(MatchesDenial, CaseInsensitiveDialects) {
    auto bwrap = sandbox::denial_signatures(backend_kind::bwrap);
    auto landlock = sandbox::denial_signatures(backend_kind::landlock);
    auto seatbelt = sandbox::denial_signatures(backend_kind::seatbelt);
    EXPECT_TRUE(matches_denial(1, "bash: /etc/x: READ-ONLY FILE SYSTEM", bwrap));
    // Landlock runs inside bwrap too: where a mount does not govern a write (a FIFO), it does.
    EXPECT_TRUE(matches_denial(1, "bash: /var/tmp/fifo: Permission denied", bwrap));
    EXPECT_FALSE(matches_denial(1, "bash: /etc/x: Permission denied", seatbelt));
    EXPECT_TRUE(matches_denial(1, "bash: /etc/x: Permission denied", landlock));
    // Bare EPERM text is a denial only under Seatbelt.
    EXPECT_FALSE(matches_denial(1, "Operation not permitted", landlock));
    EXPECT_TRUE(matches_denial(1, "Operation not permitted", seatbelt));
    EXPECT_FALSE(matches_denial(0, "Permission denied", landlock));
    EXPECT_FALSE(matches_denial(std::nullopt, "Permission denied", landlock));
}

TEST(SignatureScanner, FindsAMatchSplitAcrossChunksAndEarlyInALongStream) {
    std::vector<std::string> signatures{"read-only file system"};
    signature_scanner scanner(signatures);
    scanner.feed("bash: /etc/x: Read-on");
    EXPECT_FALSE(scanner.matched());
    scanner.feed("ly File System\n");
    EXPECT_TRUE(scanner.matched());

    signature_scanner early(signatures);
    early.feed("mkdir: Read-only file system\n");
    for (int i = 0; i < 10000; ++i)
        early.feed(std::string(100, '.'));
    EXPECT_TRUE(early.matched());

    signature_scanner split_every_byte(signatures);
    for (char c : std::string("xx read-only file system yy")) {
        split_every_byte.feed(std::string_view(&c, 1));
    }
    EXPECT_TRUE(split_every_byte.matched());
}

TEST(SignatureScanner, BlankSignaturesNeverMatch) {
    std::vector<std::string> signatures{"", "   "};
    signature_scanner scanner(signatures);
    scanner.feed("anything");
    EXPECT_FALSE(scanner.matched());
}

}  // namespace
}  // namespace cordon::classify
