// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// The job: its streams, its cursors, its stdin, kill() and how it settles (jobs.hpp). The
// supervisor that starts and retires jobs is in jobs.cpp.
#include "cordon/jobs.hpp"

#include "cordon/executor.hpp"
#include "runtime/job_stream.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "runtime/sigpipe.hpp"

namespace cordon::runtime {

namespace {

using std::chrono::milliseconds;

// How long job::write() waits for a command that does not read its stdin.
constexpr milliseconds write_patience{5000};

std::string joined(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& arg : argv) {
        if (!out.empty()) out += ' ';
        out += arg;
    }
    return out;
}

}  // namespace

job::job(private_tag, std::string id, const job_request& request, std::size_t memory_bytes,
         std::uint64_t spill_max_bytes, std::shared_ptr<spill_directory> spill)
    : id_(std::move(id)),
      owner_(request.owner),
      label_(request.label.empty() ? joined(request.run.argv) : request.label),
      started_at_(std::chrono::system_clock::now()),
      mode_(request.run.mode),
      merged_(std::make_unique<job_stream>(id_ + "-output", memory_bytes, spill_max_bytes, spill)),
      stdout_(std::make_unique<job_stream>(id_ + "-stdout", memory_bytes, spill_max_bytes, spill)),
      stderr_(std::make_unique<job_stream>(id_ + "-stderr", memory_bytes, spill_max_bytes, spill)),
      completion_(promise_.get_future().share()) {}

job::~job() = default;

const job_stream& job::stream(job_output which) const {
    switch (which) {
        case job_output::stdout_only:
            return *stdout_;
        case job_output::stderr_only:
            return *stderr_;
        case job_output::merged:
            break;
    }
    return *merged_;
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
    out.output_bytes = merged_->size();
    out.stdout_bytes = stdout_->size();
    out.stderr_bytes = stderr_->size();
    return out;
}

std::optional<run_record> job::record() const {
    std::lock_guard lock(mutex_);
    return record_;
}

bool job::kill_requested() const {
    std::lock_guard lock(mutex_);
    return kill_requested_;
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
        stderr_->append(line);
        merged_->append(line);
    }
    merged_->seal();
    stdout_->seal();
    stderr_->seal();
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
    copy.output_bytes = merged_->size();
    copy.stdout_bytes = stdout_->size();
    copy.stderr_bytes = stderr_->size();
    settled_changed_.notify_all();
    promise_.set_value(std::move(copy));
}

}  // namespace cordon::runtime
