// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Longer than the ~500 lines a file here stays under: prepare() and launch() with what they share
// for one run (the environment, the record's facts, the network's witness and proxy session, the
// file walls for the classification); the process-wide caches are at the top.
#include "cordon/executor.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "base/log.hpp"
#include "classify/classify.hpp"
#include "classify/network_denial.hpp"
#include "cordon/environment.hpp"
#include "proxy/service.hpp"
#include "runtime/cgroup.hpp"
#include "runtime/local_provider_factory.hpp"
#include "runtime/network_witness.hpp"
#include "runtime/output_collector.hpp"
#include "runtime/process.hpp"
#include "runtime/pty.hpp"
#include "sandbox/backends.hpp"
#include "sandbox/child_confinement.hpp"
#include "sandbox/network_plan.hpp"
#include "sandbox/protected_paths.hpp"
#include "sandbox/run_judgement.hpp"
#include "sandbox/runner_path.hpp"

extern char** environ;

namespace cordon::runtime {

std::filesystem::path trusted_program(std::string_view name) {
    return sandbox::find_trusted_executable(name);
}

std::filesystem::path trusted_shell() {
    return trusted_program("bash");
}

bool default_landlock_in_child() noexcept {
    const char* value = std::getenv("CORDON_LANDLOCK_VIA_LAUNCHER");
    return value == nullptr || std::string_view(value) != "1";
}

// The Landlock rung for the child under read-only, built once and reused while what its rules
// name stays in place: the entries of / and the /dev nodes it grants (their directories' mtimes
// move when one is added or removed), and the mounts (the mount table, watched through
// /proc/self/mountinfo, which signals a change with POLLPRI). A workspace-write one names the
// workspace the run's confine() opened, so it is built for each run. Nothing is built under the
// lock: a build that is slow (a mount that stopped answering) delays its own run only.
class child_confinement_cache {
public:
    using result = std::variant<std::shared_ptr<const sandbox::child_confinement>, std::string>;

    result get(const sandbox::landlock_in_child& plan) {
        // Denied reads split the rules below / into the entries of every directory on the way to
        // each denied path, which the stamps below do not watch: built for each run.
        // A run under a terminal is granted its /dev/tty: built for each run too (they are few).
        if (plan.mode != sandbox::sandbox_mode::read_only || !plan.deny_read.empty() ||
            plan.terminal) {
            return sandbox::build_child_confinement(plan);
        }
        {
            std::lock_guard lock(mutex_);
            if (read_only_ && abi_ == plan.abi && network_ == plan.network && unchanged_locked()) {
                return read_only_;
            }
        }
        // Watched from before the build, so that a change during it is seen at the next run.
        unique_fd mounts(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
        const std::optional<stamps> before = stamp();
        result built = sandbox::build_child_confinement(plan);
        auto* ready = std::get_if<std::shared_ptr<const sandbox::child_confinement>>(&built);
        if (ready != nullptr && mounts && before) {
            std::lock_guard lock(mutex_);
            read_only_ = *ready;
            abi_ = plan.abi;
            network_ = plan.network;
            mounts_ = std::move(mounts);
            stamps_ = *before;
        }
        return built;
    }

private:
    struct stamps {
        timespec root{};
        timespec dev{};
        bool operator==(const stamps& other) const noexcept {
            const auto same = [](const timespec& a, const timespec& b) {
                return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
            };
            return same(root, other.root) && same(dev, other.dev);
        }
    };

    static std::optional<stamps> stamp() {
        struct stat root {};
        struct stat dev {};
        if (::stat("/", &root) != 0 || ::stat("/dev", &dev) != 0) return std::nullopt;
        return stamps{root.st_mtim, dev.st_mtim};
    }

    bool unchanged_locked() {
        pollfd watch{mounts_.get(), POLLPRI, 0};
        if (::poll(&watch, 1, 0) != 0) return false;  // the mount table changed (or poll failed)
        const std::optional<stamps> now = stamp();
        return now && *now == stamps_;
    }

    std::mutex mutex_;
    std::shared_ptr<const sandbox::child_confinement> read_only_;
    int abi_ = 0;
    sandbox::network_confinement network_;  // the walls differ by network policy
    unique_fd mounts_;
    stamps stamps_;
};

namespace {

// What every executor of this process shares, made at the first use: the read-only rung's cache
// (what it holds depends on the host, not on the executor) and the network proxy (one thread for
// the process). `run()` makes an executor per call, and pays neither again. Never destroyed
// (executors may end during the process's exit). A child this process forks makes its own at its
// first executor (a pthread_atfork handler forgets the parent's, which may be mid-call in a
// thread the child does not have; as the cgroup host does, cgroup.cpp).
template <typename T>
class shared_by_the_process {
public:
    static std::shared_ptr<T> get() {
        state& held = instance();
        const std::lock_guard lock(held.mutex);
        if (held.made == nullptr) held.made = new std::shared_ptr<T>(std::make_shared<T>());
        return *held.made;
    }

private:
    struct state {
        std::mutex mutex;
        std::shared_ptr<T>* made = nullptr;  // the parent's, after a fork, is left as it is
    };
    static state& instance() {
        static state* const held = [] {
            auto* made = new state();
            the_state().store(made);
            ::pthread_atfork(nullptr, nullptr, [] {
                // Async-signal-safe: no lock taken, nothing freed. The mutex may have been held
                // by a thread of the parent's, which the child does not have.
                if (state* forked = the_state().load()) {
                    new (&forked->mutex) std::mutex();
                    forked->made = nullptr;
                }
            });
            return made;
        }();
        return *held;
    }
    // The handler finds the state through this, never through instance(): a fork while instance()
    // makes it must not wait on its initialisation.
    static std::atomic<state*>& the_state() {
        static std::atomic<state*> pointer{nullptr};
        return pointer;
    }
};

// One limit of a run: the one asked for (0: none), else the default when this host can enforce
// it. `enforceable` is empty when it can, else the reason.
std::optional<std::uint64_t> effective_limit(std::optional<std::uint64_t> asked,
                                             std::optional<std::uint64_t> fallback,
                                             const std::string& enforceable) {
    if (asked) return *asked == 0 ? std::nullopt : asked;
    return enforceable.empty() ? fallback : std::nullopt;
}

// Under network proxy: the launcher's forwarder gets the session's end of the socketpair
// (sandbox::proxy_forwarder_fd), and the command variables that point its clients at the
// forwarder, in place of any it had (the proxy is the only way out).
void attach_proxy(proxy::session& session, process_spec& spec) {
    if (spec.confinement) {
        throw std::logic_error(
            "a proxied run has no in-child confinement: the forwarder is the "
            "launcher's");
    }
    spec.fds.push_back({sandbox::proxy_forwarder_fd,
                        std::make_shared<const unique_fd>(session.take_forwarder_end())});
    std::erase_if(spec.env,
                  [](const std::string& entry) { return sandbox::is_proxy_variable(entry); });
    for (std::string& entry : sandbox::proxy_environment())
        spec.env.push_back(std::move(entry));
    std::sort(spec.env.begin(), spec.env.end());
}

// What the walls refused, after what the proxy did: the record's bound counts the two together.
void add_witnessed(sandbox::network_facts& facts, network_witness::witnessed seen) {
    for (auto& each : seen.destinations) {
        if (facts.blocked.size() < witnessed_destinations) {
            facts.blocked.push_back(std::move(each));
        } else {
            facts.blocked_more += each.count;  // refusals, not destinations
        }
    }
    facts.blocked_more += seen.more;
}

void add_proxy_report(sandbox::network_facts& facts, proxy::session_report report) {
    for (proxy::blocked_destination& blocked : report.blocked) {
        facts.blocked.push_back({std::move(blocked.destination), std::move(blocked.reason),
                                 blocked.count, blocked.askable, blocked.first_at});
    }
    facts.blocked_more = report.blocked_more;
    facts.proxy_failure = std::move(report.failure);
    facts.proxy_refused = report.refused_connections;
    if (report.refused_connections != 0) facts.proxy_refused_reason = report.refused_reason;
}

}  // namespace

void executor::judge_on(boost::asio::any_io_executor where) {
    judge_on_ = std::move(where);
}

run_record sandbox_unavailable_record(sandbox::sandbox_mode mode, runner_failure failure) {
    run_record record;
    record.sandbox.mode = mode;
    record.sandbox.backend = failure.backend;
    record.outcome.kind = outcome_kind::runner_failed;
    record.outcome.message = sandbox::sandbox_unavailable_message(
        mode, failure.detail, failure.unusable, failure.unenforced);
    record.outcome.runner = std::move(failure);
    return record;
}

sandbox::sandbox_unavailable_error sandbox_unavailable(const run_record& record) {
    const runner_failure failure = record.outcome.runner.value_or(runner_failure{});
    sandbox::sandbox_unavailable_error error(record.sandbox.mode, failure.detail, failure.unusable,
                                             failure.unenforced);
    if (failure.backend)
        error.with_failed_backend(std::string(sandbox::to_string(*failure.backend)));
    return error;
}

// What the file walls of a confined run govern, for the classification of its stderr
// (classify/file_denial.hpp): where it may write (its roots and its /tmp), what is kept, what is
// hidden, as canonical paths.
classify::file_walls walls_of(const sandbox::confined_argv& confined, sandbox::sandbox_mode mode,
                              const run_request& request, const std::filesystem::path& workdir) {
    classify::file_walls out;
    out.mode = mode;
    out.backend = confined.backend;
    out.workdir = workdir;
    const auto canonical = [](const std::filesystem::path& path) {
        std::error_code ec;
        std::filesystem::path found = std::filesystem::weakly_canonical(path, ec);
        return ec ? path.lexically_normal() : found;
    };
    if (mode == sandbox::sandbox_mode::workspace_write) {
        out.writable.push_back(canonical(request.workspace_root));
        for (const auto& root : request.rules.writable_roots)
            out.writable.push_back(canonical(root));
        switch (request.rules.tmp) {
            case sandbox::tmp_policy::private_tmp:
                // bwrap's tmpfs at /tmp; the Landlock rung's directory of the run's own.
                if (confined.backend == sandbox::backend_kind::bwrap) {
                    out.writable.emplace_back("/tmp");
                } else if (!confined.tmpdir.empty()) {
                    out.writable.push_back(canonical(confined.tmpdir));
                }
                break;
            case sandbox::tmp_policy::host:
                out.writable.push_back(canonical("/tmp"));
                break;
            case sandbox::tmp_policy::none:
                break;
        }
    }
    for (const std::string& kept : confined.protected_paths)
        out.kept.emplace_back(kept);
    for (const std::string& hidden : confined.hidden_paths)
        out.hidden.emplace_back(hidden);
    return out;
}

// What a prepared run holds until launch() takes it.
struct prepared_run::state {
    process_spec spec;
    std::optional<sandbox::confined_argv> confined;
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::read_only;
    sandbox::tmp_policy tmp = sandbox::tmp_policy::private_tmp;
    std::vector<std::string> writable_roots;
    std::chrono::milliseconds timeout{0};
    std::string command;          // the caller's argv[0]
    bool network_denied = false;  // confined under network deny or proxy: its dialect is a denial
    std::shared_ptr<const classify::file_walls> walls;  // confined: what its file walls govern
    // Network proxy: the run's session, closed once the run is over.
    std::shared_ptr<proxy::session> proxy_session;
    // Network deny and proxy: what the walls refused, seen as it happened.
    std::shared_ptr<network_witness> witness;
    std::optional<terminal_size> tty;  // run_request::tty
};

prepared_run::prepared_run() : state_(std::make_unique<state>()) {}
prepared_run::prepared_run(prepared_run&&) noexcept = default;
prepared_run& prepared_run::operator=(prepared_run&&) noexcept = default;
prepared_run::~prepared_run() = default;

sandbox::sandbox_mode prepared_run::mode() const noexcept {
    return state_->mode;
}

std::chrono::milliseconds prepared_run::timeout() const noexcept {
    return state_->timeout;
}

std::shared_ptr<const unique_fd> prepared_run::terminal() const noexcept {
    return state_->spec.terminal ? state_->spec.terminal->master : nullptr;
}

executor::executor(boost::asio::any_io_executor io, std::shared_ptr<sandbox::provider> provider,
                   executor_options options)
    : io_(std::move(io)),
      provider_(std::move(provider)),
      options_(std::move(options)),
      confinements_(shared_by_the_process<child_confinement_cache>::get()) {
    if (!options_.proxy) options_.proxy = shared_by_the_process<proxy::service>::get();
    if (options_.spill) {
        spill_ = std::make_shared<spill_directory>(options_.spill_root, spill_retention::keep,
                                                   options_.kept_spills);
    }
    if (options_.cgroup_containment) {
        auto host = cgroup_host::for_this_process();
        if (auto* reason = std::get_if<std::string>(&host)) {
            no_cgroup_ = *reason;
            log::info("runs are contained by process group only: {}", no_cgroup_);
        } else {
            cgroups_ = std::move(std::get<std::shared_ptr<cgroup_host>>(host));
        }
    } else {
        no_cgroup_ = "cgroup containment is turned off";
    }
}

void check_request(const run_request& request) {
    if (request.argv.empty() || request.argv.front().empty()) {
        throw std::invalid_argument("run_request: argv must name a program");
    }
    if (!request.workspace_root.is_absolute()) {
        throw std::invalid_argument("run_request: workspace_root must be absolute");
    }
    if (request.timeout && request.timeout->count() <= 0) {
        throw std::invalid_argument("run_request: timeout must be positive");
    }
    if (request.stdout_max_bytes && *request.stdout_max_bytes == 0) {
        throw std::invalid_argument("run_request: stdout_max_bytes must be positive");
    }
    if (request.stdin_data && request.stdin_fd) {
        throw std::invalid_argument("run_request: give stdin_data or stdin_fd, not both");
    }
    if (request.tty && request.stdin_fd) {
        throw std::invalid_argument("run_request: a run under a tty reads it, not stdin_fd");
    }
    if (request.tty) {
        if (auto wrong = terminal_size_error(*request.tty)) {
            throw std::invalid_argument("run_request: tty: " + *wrong);
        }
    }
}

std::chrono::milliseconds executor::timeout_for(const run_request& request) const noexcept {
    return std::min(request.timeout.value_or(options_.default_timeout), options_.max_timeout);
}

run_handle executor::async_run(run_request request, std::function<void(run_record)> done) {
    preparation prepared = prepare(std::move(request));
    if (auto* ready = std::get_if<prepared_run>(&prepared)) {
        return launch(std::move(*ready), std::move(done));
    }
    // A run that cannot start is reported from the event loop like any other.
    boost::asio::post(io_, [done = std::move(done),
                            record = std::move(std::get<run_record>(prepared))]() mutable {
        done(std::move(record));
    });
    return run_handle{};
}

preparation executor::prepare(run_request request) const {
    check_request(request);
    const auto timeout = timeout_for(request);
    const std::filesystem::path workdir = request.workdir.value_or(request.workspace_root);
    const sandbox::sandbox_mode mode = request.mode;

    prepared_run prepared;
    process_spec& spec = prepared.state_->spec;
    spec.env = build_environment(environ, request.env, request.environment);
    spec.cwd = workdir;
    spec.stdin_data = std::move(request.stdin_data);
    spec.stdin_fd = std::move(request.stdin_fd);
    prepared.state_->tty = request.tty;
    spec.stdout_limits = options_.limits;
    if (request.stdout_max_bytes) spec.stdout_limits.tail_bytes = *request.stdout_max_bytes;
    spec.stderr_limits = options_.limits;
    spec.spill = spill_;
    spec.timeout = timeout;
    spec.plan = options_.plan;
    spec.cgroups = cgroups_;
    const std::string& no_pids = cgroups_ ? cgroups_->processes_unlimitable() : no_cgroup_;
    const std::string& no_memory = cgroups_ ? cgroups_->memory_unlimitable() : no_cgroup_;
    spec.limits.max_processes =
        effective_limit(request.max_processes, options_.default_limits.max_processes, no_pids);
    spec.limits.max_memory =
        effective_limit(request.max_memory, options_.default_limits.max_memory, no_memory);
    spec.method = options_.method;
    spec.die_with_spawning_thread = options_.die_with_spawning_thread;
    spec.on_stdout = std::move(request.on_stdout);
    spec.on_stderr = std::move(request.on_stderr);
    spec.stdout_pace = std::move(request.stdout_pace);
    spec.stderr_pace = std::move(request.stderr_pace);

    // A run that cannot start is a record, which the caller reports like any other.
    auto never_ran = [&](run_record record) -> preparation {
        record.timeout = timeout;
        return preparation(std::in_place_type<run_record>, std::move(record));
    };
    auto not_started = [&](spawn_error error, std::string message) {
        run_record record;
        record.sandbox.mode = mode;
        record.outcome.kind = outcome_kind::not_started;
        record.outcome.start_failure = error;
        record.outcome.message = std::move(message);
        return never_ran(std::move(record));
    };

    // A limit that was asked for and cannot be enforced is never dropped silently.
    spec.limits_required = (request.max_processes && *request.max_processes != 0) ||
                           (request.max_memory && *request.max_memory != 0);
    if (spec.limits_required && !cgroups_) {
        return not_started({spawn_stage::cgroup, EOPNOTSUPP},
                           "cannot enforce the requested limits: " + no_cgroup_);
    }

    // A program that is not there is reported the same way in every mode, before any runner is
    // involved (otherwise bwrap's or the launcher's execvp would report it as a runner failure).
    if (auto resolved = resolve_program(request.argv.front(), spec.env, workdir);
        std::holds_alternative<int>(resolved)) {
        spawn_error error{spawn_stage::resolve, std::get<int>(resolved)};
        return not_started(error, describe(error, request.argv.front()));
    }

    if (request.tty) {
        auto opened = open_pty(*request.tty);
        if (auto* reason = std::get_if<std::string>(&opened)) {
            return not_started({spawn_stage::resources, EAGAIN}, *reason);
        }
        auto& ends = std::get<pty_pair>(opened);
        spec.terminal = process_spec::terminal_ends{
            std::make_shared<const unique_fd>(std::move(ends.master)),
            std::make_shared<const unique_fd>(std::move(ends.slave)), true};
    }

    prepared.state_->command = request.argv.front();
    std::optional<sandbox::confined_argv>& confined = prepared.state_->confined;
    if (sandbox::is_confined(mode)) {
        if (!provider_) {
            // No provider was composed: nothing can enforce the mode, so nothing runs.
            return never_ran(sandbox_unavailable_record(mode, {}));
        }
        sandbox::sandbox_policy policy{mode, request.workspace_root, request.rules};
        policy.network = request.network;
        policy.controlling_terminal = request.tty.has_value();
        // The backend's tmpfs mounts share the run's memory limit; an unlimited run's are
        // bounded by the host's memory as a plain tmpfs is (half of it for /tmp).
        policy.tmpfs_bytes =
            spec.limits.max_memory.value_or(host_memory().value_or(sandbox::default_tmpfs_bytes));
        // What the provider throws is a run that never started: the request's fault beyond the
        // plan's refusal (the workspace changed since it was planned), or no backend that can
        // enforce the mode (the failed backend is known only once a runner ran).
        const auto provider_failure = [&](auto&& step) -> std::optional<preparation> {
            try {
                step();
                return std::nullopt;
            } catch (const sandbox::request_refused_error& error) {
                return not_started({spawn_stage::policy, EPERM}, error.reason());
            } catch (const sandbox::sandbox_unavailable_error& error) {
                return never_ran(sandbox_unavailable_record(
                    mode, {error.detail(), std::nullopt, error.backends(), error.unenforced()}));
            }
        };
        std::vector<std::filesystem::path> spill_files;
        if (spill_) spill_files.push_back(spill_->root() / "cordon-spill-*");
        spill_files.insert(spill_files.end(), options_.protected_paths.begin(),
                           options_.protected_paths.end());
        // The run is planned once (the refusal, the paths, the network walls, the gaps), then
        // confined as planned.
        std::variant<std::shared_ptr<const sandbox::run_plan>, std::string> planned;
        std::optional<preparation> unplanned =
            provider_failure([&] { planned = provider_->plan(policy, workdir, spill_files); });
        if (auto* refused = std::get_if<std::string>(&planned)) {
            // A workspace the command must not be able to write is the request's fault, not the
            // host's: reported as such, never as an unusable sandbox.
            return not_started({spawn_stage::policy, EPERM}, *refused);
        }
        for (const char* special : {"/proc", "/sys", "/dev"}) {
            if (sandbox::is_within(workdir, special)) {
                return not_started({spawn_stage::policy, EPERM},
                                   "refusing the working directory " + workdir.string() +
                                       ": a confined command does not see " + special +
                                       " as the host does");
            }
        }
        if (unplanned) return std::move(*unplanned);
        const auto& plan = std::get<std::shared_ptr<const sandbox::run_plan>>(planned);
        if (!plan) throw std::logic_error("the sandbox provider's plan() returned no plan");
        if (auto failed = provider_failure(
                [&] { confined = provider_->confine_planned(*plan, request.argv); })) {
            return std::move(*failed);
        }
        if (sandbox::profile_hides(confined->backend, policy, workdir)) {
            return not_started({spawn_stage::chdir, ENOENT},
                               "the working directory " + workdir.string() +
                                   " is hidden inside the sandbox: bwrap gives workspace-write "
                                   "a private, empty /tmp");
        }
        if (confined->in_child && options_.landlock_in_child) {
            auto built = confinements_->get(*confined->in_child);
            if (auto* ready =
                    std::get_if<std::shared_ptr<const sandbox::child_confinement>>(&built)) {
                spec.confinement = *ready;
            } else {
                // The launcher meets the same failure and reports it on the status channel.
                log::debug(
                    "the Landlock rung in the child is unavailable ({}); running "
                    "the launcher",
                    std::get<std::string>(built));
            }
        }
        if (!confined->tmpdir.empty()) {
            std::erase_if(spec.env,
                          [](const std::string& entry) { return entry.starts_with("TMPDIR="); });
            spec.env.push_back("TMPDIR=" + confined->tmpdir);
            std::sort(spec.env.begin(), spec.env.end());
        }
        if (spec.confinement) {
            spec.argv = request.argv;
        } else {
            spec.argv = confined->argv;
            spec.status = confined->status;
            spec.environment_fd = confined->environment_fd;
            spec.fds = confined->fds;
            spec.exec_image = confined->runner;
        }
        spec.identity = confined->identity_setup;
        // The terminal is the run's, as a login's is its user's: opened by name (bwrap's
        // /dev/console, ttyname(3)) by the run's own uid.
        if (spec.terminal && confined->identity.reserved &&
            ::fchown(spec.terminal->slave->get(), confined->identity.uid, static_cast<gid_t>(-1)) !=
                0) {
            return not_started(
                {spawn_stage::resources, errno},
                std::string("cannot give the terminal to the run: ") + std::strerror(errno));
        }
        spec.denial_signatures = confined->denial_signatures;
        // The runtimes' own sentences for a refusal (SQLite, Python, Java, git) are scanned over
        // the whole stream with the backend's words (classify/file_denial.hpp).
        const auto sentences = classify::runtime_denial_signatures();
        spec.denial_signatures.insert(spec.denial_signatures.end(), sentences.begin(),
                                      sentences.end());
        prepared.state_->walls = std::make_shared<const classify::file_walls>(
            walls_of(*confined, mode, request, workdir));
        // The launcher gives the command the terminal, in a session of its own inside the
        // sandbox; in its place (the Landlock rung in the child) the spawn does.
        if (spec.terminal)
            spec.terminal->spawn_takes_it = spec.confinement || !confined->takes_terminal;
        if (confined->network.policy == sandbox::network_policy::proxy) {
            auto opened = options_.proxy->open(request.network);
            if (auto* reason = std::get_if<std::string>(&opened)) {
                return not_started({spawn_stage::policy, EINVAL},
                                   "cannot start the network proxy: " + *reason);
            }
            prepared.state_->proxy_session = std::move(std::get<0>(opened));
            attach_proxy(*prepared.state_->proxy_session, spec);
        }
        if (confined->network_witness) {
            // Without a network namespace (Landlock's port rules) the host's loopback is outside
            // the sandbox too.
            auto opened = network_witness::open(io_, confined->own_loopback);
            if (auto* reason = std::get_if<std::string>(&opened)) {
                return not_started({spawn_stage::policy, EMFILE}, *reason);
            }
            auto& [witness, sandbox_end] = std::get<0>(opened);
            prepared.state_->witness = std::move(witness);
            spec.fds.push_back({sandbox::network_witness_fd,
                                std::make_shared<const unique_fd>(std::move(sandbox_end))});
        }
        if (request.network.policy != sandbox::network_policy::allow) {
            // What commands print when the network is refused is a denial too
            // (classify/network_denial.hpp): under proxy, from a client that ignores the proxy
            // variables; never under allow.
            const auto network = classify::network_denial_signatures();
            spec.denial_signatures.insert(spec.denial_signatures.end(), network.begin(),
                                          network.end());
            prepared.state_->network_denied = true;
        }
        // bwrap does not forward signals, and its death takes the sandbox down with SIGKILL.
        spec.spare_leader_from_polite_signals = confined->backend == sandbox::backend_kind::bwrap;
        // bwrap's pid namespace ends the whole run with its command; the Landlock rung does the
        // same through the run's cgroup (under bwrap the leader's exit takes the rest at once).
        spec.end_tree_with_leader = confined->backend == sandbox::backend_kind::landlock;
    } else {
        spec.argv = std::move(request.argv);
    }

    prepared.state_->mode = mode;
    prepared.state_->timeout = timeout;
    prepared.state_->tmp = request.rules.tmp;
    prepared.state_->writable_roots.push_back(request.workspace_root.string());
    for (const auto& root : request.rules.writable_roots)
        prepared.state_->writable_roots.push_back(root.string());
    return preparation(std::in_place_type<prepared_run>, std::move(prepared));
}

namespace {

// What a run's record is made of once every process of it is gone.
struct ended_run {
    std::function<void(run_record)> done;
    std::optional<sandbox::confined_argv> confined;
    sandbox::sandbox_mode mode = sandbox::sandbox_mode::read_only;
    std::chrono::milliseconds timeout{0};
    std::vector<std::string> writable_roots;
    sandbox::tmp_policy tmp = sandbox::tmp_policy::private_tmp;
    std::shared_ptr<sandbox::provider> provider;
    std::optional<proxy::session_report> proxied;
    std::optional<network_witness::witnessed> witnessed;
    std::optional<terminal_size> tty;
    std::shared_ptr<const classify::file_walls> walls;
    classify::verdict verdict;
    process_outcome outcome;
};

// Builds the record and hands it to `done`, with what the judgement of the run's leavings took.
void deliver(ended_run ended, std::optional<sandbox::judgement_report> judged) {
    const classify::verdict& verdict = ended.verdict;
    process_outcome& outcome = ended.outcome;
    if (verdict.outcome.kind == outcome_kind::runner_failed) {
        // The command never ran: the record says what the fail-closed contract's error says.
        log::debug("runner failure under {}: {}", sandbox::to_string(ended.mode),
                   verdict.outcome.message);
        if (ended.confined) ended.provider->runner_failed(*ended.confined);
        run_record record = sandbox_unavailable_record(
            ended.mode, verdict.outcome.runner.value_or(runner_failure{}));
        record.timeout = ended.timeout;
        record.duration_ms = outcome.duration_ms;
        record.limits = outcome.limits_applied;
        record.limits_hit = outcome.limits_hit;
        record.tty = ended.tty;
        // The command never ran, so it left nothing; what dead cordons left was judged all the
        // same, and is reported.
        if (judged && (!judged->neutralized.empty() || !judged->abandoned.empty())) {
            record.sandbox.judged = std::move(judged);
        }
        ended.done(std::move(record));
        return;
    }
    run_record record;
    record.outcome = verdict.outcome;
    record.timeout = ended.timeout;
    record.duration_ms = outcome.duration_ms;
    record.sandbox.mode = ended.mode;
    record.sandbox.denied = verdict.denied;
    record.sandbox.network_denied = verdict.network_denied;
    if (verdict.denied && !verdict.network_denied) record.sandbox.evidence = verdict.evidence;
    if (sandbox::confined_argv* confined = ended.confined ? &*ended.confined : nullptr) {
        record.sandbox.enforcement = confined->level;
        record.sandbox.backend = confined->backend;
        record.sandbox.gaps = confined->gaps;
        record.sandbox.quotas_per_run = confined->quotas_per_run;
        record.sandbox.identity = confined->identity;
        record.sandbox.network = confined->network;
        if (ended.proxied) add_proxy_report(*record.sandbox.network, std::move(*ended.proxied));
        if (ended.witnessed) add_witnessed(*record.sandbox.network, std::move(*ended.witnessed));
        if (ended.mode == sandbox::sandbox_mode::workspace_write) {
            record.sandbox.writable_roots = std::move(ended.writable_roots);
            record.sandbox.tmp = ended.tmp;
        }
        record.sandbox.protected_paths = std::move(confined->protected_paths);
        record.sandbox.hidden_paths = std::move(confined->hidden_paths);
        if (judged) {
            // What would have run outside the sandbox later was stopped: a denial, after the
            // fact.
            if (!judged->neutralized.empty()) record.sandbox.denied = true;
            record.sandbox.judged = std::move(judged);
        }
    } else {
        record.sandbox.network = sandbox::network_facts{};  // the host's: allow, none
        // Unconfined: cordon's own ids.
        record.sandbox.identity = sandbox::run_identity{::geteuid(), ::getegid(), false, {}};
    }
    record.limits = outcome.limits_applied;
    record.limits_hit = outcome.limits_hit;
    record.tty = ended.tty;
    // What a runner printed before the command could start is not the command's output.
    if (record.outcome.started()) {
        record.stdout_output = std::move(outcome.stdout_output);
        record.stderr_output = std::move(outcome.stderr_output);
    }
    ended.done(std::move(record));
}

}  // namespace

run_handle executor::launch(prepared_run run, std::function<void(run_record)> done) {
    process_spec& spec = run.state_->spec;
    ended_run ended;
    ended.done = std::move(done);
    ended.confined = std::move(run.state_->confined);
    ended.mode = run.state_->mode;
    ended.timeout = run.state_->timeout;
    ended.writable_roots = std::move(run.state_->writable_roots);
    ended.tmp = run.state_->tmp;
    ended.provider = provider_;
    ended.tty = run.state_->tty;
    ended.walls = std::move(run.state_->walls);
    std::shared_ptr<network_witness> witness = std::move(run.state_->witness);
    auto on_done = [ended = std::move(ended), in_child = spec.confinement != nullptr,
                    spawned = spec.argv.front(), network_denied = run.state_->network_denied,
                    proxy = std::move(run.state_->proxy_session), witness,
                    command = std::move(run.state_->command), io = io_,
                    judge_on = judge_on_](process_outcome outcome) mutable {
        // Every process of the run is gone: the proxy has served the last connection it will.
        if (proxy) ended.proxied = proxy->report();
        proxy.reset();
        if (witness) ended.witnessed = witness->finish();
        witness.reset();
        const bool proxy_blocked =
            (ended.proxied &&
             (!ended.proxied->blocked.empty() || ended.proxied->blocked_more != 0)) ||
            (ended.witnessed &&
             (!ended.witnessed->destinations.empty() || ended.witnessed->more != 0));
        sandbox::confined_argv* confined = ended.confined ? &*ended.confined : nullptr;
        // Under a terminal, what the runner and the command wrote to stderr is in its output.
        const collected_output& errors = ended.tty ? outcome.stdout_output : outcome.stderr_output;
        ended.verdict = classify::decide(
            outcome, {confined, spawned, errors.text, command, in_child, network_denied,
                      proxy_blocked, ended.walls.get(), nullptr, !errors.truncated});
        ended.outcome = std::move(outcome);
        // What the run left on the host (a private /tmp) goes now; what it left in its writable
        // roots is judged before the record is delivered.
        std::shared_ptr<sandbox::run_judgement> judgement;
        if (confined) {
            confined->residue.clear();
            judgement = std::move(confined->judgement);
        }
        if (!judgement) {
            deliver(std::move(ended), std::nullopt);
        } else if (!judge_on) {
            sandbox::judgement_report judged = judgement->finish();
            judgement.reset();
            deliver(std::move(ended), std::move(judged));
        } else {
            // Judged where the host does blocking work, so that a scan of a large tree holds up
            // no other run's output; the record follows on the event loop.
            boost::asio::post(*judge_on, [judgement = std::move(judgement),
                                          ended = std::move(ended), io]() mutable {
                sandbox::judgement_report judged = judgement->finish();
                judgement.reset();
                boost::asio::post(io,
                                  [ended = std::move(ended), judged = std::move(judged)]() mutable {
                                      deliver(std::move(ended), std::move(judged));
                                  });
            });
        }
    };
    if (witness) witness->start();
    return start_process(io_, std::move(spec), std::move(on_done));
}

run_record run(std::shared_ptr<sandbox::provider> provider, run_request request,
               executor_options options) {
    boost::asio::io_context context;
    executor exec(context.get_executor(), std::move(provider), std::move(options));
    std::optional<run_record> result;
    exec.async_run(std::move(request), [&result](run_record r) { result = std::move(r); });
    context.run();
    return std::move(*result);
}

run_record run(run_request request, executor_options options) {
    // Probed once, by the first caller, and shared: a provider is safe for concurrent use.
    static const std::shared_ptr<sandbox::provider> shared = make_local_provider();
    return run(shared, std::move(request), std::move(options));
}

}  // namespace cordon::runtime
