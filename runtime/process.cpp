#include "runtime/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "classify/signature_scanner.hpp"
#include "sandbox/status_channel.hpp"

namespace cordon::runtime {

namespace asio = boost::asio;
using std::chrono::milliseconds;

void ignore_sigpipe() noexcept {
    static std::once_flag once;
    std::call_once(once, [] { ::signal(SIGPIPE, SIG_IGN); });
}

namespace {

// How often the leader is polled when the kernel has no pidfds, and the cgroup while it empties.
constexpr milliseconds poll_interval{5};
// After the final SIGKILL every writer is dead; a pipe still open after this long is held by a
// process outside the tree's reach (no cgroup containment), and is closed from our side.
constexpr milliseconds final_drain{1000};

constexpr std::size_t read_chunk = 64 * 1024;

// The runner's channel is bounded: a launcher writes at most two records.
constexpr std::size_t status_limit = 64 * 1024;

// The command's environment as a NUL-separated block in a memfd, for a runner that reads it from
// a descriptor instead of inheriting it (sandbox::confined_argv::environment_fd).
unique_fd environment_block(const std::vector<std::string>& env) {
    unique_fd fd(::memfd_create("cordon-environment", MFD_CLOEXEC));
    if (!fd) return fd;
    std::string block;
    for (const auto& entry : env) {
        block += entry;
        block += '\0';
    }
    std::string_view rest = block;
    while (!rest.empty()) {
        const ssize_t n = ::write(fd.get(), rest.data(), rest.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return unique_fd();
        }
        rest.remove_prefix(static_cast<std::size_t>(n));
    }
    return fd;
}

}  // namespace

class process_tree : public std::enable_shared_from_this<process_tree> {
public:
    process_tree(asio::any_io_executor executor, process_spec spec,
                 std::function<void(process_outcome)> done)
        : strand_(asio::make_strand(executor)),
          spec_(std::move(spec)),
          done_(std::move(done)),
          stdout_pipe_(strand_),
          stderr_pipe_(strand_),
          status_pipe_(strand_),
          stdin_pipe_(strand_),
          pidfd_(strand_),
          deadline_(strand_),
          escalation_(strand_),
          drain_(strand_),
          poll_(strand_),
          stdout_(std::string("stdout"), spec_.stdout_limits, spec_.spill),
          stderr_(std::string("stderr"), spec_.stderr_limits, spec_.spill),
          scanner_(spec_.denial_signatures) {}

    // Reached before completion only when the event loop is torn down with the run still in
    // flight: nothing the run started may outlive it, and the leader must not stay a zombie.
    ~process_tree() {
        if (pid_ <= 0) return;
        ::kill(-pid_, SIGKILL);
        if (scope_) scope_->kill_all();
        while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
    process_tree(const process_tree&) = delete;
    process_tree& operator=(const process_tree&) = delete;

    void start() {
        asio::dispatch(strand_, [self = shared_from_this()] { self->launch(); });
    }

    void cancel() {
        asio::post(strand_, [self = shared_from_this()] {
            if (self->finished_ || self->swept_ || self->cause_ != cause::none) return;
            if (self->leader_exited_) {
                // The command itself finished first (so the run is not "aborted"); only its
                // leftovers hold the pipes. End them now rather than after the drain grace.
                self->drain_expired_ = true;
                self->advance();
                return;
            }
            self->cause_ = cause::cancelled;
            self->begin_kill();
        });
    }

private:
    enum class cause { none, timed_out, cancelled };

    void launch() {
        started_at_ = std::chrono::steady_clock::now();
        pipe_pair out, err, status, in;
        unique_fd dev_null;
        if (!make_pipe(out) || !make_pipe(err) || (spec_.status && !make_pipe(status))) {
            fail_spawn({spawn_stage::resources, errno});
            return;
        }
        if (spec_.stdin_data) {
            if (!make_pipe(in)) {
                fail_spawn({spawn_stage::resources, errno});
                return;
            }
        } else {
            dev_null.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
            if (!dev_null) {
                fail_spawn({spawn_stage::resources, errno});
                return;
            }
        }
        unique_fd environment;
        if (spec_.environment_fd) {
            environment = environment_block(spec_.env);
            if (!environment) {
                fail_spawn({spawn_stage::resources, errno});
                return;
            }
        }
        if (spec_.cgroups) {
            auto scope = spec_.cgroups->new_scope(spec_.limits);
            if (auto* reason = std::get_if<std::string>(&scope)) {
                if (spec_.limits_required) {
                    // A limit that was asked for is never dropped silently.
                    fail_spawn({spawn_stage::cgroup, EOPNOTSUPP}, *reason);
                    return;
                }
                spdlog::warn("run without its default limits: {}", *reason);
                scope = spec_.cgroups->new_scope({});
            } else {
                limits_applied_ = spec_.limits;
            }
            if (auto* reason = std::get_if<std::string>(&scope)) {
                spdlog::warn("run contained by process group only: {}", *reason);
            } else {
                scope_ = std::move(std::get<std::unique_ptr<cgroup_scope>>(scope));
            }
        }

        spawn_request request;
        request.argv = spec_.argv;
        // A runner starts with an empty environment: no loader variable of the command's reaches
        // it. The command's own arrives through the block.
        if (!spec_.environment_fd) request.env = spec_.env;
        request.cwd = spec_.cwd;
        request.method = spec_.method;
        request.exec_fd = spec_.exec_image ? spec_.exec_image->get() : -1;
        if (scope_) request.cgroup_procs_fds = scope_->procs_fds();
        request.fds = {{spec_.stdin_data ? in.read.get() : dev_null.get(), 0},
                       {out.write.get(), 1},
                       {err.write.get(), 2}};
        if (spec_.status) request.fds.push_back({status.write.get(), spec_.status->child_fd});
        if (spec_.environment_fd) request.fds.push_back({environment.get(), *spec_.environment_fd});
        for (const auto& passed : spec_.fds) {
            if (!passed.fd || !*passed.fd) {
                fail_spawn({spawn_stage::fds, EBADF});
                return;
            }
            request.fds.push_back({passed.fd->get(), passed.child_fd});
        }

        spawn_result result = spawn(request);
        if (auto* error = std::get_if<spawn_error>(&result)) {
            fail_spawn(*error);
            return;
        }
        auto& child = std::get<spawned_child>(result);
        pid_ = child.pid;

        // Our copies of the child's ends must go, or EOF would never come.
        out.write.reset();
        err.write.reset();
        status.write.reset();
        in.read.reset();
        dev_null.reset();
        environment.reset();

        stdout_pipe_.assign(out.read.release());
        stderr_pipe_.assign(err.read.release());
        read_stream(stdout_pipe_, stdout_buffer_, true);
        read_stream(stderr_pipe_, stderr_buffer_, false);
        if (spec_.status) {
            status_pipe_.assign(status.read.release());
            read_status();
        } else {
            status_closed_ = true;
        }
        if (spec_.stdin_data) {
            stdin_pipe_.assign(in.write.release());
            write_stdin();
        }
        if (child.pidfd) {
            pidfd_.assign(child.pidfd.release());
            pidfd_.async_wait(asio::posix::stream_descriptor::wait_read,
                              [self = shared_from_this()](boost::system::error_code ec) {
                                  if (!ec) self->on_leader_exit();
                              });
        } else {
            poll_leader();
        }
        if (spec_.timeout) {
            deadline_.expires_after(*spec_.timeout);
            deadline_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
                if (ec || self->leader_exited_ || self->cause_ != cause::none) return;
                self->cause_ = cause::timed_out;
                self->begin_kill();
            });
        }
    }

    void fail_spawn(spawn_error error, std::string detail = {}) {
        process_outcome outcome;
        outcome.spawn_failure = error;
        outcome.spawn_detail = std::move(detail);
        outcome.stdout_output = stdout_.finish();
        outcome.stderr_output = stderr_.finish();
        scope_.reset();
        finished_ = true;
        auto done = std::move(done_);
        done(std::move(outcome));
    }

    void read_stream(asio::posix::stream_descriptor& pipe, std::array<char, read_chunk>& buffer,
                     bool is_stdout) {
        pipe.async_read_some(
            asio::buffer(buffer), [self = shared_from_this(), &pipe, &buffer, is_stdout](
                                      boost::system::error_code ec, std::size_t n) {
                if (n > 0) {
                    std::string_view chunk(buffer.data(), n);
                    if (is_stdout) {
                        self->stdout_.append(std::span<const char>(chunk.data(), chunk.size()));
                        if (self->spec_.on_stdout) self->spec_.on_stdout(chunk);
                    } else {
                        self->stderr_.append(std::span<const char>(chunk.data(), chunk.size()));
                        self->scanner_.feed(chunk);
                        if (self->spec_.on_stderr) self->spec_.on_stderr(chunk);
                    }
                }
                if (ec) {
                    boost::system::error_code ignored;
                    pipe.close(ignored);
                    (is_stdout ? self->stdout_closed_ : self->stderr_closed_) = true;
                    self->advance();
                    return;
                }
                self->read_stream(pipe, buffer, is_stdout);
            });
    }

    void read_status() {
        status_pipe_.async_read_some(
            asio::buffer(status_buffer_),
            [self = shared_from_this()](boost::system::error_code ec, std::size_t n) {
                // The runner is trusted, but its channel is bounded all the same.
                if (n > 0 && self->status_text_.size() < status_limit) {
                    self->status_text_.append(self->status_buffer_.data(), n);
                }
                if (ec) {
                    boost::system::error_code ignored;
                    self->status_pipe_.close(ignored);
                    self->status_closed_ = true;
                    self->advance();
                    return;
                }
                self->read_status();
            });
    }

    void write_stdin() {
        asio::async_write(stdin_pipe_, asio::buffer(*spec_.stdin_data),
                          [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                              // EPIPE: the command closed its stdin early; that is its business.
                              if (ec && ec != asio::error::broken_pipe) {
                                  spdlog::debug("stdin write: {}", ec.message());
                              }
                              boost::system::error_code ignored;
                              self->stdin_pipe_.close(ignored);
                          });
    }

    void poll_leader() {
        siginfo_t info{};
        if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
            info.si_pid == pid_) {
            on_leader_exit();
            return;
        }
        poll_.expires_after(poll_interval);
        poll_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec) self->poll_leader();
        });
    }

    void signal_tree(int signal) {
        // The leader is not reaped before the sweep, so the pgid still names this tree; after
        // the reap pid_ is -1 and nothing is signalled by number again.
        if (pid_ <= 0) return;
        if (signal != SIGKILL && spec_.spare_leader_from_polite_signals && scope_) {
            scope_->signal_all(signal, pid_);
            return;
        }
        ::kill(-pid_, signal);
        if (scope_) {
            if (signal == SIGKILL) {
                scope_->kill_all();
            } else {
                scope_->signal_all(signal);
            }
        }
    }

    void begin_kill() {
        kill_step_ = 0;
        run_kill_step();
    }

    void run_kill_step() {
        // A step already queued on the strand when the sweep cancelled its timer.
        if (swept_ || finished_) return;
        const auto& steps = spec_.plan.steps;
        if (kill_step_ >= steps.size()) {
            escalation_done_ = true;
            signal_tree(SIGKILL);
            advance();
            return;
        }
        const kill_step& step = steps[kill_step_++];
        signal_tree(step.signal);
        if (step.signal == SIGKILL || kill_step_ >= steps.size()) {
            escalation_done_ = true;
            advance();
            return;
        }
        escalation_.expires_after(step.wait);
        escalation_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec) self->run_kill_step();
        });
    }

    void on_leader_exit() {
        if (leader_exited_) return;
        leader_exited_ = true;
        deadline_.cancel();
        if (cause_ == cause::none) {
            // The command is done; what it left running may finish writing for one grace
            // period, then goes.
            drain_.expires_after(spec_.plan.grace());
            drain_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
                if (ec) return;
                self->drain_expired_ = true;
                self->advance();
            });
        }
        advance();
    }

    // Moves the end of the run forward whenever one of its conditions changes.
    void advance() {
        if (finished_) return;
        if (leader_exited_ && !swept_ &&
            ((stdout_closed_ && stderr_closed_) || drain_expired_ || escalation_done_)) {
            sweep();
        }
        if (swept_ && !final_drain_armed_ &&
            !(stdout_closed_ && stderr_closed_ && status_closed_)) {
            final_drain_armed_ = true;
            drain_.expires_after(final_drain);
            drain_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
                if (ec) return;
                boost::system::error_code ignored;
                self->stdout_pipe_.close(ignored);
                self->stderr_pipe_.close(ignored);
                self->status_pipe_.close(ignored);
            });
        }
        if (swept_ && stdout_closed_ && stderr_closed_ && status_closed_) await_empty_cgroup(0);
    }

    void sweep() {
        swept_ = true;
        drain_.cancel();
        escalation_.cancel();
        signal_tree(SIGKILL);
        siginfo_t info{};
        int reaped;
        while ((reaped = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED)) < 0 &&
               errno == EINTR) {
        }
        reaped_at_ = std::chrono::steady_clock::now();
        if (reaped < 0) {
            // ECHILD: someone else reaped it (the host set SIGCHLD to SIG_IGN). The status is
            // lost; say so rather than invent one.
            spdlog::warn("cannot reap pid {}: {}", pid_, std::strerror(errno));
        } else if (info.si_code == CLD_EXITED) {
            exit_code_ = info.si_status;
        } else {
            signal_ = info.si_status;
        }
        pid_ = -1;
        boost::system::error_code ignored;
        pidfd_.close(ignored);
        // A write still pending to a stdin that a leftover process held open must not keep the
        // run alive.
        stdin_pipe_.close(ignored);
    }

    void await_empty_cgroup(int attempt) {
        if (finished_) return;
        if (attempt == 0) {
            if (cgroup_wait_started_) return;
            cgroup_wait_started_ = true;
        }
        if (scope_ && scope_->populated() && attempt < 400) {
            poll_.expires_after(poll_interval);
            poll_.async_wait([self = shared_from_this(), attempt](boost::system::error_code ec) {
                if (!ec) self->await_empty_cgroup(attempt + 1);
            });
            return;
        }
        complete();
    }

    void complete() {
        if (finished_) return;
        finished_ = true;
        deadline_.cancel();
        poll_.cancel();
        drain_.cancel();
        if (scope_) limits_hit_ = scope_->events();
        if (scope_ && !scope_->remove()) {
            spdlog::debug("run cgroup still populated; removing on destruction");
        }
        scope_.reset();

        process_outcome outcome;
        outcome.exit_code = exit_code_;
        outcome.signal = signal_;
        outcome.timed_out = cause_ == cause::timed_out;
        outcome.aborted = cause_ == cause::cancelled;
        outcome.stdout_output = stdout_.finish();
        outcome.stderr_output = stderr_.finish();
        outcome.denial_seen = scanner_.matched();
        outcome.limits_applied = limits_applied_;
        outcome.limits_hit = limits_hit_;
        outcome.duration_ms =
            std::chrono::duration<double, std::milli>(reaped_at_ - started_at_).count();
        interpret_status(outcome);
        auto done = std::move(done_);
        done(std::move(outcome));
    }

    void interpret_status(process_outcome& outcome) const {
        if (spec_.status) outcome.status = sandbox::decode_status(status_text_);
    }

    asio::strand<asio::any_io_executor> strand_;
    process_spec spec_;
    std::function<void(process_outcome)> done_;

    asio::posix::stream_descriptor stdout_pipe_;
    asio::posix::stream_descriptor stderr_pipe_;
    asio::posix::stream_descriptor status_pipe_;
    asio::posix::stream_descriptor stdin_pipe_;
    asio::posix::stream_descriptor pidfd_;
    asio::steady_timer deadline_;
    asio::steady_timer escalation_;
    asio::steady_timer drain_;
    asio::steady_timer poll_;

    std::array<char, read_chunk> stdout_buffer_{};
    std::array<char, read_chunk> stderr_buffer_{};
    std::array<char, 4096> status_buffer_{};
    std::string status_text_;

    output_collector stdout_;
    output_collector stderr_;
    classify::signature_scanner scanner_;
    std::unique_ptr<cgroup_scope> scope_;

    pid_t pid_ = -1;
    cause cause_ = cause::none;
    std::size_t kill_step_ = 0;
    bool leader_exited_ = false;
    bool stdout_closed_ = false;
    bool stderr_closed_ = false;
    bool status_closed_ = false;
    bool drain_expired_ = false;
    bool escalation_done_ = false;
    bool swept_ = false;
    bool final_drain_armed_ = false;
    bool cgroup_wait_started_ = false;
    bool finished_ = false;
    std::optional<int> exit_code_;
    std::optional<int> signal_;
    run_limits limits_applied_;
    limit_events limits_hit_;
    std::chrono::steady_clock::time_point started_at_;
    std::chrono::steady_clock::time_point reaped_at_;
};

void process_handle::cancel() const {
    if (tree_) tree_->cancel();
}

process_handle start_process(asio::any_io_executor executor, process_spec spec,
                             std::function<void(process_outcome)> done) {
    ignore_sigpipe();
    auto tree =
        std::make_shared<process_tree>(std::move(executor), std::move(spec), std::move(done));
    tree->start();
    return process_handle(tree);
}

process_outcome run_process(process_spec spec) {
    asio::io_context context;
    process_outcome result;
    start_process(context.get_executor(), std::move(spec),
                  [&result](process_outcome outcome) { result = std::move(outcome); });
    context.run();
    return result;
}

}  // namespace cordon::runtime
