// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The network policy on the real runners: under deny, every channel out of the run is closed
// (a TCP connect and a UDP datagram to listeners this test binds on the host's loopback, raw,
// packet and ping sockets, bash's /dev/tcp, a host pathname unix socket and an abstract one),
// and each listener is checked on the host, not only the command's word; a listed host socket
// stays reachable; under allow, the host's loopback is reached. The record says which.
//
// Only loopback and sockets this test binds: never an outside address.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include "cordon/executor.hpp"
#include "cordon/record_json.hpp"
#include "cordon/sandbox_error.hpp"
#include "real_backend.hpp"
#include "run_or_throw.hpp"
#include "runtime/render.hpp"
#include "runtime/runtime_test_util.hpp"
#include "sandbox/local_provider.hpp"
#include "support.hpp"

namespace cordon::sandbox {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;

// A socket of the host bound by the test, non-blocking, closed at scope end.
class host_socket {
public:
    host_socket(int family, int type) {
        fd_ = ::socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
    }
    ~host_socket() { ::close(fd_); }
    host_socket(const host_socket&) = delete;
    host_socket& operator=(const host_socket&) = delete;

    // 127.0.0.1 on a port the kernel picks; returns the port.
    int bind_loopback() {
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bind(&address, sizeof address);
        socklen_t size = sizeof address;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size);
        return ntohs(address.sin_port);
    }
    // A pathname socket at `path`, or an abstract one named `path` when `abstract`.
    void bind_unix(const std::string& path, bool abstract) {
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        const std::size_t offset = abstract ? 1 : 0;
        std::memcpy(address.sun_path + offset, path.data(), path.size());
        bind(&address,
             static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + offset + path.size()));
    }
    void listen() {
        if (::listen(fd_, 8) != 0)
            throw std::system_error(errno, std::generic_category(), "listen");
    }
    // Whether anything reached it: a pending connection or a queued datagram. The run is over
    // when this is asked, and loopback delivery happens within the sender's call.
    [[nodiscard]] bool reached(bool stream) const {
        if (stream) {
            const int accepted = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (accepted >= 0) ::close(accepted);
            return accepted >= 0;
        }
        char buffer[16];
        return ::recv(fd_, buffer, sizeof buffer, 0) >= 0;
    }

private:
    void bind(const void* address, socklen_t size) {
        if (::bind(fd_, static_cast<const sockaddr*>(address), size) != 0) {
            throw std::system_error(errno, std::generic_category(), "bind");
        }
    }
    int fd_ = -1;
};

class NetworkPolicy : public ::testing::TestWithParam<test::real_backend> {
protected:
    void SetUp() override {
        std::string why;
        provider_ = test::provider_for(test::choice_of(GetParam()), why);
        if (!provider_) CORDON_SKIP_OR_FAIL(why);
        kind_ = provider_->selected()->kind;
        tcp_port_ = tcp_.bind_loopback();
        tcp_.listen();
        udp_port_ = udp_.bind_loopback();
        unix_.bind_unix(unix_path_.string(), false);
        unix_.listen();
        unix_dgram_.bind_unix(unix_path_.string() + ".dgram", false);
        listed_.bind_unix(listed_path_.string(), false);
        listed_.listen();
        abstract_.bind_unix(abstract_name_, true);
        abstract_.listen();
    }

    [[nodiscard]] runtime::run_record run(const network_rules& network, bool accept_partial) {
        runtime::run_request request;
        const std::string child = test::test_child_in(tree_.path());
        // Every channel in one command: the child's probes, then bash's /dev/tcp.
        const std::string probes = "'" + child + "' net-probe " + std::to_string(tcp_port_) + " " +
                                   std::to_string(udp_port_) + " '" + unix_path_.string() + "' " +
                                   abstract_name_ + " '" + listed_path_.string() + "'";
        const std::string dev_tcp = "(exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(tcp_port_) +
                                    ") 2>/dev/null && echo 'ALLOWED dev-tcp' || echo 'DENIED "
                                    "dev-tcp'";
        request.argv = {"bash", "-c", probes + "; " + dev_tcp};
        request.mode = sandbox_mode::read_only;
        request.workspace_root = tree_.path();
        request.rules = test::rules_for(GetParam());
        request.rules.accept_partial = accept_partial;
        request.network = network;
        request.timeout = std::chrono::seconds(60);
        runtime::executor_options options;
        options.landlock_in_child = test::landlock_in_child(GetParam());
        return test::run_or_throw(provider_, std::move(request), std::move(options));
    }

    // Every channel of the probes refused, checked on the host too; the record says `policy`.
    void expect_every_channel_closed(const runtime::run_record& record, network_policy policy);

    static std::string describe(const runtime::run_record& record) {
        return "stdout: " + record.stdout_output.text + "\nstderr: " + record.stderr_output.text +
               "\nmessage: " + record.outcome.message;
    }

    test::temp_dir tree_{"/var/tmp", "cordon-net-test-"};
    fs::path unix_path_ = tree_ / "host.sock";
    fs::path listed_path_ = tree_ / "listed.sock";
    std::string abstract_name_ = "cordon-net-test-" + std::to_string(::getpid());
    host_socket tcp_{AF_INET, SOCK_STREAM};
    host_socket udp_{AF_INET, SOCK_DGRAM};
    host_socket unix_{AF_UNIX, SOCK_STREAM};
    host_socket unix_dgram_{AF_UNIX, SOCK_DGRAM};
    host_socket listed_{AF_UNIX, SOCK_STREAM};
    host_socket abstract_{AF_UNIX, SOCK_STREAM};
    int tcp_port_ = 0;
    int udp_port_ = 0;
    std::shared_ptr<local_provider> provider_;
    backend_kind kind_ = backend_kind::bwrap;
};

// Under proxy the walls are deny's: the proxy's port is the one way out, and these channels do
// not go through it.
TEST_P(NetworkPolicy, DenyAndProxyCloseEveryChannelOut) {
    for (const network_policy policy : {network_policy::deny, network_policy::proxy}) {
        SCOPED_TRACE(std::string(to_string(policy)));
        network_rules network;
        network.policy = policy;
        expect_every_channel_closed(run(network, false), policy);
    }
}

void NetworkPolicy::expect_every_channel_closed(const runtime::run_record& record,
                                                network_policy policy) {
    ASSERT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    const std::string& out = record.stdout_output.text;
    const std::vector<std::string> channels = {
        "tcp-connect",
        "raw-socket",
        "packet-socket",
        "vsock-socket",
        "ping-send",
        "unix-connect " + unix_path_.string(),
        "dgram-pair-sendto " + unix_path_.string() + ".dgram",
        "raw-pair-sendto " + unix_path_.string() + ".dgram",
        "abstract-connect @" + abstract_name_,
        "unix-connect " + listed_path_.string(),
        "dev-tcp"};
    // A datagram may leave the command's socket (into a loopback of its own, where nobody
    // listens): that it never arrives is checked on the host below.
    for (const std::string& what : channels) {
        EXPECT_THAT(out, HasSubstr("DENIED " + what)) << describe(record);
    }
    // socketpair() of a family other than AF_UNIX is refused by the filter, not only where the
    // kernel lacks it (AF_TIPC makes pairs of sockets no socket() rule sees).
    EXPECT_THAT(out, HasSubstr("DENIED tipc-pair EPERM")) << describe(record);
    // A run's own processes still talk over an unnamed pair.
    EXPECT_THAT(out, HasSubstr("ALLOWED socketpair")) << describe(record);
    // Checked on the host, not on the command's word.
    EXPECT_FALSE(tcp_.reached(true));
    EXPECT_FALSE(udp_.reached(false));
    EXPECT_FALSE(unix_.reached(true));
    EXPECT_FALSE(unix_dgram_.reached(false));
    EXPECT_FALSE(listed_.reached(true));
    EXPECT_FALSE(abstract_.reached(true));

    ASSERT_TRUE(record.sandbox.network.has_value());
    EXPECT_EQ(record.sandbox.network->policy, policy);
    EXPECT_EQ(record.sandbox.network->level, network_enforcement::full);
    const auto json = runtime::to_json(record.sandbox, &record.outcome);
    EXPECT_EQ(json["network"]["policy"], to_string(policy));
    EXPECT_EQ(json["network"]["enforcement"], "full");
    EXPECT_TRUE(json["network"]["missing"].empty());
}

TEST_P(NetworkPolicy, AListedHostSocketIsRefusedUnlessThePartialGapIsAccepted) {
    network_rules network;
    network.allow_unix_sockets = {listed_path_};
    try {
        const runtime::run_record ran = run(network, false);
        ADD_FAILURE() << "ran without --accept-partial: " << describe(ran);
    } catch (const sandbox_unavailable_error& error) {
        EXPECT_THAT(error.what(), HasSubstr("allow_unix_sockets")) << error.what();
        EXPECT_THAT(error.what(), HasSubstr("--accept-partial")) << error.what();
    }
    EXPECT_FALSE(listed_.reached(true));

    const runtime::run_record record = run(network, true);
    ASSERT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    const std::string& out = record.stdout_output.text;
    EXPECT_THAT(out, HasSubstr("ALLOWED unix-connect " + listed_path_.string()))
        << describe(record);
    EXPECT_TRUE(listed_.reached(true));
    // The rest of the network stays closed; the gap is named.
    EXPECT_THAT(out, HasSubstr("DENIED tcp-connect")) << describe(record);
    EXPECT_THAT(out, HasSubstr("DENIED dev-tcp")) << describe(record);
    EXPECT_FALSE(tcp_.reached(true));
    EXPECT_FALSE(udp_.reached(false));
    ASSERT_TRUE(record.sandbox.network.has_value());
    EXPECT_EQ(record.sandbox.network->level, network_enforcement::partial);
    EXPECT_THAT(record.sandbox.network->missing,
                Contains(HasSubstr("every host pathname unix socket")));
    EXPECT_EQ(record.sandbox.enforcement, std::optional<enforcement>(enforcement::partial));
}

TEST_P(NetworkPolicy, AllowReachesTheHostsLoopback) {
    network_rules network;
    network.policy = network_policy::allow;
    const runtime::run_record record = run(network, false);
    ASSERT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    EXPECT_THAT(record.stdout_output.text, HasSubstr("ALLOWED tcp-connect")) << describe(record);
    EXPECT_THAT(record.stdout_output.text, HasSubstr("ALLOWED dev-tcp")) << describe(record);
    EXPECT_TRUE(tcp_.reached(true));
    ASSERT_TRUE(record.sandbox.network.has_value());
    EXPECT_EQ(record.sandbox.network->policy, network_policy::allow);
    EXPECT_EQ(record.sandbox.network->level, network_enforcement::none);
    EXPECT_EQ(runtime::to_json(record.sandbox, &record.outcome)["network"]["enforcement"], "none");
}

// What the walls refuse is seen as it happens (the network witness), not read off what the
// command printed: a command that silences every stream is a network denial all the same, whose
// record names each destination it tried outside the sandbox, when and how often. A connection to
// the sandbox's own loopback is no refusal of the walls; nor does watching change what connects.
TEST_P(NetworkPolicy, TheWallsRecordWhatTheyRefuseWhateverTheCommandPrints) {
    for (const network_policy policy : {network_policy::deny, network_policy::proxy}) {
        SCOPED_TRACE(std::string(to_string(policy)));
        runtime::run_request request;
        const std::string loopback = std::to_string(tcp_port_);
        request.argv = {"bash", "-c",
                        "exec >/dev/null 2>&1; "
                        "for i in 1 2; do (exec 3<>/dev/tcp/93.184.216.34/80); done; "
                        "(exec 3<>/dev/tcp/2606:4700::1111/443); "
                        "(exec 3<>/dev/tcp/127.0.0.1/" +
                            loopback +
                            "); "
                            "(exec 3<>/dev/tcp/0.0.0.0/" +
                            loopback + "); exit 3"};
        request.mode = sandbox_mode::read_only;
        request.workspace_root = tree_.path();
        request.rules = test::rules_for(GetParam());
        request.network.policy = policy;
        request.timeout = std::chrono::seconds(60);
        runtime::executor_options options;
        options.landlock_in_child = test::landlock_in_child(GetParam());
        const runtime::run_record record =
            test::run_or_throw(provider_, std::move(request), std::move(options));
        EXPECT_EQ(record.outcome.exit_code, std::optional<int>(3)) << describe(record);
        EXPECT_EQ(record.stdout_output.text + record.stderr_output.text, "");
        EXPECT_TRUE(record.sandbox.denied);
        EXPECT_TRUE(record.sandbox.network_denied);
        ASSERT_TRUE(record.sandbox.network.has_value());
        const auto& blocked = record.sandbox.network->blocked;
        ASSERT_EQ(blocked.size(), 2U) << runtime::to_json(record.sandbox, &record.outcome).dump();
        EXPECT_EQ(blocked[0].destination, "93.184.216.34:80");
        EXPECT_EQ(blocked[0].count, 2U);
        EXPECT_EQ(blocked[1].destination, "[2606:4700::1111]:443");
        EXPECT_EQ(blocked[1].count, 1U);
        for (const auto& each : blocked) {
            EXPECT_TRUE(each.by_walls);
            EXPECT_EQ(each.reason, "a direct connection, refused by the network walls");
            EXPECT_LE(each.first_at, std::chrono::milliseconds(60'000));
        }
        EXPECT_LE(blocked[0].first_at, blocked[1].first_at);
        const auto json = runtime::to_json(record.sandbox, &record.outcome);
        EXPECT_EQ(json["denial"], "network");
        EXPECT_EQ(json["network"]["blocked"][0]["by"], "walls");
        EXPECT_THAT(runtime::render_markers(record),
                    HasSubstr("[sandbox: network access to 93.184.216.34:80 (a direct connection, "
                              "refused by the network walls), [2606:4700::1111]:443"));
        // The host's side: nothing arrived.
        EXPECT_FALSE(tcp_.reached(true));
    }
}

// However a connect is written (an IPv6 address of 24 bytes, a length with high bits the kernel
// ignores), and however many arrive at once (the listener wakes the loop once for several): each
// is seen, and none waits for an answer that never comes.
TEST_P(NetworkPolicy, TheWitnessSeesEveryConnectAndHoldsNone) {
    runtime::run_request request;
    request.argv = {test::test_child_in(tree_.path()), "odd-connects", "24"};
    request.mode = sandbox_mode::read_only;
    request.workspace_root = tree_.path();
    request.rules = test::rules_for(GetParam());
    request.network.policy = network_policy::deny;
    request.timeout = std::chrono::seconds(60);
    runtime::executor_options options;
    options.landlock_in_child = test::landlock_in_child(GetParam());
    const runtime::run_record record =
        test::run_or_throw(provider_, std::move(request), std::move(options));
    EXPECT_EQ(record.outcome.kind, runtime::outcome_kind::exited) << describe(record);
    EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    ASSERT_TRUE(record.sandbox.network.has_value());
    std::map<std::string, std::uint64_t> seen;
    for (const auto& each : record.sandbox.network->blocked)
        seen[each.destination] = each.count;
    const std::map<std::string, std::uint64_t> expected = {
        {"[2606:4700::1112]:81", 1}, {"93.184.216.35:82", 1}, {"93.184.216.36:83", 24}};
    EXPECT_EQ(seen, expected) << runtime::to_json(record.sandbox, &record.outcome).dump();
}

// What the walls refused lets a hint offer the whole network only for another host's public
// address, or the host's own name server on port 53 (a lookup under deny tries it first): never
// for link-local (cloud metadata) on port 53 or any other.
TEST_P(NetworkPolicy, OnlyAnotherHostsAddressOrTheNameServerIsAskable) {
    std::string name_server;
    std::ifstream resolv("/etc/resolv.conf");
    for (std::string key, value; resolv >> key;) {
        if (key == "nameserver" && (resolv >> value) && value.find(':') == std::string::npos &&
            !value.starts_with("127.")) {
            name_server = value;
            break;
        }
    }
    std::string command =
        "exec 2>/dev/null; (exec 3<>/dev/tcp/169.254.169.254/53); "
        "(exec 3<>/dev/tcp/93.184.216.34/443)";
    if (!name_server.empty()) command += "; (exec 3<>/dev/tcp/" + name_server + "/53)";
    runtime::run_request request;
    request.argv = {"bash", "-c", command + "; exit 1"};
    request.mode = sandbox_mode::read_only;
    request.workspace_root = tree_.path();
    request.rules = test::rules_for(GetParam());
    request.network.policy = network_policy::deny;
    request.timeout = std::chrono::seconds(60);
    runtime::executor_options options;
    options.landlock_in_child = test::landlock_in_child(GetParam());
    const runtime::run_record record =
        test::run_or_throw(provider_, std::move(request), std::move(options));
    ASSERT_TRUE(record.sandbox.network.has_value());
    std::map<std::string, bool> askable;
    for (const auto& each : record.sandbox.network->blocked)
        askable[each.destination] = each.askable;
    EXPECT_EQ(askable["169.254.169.254:53"], false);
    EXPECT_EQ(askable["93.184.216.34:443"], true);
    if (!name_server.empty()) {
        EXPECT_EQ(askable[name_server + ":53"], true);
    }
    EXPECT_EQ(askable.size(), name_server.empty() ? 2U : 3U);
    EXPECT_FALSE(runtime::network_retry_after(record.sandbox).whole_network);
}

INSTANTIATE_TEST_SUITE_P(Backends, NetworkPolicy, test::all_real_backends(),
                         test::real_backend_name);

}  // namespace
}  // namespace cordon::sandbox
