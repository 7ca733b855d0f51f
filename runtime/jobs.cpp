#include "runtime/jobs.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <spdlog/spdlog.h>

#include "runtime/sigpipe.hpp"

namespace cordon::runtime {

namespace {

using std::chrono::milliseconds;

// How long job::write() waits for a command that does not read its stdin.
constexpr milliseconds write_patience{5000};

// A lifetime no job reaches: the executor needs a deadline, a job without a lifetime has none.
constexpr milliseconds unbounded{std::chrono::hours(24 * 365 * 10)};

std::string joined(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& arg : argv) {
        if (!out.empty()) out += ' ';
        out += arg;
    }
    return out;
}

}  // namespace

std::string_view to_string(job_status status) noexcept {
    switch (status) {
        case job_status::running:
            return "running";
        case job_status::completed:
            return "completed";
        case job_status::killed:
            return "killed";
        case job_status::timed_out:
            return "timed_out";
        case job_status::failed_to_start:
            return "failed_to_start";
    }
    return "unknown";
}

// ---- job ----------------------------------------------------------------------------------------

job::job(private_tag, std::string id, const job_request& request, std::size_t memory_bytes,
         std::uint64_t spill_max_bytes, std::shared_ptr<spill_directory> spill)
    : id_(std::move(id)),
      owner_(request.owner),
      label_(request.label.empty() ? joined(request.run.argv) : request.label),
      started_at_(std::chrono::system_clock::now()),
      mode_(request.run.mode),
      merged_(id_ + "-output", memory_bytes, spill_max_bytes, spill),
      stdout_(id_ + "-stdout", memory_bytes, spill_max_bytes, spill),
      stderr_(id_ + "-stderr", memory_bytes, spill_max_bytes, spill),
      completion_(promise_.get_future().share()) {}

job::~job() = default;

const job_stream& job::stream(job_output which) const {
    switch (which) {
        case job_output::stdout_only:
            return stdout_;
        case job_output::stderr_only:
            return stderr_;
        case job_output::merged:
            break;
    }
    return merged_;
}

stream_read job::read(job_output which, std::uint64_t offset, std::size_t max_bytes) const {
    return stream(which).read(offset, max_bytes);
}

std::optional<std::filesystem::path> job::spill_path(job_output which) const {
    return stream(which).spill_path();
}

std::uint64_t job::cursor(job_output which) const noexcept {
    return cursors_[static_cast<std::size_t>(which)].load();
}

void job::set_cursor(job_output which, std::uint64_t offset) noexcept {
    cursors_[static_cast<std::size_t>(which)].store(offset);
}

bool job::wait_output(job_output which, std::uint64_t offset,
                      std::chrono::steady_clock::time_point deadline) const {
    return stream(which).wait_for(offset, deadline);
}

bool job::wait_settled(std::chrono::steady_clock::time_point deadline) const {
    std::unique_lock lock(mutex_);
    return settled_changed_.wait_until(lock, deadline, [this] { return settled_; });
}

job_snapshot job::snapshot() const {
    std::lock_guard lock(mutex_);
    job_snapshot out;
    if (settled_) {
        out = final_;
    } else {
        out.id = id_;
        out.owner = owner_;
        out.label = label_;
        out.started_at = started_at_;
        out.sandbox.mode = mode_;
    }
    out.output_bytes = merged_.size();
    out.stdout_bytes = stdout_.size();
    out.stderr_bytes = stderr_.size();
    return out;
}

std::optional<run_record> job::record() const {
    std::lock_guard lock(mutex_);
    return record_;
}

bool job::kill(std::optional<kill_plan> plan) {
    run_handle handle;
    {
        std::lock_guard lock(mutex_);
        if (settled_ || kill_requested_) return false;
        kill_requested_ = true;
        if (!handle_set_) {
            kill_plan_ = std::move(plan);  // the start cancels it as soon as it has a handle
            return true;
        }
        handle = handle_;
    }
    handle.cancel(std::move(plan));
    return true;
}

job_write_result job::write(std::string_view data, bool eof) {
    if (std::this_thread::get_id() == loop_thread_) {
        throw std::logic_error("job::write: called on the supervisor's loop thread");
    }
    std::lock_guard stdin_lock(stdin_mutex_);
    job_write_result out;
    {
        std::lock_guard lock(mutex_);
        if (settled_) {
            stdin_.reset();
            out.error = job_write_failure{job_write_error::ended, "the job has ended"};
            return out;
        }
    }
    if (!stdin_) {
        out.error = job_write_failure{job_write_error::not_open, "the job's stdin is not open"};
        return out;
    }
    const auto deadline = std::chrono::steady_clock::now() + write_patience;
    while (out.written < data.size()) {
        const ssize_t n = write_without_sigpipe(stdin_.get(), data.data() + out.written,
                                                data.size() - out.written);
        if (n >= 0) {
            out.written += static_cast<std::size_t>(n);
            continue;
        }
        if (errno == EINTR) continue;
        if (errno == EPIPE) {
            out.error = job_write_failure{job_write_error::closed_by_command,
                                          "the command closed its stdin"};
            stdin_.reset();
            return out;
        }
        if (errno != EAGAIN) {
            out.error = job_write_failure{
                job_write_error::io,
                std::string("cannot write to the job's stdin: ") + std::strerror(errno)};
            return out;
        }
        const auto left =
            std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            out.error = job_write_failure{job_write_error::not_reading,
                                          "the command did not read its stdin within " +
                                              std::to_string(write_patience.count()) + " ms"};
            return out;
        }
        pollfd ready{stdin_.get(), POLLOUT, 0};
        (void)::poll(&ready, 1, static_cast<int>(left.count()));
    }
    if (eof) stdin_.reset();
    return out;
}

void job::settle(run_record record, const std::function<void()>& retire) {
    job_snapshot out;
    out.id = id_;
    out.owner = owner_;
    out.label = label_;
    out.started_at = started_at_;
    out.finished_at = std::chrono::system_clock::now();
    out.outcome = record.outcome;
    out.sandbox = record.sandbox;
    const std::string& message = record.outcome.message;
    if (!record.outcome.started() && !message.empty()) {
        // A job that never ran says why where its output would be, once.
        const std::string line = "cordon: " + message + "\n";
        stderr_.append(line);
        merged_.append(line);
    }
    merged_.seal();
    stdout_.seal();
    stderr_.seal();
    retire();
    job_snapshot copy;
    {
        std::lock_guard lock(mutex_);
        final_ = out;
        record_ = std::move(record);
        settled_ = true;
        copy = final_;
        // The process tree is done; holding it would keep its buffers, and its strand would
        // outlive the loop it belongs to.
        handle_ = {};
    }
    // A writer waiting on the pipe closes it when it sees the job settled.
    if (std::unique_lock stdin_lock(stdin_mutex_, std::try_to_lock); stdin_lock) stdin_.reset();
    copy.output_bytes = merged_.size();
    copy.stdout_bytes = stdout_.size();
    copy.stderr_bytes = stderr_.size();
    settled_changed_.notify_all();
    promise_.set_value(std::move(copy));
}

// ---- supervisor ---------------------------------------------------------------------------------

// The supervisor's own event loop, on a thread that lives as long as the supervisor: every job is
// spawned there, so that its leader's parent-death signal fires only when the supervisor is gone.
struct supervisor::loop {
    boost::asio::io_context io;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{
        io.get_executor()};
    std::thread thread{[this] { io.run(); }};

    ~loop() {
        work.reset();
        io.stop();
        if (thread.joinable()) thread.join();
    }
};

supervisor::supervisor(std::shared_ptr<sandbox::provider> provider, supervisor_options options)
    : loop_(std::make_unique<loop>()), options_(std::move(options)) {
    executor_options run_options = options_.executor;
    const milliseconds lifetime = options_.max_lifetime.value_or(unbounded);
    run_options.default_timeout = lifetime;
    run_options.max_timeout = lifetime;
    run_options.die_with_spawning_thread = true;
    // The job streams keep the whole output; the record's own spill files would be a second copy.
    run_options.spill = false;
    spill_ = std::make_shared<spill_directory>(run_options.spill_root,
                                               spill_retention::remove_on_destroy);
    // The job streams' files are what read() trusts: no job may write them.
    run_options.protected_paths.push_back(spill_->root() / "cordon-spill-*");
    executor_ =
        std::make_unique<executor>(loop_->io.get_executor(), std::move(provider), run_options);
}

supervisor::~supervisor() {
    shutdown();
    loop_.reset();  // joins the loop thread before the executor it runs is destroyed
}

void supervisor::not_on_the_loop(const char* what) const {
    if (std::this_thread::get_id() == loop_->thread.get_id()) {
        throw std::logic_error(std::string(what) + ": called on the supervisor's loop thread");
    }
}

std::variant<std::shared_ptr<job>, job_refused> supervisor::start(job_request request) {
    not_on_the_loop("supervisor::start");
    check_request(request.run);
    if (request.keep_stdin_open && request.run.stdin_fd) {
        throw std::invalid_argument("job_request: keep_stdin_open makes the stdin pipe itself");
    }
    std::shared_ptr<job> started;
    unique_fd stdin_read;
    {
        std::lock_guard lock(mutex_);
        if (shut_down_) {
            return job_refused{job_refusal::shut_down, "the supervisor has shut down", {}};
        }
        std::vector<std::string> owned;
        for (const auto& running : running_) {
            if (running->owner_ == request.owner) owned.push_back(running->id());
        }
        if (owned.size() >= options_.max_running_per_owner) {
            std::string message = "too many running jobs (" + std::to_string(owned.size()) +
                                  ", the limit is " +
                                  std::to_string(options_.max_running_per_owner) +
                                  "); kill one or wait for one to finish:";
            for (const auto& id : owned)
                message += " " + id;
            return job_refused{job_refusal::too_many, std::move(message), std::move(owned)};
        }
        if (request.keep_stdin_open) {
            int ends[2];
            if (::pipe2(ends, O_CLOEXEC) != 0) {
                return job_refused{
                    job_refusal::no_stdin,
                    std::string("cannot make the job's stdin pipe: ") + std::strerror(errno),
                    {}};
            }
            stdin_read = unique_fd(ends[0]);
            unique_fd write_end(ends[1]);
            (void)::fcntl(write_end.get(), F_SETFL, O_NONBLOCK);
            started = std::make_shared<job>(job::private_tag{}, "job-" + std::to_string(next_id_),
                                            request, options_.memory_bytes_per_stream,
                                            options_.executor.limits.spill_max_bytes, spill_);
            started->stdin_ = std::move(write_end);
        } else {
            started = std::make_shared<job>(job::private_tag{}, "job-" + std::to_string(next_id_),
                                            request, options_.memory_bytes_per_stream,
                                            options_.executor.limits.spill_max_bytes, spill_);
        }
        started->loop_thread_ = loop_->thread.get_id();
        ++next_id_;
        running_.push_back(started);
    }

    std::optional<std::string> first_input;
    if (request.keep_stdin_open) {
        first_input = std::move(request.run.stdin_data);
        request.run.stdin_data.reset();
        request.run.stdin_fd = std::make_shared<const unique_fd>(std::move(stdin_read));
    }
    // Both callbacks run on the run's strand, one at a time: the merged stream keeps the order in
    // which the chunks arrived. The caller's own live-output callbacks still see every chunk.
    std::weak_ptr<job> weak = started;
    request.run.on_stdout = [weak,
                             theirs = std::move(request.run.on_stdout)](std::string_view chunk) {
        if (auto self = weak.lock()) {
            self->merged_.append(chunk);
            self->stdout_.append(chunk);
        }
        if (theirs) theirs(chunk);
    };
    request.run.on_stderr = [weak,
                             theirs = std::move(request.run.on_stderr)](std::string_view chunk) {
        if (auto self = weak.lock()) {
            self->merged_.append(chunk);
            self->stderr_.append(chunk);
        }
        if (theirs) theirs(chunk);
    };
    boost::asio::post(loop_->io, [this, started, run = std::move(request.run)]() mutable {
        auto finish = [this, started](run_record record) {
            started->settle(std::move(record), [this, &started] { retire(started); });
        };
        run_handle handle;
        try {
            handle = executor_->async_run(std::move(run), finish);
        } catch (const std::exception& error) {
            // Nothing ran (the request was checked in start()): the job settles, never hangs.
            run_record record;
            record.outcome.kind = outcome_kind::not_started;
            record.outcome.start_failure =
                classify::spawn_error{classify::spawn_stage::resources, 0};
            record.outcome.message = std::string("cannot start the job: ") + error.what();
            record.sandbox.mode = started->mode_;
            finish(std::move(record));
            return;
        }
        bool cancel = false;
        std::optional<kill_plan> plan;
        {
            std::lock_guard lock(started->mutex_);
            if (!started->settled_) {  // a spawn that failed at once has settled already
                started->handle_ = handle;
                started->handle_set_ = true;
                cancel = started->kill_requested_;
                plan = std::move(started->kill_plan_);
            }
        }
        if (cancel) handle.cancel(std::move(plan));
    });
    if (first_input && !first_input->empty()) {
        const job_write_result written = started->write(*first_input, false);
        if (written.error) {
            spdlog::warn("{}: only {} of {} stdin bytes were written: {}", started->id(),
                         written.written, first_input->size(), written.error->message);
        }
    }
    return started;
}

void supervisor::retire(const std::shared_ptr<job>& finished) {
    std::lock_guard lock(mutex_);
    running_.erase(std::remove(running_.begin(), running_.end(), finished), running_.end());
    history_.push_back(finished);
    if (history_.size() > options_.history) history_.erase(history_.begin());
}

std::shared_ptr<job> supervisor::find(std::string_view id) const {
    std::lock_guard lock(mutex_);
    for (const auto& list : {&running_, &history_}) {
        for (const auto& candidate : *list) {
            if (candidate->id() == id) return candidate;
        }
    }
    return nullptr;
}

std::vector<job_snapshot> supervisor::list() const {
    std::vector<std::shared_ptr<job>> jobs;
    {
        std::lock_guard lock(mutex_);
        jobs = running_;
        jobs.insert(jobs.end(), history_.rbegin(), history_.rend());
    }
    std::vector<job_snapshot> out;
    out.reserve(jobs.size());
    for (const auto& each : jobs)
        out.push_back(each->snapshot());
    return out;
}

void supervisor::shutdown(std::optional<kill_plan> plan) {
    not_on_the_loop("supervisor::shutdown");
    std::vector<std::shared_ptr<job>> running;
    {
        std::lock_guard lock(mutex_);
        shut_down_ = true;
        running = running_;
    }
    for (const auto& each : running)
        each->kill(plan);
    // The kill plan always ends in SIGKILL and a sweep: every wait below ends.
    for (const auto& each : running)
        each->completion().wait();
}

}  // namespace cordon::runtime
