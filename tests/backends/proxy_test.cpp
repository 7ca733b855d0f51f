// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The network proxy on the real runners (bwrap, and the Landlock rung in a namespace of its own):
// a command reaches an allowed name through the proxy over HTTP, CONNECT and SOCKS5, is refused
// a name the allow list does not hold (a 403 naming it) and gets nothing when it ignores the
// proxy; the record lists what was refused and makes the failure a network denial. The allowed
// name is mapped to a server this test runs on the host's loopback (network_rules::proxy_resolve):
// never an outside address, and no DNS query.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <stdexcept>
#include <string>

#include "cordon/executor.hpp"
#include "cordon/record_json.hpp"
#include "cordon/sandbox_error.hpp"
#include "proxy/service.hpp"
#include "real_backend.hpp"
#include "run_or_throw.hpp"
#include "runtime/render.hpp"
#include "runtime/runtime_test_util.hpp"
#include "sandbox/local_provider.hpp"
#include "support.hpp"
#include "support/http_test_server.hpp"

namespace cordon::sandbox {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class ProxyPolicy : public ::testing::TestWithParam<test::real_backend> {
protected:
    void SetUp() override {
        std::string why;
        provider_ = test::provider_for(test::choice_of(GetParam()), why);
        if (!provider_) CORDON_SKIP_OR_FAIL(why);
        if (provider_->selected()->kind == backend_kind::landlock && ::geteuid() != 0) {
            CORDON_SKIP_OR_FAIL("the Landlock rung makes a network namespace only as root");
        }
    }

    network_rules proxied() const {
        network_rules out;
        out.policy = network_policy::proxy;
        out.allowed_domains = {"localtest.example", "*.wild.example", "denied.wild.example",
                               "localhost"};
        out.denied_domains = {"denied.wild.example"};
        for (const char* name :
             {"localtest.example", "a.wild.example", "denied.wild.example", "unlisted.example"}) {
            out.proxy_resolve.push_back({name, "127.0.0.1"});
        }
        return out;
    }

    [[nodiscard]] runtime::run_record run(const std::string& script, const network_rules& rules) {
        runtime::run_request request;
        request.argv = {"bash", "-c", script};
        request.mode = sandbox_mode::read_only;
        request.workspace_root = tree_.path();
        request.rules = test::rules_for(GetParam());
        request.network = rules;
        request.timeout = std::chrono::seconds(60);
        runtime::executor_options options;
        options.landlock_in_child = test::landlock_in_child(GetParam());
        options.proxy = proxy_;
        return test::run_or_throw(provider_, std::move(request), std::move(options));
    }

    std::string url(std::string_view host) const {
        return "http://" + std::string(host) + ":" + std::to_string(server_.port()) + "/";
    }

    static std::string describe(const runtime::run_record& record) {
        return "stdout: " + record.stdout_output.text + "\nstderr: " + record.stderr_output.text +
               "\nmessage: " + record.outcome.message;
    }

    test::temp_dir tree_{"/var/tmp", "cordon-proxy-test-"};
    test::http_test_server server_;
    std::shared_ptr<proxy::service> proxy_ = std::make_shared<proxy::service>();
    std::shared_ptr<local_provider> provider_;
};

// Every way through the proxy reaches the allowed name, and only the proxy: the server counts
// each request the command made through it and none other.
TEST_P(ProxyPolicy, AnAllowedNameIsReachedOverHttpConnectAndSocks) {
    const std::string script =
        "curl -sS --max-time 30 " + url("localtest.example") + "; curl -sS --max-time 30 -p " +
        url("a.wild.example") + "; curl -sS --max-time 30 --proxy socks5h://127.0.0.1:3128 " +
        url("localtest.example") + "; env | grep -c '^[A-Za-z_]*[pP][rR][oO][xX][yY]='";
    const runtime::run_record record = run(script, proxied());
    ASSERT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    EXPECT_EQ(record.stdout_output.text,
              "hello from the test server\nhello from the test server\n"
              "hello from the test server\n8\n")
        << describe(record);
    EXPECT_EQ(server_.requests(), 3);
    EXPECT_FALSE(record.sandbox.denied);
    ASSERT_TRUE(record.sandbox.network.has_value());
    EXPECT_EQ(record.sandbox.network->policy, network_policy::proxy);
    EXPECT_EQ(record.sandbox.network->level, network_enforcement::full);
    EXPECT_TRUE(record.sandbox.network->blocked.empty());
    const auto json = runtime::to_json(record.sandbox, &record.outcome);
    EXPECT_EQ(json["network"]["policy"], "proxy");
    EXPECT_EQ(json["network"]["allowedDomains"].size(), 4u);
    EXPECT_EQ(json["network"]["deniedDomains"][0], "denied.wild.example");
    EXPECT_TRUE(json["network"]["blocked"].empty());
    EXPECT_TRUE(json["network"]["proxyFailure"].is_null());
}

// A name the allow list does not hold, one the deny list holds (over a wildcard that allows it),
// and a client that ignores the proxy: none reaches the server. The refusals are the record's,
// and the command's failure is a denial of the network's that names them.
TEST_P(ProxyPolicy, WhatIsNotAllowedIsRefusedAndRecorded) {
    const std::string port = std::to_string(server_.port());
    const std::string script = "curl -sS --max-time 30 " + url("unlisted.example") +
                               "; curl -sS --max-time 30 " + url("denied.wild.example") +
                               "; curl -sS --max-time 30 --noproxy '' " + url("localhost") +
                               "; curl -sS --max-time 30 --noproxy '*' http://127.0.0.1:" + port +
                               "/ 2>&1 | grep -q 'Failed to connect' && echo direct refused"
                               "; curl -sS --max-time 30 -f " +
                               url("unlisted.example");
    const runtime::run_record record = run(script, proxied());
    EXPECT_EQ(record.outcome.exit_code, std::optional<int>(22)) << describe(record);
    EXPECT_EQ(server_.requests(), 0);
    const std::string& out = record.stdout_output.text;
    EXPECT_THAT(out, HasSubstr("cordon: network access to unlisted.example:" + port +
                               " is blocked by this run's network policy (not in "
                               "allowed_domains)"))
        << describe(record);
    EXPECT_THAT(out, HasSubstr("cordon: network access to denied.wild.example:" + port))
        << describe(record);
    // Allowed, but the system's resolver maps it to loopback: never the host's own services.
    EXPECT_THAT(out, HasSubstr("cordon: network access to localhost:" + port)) << describe(record);
    EXPECT_THAT(out, HasSubstr("direct refused")) << describe(record);
    EXPECT_THAT(out, Not(HasSubstr("hello from the test server")));

    EXPECT_TRUE(record.sandbox.denied);
    EXPECT_TRUE(record.sandbox.network_denied);
    ASSERT_TRUE(record.sandbox.network.has_value());
    const auto& blocked = record.sandbox.network->blocked;
    ASSERT_EQ(blocked.size(), 3u) << describe(record);
    EXPECT_EQ(blocked[0].destination, "unlisted.example:" + port);
    EXPECT_EQ(blocked[0].reason, "not in allowed_domains");
    EXPECT_EQ(blocked[0].count, 2u);
    EXPECT_EQ(blocked[1].destination, "denied.wild.example:" + port);
    EXPECT_EQ(blocked[1].reason, "in denied_domains");
    EXPECT_EQ(blocked[1].count, 1u);
    EXPECT_EQ(blocked[2].destination, "localhost:" + port);
    EXPECT_THAT(blocked[2].reason, HasSubstr("resolves to a private address (127.0.0.1"));
    const auto json = runtime::to_json(record.sandbox, &record.outcome);
    EXPECT_EQ(json["denial"], "network");
    EXPECT_EQ(json["network"]["blocked"][0]["destination"], "unlisted.example:" + port);
    EXPECT_EQ(json["network"]["blocked"][0]["count"], 2);
    EXPECT_EQ(json["network"]["blockedMore"], 0);
    EXPECT_THAT(runtime::render_markers(record),
                HasSubstr("[sandbox: network access to unlisted.example:" + port +
                          " (not in allowed_domains), denied.wild.example:" + port +
                          " (in denied_domains), localhost:" + port + " ("));
}

// A resolver whose answer throws on the proxy's thread: the proxy dies mid-run.
class exploding_resolver : public proxy::resolver {
public:
    void async_resolve(const std::string& name, std::shared_ptr<lookup> pending) override {
        boost::asio::post(pending->executor(), [name] {
            throw std::runtime_error("the test's resolver exploded on " + name);
        });
    }
};

// A proxy that dies while a run is under way fails it closed: what went through before went
// through, nothing goes out afterwards (not even to a name that was reachable a moment ago), and
// the record and the markers say why.
TEST_P(ProxyPolicy, AProxyThatDiesMidRunLeavesTheRunWithoutNetwork) {
    proxy_ = std::make_shared<proxy::service>(std::make_shared<exploding_resolver>());
    network_rules rules = proxied();
    rules.allowed_domains.emplace_back("explode.example");
    const std::string script = "curl -sS --max-time 30 " + url("localtest.example") +
                               "; curl -sS --max-time 30 " + url("explode.example") +
                               "; curl -sS --max-time 30 " + url("localtest.example") +
                               " || echo 'no network after the proxy died'";
    const runtime::run_record record = run(script, rules);
    EXPECT_EQ(record.outcome.exit_code, std::optional<int>(0)) << describe(record);
    EXPECT_EQ(record.stdout_output.text,
              "hello from the test server\nno network after the proxy died\n")
        << describe(record);
    EXPECT_EQ(server_.requests(), 1);
    ASSERT_TRUE(record.sandbox.network.has_value());
    ASSERT_TRUE(record.sandbox.network->proxy_failure.has_value()) << describe(record);
    EXPECT_THAT(*record.sandbox.network->proxy_failure,
                HasSubstr("the test's resolver exploded on explode.example"));
    EXPECT_THAT(runtime::to_json(record.sandbox, &record.outcome)["network"]["proxyFailure"],
                ::testing::Ne(nullptr));
    EXPECT_THAT(runtime::render_markers(record),
                HasSubstr("[sandbox: the network proxy stopped during the run (the proxy's thread "
                          "failed: the test's resolver exploded on explode.example)"));
}

// The Landlock rung and bwrap both run the forwarder in the launcher; the in-child path has no
// launcher process, so a proxied run takes the launcher's path on it too.
INSTANTIATE_TEST_SUITE_P(Backends, ProxyPolicy,
                         ::testing::Values(test::real_backend::bwrap, test::real_backend::landlock),
                         test::real_backend_name);

}  // namespace
}  // namespace cordon::sandbox
