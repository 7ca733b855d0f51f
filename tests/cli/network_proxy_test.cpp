// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The network proxy tried as a new user would (issue's "done when"): `cordon run` of curl under the
// default policy is a network denial naming the domain; under `--network proxy` a name the
// configuration maps to a server this test runs on loopback is reached when allowed and refused
// (a 403 naming it, counted in the record) when not; `--json` says what was blocked. Never an
// outside address: example.com is refused before any lookup in both policies.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "support.hpp"
#include "support/cordon_cli.hpp"
#include "support/http_test_server.hpp"

namespace cordon::cli {
namespace {

namespace fs = std::filesystem;
using test::cli_result;

class NetworkProxyCli : public ::testing::Test {
protected:
    void SetUp() override {
        for (const fs::path& dir : {etc_, ws_}) {
            fs::create_directory(dir);
            fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read |
                                     fs::perms::group_exec | fs::perms::others_read |
                                     fs::perms::others_exec);
        }
        // The resolver the test controls: the operator's mapping, trusted as written.
        test::write_file(etc_ / "config.toml",
                         "proxy_resolve = { \"localtest.example\" = \"127.0.0.1\" }\n",
                         fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                             fs::perms::others_read);
    }
    cli_result cordon(const std::vector<std::string>& args) {
        return test::run_cordon(args, ws_, {},
                                {{"CORDON_CONFIG_DIRS", etc_.string()}, {"XDG_CONFIG_HOME", {}}});
    }
    std::string local_url() const {
        return "http://localtest.example:" + std::to_string(server_.port()) + "/";
    }

    test::temp_dir scratch_{"/var/tmp", "cordon-proxy-cli-test-"};
    fs::path etc_ = scratch_.path() / "etc";
    fs::path ws_ = scratch_.path() / "ws";
    test::http_test_server server_;
};

TEST_F(NetworkProxyCli, TheDefaultPolicyDeniesTheNetworkAndNamesTheDomain) {
    const cli_result result = cordon({"run", "--json", "-c", "curl -sS https://example.com"});
    ASSERT_EQ(result.exit_code, 6) << result.err;
    const auto record = nlohmann::json::parse(result.out);
    EXPECT_EQ(record["sandbox"]["denied"], true);
    EXPECT_EQ(record["sandbox"]["denial"], "network");
    EXPECT_EQ(record["sandbox"]["network"]["policy"], "deny");
    EXPECT_NE(
        record["stderr"]["text"].get<std::string>().find("Could not resolve host: example.com"),
        std::string::npos)
        << result.out;
}

TEST_F(NetworkProxyCli, AnAllowedNameIsReachedAndAnUnlistedOneRefused) {
    const cli_result reached = cordon({"run", "--network", "proxy", "--allow-domain",
                                       "localtest.example", "-c", "curl -sS " + local_url()});
    EXPECT_EQ(reached.exit_code, 0) << reached.err;
    EXPECT_EQ(reached.out, "hello from the test server\n") << reached.err;
    EXPECT_EQ(server_.requests(), 1);

    // The same without --allow-domain: the proxy answers for the server, naming what to ask for.
    const cli_result refused =
        cordon({"run", "--network", "proxy", "-c", "curl -sS " + local_url()});
    EXPECT_EQ(refused.exit_code, 0) << refused.err;
    EXPECT_EQ(refused.out,
              "cordon: network access to localtest.example:" + std::to_string(server_.port()) +
                  " is blocked by this run's network policy (not in allowed_domains); "
                  "ask for it with --allow-domain localtest.example:" +
                  std::to_string(server_.port()) + " or an escalation\n");
    EXPECT_EQ(server_.requests(), 1);

    // A TLS client learns nothing of the body: the record and the marker name the destination.
    const cli_result tls = cordon({"run", "--network", "proxy", "--allow-domain",
                                   "localtest.example", "-c", "curl -sS https://example.com"});
    EXPECT_EQ(tls.exit_code, 56) << tls.err;
    EXPECT_NE(tls.err.find("[sandbox: network access to example.com:443 (not in "
                           "allowed_domains) blocked under read-only mode, network proxy]"),
              std::string::npos)
        << tls.err;
    const cli_result json = cordon({"run", "--json", "--network", "proxy", "--allow-domain",
                                    "localtest.example", "-c", "curl -sS https://example.com"});
    const auto record = nlohmann::json::parse(json.out);
    EXPECT_EQ(record["sandbox"]["denial"], "network");
    EXPECT_EQ(record["sandbox"]["network"]["allowedDomains"],
              nlohmann::json::array({"localtest.example"}));
    auto blocked = record["sandbox"]["network"]["blocked"];
    ASSERT_EQ(blocked.size(), 1U) << blocked;
    // When: from when cordon set the run up (the proxy's session opens just before the spawn,
    // so it may exceed durationMs by that much), within the run's timeout.
    EXPECT_TRUE(blocked[0]["firstAtMs"].is_number_unsigned()) << blocked;
    EXPECT_LT(blocked[0]["firstAtMs"].get<std::int64_t>(), record["timeoutMs"].get<std::int64_t>());
    blocked[0].erase("firstAtMs");
    EXPECT_EQ(blocked, nlohmann::json::parse(R"([{"destination": "example.com:443",
                                                  "reason": "not in allowed_domains",
                                                  "count": 1, "askable": true,
                                                  "by": "proxy"}])"));
}

// `cordon confine` prints an argv for someone else to spawn, who has no proxy to give it: refused
// rather than printed to run without network.
TEST_F(NetworkProxyCli, ConfineRefusesAProxiedArgv) {
    const cli_result result = cordon(
        {"confine", "--mode", "read-only", "--allow-domain", "localtest.example", "--", "true"});
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err,
              "cordon confine: network proxy needs cordon's proxy, which only cordon run and "
              "cordon mcp start; a printed argv would have no network at all\n");
}

// Nor does it ask for the network witness: whoever spawns the argv serves no listener, and every
// connect of the command would wait for an answer.
TEST_F(NetworkProxyCli, ConfineAsksForNoWitness) {
    const cli_result result = cordon({"confine", "--mode", "read-only", "--", "true"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("--deny-unix-sockets"), std::string::npos) << result.out;
    EXPECT_EQ(result.out.find("--witness-fd"), std::string::npos) << result.out;
}

}  // namespace
}  // namespace cordon::cli
