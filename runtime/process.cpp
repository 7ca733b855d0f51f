// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// One concern, longer than the ~500 lines a file here stays under: the state machine of one run
// from its spawn to `done` (process_tree), whose phases (process.hpp) are methods that move the run
// from one to the next on its strand: spawn, output and status reading, stdin, the leader's exit,
// the kill plan, the sweep, the cgroup's emptying and removal. Split across files, each
// transition would be read away from the phases it moves between. What it drives lives in files
// of its own: the spawn (spawn.cpp), the output (output_collector.cpp), the cgroup (cgroup.cpp),
// the runner's status channel (sandbox/status_channel.cpp).
#include "runtime/process.hpp"
#include "base/log.hpp"
#include "runtime/sigpipe.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <array>
#include <cerrno>
#include <cstring>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>

#include "classify/signature_scanner.hpp"
#include "sandbox/status_channel.hpp"

namespace cordon::runtime {

namespace asio = boost::asio;
using std::chrono::milliseconds;

namespace {

// How often the leader is polled when the kernel has no pidfds, and the cgroup while it empties.
constexpr milliseconds poll_interval{5};
// After the final SIGKILL every writer is dead; a pipe still open after this long is held by a
// process outside the tree's reach (no cgroup containment), and is closed from our side.
constexpr milliseconds final_drain{1000};
// How long a swept run's cgroup may take to empty (its processes are already SIGKILLed; the
// kernel frees them asynchronously) before the run completes anyway.
// How often a running run's socket buffers are read against their bound (one small cgroup file).
constexpr milliseconds socket_watch_interval{250};
constexpr int cgroup_empty_polls = 400;  // x poll_interval = 2 s
// And how long its directories may stay busy after that (a v1 hierarchy frees a little later than
// the v2 tree says it is empty) before they are left to the cgroup host to remove.
constexpr int cgroup_remove_polls = 200;  // x poll_interval = 1 s

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
          oom_notice_(strand_),
          deadline_(strand_),
          escalation_(strand_),
          drain_(strand_),
          final_drain_(strand_),
          poll_(strand_),
          socket_watch_(strand_),
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

    // `reason`: why the run is ended for the caller (process_outcome::abort_reason); empty for
    // the caller's own cancel.
    void cancel(std::optional<kill_plan> plan, std::string reason = {}) {
        asio::post(strand_, [self = shared_from_this(), plan = std::move(plan),
                             reason = std::move(reason)]() mutable {
            if (self->cause_ != cause::none) return;
            if (self->phase_ == phase::running) {
                self->cause_ = cause::cancelled;
                self->abort_reason_ = std::move(reason);
                // The plan's drain grace stays: the leader is still running.
                if (plan) self->spec_.plan.steps = plan->ending_in_sigkill().steps;
                self->begin_kill();
            } else if (self->phase_ == phase::leader_exited) {
                // The command itself finished first (so the run is not "aborted"); only its
                // leftovers hold the pipes. End them now rather than after the drain grace.
                self->end_now_ = true;
                self->advance();
            }
        });
    }

private:
    // The end of a run (process.hpp), one phase after the other.
    enum class phase {
        starting,       // before the spawn
        running,        // the leader is alive
        leader_exited,  // it exited; its leftovers may hold the pipes until the drain grace ends
        swept,          // the tree was killed and the leader reaped; the pipes drain to EOF
        emptying,       // every pipe is closed; waiting for the run's cgroup to empty
        done,           // `done_` was called
    };
    enum class cause { none, timed_out, cancelled };

    void launch() {
        started_at_ = std::chrono::steady_clock::now();
        pipe_pair out, err, status, in;
        unique_fd dev_null;
        const bool terminal = spec_.terminal.has_value();
        if (terminal && (!spec_.terminal->master || !*spec_.terminal->master ||
                         !spec_.terminal->slave || !*spec_.terminal->slave)) {
            fail_spawn({spawn_stage::fds, EBADF});
            return;
        }
        if ((!terminal && (!make_pipe(out) || !make_pipe(err))) ||
            (spec_.status && !make_pipe(status))) {
            fail_spawn({spawn_stage::resources, errno});
            return;
        }
        // Under a terminal the output is read from the master, and typed input written to it,
        // each through a descriptor of the tree's own (the job that holds the master writes to it
        // too); their open file description is non-blocking since open_pty.
        unique_fd terminal_output;
        if (terminal) {
            terminal_output.reset(::fcntl(spec_.terminal->master->get(), F_DUPFD_CLOEXEC, 3));
            if (spec_.stdin_data) {
                in.write.reset(::fcntl(spec_.terminal->master->get(), F_DUPFD_CLOEXEC, 3));
            }
            if (!terminal_output || (spec_.stdin_data && !in.write)) {
                fail_spawn({spawn_stage::resources, errno});
                return;
            }
        }
        int child_stdin = -1;
        if (terminal) {
            child_stdin = spec_.terminal->slave->get();
        } else if (spec_.stdin_data) {
            // Our end is non-blocking: write_stdin() waits for room on the event loop.
            if (!make_pipe(in) || ::fcntl(in.write.get(), F_SETFL, O_NONBLOCK) != 0) {
                fail_spawn({spawn_stage::resources, errno});
                return;
            }
            child_stdin = in.read.get();
        } else if (spec_.stdin_fd) {
            if (!*spec_.stdin_fd) {
                fail_spawn({spawn_stage::fds, EBADF});
                return;
            }
            child_stdin = spec_.stdin_fd->get();
        } else {
            dev_null.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
            if (!dev_null) {
                fail_spawn({spawn_stage::resources, errno});
                return;
            }
            child_stdin = dev_null.get();
        }
        // A command under its own uid (sandbox/identity.hpp) reopens its streams by name
        // (/dev/stdout, /dev/stdin, /proc/self/fd/1), which checks the pipe's owner: the pipes
        // are the run's, as its terminal is, cordon's own and an unnamed one handed over as stdin
        // (`cordon run --stdin-file -` under a shell pipe). A named FIFO or a file stays its
        // owner's.
        if (spec_.identity && spec_.identity->identity.reserved) {
            const auto& who = spec_.identity->identity;
            int given = -1;
            struct statfs where {};
            if (spec_.stdin_fd && child_stdin == spec_.stdin_fd->get() &&
                ::fstatfs(child_stdin, &where) == 0 && where.f_type == PIPEFS_MAGIC) {
                given = child_stdin;
            }
            for (const int fd : {out.write.get(), err.write.get(), in.read.get(), given}) {
                if (fd >= 0 && ::fchown(fd, who.uid, who.gid) != 0) {
                    fail_spawn({spawn_stage::resources, errno});
                    return;
                }
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
                log::warn("run without its default limits: {}", *reason);
                scope = spec_.cgroups->new_scope({});
            } else {
                limits_applied_ = spec_.limits;
            }
            if (auto* reason = std::get_if<std::string>(&scope)) {
                log::warn("run contained by process group only: {}", *reason);
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
        request.die_with_spawning_thread = spec_.die_with_spawning_thread;
        request.exec_fd = spec_.exec_image ? spec_.exec_image->get() : -1;
        request.confinement = spec_.confinement.get();
        request.identity = spec_.identity.get();
        if (scope_) {
            request.cgroup_join_fds = scope_->join_fds();
            request.cgroup_birth_fd = scope_->birth_fd();
        }
        if (terminal) {
            request.fds = {{child_stdin, 0}, {child_stdin, 1}, {child_stdin, 2}};
            request.controlling_terminal = spec_.terminal->spawn_takes_it;
        } else {
            request.fds = {{child_stdin, 0}, {out.write.get(), 1}, {err.write.get(), 2}};
        }
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
            fail_spawn(*error,
                       error->stage == spawn_stage::confine
                           ? sandbox::child_confinement_failure(
                                 static_cast<sandbox::launcher_stage>(error->step), error->error)
                           : std::string());
            return;
        }
        auto& child = std::get<spawned_child>(result);
        pid_ = child.pid;
        phase_ = phase::running;

        // Our copies of the child's ends must go, or EOF would never come.
        out.write.reset();
        err.write.reset();
        status.write.reset();
        in.read.reset();
        dev_null.reset();
        environment.reset();

        if (terminal) {
            // The command has the slave: the master reads EIO once no process of the run does.
            spec_.terminal->slave.reset();
            stdout_pipe_.assign(terminal_output.release());
            read_stream(stdout_pipe_, stdout_buffer_, true);
            stderr_closed_ = true;
        } else {
            stdout_pipe_.assign(out.read.release());
            stderr_pipe_.assign(err.read.release());
            read_stream(stdout_pipe_, stdout_buffer_, true);
            read_stream(stderr_pipe_, stderr_buffer_, false);
        }
        if (spec_.status) {
            status_pipe_.assign(status.read.release());
            read_status();
        } else {
            status_closed_ = true;
        }
        // The child holds its own copy: ours would keep the writer of a pipe from ever seeing
        // EPIPE once the command is done with it.
        spec_.stdin_fd.reset();
        if (spec_.stdin_data) {
            stdin_pipe_.assign(in.write.release());
            write_stdin();
        }
        if (scope_) {
            if (unique_fd notice = scope_->take_oom_notice()) {
                oom_notice_.assign(notice.release());
                watch_oom();
            }
            if (scope_->socket_bound() != 0) watch_sockets();
        }
        if (child.pidfd && spec_.use_pidfd) {
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
                if (ec || self->phase_ != phase::running || self->cause_ != cause::none) return;
                self->cause_ = cause::timed_out;
                self->begin_kill();
            });
        }
    }

    void fail_spawn(spawn_error error, std::string detail = {}) {
        process_outcome outcome;
        outcome.spawn_failure = error;
        outcome.spawn_detail = std::move(detail);
        outcome.limits_applied = limits_applied_;
        outcome.stdout_output = stdout_.finish();
        outcome.stderr_output = stderr_.finish();
        scope_.reset();
        phase_ = phase::done;
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
                        // A terminal carries what the command wrote to stderr as well.
                        if (self->spec_.terminal) self->scanner_.feed(chunk);
                        self->hand_to_caller(self->spec_.on_stdout, chunk);
                    } else {
                        self->stderr_.append(std::span<const char>(chunk.data(), chunk.size()));
                        self->scanner_.feed(chunk);
                        self->hand_to_caller(self->spec_.on_stderr, chunk);
                    }
                }
                if (ec) {
                    boost::system::error_code ignored;
                    pipe.close(ignored);
                    (is_stdout ? self->stdout_closed_ : self->stderr_closed_) = true;
                    self->advance();
                    return;
                }
                if (n > 0 && self->pause_for_reader(is_stdout)) return;
                self->read_stream(pipe, buffer, is_stdout);
            });
    }

    // The live-output callbacks and the pacing functions are the caller's code, run on a loop that
    // other runs share (the supervisor's, the MCP server's): what one throws must not unwind
    // through it. It ends this run as cancel() would (the record says aborted, and why), and no
    // callback of the run is called again.
    void hand_to_caller(const std::function<void(std::string_view)>& callback,
                        std::string_view chunk) {
        if (!callback || caller_failed_) return;
        try {
            callback(chunk);
        } catch (...) {
            caller_threw(std::current_exception());
        }
    }

    void caller_threw(const std::exception_ptr& thrown) noexcept {
        caller_failed_ = true;
        // The exception may be bad_alloc: without the line (nothing could be allocated), the run
        // is ended all the same. cancel() posts, which may fail as well: then the run ends by
        // its deadline, as it would with no callback at all.
        std::string why = caller_threw_message(thrown);
        log::error("{}: the run is ended", why.empty() ? "a callback of the caller's threw" : why);
        try {
            cancel(std::nullopt, std::move(why));
        } catch (...) {
            log::error("a run whose callback threw could not be ended; its deadline ends it");
        }
    }

    // Backpressure (run_request::stdout_pace): after a chunk, while the command runs, the stream
    // waits for its reader's `more`. True when it now waits.
    bool pause_for_reader(bool is_stdout) {
        const auto& pace = is_stdout ? spec_.stdout_pace : spec_.stderr_pace;
        if (!pace || caller_failed_ || phase_ != phase::running || cause_ != cause::none) {
            return false;
        }
        (is_stdout ? stdout_paused_ : stderr_paused_) = true;
        // Weak: a reader that never asks for more must not keep the finished run alive.
        try {
            pace([weak = weak_from_this(), is_stdout] {
                if (auto self = weak.lock()) {
                    asio::post(self->strand_,
                               [self, is_stdout] { self->resume_reading(is_stdout); });
                }
            });
        } catch (...) {
            (is_stdout ? stdout_paused_ : stderr_paused_) = false;
            caller_threw(std::current_exception());
            return false;
        }
        return true;
    }

    void resume_reading(bool is_stdout) {
        bool& paused = is_stdout ? stdout_paused_ : stderr_paused_;
        if (!paused) return;  // resumed already, when the run stopped waiting on readers
        paused = false;
        if (is_stdout) {
            read_stream(stdout_pipe_, stdout_buffer_, true);
        } else {
            read_stream(stderr_pipe_, stderr_buffer_, false);
        }
    }

    // The command exited or is being ended: nothing waits on a reader from here on.
    void stop_pacing() {
        resume_reading(true);
        resume_reading(false);
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

    // Writes what fits, then waits for room; stops at the end, or when the command closed its
    // stdin early (EPIPE: that is its business), or when the run was swept.
    void write_stdin() {
        const std::string& data = *spec_.stdin_data;
        while (stdin_written_ < data.size()) {
            const ssize_t n =
                write_without_sigpipe(stdin_pipe_.native_handle(), data.data() + stdin_written_,
                                      data.size() - stdin_written_);
            if (n >= 0) {
                stdin_written_ += static_cast<std::size_t>(n);
                continue;
            }
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {
                stdin_pipe_.async_wait(asio::posix::stream_descriptor::wait_write,
                                       [self = shared_from_this()](boost::system::error_code ec) {
                                           if (!ec) self->write_stdin();
                                       });
                return;
            }
            if (errno != EPIPE) log::debug("stdin write: {}", std::strerror(errno));
            break;
        }
        boost::system::error_code ignored;
        stdin_pipe_.close(ignored);
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

    // A v1 memory cgroup has no memory.oom.group: when the run's memory cgroup is out of memory,
    // the whole run goes at once, as the kernel does in v2 (cgroup.hpp). The kernel signals the
    // eventfd just before its OOM killer picks a victim (mm/memcontrol-v1.c: the notification
    // precedes mem_cgroup_out_of_memory), so oom_kill may not be counted yet: the notice is the
    // evidence, once the cgroup's own counters say it was at its limit. The eventfd is signalled
    // for more than an OOM of the run (when the cgroup is removed; an OOM of a cgroup above it),
    // and once one of twenty jobs of a `cordon mcp` was ended by a notice that no OOM kill
    // followed: a notice of a cgroup that was never at its limit is no OOM of the run, and the
    // watch goes on.
    void watch_oom() {
        oom_notice_.async_wait(
            asio::posix::stream_descriptor::wait_read,
            [self = shared_from_this()](boost::system::error_code ec) {
                if (ec) return;
                std::uint64_t count = 0;
                if (::read(self->oom_notice_.native_handle(), &count, sizeof count) < 0) {
                    // counted or not, the notice came: the run ends below
                }
                if (self->phase_ != phase::running && self->phase_ != phase::leader_exited) return;
                if (!self->scope_ || !self->scope_->memory_v1_limit_met()) {
                    log::debug("an OOM notice of a cgroup never at its limit: not acted on");
                    self->watch_oom();
                    return;
                }
                self->oom_noticed_ = true;
                self->end_now_ = true;
                self->signal_tree(SIGKILL);
                self->advance();
            });
    }

    // The kernel lets every socket queue a little past the run's socket bound (cgroup.hpp), so a
    // run with tens of thousands of connections holds far more and squeezes every TCP socket of
    // the host (tcp_mem). Nothing in the kernel counts that per run but the cgroup's counter:
    // read while the run lasts, and past twice the bound the whole run ends, as at its memory
    // limit (limit_events::sockets).
    void watch_sockets() {
        socket_watch_.expires_after(socket_watch_interval);
        socket_watch_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (ec) return;
            if (self->phase_ != phase::running && self->phase_ != phase::leader_exited) return;
            const std::uint64_t bound = self->scope_->socket_bound();
            const std::optional<std::uint64_t> held = self->scope_->socket_bytes();
            if (!held || *held / 2 <= bound) {
                self->watch_sockets();
                return;
            }
            log::debug("the run's sockets hold {} bytes, past twice their bound of {}: ended",
                       *held, bound);
            self->sockets_over_ = true;
            self->end_now_ = true;
            self->signal_tree(SIGKILL);
            self->advance();
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
        stop_pacing();
        kill_step_ = 0;
        run_kill_step();
    }

    // The plan ends in SIGKILL (start_process normalises it): after that step the rest of the
    // tree goes as soon as the leader is gone, whoever still holds the pipes.
    void run_kill_step() {
        // A step already queued on the strand when the sweep cancelled its timer.
        if (phase_ != phase::running && phase_ != phase::leader_exited) return;
        const kill_step& step = spec_.plan.steps[kill_step_++];
        signal_tree(step.signal);
        if (step.signal == SIGKILL) {
            end_now_ = true;
            advance();
            return;
        }
        escalation_.expires_after(step.wait);
        escalation_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (!ec) self->run_kill_step();
        });
    }

    void on_leader_exit() {
        if (phase_ != phase::running) return;
        phase_ = phase::leader_exited;
        deadline_.cancel();
        stop_pacing();
        if (cause_ == cause::none && spec_.end_tree_with_leader) {
            // As under bwrap: the run ends with its command.
            end_now_ = true;
        } else if (cause_ == cause::none) {
            // The command is done; what it left running may finish writing for the drain
            // grace, then goes.
            drain_.expires_after(spec_.plan.drain_grace);
            drain_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
                if (ec) return;
                self->end_now_ = true;
                self->advance();
            });
        }
        advance();
    }

    // Moves the end of the run forward whenever one of its conditions changes.
    void advance() {
        switch (phase_) {
            case phase::starting:
            case phase::running:
            case phase::emptying:
            case phase::done:
                return;
            case phase::leader_exited:
                if (!(stdout_closed_ && stderr_closed_) && !end_now_) return;
                sweep();
                [[fallthrough]];
            case phase::swept:
                if (!(stdout_closed_ && stderr_closed_ && status_closed_)) return;
                phase_ = phase::emptying;
                await_empty_cgroup(0);
                return;
        }
    }

    void sweep() {
        phase_ = phase::swept;
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
            // ECHILD: the kernel reaped it for a host that ignores SIGCHLD (or set
            // SA_NOCLDWAIT). The library never changes the host's dispositions, and no spawn
            // flag keeps the zombie: a child cloned with no exit signal, or another one than
            // SIGCHLD, is reaped all the same once it has exec'd (measured on 6.18: only a
            // child that never execs keeps its status). The status is lost; say so rather than
            // invent one: the record says the status is unknown (classify), and a probe's is no
            // verdict (sandbox/probe.cpp). The `cordon` program resets SIGCHLD at start
            // (cli/start_signals.hpp).
            log::warn("cannot reap pid {}: {}", pid_, std::strerror(errno));
        } else if (info.si_code == CLD_EXITED) {
            exit_code_ = info.si_status;
        } else {
            signal_ = info.si_status;
        }
        pid_ = -1;
        boost::system::error_code ignored;
        pidfd_.close(ignored);
        oom_notice_.close(ignored);
        socket_watch_.cancel();
        // A write still pending to a stdin that a leftover process held open must not keep the
        // run alive.
        stdin_pipe_.close(ignored);
        // Every writer in reach is dead now; a pipe still open after the final drain is held by
        // a process outside the tree's reach, and is closed from our side.
        final_drain_.expires_after(final_drain);
        final_drain_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
            if (ec) return;
            boost::system::error_code unused;
            self->stdout_pipe_.close(unused);
            self->stderr_pipe_.close(unused);
            self->status_pipe_.close(unused);
        });
    }

    void await_empty_cgroup(int attempt) {
        if (phase_ != phase::emptying) return;
        if (scope_ && scope_->populated() && attempt < cgroup_empty_polls) {
            poll_.expires_after(poll_interval);
            poll_.async_wait([self = shared_from_this(), attempt](boost::system::error_code ec) {
                if (!ec) self->await_empty_cgroup(attempt + 1);
            });
            return;
        }
        // Read before the directories go: the limits the run met are counted there.
        if (scope_) limits_hit_ = scope_->events();
        if (oom_noticed_) limits_hit_.memory = true;
        if (sockets_over_) limits_hit_.sockets = true;
        remove_cgroup(0);
    }

    // rmdir on a timer of the run's loop, never a sleep: one slow cgroup must not stall the
    // other runs of the loop (the job supervisor runs them all on one thread).
    void remove_cgroup(int attempt) {
        if (phase_ != phase::emptying) return;
        if (scope_ && !scope_->remove() && attempt < cgroup_remove_polls) {
            poll_.expires_after(poll_interval);
            poll_.async_wait([self = shared_from_this(), attempt](boost::system::error_code ec) {
                if (!ec) self->remove_cgroup(attempt + 1);
            });
            return;
        }
        complete();
    }

    void complete() {
        phase_ = phase::done;
        deadline_.cancel();
        poll_.cancel();
        final_drain_.cancel();
        process_outcome outcome;
        outcome.limits_hit = limits_hit_;
        // What could not be removed yet is left to the host (cgroup_scope's destructor).
        scope_.reset();

        outcome.exit_code = exit_code_;
        outcome.signal = signal_;
        outcome.timed_out = cause_ == cause::timed_out;
        outcome.aborted = cause_ == cause::cancelled;
        if (outcome.aborted) outcome.abort_reason = std::move(abort_reason_);
        outcome.stdout_output = stdout_.finish();
        outcome.stderr_output = stderr_.finish();
        outcome.denial_seen = scanner_.matched();
        outcome.limits_applied = limits_applied_;
        outcome.duration_ms =
            std::chrono::duration<double, std::milli>(reaped_at_ - started_at_).count();
        if (spec_.status) outcome.status = sandbox::decode_status(status_text_);
        auto done = std::move(done_);
        done(std::move(outcome));
    }

    asio::strand<asio::any_io_executor> strand_;
    process_spec spec_;
    std::function<void(process_outcome)> done_;

    asio::posix::stream_descriptor stdout_pipe_;
    asio::posix::stream_descriptor stderr_pipe_;
    asio::posix::stream_descriptor status_pipe_;
    asio::posix::stream_descriptor stdin_pipe_;
    asio::posix::stream_descriptor pidfd_;
    // v1 only: readable on an OOM (cgroup.hpp).
    asio::posix::stream_descriptor oom_notice_;
    asio::steady_timer deadline_;      // the run's timeout
    asio::steady_timer escalation_;    // the wait after each kill step
    asio::steady_timer drain_;         // the drain grace after the leader exited
    asio::steady_timer final_drain_;   // after the sweep
    asio::steady_timer poll_;          // the leader without a pidfd; the cgroup while it empties
    asio::steady_timer socket_watch_;  // the run's socket buffers against their bound

    std::array<char, read_chunk> stdout_buffer_;  // read into only: no 64 KiB memset per run
    std::array<char, read_chunk> stderr_buffer_;
    std::array<char, 4096> status_buffer_{};
    std::string status_text_;
    std::size_t stdin_written_ = 0;

    output_collector stdout_;
    output_collector stderr_;
    classify::signature_scanner scanner_;
    std::unique_ptr<cgroup_scope> scope_;

    pid_t pid_ = -1;
    phase phase_ = phase::starting;
    cause cause_ = cause::none;
    std::string abort_reason_;  // why the run was cancelled for its caller (cancel())
    std::size_t kill_step_ = 0;
    bool end_now_ = false;       // sweep as soon as the leader is gone (grace over, SIGKILL sent)
    bool oom_noticed_ = false;   // the run's v1 memory cgroup said it was out of memory
    bool sockets_over_ = false;  // the run's sockets held more than twice their bound
    bool stdout_closed_ = false;
    bool stderr_closed_ = false;
    bool caller_failed_ = false;  // a callback of the caller's threw (hand_to_caller)
    bool stdout_paused_ = false;  // waiting for its reader's `more` (pause_for_reader)
    bool stderr_paused_ = false;
    bool status_closed_ = false;
    std::optional<int> exit_code_;
    std::optional<int> signal_;
    run_limits limits_applied_;
    limit_events limits_hit_;
    std::chrono::steady_clock::time_point started_at_;
    std::chrono::steady_clock::time_point reaped_at_;
};

std::string caller_threw_message(const std::exception_ptr& thrown) noexcept {
    try {
        try {
            std::rethrow_exception(thrown);
        } catch (const std::exception& error) {
            return std::string("a callback of the caller's threw: ") + error.what();
        } catch (...) {
            return "a callback of the caller's threw something that is not a std::exception";
        }
    } catch (...) {
        return {};
    }
}

void run_handle::cancel(std::optional<kill_plan> plan) const {
    if (tree_) tree_->cancel(std::move(plan));
}

process_handle start_process(asio::any_io_executor executor, process_spec spec,
                             std::function<void(process_outcome)> done) {
    if (spec.stdin_data && spec.stdin_fd) {
        throw std::invalid_argument("process_spec: give stdin_data or stdin_fd, not both");
    }
    spec.plan = spec.plan.ending_in_sigkill();
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
