// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// See git_config.hpp. The reader follows git's config.c (v2.51, and its whitespace before 2024)
// step by step; each function names the one it ports. A NUL reads as git reads it: a character
// like any other (in a comment, a value, a quoted subsection), where git's strings then end.
//
// Longer than the ~500 lines a file here stays under: a port of git's config.c reader, kept in
// its order so that it can be compared with it function by function.
#include "sandbox/git_config.hpp"

#include <pwd.h>

#include <algorithm>
#include <array>
#include <vector>

namespace cordon::sandbox::git_config {

namespace {

// git's sane_ctype: ASCII only, whatever the locale. Its spaces are four: a vertical tab and a
// form feed are characters like any other to git (C's isspace() says otherwise).
bool is_space(int c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
bool is_alpha(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_alnum(int c) {
    return is_alpha(c) || (c >= '0' && c <= '9');
}
bool is_key_char(int c) {
    return is_alnum(c) || c == '-';
}
char lower(int c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
}

class reader {
public:
    reader(std::string_view text, whitespace inside) : text_(text), inside_(inside) {}

    std::variant<std::vector<entry>, std::string> parse() {
        // git_parse_source: a UTF-8 byte order mark is skipped, a partial one is an error.
        if (text_.starts_with("\xef\xbb\xbf")) {
            at_ = 3;
        } else if (text_.starts_with("\xef")) {
            return error();
        }
        std::string var;
        std::size_t base_length = 0;
        bool comment = false;
        for (;;) {
            const int c = next();
            if (c == '\n') {
                if (eof_) return std::move(entries_);
                comment = false;
                continue;
            }
            if (comment) continue;
            if (is_space(c)) continue;
            if (c == '#' || c == ';') {
                comment = true;
                continue;
            }
            if (c == '[') {
                var.clear();
                if (!base_var(var) || var.empty()) return error();
                var += '.';
                base_length = var.size();
                continue;
            }
            if (!is_alpha(c)) return error();
            var.resize(base_length);
            var += lower(c);
            if (!value_of(var, last_)) return error();
        }
    }

private:
    // get_next_char: CRLF reads as a newline, the end of the text as one more (with eof_ set).
    int next() {
        last_ = at_;
        int c = at_ < text_.size() ? static_cast<unsigned char>(text_[at_++]) : -1;
        if (c == '\r') {
            if (at_ < text_.size() && text_[at_] == '\n') {
                ++at_;
                c = '\n';
            }
        }
        if (c == '\n') ++line_;
        if (c == -1) {
            eof_ = true;
            ++line_;
            c = '\n';
        }
        return c;
    }

    std::string error() const {
        return "git cannot read line " + std::to_string(std::max<std::size_t>(line_, 1));
    }

    // get_base_var: `[section]`, `[section.sub]` (old style, lower-cased), `[section "sub"]`.
    bool base_var(std::string& name) {
        for (;;) {
            const int c = next();
            if (eof_) return false;
            if (c == ']') return true;
            if (is_space(c)) return extended_base_var(name, c);
            if (!is_key_char(c) && c != '.') return false;
            name += lower(c);
        }
    }

    // get_extended_base_var: the subsection, quoted, as written; `\x` is x.
    bool extended_base_var(std::string& name, int c) {
        do {
            if (c == '\n') return false;
            c = next();
        } while (is_space(c));
        if (c != '"') return false;
        name += '.';
        for (;;) {
            int d = next();
            if (d == '\n') return false;
            if (d == '"') break;
            if (d == '\\') {
                d = next();
                if (d == '\n') return false;
            }
            name += static_cast<char>(d);
        }
        return next() == ']';
    }

    // get_value: the rest of the name, then `= value` or nothing (a name alone is true).
    bool value_of(std::string& name, std::size_t begin) {
        int c = 0;
        for (;;) {
            c = next();
            if (eof_) break;
            if (!is_key_char(c)) break;
            name += lower(c);
        }
        while (c == ' ' || c == '\t')
            c = next();
        std::optional<std::string> value;
        if (c != '\n') {
            if (c != '=') return false;
            value = parse_value();
            if (!value) return false;
        }
        entry out;
        // What git's callbacks are handed: C strings, which end at a NUL.
        // (`name` stays whole: it is the section's stem for the next entry.)
        const std::string var = name.substr(0, name.find('\0'));
        if (value) value->resize(std::min(value->size(), value->find('\0')));
        const std::size_t first_dot = var.find('.');
        const std::size_t last_dot = var.rfind('.');
        if (first_dot == std::string::npos) {
            out.name = var;  // before any section: git passes it on, no callback knows it
        } else {
            out.section = var.substr(0, first_dot);
            out.name = var.substr(last_dot + 1);
            out.has_subsection = first_dot != last_dot;
            if (out.has_subsection) {
                out.subsection = var.substr(first_dot + 1, last_dot - first_dot - 1);
            }
        }
        out.value = std::move(value);
        out.begin = begin;
        out.end = eof_ ? text_.size() : last_;
        entries_.push_back(std::move(out));
        return true;
    }

    // parse_value: quotes, escapes, comments, trailing blanks, continuation lines. Whitespace
    // inside as git keeps it since 2024 (trim_length: where the trailing run began), or as it
    // was before (spaces: as many spaces as it had characters, written out before the next
    // character that is not one; a run at the end never is).
    std::optional<std::string> parse_value() {
        bool quote = false;
        bool comment = false;
        std::size_t trim_length = 0;
        std::size_t spaces = 0;
        std::string value;
        for (;;) {
            int c = next();
            if (c == '\n') {
                if (quote) return std::nullopt;
                if (trim_length != 0) value.resize(trim_length);
                return value;
            }
            if (comment) continue;
            if (is_space(c) && !quote) {
                if (inside_ == whitespace::spaces) {
                    if (!value.empty()) ++spaces;
                    continue;
                }
                if (trim_length == 0) trim_length = value.size();
                if (!value.empty()) value += static_cast<char>(c);
                continue;
            }
            if (!quote && (c == ';' || c == '#')) {
                comment = true;
                continue;
            }
            value.append(spaces, ' ');
            spaces = 0;
            trim_length = 0;
            if (c == '\\') {
                c = next();
                switch (c) {
                    case '\n':
                        continue;
                    case 't':
                        c = '\t';
                        break;
                    case 'b':
                        c = '\b';
                        break;
                    case 'n':
                        c = '\n';
                        break;
                    case '\\':
                    case '"':
                        break;
                    default:
                        return std::nullopt;
                }
                value += static_cast<char>(c);
                continue;
            }
            if (c == '"') {
                quote = !quote;
                continue;
            }
            value += static_cast<char>(c);
        }
    }

    std::string_view text_;
    whitespace inside_;
    std::size_t at_ = 0;
    std::size_t last_ = 0;  // where the character next() returned last began
    std::size_t line_ = 0;
    bool eof_ = false;
    std::vector<entry> entries_;
};

// An inert entry: section, whether it has a subsection, name ("*": any).
struct inert {
    std::string_view section;
    bool subsection;
    std::string_view name;
};

// What a repository's configuration may hold and git still run nothing it names: what git itself
// writes (init, clone, submodule add, worktree add, remote add, branch --set-upstream-to, lfs
// install) and the plain switches people set. Not here either: paths git reads
// (core.excludesFile, core.attributesFile, commit.template, blame.ignoreRevsFile: a command can
// make what they name a FIFO that hangs git, or name a file whose contents end up in a commit),
// what sends the user's pushes elsewhere or deletes on push (remote.*.push, remote.*.mirror),
// core.sharedRepository (files git makes writable by others). Nor, among others: core.fsmonitor,
// core.hooksPath, core.sshCommand, core.pager, core.editor, core.askPass, core.gitProxy, every
// alias (one can carry `-c core.fsmonitor=...`), include and includeIf, credential.*, filter.*,
// diff.<driver>, merge.<driver>, difftool, mergetool, sequence.editor, gpg.program,
// remote.*.uploadpack and .receivepack, init.templateDir (the next `git init` copies hooks from
// it), url.*.insteadOf.
constexpr std::array repository_inert = {
    inert{"core", false, "repositoryformatversion"},
    inert{"core", false, "filemode"},
    inert{"core", false, "bare"},
    inert{"core", false, "logallrefupdates"},
    inert{"core", false, "ignorecase"},
    inert{"core", false, "precomposeunicode"},
    inert{"core", false, "symlinks"},
    inert{"core", false, "worktree"},
    inert{"core", false, "autocrlf"},
    inert{"core", false, "eol"},
    inert{"core", false, "safecrlf"},
    inert{"core", false, "sparsecheckout"},
    inert{"core", false, "sparsecheckoutcone"},
    inert{"core", false, "untrackedcache"},
    inert{"core", false, "splitindex"},
    inert{"core", false, "commitgraph"},
    inert{"core", false, "multipackindex"},
    inert{"core", false, "compression"},
    inert{"core", false, "loosecompression"},
    inert{"core", false, "bigfilethreshold"},
    inert{"core", false, "abbrev"},
    inert{"core", false, "quotepath"},
    inert{"core", false, "checkstat"},
    inert{"core", false, "trustctime"},
    inert{"core", false, "preloadindex"},
    inert{"core", false, "protectntfs"},
    inert{"core", false, "protecthfs"},
    inert{"core", false, "warnambiguousrefs"},
    inert{"core", false, "whitespace"},
    inert{"core", false, "longpaths"},
    inert{"extensions", false, "*"},
    inert{"user", false, "name"},
    inert{"user", false, "email"},
    inert{"user", false, "signingkey"},
    inert{"user", false, "useconfigonly"},
    inert{"author", false, "name"},
    inert{"author", false, "email"},
    inert{"committer", false, "name"},
    inert{"committer", false, "email"},
    inert{"init", false, "defaultbranch"},
    inert{"pull", false, "rebase"},
    inert{"pull", false, "ff"},
    inert{"push", false, "default"},
    inert{"push", false, "autosetupremote"},
    inert{"push", false, "followtags"},
    inert{"fetch", false, "prune"},
    inert{"fetch", false, "prunetags"},
    inert{"fetch", false, "recursesubmodules"},
    inert{"fetch", false, "writecommitgraph"},
    inert{"fetch", false, "parallel"},
    inert{"fetch", false, "fsckobjects"},
    inert{"merge", false, "ff"},
    inert{"merge", false, "conflictstyle"},
    inert{"merge", false, "renames"},
    inert{"merge", false, "renamelimit"},
    inert{"merge", false, "log"},
    inert{"merge", false, "stat"},
    inert{"merge", false, "autostash"},
    inert{"rebase", false, "autostash"},
    inert{"rebase", false, "autosquash"},
    inert{"rebase", false, "updaterefs"},
    inert{"rebase", false, "stat"},
    inert{"rebase", false, "missingcommitscheck"},
    inert{"diff", false, "algorithm"},
    inert{"diff", false, "renames"},
    inert{"diff", false, "renamelimit"},
    inert{"diff", false, "noprefix"},
    inert{"diff", false, "mnemonicprefix"},
    inert{"diff", false, "context"},
    inert{"diff", false, "interhunkcontext"},
    inert{"diff", false, "indentheuristic"},
    inert{"diff", false, "colormoved"},
    inert{"diff", false, "submodule"},
    inert{"diff", false, "ignoresubmodules"},
    inert{"diff", false, "relative"},
    inert{"status", false, "showuntrackedfiles"},
    inert{"status", false, "submodulesummary"},
    inert{"status", false, "short"},
    inert{"status", false, "branch"},
    inert{"status", false, "relativepaths"},
    inert{"status", false, "aheadbehind"},
    inert{"status", false, "showstash"},
    inert{"log", false, "date"},
    inert{"log", false, "decorate"},
    inert{"log", false, "follow"},
    inert{"log", false, "abbrevcommit"},
    inert{"log", false, "mailmap"},
    inert{"color", false, "*"},
    inert{"color", true, "*"},
    inert{"advice", false, "*"},
    inert{"column", false, "*"},
    inert{"i18n", false, "commitencoding"},
    inert{"i18n", false, "logoutputencoding"},
    inert{"gc", false, "auto"},
    inert{"gc", false, "autodetach"},
    inert{"gc", false, "autopacklimit"},
    inert{"gc", false, "reflogexpire"},
    inert{"gc", false, "reflogexpireunreachable"},
    inert{"gc", false, "pruneexpire"},
    inert{"gc", false, "writecommitgraph"},
    inert{"gc", true, "reflogexpire"},
    inert{"gc", true, "reflogexpireunreachable"},
    inert{"index", false, "version"},
    inert{"index", false, "threads"},
    inert{"index", false, "skiphash"},
    inert{"index", false, "sparse"},
    inert{"feature", false, "manyfiles"},
    inert{"pack", false, "threads"},
    inert{"pack", false, "compression"},
    inert{"rerere", false, "enabled"},
    inert{"rerere", false, "autoupdate"},
    inert{"commit", false, "gpgsign"},
    inert{"commit", false, "verbose"},
    inert{"commit", false, "cleanup"},
    inert{"commit", false, "status"},
    inert{"tag", false, "gpgsign"},
    inert{"tag", false, "sort"},
    inert{"blame", false, "date"},
    inert{"grep", false, "linenumber"},
    inert{"grep", false, "patterntype"},
    inert{"grep", false, "extendedregexp"},
    inert{"lfs", false, "repositoryformatversion"},
    inert{"lfs", false, "url"},
    inert{"lfs", false, "pushurl"},
    inert{"lfs", false, "locksverify"},
    inert{"lfs", true, "access"},
    inert{"lfs", true, "locksverify"},
    inert{"worktree", false, "guessremote"},
    inert{"submodule", false, "recurse"},
    inert{"submodule", false, "active"},
    inert{"submodule", false, "fetchjobs"},
    inert{"submodule", false, "propagatebranches"},
    inert{"remote", true, "url"},
    inert{"remote", true, "pushurl"},
    inert{"remote", true, "fetch"},
    inert{"remote", true, "skipdefaultupdate"},
    inert{"remote", true, "skipfetchall"},
    inert{"remote", true, "tagopt"},
    inert{"remote", true, "prune"},
    inert{"remote", true, "prunetags"},
    inert{"remote", true, "promisor"},
    inert{"remote", true, "partialclonefilter"},
    inert{"remote", true, "followremotehead"},
    inert{"branch", true, "remote"},
    inert{"branch", true, "merge"},
    inert{"branch", true, "rebase"},
    inert{"branch", true, "pushremote"},
    inert{"branch", true, "description"},
    inert{"submodule", true, "url"},
    inert{"submodule", true, "active"},
    inert{"submodule", true, "branch"},
    inert{"submodule", true, "update"},
    inert{"submodule", true, "fetchrecursesubmodules"},
    inert{"submodule", true, "ignore"},
    inert{"submodule", true, "path"},
};

// What `git lfs install` writes, at exactly the values it writes them: the filter runs git-lfs,
// which is the user's own program. Any other value is a program a command chose.
struct exact {
    std::string_view key;
    std::string_view value;
};
constexpr std::array repository_exact = {
    exact{"filter.lfs.clean", "git-lfs clean -- %f"},
    exact{"filter.lfs.smudge", "git-lfs smudge -- %f"},
    exact{"filter.lfs.smudge", "git-lfs smudge --skip -- %f"},
    exact{"filter.lfs.process", "git-lfs filter-process"},
    exact{"filter.lfs.process", "git-lfs filter-process --skip"},
    exact{"filter.lfs.required", "true"},
};

// `.gitmodules`: what git reads of it (gitmodules(5)).
constexpr std::array gitmodules_inert = {
    inert{"submodule", true, "path"},    inert{"submodule", true, "url"},
    inert{"submodule", true, "branch"},  inert{"submodule", true, "update"},
    inert{"submodule", true, "ignore"},  inert{"submodule", true, "fetchrecursesubmodules"},
    inert{"submodule", true, "shallow"},
};

template <std::size_t N>
bool listed(const std::array<inert, N>& list, const entry& e) {
    return std::any_of(list.begin(), list.end(), [&e](const inert& i) {
        return i.section == e.section && i.subsection == e.has_subsection &&
               (i.name == "*" || i.name == e.name);
    });
}

}  // namespace

std::string entry::key() const {
    std::string out = section;
    if (has_subsection) out += "." + subsection;
    if (!out.empty()) out += ".";
    return out + name;
}

std::variant<std::vector<entry>, std::string> parse(std::string_view text, whitespace inside) {
    return reader(text, inside).parse();
}

std::optional<std::string> gitfile_target(std::string_view text) {
    if (text.size() > gitfile_limit || !text.starts_with("gitdir: ")) return std::nullopt;
    // Its trailing line ends, then the C string from the eighth byte.
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
        text.remove_suffix(1);
    if (text.size() < 9) return std::nullopt;
    text.remove_prefix(8);
    return std::string(text.substr(0, text.find('\0')));
}

std::string commondir_target(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
        text.remove_suffix(1);
    return std::string(text.substr(0, text.find('\0')));
}

std::vector<std::string> expanded_paths(std::string_view value, std::string_view home) {
    value = value.substr(0, value.find('\0'));
    if (value.starts_with("%(prefix)/")) {
        // git 2.32 and later: under the prefix git was built with (the distribution's /usr, a
        // build of one's own under /usr/local or $HOME/.local); before, a relative path.
        std::vector<std::string> out{std::string(value)};
        const std::string_view rest = value.substr(10);
        for (const std::string_view prefix : {"/usr/", "/usr/local/"})
            out.push_back(std::string(prefix) + std::string(rest));
        if (!home.empty()) out.push_back(std::string(home) + "/.local/" + std::string(rest));
        return out;
    }
    if (!value.starts_with("~")) return {std::string(value)};
    const std::size_t slash = std::min(value.find('/'), value.size());
    const std::string user(value.substr(1, slash - 1));
    std::string base;
    if (user.empty()) {
        if (home.empty()) return {};
        base = home;
    } else {
        // getpwnam_r: the planner may run beside other threads.
        struct passwd pw {};
        struct passwd* found = nullptr;
        std::vector<char> buffer(16384);
        if (::getpwnam_r(user.c_str(), &pw, buffer.data(), buffer.size(), &found) != 0 ||
            found == nullptr || found->pw_dir == nullptr) {
            return {};
        }
        base = found->pw_dir;
    }
    return {base + std::string(value.substr(slash))};
}

std::optional<std::string> offence(const entry& e, file_kind kind) {
    const bool known = kind == file_kind::repository
                           ? listed(repository_inert, e) ||
                                 std::any_of(repository_exact.begin(), repository_exact.end(),
                                             [&e](const exact& x) {
                                                 return e.value == x.value && e.key() == x.key;
                                             })
                           : listed(gitmodules_inert, e);
    if (!known) return e.key() + " is not known to be inert";
    // `update = !command` runs the command on `git submodule update` (git ignores it in
    // .gitmodules since 2.24, but not in a repository's configuration).
    if (e.section == "submodule" && e.name == "update" && e.value &&
        e.value->find_first_not_of(" \t") != std::string::npos &&
        (*e.value)[e.value->find_first_not_of(" \t")] == '!') {
        return e.key() + " runs a command";
    }
    return std::nullopt;
}

std::string without(std::string_view text, std::span<const entry> drop) {
    std::vector<std::pair<std::size_t, std::size_t>> ranges;
    ranges.reserve(drop.size());
    for (const entry& e : drop)
        ranges.emplace_back(std::min(e.begin, text.size()), std::min(e.end, text.size()));
    std::sort(ranges.begin(), ranges.end());
    std::string out;
    out.reserve(text.size());
    std::size_t at = 0;
    for (const auto& [begin, end] : ranges) {
        if (begin > at) out.append(text.substr(at, begin - at));
        at = std::max(at, end);
    }
    if (at < text.size()) out.append(text.substr(at));
    return out;
}

}  // namespace cordon::sandbox::git_config
