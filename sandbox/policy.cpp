// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

#include "cordon/policy.hpp"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>
#include <system_error>

namespace cordon::sandbox {

namespace fs = std::filesystem;

std::string_view to_string(tmp_policy value) noexcept {
    switch (value) {
        case tmp_policy::private_tmp:
            return "private";
        case tmp_policy::host:
            return "host";
        case tmp_policy::none:
            return "none";
    }
    return "invalid";
}

std::optional<tmp_policy> parse_tmp_policy(std::string_view text) noexcept {
    for (auto value : {tmp_policy::private_tmp, tmp_policy::host, tmp_policy::none}) {
        if (text == to_string(value)) return value;
    }
    return std::nullopt;
}

std::string_view to_string(network_policy value) noexcept {
    switch (value) {
        case network_policy::deny:
            return "deny";
        case network_policy::proxy:
            return "proxy";
        case network_policy::allow:
            return "allow";
    }
    return "invalid";
}

std::optional<network_policy> parse_network_policy(std::string_view text) noexcept {
    for (auto value : {network_policy::deny, network_policy::proxy, network_policy::allow}) {
        if (text == to_string(value)) return value;
    }
    return std::nullopt;
}

std::span<const protected_class> protected_classes() {
    // docs/sandbox.md, "Protected names", says for each class what runs it and what stays
    // writable beside it.
    static const std::vector<protected_class> classes{
        {"vcs",
         "git runs hooks and obeys its configuration (core.hooksPath, core.fsmonitor, "
         "credential helpers, aliases) on the next git command",
         {".git", ".git/hooks", ".git/config", ".git/commondir", ".git/config.worktree",
          ".gitmodules", ".gitconfig", ".config/git", ".hg/hgrc", ".husky",
          ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", "lefthook-local.yml",
          ".lefthook-local.yml", ".lefthook", ".lefthook-local"}},
        {"shell",
         "a shell sources its start-up files when it starts",
         {".bashrc", ".bash_aliases", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
          ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".cshrc", ".tcshrc",
          ".config/fish"}},
        {"direnv",
         "direnv and mise run these when a shell enters the directory",
         {".envrc", ".mise.toml", "mise.toml"}},
        {"editor",
         "editors and IDEs run the tasks, launch configurations and dev containers they name",
         {".vscode", ".idea", ".devcontainer", ".zed", ".exrc", ".nvim.lua", ".nvimrc", ".vimrc",
          ".config/nvim", ".emacs", ".emacs.d"}},
        {"agent",
         "agents start the MCP servers and run the hooks and commands these name; cordon reads its "
         "own configuration",
         {".mcp.json", ".claude", ".codex", ".cursor", ".agents", ".gemini", ".config/cordon"}},
        {"package",
         "package managers and toolchain selectors run the programs these name (scripts, hooks, "
         "wrappers, registries, a toolchain's own directory)",
         {".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "pip.conf", ".cargo/config",
          ".cargo/config.toml", "rust-toolchain", "rust-toolchain.toml"}},
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
    static constexpr std::array<std::string_view, 22> stores{
        ".ssh",
        ".gnupg",
        ".aws",
        ".azure",
        ".config/gcloud",
        ".kube",
        ".docker/config.json",
        ".netrc",
        ".git-credentials",
        ".config/git/credentials",
        ".config/gh/hosts.yml",
        ".npmrc",
        ".yarnrc.yml",
        ".pypirc",
        ".config/pip/pip.conf",
        ".cargo/credentials.toml",
        ".cargo/credentials",
        ".gem/credentials",
        ".terraform.d/credentials.tfrc.json",
        ".password-store",
        ".local/share/keyrings",
        ".vault-token",
    };
    std::vector<fs::path> out;
    out.reserve(stores.size());
    for (std::string_view store : stores)
        out.push_back(home / store);
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

std::optional<std::string> bad_protected_name(std::string_view name) {
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

bool at_or_beneath(const fs::path& path, const fs::path& root) {
    auto p = path.begin();
    for (auto r = root.begin(); r != root.end(); ++r, ++p) {
        if (p == path.end() || *p != *r) return false;
    }
    return true;
}

}  // namespace

std::vector<fs::path> requested_deny_read(const path_rules& rules) {
    std::vector<fs::path> out;
    auto add = [&out](const fs::path& path) {
        if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
    };
    if (rules.deny_credential_stores) {
        for (const fs::path& home : credential_homes()) {
            for (const fs::path& store : default_deny_read(home))
                add(store);
        }
    }
    for (const fs::path& asked : rules.deny_read)
        add(asked);
    return out;
}

std::vector<fs::path> effective_deny_read(const path_rules& rules) {
    std::vector<fs::path> out = requested_deny_read(rules);
    std::erase_if(out, [&rules](const fs::path& denied) {
        return std::any_of(
            rules.allow_read.begin(), rules.allow_read.end(),
            [&denied](const fs::path& allowed) { return at_or_beneath(denied, allowed); });
    });
    return out;
}

}  // namespace cordon::sandbox
