#include "sandbox/local_provider.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "sandbox/backends.hpp"
#include "sandbox/errors.hpp"

namespace cordon::sandbox {

namespace fs = std::filesystem;

platform current_platform() noexcept {
#if defined(__linux__)
    return platform::linux_;
#elif defined(__APPLE__)
    return platform::macos;
#else
    return platform::other;
#endif
}

std::string_view to_string(backend_choice choice) noexcept {
    switch (choice) {
        case backend_choice::automatic:
            return "auto";
        case backend_choice::bwrap:
            return "bwrap";
        case backend_choice::landlock:
            return "landlock";
        case backend_choice::seatbelt:
            return "seatbelt";
    }
    return "invalid";
}

std::optional<backend_choice> parse_backend_choice(std::string_view text) noexcept {
    for (auto choice : {backend_choice::automatic, backend_choice::bwrap, backend_choice::landlock,
                        backend_choice::seatbelt}) {
        if (text == to_string(choice)) return choice;
    }
    return std::nullopt;
}

std::string_view to_string(rung_state state) noexcept {
    switch (state) {
        case rung_state::usable:
            return "usable";
        case rung_state::unusable:
            return "unusable";
        case rung_state::not_probed:
            return "not probed";
    }
    return "invalid";
}

fs::path find_in_path(std::string_view name) {
    const char* env = std::getenv("PATH");
    std::string path_list = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
    std::stringstream entries(path_list);
    std::string entry;
    while (std::getline(entries, entry, ':')) {
        // An empty or relative entry would resolve against the current directory, where a
        // command could have planted its own "bwrap".
        if (entry.empty() || entry.front() != '/') continue;
        fs::path candidate = fs::path(entry) / name;
        if (::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) {
            return candidate;
        }
    }
    return {};
}

fs::path default_launcher_path() {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    return self.parent_path() / "cordon-landlock";
}

int load_sealed_image(const fs::path& path, std::string& error) {
    int source = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (source < 0) {
        error = "cannot open " + path.string() + ": " + std::strerror(errno);
        return -1;
    }
    struct stat st {};
    if (::fstat(source, &st) != 0 || !S_ISREG(st.st_mode)) {
        error = path.string() + " is not a regular file";
        ::close(source);
        return -1;
    }
    // MFD_EXEC (Linux 6.3) keeps the copy executable where vm.memfd_noexec would otherwise
    // make new memfds non-executable; older kernels reject the flag and need none.
    constexpr unsigned int mfd_exec = 0x10U;
    int image = ::memfd_create("cordon-landlock", MFD_CLOEXEC | MFD_ALLOW_SEALING | mfd_exec);
    if (image < 0 && errno == EINVAL) {
        image = ::memfd_create("cordon-landlock", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    }
    if (image < 0) {
        error = std::string("memfd_create: ") + std::strerror(errno);
        ::close(source);
        return -1;
    }
    char buffer[64 * 1024];
    ssize_t got;
    bool ok = true;
    while (ok && (got = ::read(source, buffer, sizeof buffer)) != 0) {
        if (got < 0) {
            if (errno == EINTR) continue;
            ok = false;
            break;
        }
        for (ssize_t done = 0; done < got;) {
            ssize_t n = ::write(image, buffer + done, static_cast<std::size_t>(got - done));
            if (n < 0) {
                if (errno == EINTR) continue;
                ok = false;
                break;
            }
            done += n;
        }
    }
    int saved = errno;
    ::close(source);
    if (!ok || ::fcntl(image, F_ADD_SEALS,
                       F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) != 0) {
        error = std::string("cannot copy the launcher: ") + std::strerror(ok ? errno : saved);
        ::close(image);
        return -1;
    }
    return image;
}

namespace {

// True when `path` is `root` or lies beneath it (both canonical).
bool is_within(const fs::path& path, const fs::path& root) {
    auto [root_end, path_it] = std::mismatch(root.begin(), root.end(), path.begin(), path.end());
    return root_end == root.end();
}

// Where a command confined by `kind` under `policy` can write on the host, canonical.
std::vector<fs::path> writable_for(backend_kind kind, const sandbox_policy& policy) {
    if (policy.mode != sandbox_mode::workspace_write) return {};
    switch (kind) {
        case backend_kind::bwrap: return {canonical_path(policy.workspace_root)};  // /tmp is private
        case backend_kind::landlock:
            return {canonical_path(policy.workspace_root), canonical_path("/tmp")};
        case backend_kind::seatbelt: return writable_roots(policy);
    }
    return {};
}

std::string first_line(std::string_view text) {
    auto end = text.find('\n');
    return std::string(text.substr(0, end));
}

// A short, one-line account of why a probe run did not succeed.
std::string describe_failure(const probe_run_result& result) {
    if (!result.spawn_error.empty()) return result.spawn_error;
    if (result.runner_failure) return *result.runner_failure;
    if (result.timed_out) return "probe timed out";
    std::string line = first_line(result.stderr_text);
    if (!line.empty()) return line;
    if (result.exit_code) return "exited with status " + std::to_string(*result.exit_code);
    return "killed by a signal";
}

bool succeeded(const probe_run_result& result) {
    return result.spawn_error.empty() && !result.runner_failure && !result.timed_out &&
           result.exit_code == 0;
}

// A private directory standing in for a workspace while probing the workspace-write profile.
class probe_workspace {
public:
    probe_workspace() {
        // $TMPDIR first, then /tmp. temp_directory_path() throws when TMPDIR names a directory
        // that is gone (a closed session's private tmp), and a relative or unwritable TMPDIR
        // must not make every rung look unusable: probing has to end in a verdict.
        std::error_code ec;
        fs::path from_env = fs::temp_directory_path(ec);
        for (const fs::path& base : {ec ? fs::path() : from_env, fs::path("/tmp")}) {
            if (!base.is_absolute()) continue;
            std::string pattern = (base / "cordon-probe-XXXXXX").string();
            if (::mkdtemp(pattern.data()) != nullptr) {
                path_ = pattern;
                return;
            }
        }
    }
    ~probe_workspace() {
        std::error_code ec;
        if (!path_.empty()) fs::remove_all(path_, ec);
    }
    probe_workspace(const probe_workspace&) = delete;
    probe_workspace& operator=(const probe_workspace&) = delete;
    [[nodiscard]] const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

}  // namespace

local_provider::local_provider(local_provider_options options) : options_(std::move(options)) {
    for (backend_kind kind : ladder()) {
        rung_report report;
        report.kind = kind;
        switch (kind) {
            case backend_kind::bwrap:
                report.runner =
                    (options_.bwrap_path.empty() ? find_in_path("bwrap") : options_.bwrap_path)
                        .string();
                break;
            case backend_kind::landlock:
                report.runner = (options_.launcher_path.empty() ? default_launcher_path()
                                                                : options_.launcher_path)
                                    .string();
                break;
            case backend_kind::seatbelt:
                report.runner = options_.sandbox_exec_path.string();
                break;
        }
        rungs_.push_back(std::move(report));
    }
    probed_.assign(rungs_.size(), false);
}

runner_image::~runner_image() {
    if (fd_ >= 0) ::close(fd_);
}

std::vector<backend_kind> local_provider::ladder() const {
    switch (options_.choice) {
        case backend_choice::bwrap:
            return {backend_kind::bwrap};
        case backend_choice::landlock:
            return {backend_kind::landlock};
        case backend_choice::seatbelt:
            return {backend_kind::seatbelt};
        case backend_choice::automatic:
            break;
    }
    switch (options_.host) {
        case platform::linux_:
            return {backend_kind::bwrap, backend_kind::landlock};
        case platform::macos:
            return {backend_kind::seatbelt};
        case platform::other:
            return {};
    }
    return {};
}

std::optional<std::string> local_provider::run_profiles(const rung_report& report) const {
    // Probe = run: each mode's real profile confines `true`, status channel included, so a
    // workspace-write-only failure (a --bind or --tmpfs the host refuses) is caught here too.
    probe_workspace workspace;
    if (workspace.path().empty()) return "cannot create a probe workspace";
    const std::vector<std::string> command{"true"};
    for (sandbox_mode mode : {sandbox_mode::read_only, sandbox_mode::workspace_write}) {
        sandbox_policy policy{mode, canonical_path(workspace.path())};
        probe_run_result result =
            options_.run_probe(wrap(report, command, policy), options_.probe_timeout);
        if (!succeeded(result)) {
            return std::string(to_string(mode)) + " profile: " + describe_failure(result);
        }
    }
    return std::nullopt;
}

rung_report local_provider::probe_bwrap(rung_report report) const {
    if (report.runner.empty()) {
        report.state = rung_state::unusable;
        report.reason = "bwrap not found on PATH";
        return report;
    }
    if (auto failure = run_profiles(report)) {
        report.state = rung_state::unusable;
        report.reason = *failure;
    } else {
        report.state = rung_state::usable;
    }
    return report;
}

rung_report local_provider::probe_landlock(rung_report report) {
    if (report.runner.empty()) {
        report.state = rung_state::unusable;
        report.reason = "cordon-landlock not found beside the running executable";
        return report;
    }
    if (::access(report.runner.c_str(), X_OK) != 0) {
        report.state = rung_state::unusable;
        report.reason = "launcher not executable: " + report.runner + ": " + std::strerror(errno);
        return report;
    }
    // From here on this provider runs its own sealed copy, probes included.
    std::string error;
    int image = load_sealed_image(report.runner, error);
    if (image < 0) {
        report.state = rung_state::unusable;
        report.reason = error;
        return report;
    }
    launcher_image_ = std::make_shared<const runner_image>(image);
    confined_argv probe;
    probe.argv = {report.runner, "--probe"};
    probe.backend = backend_kind::landlock;
    probe.runner = launcher_image_;
    probe_run_result result = options_.run_probe(probe, options_.probe_timeout);
    if (!succeeded(result)) {
        report.state = rung_state::unusable;
        report.reason = describe_failure(result);
        return report;
    }
    // stdout: "landlock: fully enforced" or "landlock: partially enforced (older ABI)", then
    // "abi: N".
    report.level = result.stdout_text.find("partially enforced") != std::string::npos
                       ? enforcement::partial
                       : enforcement::full;
    if (auto at = result.stdout_text.find("abi: "); at != std::string::npos) {
        report.landlock_abi = std::atoi(result.stdout_text.c_str() + at + 5);
    }
    if (auto failure = run_profiles(report)) {
        report.state = rung_state::unusable;
        report.reason = *failure;
    } else {
        report.state = rung_state::usable;
    }
    return report;
}

rung_report local_provider::probe_seatbelt(rung_report report) const {
    if (::access(report.runner.c_str(), X_OK) != 0) {
        report.state = rung_state::unusable;
        report.reason = report.runner + ": " + std::strerror(errno);
        return report;
    }
    if (auto failure = run_profiles(report)) {
        report.state = rung_state::unusable;
        report.reason = *failure;
    } else {
        report.state = rung_state::usable;
    }
    return report;
}

rung_report& local_provider::probe_rung_locked(std::size_t index) {
    if (probed_[index]) return rungs_[index];
    if (!options_.run_probe) {
        throw std::logic_error("local_provider: a probe_runner is required to probe " +
                               std::string(to_string(rungs_[index].kind)));
    }
    rung_report report = rungs_[index];
    switch (report.kind) {
        case backend_kind::bwrap:
            report = probe_bwrap(std::move(report));
            break;
        case backend_kind::landlock:
            report = probe_landlock(std::move(report));
            break;
        case backend_kind::seatbelt:
            report = probe_seatbelt(std::move(report));
            break;
    }
    spdlog::debug("probe {}: {}{}{}", to_string(report.kind), to_string(report.state),
                  report.reason.empty() ? "" : ": ", report.reason);
    rungs_[index] = std::move(report);
    probed_[index] = true;
    return rungs_[index];
}

std::optional<rung_report> local_provider::selected() {
    std::lock_guard lock(mutex_);
    if (!verdict_) {
        std::optional<std::size_t> chosen;
        if (rungs_.size() == 1 && options_.host == platform::macos &&
            rungs_.front().kind == backend_kind::seatbelt) {
            // A sole candidate needs no arbitration: sandbox-exec's own refusal at run time is
            // the fail-closed end (reference 4.1).
            rungs_.front().state = rung_state::usable;
            chosen = 0;
        } else {
            for (std::size_t i = 0; i < rungs_.size(); ++i) {
                if (probe_rung_locked(i).state == rung_state::usable) {
                    chosen = i;
                    break;
                }
            }
        }
        verdict_ = chosen;
    }
    if (!*verdict_) return std::nullopt;
    return rungs_[**verdict_];
}

std::vector<rung_report> local_provider::probe_all() {
    (void)selected();
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < rungs_.size(); ++i) {
        if (rungs_[i].state == rung_state::not_probed) probe_rung_locked(i);
    }
    return rungs_;
}

confined_argv local_provider::wrap(const rung_report& rung, std::span<const std::string> argv,
                                   const sandbox_policy& policy) const {
    switch (rung.kind) {
        case backend_kind::bwrap:
            return bwrap_confine(rung.runner, argv, policy);
        case backend_kind::landlock: {
            confined_argv out = landlock_confine(rung.runner, argv, policy, rung.level);
            out.runner = launcher_image_;
            return out;
        }
        case backend_kind::seatbelt: {
            auto roots = writable_roots(policy);
            return seatbelt_confine(rung.runner, argv, policy, roots);
        }
    }
    throw std::logic_error("unreachable backend_kind");
}

confined_argv local_provider::confine(std::span<const std::string> argv,
                                      const sandbox_policy& policy) {
    if (!is_confined(policy.mode)) {
        throw std::invalid_argument("danger-full-access never reaches a sandbox provider");
    }
    std::optional<rung_report> rung = selected();
    if (!rung) throw sandbox_unavailable_error(policy.mode);
    if (!rung->runner.empty()) {
        // A command that can write where the runner lies could replace the runner that confines
        // the next command (in another process, which loads it from disk again).
        const fs::path runner = canonical_path(rung->runner);
        for (const fs::path& root : writable_for(rung->kind, policy)) {
            if (is_within(runner, root)) {
                throw sandbox_unavailable_error(
                    policy.mode, "the sandbox runner " + runner.string() + " lies inside " +
                                     root.string() + ", which " +
                                     std::string(to_string(policy.mode)) +
                                     " makes writable; a confined command could replace it");
            }
        }
    }
    return wrap(*rung, argv, policy);
}

}  // namespace cordon::sandbox
