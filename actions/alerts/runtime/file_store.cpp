// file_store.cpp — journal + snapshot persistence with POSIX file calls.
#include "runtime/file_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/record_codec.hpp"

namespace alerts {

namespace {

[[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error("state store: " + what + ": " + std::strerror(errno));
}

std::string read_file(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream data;
    data << in.rdbuf();
    return data.str();
}

void write_all(int fd, const std::string& data, const std::string& what) {
    const char* p = data.data();
    std::size_t left = data.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("write " + what);
        p += n;
        left -= static_cast<std::size_t>(n);
    }
}

// A rename or a file's creation is durable only once the directory holding it is synced.
void sync_dir(const std::string& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) fail("open " + dir);
    const bool synced = ::fsync(fd) == 0;
    ::close(fd);
    if (!synced) fail("fsync " + dir);
}

}  // namespace

file_store::file_store(file_store_options options) : options_(std::move(options)) {
    const bool created = ::mkdir(options_.dir.c_str(), 0755) == 0;
    if (!created && errno != EEXIST) fail("mkdir " + options_.dir);
    // A new state dir's own name is in its parent.
    if (created && options_.fsync) {
        const std::string parent = std::filesystem::path(options_.dir).parent_path().string();
        sync_dir(parent.empty() ? "." : parent);
    }
    lock_dir();
}

file_store::~file_store() {
    if (journal_fd_ >= 0) ::close(journal_fd_);
    if (lock_fd_ >= 0) ::close(lock_fd_);
}

void file_store::lock_dir() {
    lock_fd_ = ::open(path("lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0) fail("open " + path("lock"));
    // A killed predecessor releases its lock when the kernel reaps it: wait up to 5 s.
    for (int attempt = 0; ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0; ++attempt) {
        if (errno != EWOULDBLOCK || attempt >= 500) fail("lock " + path("lock"));
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

void file_store::load(alert_core& core) {
    core_restorer restorer(core);
    const decode_result snap = decode_frames(read_file(path("snapshot")), 0, restorer);
    const std::string journal = read_file(path("journal"));
    const decode_result tail = decode_frames(journal, snap.last_seq, restorer);
    seq_ = std::max(snap.last_seq, tail.last_seq);
    journal_fd_ = ::open(path("journal").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (journal_fd_ < 0) fail("open " + path("journal"));
    // Drop a torn tail (a frame cut short by a kill in the middle of a write).
    const auto valid = static_cast<off_t>(tail.valid_bytes);
    if (tail.valid_bytes != journal.size() && ::ftruncate(journal_fd_, valid) != 0) {
        fail("truncate " + path("journal"));
    }
    if (::lseek(journal_fd_, valid, SEEK_SET) < 0) fail("seek " + path("journal"));
    journal_bytes_ = tail.valid_bytes;
    // The journal (and the lock) may have just been created: their names too must survive.
    if (options_.fsync) sync_dir(options_.dir);
}

void file_store::commit(const alert_core& core) {
    frame_encoder encoder;
    export_changes(core, encoder);
    if (encoder.empty()) return;
    append(encoder.finish(++seq_));
    if (journal_bytes_ > options_.compact_bytes) compact(core);
}

void file_store::append(const std::string& frame) {
    if (journal_fd_ < 0) throw std::logic_error("state store: commit before load");
    write_all(journal_fd_, frame, path("journal"));
    if (options_.fsync && ::fdatasync(journal_fd_) != 0) fail("fsync journal");
    journal_bytes_ += frame.size();
}

void file_store::compact(const alert_core& core) {
    frame_encoder encoder;
    core.export_all(encoder);
    const std::string frame = encoder.finish(seq_);
    const std::string tmp = path("snapshot.tmp");
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) fail("open " + tmp);
    write_all(fd, frame, tmp);
    const bool synced = !options_.fsync || ::fsync(fd) == 0;
    ::close(fd);
    if (!synced) fail("fsync " + tmp);
    if (::rename(tmp.c_str(), path("snapshot").c_str()) != 0) fail("rename " + tmp);
    // The snapshot's new name must be on disk before the journal it replaces is emptied: a
    // crash in between would otherwise find the old snapshot and an empty journal.
    if (options_.fsync) sync_dir(options_.dir);
    if (::ftruncate(journal_fd_, 0) != 0) fail("truncate journal");
    if (::lseek(journal_fd_, 0, SEEK_SET) < 0) fail("seek journal");
    if (options_.fsync && ::fdatasync(journal_fd_) != 0) fail("fsync journal");
    journal_bytes_ = 0;
}

}  // namespace alerts
