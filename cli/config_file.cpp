// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Longer than the ~500 lines a file here stays under: every configuration key's parsing and
// checks, one table-like function per kind of value, beside the owner and mode checks of the
// files they come from.
#include "cli/config_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <utility>

#include "cli/options.hpp"
#include "cli/toml_hazard.hpp"
#include "cordon/environment.hpp"
#include "cordon/policy.hpp"
#include "cordon/unique_fd.hpp"
#include "policy/display.hpp"
#include "sandbox/identity.hpp"

namespace cordon::cli {

namespace fs = std::filesystem;

namespace {

// A value of a file's key, checked: nullopt and `error` set when it is bad.
struct key_context {
    const fs::path& file;
    const toml::node& node;
    std::string name;  // "mode", or "profile.ci.mode"
    origin from;

    [[nodiscard]] std::string fail(std::string_view why) const {
        return file.string() + ":" + std::to_string(node.source().begin.line) + ": " + name + ": " +
               std::string(why);
    }
};

std::string_view type_name(const toml::node& node) {
    switch (node.type()) {
        case toml::node_type::none:
            return "nothing";
        case toml::node_type::table:
            return "a table";
        case toml::node_type::array:
            return "an array";
        case toml::node_type::string:
            return "a string";
        case toml::node_type::integer:
            return "an integer";
        case toml::node_type::floating_point:
            return "a floating-point number";
        case toml::node_type::boolean:
            return "a boolean";
        case toml::node_type::date:
            return "a date";
        case toml::node_type::time:
            return "a time";
        case toml::node_type::date_time:
            return "a date-time";
    }
    return "a value";
}

// One of an enumeration's names, exactly as the flag takes it.
template <typename Enum>
std::variant<Enum, std::string> choice(const key_context& key,
                                       std::optional<Enum> (*parse)(std::string_view) noexcept,
                                       std::string (*unknown)(const std::string&)) {
    const auto* text = key.node.as_string();
    if (text == nullptr) {
        return key.fail("expected a string, not " + std::string(type_name(key.node)));
    }
    const std::optional<Enum> value = parse(text->get());
    if (!value || to_string(*value) != text->get()) return key.fail(unknown(text->get()));
    return *value;
}

// A string, or an integer (as the flag's bare number), run through the flag's own validator: the
// same words, units and bounds as on the command line.
std::variant<std::uint64_t, std::string> through(const key_context& key,
                                                 const CLI::Validator& validator,
                                                 std::string_view expected) {
    std::string text;
    if (const auto* string = key.node.as_string()) {
        text = string->get();
    } else if (const auto* integer = key.node.as_integer()) {
        text = std::to_string(integer->get());
    } else {
        return key.fail("expected " + std::string(expected) + ", not " +
                        std::string(type_name(key.node)));
    }
    const std::string given = text;
    try {
        const std::string failed = validator(text);
        if (!failed.empty()) return key.fail("invalid value \"" + given + "\" " + failed);
    } catch (const bad_option_value&) {
        return key.fail("invalid value \"" + given + "\" (expected " + std::string(expected) + ")");
    }
    return std::stoull(text);
}

// An array of strings.
std::variant<std::vector<std::string>, std::string> strings(const key_context& key) {
    const auto* array = key.node.as_array();
    if (array == nullptr) {
        return key.fail("expected an array of strings, not " + std::string(type_name(key.node)));
    }
    std::vector<std::string> out;
    for (const toml::node& item : *array) {
        const auto* text = item.as_string();
        if (text == nullptr) {
            return key.fail("expected an array of strings, not one holding " +
                            std::string(type_name(item)));
        }
        out.push_back(text->get());
    }
    return out;
}

// An array of absolute paths; "~/" (or "~") stands for the invoking user's home, so that one
// file in /etc can name every user's own files.
std::variant<std::vector<std::string>, std::string> paths(const key_context& key) {
    auto list = strings(key);
    if (auto* error = std::get_if<std::string>(&list)) return *error;
    for (std::string& each : std::get<0>(list)) {
        // A NUL ("\u0000" in TOML) would end the path at every system call, silently.
        if (each.find('\0') != std::string::npos) return key.fail("a path holds a NUL byte");
        if (each == "~" || each.starts_with("~/")) {
            each = (sandbox::invoking_home() / each.substr(std::min<std::size_t>(each.size(), 2)))
                       .lexically_normal()
                       .string();
        } else if (each.empty() || each.front() != '/') {
            return key.fail("\"" + each + "\" is not an absolute path (nor one under ~/)");
        }
    }
    return list;
}

// An array of protected names (sandbox::bad_protected_name); `all` may be one of them.
std::variant<std::vector<std::string>, std::string> names(const key_context& key,
                                                          bool all_allowed) {
    auto list = strings(key);
    if (auto* error = std::get_if<std::string>(&list)) return *error;
    for (const std::string& each : std::get<0>(list)) {
        if (all_allowed && each == "all") continue;
        if (auto bad = sandbox::bad_protected_name(each)) return key.fail(*bad);
    }
    return list;
}

value_rule config_rule() {
    return value_rule{"", [](const std::string&) { return std::string(); }, false};
}

// A TOML value as JSON, for the parts of the configuration whose reader takes JSON (approval
// rules). Dates and times, which no such part takes, become null.
nlohmann::json json_of(const toml::node& node) {
    if (const auto* table = node.as_table()) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [name, value] : *table)
            out[std::string(name.str())] = json_of(value);
        return out;
    }
    if (const auto* array = node.as_array()) {
        nlohmann::json out = nlohmann::json::array();
        for (const toml::node& value : *array)
            out.push_back(json_of(value));
        return out;
    }
    if (const auto* text = node.as_string()) return text->get();
    if (const auto* integer = node.as_integer()) return integer->get();
    if (const auto* number = node.as_floating_point()) return number->get();
    if (const auto* flag = node.as_boolean()) return flag->get();
    return nullptr;  // a date or a time: no rule field takes one, and null is what none takes
}

std::optional<std::string> apply_key(const key_context& key, config_values& out) {
    const auto set = [&key](auto& slot, auto parsed) -> std::optional<std::string> {
        if (auto* error = std::get_if<std::string>(&parsed)) return *error;
        using value_type = typename std::decay_t<decltype(slot)>::value_type;
        slot = value_type{decltype(value_type::value)(std::get<0>(parsed)), key.from};
        return std::nullopt;
    };
    const std::string name = key.name.substr(key.name.rfind('.') + 1);
    constexpr std::string_view duration = "a duration such as \"30s\" or \"2m\", or seconds";
    if (name == "mode")
        return set(out.mode, choice(key, sandbox::parse_sandbox_mode, unknown_mode));
    if (name == "backend") {
        return set(out.backend, choice(key, sandbox::parse_backend_choice, unknown_backend));
    }
    if (name == "approval") {
        return set(out.approval, choice(key, policy::parse_approval_policy, unknown_approval));
    }
    if (name == "identity_range") {
        // Above the ids of system and login accounts: a range that reached them would make a
        // confined command one of them.
        const auto* text = key.node.as_string();
        const auto range =
            text != nullptr ? sandbox::parse_identity_range(text->get()) : std::nullopt;
        if (!range || (range->count > 0 && range->first < sandbox::lowest_identity)) {
            return key.fail("expected \"FIRST:COUNT\" with FIRST at least " +
                            std::to_string(sandbox::lowest_identity) +
                            " and FIRST + COUNT at most 2147483648 (COUNT 0: commands run as "
                            "root)");
        }
        out.identity_range = sourced<sandbox::identity_range>{*range, key.from};
        return std::nullopt;
    }
    if (name == "timeout" || name == "approval_timeout") {
        const auto most = name == "timeout" ? std::chrono::milliseconds(most_timeout)
                                            : std::chrono::milliseconds::max();
        auto parsed = through(
            key, duration_value(config_rule(), most),
            name == "timeout" ? std::string(duration) + ", at most 10m" : std::string(duration));
        if (auto* error = std::get_if<std::string>(&parsed)) return *error;
        auto& slot = name == "timeout" ? out.timeout : out.approval_timeout;
        slot = sourced<std::chrono::milliseconds>{
            std::chrono::milliseconds(static_cast<std::int64_t>(std::get<std::uint64_t>(parsed))),
            key.from};
        return std::nullopt;
    }
    if (name == "max_output") {
        return set(out.max_output,
                   through(key, size_value(config_rule(), 1, most_output, false),
                           "a size from 1 to 16M bytes, such as 64000 or \"512K\""));
    }
    if (name == "max_processes") {
        return set(out.max_processes, through(key, count_value(config_rule(), most_processes, true),
                                              "a count from 1 to 4194304, or \"unlimited\""));
    }
    if (name == "max_memory") {
        return set(out.max_memory,
                   through(key,
                           size_value(config_rule(), least_memory,
                                      std::numeric_limits<std::uint64_t>::max(), true),
                           "a size of at least 4M such as \"512M\", or \"unlimited\""));
    }
    const auto list = [](std::vector<std::string>& slot,
                         std::variant<std::vector<std::string>, std::string> parsed)
        -> std::optional<std::string> {
        if (auto* error = std::get_if<std::string>(&parsed)) return *error;
        slot = std::get<0>(std::move(parsed));
        return std::nullopt;
    };
    if (name == "writable_roots") return list(out.paths.writable_roots, paths(key));
    if (name == "read_only") return list(out.paths.read_only, paths(key));
    if (name == "deny_read") return list(out.paths.deny_read, paths(key));
    if (name == "allow_read") return list(out.paths.allow_read, paths(key));
    if (name == "protect") return list(out.paths.protect, names(key, false));
    if (name == "unprotect") return list(out.paths.unprotect, names(key, true));
    if (name == "tmp") {
        const auto* text = key.node.as_string();
        if (text == nullptr) {
            return key.fail("expected a string, not " + std::string(type_name(key.node)));
        }
        if (!sandbox::parse_tmp_policy(text->get())) {
            return key.fail("invalid tmp \"" + text->get() + "\" (private, host or none)");
        }
        out.paths.tmp = text->get();
        return std::nullopt;
    }
    if (name == "env_clear") {
        const auto* flag = key.node.as_boolean();
        if (flag == nullptr) {
            return key.fail("expected true or false, not " + std::string(type_name(key.node)));
        }
        out.env_clear = sourced<bool>{flag->get(), key.from};
        return std::nullopt;
    }
    if (name == "env_keep" || name == "env_unset") {
        auto given = strings(key);
        if (auto* error = std::get_if<std::string>(&given)) return *error;
        auto& slot = name == "env_keep" ? out.env_keep : out.env_unset;
        for (const std::string& each : std::get<0>(given)) {
            if (!runtime::is_name_pattern(each)) {
                return key.fail("invalid name \"" + each +
                                "\" (expected a NAME, or a glob of letters, digits, _, * and ?)");
            }
            slot.push_back({each, key.from});
        }
        return std::nullopt;
    }
    if (name == "network") {
        const auto* text = key.node.as_string();
        if (text == nullptr) {
            return key.fail("expected a string, not " + std::string(type_name(key.node)));
        }
        if (!sandbox::parse_network_policy(text->get())) {
            return key.fail("invalid network \"" + text->get() + "\" (deny, proxy or allow)");
        }
        out.paths.network = text->get();
        return std::nullopt;
    }
    if (name == "allow_unix_sockets") return list(out.paths.allow_unix_sockets, paths(key));
    if (name == "allowed_domains" || name == "denied_domains") {
        auto given = strings(key);
        if (auto* error = std::get_if<std::string>(&given)) return *error;
        auto& slot =
            name == "allowed_domains" ? out.paths.allowed_domains : out.paths.denied_domains;
        for (const std::string& each : std::get<0>(given)) {
            auto domain = canonical_domain(each);
            if (auto* bad = std::get_if<domain_error>(&domain)) {
                return key.fail("invalid domain \"" + each + "\": " + bad->reason);
            }
            slot.push_back(std::get<std::string>(std::move(domain)));
        }
        return std::nullopt;
    }
    if (name == "proxy_resolve") {
        // A table: a later layer's entry for a name replaces the one below (path_options.hpp).
        const auto* table = key.node.as_table();
        if (table == nullptr) {
            return key.fail("expected a table of names and addresses, not " +
                            std::string(type_name(key.node)));
        }
        for (const auto& [host, address] : *table) {
            const auto* text = address.as_string();
            if (text == nullptr) {
                return key.fail("expected an address for \"" + std::string(host.str()) +
                                "\", not " + std::string(type_name(address)));
            }
            auto mapping = host_mapping_of(host.str(), text->get());
            if (auto* error = std::get_if<std::string>(&mapping)) return key.fail(*error);
            const auto& mapped = std::get<sandbox::host_mapping>(mapping);
            out.paths.proxy_resolve.push_back(mapped.name + "=" + mapped.address);
        }
        return std::nullopt;
    }
    if (name == "approval_rule") {
        // [[approval_rule]] tables, each a rule checked against its own examples as it loads.
        const auto* rules = key.node.as_array();
        if (rules == nullptr || !rules->is_array_of_tables()) {
            return key.fail("expected [[" + key.name + "]] tables, not " +
                            std::string(type_name(key.node)));
        }
        for (const toml::node& each : *rules) {
            auto rule = policy::parse_rule(json_of(each));
            if (auto* error = std::get_if<std::string>(&rule)) {
                return key_context{key.file, each, key.name, key.from}.fail(*error);
            }
            out.approval_rules.push_back(
                {std::get<policy::command_rule>(std::move(rule)), key.from});
        }
        return std::nullopt;
    }
    if (name == "accept_partial" || name == "allow_local_binding") {
        const auto* flag = key.node.as_boolean();
        if (flag == nullptr) {
            return key.fail("expected true or false, not " + std::string(type_name(key.node)));
        }
        (name == "accept_partial" ? out.accept_partial : out.allow_local_binding) = flag->get();
        return std::nullopt;
    }
    std::string known;
    for (std::string_view each : config_keys()) {
        known += (known.empty() ? "" : ", ") + std::string(each);
    }
    return key.fail("unknown key (expected " + known + ", or [profile.NAME] tables)");
}

// Every key of one table (the top level, without "profile", or one profile's).
std::optional<std::string> apply_table(const fs::path& file, const toml::table& table,
                                       const std::string& prefix, const origin& from,
                                       config_values& out) {
    for (const auto& [name, node] : table) {
        if (prefix.empty() && name.str() == "profile") continue;
        if (auto error = apply_key({file, node, prefix + std::string(name.str()), from}, out)) {
            return error;
        }
    }
    return std::nullopt;
}

// Why a file (or its directory) with this status could be changed by someone else, or "".
std::string writable_by_others(const struct stat& st) {
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        return (st.st_mode & S_IWOTH) != 0 ? "is writable by every user"
                                           : "is writable by its group";
    }
    if (st.st_uid != 0 && st.st_uid != ::geteuid()) {
        return "is owned by another user (uid " + std::to_string(st.st_uid) + ")";
    }
    return "";
}

// The text of `file` (canonical; `link` is the path it was named by), read through one descriptor
// whose owner and mode were checked, with its directory's; or why it cannot be used.
std::variant<std::string, std::string> read_checked(const fs::path& file, const fs::path& link) {
    const auto failed = [&file](std::string_view what) {
        return std::variant<std::string, std::string>(
            std::in_place_index<1>,
            "cannot " + std::string(what) + " " + file.string() + ": " + std::strerror(errno));
    };
    const auto refused = [&file](const fs::path& what, const std::string& why) {
        return std::variant<std::string, std::string>(
            std::in_place_index<1>,
            "refusing the configuration file " + file.string() + ": " +
                (what == file ? std::string("it") : "its directory " + what.string()) + " " + why +
                ", and whoever can change it sets the sandbox's defaults");
    };
    // The directory of the file, and that of the symlink naming it, if one does: whoever can
    // write either can put another file in its place.
    for (const fs::path& directory : {file.parent_path(), link.parent_path()}) {
        struct stat dir {};
        if (::stat(directory.c_str(), &dir) != 0) return failed("check the directory of");
        if (auto why = writable_by_others(dir); !why.empty()) return refused(directory, why);
    }
    unique_fd fd(::open(file.c_str(), O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
    if (!fd) return failed("open");
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return failed("check");
    if (!S_ISREG(st.st_mode)) {
        return std::variant<std::string, std::string>(
            std::in_place_index<1>, "the configuration file " + file.string() + " is not a file");
    }
    if (auto why = writable_by_others(st); !why.empty()) return refused(file, why);
    std::string text;
    char block[8192];
    for (;;) {
        const ssize_t got = ::read(fd.get(), block, sizeof block);
        if (got > 0) {
            text.append(block, static_cast<std::size_t>(got));
        } else if (got == 0) {
            break;
        } else if (errno != EINTR) {
            return failed("read");
        }
    }
    return std::variant<std::string, std::string>(std::in_place_index<0>, std::move(text));
}

}  // namespace

std::vector<fs::path> config_candidates() {
    std::vector<fs::path> out;
    if (const char* dirs = std::getenv("CORDON_CONFIG_DIRS")) {
        std::string_view rest(dirs);
        while (!rest.empty()) {
            const auto colon = rest.find(':');
            const std::string_view dir = rest.substr(0, colon);
            if (!dir.empty()) out.push_back(fs::path(dir) / "config.toml");
            rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
        }
        return out;
    }
    out.emplace_back("/etc/cordon/config.toml");
    // The XDG base directory specification ignores a relative XDG_CONFIG_HOME.
    const char* xdg = std::getenv("XDG_CONFIG_HOME");
    const char* home = std::getenv("HOME");
    if (xdg != nullptr && xdg[0] == '/') {
        out.push_back(fs::path(xdg) / "cordon" / "config.toml");
    } else if (home != nullptr && home[0] == '/') {
        out.push_back(fs::path(home) / ".config" / "cordon" / "config.toml");
    }
    return out;
}

std::variant<loaded_config, std::string> load_config(const std::string& profile) {
    loaded_config out;
    out.profile = profile;
    out.looked_in = config_candidates();
    // Each file's profiles, in file order: a later file's profile overrides an earlier one's per
    // key, and every profile ranks above every file's top level.
    std::map<std::string, std::vector<std::pair<config_values, origin>>> profiles;
    // Every file's top level, in file order, then the selected profile's tables.
    std::vector<std::pair<config_values, origin>> layers;
    for (const fs::path& candidate : out.looked_in) {
        std::error_code ec;
        const fs::path file = fs::canonical(candidate, ec);
        if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) {
            continue;
        }
        if (ec)
            return "cannot use the configuration file " + candidate.string() + ": " + ec.message();
        // The name as a run would reach it (its directory's symlinks resolved): itself a
        // symlink, it is another path a run must not be able to write.
        const fs::path link =
            sandbox::canonical_path(fs::absolute(candidate).parent_path()) / candidate.filename();
        auto text = read_checked(file, link);
        if (text.index() == 1) return std::get<1>(std::move(text));
        if (const auto refused = toml_hazard_in(std::get<0>(text))) {
            return file.string() + ":" + std::to_string(refused->line) + ": " +
                   std::string(refused->why);
        }
        toml::table table;
        try {
            table = toml::parse(std::get<0>(text), file.string());
        } catch (const toml::parse_error& error) {
            return file.string() + ":" + std::to_string(error.source().begin.line) + ": " +
                   std::string(error.description());
        }
        out.files.push_back(file);
        if (link != file) out.links.push_back(link);
        config_values top;
        if (auto error = apply_table(file, table, "", {origin::kind::file, file, ""}, top)) {
            return *error;
        }
        layers.emplace_back(std::move(top), origin{origin::kind::file, file, ""});
        const toml::node* named = table.get("profile");
        if (named == nullptr) continue;
        const toml::table* all = named->as_table();
        if (all == nullptr) {
            return key_context{file, *named, "profile", {}}.fail(
                "expected [profile.NAME] tables, not " + std::string(type_name(*named)));
        }
        for (const auto& [name, node] : *all) {
            const std::string key = "profile." + std::string(name.str());
            const toml::table* one = node.as_table();
            if (one == nullptr) {
                return key_context{file, node, key, {}}.fail(
                    "expected a table [" + key + "], not " + std::string(type_name(node)));
            }
            config_values values;
            const origin from{origin::kind::profile, file, std::string(name.str())};
            if (auto error = apply_table(file, *one, key + ".", from, values)) return *error;
            profiles[std::string(name.str())].emplace_back(std::move(values), from);
        }
    }
    if (!profile.empty()) {
        const auto found = profiles.find(profile);
        if (found == profiles.end()) {
            std::string where;
            for (const auto& file : out.files) {
                where += (where.empty() ? "" : ", ") + file.string();
            }
            return "unknown profile \"" + profile + "\": " +
                   (where.empty() ? "no configuration file exists"
                                  : "no [profile." + profile + "] in " + where);
        }
        layers.insert(layers.end(), found->second.begin(), found->second.end());
    }
    for (const auto& [values, from] : layers) {
        overlay(out.values, values);
        if (auto error = apply_rules(out.rules, values.paths, values.accept_partial, from,
                                     values.allow_local_binding)) {
            return *error;
        }
    }
    // A rule's name is what the record and the log say decided: one name, one rule.
    const auto& rules = out.values.approval_rules;
    for (std::size_t i = 0; i < rules.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (rules[j].value.name == rules[i].value.name) {
                return "approval rule \"" + policy::shown_safely(rules[i].value.name) +
                       "\" is defined twice (" + rules[j].from.text() + ", " +
                       rules[i].from.text() + "): the record could not say which decided";
            }
        }
    }
    return out;
}

}  // namespace cordon::cli
