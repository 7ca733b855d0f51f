#include "classify/classify.hpp"

#include <algorithm>

#include "classify/signature_scanner.hpp"

namespace cordon::classify {

namespace {

bool blank(std::string_view text) {
    return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

// The first line of stderr naming the runner, else the first non-blank line.
std::string runner_line(std::string_view stderr_text, const sandbox::confined_argv& confined) {
    std::string fallback;
    std::size_t start = 0;
    while (start < stderr_text.size()) {
        std::size_t end = stderr_text.find('\n', start);
        if (end == std::string_view::npos) end = stderr_text.size();
        std::string_view line = stderr_text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        std::string lower = ascii_lower(line);
        for (const auto& rule : confined.runner_failure_rules) {
            for (const auto& signature : rule.fatal_signatures) {
                if (!blank(signature) && lower.find(ascii_lower(signature)) != std::string::npos) {
                    return std::string(line);
                }
            }
        }
        if (fallback.empty() && !blank(line)) fallback = std::string(line);
        start = end + 1;
    }
    return fallback;
}

}  // namespace

std::optional<std::string> match_runner_failure(
    std::optional<int> exit_code, std::string_view stderr_text,
    std::span<const sandbox::runner_failure_rule> rules) {
    if (!exit_code || *exit_code == 0) return std::nullopt;
    for (const auto& rule : rules) {
        if (!rule.allowed_exit_codes.empty() &&
            std::find(rule.allowed_exit_codes.begin(), rule.allowed_exit_codes.end(), *exit_code) ==
                rule.allowed_exit_codes.end()) {
            continue;
        }
        std::vector<std::string> informational;
        for (const auto& line : rule.informational_lines)
            informational.push_back(ascii_lower(line));
        std::vector<std::string> fatal;
        for (const auto& signature : rule.fatal_signatures) {
            if (!blank(signature)) fatal.push_back(ascii_lower(signature));
        }
        std::size_t start = 0;
        while (start < stderr_text.size()) {
            std::size_t end = stderr_text.find('\n', start);
            if (end == std::string_view::npos) end = stderr_text.size();
            std::string_view line = stderr_text.substr(start, end - start);
            if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
            start = end + 1;
            std::string lower = ascii_lower(line);
            if (std::find(informational.begin(), informational.end(), lower) !=
                informational.end()) {
                continue;
            }
            for (const auto& signature : fatal) {
                if (lower.find(signature) != std::string::npos) return std::string(line);
            }
        }
    }
    return std::nullopt;
}

bool matches_denial(std::optional<int> exit_code, std::string_view stderr_text,
                    std::span<const std::string> signatures) {
    if (!exit_code || *exit_code == 0) return false;
    signature_scanner scanner(signatures);
    scanner.feed(stderr_text);
    return scanner.matched();
}

verdict classify(const sandbox::confined_argv& confined, const run_evidence& evidence) {
    verdict out;
    switch (evidence.status) {
        case runner_status::runner_failed:
            out.runner_failure = evidence.status_detail.empty()
                                     ? runner_line(evidence.stderr_tail, confined)
                                     : evidence.status_detail;
            if (out.runner_failure->empty()) out.runner_failure = "the sandbox runner failed";
            return out;
        case runner_status::no_proof:
            // The runner exited on its own before proving that the command started. When cordon
            // killed it, the run is a timeout or a cancellation, not a runner failure.
            if (!evidence.killed_by_cordon) {
                std::string line = runner_line(evidence.stderr_tail, confined);
                if (line.empty()) {
                    line = evidence.exit_code
                               ? "the sandbox runner exited with status " +
                                     std::to_string(*evidence.exit_code) +
                                     " before starting the command"
                               : "the sandbox runner was killed before starting the command";
                }
                out.runner_failure = std::move(line);
                return out;
            }
            break;
        case runner_status::no_channel:
            if (!evidence.killed_by_cordon) {
                out.runner_failure = match_runner_failure(evidence.exit_code, evidence.stderr_tail,
                                                          confined.runner_failure_rules);
                if (out.runner_failure) return out;
            }
            break;
        case runner_status::command_started:
            break;
    }
    out.denied = evidence.exit_code.has_value() && *evidence.exit_code != 0 && evidence.denial_seen;
    return out;
}

}  // namespace cordon::classify
