// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// A slow DNS zone, for real: `cordon run --network proxy` whose proxy asks the system's resolver
// (getaddrinfo) about a name the name server never answers. The test runs cordon in a network and
// mount namespace of its own (a thread of the test unshares them and spawns cordon, which inherits
// them): loopback up, /etc/resolv.conf bind-mounted over with `nameserver 127.0.0.1` and
// `options timeout:30 attempts:1` (and /etc/nsswitch.conf with `hosts: files dns`), and a UDP
// socket on 127.0.0.1:53 that reads nothing and answers nothing. The lookup's deadline answers
// curl (502), the run's timeout ends the run, and cordon exits with its record without waiting
// for the lookup (it used to wait the resolver's 30 s).
#include <gtest/gtest.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "support.hpp"
#include "support/cordon_cli.hpp"

namespace cordon::cli {
namespace {

namespace fs = std::filesystem;

// Sets up the private namespaces on the calling thread; "" or why it could not.
std::string private_network(const fs::path& resolv_conf, const fs::path& nsswitch_conf,
                            unique_fd& name_server) {
    if (::unshare(CLONE_NEWNS | CLONE_NEWNET) != 0) {
        return std::string("unshare(CLONE_NEWNS | CLONE_NEWNET): ") + std::strerror(errno);
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        return std::string("making / private: ") + std::strerror(errno);
    }
    if (::mount(resolv_conf.c_str(), "/etc/resolv.conf", nullptr, MS_BIND, nullptr) != 0) {
        return std::string("bind-mounting /etc/resolv.conf: ") + std::strerror(errno);
    }
    // Names go to DNS, not to a local resolver over a unix socket (systemd-resolved, nscd), which
    // a network namespace does not separate.
    if (::mount(nsswitch_conf.c_str(), "/etc/nsswitch.conf", nullptr, MS_BIND, nullptr) != 0) {
        return std::string("bind-mounting /etc/nsswitch.conf: ") + std::strerror(errno);
    }
    const unique_fd control(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    ifreq loopback{};
    std::strncpy(loopback.ifr_name, "lo", IFNAMSIZ - 1);
    if (!control || ::ioctl(control.get(), SIOCGIFFLAGS, &loopback) != 0) {
        return std::string("reading lo's flags: ") + std::strerror(errno);
    }
    loopback.ifr_flags = static_cast<short>(loopback.ifr_flags | IFF_UP);
    if (::ioctl(control.get(), SIOCSIFFLAGS, &loopback) != 0) {
        return std::string("bringing lo up: ") + std::strerror(errno);
    }
    name_server.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(53);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (!name_server || ::bind(name_server.get(), reinterpret_cast<const sockaddr*>(&address),
                               sizeof address) != 0) {
        return std::string("binding 127.0.0.1:53: ") + std::strerror(errno);
    }
    return {};
}

// Whether a query for slow.test reached the name server (it is never answered).
bool asked_about_slow_test(int name_server) {
    const std::string label("\x04slow\x04test", 10);
    std::string datagram(512, '\0');
    for (;;) {
        const ssize_t got = ::recv(name_server, datagram.data(), datagram.size(), 0);
        if (got <= 0) return false;
        if (std::string_view(datagram.data(), static_cast<std::size_t>(got)).find(label) !=
            std::string_view::npos) {
            return true;
        }
    }
}

TEST(SlowDnsZone, ARunsTimeoutEndsItWithoutWaitingForTheLookup) {
    if (::geteuid() != 0) CORDON_SKIP_OR_FAIL("needs root for a private network namespace");
    const test::temp_dir scratch("/var/tmp", "cordon-slow-dns-test-");
    const fs::path etc = scratch.path() / "etc";
    const fs::path ws = scratch.path() / "ws";
    fs::create_directory(etc);
    fs::create_directory(ws);
    test::write_file(scratch.path() / "resolv.conf",
                     "nameserver 127.0.0.1\noptions timeout:30 attempts:1\n");
    test::write_file(scratch.path() / "nsswitch.conf", "hosts: files dns\n");

    // Namespaces are a thread's: this one's, and the cordon it spawns.
    std::string unavailable;
    bool asked = false;
    test::cli_result result;
    std::chrono::steady_clock::duration took{};
    std::thread([&] {
        unique_fd name_server;
        unavailable = private_network(scratch.path() / "resolv.conf",
                                      scratch.path() / "nsswitch.conf", name_server);
        if (!unavailable.empty()) return;
        const auto started = std::chrono::steady_clock::now();
        result = test::run_cordon(
            {"run", "--json", "--timeout", "6s", "--network", "proxy", "--allow-domain",
             "slow.test", "-c", "curl -sS --max-time 60 https://slow.test/; sleep 60"},
            ws, {}, {{"CORDON_CONFIG_DIRS", etc.string()}, {"XDG_CONFIG_HOME", {}}});
        took = std::chrono::steady_clock::now() - started;
        asked = asked_about_slow_test(name_server.get());
    }).join();
    if (!unavailable.empty()) CORDON_SKIP_OR_FAIL(unavailable);

    // The resolver would answer after 30 s: well before it, the run's timeout ended the run.
    EXPECT_LT(took, std::chrono::seconds(25)) << "cordon waited for the lookup";
    EXPECT_TRUE(asked) << "the proxy's lookup never reached the test's name server";
    EXPECT_EQ(result.exit_code, 124) << result.err;
    const auto record = nlohmann::json::parse(result.out, nullptr, false);
    ASSERT_FALSE(record.is_discarded()) << result.out << result.err;
    EXPECT_EQ(record["timedOut"], true) << result.out;
    // The lookup's own deadline answered the client first, within the run.
    EXPECT_NE(record["stderr"]["text"].get<std::string>().find("502"), std::string::npos)
        << result.out;
}

}  // namespace
}  // namespace cordon::cli
