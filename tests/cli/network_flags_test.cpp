// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The network policy as users set it (docs/network.md): --network, --allow-unix-socket and
// --allow-local-binding, the configuration's keys with the precedence of every other key (flag,
// profile, file, default), each bad value one line and exit 2, and the value reaching the run's
// policy (proven by what the escalation of the network says, which reads it) and the session log.
// The kernel's refusal under deny is the backends' to test, not these.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cordon/policy.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"

namespace cordon::cli {
namespace {

namespace fs = std::filesystem;
using test::cli_result;
using test::run_cordon;
using test::temp_dir;

// A listening unix socket at `path`, for as long as the object lives.
class unix_listener {
public:
    explicit unix_listener(const fs::path& path) {
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
        EXPECT_EQ(::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0)
            << std::strerror(errno);
    }
    ~unix_listener() { ::close(fd_); }
    unix_listener(const unix_listener&) = delete;
    unix_listener& operator=(const unix_listener&) = delete;

private:
    int fd_ = -1;
};

class NetworkFlags : public ::testing::Test {
protected:
    void SetUp() override {
        for (const fs::path& dir : {etc_, ws_}) {
            fs::create_directory(dir);
            fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read |
                                     fs::perms::group_exec | fs::perms::others_read |
                                     fs::perms::others_exec);
        }
    }
    void write_config(const std::string& text) {
        test::write_file(etc_ / "config.toml", text,
                         fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                             fs::perms::others_read);
    }
    cli_result cordon(const std::vector<std::string>& args) {
        return run_cordon(args, ws_, {}, {{"CORDON_CONFIG_DIRS", etc_.string()}});
    }
    nlohmann::json settings(std::vector<std::string> args = {}) {
        args.insert(args.begin(), {"config", "show", "--json"});
        const cli_result result = cordon(args);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        return nlohmann::json::parse(result.out)["settings"];
    }

    temp_dir scratch_{"/var/tmp", "cordon-network-test-"};
    fs::path etc_ = scratch_.path() / "etc";
    fs::path ws_ = scratch_.path() / "ws";
};

// The flags as `cordon config show` reports what they made: a socket named twice (through a
// "." and as itself) is one entry, resolved; each bad socket is one line and exit 2.
TEST_F(NetworkFlags, TheFlagsResolveAndCheckEverySocket) {
    const fs::path socket = scratch_.path() / "agent.sock";
    unix_listener listening(socket);
    auto shown = settings({"--network", "allow", "--allow-local-binding", "--allow-unix-socket",
                           socket.string(), "--allow-unix-socket",
                           (scratch_.path() / "." / "agent.sock").string()});
    EXPECT_EQ(shown["network"], nlohmann::json({{"value", "allow"}, {"source", "flag"}}));
    EXPECT_EQ(shown["allow_local_binding"], nlohmann::json({{"value", true}, {"source", "flag"}}));
    ASSERT_EQ(shown["allow_unix_sockets"].size(), 1u);
    EXPECT_EQ(shown["allow_unix_sockets"][0]["value"], sandbox::canonical_path(socket).string());

    const std::string plain = (scratch_.path() / "plain").string();
    std::ofstream(plain) << "x";
    for (const auto& [given, message] : std::vector<std::pair<std::string, std::string>>{
             {plain, "--allow-unix-socket " + plain + " is not a socket"},
             {"", "--allow-unix-socket needs a path"},
             {"missing.sock", "--allow-unix-socket missing.sock does not exist"}}) {
        for (const std::string command : {"run", "mcp"}) {
            std::vector<std::string> args{command, "--allow-unix-socket", given};
            if (command == "run") args.insert(args.end(), {"--", "true"});
            const cli_result result = cordon(args);
            EXPECT_EQ(result.exit_code, exit_usage);
            EXPECT_EQ(result.err, "cordon " + command + ": " + message + "\n");
        }
    }
}

// Flag over profile over file over default, each with its origin in `cordon config show`.
TEST_F(NetworkFlags, TheKeysFollowThePrecedenceOfEveryOtherKey) {
    const fs::path one = scratch_.path() / "one.sock";
    const fs::path two = scratch_.path() / "two.sock";
    unix_listener first(one);
    unix_listener second(two);
    auto shown = settings();
    EXPECT_EQ(shown["network"], nlohmann::json({{"value", "deny"}, {"source", "default"}}));
    EXPECT_EQ(shown["allow_local_binding"]["value"], false);
    EXPECT_EQ(shown["allow_unix_sockets"], nlohmann::json::array());

    const std::string file = (etc_ / "config.toml").string();
    write_config("network = \"allow\"\nallow_unix_sockets = [\"" + one.string() +
                 "\"]\n[profile.ci]\nnetwork = \"deny\"\nallow_local_binding = true\n");
    shown = settings();
    EXPECT_EQ(shown["network"],
              nlohmann::json({{"value", "allow"}, {"source", "file"}, {"file", file}}));
    EXPECT_EQ(shown["allow_unix_sockets"][0]["value"], one.string());
    EXPECT_EQ(shown["allow_unix_sockets"][0]["source"], "file");
    EXPECT_EQ(shown["allow_local_binding"]["value"], false);

    shown = settings({"--profile", "ci"});
    EXPECT_EQ(shown["network"]["value"], "deny");
    EXPECT_EQ(shown["network"]["source"], "profile");
    EXPECT_EQ(shown["allow_local_binding"]["value"], true);

    shown =
        settings({"--profile", "ci", "--network", "allow", "--allow-unix-socket", two.string()});
    EXPECT_EQ(shown["network"], nlohmann::json({{"value", "allow"}, {"source", "flag"}}));
    ASSERT_EQ(shown["allow_unix_sockets"].size(), 2u);
    EXPECT_EQ(shown["allow_unix_sockets"][1]["value"], two.string());
    EXPECT_EQ(shown["allow_unix_sockets"][1]["source"], "flag");

    // The TOML rendering: a string and a boolean, as a file would hold them.
    const cli_result toml = cordon({"config", "show", "--profile", "ci"});
    EXPECT_NE(toml.out.find("network = \"deny\""), std::string::npos) << toml.out;
    EXPECT_NE(toml.out.find("allow_local_binding = true"), std::string::npos) << toml.out;
}

TEST_F(NetworkFlags, EachBadKeyIsOneLineNamingTheFileAndTheKey) {
    const std::string file = (etc_ / "config.toml").string();
    const std::vector<std::pair<std::string, std::string>> cases{
        {"network = \"open\"\n",
         file + ":1: network: invalid network \"open\" (deny, proxy or allow)"},
        {"network = true\n", file + ":1: network: expected a string, not a boolean"},
        {"allow_local_binding = \"yes\"\n",
         file + ":1: allow_local_binding: expected true or false, not a string"},
        {"allow_unix_sockets = [\"run/x.sock\"]\n",
         file + ":1: allow_unix_sockets: \"run/x.sock\" is not an absolute path (nor one under "
                "~/)"},
        {"allow_unix_sockets = [\"/no/such.sock\"]\n",
         file + ": allow_unix_sockets /no/such.sock does not exist"},
    };
    for (const auto& [text, message] : cases) {
        write_config(text);
        const cli_result result = cordon({"run", "--", "true"});
        EXPECT_EQ(result.exit_code, exit_usage) << text;
        EXPECT_EQ(result.err, "cordon run: " + message + "\n");
    }
}

// The policy reaches the run: an escalation of the network reads the run's own and refuses to
// ask for what it already has; the default (deny) is asked about, and the session log records
// the network beside the mode. `--approval never` decides without a terminal.
TEST_F(NetworkFlags, ThePolicyReachesTheRunAndTheSessionLog) {
    const std::vector<std::string> escalate{"--escalate-network", "allow", "--justification",
                                            "fetch the dependencies"};
    const auto run = [&](std::vector<std::string> args) {
        args.insert(args.begin(), "run");
        args.insert(args.end(), escalate.begin(), escalate.end());
        args.insert(args.end(), {"--", "true"});
        return cordon(args);
    };
    const std::string not_wider =
        "cordon run: sandbox escalation to network \"allow\" is not wider than this call's "
        "current network \"allow\"\n";
    EXPECT_EQ(run({"--network", "allow"}).err, not_wider);
    EXPECT_EQ(run({"--mode", "danger-full-access"}).err, not_wider)
        << "danger-full-access has the host's network";
    write_config("network = \"allow\"\n");
    EXPECT_EQ(run({}).err, not_wider);
    EXPECT_EQ(run({"--network", "deny", "--approval", "never"}).exit_code, exit_not_approved);

    write_config("");
    const fs::path log = scratch_.path() / "session.jsonl";
    const cli_result asked = run({"--approval", "never", "--session", log.string()});
    EXPECT_EQ(asked.exit_code, exit_not_approved);
    EXPECT_EQ(asked.err,
              "cordon run: the user rejected escalating this command to network \"allow\" (the "
              "approval policy is \"never\": nobody was asked)\n");
    std::ifstream lines(log);
    std::string line;
    bool recorded = false;
    while (std::getline(lines, line)) {
        const auto event = nlohmann::json::parse(line);
        if (event["type"] != "approval/asked") continue;
        EXPECT_EQ(event["mode"], "read-only");
        EXPECT_EQ(event["network"], "allow");
        EXPECT_EQ(event["network_from"], "deny");
        recorded = true;
    }
    EXPECT_TRUE(recorded);
}

// The proxy's flags as `cordon config show` reports what they made: each domain in its canonical
// text, once; --allow-domain alone makes the network proxy; a later --proxy-resolve for a name
// wins. Each bad value is one line and exit 2, on run and mcp alike.
TEST_F(NetworkFlags, TheDomainFlagsAreCanonicalAndImplyProxy) {
    auto shown =
        settings({"--allow-domain", "Registry.NPMJS.org.", "--allow-domain", "registry.npmjs.org",
                  "--deny-domain", "*.Bad.example:443", "--proxy-resolve",
                  "LocalTest.example=127.0.0.1", "--proxy-resolve", "localtest.example=[::1]"});
    EXPECT_EQ(shown["network"], nlohmann::json({{"value", "proxy"}, {"source", "flag"}}));
    EXPECT_EQ(shown["allowed_domains"],
              nlohmann::json::array({{{"value", "registry.npmjs.org"}, {"source", "flag"}}}));
    EXPECT_EQ(shown["denied_domains"],
              nlohmann::json::array({{{"value", "*.bad.example:443"}, {"source", "flag"}}}));
    EXPECT_EQ(shown["proxy_resolve"],
              nlohmann::json({{"localtest.example", {{"value", "::1"}, {"source", "flag"}}}}));
    // Proxy with no domain is a network that lets nothing through, and may be asked for.
    shown = settings({"--network", "proxy"});
    EXPECT_EQ(shown["network"]["value"], "proxy");
    EXPECT_EQ(shown["allowed_domains"], nlohmann::json::array());
    EXPECT_EQ(shown["proxy_resolve"], nlohmann::json::object());
    EXPECT_EQ(settings({"--network", "proxy", "--allow-domain", "a.example"})["network"]["value"],
              "proxy");

    for (const auto& [given, message] :
         std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--network", "deny", "--allow-domain", "a.example"},
              "--allow-domain needs --network proxy"},
             {{"--network", "allow", "--allow-domain", "a.example"},
              "--allow-domain needs --network proxy"},
             {{"--network", "open"}, "invalid --network \"open\" (deny, proxy or allow)"},
             {{"--allow-domain", "a b"}, "invalid --allow-domain \"a b\": is not a host name"},
             {{"--allow-domain", "https://a.example"},
              "invalid --allow-domain \"https://a.example\": is a URL, not a host name"},
             {{"--deny-domain", ""}, "invalid --deny-domain \"\": empty"},
             {{"--deny-domain", "1.2.3"},
              "invalid --deny-domain \"1.2.3\": is neither a host name nor an address"},
             {{"--proxy-resolve", "a.example"},
              "invalid --proxy-resolve \"a.example\": expected NAME=ADDRESS"},
             {{"--proxy-resolve", "10.0.0.1=10.0.0.2"},
              "invalid --proxy-resolve \"10.0.0.1=10.0.0.2\": \"10.0.0.1\" is not a host name"},
             {{"--proxy-resolve", "a.example=host.example"},
              "invalid --proxy-resolve \"a.example=host.example\": \"host.example\" is not an "
              "IPv4 or IPv6 address"}}) {
        for (const std::string command : {"run", "mcp"}) {
            std::vector<std::string> args{command};
            args.insert(args.end(), given.begin(), given.end());
            if (command == "run") args.insert(args.end(), {"--", "true"});
            const cli_result result = cordon(args);
            EXPECT_EQ(result.exit_code, exit_usage) << message;
            EXPECT_EQ(result.err, "cordon " + command + ": " + message + "\n");
        }
    }
}

// The lists extend the layers below, a later layer's proxy_resolve entry replaces a name's, and
// allowed_domains in a layer that sets no network makes it proxy (as --allow-domain does).
TEST_F(NetworkFlags, TheDomainKeysExtendTheLayersAndAResolvedNameIsReplaced) {
    const std::string file = (etc_ / "config.toml").string();
    write_config(
        "allowed_domains = [\"A.example\"]\ndenied_domains = [\"bad.example\"]\n"
        "proxy_resolve = { \"localtest.example\" = \"127.0.0.1\", \"other.example\" = "
        "\"10.0.0.1\" }\n[profile.ci]\nallowed_domains = [\"b.example\"]\n"
        "proxy_resolve = { \"localtest.example\" = \"::1\" }\n[profile.off]\nnetwork = "
        "\"allow\"\n");
    auto shown = settings();
    EXPECT_EQ(shown["network"],
              nlohmann::json({{"value", "proxy"}, {"source", "file"}, {"file", file}}));
    EXPECT_EQ(shown["allowed_domains"][0]["value"], "a.example");
    EXPECT_EQ(shown["proxy_resolve"]["localtest.example"],
              nlohmann::json({{"value", "127.0.0.1"}, {"source", "file"}, {"file", file}}));

    shown = settings({"--profile", "ci", "--allow-domain", "c.example"});
    EXPECT_EQ(shown["network"], nlohmann::json({{"value", "proxy"}, {"source", "flag"}}));
    ASSERT_EQ(shown["allowed_domains"].size(), 3u);
    EXPECT_EQ(shown["allowed_domains"][0]["source"], "file");
    EXPECT_EQ(
        shown["allowed_domains"][1],
        nlohmann::json(
            {{"value", "b.example"}, {"source", "profile"}, {"profile", "ci"}, {"file", file}}));
    EXPECT_EQ(shown["allowed_domains"][2]["value"], "c.example");
    EXPECT_EQ(shown["allowed_domains"][2]["source"], "flag");
    EXPECT_EQ(shown["denied_domains"][0]["value"], "bad.example");
    EXPECT_EQ(shown["proxy_resolve"]["localtest.example"]["value"], "::1");
    EXPECT_EQ(shown["proxy_resolve"]["localtest.example"]["source"], "profile");
    EXPECT_EQ(shown["proxy_resolve"]["other.example"]["source"], "file");

    // A layer's network wins over what the layers below implied; the domains stay listed.
    shown = settings({"--profile", "off"});
    EXPECT_EQ(shown["network"]["value"], "allow");
    EXPECT_EQ(shown["allowed_domains"].size(), 1u);

    // The TOML rendering: the table last, each name with its origin.
    const cli_result toml = cordon({"config", "show", "--profile", "ci"});
    EXPECT_NE(toml.out.find("allowed_domains = [\n  \"a.example\","), std::string::npos)
        << toml.out;
    EXPECT_NE(toml.out.find("\n[proxy_resolve]\n\"localtest.example\" = \"::1\"   # profile "
                            "ci in " +
                            file + "\n\"other.example\" = \"10.0.0.1\"  # " + file + "\n"),
              std::string::npos)
        << toml.out;

    // One layer that names domains to allow under a network that would not use them.
    write_config("network = \"deny\"\nallowed_domains = [\"a.example\"]\n");
    const cli_result contradiction = cordon({"run", "--", "true"});
    EXPECT_EQ(contradiction.exit_code, exit_usage);
    EXPECT_EQ(contradiction.err, "cordon run: " + file + ": allowed_domains needs network proxy\n");
}

TEST_F(NetworkFlags, EachBadDomainKeyIsOneLineNamingTheLineAndTheKey) {
    for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
             {"allowed_domains = \"a.example\"\n",
              ":1: allowed_domains: expected an array of strings, not a string"},
             {"allowed_domains = [\"a b\"]\n",
              ":1: allowed_domains: invalid domain \"a b\": is not a host name"},
             {"denied_domains = [1]\n",
              ":1: denied_domains: expected an array of strings, not one holding an integer"},
             {"proxy_resolve = [\"a\"]\n",
              ":1: proxy_resolve: expected a table of names and addresses, not an array"},
             {"proxy_resolve = { \"a.example\" = 1 }\n",
              ":1: proxy_resolve: expected an address for \"a.example\", not an integer"},
             {"proxy_resolve = { \"a.example\" = \"nope\" }\n",
              ":1: proxy_resolve: \"nope\" is not an IPv4 or IPv6 address"},
             {"proxy_resolve = { \"1.2.3.4\" = \"10.0.0.1\" }\n",
              ":1: proxy_resolve: \"1.2.3.4\" is not a host name"},
             {"[profile.x]\nproxy_resolve = { \"a.example\" = \"nope\" }\n",
              ":2: profile.x.proxy_resolve: \"nope\" is not an IPv4 or IPv6 address"}}) {
        const cli_result result = test::show_with(text);
        EXPECT_EQ(result.exit_code, exit_usage) << text;
        EXPECT_TRUE(result.err.starts_with("cordon config show: /")) << result.err;
        EXPECT_TRUE(result.err.ends_with("config.toml" + message + "\n")) << result.err;
    }
}

// --escalate-domain asks for domains beside the run's own: the refusal names what the run would
// have had, the log records it; asking for what the run has, or for a denied domain, asks nobody;
// each bad combination is one line.
TEST_F(NetworkFlags, AnEscalationAsksForDomains) {
    const fs::path log = scratch_.path() / "session.jsonl";
    const cli_result asked =
        cordon({"run", "--escalate-domain", "Registry.npmjs.org", "--justification", "fetch",
                "--approval", "never", "--session", log.string(), "--", "true"});
    EXPECT_EQ(asked.exit_code, exit_not_approved);
    EXPECT_EQ(asked.err,
              "cordon run: the user rejected escalating this command to network \"proxy: "
              "registry.npmjs.org\" (the approval policy is \"never\": nobody was asked)\n");
    std::ifstream lines(log);
    bool recorded = false;
    for (std::string line; std::getline(lines, line);) {
        const auto event = nlohmann::json::parse(line);
        if (event["type"] != "approval/asked") continue;
        EXPECT_EQ(event["network"], "proxy");
        EXPECT_EQ(event["domains"], nlohmann::json({"registry.npmjs.org"}));
        EXPECT_EQ(event["network_from"], "deny");
        recorded = true;
    }
    EXPECT_TRUE(recorded);

    const cli_result json_form =
        cordon({"run", "--json", "--allow-domain", "a.example", "--escalate-domain", "b.example",
                "--justification", "fetch", "--approval", "never", "--", "true"});
    EXPECT_EQ(json_form.exit_code, exit_not_approved);
    const auto refused = nlohmann::json::parse(json_form.out);
    EXPECT_EQ(refused["approval"]["network"], "proxy");
    EXPECT_EQ(refused["approval"]["domains"], nlohmann::json({"a.example", "b.example"}));

    for (const auto& [given, message] :
         std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--allow-domain", "a.example", "--escalate-domain", "a.example", "--justification",
               "fetch"},
              "sandbox escalation to network \"proxy: a.example\" is not wider than this call's "
              "current network \"proxy: a.example\""},
             {{"--network", "allow", "--escalate-domain", "a.example", "--justification", "fetch"},
              "sandbox escalation to network \"proxy: a.example\" is not wider than this call's "
              "current network \"allow\""},
             {{"--deny-domain", "*.bad.example", "--escalate-domain", "x.bad.example",
               "--justification", "fetch"},
              "sandbox escalation to network \"proxy: x.bad.example\" asks for \"x.bad.example\", "
              "which denied_domains refuses (\"*.bad.example\")"},
             {{"--escalate-network", "proxy", "--justification", "fetch"},
              "--escalate-network proxy needs --escalate-domain"},
             {{"--escalate-network", "allow", "--escalate-domain", "a.example", "--justification",
               "fetch"},
              "--escalate-domain needs --escalate-network proxy"},
             {{"--escalate-network", "deny", "--justification", "fetch"},
              "invalid --escalate-network \"deny\" (proxy or allow)"},
             {{"--escalate-domain", "a b", "--justification", "fetch"},
              "invalid --escalate-domain \"a b\": is not a host name"},
             {{"--escalate-domain", "a.example"},
              "invalid escalation: --escalate-domain requires a justification"},
             {{"--escalate-network", "proxy", "--escalate-domain", "a.example"},
              "invalid escalation: --escalate-network requires a justification"}}) {
        std::vector<std::string> args{"run"};
        args.insert(args.end(), given.begin(), given.end());
        args.insert(args.end(), {"--", "true"});
        const cli_result result = cordon(args);
        EXPECT_NE(result.exit_code, 0) << message;
        EXPECT_EQ(result.err, "cordon run: " + message + "\n");
    }
}

}  // namespace
}  // namespace cordon::cli
