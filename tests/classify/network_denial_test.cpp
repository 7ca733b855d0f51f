// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The network denial dialect, on the very lines commands print in a network namespace with
// loopback only (taken from curl 7/8, wget 1.21, git 2.39, python 3 and bash run under
// `unshare -rn` with lo up): a refusal of the network is a denial in the confined modes under deny,
// after a runner failure, and never under allow or unconfined; a refused connection to loopback is
// an ordinary failure.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "classify/classify.hpp"
#include "classify/network_denial.hpp"
#include "classify/signature_scanner.hpp"
#include "sandbox/backends.hpp"

namespace cordon::classify {
namespace {

const std::vector<std::string> refusals{
    "curl: (6) Could not resolve host: example.com",
    "curl: (7) Failed to connect to 10.1.2.3 port 80 after 0 ms: Couldn't connect to server",
    "curl: (7) Failed to connect to 10.1.2.3 port 443 after 0 ms: Couldn't connect to server",
    "wget: unable to resolve host address \xe2\x80\x98"
    "example.com\xe2\x80\x99",
    "Connecting to 10.1.2.3:80... failed: Network is unreachable.",
    "Connecting to 10.1.2.3:80... failed: Connection refused.",
    "fatal: unable to access 'https://example.com/x.git/': Could not resolve host: example.com",
    "fatal: unable to access 'https://10.1.2.3/x.git/': Failed to connect to 10.1.2.3 port 443 "
    "after 0 ms: Couldn't connect to server",
    "socket.gaierror: [Errno -3] Temporary failure in name resolution",
    "OSError: [Errno 101] Network is unreachable",
    "bash: connect: Network is unreachable",
    "bash: line 1: /dev/tcp/10.1.2.3/80: Network is unreachable",
    "OSError: [Errno 97] Address family not supported by protocol",
    "ping: socket: Operation not permitted",
    "ssh: connect to host 10.1.2.3 port 22: Connection refused",
    "ssh: Could not resolve hostname example.com: Temporary failure in name resolution",
    "curl: (7) Failed to connect to [2001:db8::1] port 80 after 0 ms: Couldn't connect to server",
};

// Loopback refusals, and failures that are not the network's.
const std::vector<std::string> ordinary{
    "curl: (7) Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server",
    "curl: (7) Failed to connect to localhost port 9 after 0 ms: Couldn't connect to server",
    "curl: (7) Failed to connect to ::1 port 9 after 0 ms: Couldn't connect to server",
    "curl: (7) Failed to connect to [::1] port 9 after 0 ms: Couldn't connect to server",
    // Loopback in the other spellings the kernel connects there.
    "curl: (7) Failed to connect to 0.0.0.0 port 9 after 0 ms: Couldn't connect to server",
    "curl: (7) Failed to connect to :: port 9 after 0 ms: Couldn't connect to server",
    "curl: (7) Failed to connect to ::ffff:7f00:1 port 9 after 0 ms: Couldn't connect to server",
    "curl: (7) Failed to connect to ::ffff:127.0.0.1 port 9 after 0 ms: Couldn't connect to server",
    "ConnectionRefusedError: [Errno 111] Connection refused",
    "bash: connect: Connection refused",
    "bash: line 1: /dev/tcp/127.0.0.1/9: Connection refused",
    "Connecting to 127.0.0.1:9... failed: Connection refused.",
    "nc: connect to 127.0.0.1 port 9 (tcp) failed: Connection refused",
    "cat: /nonexistent: No such file or directory",
    "curl: (22) The requested URL returned error: 404",
};

TEST(NetworkDenial, TheRealMessagesOfARefusedNetworkMatch) {
    for (const std::string& line : refusals) {
        EXPECT_TRUE(matches_network_denial(line)) << line;
        // Anywhere in a longer stderr, and in any case.
        EXPECT_TRUE(matches_network_denial("building...\n" + line + "\nmake: *** [all] Error 1\n"))
            << line;
    }
}

TEST(NetworkDenial, LoopbackAndOtherFailuresDoNot) {
    for (const std::string& line : ordinary) {
        EXPECT_FALSE(matches_network_denial(line)) << line;
        EXPECT_FALSE(is_refused_remote_connection(line)) << line;
    }
}

TEST(NetworkDenial, ARefusedConnectionCountsOnlyWithAPeerThatIsNotLoopback) {
    EXPECT_TRUE(is_refused_remote_connection(
        "curl: (7) Failed to connect to example.com port 80 after 1 ms: Connection refused"));
    EXPECT_TRUE(
        is_refused_remote_connection("Connecting to 192.168.1.1:80... failed: Connection "
                                     "refused."));
    EXPECT_FALSE(is_refused_remote_connection(
        "curl: (7) Failed to connect to 127.1.2.3 port 80 after 1 ms: Connection refused"));
    EXPECT_FALSE(is_refused_remote_connection("Connecting to foo.localhost:80... failed"));
    // Neither a name that looks like an address nor an embedding routed as IPv6 is loopback.
    EXPECT_TRUE(is_refused_remote_connection(
        "curl: (7) Failed to connect to 127.example port 80 after 1 ms: Connection refused"));
    EXPECT_TRUE(is_refused_remote_connection(
        "curl: (7) Failed to connect to 64:ff9b::7f00:1 port 80 after 1 ms: Connection refused"));
    EXPECT_FALSE(is_refused_remote_connection("connection refused"));  // no peer named
    EXPECT_TRUE(
        is_refused_remote_connection("ssh: connect to host 10.1.2.3 port 22: Connection "
                                     "refused"));
    EXPECT_FALSE(
        is_refused_remote_connection("ssh: connect to host 127.0.0.1 port 22: Connection "
                                     "refused"));
    EXPECT_TRUE(
        is_refused_remote_connection("ssh: connect to host 10.1.2.3 port 22: Connection "
                                     "refused"));
    EXPECT_FALSE(
        is_refused_remote_connection("ssh: connect to host 127.0.0.1 port 22: Connection "
                                     "refused"));
}

// A bwrap run's argv with its denial dialect, and the evidence of a command that started and
// exited with `exit_code`.
sandbox::confined_argv bwrap_argv() {
    sandbox::confined_argv bwrap;
    bwrap.backend = sandbox::backend_kind::bwrap;
    bwrap.denial_signatures = sandbox::denial_signatures(sandbox::backend_kind::bwrap);
    return bwrap;
}

run_evidence started_and_exited(int exit_code) {
    sandbox::status_report started;
    started.outcome = sandbox::status_report::verdict::started;
    run_evidence ran;
    ran.exit_code = exit_code;
    ran.status = started;
    return ran;
}

// The order and the scope: the dialect makes a non-zero exit of a confined run under deny a
// denial; a runner failure still comes first; nothing under allow or unconfined.
TEST(NetworkDenial, ADenialOnlyWhereDenyIsEnforcedAndAfterARunnerFailure) {
    const sandbox::confined_argv bwrap = bwrap_argv();
    const run_evidence ran = started_and_exited(6);
    const std::string text = "curl: (6) Could not resolve host: example.com\n";
    const auto under = [&](const sandbox::confined_argv* confined, bool deny,
                           const run_evidence& evidence) {
        return decide(evidence, {confined, "bwrap", text, "curl", false, deny});
    };
    EXPECT_TRUE(under(&bwrap, true, ran).denied);
    EXPECT_TRUE(under(&bwrap, true, ran).network_denied) << "the record says what was denied";
    EXPECT_FALSE(under(&bwrap, false, ran).denied) << "allow: the network was the host's";
    EXPECT_FALSE(under(nullptr, true, ran).denied) << "unconfined: danger-full-access";
    run_evidence succeeded = ran;
    succeeded.exit_code = 0;
    EXPECT_FALSE(under(&bwrap, true, succeeded).denied);
    run_evidence failed_runner = ran;
    sandbox::status_report failure;
    failure.outcome = sandbox::status_report::verdict::failed;
    failure.message = "setting up the network namespace";
    failed_runner.status = failure;
    const verdict runner = under(&bwrap, true, failed_runner);
    EXPECT_EQ(runner.outcome.kind, outcome_kind::runner_failed);
    EXPECT_FALSE(runner.denied);
}

// A denial in the file walls' words stays the file walls' under deny: the marker and the hint
// must name what to ask for.
TEST(NetworkDenial, AFileDenialUnderDenyIsNotTheNetworks) {
    const sandbox::confined_argv bwrap = bwrap_argv();
    run_evidence ran = started_and_exited(1);
    ran.denial_seen = true;
    const std::string text = "touch: cannot touch '/etc/x': Read-only file system\n";
    const verdict file = decide(ran, {&bwrap, "bwrap", text, "touch /etc/x", false, true});
    EXPECT_TRUE(file.denied);
    EXPECT_FALSE(file.network_denied);
}

// Under proxy, the proxy's own count of refusals makes a non-zero exit a network denial, whatever
// the client printed (curl prints nothing of a CONNECT's 403 body); a run that exits 0 is no
// denial, and a runner failure still comes first.
TEST(NetworkDenial, AProxyRefusalMakesAFailedRunANetworkDenial) {
    const sandbox::confined_argv bwrap = bwrap_argv();
    const run_evidence ran = started_and_exited(56);
    const std::string text = "curl: (56) CONNECT tunnel failed, response 403\n";
    const auto under = [&](bool blocked, const run_evidence& evidence) {
        return decide(evidence, {&bwrap, "bwrap", text, "curl", false, true, blocked});
    };
    EXPECT_TRUE(under(true, ran).denied);
    EXPECT_TRUE(under(true, ran).network_denied);
    EXPECT_FALSE(under(false, ran).denied) << "nothing refused, no denial words: a failure";
    run_evidence succeeded = ran;
    succeeded.exit_code = 0;
    EXPECT_FALSE(under(true, succeeded).denied) << "the command recovered";
    run_evidence failed_runner = ran;
    sandbox::status_report failure;
    failure.outcome = sandbox::status_report::verdict::failed;
    failure.message = "cannot listen for the network proxy on 127.0.0.1:3128";
    failed_runner.status = failure;
    EXPECT_EQ(under(true, failed_runner).outcome.kind, outcome_kind::runner_failed);
    EXPECT_FALSE(under(true, failed_runner).denied);
}

TEST(NetworkDenial, TheSignaturesAreLowerCaseForTheScanner) {
    for (const std::string& each : network_denial_signatures()) {
        EXPECT_FALSE(each.empty());
        EXPECT_EQ(each, ascii_lower(each));
    }
}

}  // namespace
}  // namespace cordon::classify
