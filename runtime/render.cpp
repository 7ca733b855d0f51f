#include "runtime/render.hpp"

namespace cordon::runtime {

namespace {

std::string stream_text(const collected_output& output) {
    std::string text = output.text;
    if (output.truncated) {
        text += "\n[output truncated; full output: ";
        text += output.spill_path ? output.spill_path->string() : "(unavailable)";
        text += "]";
    }
    return text;
}

}  // namespace

std::string render_markers(const run_record& record) {
    std::string out;
    if (record.not_started) out += "[not started: " + record.not_started->message + "]\n";
    if (record.sandbox.denied) {
        out += "[sandbox: file access denied under ";
        out += sandbox::to_string(record.sandbox.mode);
        out += " mode]\n";
    }
    if (record.timed_out)
        out += "[timed out after " + std::to_string(record.timeout.count()) + "ms]\n";
    if (record.signal) {
        out += "[killed by signal: " + signal_name(*record.signal) + "]\n";
    } else if (record.exit_code && *record.exit_code != 0) {
        out += "[exit code: " + std::to_string(*record.exit_code) + "]\n";
    }
    return out;
}

std::string render_output(const run_record& record) {
    std::string body = stream_text(record.stdout_output);
    std::string err = stream_text(record.stderr_output);
    if (!err.empty()) {
        if (!body.empty() && body.back() != '\n') body += '\n';
        body += "[stderr]\n" + err;
    }
    if (body.empty()) body = "(no output)";
    if (body.back() != '\n') body += '\n';
    return body;
}

std::string render(const run_record& record) {
    return render_output(record) + render_markers(record);
}

}  // namespace cordon::runtime
