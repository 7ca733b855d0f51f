// SPDX-License-Identifier: Apache-2.0
// Copyright 2026 The cordon Authors

// Host IPC: SysV shared memory, semaphores and message queues, POSIX message queues, the user
// keyring and abstract unix sockets are all shared by every process of the host (or of the uid)
// unless the command gets its own namespace or is refused the calls; none is a file, so neither
// a read-only mount nor a Landlock path rule governs it.
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include <linux/keyctl.h>

#include <cstddef>
#include <cstdint>
#include <set>

#include "hostile_support.hpp"

namespace cordon::hostile {
namespace {

using ::testing::IsEmpty;

// SysV keys unlikely to be in use: a fixed prefix, this process's pid and a counter, in steps of
// four so that sysv-create's KEY, KEY+1 and KEY+2 stay ours.
key_t fresh_key() {
    static std::atomic<unsigned> counter{0};
    const unsigned pid = static_cast<unsigned>(::getpid()) & 0x3fffU;
    const unsigned n = (++counter) & 0xffU;
    return static_cast<key_t>(0x43000000U | (pid << 10U) | (n << 2U));
}

std::string hex(key_t key) {
    std::ostringstream out;
    out << "0x" << std::hex << static_cast<std::uint32_t>(key);
    return out.str();
}

struct sysv_object {
    std::string kind;  // shm, sem, msg
    long long key = 0;
    long long id = 0;
    auto operator<=>(const sysv_object&) const = default;
};

// The SysV objects of the host's IPC namespace, from /proc/sysvipc (key and id lead each line).
std::set<sysv_object> host_sysv_objects() {
    std::set<sysv_object> out;
    for (const char* kind : {"shm", "sem", "msg"}) {
        std::ifstream in(std::string("/proc/sysvipc/") + kind);
        std::string line;
        std::getline(in, line);  // header
        while (std::getline(in, line)) {
            std::istringstream fields(line);
            sysv_object object{kind};
            if (fields >> object.key >> object.id) out.insert(object);
        }
    }
    return out;
}

void remove_sysv_object(const sysv_object& object) {
    const int id = static_cast<int>(object.id);
    if (object.kind == "shm") ::shmctl(id, IPC_RMID, nullptr);
    if (object.kind == "sem") ::semctl(id, 0, IPC_RMID);
    if (object.kind == "msg") ::msgctl(id, IPC_RMID, nullptr);
}

// A host shared memory segment readable and writable by anyone, removed at scope end.
class host_segment {
public:
    explicit host_segment(std::string_view content) {
        for (int attempt = 0; attempt < 16 && id_ < 0; ++attempt) {
            key_ = fresh_key();
            id_ = ::shmget(key_, 4096, IPC_CREAT | IPC_EXCL | 0666);
        }
        if (id_ < 0) throw std::system_error(errno, std::generic_category(), "shmget");
        void* at = ::shmat(id_, nullptr, 0);
        if (at == reinterpret_cast<void*>(static_cast<std::intptr_t>(-1))) {
            throw std::system_error(errno, std::generic_category(), "shmat");
        }
        std::memcpy(at, content.data(), content.size());
        // Detached before any run: a spawner that forks (the sanitizer builds) would otherwise
        // hand its children the attachment, and their exec would detach it as theirs.
        ::shmdt(at);
    }
    ~host_segment() {
        if (id_ >= 0) ::shmctl(id_, IPC_RMID, nullptr);
    }
    host_segment(const host_segment&) = delete;
    host_segment& operator=(const host_segment&) = delete;

    [[nodiscard]] key_t key() const { return key_; }
    [[nodiscard]] std::string content(std::size_t size) const {
        void* at = ::shmat(id_, nullptr, SHM_RDONLY);
        if (at == reinterpret_cast<void*>(static_cast<std::intptr_t>(-1))) return {};
        std::string out(static_cast<const char*>(at), size);
        ::shmdt(at);
        return out;
    }
    [[nodiscard]] shmid_ds status() const {
        shmid_ds out{};
        ::shmctl(id_, IPC_STAT, &out);
        return out;
    }

private:
    key_t key_ = 0;
    int id_ = -1;
};

class HostIpc : public BackendAndModeTest {};

// 4a. A segment the host made for everyone (mode 0666) under a known key.
TEST_P(HostIpc, HostSharedMemorySegmentIsOutOfReach) {
    const std::string content = "cordon-untouched";
    host_segment segment(content);

    const attempts seen = attack({"shm-attach", hex(segment.key())});
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    EXPECT_TRUE(denial_of(seen, "shmget").has_value() || denial_of(seen, "shmat").has_value())
        << describe(record_);
    // Nobody but this process ever attached (shmat and shmdt record their caller).
    const shmid_ds status = segment.status();
    EXPECT_EQ(status.shm_lpid, ::getpid());
    EXPECT_EQ(status.shm_nattch, 0U);
    EXPECT_EQ(segment.content(content.size()), content);
}

// 4b. Objects the command creates (under a known key and IPC_PRIVATE) would outlive the run.
TEST_P(HostIpc, SysvObjectsTheCommandCreatesNeverReachTheHost) {
    const key_t key = fresh_key();
    const std::set<sysv_object> before = host_sysv_objects();

    (void)attack({"sysv-create", hex(key)});

    std::vector<sysv_object> leaked;
    for (const auto& object : host_sysv_objects()) {
        if (before.contains(object)) continue;
        const bool ours = object.key == 0 || (object.key >= key && object.key <= key + 2);
        if (ours) leaked.push_back(object);
    }
    for (const auto& object : leaked) {
        ADD_FAILURE() << "the command's SysV " << object.kind << " (key " << object.key << ", id "
                      << object.id << ") is on the host\n"
                      << describe(record_);
        remove_sysv_object(object);
    }
}

// 4c. A POSIX message queue the command creates would outlive the run.
TEST_P(HostIpc, PosixMessageQueueTheCommandCreatesNeverReachesTheHost) {
    const std::string name = "/cordon-hostile-" + unique_suffix();

    (void)attack({"mq-create", name});

    // Raw calls (no librt); the kernel takes the name without its leading slash.
    const long queue = ::syscall(SYS_mq_open, name.c_str() + 1, O_RDONLY | O_CLOEXEC, 0, nullptr);
    const int error = errno;
    if (queue >= 0) {
        ::close(static_cast<int>(queue));
        ::syscall(SYS_mq_unlink, name.c_str() + 1);
        ADD_FAILURE() << "the command's message queue " << name << " is on the host\n"
                      << describe(record_);
    } else {
        EXPECT_EQ(error, ENOENT) << std::strerror(error);
    }
    std::error_code ec;
    if (fs::is_directory("/dev/mqueue", ec)) {
        EXPECT_FALSE(fs::exists("/dev/mqueue" + name, ec));
    }
}

// /proc/keys: the ids of the keys of type "user", and whether `description` appears at all.
struct keys_view {
    std::set<std::string> user_key_ids;
    bool mentions = false;
};

keys_view host_keys(const std::string& description) {
    keys_view out;
    std::ifstream in("/proc/keys");
    std::string line;
    while (std::getline(in, line)) {
        // id flags usage timeout perm uid gid type description: summary
        std::istringstream fields(line);
        std::string id, flags, usage, timeout, perm, uid, gid, type;
        fields >> id >> flags >> usage >> timeout >> perm >> uid >> gid >> type;
        if (type == "user") out.user_key_ids.insert(id);
        if (line.find(description) != std::string::npos) out.mentions = true;
    }
    return out;
}

// 4d. The user keyring is shared by every process of the uid on the host and outlives the run.
TEST_P(HostIpc, UserKeyringIsOutOfReach) {
    const std::string description = "cordon-hostile-" + unique_suffix();
    const keys_view before = host_keys(description);
    ASSERT_FALSE(before.mentions);

    const attempts seen = attack({"keyring", description});
    EXPECT_THAT(seen.allowed, IsEmpty()) << describe(record_);
    EXPECT_TRUE(denial_of(seen, "add_key").has_value()) << describe(record_);
    EXPECT_TRUE(denial_of(seen, "keyctl").has_value()) << describe(record_);

    const keys_view after = host_keys(description);
    EXPECT_FALSE(after.mentions) << "the command's key is on the host";
    for (const auto& id : after.user_key_ids) {
        EXPECT_TRUE(before.user_key_ids.contains(id)) << "a new user key appeared: " << id;
    }
    if (after.mentions) {
        const long key = ::syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user",
                                   description.c_str(), 0L);
        if (key >= 0) ::syscall(SYS_keyctl, KEYCTL_INVALIDATE, key);
    }
}

// An abstract unix socket bound by the test, non-blocking; closed at scope end.
class abstract_socket {
public:
    abstract_socket(const std::string& name, int type) : name_(name) {
        fd_ = ::socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::memcpy(address.sun_path + 1, name.data(), name.size());
        const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
        if (::bind(fd_, reinterpret_cast<const sockaddr*>(&address), size) != 0) {
            throw std::system_error(errno, std::generic_category(), "bind @" + name);
        }
        if (type == SOCK_STREAM && ::listen(fd_, 8) != 0) {
            throw std::system_error(errno, std::generic_category(), "listen");
        }
    }
    ~abstract_socket() { ::close(fd_); }
    abstract_socket(const abstract_socket&) = delete;
    abstract_socket& operator=(const abstract_socket&) = delete;
    [[nodiscard]] int fd() const { return fd_; }

private:
    std::string name_;
    int fd_ = -1;
};

// 4e. Abstract sockets are named in the network namespace, not the filesystem: only Landlock's
// scope (ABI 6) keeps a command from reaching a host daemon's.
TEST_P(HostIpc, AbstractUnixSocketsOfTheHostAreOutOfReach) {
    if (landlock_abi() < 6) {
        CORDON_SKIP_OR_FAIL("Landlock ABI " + std::to_string(landlock_abi()) +
                            " has no abstract-socket scope (ABI 6, Linux 6.12); cordon reports "
                            "this gap as partial enforcement");
    }
    // Under network deny the command cannot even make a unix socket (tests/backends/
    // network_test.cpp): the scope is the wall under test, so the run has the host's network.
    network_.policy = sandbox::network_policy::allow;
    const std::string stream_name = "cordon-hostile-stream-" + unique_suffix();
    const std::string dgram_name = "cordon-hostile-dgram-" + unique_suffix();
    abstract_socket listener(stream_name, SOCK_STREAM);
    abstract_socket receiver(dgram_name, SOCK_DGRAM);

    const attempts connected = attack({"abstract-connect", stream_name});
    EXPECT_THAT(connected.allowed, IsEmpty()) << describe(record_);
    EXPECT_TRUE(denial_of(connected, "connect @" + stream_name).has_value()) << describe(record_);

    const attempts sent = attack({"abstract-send", dgram_name});
    EXPECT_THAT(sent.allowed, IsEmpty()) << describe(record_);
    EXPECT_TRUE(denial_of(sent, "sendto @" + dgram_name).has_value()) << describe(record_);

    const int accepted = ::accept4(listener.fd(), nullptr, nullptr, SOCK_CLOEXEC);
    EXPECT_LT(accepted, 0) << "the listener accepted a connection from the command";
    if (accepted >= 0) ::close(accepted);
    char buf[64];
    EXPECT_LT(::recv(receiver.fd(), buf, sizeof buf, 0), 0) << "a datagram arrived";
}

CORDON_HOSTILE_BOTH_MODES(HostIpc);

}  // namespace
}  // namespace cordon::hostile
