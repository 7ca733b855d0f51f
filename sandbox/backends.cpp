#include "sandbox/backends.hpp"

#include <stdexcept>

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

std::vector<std::string> denial_signatures(backend_kind kind, sandbox_mode mode) {
    switch (kind) {
        case backend_kind::bwrap:
            return {"read-only file system"};
        case backend_kind::landlock:
            if (mode == sandbox_mode::read_only) {
                return {"permission denied", "operation not permitted"};
            }
            return {"permission denied"};
        case backend_kind::seatbelt:
            return {"operation not permitted"};
    }
    return {};
}

std::vector<runner_failure_rule> runner_failure_rules(backend_kind kind) {
    switch (kind) {
        case backend_kind::bwrap:
            return {{{}, {"bwrap: "}, {}}};
        case backend_kind::landlock:
            return {{{125}, {"cordon-landlock: "}, {std::string(launcher_notice_line)}}};
        case backend_kind::seatbelt:
            return {{{}, {"sandbox-exec: "}, {}}};
    }
    return {};
}

confined_argv bwrap_confine(const std::filesystem::path& bwrap, std::span<const std::string> argv,
                            const sandbox_policy& policy) {
    require_confined(policy);
    confined_argv out;
    out.backend = backend_kind::bwrap;
    out.level = enforcement::full;
    out.argv = {bwrap.string(),
                "--unshare-user",
                "--disable-userns",
                "--unshare-pid",
                "--cap-drop",
                "ALL",
                "--die-with-parent",
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc"};
    if (policy.mode == sandbox_mode::workspace_write) {
        // The tmpfs comes before the bind so that a workspace under /tmp is exposed again.
        const std::string root = policy.workspace_root.string();
        out.argv.insert(out.argv.end(), {"--tmpfs", "/tmp", "--bind", root, root});
    }
    out.argv.insert(out.argv.end(), {"--json-status-fd", std::to_string(runner_status_fd)});
    append_command(out.argv, argv);
    out.denial_signatures = denial_signatures(backend_kind::bwrap);
    out.runner_failure_rules = runner_failure_rules(backend_kind::bwrap);
    out.status = status_channel{status_channel::protocol::bwrap_json, runner_status_fd};
    return out;
}

confined_argv landlock_confine(const std::filesystem::path& launcher,
                               std::span<const std::string> argv, const sandbox_policy& policy,
                               enforcement level) {
    require_confined(policy);
    confined_argv out;
    out.backend = backend_kind::landlock;
    out.argv = {launcher.string(), "--status-fd", std::to_string(runner_status_fd)};
    if (policy.mode == sandbox_mode::read_only) {
        out.level = level;
        out.argv.emplace_back("--deny-metadata");
        out.argv.insert(out.argv.end(), {"--ro", "/", "--rw", "/dev/null"});
    } else {
        // chmod/chown/utime outside the workspace stay possible (Landlock does not govern
        // metadata, and a seccomp filter cannot tell the workspace's paths from others).
        out.level = enforcement::partial;
        out.argv.insert(out.argv.end(), {"--ro", "/", "--rw", "/dev/null", "--rw", "/tmp", "--rw",
                                         policy.workspace_root.string()});
    }
    append_command(out.argv, argv);
    out.denial_signatures = denial_signatures(backend_kind::landlock, policy.mode);
    out.runner_failure_rules = runner_failure_rules(backend_kind::landlock);
    out.status = status_channel{status_channel::protocol::launcher_record, runner_status_fd};
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

}  // namespace cordon::sandbox
