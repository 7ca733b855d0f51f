// cordon-test-child: the real process the suites spawn (STYLE.md rule 11). One subcommand per
// behaviour a test needs; it prints what it is asked to and exits as told.
//
//   exit N                  exit with status N
//   sleep MS                sleep, then exit 0
//   ignore-term MS          ignore SIGTERM, print "ready", sleep
//   spawn-grandchild MS     fork a child that keeps stdout/stderr open and sleeps MS; exit 0
//   grandchild-pidfile PIDFILE MS
//                           as spawn-grandchild (same process group, pipes kept open), but the
//                           grandchild writes its pid to PIDFILE first, so a test can find it
//   daemonize PIDFILE MS    double-fork + setsid, write the daemon's pid to PIDFILE, daemon sleeps
//   setsid-child PIDFILE MS fork a child that calls setsid(), writes its pid, sleeps
//   write PATH TEXT         write TEXT to PATH (exit 1 with strerror on failure)
//   print-env               print the environment, one NAME=value per line
//   list-fds                print the open fd numbers, one per line
//   cat                     copy stdin to stdout
//   bytes N [CHAR]          write N bytes of CHAR (default 'x') to stdout
//   stderr-bytes N TEXT     write TEXT to stderr, then N bytes of filler to stderr
//   kill-self SIG           raise signal SIG
//   setxattr PATH NAME VAL  set an extended attribute (exit 1 with strerror on failure)
//   setflags PATH           chattr +A through ioctl(FS_IOC_SETFLAGS) on a read-only fd
//   io-uring                create an io_uring instance (exit 1 with strerror on failure)
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <linux/fs.h>
#include <linux/io_uring.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace {

void sleep_ms(long ms) {
    timespec ts{ms / 1000, (ms % 1000) * 1'000'000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

bool write_text(const char* path, const std::string& text) {
    int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return false;
    bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
}

int usage() {
    std::fprintf(stderr, "cordon-test-child: bad arguments\n");
    return 64;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    std::string cmd = argv[1];
    auto arg = [&](int i) -> const char* { return i < argc ? argv[i] : nullptr; };

    if (cmd == "exit" && arg(2)) return std::atoi(arg(2));
    if (cmd == "sleep" && arg(2)) {
        sleep_ms(std::atol(arg(2)));
        return 0;
    }
    if (cmd == "ignore-term" && arg(2)) {
        ::signal(SIGTERM, SIG_IGN);
        std::printf("ready\n");
        std::fflush(stdout);
        sleep_ms(std::atol(arg(2)));
        return 0;
    }
    if (cmd == "spawn-grandchild" && arg(2)) {
        if (::fork() == 0) {
            sleep_ms(std::atol(arg(2)));
            _exit(0);
        }
        std::printf("parent done\n");
        return 0;
    }
    if (cmd == "grandchild-pidfile" && arg(2) && arg(3)) {
        if (::fork() == 0) {
            write_text(arg(2), std::to_string(::getpid()));
            sleep_ms(std::atol(arg(3)));
            _exit(0);
        }
        for (int i = 0; i < 500 && ::access(arg(2), F_OK) != 0; ++i)
            sleep_ms(2);
        std::printf("parent done\n");
        return 0;
    }
    if (cmd == "daemonize" && arg(2) && arg(3)) {
        pid_t first = ::fork();
        if (first == 0) {
            ::setsid();
            if (::fork() == 0) {
                int null = ::open("/dev/null", O_RDWR);
                ::dup2(null, 0);
                ::dup2(null, 1);
                ::dup2(null, 2);
                write_text(arg(2), std::to_string(::getpid()));
                sleep_ms(std::atol(arg(3)));
                _exit(0);
            }
            _exit(0);
        }
        int status;
        ::waitpid(first, &status, 0);
        // Wait until the daemon has announced itself so the test can find it.
        for (int i = 0; i < 500 && ::access(arg(2), F_OK) != 0; ++i)
            sleep_ms(2);
        return 0;
    }
    if (cmd == "setsid-child" && arg(2) && arg(3)) {
        if (::fork() == 0) {
            ::setsid();
            write_text(arg(2), std::to_string(::getpid()));
            sleep_ms(std::atol(arg(3)));
            _exit(0);
        }
        for (int i = 0; i < 500 && ::access(arg(2), F_OK) != 0; ++i)
            sleep_ms(2);
        return 0;
    }
    if (cmd == "write" && arg(2) && arg(3)) {
        if (!write_text(arg(2), arg(3))) {
            std::fprintf(stderr, "write %s: %s\n", arg(2), std::strerror(errno));
            return 1;
        }
        return 0;
    }
    if (cmd == "print-env") {
        for (char** e = environ; *e != nullptr; ++e)
            std::printf("%s\n", *e);
        return 0;
    }
    if (cmd == "list-fds") {
        std::vector<int> fds;
        DIR* dir = ::opendir("/proc/self/fd");
        if (dir == nullptr) return 1;
        int own = ::dirfd(dir);
        while (dirent* entry = ::readdir(dir)) {
            if (entry->d_name[0] == '.') continue;
            int fd = std::atoi(entry->d_name);
            if (fd != own) fds.push_back(fd);
        }
        ::closedir(dir);
        for (int fd : fds)
            std::printf("%d\n", fd);
        return 0;
    }
    if (cmd == "cat") {
        char buf[65536];
        ssize_t n;
        while ((n = ::read(0, buf, sizeof buf)) > 0) {
            if (::write(1, buf, static_cast<size_t>(n)) != n) return 1;
        }
        return n < 0 ? 1 : 0;
    }
    if (cmd == "bytes" && arg(2)) {
        long count = std::atol(arg(2));
        char c = arg(3) ? arg(3)[0] : 'x';
        std::string chunk(65536, c);
        while (count > 0) {
            size_t n = static_cast<size_t>(std::min<long>(count, static_cast<long>(chunk.size())));
            if (::write(1, chunk.data(), n) != static_cast<ssize_t>(n)) return 1;
            count -= static_cast<long>(n);
        }
        return 0;
    }
    if (cmd == "stderr-bytes" && arg(2) && arg(3)) {
        std::fprintf(stderr, "%s\n", arg(3));
        std::fflush(stderr);
        long count = std::atol(arg(2));
        std::string chunk(4096, '.');
        chunk.back() = '\n';
        while (count > 0) {
            size_t n = static_cast<size_t>(std::min<long>(count, static_cast<long>(chunk.size())));
            if (::write(2, chunk.data(), n) != static_cast<ssize_t>(n)) return 1;
            count -= static_cast<long>(n);
        }
        return 3;
    }
    if (cmd == "setxattr" && arg(2) && arg(3) && arg(4)) {
        if (::setxattr(arg(2), arg(3), arg(4), std::strlen(arg(4)), 0) != 0) {
            std::fprintf(stderr, "setxattr %s: %s\n", arg(2), std::strerror(errno));
            return 1;
        }
        return 0;
    }
    if (cmd == "setflags" && arg(2)) {
        int fd = ::open(arg(2), O_RDONLY | O_CLOEXEC);
        int flags = 0;
        if (fd < 0 || ::ioctl(fd, FS_IOC_GETFLAGS, &flags) != 0) {
            std::fprintf(stderr, "open/getflags %s: %s\n", arg(2), std::strerror(errno));
            return 2;
        }
        flags |= FS_NOATIME_FL;
        if (::ioctl(fd, FS_IOC_SETFLAGS, &flags) != 0) {
            std::fprintf(stderr, "setflags %s: %s\n", arg(2), std::strerror(errno));
            return 1;
        }
        return 0;
    }
    if (cmd == "io-uring") {
        io_uring_params params{};
        long fd = ::syscall(SYS_io_uring_setup, 4, &params);
        if (fd < 0) {
            std::fprintf(stderr, "io_uring_setup: %s\n", std::strerror(errno));
            return 1;
        }
        return 0;
    }
    if (cmd == "kill-self" && arg(2)) {
        ::raise(std::atoi(arg(2)));
        return 0;
    }
    return usage();
}
