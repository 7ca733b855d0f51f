// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The configuration files as a deployment writes them: real `cordon` processes whose files come
// from CORDON_CONFIG_DIRS (never the host's /etc or the tester's ~/.config). The layers (files,
// profiles, flags, the session) and their order, lists that extend and take away, every refusal
// (one line naming the file and the key, exit 2, nothing run), `cordon config show` in text and
// JSON with each value's origin, and a configured value changing a real run.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cordon/limits.hpp"
#include "cordon/policy.hpp"
#include "real_backend.hpp"
#include "support.hpp"
#include "support/cordon_cli.hpp"

namespace cordon::test {
namespace {

namespace fs = std::filesystem;

constexpr auto file_mode = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                           fs::perms::others_read;  // 0644
constexpr auto dir_mode = fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                          fs::perms::others_read | fs::perms::others_exec;  // 0755

class ConfigTest : public ::testing::Test {
protected:
    void SetUp() override {
        for (const fs::path& dir : {etc_, user_, workspace_, home_}) {
            fs::create_directory(dir);
            fs::permissions(dir, dir_mode);
        }
    }

    // Writes `text` as the system-wide (etc_) or the user's (user_) config.toml.
    static void write_config(const fs::path& dir, const std::string& text) {
        write_file(dir / "config.toml", text, file_mode);
    }

    cli_result cordon(const std::vector<std::string>& args,
                      std::optional<std::string> dirs = std::nullopt) {
        return run_cordon(
            args, workspace_, {},
            {{"CORDON_CONFIG_DIRS", dirs.value_or(etc_.string() + ":" + user_.string())},
             {"HOME", home_.string()},
             {"XDG_CONFIG_HOME", std::nullopt}});
    }

    // `cordon config show --json ARGS...`, parsed.
    nlohmann::json show(std::vector<std::string> args = {}) {
        args.insert(args.begin(), {"config", "show", "--json"});
        const cli_result result = cordon(args);
        EXPECT_EQ(result.exit_code, 0) << result.err;
        return nlohmann::json::parse(result.out);
    }

    // The one line a refused configuration gets: exit 2, nothing on stdout.
    static void expect_refused(const cli_result& result, const std::string& command,
                               const std::vector<std::string>& mentions) {
        EXPECT_EQ(result.exit_code, cli::exit_usage) << result.err;
        EXPECT_EQ(result.out, "");
        EXPECT_TRUE(result.err.starts_with(command + ": ")) << result.err;
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
        for (const std::string& mention : mentions) {
            EXPECT_NE(result.err.find(mention), std::string::npos)
                << "no \"" << mention << "\" in: " << result.err;
        }
    }

    // The entry of a list setting whose value is `value`, or null.
    static nlohmann::json entry(const nlohmann::json& list, const std::string& value) {
        for (const auto& each : list) {
            if (each["value"] == value) return each;
        }
        return nullptr;
    }

    temp_dir scratch_{"/var/tmp", "cordon-config-test-"};
    fs::path etc_ = scratch_.path() / "etc";
    fs::path user_ = scratch_.path() / "user";
    fs::path workspace_ = scratch_.path() / "ws";
    fs::path home_ = scratch_.path() / "home";
    std::string etc_file_ = (etc_ / "config.toml").string();
    std::string user_file_ = (user_ / "config.toml").string();
};

TEST_F(ConfigTest, WithoutFilesEveryValueIsTheDefault) {
    const nlohmann::json shown = show();
    EXPECT_EQ(shown["files"], nlohmann::json::array());
    EXPECT_EQ(shown["lookedIn"], nlohmann::json({etc_file_, user_file_}));
    EXPECT_EQ(shown["profile"], nullptr);
    const nlohmann::json& settings = shown["settings"];
    EXPECT_EQ(settings["mode"], nlohmann::json({{"value", "read-only"}, {"source", "default"}}));
    EXPECT_EQ(settings["backend"]["value"], "auto");
    EXPECT_EQ(settings["timeout"]["value"], "2m");
    EXPECT_EQ(settings["max_output"]["value"], "64000");
    EXPECT_EQ(settings["max_processes"]["value"], "4096");
    // Half the host's memory, in whole MiB: as the size a configuration file would spell.
    const std::uint64_t memory = runtime::default_max_memory().value_or(0);
    ASSERT_NE(memory, 0u);
    EXPECT_EQ(settings["max_memory"]["value"], memory % (1ULL << 30) == 0
                                                   ? std::to_string(memory >> 30) + "G"
                                                   : std::to_string(memory >> 20) + "M");
    EXPECT_EQ(settings["approval"]["value"], "ask");
    EXPECT_EQ(settings["approval_timeout"]["value"], "5m");
    EXPECT_EQ(settings["tmp"]["value"], "private");
    EXPECT_EQ(settings["accept_partial"]["value"], false);
    EXPECT_EQ(entry(settings["protect"], ".git/hooks")["source"], "default");
    EXPECT_EQ(entry(settings["deny_read"], (home_ / ".ssh").string())["source"], "default");
}

// The files found in the homes by their content are listed as a run in the current directory (the
// workspace `cordon run` takes by default) would hide them: a key of the workspace's own is not.
TEST_F(ConfigTest, TheKeysFoundAreListedButTheWorkspacesOwn) {
    const std::string key = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + std::string(64, 'K') +
                            "\n-----END OPENSSH PRIVATE KEY-----\n";
    fs::create_directories(home_ / "old");
    write_file(home_ / "old" / "deploy_key", key, file_mode);
    fs::create_directories(workspace_ / "test");
    write_file(workspace_ / "test" / "fixture_key", key, file_mode);
    // The scratch directory as the home: it holds the workspace.
    const cli_result result = run_cordon({"config", "show", "--json"}, workspace_, {},
                                         {{"CORDON_CONFIG_DIRS", etc_.string()},
                                          {"HOME", scratch_.path().string()},
                                          {"XDG_CONFIG_HOME", std::nullopt}});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const nlohmann::json denied = nlohmann::json::parse(result.out)["settings"]["deny_read"];
    EXPECT_NE(entry(denied, (home_ / "old" / "deploy_key").string()), nullptr) << denied;
    EXPECT_EQ(entry(denied, (workspace_ / "test" / "fixture_key").string()), nullptr) << denied;
}

// Files, then the profile, then the flags; a later file overrides an earlier one per key.
TEST_F(ConfigTest, EachLayerOverridesTheOneBelowPerKey) {
    write_config(etc_,
                 "mode = \"workspace-write\"\ntimeout = 30\nmax_memory = \"512M\"\n"
                 "approval = \"never\"\n"
                 "[profile.ci]\nbackend = \"bwrap\"\ntimeout = \"90s\"\n");
    write_config(user_,
                 "timeout = \"45s\"\nmax_processes = 100\n"
                 "[profile.ci]\nmax_processes = \"unlimited\"\n");
    const nlohmann::json files = show();
    const nlohmann::json& plain = files["settings"];
    EXPECT_EQ(files["files"], nlohmann::json({etc_file_, user_file_}));
    EXPECT_EQ(
        plain["mode"],
        nlohmann::json({{"value", "workspace-write"}, {"source", "file"}, {"file", etc_file_}}));
    EXPECT_EQ(plain["timeout"],
              nlohmann::json({{"value", "45s"}, {"source", "file"}, {"file", user_file_}}));
    EXPECT_EQ(plain["max_memory"]["value"], "512M");
    EXPECT_EQ(plain["max_processes"]["value"], "100");
    EXPECT_EQ(plain["backend"]["source"], "default");

    const nlohmann::json profiled = show({"--profile", "ci"});
    const nlohmann::json& ci = profiled["settings"];
    EXPECT_EQ(profiled["profile"], "ci");
    // The profile ranks above every file's top level, the user's too.
    EXPECT_EQ(
        ci["timeout"],
        nlohmann::json(
            {{"value", "90s"}, {"source", "profile"}, {"profile", "ci"}, {"file", etc_file_}}));
    EXPECT_EQ(ci["backend"]["value"], "bwrap");
    EXPECT_EQ(ci["max_processes"], nlohmann::json({{"value", "unlimited"},
                                                   {"source", "profile"},
                                                   {"profile", "ci"},
                                                   {"file", user_file_}}));
    EXPECT_EQ(ci["mode"]["source"], "file");

    const nlohmann::json flagged =
        show({"--profile", "ci", "--timeout", "5s", "--mode", "read-only", "--backend", "auto"});
    EXPECT_EQ(flagged["settings"]["timeout"],
              nlohmann::json({{"value", "5s"}, {"source", "flag"}}));
    EXPECT_EQ(flagged["settings"]["mode"]["value"], "read-only");
    EXPECT_EQ(flagged["settings"]["backend"]["source"], "flag");
    EXPECT_EQ(flagged["settings"]["approval"]["value"], "never");
}

// Lists extend the layers below; unprotect and allow_read take away; the flags apply last.
TEST_F(ConfigTest, ListsExtendAndUnprotectTakesAway) {
    fs::create_directory(workspace_ / "extra");
    write_config(etc_,
                 "protect = [\".foo\"]\ndeny_read = [\"~/.vault\"]\n"
                 "writable_roots = [\"" +
                     (workspace_ / "extra").string() + "\"]\n");
    write_config(user_,
                 "unprotect = [\".envrc\"]\nallow_read = [\"~/.ssh\"]\n"
                 "[profile.p]\nprotect = [\".baz\"]\ntmp = \"host\"\n"
                 "accept_partial = true\n");
    const nlohmann::json shown = show({"--profile", "p", "--protect", ".bar"});
    const nlohmann::json& settings = shown["settings"];
    EXPECT_EQ(entry(settings["protect"], ".foo"),
              nlohmann::json({{"value", ".foo"}, {"source", "file"}, {"file", etc_file_}}));
    EXPECT_EQ(entry(settings["protect"], ".baz")["source"], "profile");
    EXPECT_EQ(entry(settings["protect"], ".bar"),
              nlohmann::json({{"value", ".bar"}, {"source", "flag"}}));
    EXPECT_EQ(entry(settings["protect"], ".git/hooks")["source"], "default");
    EXPECT_EQ(entry(settings["protect"], ".envrc"), nullptr);
    EXPECT_EQ(entry(settings["deny_read"], (home_ / ".vault").string())["file"], etc_file_);
    EXPECT_EQ(entry(settings["allow_read"], (home_ / ".ssh").string())["file"], user_file_);
    EXPECT_EQ(entry(settings["writable_roots"], (workspace_ / "extra").string())["source"], "file");
    EXPECT_EQ(settings["tmp"]["value"], "host");
    EXPECT_EQ(settings["tmp"]["source"], "profile");
    EXPECT_EQ(settings["accept_partial"]["value"], true);

    // The flag may take away what a file added.
    const nlohmann::json taken = show({"--unprotect", ".foo"});
    EXPECT_EQ(entry(taken["settings"]["protect"], ".foo"), nullptr);
}

TEST_F(ConfigTest, ShowPrintsTomlWithEachOrigin) {
    write_config(etc_,
                 "mode = \"workspace-write\"\nprotect = [\".foo\"]\n"
                 "[profile.ci]\nbackend = \"bwrap\"\n");
    const cli_result result = cordon({"config", "show", "--profile", "ci", "--timeout", "10s"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string& out = result.out;
    EXPECT_TRUE(out.starts_with("# files: " + etc_file_ + "\n# profile: ci\n")) << out;
    const auto line_of = [&out](const std::string& start) {
        const auto at = out.find("\n" + start);
        return at == std::string::npos ? std::string()
                                       : out.substr(at + 1, out.find('\n', at + 1) - at - 1);
    };
    EXPECT_TRUE(line_of("mode = \"workspace-write\"").ends_with("# " + etc_file_)) << out;
    EXPECT_TRUE(line_of("backend = \"bwrap\"").ends_with("# profile ci in " + etc_file_)) << out;
    EXPECT_TRUE(line_of("timeout = \"10s\"").ends_with("# flag")) << out;
    EXPECT_TRUE(line_of("approval = \"ask\"").ends_with("# default")) << out;
    EXPECT_TRUE(line_of("accept_partial = false").ends_with("# default")) << out;
    EXPECT_TRUE(line_of("  \".foo\",").ends_with("# " + etc_file_)) << out;
    EXPECT_NE(out.find("\nprotect = [\n"), std::string::npos) << out;
    EXPECT_NE(out.find("\nwritable_roots = []\n"), std::string::npos) << out;
}

// A misspelt, mistyped or wrong value is never ignored: one line naming the file, the line and
// the key, exit 2, and nothing runs.
TEST_F(ConfigTest, EveryBadFileIsRefusedWithOneLine) {
    struct bad_case {
        std::string text;
        std::vector<std::string> mentions;
    };
    const std::vector<bad_case> cases{
        {"deny_reed = [\"/x\"]\n", {user_file_ + ":1: deny_reed: unknown key"}},
        {"timeout = true\n", {user_file_ + ":1: timeout: expected", "not a boolean"}},
        {"timeout = \"forever\"\n", {"timeout: invalid value \"forever\""}},
        {"timeout = \"11m\"\n", {"timeout: invalid value \"11m\""}},
        {"mode = \"yolo\"\n", {user_file_ + ":1: mode: unknown mode \"yolo\""}},
        {"backend = \"docker\"\n", {"backend: unknown backend \"docker\""}},
        {"approval = \"maybe\"\n", {"approval: unknown approval policy \"maybe\""}},
        {"max_memory = \"1K\"\n", {"max_memory: invalid value \"1K\""}},
        {"max_output = -1\n", {"max_output: invalid value \"-1\""}},
        {"deny_read = [\"relative/path\"]\n",
         {"deny_read: \"relative/path\" is not an absolute path"}},
        {"deny_read = \"/one\"\n", {"deny_read: expected an array of strings, not a string"}},
        {"protect = [\"../x\"]\n", {user_file_ + ":1: protect: "}},
        {"unprotect = [\".not-protected\"]\n",
         {user_file_ + ": unprotect .not-protected is not a protected name"}},
        {"writable_roots = [\"/no/such/dir\"]\n",
         {user_file_ + ": writable_roots /no/such/dir is not a directory"}},
        {"tmp = \"shared\"\n", {"tmp: invalid tmp \"shared\""}},
        {"accept_partial = \"yes\"\n", {"accept_partial: expected true or false"}},
        {"profile = 1\n", {"profile: expected [profile.NAME] tables"}},
        {"[profile.ci]\nmode = \"read-only\"\ndeny_reed = []\n",
         {user_file_ + ":3: profile.ci.deny_reed: unknown key"}},
        {"mode = \"read-only\"\nmode = \"read-only\"\n", {user_file_ + ":2: "}},
    };
    const fs::path marker = workspace_ / "ran";
    for (const bad_case& bad : cases) {
        SCOPED_TRACE(bad.text);
        write_config(user_, bad.text);
        expect_refused(cordon({"config", "show"}), "cordon config show", bad.mentions);
        // An unused profile's mistake counts too, and nothing runs.
        expect_refused(
            cordon({"run", "--mode", "danger-full-access", "-c", "touch " + marker.string()}),
            "cordon run", bad.mentions);
        EXPECT_FALSE(fs::exists(marker));
    }
    write_config(user_, "deny_reed = []\n");
    expect_refused(run_cordon({"mcp"}, workspace_, {}, {{"CORDON_CONFIG_DIRS", user_.string()}}),
                   "cordon mcp", {user_file_ + ":1: deny_reed: unknown key"});
}

TEST_F(ConfigTest, AnUnknownProfileIsRefused) {
    write_config(etc_, "[profile.ci]\nmode = \"read-only\"\n");
    expect_refused(cordon({"run", "--profile", "cl", "--mode", "danger-full-access", "-c", "true"}),
                   "cordon run", {"unknown profile \"cl\": no [profile.cl] in " + etc_file_});
    expect_refused(cordon({"config", "show", "--profile", "cl"}), "cordon config show",
                   {"unknown profile \"cl\""});
    fs::remove(etc_ / "config.toml");
    expect_refused(cordon({"mcp", "--profile", "ci"}), "cordon mcp",
                   {"unknown profile \"ci\": no configuration file exists"});
}

// Whoever can write a configuration file sets the sandbox's defaults: a file another user could
// change, or one in a directory another user could change, is refused.
TEST_F(ConfigTest, AFileOthersCouldWriteIsRefused) {
    write_config(user_, "mode = \"read-only\"\n");
    fs::permissions(user_ / "config.toml", fs::perms::group_write, fs::perm_options::add);
    expect_refused(
        cordon({"run", "--mode", "danger-full-access", "-c", "true"}), "cordon run",
        {"refusing the configuration file " + user_file_, "it is writable by its group"});
    fs::permissions(user_ / "config.toml", file_mode | fs::perms::others_write);
    expect_refused(cordon({"config", "show"}), "cordon config show",
                   {"it is writable by every user"});
    fs::permissions(user_ / "config.toml", file_mode);
    fs::permissions(user_, fs::perms::others_write, fs::perm_options::add);
    expect_refused(cordon({"mcp"}), "cordon mcp",
                   {"its directory " + user_.string() + " is writable by every user"});
    fs::permissions(user_, dir_mode);
    EXPECT_EQ(cordon({"config", "show"}).exit_code, 0);
    // Named through a symlink in a directory every user may write: refused as well.
    const fs::path open_dir = scratch_.path() / "open";
    fs::create_directory(open_dir);
    fs::permissions(open_dir, dir_mode | fs::perms::others_write);
    fs::create_symlink(user_ / "config.toml", open_dir / "config.toml");
    expect_refused(cordon({"config", "show"}, open_dir.string()), "cordon config show",
                   {"its directory " + open_dir.string() + " is writable by every user"});
}

// A configuration file a workspace-write run could rewrite is refused at start-up, as the session
// log is; under read-only it is used, and protected from every run.
TEST_F(ConfigTest, AFileInsideTheWritableWorkspaceIsRefused) {
    write_config(workspace_, "timeout = \"30s\"\n");
    const std::string inside = (workspace_ / "config.toml").string();
    expect_refused(cordon({"run", "--mode", "workspace-write", "-c", "true"}, workspace_.string()),
                   "cordon run",
                   {"the configuration file " + inside + " lies in " + workspace_.string(),
                    "which workspace-write commands may write"});
    expect_refused(cordon({"mcp", "--mode", "workspace-write"}, workspace_.string()), "cordon mcp",
                   {"the configuration file " + inside + " lies in"});
    write_config(workspace_, "mode = \"workspace-write\"\n");
    expect_refused(cordon({"run", "-c", "true"}, workspace_.string()), "cordon run",
                   {"the configuration file " + inside + " lies in"});
    // A symlink in the workspace naming a file elsewhere: the run could replace the symlink.
    fs::remove(workspace_ / "config.toml");
    write_config(etc_, "timeout = \"30s\"\n");
    fs::create_symlink(etc_ / "config.toml", workspace_ / "config.toml");
    expect_refused(cordon({"run", "--mode", "workspace-write", "-c", "true"}, workspace_.string()),
                   "cordon run", {"the configuration file " + inside + " lies in"});
    const cli_result unconfined =
        cordon({"run", "--mode", "danger-full-access", "-c", "echo ran"}, workspace_.string());
    EXPECT_EQ(unconfined.exit_code, 0) << unconfined.err;
    EXPECT_EQ(unconfined.out, "ran\n");
}

// A configuration file that is not there yet is as much the defaults of every later run as one that
// is: a workspace-write run that could create it, where this cordon or one of the same account
// started with another environment would read it (the candidates, ~/.config/cordon under each
// home, $XDG_CONFIG_HOME/cordon), is refused, whatever link leads there; a run away from them, or
// one that cannot write, goes on.
TEST_F(ConfigTest, AMissingFileNoRunCanCreate) {
    const std::string plant =
        "mkdir -p cordon; printf 'mode = \"danger-full-access\"\\n' > "
        "config.toml; cp config.toml cordon/; echo ran";
    const auto run = [&](const std::vector<std::string>& flags, const fs::path& cwd,
                         std::map<std::string, std::optional<std::string>> env) {
        std::vector<std::string> args{"run"};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"-c", plant});
        env.emplace("HOME", home_.string());
        env.emplace("XDG_CONFIG_HOME", std::nullopt);
        env.emplace("CORDON_CONFIG_DIRS", etc_.string() + ":" + user_.string());
        return run_cordon(args, cwd, {}, env);
    };
    // A candidate of this cordon's.
    expect_refused(
        run({"--mode", "workspace-write"}, user_, {}), "cordon run",
        {"the configuration file " + (user_ / "config.toml").string() +
         " is not there, and a workspace-write command could create it in " + user_.string()});
    expect_refused(
        run({"--mode", "workspace-write", "--writable-root", etc_.string()}, workspace_, {}),
        "cordon run", {(etc_ / "config.toml").string() + " is not there"});
    // Where a cordon started with the account's usual environment would look.
    fs::create_directories(home_ / ".config");
    expect_refused(run({"--mode", "workspace-write"}, home_ / ".config", {}), "cordon run",
                   {(home_ / ".config" / "cordon" / "config.toml").string() + " is not there"});
    const fs::path xdg = workspace_ / "xdg";
    fs::create_directory(xdg);
    expect_refused(
        run({"--mode", "workspace-write"}, workspace_, {{"XDG_CONFIG_HOME", xdg.string()}}),
        "cordon run", {(xdg / "cordon" / "config.toml").string() + " is not there"});
    // Through a link: ~/.config leads into the workspace.
    fs::remove(home_ / ".config");
    fs::create_directory(workspace_ / "dotconfig");
    fs::create_directory_symlink(workspace_ / "dotconfig", home_ / ".config");
    expect_refused(
        run({"--mode", "workspace-write"}, workspace_, {}), "cordon run",
        {(workspace_ / "dotconfig" / "cordon" / "config.toml").string() + " is not there"});
    expect_refused(run_cordon({"mcp", "--mode", "workspace-write"}, workspace_, {},
                              {{"HOME", home_.string()},
                               {"XDG_CONFIG_HOME", std::nullopt},
                               {"CORDON_CONFIG_DIRS", etc_.string() + ":" + user_.string()}}),
                   "cordon mcp", {" is not there"});
    for (const fs::path& dir : {etc_, user_, home_ / ".config", xdg, workspace_ / "dotconfig"}) {
        EXPECT_FALSE(fs::exists(dir / "config.toml")) << dir;
        EXPECT_FALSE(fs::exists(dir / "cordon")) << dir;
    }
    // A dangling link where the file would be: the place it names is guarded.
    fs::remove(home_ / ".config");
    fs::create_directories(home_ / ".config" / "cordon");
    fs::create_symlink(workspace_ / "planted.toml", home_ / ".config" / "cordon" / "config.toml");
    expect_refused(run({"--mode", "workspace-write"}, workspace_, {}), "cordon run",
                   {(workspace_ / "planted.toml").string() + " is not there"});
    EXPECT_FALSE(fs::exists(workspace_ / "planted.toml"));
    fs::remove(home_ / ".config" / "cordon" / "config.toml");
    // A file this cordon does not read (it was told other directories) is another cordon's.
    fs::create_directories(xdg / "cordon");
    write_config(xdg / "cordon", "mode = \"read-only\"\n");
    expect_refused(
        run({"--mode", "workspace-write"}, workspace_, {{"XDG_CONFIG_HOME", xdg.string()}}),
        "cordon run", {(xdg / "cordon" / "config.toml").string() + " lies in"});
    fs::remove_all(xdg / "cordon");
    // A run that cannot write them, or writes elsewhere, runs.
    const cli_result read_only = run({"--mode", "read-only"}, user_, {});
    EXPECT_EQ(read_only.out, "ran\n") << read_only.err;
    EXPECT_FALSE(fs::exists(user_ / "config.toml"));
    const fs::path elsewhere = workspace_ / "project";
    fs::create_directory(elsewhere);
    const cli_result away = run({"--mode", "workspace-write"}, elsewhere, {});
    EXPECT_EQ(away.exit_code, 0) << away.err;
    EXPECT_EQ(away.out, "ran\n");
}

// The configuration's limits reach the run, and a flag overrides them.
TEST_F(ConfigTest, AConfiguredTimeoutEndsTheRun) {
    write_config(etc_, "timeout = \"300ms\"\n");
    const cli_result timed_out = cordon({"run", "--mode", "danger-full-access", "--",
                                         test_child_path().string(), "sleep", "20000"});
    EXPECT_EQ(timed_out.exit_code, cli::exit_timeout) << timed_out.err;
    EXPECT_NE(timed_out.err.find("[timed out after 300ms]"), std::string::npos) << timed_out.err;
    const cli_result longer = cordon({"run", "--mode", "danger-full-access", "--timeout", "20s",
                                      "--", test_child_path().string(), "sleep", "500"});
    EXPECT_EQ(longer.exit_code, 0) << longer.err;
}

// mode = "workspace-write" in a file lets a real confined run write the workspace; the flag
// overrides it.
TEST_F(ConfigTest, AConfiguredModeChangesARealRunAndTheFlagOverridesIt) {
    write_config(etc_, "mode = \"workspace-write\"\naccept_partial = true\n");
    for (const auto path : every_real_backend) {
        SCOPED_TRACE(to_string(path));
        scoped_backend_path on(path);
        const fs::path written = workspace_ / "written";
        const cli_result wrote = cordon({"run", "--backend", std::string(backend_flag(path)),
                                         "--json", "-c", "echo hi > " + written.string()});
        ASSERT_EQ(wrote.exit_code, 0) << wrote.out << wrote.err;
        EXPECT_EQ(read_file(written), "hi\n");
        EXPECT_EQ(nlohmann::json::parse(wrote.out)["sandbox"]["mode"], "workspace-write");
        fs::remove(written);

        const cli_result refused =
            cordon({"run", "--backend", std::string(backend_flag(path)), "--mode", "read-only",
                    "--json", "-c", "echo hi > " + written.string()});
        EXPECT_NE(refused.exit_code, 0) << refused.out;
        EXPECT_FALSE(fs::exists(written));
        const nlohmann::json record = nlohmann::json::parse(refused.out);
        EXPECT_EQ(record["sandbox"]["mode"], "read-only");
        EXPECT_EQ(record["sandbox"]["denied"], true);
    }
}

// The session ranks above the configuration: a configured mode never conflicts with what the
// session records (a flag still does), and the session's mode wins.
TEST_F(ConfigTest, TheSessionRanksAboveTheConfiguration) {
    const fs::path log = scratch_.path() / "session.log";
    const cli_result set = cordon({"session", "set", log.string(), "--mode", "workspace-write"});
    ASSERT_EQ(set.exit_code, 0) << set.err;
    write_config(etc_, "mode = \"danger-full-access\"\naccept_partial = true\n");
    // Outside the workspace: only the configured mode, which the session outranks, would let it.
    const fs::path outside = scratch_.path() / "outside";
    const cli_result run =
        cordon({"run", "--session", log.string(), "--json", "-c", "echo hi > " + outside.string()});
    ASSERT_NE(run.out, "") << run.err;
    const nlohmann::json record = nlohmann::json::parse(run.out);
    EXPECT_EQ(record["sandbox"]["mode"], "workspace-write") << run.out;
    EXPECT_EQ(record["sandbox"]["denied"], true) << run.out;
    EXPECT_FALSE(fs::exists(outside));
    const cli_result flag =
        cordon({"run", "--session", log.string(), "--mode", "danger-full-access", "-c", "true"});
    EXPECT_EQ(flag.exit_code, cli::exit_usage);
    EXPECT_NE(flag.err.find("conflicts with the mode the session"), std::string::npos) << flag.err;
}

// `cordon config show --session` tells what a run under that session gets: the mode and the
// approval policy the session records (origin "session", naming the log), over the configuration;
// a flag still wins over them, as the precedence says.
TEST_F(ConfigTest, ShowUnderASessionReportsWhatTheSessionRecords) {
    const fs::path log = scratch_.path() / "session.log";
    for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
             {"--mode", "workspace-write"}, {"--approval", "never"}}) {
        const cli_result set = cordon({"session", "set", log.string(), key, value});
        ASSERT_EQ(set.exit_code, 0) << set.err;
    }
    write_config(etc_, "mode = \"danger-full-access\"\napproval = \"ask\"\ntimeout = \"10s\"\n");
    const nlohmann::json from_session = {
        {"value", "workspace-write"}, {"source", "session"}, {"file", log.string()}};

    const nlohmann::json shown = show({"--session", log.string()});
    const nlohmann::json& settings = shown["settings"];
    EXPECT_EQ(settings["mode"], from_session);
    EXPECT_EQ(settings["approval"],
              nlohmann::json({{"value", "never"}, {"source", "session"}, {"file", log.string()}}));
    EXPECT_EQ(settings["timeout"],
              nlohmann::json({{"value", "10s"}, {"source", "file"}, {"file", etc_file_}}));

    // Without the session, the configuration's.
    EXPECT_EQ(
        show()["settings"]["mode"],
        nlohmann::json({{"value", "danger-full-access"}, {"source", "file"}, {"file", etc_file_}}));
    // A flag wins over the session.
    EXPECT_EQ(show({"--session", log.string(), "--mode", "read-only"})["settings"]["mode"],
              nlohmann::json({{"value", "read-only"}, {"source", "flag"}}));

    // The text form names the log.
    const cli_result text = cordon({"config", "show", "--session", log.string()});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("mode = \"workspace-write\""), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("# session " + log.string() + "\n"), std::string::npos) << text.out;

    // And a run under the session stands under the mode config show reported.
    const cli_result run = cordon({"run", "--session", log.string(), "--json", "-c", "true"});
    ASSERT_NE(run.out, "") << run.err;
    EXPECT_EQ(nlohmann::json::parse(run.out)["sandbox"]["mode"], from_session["value"]) << run.out;
}

// `session set --mode read-only` pins the session to read-only even though read-only is cordon's
// default: a configuration file's wider mode, below the session, no longer reaches its runs.
TEST_F(ConfigTest, ASessionSetToTheDefaultModeIsPinnedAboveTheFiles) {
    write_config(etc_, "mode = \"danger-full-access\"\n");
    const fs::path log = scratch_.path() / "session.log";
    const cli_result set = cordon({"session", "set", log.string(), "--mode", "read-only"});
    ASSERT_EQ(set.exit_code, 0) << set.err;
    EXPECT_EQ(set.out.find("nothing written"), std::string::npos) << set.out;
    EXPECT_EQ(
        show({"--session", log.string()})["settings"]["mode"],
        nlohmann::json({{"value", "read-only"}, {"source", "session"}, {"file", log.string()}}));
    const cli_result run = cordon({"run", "--session", log.string(), "--json", "-c", "true"});
    ASSERT_NE(run.out, "") << run.err;
    EXPECT_EQ(nlohmann::json::parse(run.out)["sandbox"]["mode"], "read-only") << run.out;
}

// A session log with a second name (a hard link) in the workspace would let a workspace-write
// command rewrite the session's standing mode through it: such a run does not start, and the
// log is left as it was.
TEST_F(ConfigTest, ASessionLogWithAHardLinkRefusesAWorkspaceWriteRun) {
    const fs::path log = scratch_.path() / "session.log";
    ASSERT_EQ(cordon({"session", "set", log.string(), "--mode", "workspace-write"}).exit_code, 0);
    fs::create_hard_link(log, workspace_ / "link");
    const auto before = fs::file_size(log);
    const cli_result run =
        cordon({"run", "--session", log.string(), "-c",
                R"(echo '{"mode":"danger-full-access","type":"sandbox/mode"}' >> link)"});
    EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
    EXPECT_NE(run.err.find("hard links"), std::string::npos) << run.err;
    EXPECT_EQ(fs::file_size(log), before);
    fs::remove(workspace_ / "link");
    const cli_result again = cordon({"run", "--session", log.string(), "-c", "true"});
    EXPECT_EQ(again.exit_code, 0) << again.err;
}

// Every layer is named as the origin of what it sets, in one output: a flag, the session, a
// profile, a file's top level, cordon's default.
TEST_F(ConfigTest, EachLayerIsTheOriginOfWhatItSets) {
    const fs::path log = scratch_.path() / "session.log";
    ASSERT_EQ(cordon({"session", "set", log.string(), "--mode", "workspace-write"}).exit_code, 0);
    write_config(etc_,
                 "backend = \"bwrap\"\napproval_timeout = \"1m\"\n"
                 "[profile.ci]\napproval_timeout = \"30s\"\n");
    write_config(user_, "max_output = \"512K\"\n");
    const nlohmann::json settings =
        show({"--session", log.string(), "--profile", "ci", "--timeout", "10s"})["settings"];
    EXPECT_EQ(settings["timeout"], nlohmann::json({{"value", "10s"}, {"source", "flag"}}));
    EXPECT_EQ(settings["mode"],
              nlohmann::json(
                  {{"value", "workspace-write"}, {"source", "session"}, {"file", log.string()}}));
    EXPECT_EQ(
        settings["approval_timeout"],
        nlohmann::json(
            {{"value", "30s"}, {"source", "profile"}, {"profile", "ci"}, {"file", etc_file_}}));
    EXPECT_EQ(settings["backend"],
              nlohmann::json({{"value", "bwrap"}, {"source", "file"}, {"file", etc_file_}}));
    EXPECT_EQ(settings["max_output"],
              nlohmann::json({{"value", "512K"}, {"source", "file"}, {"file", user_file_}}));
    EXPECT_EQ(settings["max_processes"],
              nlohmann::json({{"value", "4096"}, {"source", "default"}}));
    // What a session does not record comes from below it.
    EXPECT_EQ(settings["approval"], nlohmann::json({{"value", "ask"}, {"source", "default"}}));
}

// config show reads a session log and never creates one: a log not there yet records nothing (a
// run would create it with its root only), and a corrupt one is the usage error a run gives.
TEST_F(ConfigTest, ShowReadsASessionAndNeverCreatesOne) {
    const fs::path missing = scratch_.path() / "missing.log";
    EXPECT_EQ(show({"--session", missing.string()})["settings"]["mode"],
              nlohmann::json({{"value", "read-only"}, {"source", "default"}}));
    EXPECT_FALSE(fs::exists(missing));

    const fs::path corrupt = scratch_.path() / "corrupt.log";
    write_file(corrupt, "not json\n", fs::perms::owner_read | fs::perms::owner_write);
    expect_refused(cordon({"config", "show", "--session", corrupt.string()}), "cordon config show",
                   {corrupt.string() + ":1:"});
}

// The environment keys: env_clear from the file, env_keep and env_unset extended by the flags.
TEST_F(ConfigTest, TheEnvironmentKeysFilterARealRun) {
    write_config(etc_, "env_clear = true\nenv_keep = [\"MY_*\"]\nenv_unset = [\"LANG\"]\n");
    const auto run = [this](std::vector<std::string> extra) {
        std::vector<std::string> args{"run", "--mode", "danger-full-access"};
        args.insert(args.end(), extra.begin(), extra.end());
        args.insert(args.end(),
                    {"-c", "echo \"${MY_VAR-unset} ${STRAY-unset} ${LANG-unset} ${HOME-unset}\""});
        return run_cordon(args, workspace_, {},
                          {{"CORDON_CONFIG_DIRS", etc_.string()},
                           {"HOME", home_.string()},
                           {"MY_VAR", "a"},
                           {"STRAY", "c"},
                           {"LANG", "C.UTF-8"}});
    };
    const cli_result configured = run({});
    EXPECT_EQ(configured.exit_code, 0) << configured.err;
    EXPECT_EQ(configured.out, "a unset unset " + home_.string() + "\n");
    const cli_result flagged = run({"--env-keep", "STRAY", "--env-unset", "MY_VAR"});
    EXPECT_EQ(flagged.out, "unset c unset " + home_.string() + "\n") << flagged.err;

    const nlohmann::json shown = show({"--env-keep", "STRAY"});
    const nlohmann::json& settings = shown["settings"];
    EXPECT_EQ(settings["env_clear"],
              nlohmann::json({{"value", true}, {"source", "file"}, {"file", etc_file_}}));
    EXPECT_EQ(entry(settings["env_keep"], "MY_*")["file"], etc_file_);
    EXPECT_EQ(entry(settings["env_keep"], "STRAY")["source"], "flag");
    EXPECT_EQ(entry(settings["env_unset"], "LANG")["source"], "file");

    write_config(user_, "env_keep = [\"BAD-NAME\"]\n");
    expect_refused(cordon({"config", "show"}), "cordon config show",
                   {user_file_ + ":1: env_keep: invalid name \"BAD-NAME\""});
}

// [[approval_rule]]: a rule whose examples do not say what it matches refuses every command that
// reads the configuration, in one line naming the file, the line and the example.
TEST_F(ConfigTest, AnApprovalRuleWhoseExamplesDoNotMatchIsRefused) {
    write_config(user_,
                 "mode = \"read-only\"\n"
                 "[[approval_rule]]\n"
                 "name = \"npm-scripts\"\n"
                 "pattern = [\"npm\", \"run\", [\"build\", \"test\"], \"<operand>...\"]\n"
                 "mode = \"workspace-write\"\n"
                 "match = [\"npm run build\", \"npm run lint\"]\n");
    const std::string why =
        "approval_rule: approval rule \"npm-scripts\": example \"npm run lint\" does not match "
        "`npm run {build|test} <operand>...`";
    expect_refused(cordon({"run", "-c", "true"}), "cordon run", {user_file_ + ":2: " + why});
    expect_refused(cordon({"config", "show"}), "cordon config show", {why});
    expect_refused(cordon({"mcp"}), "cordon mcp", {why});
}

// A rule allows what it says without asking (no terminal here: nobody could be asked), and
// nothing else; `config show` lists it where it came from.
TEST_F(ConfigTest, AnApprovalRuleAllowsWhatItSaysWithoutAsking) {
    write_config(etc_,
                 "[[approval_rule]]\n"
                 "name = \"touch-files\"\n"
                 "pattern = [\"touch\", \"<operand>...\"]\n"
                 "mode = \"workspace-write\"\n"
                 "match = [\"touch a b\"]\n"
                 "not_match = [\"touch -r a b\"]\n");
    const auto escalated = [this](const std::string& command) {
        return cordon({"run", "--json", "--escalate", "workspace-write", "--justification",
                       "the test writes a file", "-c", command});
    };
    const cli_result allowed = escalated("touch made");
    if (allowed.exit_code == cli::exit_sandbox_unavailable && !real_backends_required()) return;
    ASSERT_EQ(allowed.exit_code, 0) << allowed.err << allowed.out;
    EXPECT_TRUE(fs::exists(workspace_ / "made"));
    const nlohmann::json approval = nlohmann::json::parse(allowed.out)["approval"];
    EXPECT_EQ(approval["action"], "allowed-by-rule") << approval.dump();
    EXPECT_EQ(approval["rule"], "touch-files");
    EXPECT_EQ(approval["asked"], false);
    EXPECT_EQ(approval["outcome"], "allowed-once");

    // An option the pattern does not name, or a wider mode: asked, and nobody can be asked here.
    const cli_result option = escalated("touch -d yesterday other");
    EXPECT_EQ(option.exit_code, cli::exit_not_approved) << option.err << option.out;
    EXPECT_FALSE(fs::exists(workspace_ / "other"));
    const cli_result wider = cordon({"run", "--escalate", "danger-full-access", "--justification",
                                     "the test writes a file", "-c", "touch wide"});
    EXPECT_EQ(wider.exit_code, cli::exit_not_approved) << wider.err;
    EXPECT_FALSE(fs::exists(workspace_ / "wide"));

    // A program a run could have put on PATH (a directory of the workspace first): asked.
    const fs::path bin = workspace_ / "bin";
    fs::create_directory(bin);
    const cli_result planted =
        run_cordon({"run", "--json", "--escalate", "workspace-write", "--justification",
                    "writes a file", "-c", "touch planted"},
                   workspace_, {},
                   {{"CORDON_CONFIG_DIRS", etc_.string()},
                    {"HOME", home_.string()},
                    {"XDG_CONFIG_HOME", std::nullopt},
                    {"PATH", bin.string() + ":/usr/bin:/bin"}});
    EXPECT_EQ(planted.exit_code, cli::exit_not_approved) << planted.err << planted.out;
    EXPECT_FALSE(fs::exists(workspace_ / "planted"));

    const nlohmann::json shown = show()["settings"]["approval_rule"];
    ASSERT_EQ(shown.size(), 1u) << shown.dump();
    EXPECT_EQ(shown[0]["value"]["name"], "touch-files");
    EXPECT_EQ(shown[0]["value"]["pattern"], nlohmann::json({"touch", "<operand>..."}));
    EXPECT_EQ(shown[0]["file"], etc_file_);
    const cli_result text = cordon({"config", "show"});
    EXPECT_NE(text.out.find("[[approval_rule]]  # " + etc_file_ +
                            "\nname = \"touch-files\"\n"
                            "pattern = [\"touch\",\"<operand>...\"]\n"),
              std::string::npos)
        << text.out;
}

// A rule's name is what the record says decided: two rules of one name refuse the configuration.
// And a file that holds rules may not lie where even a run escalated to workspace-write could
// write it, whatever the standing mode: whoever writes it allows what nobody is asked about.
TEST_F(ConfigTest, ApprovalRulesHaveOneNameEachAndLieWhereNoRunWrites) {
    const std::string rule =
        "[[approval_rule]]\nname = \"tests\"\npattern = [\"make\", \"test\"]\n"
        "mode = \"workspace-write\"\nmatch = [\"make test\"]\n";
    write_config(etc_, rule);
    write_config(user_, rule);
    expect_refused(
        cordon({"run", "-c", "true"}), "cordon run",
        {"approval rule \"tests\" is defined twice (" + etc_file_ + ", " + user_file_ + ")"});

    const fs::path planted = workspace_ / "conf";
    fs::create_directory(planted);
    fs::permissions(planted, dir_mode);
    write_config(planted, rule);
    expect_refused(cordon({"run", "-c", "true"}, planted.string()), "cordon run",
                   {"the configuration file " + (planted / "config.toml").string() + " lies in " +
                    workspace_.string()});
    expect_refused(cordon({"mcp"}, planted.string()), "cordon mcp", {"lies in"});
    // Without rules the same file only sets defaults, which a read-only run cannot change.
    write_config(planted, "timeout = \"30s\"\n");
    EXPECT_EQ(cordon({"run", "-c", "true"}, planted.string()).exit_code, 0);
}

// A rule vouches for the words, not for what the caller's environment makes of them: the run it
// allows starts from the minimal environment, in the account's own home.
TEST_F(ConfigTest, ARuleRunsItsCommandInTheMinimalEnvironment) {
    write_config(etc_,
                 "[[approval_rule]]\n"
                 "name = \"print-env\"\n"
                 "pattern = [\"env\"]\n"
                 "mode = \"workspace-write\"\n"
                 "match = [\"env\"]\n");
    const cli_result printed = run_cordon(
        {"run", "--escalate", "workspace-write", "--justification", "show it", "-c", "env"},
        workspace_, {},
        {{"CORDON_CONFIG_DIRS", etc_.string()},
         {"HOME", home_.string()},
         {"XDG_CONFIG_HOME", std::nullopt},
         {"NODE_OPTIONS", "--require ./x.js"},
         {"MAKEFILES", "/tmp/evil.mk"}});
    if (printed.exit_code == cli::exit_sandbox_unavailable && !real_backends_required()) return;
    ASSERT_EQ(printed.exit_code, 0) << printed.err;
    EXPECT_EQ(printed.out.find("NODE_OPTIONS"), std::string::npos) << printed.out;
    EXPECT_EQ(printed.out.find("MAKEFILES"), std::string::npos) << printed.out;
    EXPECT_EQ(printed.out.find("HOME=" + home_.string() + "\n"), std::string::npos) << printed.out;
    EXPECT_NE(printed.out.find("HOME=" + sandbox::account_home().string() + "\n"),
              std::string::npos)
        << printed.out;
}

}  // namespace
}  // namespace cordon::test
