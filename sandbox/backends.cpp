#include "sandbox/backends.hpp"

#include <stdexcept>

#include "sandbox/landlock_ruleset.hpp"
#include "sandbox/protected_paths.hpp"

namespace cordon::sandbox {

namespace {

void require_confined(const sandbox_policy& policy) {
    if (!is_confined(policy.mode)) {
        throw std::invalid_argument("danger-full-access never reaches a sandbox backend");
    }
    if (!policy.workspace_root.is_absolute()) {
        throw std::invalid_argument("sandbox policy workspace_root must be absolute");
    }
}

void append_command(std::vector<std::string>& out, std::span<const std::string> argv) {
    if (argv.empty()) throw std::invalid_argument("cannot confine an empty argv");
    out.emplace_back("--");
    out.insert(out.end(), argv.begin(), argv.end());
}

void set_common(confined_argv& out, backend_kind kind, const sandbox_policy& policy,
                const profile& host) {
    out.backend = kind;
    enforcement_assessment assessment = assess(kind, policy.mode, host.landlock_abi);
    out.level = assessment.level;
    out.gaps = std::move(assessment.gaps);
    out.denial_signatures = denial_signatures(kind, policy.mode);
    out.runner_failure_rules = runner_failure_rules(kind);
    out.status = status_channel{runner_status_fd};
    out.environment_fd = command_environment_fd;
}

}  // namespace

std::string_view to_string(backend_kind kind) noexcept {
    switch (kind) {
        case backend_kind::bwrap:
            return "bwrap";
        case backend_kind::landlock:
            return "landlock";
        case backend_kind::seatbelt:
            return "seatbelt";
    }
    return "invalid";
}

std::optional<backend_kind> parse_backend_kind(std::string_view text) noexcept {
    for (auto kind : {backend_kind::bwrap, backend_kind::landlock, backend_kind::seatbelt}) {
        if (text == to_string(kind)) return kind;
    }
    return std::nullopt;
}

enforcement_assessment assess(backend_kind kind, sandbox_mode mode, int landlock_abi) {
    enforcement_assessment out;
    const std::string abi = "Landlock ABI " + std::to_string(landlock_abi);
    switch (kind) {
        case backend_kind::bwrap:
            if (landlock_abi <= 0) {
                out.gaps.emplace_back(
                    "Landlock is unavailable: only bwrap's mounts stand between the command and "
                    "host FIFOs, mounts that appear during the run, and abstract unix sockets");
            } else {
                if (landlock_abi < landlock::full_filesystem_abi) {
                    out.gaps.push_back(abi +
                                       " governs neither truncation nor device ioctls: only "
                                       "bwrap's mounts do");
                }
                if (landlock_abi < landlock::scopes_abi) {
                    out.gaps.push_back(abi +
                                       " has no scopes (ABI 6, Linux 6.12): abstract unix sockets "
                                       "of host daemons are reachable");
                }
            }
            break;
        case backend_kind::landlock:
            if (landlock_abi < landlock::full_filesystem_abi) {
                out.gaps.push_back(abi +
                                   " governs neither truncation (ABI 3) nor device ioctls "
                                   "(ABI 5)");
            }
            if (landlock_abi < landlock::scopes_abi) {
                out.gaps.push_back(abi +
                                   " has no scopes (ABI 6, Linux 6.12): the command can signal "
                                   "processes of its uid and reach abstract unix sockets");
            }
            if (mode == sandbox_mode::workspace_write) {
                out.gaps.emplace_back(
                    "file metadata (chmod, chown, utime, xattrs) outside the workspace is not "
                    "governed: Landlock has no right for it and seccomp cannot tell paths apart");
            }
            break;
        case backend_kind::seatbelt:
            break;
    }
    out.level = out.gaps.empty() ? enforcement::full : enforcement::partial;
    return out;
}

std::vector<std::string> denial_signatures(backend_kind kind, sandbox_mode mode) {
    const bool read_only = mode == sandbox_mode::read_only;
    switch (kind) {
        case backend_kind::bwrap:
            if (read_only) {
                return {"read-only file system", "permission denied", "operation not permitted"};
            }
            return {"read-only file system", "permission denied"};
        case backend_kind::landlock:
            if (read_only) return {"permission denied", "operation not permitted"};
            return {"permission denied"};
        case backend_kind::seatbelt:
            return {"operation not permitted"};
    }
    return {};
}

std::vector<runner_failure_rule> runner_failure_rules(backend_kind kind) {
    const runner_failure_rule launcher{
        {125}, {"cordon-landlock: "}, {std::string(launcher_notice_line)}};
    switch (kind) {
        case backend_kind::bwrap:
            return {{{}, {"bwrap: "}, {}}, launcher};
        case backend_kind::landlock:
            return {launcher};
        case backend_kind::seatbelt:
            return {{{}, {"sandbox-exec: "}, {}}};
    }
    return {};
}

std::vector<landlock_grant> landlock_grants(sandbox_mode mode, bool inside_bwrap) {
    std::vector<landlock_grant> out{{"/dev/null", true, false},
                                    {"/dev/zero", true, true},
                                    {"/dev/full", true, true},
                                    {"/dev/random", false, true},
                                    {"/dev/urandom", false, true}};
    if (inside_bwrap) out.insert(out.end(), {{"/dev/shm", true, true}, {"/dev/pts", true, true}});
    if (mode == sandbox_mode::workspace_write) {
        out.insert(out.end(), {{"/tmp", true, false}, {nullptr, true, false}});
    }
    return out;
}

std::vector<std::string> launcher_arguments(sandbox_mode mode, bool inside_bwrap, bool landlock) {
    std::vector<std::string> out{"--status-fd", std::to_string(runner_status_fd), "--env-fd",
                                 std::to_string(command_environment_fd)};
    if (!landlock) out.emplace_back("--no-landlock");
    // bwrap exits 128+N both for a command killed by signal N and for one that exited 128+N:
    // inside it, the launcher reports how the command ended.
    if (inside_bwrap) out.insert(out.end(), {"--private-ipc", "--report-ending"});
    if (mode == sandbox_mode::read_only) out.emplace_back("--deny-metadata");
    out.emplace_back("--read-root");
    for (const landlock_grant& grant : landlock_grants(mode, inside_bwrap)) {
        if (grant.path == nullptr) {
            out.insert(out.end(),
                       {grant.write ? "--rw-fd" : "--ro-fd", std::to_string(workspace_fd)});
            continue;
        }
        const char* flag = grant.write ? (grant.optional ? "--rw-try" : "--rw")
                                       : (grant.optional ? "--ro-try" : "--ro");
        out.insert(out.end(), {flag, grant.path});
    }
    return out;
}

confined_argv bwrap_confine(const std::filesystem::path& bwrap, std::span<const std::string> argv,
                            const sandbox_policy& policy, const profile& host) {
    require_confined(policy);
    confined_argv out;
    set_common(out, backend_kind::bwrap, policy, host);
    out.argv = {bwrap.string(),
                "--unshare-user",
                "--disable-userns",
                "--unshare-pid",
                "--unshare-ipc",
                "--unshare-uts",
                "--unshare-cgroup-try",
                "--new-session",
                "--cap-drop",
                "ALL",
                "--die-with-parent",
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--remount-ro",
                "/proc"};
    const std::string root = policy.workspace_root.string();
    if (policy.mode == sandbox_mode::workspace_write) {
        // The tmpfs comes before the bind so that a workspace under /tmp is exposed again.
        out.argv.insert(out.argv.end(), {"--tmpfs", "/tmp"});
        if (host.bind_fd) {
            out.argv.insert(out.argv.end(), {"--bind-fd", std::to_string(workspace_bind_fd), root});
            out.fds.push_back({workspace_bind_fd, host.workspace});
        } else {
            out.argv.insert(out.argv.end(), {"--bind", root, root});
        }
        out.fds.push_back({workspace_fd, host.workspace});
    }
    out.argv.insert(out.argv.end(), {"--chdir", host.workdir.empty() ? root : host.workdir.string(),
                                     "--", "/proc/self/fd/" + std::to_string(launcher_image_fd)});
    const std::vector<std::string> launcher =
        launcher_arguments(policy.mode, true, host.landlock_abi > 0);
    out.argv.insert(out.argv.end(), launcher.begin(), launcher.end());
    append_command(out.argv, argv);
    out.fds.push_back({launcher_image_fd, host.launcher_image});
    return out;
}

confined_argv landlock_confine(const std::filesystem::path& launcher,
                               std::span<const std::string> argv, const sandbox_policy& policy,
                               const profile& host) {
    require_confined(policy);
    confined_argv out;
    set_common(out, backend_kind::landlock, policy, host);
    out.argv = {launcher.string()};
    const std::vector<std::string> arguments = launcher_arguments(policy.mode, false, true);
    out.argv.insert(out.argv.end(), arguments.begin(), arguments.end());
    append_command(out.argv, argv);
    if (policy.mode == sandbox_mode::workspace_write) {
        out.fds.push_back({workspace_fd, host.workspace});
    }
    out.runner = host.launcher_image;
    out.in_child = landlock_in_child{policy.mode, host.landlock_abi, host.workspace};
    return out;
}

std::string sbpl_quote(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '\\' || c == '"') out += '\\';
        out += c;
    }
    out += '"';
    return out;
}

std::string seatbelt_profile(sandbox_mode mode, std::span<const std::filesystem::path> roots) {
    std::string profile =
        "(version 1) (allow default) (deny file-write*) (allow file-write* (literal "
        "\"/dev/null\"))";
    if (mode == sandbox_mode::workspace_write && !roots.empty()) {
        profile += " (allow file-write*";
        for (const auto& root : roots)
            profile += " (subpath " + sbpl_quote(root.string()) + ")";
        profile += ")";
    }
    return profile;
}

confined_argv seatbelt_confine(const std::filesystem::path& sandbox_exec,
                               std::span<const std::string> argv, const sandbox_policy& policy,
                               std::span<const std::filesystem::path> roots) {
    require_confined(policy);
    confined_argv out;
    out.backend = backend_kind::seatbelt;
    out.level = enforcement::full;
    out.argv = {sandbox_exec.string(), "-p", seatbelt_profile(policy.mode, roots)};
    append_command(out.argv, argv);
    out.denial_signatures = denial_signatures(backend_kind::seatbelt);
    out.runner_failure_rules = runner_failure_rules(backend_kind::seatbelt);
    return out;
}

bool profile_hides(backend_kind kind, const sandbox_policy& policy,
                   const std::filesystem::path& workdir) {
    if (kind != backend_kind::bwrap || policy.mode != sandbox_mode::workspace_write) return false;
    return is_within(workdir, "/tmp") && !is_within(workdir, policy.workspace_root);
}

}  // namespace cordon::sandbox
