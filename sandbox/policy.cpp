// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Longer than the ~500 lines a file here stays under: the default deny list and the stores it is
// made of (each tool's configuration read as that tool reads it: ssh, git, cloud CLIs), and the
// secrets found where no list names them, folded into one list a run hides.
#include "cordon/policy.hpp"

#include "base/enum_text.hpp"
#include "base/small_file.hpp"
#include "sandbox/git_config.hpp"
#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/quarantine.hpp"
#include "sandbox/secret_scan.hpp"

#include <fcntl.h>
#include <glob.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <system_error>

namespace cordon::sandbox {

namespace fs = std::filesystem;

constexpr auto tmp_policy_texts = base::enum_texts<tmp_policy>({
    {tmp_policy::private_tmp, "private"},
    {tmp_policy::host, "host"},
    {tmp_policy::none, "none"},
});

std::string_view to_string(tmp_policy value) noexcept {
    return tmp_policy_texts.text(value);
}

std::optional<tmp_policy> parse_tmp_policy(std::string_view text) noexcept {
    return tmp_policy_texts.parse(text);
}

constexpr auto network_policy_texts = base::enum_texts<network_policy>({
    {network_policy::deny, "deny"},
    {network_policy::proxy, "proxy"},
    {network_policy::allow, "allow"},
});

std::string_view to_string(network_policy value) noexcept {
    return network_policy_texts.text(value);
}

std::optional<network_policy> parse_network_policy(std::string_view text) noexcept {
    return network_policy_texts.parse(text);
}

std::span<const protected_class> protected_classes() {
    // docs/sandbox.md, "Protected names", says for each class what runs it and what stays
    // writable beside it. A name is looked for at every depth of every writable root; one that
    // starts with `~/` only in the homes that lie in one (home_anchor), where it is unambiguous
    // (`~/bin` is a search path, a project's `bin` is not); `$PATH` is every directory on
    // cordon's PATH in such a home.
    static const std::vector<protected_class> classes{
        {"vcs",
         "git runs hooks and obeys its configuration (core.hooksPath, core.fsmonitor, "
         "credential helpers, aliases) on the next git command; Mercurial its hooks",
         {".git", ".git/hooks", ".git/config", ".git/commondir", ".git/config.worktree",
          ".gitmodules", ".gitconfig", ".config/git", ".hg/hgrc", ".hgrc", ".husky",
          ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", "lefthook-local.yml",
          ".lefthook-local.yml", ".lefthook", ".lefthook-local"}},
        {"shell",
         "a shell, a terminal multiplexer or a prompt sources or runs these when it starts",
         {".bashrc",
          ".bash_aliases",
          ".bash_profile",
          ".bash_login",
          ".bash_logout",
          ".profile",
          ".bashrc.d",
          ".zshrc",
          ".zshenv",
          ".zprofile",
          ".zlogin",
          ".zlogout",
          ".kshrc",
          ".cshrc",
          ".tcshrc",
          ".config/fish",
          ".config/nushell",
          ".config/powershell",
          ".xonshrc",
          ".config/xonsh",
          ".config/starship.toml",
          ".tmux.conf",
          ".config/tmux",
          ".screenrc",
          "~/.oh-my-zsh",
          "~/.cargo/env",
          "~/.nvm",
          "~/.fzf.bash",
          "~/.fzf.zsh",
          "~/.p10k.zsh",
          "~/.config/lesskey",
          "~/.lesskey",
          "~/.muttrc",
          "~/.config/i3",
          "~/.config/sway",
          "~/.config/hypr"}},
        {"direnv",
         "direnv, mise and asdf run or obey these when a shell enters the directory (.envrc, "
         "hooks, tasks, an env file's source, a tool's `path:`)",
         {".envrc", ".envrc.local", ".config/direnv", ".mise.toml", "mise.toml", ".mise.local.toml",
          "mise.local.toml", ".mise", "mise/config.toml", "mise/tasks", ".config/mise",
          ".config/mise.toml", "mise-tasks", ".mise-tasks", ".tool-versions"}},
        {"editor",
         "editors and IDEs run the tasks, launch configurations, language servers, plugins and "
         "dev containers these name",
         {".vscode", ".idea", ".devcontainer", ".devcontainer.json", ".zed", ".config/zed",
          ".helix", ".config/helix", ".config/Code", ".config/Cursor", ".exrc", ".nvim.lua",
          ".nvimrc", ".vimrc", ".config/nvim", "~/.vim", ".emacs", ".emacs.d", "~/.config/emacs"}},
        {"agent",
         "agents start the MCP servers and run the hooks, commands and lint or test commands "
         "these name; cordon reads its own configuration",
         {".mcp.json",     ".claude",
          ".codex",        ".cursor",
          ".agents",       ".gemini",
          ".amazonq",      ".roo",
          ".roomodes",     ".kiro",
          "opencode.json", "opencode.jsonc",
          ".opencode",     ".config/opencode",
          ".windsurf",     ".codeium",
          ".continue",     ".aider.conf.yml",
          ".crush.json",   "crush.json",
          ".config/crush", ".qwen",
          ".kilocode",     ".clinerules",
          ".copilot",      ".config/goose",
          ".config/cordon"}},
        {"package",
         "package managers, build tools and toolchain selectors run the programs these name "
         "(scripts, hooks, wrappers, extensions, init scripts, a toolchain's own directory)",
         {".npmrc",
          ".yarnrc",
          ".yarnrc.yml",
          ".pnpmfile.cjs",
          "bunfig.toml",
          "pip.conf",
          ".cargo/config",
          ".cargo/config.toml",
          "rust-toolchain",
          "rust-toolchain.toml",
          ".mvn",
          ".bazelversion",
          ".bazeliskrc",
          "~/.rustup",
          "~/.gradle/init.d",
          "~/.gradle/init.gradle",
          "~/.gradle/init.gradle.kts",
          "~/.sbt",
          "~/.lein/profiles.clj",
          "~/.pydistutils.cfg"}},
        {"repl",
         "a debugger, a REPL or a database shell runs these when it starts in the directory or "
         "the home",
         {".pdbrc", ".Rprofile", "renv/activate.R", ".irbrc", ".pryrc", ".gdbinit", ".lldbinit",
          ".octaverc", "~/.psqlrc", "~/.sqliterc", "~/.ipython", "~/.jupyter", "~/.julia/config"}},
        {"path",
         "the next shell finds commands by name in these directories, before the system's; "
         "python runs the .pth files and usercustomize of the user site (~/.local/lib) at every "
         "start and imports from it before the system's packages",
         {"$PATH", "~/bin", "~/.local/bin", "~/.local/lib", "~/.cargo/bin", "~/go/bin",
          "~/.deno/bin", "~/.bun/bin", "~/.volta/bin", "~/.yarn/bin", "~/.npm-global/bin",
          "~/.dotnet/tools", "~/.pyenv/shims", "~/.rbenv/shims", "~/.asdf/shims",
          "~/.local/share/mise/shims"}},
        {"session",
         "the desktop session, systemd's user manager, PAM and mail delivery run these at "
         "login, at start-up, or when a file is opened or a mail arrives",
         {"~/.config/autostart", "~/.config/systemd", "~/.local/share/systemd",
          "~/.config/environment.d", "~/.pam_environment", "~/.xprofile", "~/.xsession",
          "~/.xsessionrc", "~/.xinitrc", "~/.config/plasma-workspace",
          "~/.local/share/applications", "~/.config/mimeapps.list", "~/.forward", "~/.mailcap"}},
        {"remote",
         "ssh, cloud, cluster and container tools run the commands these name (ProxyCommand, "
         "credential_process, exec plugins, credential helpers, CLI plugins, providers, "
         "pinentry), and sshd lets in the keys authorized_keys lists",
         {"~/.ssh", "~/.aws", "~/.kube", "~/.docker", "~/.config/gcloud", "~/.azure", "~/.oci",
          "~/.config/gh", "~/.terraformrc", "~/.terraform.d", "~/.gnupg", "~/.config/containers"}},
    };
    return classes;
}

std::vector<std::string> default_protected_names() {
    std::vector<std::string> out;
    for (const protected_class& c : protected_classes()) {
        for (std::string_view name : c.names)
            out.emplace_back(name);
    }
    return out;
}

std::string_view class_of(std::string_view name) {
    for (const protected_class& c : protected_classes()) {
        if (std::find(c.names.begin(), c.names.end(), name) != c.names.end()) return c.name;
    }
    return "";
}

std::vector<fs::path> default_deny_read(const fs::path& home) {
    if (home.empty() || !home.is_absolute()) return {};
    // By what holds them; each logs in as the user, or decrypts what does.
    static constexpr std::string_view stores[]{
        // keys, keyrings and password stores
        ".ssh", ".gnupg", ".password-store", ".local/share/keyrings", ".config/sops/age/keys.txt",
        // cloud and cluster tools
        ".aws", ".azure", ".config/gcloud", ".kube", ".oci", ".config/doctl", ".s3cfg", ".boto",
        ".databrickscfg", ".config/rclone/rclone.conf",
        // containers
        ".docker/config.json", ".docker/contexts/tls", ".config/containers/auth.json", ".minikube",
        // git, its hosts and their command lines
        ".netrc", ".git-credentials", ".config/git/credentials", ".config/gh/hosts.yml",
        ".config/hub", ".config/glab-cli/config.yml",
        // package registries
        ".npmrc", ".yarnrc.yml", ".pypirc", ".config/pip/pip.conf", ".cargo/credentials.toml",
        ".cargo/credentials", ".gem/credentials", ".m2/settings.xml", ".m2/settings-security.xml",
        ".gradle/gradle.properties", ".nuget/NuGet/NuGet.Config", ".config/composer/auth.json",
        ".composer/auth.json",
        // databases
        ".pgpass", ".my.cnf", ".mylogin.cnf",
        // infrastructure tools
        ".terraform.d/credentials.tfrc.json", ".terraformrc", ".vault-token",
        // the coding agents' own tokens
        ".claude/.credentials.json", ".claude.json", ".codex/auth.json", ".config/github-copilot",
        ".gemini/oauth_creds.json", ".local/share/opencode/auth.json", ".aider.conf.yml",
        ".config/goose/secrets.yaml", ".continue/config.json",
        // browsers: their cookies and saved logins are sessions
        ".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware"};
    std::vector<fs::path> out;
    out.reserve(std::size(stores));
    for (std::string_view store : stores)
        out.push_back(home / store);
    return out;
}

namespace {

bool at_or_beneath(const fs::path& path, const fs::path& root) {
    auto p = path.begin();
    for (auto r = root.begin(); r != root.end(); ++r, ++p) {
        if (p == path.end() || *p != *r) return false;
    }
    return true;
}

// A path an environment variable or a configuration file names: absolute, or relative to cordon's
// working directory (where the tools started beside cordon look); `~/`, `$HOME/`, `${HOME}/` and
// ssh's `%d/` from `home`. A value with another variable or token in it names nothing cordon
// can know (it is never taken as a relative path).
fs::path named_path(std::string_view value, const fs::path& home) {
    if (value.empty()) return {};
    for (std::string_view prefix : {"~/", "$HOME/", "${HOME}/", "%d/"}) {
        if (!value.starts_with(prefix)) continue;
        if (home.empty()) return {};
        value.remove_prefix(prefix.size());
        if (value.find_first_of("$%~`") != std::string_view::npos) return {};
        return canonical_path(home / std::string(value));
    }
    if (value.find_first_of("$%`") != std::string_view::npos) return {};
    if (value.front() == '~') return {};  // another user's home: not this user's store
    return canonical_path(std::string(value));
}

// The first argument of a configuration line, unquoted: `IdentityFile "~/a b"`, `--file=x`.
std::string_view first_word(std::string_view text) {
    text.remove_prefix(std::min(text.find_first_not_of(" \t="), text.size()));
    if (!text.empty() && (text.front() == '"' || text.front() == '\'')) {
        const char quote = text.front();
        text.remove_prefix(1);
        return text.substr(0, text.find(quote));
    }
    return text.substr(0, text.find_first_of(" \t"));
}

std::vector<std::string_view> lines_of(std::string_view text) {
    std::vector<std::string_view> out;
    while (!text.empty()) {
        const std::size_t end = std::min(text.find('\n'), text.size());
        std::string_view line = text.substr(0, end);
        line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size()));
        // CRLF files are read as the tools read them.
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
            line.remove_suffix(1);
        if (!line.empty() && line.front() != '#' && line.front() != ';') out.push_back(line);
        text.remove_prefix(std::min(end + 1, text.size()));
    }
    return out;
}

bool starts_with_word(std::string_view line, std::string_view word) {
    if (line.size() <= word.size()) return false;
    for (std::size_t i = 0; i < word.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(line[i])) != word[i]) return false;
    }
    const char next = line[word.size()];
    return next == ' ' || next == '\t' || next == '=';
}

// A configuration file's text, "" when it is none: never a wait on a FIFO or a device someone
// put at its name (opened non-blocking, read only when it is a regular file).
std::string config_text(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return {};
    struct stat st {};
    std::string out;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        auto text = base::read_small_fd(fd);
        if (auto* content = std::get_if<std::string>(&text)) out = std::move(*content);
    }
    ::close(fd);
    return out;
}

// Configuration files include others: followed this deep at most, and this many files read in
// all (a file that includes itself ten times on each line is 10^8 reads at depth 8).
constexpr int include_depth = 8;
constexpr int files_to_read = 64;

// The keys and certificates an ssh configuration names (IdentityFile, CertificateFile), and those
// of the files it includes (Include, relative to ~/.ssh, globs expanded).
template <typename Add>
void ssh_keys(const fs::path& config, const fs::path& home, const Add& add, int depth,
              int& budget) {
    if (budget-- <= 0) return;
    const std::string text = config_text(config);
    for (std::string_view line : lines_of(text)) {
        if (starts_with_word(line, "include") && depth < include_depth) {
            for (std::string_view rest = line.substr(7);;) {
                const std::string_view word = first_word(rest);
                if (word.empty()) break;
                rest.remove_prefix(rest.find(word) + word.size());
                fs::path named = word.front() == '/' || word.front() == '~' || word.front() == '$'
                                     ? named_path(word, home)
                                     : home / ".ssh" / std::string(word);
                if (named.empty()) continue;
                glob_t found{};
                if (::glob(named.c_str(), GLOB_NOSORT, nullptr, &found) == 0) {
                    for (std::size_t i = 0; i < found.gl_pathc && i < 64; ++i)
                        ssh_keys(found.gl_pathv[i], home, add, depth + 1, budget);
                }
                ::globfree(&found);
            }
            continue;
        }
        for (std::string_view keyword : {"identityfile", "certificatefile"}) {
            if (starts_with_word(line, keyword))
                add(named_path(first_word(line.substr(keyword.size())), home));
        }
    }
}

// Where git's `store --file` helpers keep credentials, in a configuration and what it includes
// (include.path and includeIf's path, relative to the including file), read by the project's port
// of git's own reader (git_config.hpp): quoting, continuations, a header on the entry's line.
template <typename Add>
void git_credential_stores(const fs::path& config, const fs::path& home, const Add& add, int depth,
                           int& budget) {
    if (budget-- <= 0) return;
    auto parsed = git_config::parse(config_text(config));
    auto* entries = std::get_if<std::vector<git_config::entry>>(&parsed);
    if (entries == nullptr) return;  // git would not read it either
    for (const git_config::entry& e : *entries) {
        if (!e.value || e.value->empty()) continue;
        const std::string_view value = *e.value;
        if ((e.section == "include" || e.section == "includeif") && e.name == "path") {
            if (depth >= include_depth) continue;
            const bool relative =
                value.front() != '/' && value.front() != '~' && value.front() != '$';
            const fs::path named =
                relative ? config.parent_path() / std::string(value) : named_path(value, home);
            if (!named.empty()) git_credential_stores(named, home, add, depth + 1, budget);
            continue;
        }
        if (e.section != "credential" || e.name != "helper") continue;
        const std::size_t store = value.find("store");
        const std::size_t file = value.find("--file", store);
        if (store == std::string_view::npos || file == std::string_view::npos) continue;
        add(named_path(first_word(value.substr(file + 6)), home));
    }
}

}  // namespace

std::vector<fs::path> relocated_credential_stores(const std::vector<fs::path>& homes) {
    std::vector<fs::path> out;
    // A variable that names `/` or a home (DOCKER_CERT_PATH=/, GNUPGHOME=$HOME) names no store:
    // hiding it would hide every file, or the home's, and the run could not start.
    const auto add = [&out, &homes](fs::path path) {
        if (path.empty() || !path.is_absolute() || path == path.root_path() ||
            std::any_of(homes.begin(), homes.end(),
                        [&path](const fs::path& home) { return at_or_beneath(home, path); }) ||
            std::find(out.begin(), out.end(), path) != out.end()) {
            return;
        }
        out.push_back(std::move(path));
    };
    const fs::path home = homes.empty() ? fs::path() : homes.front();
    const auto variable = [](const char* name) -> std::string_view {
        const char* value = std::getenv(name);
        return value == nullptr ? std::string_view() : std::string_view(value);
    };
    // The variables that move a store, and the store in the directory one names ("": the path
    // named is the store).
    struct relocation {
        const char* variable;
        std::array<std::string_view, 2> files;
    };
    static constexpr relocation relocations[]{
        {"AWS_SHARED_CREDENTIALS_FILE", {""}},
        {"AWS_CONFIG_FILE", {""}},
        {"GOOGLE_APPLICATION_CREDENTIALS", {""}},
        {"CLOUDSDK_CONFIG", {""}},
        {"AZURE_CONFIG_DIR", {""}},
        {"OCI_CLI_CONFIG_FILE", {""}},
        {"BOTO_CONFIG", {""}},
        {"RCLONE_CONFIG", {""}},
        {"DOCKER_CONFIG", {"config.json", "contexts/tls"}},
        {"DOCKER_CERT_PATH", {""}},
        {"REGISTRY_AUTH_FILE", {""}},
        {"GH_CONFIG_DIR", {"hosts.yml"}},
        {"GNUPGHOME", {""}},
        {"PASSWORD_STORE_DIR", {""}},
        {"SOPS_AGE_KEY_FILE", {""}},
        {"CARGO_HOME", {"credentials.toml", "credentials"}},
        {"NPM_CONFIG_USERCONFIG", {""}},
        {"npm_config_userconfig", {""}},
        {"PGPASSFILE", {""}},
        {"MYSQL_TEST_LOGIN_FILE", {""}},
        {"TF_CLI_CONFIG_FILE", {""}},
        {"NETRC", {""}},
        {"CODEX_HOME", {"auth.json"}},
        {"CLAUDE_CONFIG_DIR", {".credentials.json", ".claude.json"}},
        {"GRADLE_USER_HOME", {"gradle.properties"}},
        {"COMPOSER_HOME", {"auth.json"}},
    };
    for (const relocation& r : relocations) {
        const fs::path named = named_path(variable(r.variable), home);
        if (named.empty()) continue;
        // The first entry "" is the path itself; a later "" is no entry.
        for (std::size_t i = 0; i < r.files.size(); ++i) {
            if (i > 0 && r.files[i].empty()) continue;
            add(r.files[i].empty() ? named : canonical_path(named / r.files[i]));
        }
    }
    // KUBECONFIG is a list.
    for (std::string_view list = variable("KUBECONFIG"); !list.empty();) {
        const std::size_t end = std::min(list.find(':'), list.size());
        add(named_path(list.substr(0, end), home));
        list.remove_prefix(std::min(end + 1, list.size()));
    }
    // The stores of ~/.config and ~/.local/share where XDG's variables put those directories.
    for (const auto& [name, prefix] :
         {std::pair{"XDG_CONFIG_HOME", std::string_view(".config/")},
          std::pair{"XDG_DATA_HOME", std::string_view(".local/share/")}}) {
        const fs::path base = named_path(variable(name), home);
        if (base.empty()) continue;
        for (const fs::path& store : default_deny_read(fs::path("/"))) {
            const std::string relative = store.relative_path().string();
            if (relative.starts_with(prefix))
                add(canonical_path(base / relative.substr(prefix.size())));
        }
    }
    for (const fs::path& each : homes) {
        int ssh_budget = files_to_read;
        ssh_keys(each / ".ssh" / "config", each, add, 0, ssh_budget);
        // git's credential store, wherever `store --file` puts it: the global configuration
        // (GIT_CONFIG_GLOBAL, or ~/.gitconfig) and the XDG one, with what they include.
        fs::path config_home = each / ".config";
        if (const fs::path xdg = named_path(variable("XDG_CONFIG_HOME"), each); !xdg.empty())
            config_home = xdg;
        fs::path global = each / ".gitconfig";
        if (const fs::path named = named_path(variable("GIT_CONFIG_GLOBAL"), each); !named.empty())
            global = named;
        int git_budget = files_to_read;
        for (const fs::path& config : {global, config_home / "git" / "config"})
            git_credential_stores(config, each, add, 0, git_budget);
    }
    return out;
}

fs::path account_home() {
    // getpwuid_r: the policy may be built on several threads at once.
    passwd entry{};
    passwd* found = nullptr;
    std::array<char, 4096> buffer{};
    if (::getpwuid_r(::getuid(), &entry, buffer.data(), buffer.size(), &found) == 0 &&
        found != nullptr && found->pw_dir != nullptr && found->pw_dir[0] == '/') {
        return canonical_path(found->pw_dir);
    }
    return {};
}

fs::path invoking_home() {
    if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
        return canonical_path(home);
    }
    return account_home();
}

std::vector<fs::path> credential_homes() {
    std::vector<fs::path> out;
    fs::path relative;
    if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0' && *home != '/') {
        relative = canonical_path(home);
    }
    for (fs::path home : {invoking_home(), account_home(), std::move(relative)}) {
        if (!home.empty() && std::find(out.begin(), out.end(), home) == out.end()) {
            out.push_back(std::move(home));
        }
    }
    return out;
}

std::optional<std::string_view> home_anchored(std::string_view name) {
    if (!name.starts_with("~/")) return std::nullopt;
    return name.substr(2);
}

std::vector<fs::path> protected_homes() {
    std::vector<fs::path> out = credential_homes();
    // The local password file, read with a stream of its own: getpwent's is shared by every
    // thread, and a policy may be planned on several at once. Accounts of a network directory
    // are not enumerated (docs/sandbox.md).
    std::FILE* file = std::fopen("/etc/passwd", "re");
    if (file == nullptr) return out;
    passwd entry{};
    passwd* found = nullptr;
    std::vector<char> buffer(4096);
    for (;;) {
        const int error = ::fgetpwent_r(file, &entry, buffer.data(), buffer.size(), &found);
        // A line longer than the buffer is read again with a larger one (the stream is left at
        // its start); one beyond a mebibyte is no account.
        if (error == ERANGE && buffer.size() < (std::size_t{1} << 20)) {
            buffer.resize(buffer.size() * 2);
            continue;
        }
        if (error != 0 || found == nullptr) break;
        const std::string_view dir = found->pw_dir != nullptr ? found->pw_dir : "";
        const std::string_view shell = found->pw_shell != nullptr ? found->pw_shell : "";
        if (dir.size() < 2 || dir.front() != '/' || shell.ends_with("nologin") ||
            shell.ends_with("/false")) {
            continue;
        }
        fs::path home = canonical_path(std::string(dir));
        if (home != "/" && std::find(out.begin(), out.end(), home) == out.end())
            out.push_back(std::move(home));
    }
    std::fclose(file);
    return out;
}

std::optional<std::string> bad_protected_name(std::string_view name) {
    if (name == path_directories) return std::nullopt;
    if (auto in_home = home_anchored(name)) name = *in_home;
    if (name.empty()) return "a protected name cannot be empty";
    if (name.front() == '/') {
        return "a protected name is relative to each writable root: " + std::string(name);
    }
    std::size_t start = 0;
    while (start <= name.size()) {
        const std::size_t end = std::min(name.find('/', start), name.size());
        const std::string_view part = name.substr(start, end - start);
        if (part.empty() || part == "." || part == "..") {
            return "a protected name has no empty, '.' or '..' component: " + std::string(name);
        }
        start = end + 1;
    }
    return std::nullopt;
}

namespace {

// Where a path leads, as the kernel would take it component by component, through every symlink,
// a dangling one too, and past the first component that does not exist (kept as written from
// there): `realpath -m`. nullopt when the links loop or lead on too long.
std::optional<fs::path> resolved_through_links(const fs::path& absolute) {
    std::vector<fs::path> pending;  // the components still to take, the next one last
    const auto push_all = [&pending](const fs::path& path) {
        std::vector<fs::path> parts;
        for (const fs::path& part : path.relative_path())
            parts.push_back(part);
        pending.insert(pending.end(), parts.rbegin(), parts.rend());
    };
    push_all(absolute);
    fs::path out = "/";
    int links = 0;
    while (!pending.empty()) {
        const fs::path part = std::move(pending.back());
        pending.pop_back();
        if (part.empty() || part == ".") continue;
        if (part == "..") {
            out = out.parent_path();
            continue;
        }
        fs::path next = out / part;
        // Each component is looked at, one after a `..` past a missing one too.
        struct stat st {};
        if (::lstat(next.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
            std::error_code ec;
            const fs::path target = fs::read_symlink(next, ec);
            if (ec || ++links > 40) return std::nullopt;  // ELOOP, as the kernel would say
            if (target.is_absolute()) out = "/";
            push_all(target);
            continue;
        }
        out = std::move(next);
    }
    return out;
}

}  // namespace

fs::path canonical_path(const fs::path& path) {
    std::error_code ec;
    fs::path absolute = fs::absolute(path, ec);
    if (ec) absolute = path;
    // realpath(3) resolves component by component, as chdir does: `link/..` is the parent of
    // the link's target.
    fs::path resolved = fs::canonical(absolute, ec);
    if (!ec) return resolved;
    // What does not exist yet is taken where the kernel would make it: through every link on
    // the way (a dangling one to its target), then as written.
    if (auto through = resolved_through_links(absolute)) return *through;
    return absolute.lexically_normal();
}

std::vector<fs::path> writable_roots(const sandbox_policy& policy) {
    std::vector<fs::path> roots;
    if (policy.mode != sandbox_mode::workspace_write) return roots;
    auto add = [&roots](const fs::path& candidate) {
        fs::path canonical = canonical_path(candidate);
        if (std::find(roots.begin(), roots.end(), canonical) == roots.end()) {
            roots.push_back(std::move(canonical));
        }
    };
    add(policy.workspace_root);
    for (const fs::path& root : policy.rules.writable_roots)
        add(root);
    if (policy.rules.tmp != tmp_policy::none) {
        add("/tmp");
        if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir != nullptr && *tmpdir == '/') {
            add(tmpdir);
        }
    }
    return roots;
}

namespace {

// The files of the homes that hold a private key or a token where no list names them
// (secret_scan.hpp), beside the stores `out` already holds: at most this many paths of the 256 a
// run may deny (landlock::max_denied_reads), and fewer when the lists leave less than `kept_free`
// (the names a second mount gives, the caller's own deny_read).
constexpr std::size_t found_secrets_at_most = 48;
constexpr std::size_t kept_free = 32;

std::vector<fs::path> found_secrets_of(const std::vector<fs::path>& homes,
                                       const std::vector<fs::path>& out, const path_rules& rules,
                                       const std::vector<fs::path>& own_roots,
                                       std::vector<fs::path>* left) {
    const std::size_t taken = out.size() + rules.deny_read.size() + kept_free;
    const std::size_t budget =
        taken >= landlock::max_denied_reads
            ? 0
            : std::min(found_secrets_at_most, landlock::max_denied_reads - taken);
    // The run's own roots stay readable: a workspace's test keys are its tests' (and a denied
    // path in a writable root is one the Landlock rung cannot hide). The scan does not enter
    // them: what the run wrote there must not spend its bounds.
    std::vector<fs::path> readable = own_roots;
    readable.insert(readable.end(), rules.writable_roots.begin(), rules.writable_roots.end());
    secret_cache_options options;
    for (const fs::path& root : readable) {
        fs::path canonical = canonical_path(root);
        if (std::find(options.own.begin(), options.own.end(), canonical) == options.own.end())
            options.own.push_back(std::move(canonical));
    }
    std::vector<fs::path> found;
    for (const fs::path& home : homes) {
        // cordon's quarantine too where $XDG_STATE_HOME moves it (secret_scan.cpp says why).
        std::vector<fs::path> skip = default_deny_read(home);
        if (const fs::path quarantine = default_quarantine_home(); !quarantine.empty())
            skip.push_back(quarantine);
        std::vector<fs::path> in_home = found_secrets(home, skip, options).found;
        found.insert(found.end(), in_home.begin(), in_home.end());
    }
    return secrets_to_deny(std::move(found), homes, readable, out, budget, left);
}

std::vector<fs::path> deny_reads(const path_rules& rules, const std::vector<fs::path>& own_roots,
                                 std::vector<fs::path>* found_left) {
    std::vector<fs::path> out;
    auto add = [&out](const fs::path& path) {
        if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
    };
    if (rules.deny_credential_stores) {
        const std::vector<fs::path> homes = credential_homes();
        for (const fs::path& home : homes) {
            for (const fs::path& store : default_deny_read(home))
                add(store);
        }
        for (const fs::path& store : relocated_credential_stores(homes))
            add(store);
        for (const fs::path& found : found_secrets_of(homes, out, rules, own_roots, found_left))
            add(found);
    }
    for (const fs::path& asked : rules.deny_read)
        add(asked);
    return out;
}

}  // namespace

std::vector<fs::path> requested_deny_read(const path_rules& rules,
                                          const std::vector<fs::path>& own_roots) {
    return deny_reads(rules, own_roots, nullptr);
}

std::vector<fs::path> effective_deny_read(const path_rules& rules,
                                          const std::vector<fs::path>& own_roots,
                                          std::vector<fs::path>* found_left) {
    std::vector<fs::path> out = deny_reads(rules, own_roots, found_left);
    std::erase_if(out, [&rules](const fs::path& denied) {
        return std::any_of(
            rules.allow_read.begin(), rules.allow_read.end(),
            [&denied](const fs::path& allowed) { return at_or_beneath(denied, allowed); });
    });
    return out;
}

}  // namespace cordon::sandbox
