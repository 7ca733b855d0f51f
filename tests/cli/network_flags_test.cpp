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
#include "sandbox/policy.hpp"
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
        {"network = \"proxy\"\n", file + ":1: network: invalid network \"proxy\" (deny or allow)"},
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

}  // namespace
}  // namespace cordon::cli
