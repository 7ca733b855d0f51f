// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The command's environment (cordon/environment.hpp): the credential scrub by class of name and
// by value (a URL with a password), the names a real workstation holds that must survive it, the
// environment policy (clear, keep, unset; globs), and the same policy carried by a run_request
// into a real process, which prints what it got.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cordon/environment.hpp"
#include "cordon/executor.hpp"
#include "cordon/run.hpp"
#include "runtime/child_and_clock.hpp"
#include "runtime_test_util.hpp"
#include "support.hpp"

namespace cordon::runtime {
namespace {

using sandbox::sandbox_mode;

// NAME -> value of "NAME=value" entries (or lines); a name seen twice fails the test.
std::map<std::string, std::string> entries_of(const std::vector<std::string>& entries) {
    std::map<std::string, std::string> out;
    for (const auto& entry : entries) {
        const auto equals = entry.find('=');
        EXPECT_NE(equals, std::string::npos) << entry;
        if (equals == std::string::npos) continue;
        EXPECT_TRUE(out.emplace(entry.substr(0, equals), entry.substr(equals + 1)).second)
            << "twice: " << entry;
    }
    return out;
}

std::set<std::string> names_of(const std::map<std::string, std::string>& env) {
    std::set<std::string> out;
    for (const auto& [name, value] : env)
        out.insert(name);
    return out;
}

// The names of the environment build_environment gives `parent` (NAME=value strings).
std::set<std::string> surviving(
    const std::vector<std::string>& parent, const environment_policy& policy = {},
    const std::map<std::string, std::optional<std::string>>& given = {}) {
    std::vector<const char*> pointers;
    for (const auto& entry : parent)
        pointers.push_back(entry.c_str());
    pointers.push_back(nullptr);
    return names_of(entries_of(build_environment(pointers.data(), given, policy)));
}

const std::set<std::string> default_names{"GIT_PAGER", "NO_COLOR", "PAGER", "TERM"};

// What a developer's workstation and a CI runner hold, by class of credential.
const std::vector<std::string> credential_names{
    // KEY
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
    "STRIPE_KEY", "apikey",
    // PASSWORD, PASSWD, PASS
    "PGPASSWORD", "DB_PASSWD", "TWINE_PASSWORD", "GIT_SSH_PASSPHRASE", "SSH_ASKPASS", "mysql_pass",
    // SECRET
    "CLIENT_SECRET", "JWT_SECRET",
    // TOKEN
    "GITHUB_TOKEN", "GH_TOKEN", "NPM_TOKEN", "HF_TOKEN", "VAULT_TOKEN", "CI_JOB_TOKEN",
    // CRED
    "GOOGLE_APPLICATION_CREDENTIALS", "MY_CRED", "AZURE_CREDS",
    // AUTH: not the AUTHOR of git's names, but AUTHORIZATION and AUTHORITY
    "NPM_AUTH", "SSH_AUTH_SOCK", "NODE_AUTH", "HTTP_AUTHORIZATION", "XAUTHORITY", "AUTH",
    "BASIC_AUTH_HEADER",
    // SESSION
    "AWS_SESSION_TOKEN", "AWS_SESSION_EXPIRATION", "SESSION_ID", "DBUS_SESSION_BUS_ADDRESS",
    "SESSION_MANAGER",
    // COOKIE, PRIVATE
    "COOKIE_JAR", "SESSIONCOOKIE", "PRIVATE_DATA", "GPG_PRIVATE",
    // _PAT and _PWD
    "GITHUB_PAT", "gitlab_pat", "MYSQL_PWD"};

const std::vector<std::string> ordinary_names{"PATH",
                                              "HOME",
                                              "USER",
                                              "LOGNAME",
                                              "SHELL",
                                              "LANG",
                                              "LC_ALL",
                                              "LC_CTYPE",
                                              "PWD",
                                              "OLDPWD",
                                              "TERM",
                                              "TMPDIR",
                                              "TZ",
                                              "EDITOR",
                                              "VISUAL",
                                              "HOSTNAME",
                                              "SHLVL",
                                              "MAIL",
                                              "DISPLAY",
                                              "WAYLAND_DISPLAY",
                                              "XDG_RUNTIME_DIR",
                                              "XDG_CONFIG_HOME",
                                              "XDG_DATA_DIRS",
                                              "XDG_SESSION_ID",
                                              "XDG_SESSION_TYPE",
                                              "XDG_SESSION_CLASS",
                                              "XDG_SESSION_DESKTOP",
                                              "XDG_CURRENT_DESKTOP",
                                              "DESKTOP_SESSION",
                                              "CC",
                                              "CXX",
                                              "CFLAGS",
                                              "LDFLAGS",
                                              "MAKEFLAGS",
                                              "JAVA_HOME",
                                              "CLASSPATH",
                                              "GOPATH",
                                              "GOROOT",
                                              "CARGO_HOME",
                                              "RUSTUP_HOME",
                                              "VIRTUAL_ENV",
                                              "PYTHONPATH",
                                              "NODE_OPTIONS",
                                              "MANPATH",
                                              "PKG_CONFIG_PATH",
                                              "LD_LIBRARY_PATH",
                                              "GIT_AUTHOR_NAME",
                                              "GIT_AUTHOR_EMAIL",
                                              "GIT_COMMITTER_NAME",
                                              "AUTHORS_FILE",
                                              "SSH_AGENT_PID",
                                              "COLORTERM",
                                              "HISTFILE",
                                              "PATHEXT",
                                              "DATABASE_URL",
                                              "https_proxy",
                                              "NO_PROXY",
                                              "CI",
                                              "GITHUB_ACTIONS"};

// A shell named for a command line comes from root-owned directories only: one planted first in
// PATH (by an earlier command, or whoever set PATH) is never taken.
TEST(TrustedProgram, APlantedShellEarlierInPathIsNeverTaken) {
    test::temp_dir planted;
    test::write_file(planted / "bash", "#!/bin/sh\necho planted\n",
                     std::filesystem::perms::owner_all);
    test::scoped_env path("PATH", planted.path().string() + ":/usr/bin:/bin");
    const std::filesystem::path shell = trusted_shell();
    ASSERT_FALSE(shell.empty());
    EXPECT_EQ(shell.filename(), "bash");
    EXPECT_NE(shell.parent_path(), planted.path());
    EXPECT_TRUE(shell.is_absolute());
    EXPECT_EQ(trusted_program("bash"), shell);
    EXPECT_TRUE(trusted_program("cordon-no-such-program").empty());
}

TEST(CredentialScrub, EveryCredentialShapedClassIsDropped) {
    for (const auto& name : credential_names) {
        EXPECT_TRUE(is_credential_name(name)) << name;
    }
}

TEST(CredentialScrub, OrdinaryNamesSurvive) {
    for (const auto& name : ordinary_names) {
        EXPECT_FALSE(is_credential_name(name)) << name;
    }
}

TEST(CredentialScrub, AUrlWithAPasswordIsACredentialWhateverItsName) {
    for (const char* value :
         {"postgres://u:hunter2@db", "postgres://u:hunter2@db:5432/app?sslmode=require",
          "http://proxy-user:s3cret@proxy.corp:3128", "https://x-access-token:ghs_1@github.com/o/r",
          "redis://:p4ss@cache:6379/0", "mongodb+srv://u:p@ss@cluster0.example.net/db",
          "jdbc:mysql://root:root@localhost/db", "http://a.example http://u:p@b.example",
          "amqp://guest:guest@rabbit//"}) {
        EXPECT_TRUE(has_url_password(value)) << value;
    }
    for (const char* value :
         {"", "postgres://db/app", "https://github.com/o/r", "ssh://git@github.com/o/r.git",
          "https://user@host/x", "http://proxy.corp:3128", "http://host:8080/a@b",
          "https://u:@host", "://u:p@host", "u:p@host", "/usr/bin:/bin", "mailto:a@b",
          "file:///home/u/x:y@z"}) {
        EXPECT_FALSE(has_url_password(value)) << value;
    }
    EXPECT_EQ(
        surviving({"DATABASE_URL=postgres://u:hunter2@db/app", "https_proxy=http://u:p@px:3128",
                   "HTTP_PROXY=http://px:3128", "REPO=https://github.com/o/r"}),
        (std::set<std::string>{"GIT_PAGER", "HTTP_PROXY", "NO_COLOR", "PAGER", "REPO", "TERM"}));
}

// A secret under an innocent name is known by its shape: each shape is dropped whatever the
// variable is called, and the values a workstation's environment holds pass.
TEST(CredentialScrub, ASecretIsKnownByItsShapeWhateverItsName) {
    for (const char* value :
         {// a URL's user that is a token, and a URL query's credential
          "https://ghp_0123456789abcdefghij@github.com/o/r.git",
          "https://api.example.com/v1?user=a&password=hunter2",
          "https://hooks.example.com/x?access_token=abcdef123",
          "https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=AbCdEf%2B123",
          // connection strings
          "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=bXlrZXk=;",
          "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;"
          "SharedAccessKey=abc123=",
          "Server=db;Database=app;User Id=sa;Password=S3cret!;", "host=db user=app pwd=hunter2",
          // HTTP credentials
          "Authorization=Bearer%20abcdefghijklmnop", "Authorization: Basic dXNlcjpwYXNz",
          "api-key=0123456789,other=1", "Bearer abcdefghijklmnopQRSTUV0123",
          // a JWT, issuers' prefixes, an AWS access key id, a PEM private key
          "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2ln",
          "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
          "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "glpat-0123456789abcdefghij",
          "xoxb-123456789012-abcdefghijklmnop", "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345",
          "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "AKIAIOSFODNN7EXAMPLE",
          "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn==\n"}) {
        EXPECT_TRUE(is_secret_value(value)) << value;
        EXPECT_EQ(surviving({std::string("INNOCENT=") + value}),
                  (std::set<std::string>{"GIT_PAGER", "NO_COLOR", "PAGER", "TERM"}))
            << value;
    }
    for (const char* value : {"",
                              "/usr/local/bin:/usr/bin:/bin",
                              "en_US.UTF-8",
                              "-j4 --jobserver-auth=3,4",
                              "-j2 --jobserver-auth=fifo:/tmp/GMfifo123",
                              "ssh://git@github.com/o/r.git",
                              "https://github.com/o/r?tab=readme",
                              "rs=0:di=01;34:ln=01;36:mh=00:pi=40;33",
                              "--max-old-space-size=4096",
                              "a=b;c=d",
                              "-Dfile.encoding=UTF-8",
                              "xterm-256color",
                              "https://example.com/search?q=bearer",
                              "eyJ",
                              "The Bearer of news",
                              "/home/u/.ssh",
                              "AKIA",
                              "sk-short",
                              "Authorized",
                              "keyboard=us",
                              "/opt/hf_transformers_cache/bin",
                              "/usr/lib/node_modules/npm_package_manager_cache",
                              "ghp_short",
                              "ssh://jenkins-deploy-worker@build01.internal",
                              "-Dcom.sun.management.jmxremote.ssl.need.client.auth=false",
                              "Basic authentication disabled",
                              "basic settings"}) {
        EXPECT_FALSE(is_secret_value(value)) << value;
    }
    // A search path or a name of the minimal set is never dropped for its value's shape.
    EXPECT_EQ(surviving({"PATH=/opt/sk-proj-abcdefghijklmnopqrstuvwxyz0123456789/bin:/usr/bin",
                         "LD_LIBRARY_PATH=/opt/glpat-0123456789abcdefghij/lib"}),
              (std::set<std::string>{"GIT_PAGER", "LD_LIBRARY_PATH", "NO_COLOR", "PAGER", "PATH",
                                     "TERM"}));
}

// git's configuration from the environment is one set: an extra header with a token in it
// takes the whole set away (never a KEY without its VALUE, or a COUNT without its entries, which
// makes every git fail), and an innocent set stays whole.
TEST(CredentialScrub, GitsConfigurationTriplesAreKeptOrDroppedWhole) {
    const std::set<std::string> defaults{"GIT_PAGER", "NO_COLOR", "PAGER", "TERM"};
    std::set<std::string> innocent = defaults;
    innocent.insert({"GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0",
                     "GIT_CONFIG_KEY_1", "GIT_CONFIG_VALUE_1"});
    EXPECT_EQ(
        surviving({"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=safe.directory", "GIT_CONFIG_VALUE_0=*",
                   "GIT_CONFIG_KEY_1=core.autocrlf", "GIT_CONFIG_VALUE_1=false"}),
        innocent);
    EXPECT_EQ(surviving({"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=safe.directory",
                         "GIT_CONFIG_VALUE_0=*", "GIT_CONFIG_KEY_1=http.extraHeader",
                         "GIT_CONFIG_VALUE_1=Authorization: Basic eC1hY2Nlc3MtdG9rZW46Z2hz"}),
              defaults);
    // A key with a token in it (a URL's insteadOf) takes the whole set too.
    EXPECT_EQ(surviving({"GIT_CONFIG_COUNT=1",
                         "GIT_CONFIG_KEY_0=url.https://ghp_0123456789abcdefghijklmnopqrstuvwxyz@"
                         "github.com/.insteadOf",
                         "GIT_CONFIG_VALUE_0=https://github.com/"}),
              defaults);
    EXPECT_EQ(surviving({"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=credential.helper",
                         "GIT_CONFIG_VALUE_0=store --file /x"}),
              defaults);
}

TEST(CredentialScrub, TheDefaultPolicyDropsExactlyTheCredentials) {
    std::vector<std::string> parent;
    for (const auto& name : credential_names)
        parent.push_back(name + "=value");
    for (const auto& name : ordinary_names)
        parent.push_back(name + "=value");
    std::set<std::string> expected(ordinary_names.begin(), ordinary_names.end());
    expected.insert(default_names.begin(), default_names.end());
    EXPECT_EQ(surviving(parent), expected);
}

TEST(NamePatterns, GlobsMatchWholeNames) {
    EXPECT_TRUE(name_matches("AWS_*", "AWS_SESSION_TOKEN"));
    EXPECT_TRUE(name_matches("*_TOKEN", "GITHUB_TOKEN"));
    EXPECT_TRUE(name_matches("*", ""));
    EXPECT_TRUE(name_matches("*", "ANY"));
    EXPECT_TRUE(name_matches("LC_?????", "LC_CTYPE"));
    EXPECT_TRUE(name_matches("*SESSION*", "DBUS_SESSION_BUS_ADDRESS"));
    EXPECT_TRUE(name_matches("A*B*C", "AxxBxxBxxC"));
    EXPECT_TRUE(name_matches("PATH", "PATH"));
    EXPECT_FALSE(name_matches("PATH", "MANPATH"));
    EXPECT_FALSE(name_matches("AWS_*", "MY_AWS_X"));
    EXPECT_FALSE(name_matches("aws_*", "AWS_X")) << "names are case-sensitive";
    EXPECT_FALSE(name_matches("LC_?", "LC_ALL"));
    EXPECT_FALSE(name_matches("A*B*C", "AxxBxxC_"));
    EXPECT_FALSE(name_matches("", "A"));

    for (const char* good : {"A", "GITHUB_TOKEN", "aws_*", "*", "?", "LC_*", "*_PAT", "X1"}) {
        EXPECT_TRUE(is_name_pattern(good)) << good;
    }
    for (const char* bad :
         {"", "A=B", "=", "[A-Z]*", "A B", "A/B", "A-B", "A.B", "A\\*", "{A,B}", "\t", "A\nB"}) {
        EXPECT_FALSE(is_name_pattern(bad)) << bad;
    }
}

TEST(EnvironmentPolicy, ClearLeavesTheMinimalSetTheDefaultsAndWhatIsGiven) {
    const std::vector<std::string> parent{
        "PATH=/usr/bin",  "HOME=/home/u", "USER=u",    "LOGNAME=u",  "SHELL=/bin/bash",
        "LANG=C.UTF-8",   "LC_ALL=C",     "LC_TIME=C", "TERM=xterm", "TMPDIR=/tmp",
        "TZ=UTC",         "EDITOR=vi",    "PWD=/x",    "GOPATH=/g",  "XDG_RUNTIME_DIR=/r",
        "GITHUB_TOKEN=t", "LCX=1",        "PATHX=1",   "path=lower"};
    environment_policy clear;
    clear.clear = true;
    EXPECT_EQ(surviving(parent, clear, {{"EXTRA", "e"}, {"PATH", "/bin"}}),
              (std::set<std::string>{"EXTRA", "GIT_PAGER", "HOME", "LANG", "LC_ALL", "LC_TIME",
                                     "LOGNAME", "NO_COLOR", "PAGER", "PATH", "SHELL", "TERM",
                                     "TMPDIR", "TZ", "USER"}));
    EXPECT_EQ(surviving({}, clear), default_names);
}

TEST(EnvironmentPolicy, KeepRescuesWhatTheScrubOrTheClearDrops) {
    const std::vector<std::string> parent{"AWS_SESSION_TOKEN=t",
                                          "AWS_REGION=eu",
                                          "SSH_AUTH_SOCK=/run/agent",
                                          "GITHUB_TOKEN=g",
                                          "DATABASE_URL=postgres://u:p@db",
                                          "EDITOR=vi"};
    environment_policy keep;
    keep.keep = {"AWS_*", "SSH_AUTH_SOCK", "DATABASE_?RL"};
    std::set<std::string> expected{"AWS_REGION", "AWS_SESSION_TOKEN", "DATABASE_URL", "EDITOR",
                                   "SSH_AUTH_SOCK"};
    expected.insert(default_names.begin(), default_names.end());
    EXPECT_EQ(surviving(parent, keep), expected);

    keep.clear = true;
    expected.erase("EDITOR");
    EXPECT_EQ(surviving(parent, keep), expected) << "kept over the clear too";

    environment_policy all;
    all.keep = {"*"};
    EXPECT_EQ(surviving(parent, all).size(), parent.size() + default_names.size());
}

TEST(EnvironmentPolicy, UnsetRemovesWhatEverythingElseKeepsButNotWhatIsGiven) {
    const std::vector<std::string> parent{"PATH=/usr/bin", "HOME=/h",     "EDITOR=vi",
                                          "CI_JOB_ID=1",   "CI_RUNNER=r", "AWS_REGION=eu",
                                          "LC_ALL=C",      "PAGER=less"};
    environment_policy unset;
    unset.unset = {"CI_*", "EDITOR", "PAGER", "AWS_*", "L?_ALL"};
    unset.keep = {"AWS_*"};
    EXPECT_EQ(surviving(parent, unset),
              (std::set<std::string>{"GIT_PAGER", "HOME", "NO_COLOR", "PATH", "TERM"}))
        << "over keep, the minimal set and the defaults";
    EXPECT_EQ(surviving(parent, unset, {{"EDITOR", "nano"}, {"CI_JOB_ID", "2"}}),
              (std::set<std::string>{"CI_JOB_ID", "EDITOR", "GIT_PAGER", "HOME", "NO_COLOR", "PATH",
                                     "TERM"}))
        << "an explicit variable wins over unset";
}

TEST(EnvironmentPolicy, AnExplicitVariableWinsOverTheScrub) {
    environment_policy policy;
    policy.clear = true;
    policy.unset = {"*TOKEN*"};
    EXPECT_EQ(surviving({"GITHUB_TOKEN=from-parent"}, policy, {{"GITHUB_TOKEN", "given"}}),
              (std::set<std::string>{"GITHUB_TOKEN", "GIT_PAGER", "NO_COLOR", "PAGER", "TERM"}));
}

// The policy travels on the run_request into a real process: danger-full-access (no provider)
// and bwrap; the child prints the environment it started with.
class PolicyThroughTheExecutor : public ::testing::Test {
protected:
    std::map<std::string, std::string> printed(std::shared_ptr<sandbox::provider> provider,
                                               sandbox_mode mode, environment_policy policy) {
        run_request request;
        request.argv = {test::child(), "print-env"};
        request.mode = mode;
        request.workspace_root = workspace_.path();
        request.env = {{"CORDON_ENV_GIVEN", "given"}, {"CORDON_ENV_SECRET", "explicit"}};
        request.environment = std::move(policy);
        const run_record record = run(std::move(provider), std::move(request));
        EXPECT_EQ(record.outcome.exit_code, 0) << record.stderr_output.text;
        return entries_of(test::split_lines(record.stdout_output.text));
    }

    void check(const std::shared_ptr<sandbox::provider>& provider, sandbox_mode mode) {
        // The default policy: the scrub, by name and by value.
        auto env = printed(provider, mode, {});
        EXPECT_FALSE(env.contains("CORDON_ENV_SESSION_ID"));
        EXPECT_FALSE(env.contains("CORDON_ENV_PAT"));
        EXPECT_FALSE(env.contains("CORDON_ENV_URL"));
        EXPECT_EQ(env["CORDON_ENV_SECRET"], "explicit");
        EXPECT_EQ(env["CORDON_ENV_PLAIN"], "plain");
        EXPECT_EQ(env["CORDON_ENV_UNSET_ME"], "1");

        // Cleared: exactly the minimal set (as far as the test has it), the defaults and the
        // explicit variables; a glob keeps a scrubbed name; another unsets.
        environment_policy policy;
        policy.clear = true;
        policy.keep = {"CORDON_ENV_S*"};
        policy.unset = {"CORDON_ENV_UNSET_*"};
        env = printed(provider, mode, policy);
        std::set<std::string> expected{"CORDON_ENV_GIVEN", "CORDON_ENV_SECRET",
                                       "CORDON_ENV_SESSION_ID"};
        expected.insert(default_names.begin(), default_names.end());
        for (char** entry = environ; *entry != nullptr; ++entry) {
            const std::string text(*entry);
            const std::string name = text.substr(0, text.find('='));
            if (is_minimal_environment_name(name)) expected.insert(name);
        }
        EXPECT_EQ(names_of(env), expected);
        EXPECT_EQ(env["CORDON_ENV_SESSION_ID"], "s");
        EXPECT_EQ(env["CORDON_ENV_SECRET"], "explicit") << "explicit wins over the kept value";
        EXPECT_EQ(env["PATH"], std::getenv("PATH"));

        // Not cleared: the unset glob removes what the scrub would have let through.
        policy.clear = false;
        env = printed(provider, mode, policy);
        EXPECT_EQ(env["CORDON_ENV_PLAIN"], "plain");
        EXPECT_FALSE(env.contains("CORDON_ENV_UNSET_ME"));
        EXPECT_FALSE(env.contains("CORDON_ENV_PAT"));
        EXPECT_EQ(env["CORDON_ENV_SESSION_ID"], "s");
    }

    test::temp_dir workspace_;
    test::scoped_env session_{"CORDON_ENV_SESSION_ID", "s"};
    test::scoped_env pat_{"CORDON_ENV_PAT", "ghp_x"};
    test::scoped_env url_{"CORDON_ENV_URL", "postgres://u:hunter2@db/app"};
    test::scoped_env secret_{"CORDON_ENV_SECRET", "from-parent"};
    test::scoped_env plain_{"CORDON_ENV_PLAIN", "plain"};
    test::scoped_env unset_me_{"CORDON_ENV_UNSET_ME", "1"};
};

TEST_F(PolicyThroughTheExecutor, UnderDangerFullAccess) {
    check(nullptr, sandbox_mode::danger_full_access);
}

TEST_F(PolicyThroughTheExecutor, UnderBwrap) {
    std::string why;
    auto provider = test::provider_for(sandbox::backend_choice::bwrap, why);
    if (!provider) CORDON_SKIP_OR_FAIL(why);
    check(provider, sandbox_mode::read_only);
}

TEST_F(PolicyThroughTheExecutor, UnderLandlock) {
    std::string why;
    auto provider = test::provider_for(sandbox::backend_choice::landlock, why);
    if (!provider) CORDON_SKIP_OR_FAIL(why);
    check(provider, sandbox_mode::read_only);
}

}  // namespace
}  // namespace cordon::runtime
