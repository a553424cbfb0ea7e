// state_dir_fsync_test.cpp — what ALERT_STATE_FSYNC=1 promises (docs/alerts.md,
// "Persistence"): the journal synced after each write, the snapshot before its rename, the
// directory after the rename (before the journal is emptied) and when the store opens (and a
// new directory's parent). This
// binary's own fsync and fdatasync stand in front of libc's (the store is linked statically,
// so its calls reach them) and note what each call synced, then call libc's.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "alert_test_util.hpp"
#include "runtime/file_store.hpp"

using namespace alerts;
using namespace alerts::test;
namespace fs = std::filesystem;

namespace {

struct sync_log {
    fs::path dir;  // empty: not recording
    std::vector<std::string> calls;
};

sync_log& recorded() {
    static sync_log log;
    return log;
}

// "dir", "file" or "data" (fdatasync), and for the directory which snapshot files exist.
void note_sync(int fd, const char* call) {
    sync_log& log = recorded();
    if (log.dir.empty()) return;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) {
        log.calls.emplace_back(call);
        return;
    }
    std::string what = "dir";
    if (fs::exists(log.dir / "snapshot")) what += "+snapshot";
    if (fs::exists(log.dir / "snapshot.tmp")) what += "+tmp";
    log.calls.push_back(what);
}

template <typename F>
F libc(const char* name) {
    return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));  // NOLINT: dlsym's result
}

}  // namespace

extern "C" int fsync(int fd) {
    static const auto REAL = libc<int (*)(int)>("fsync");
    note_sync(fd, "file");
    return REAL(fd);
}

extern "C" int fdatasync(int fd) {
    static const auto REAL = libc<int (*)(int)>("fdatasync");
    note_sync(fd, "data");
    return REAL(fd);
}

namespace {

struct recording {
    explicit recording(const fs::path& dir) {
        fs::remove_all(dir);
        recorded() = {dir, {}};
    }
    ~recording() {
        fs::remove_all(recorded().dir);
        recorded() = {};
    }
    std::vector<std::string>& calls() { return recorded().calls; }
};

fs::path scratch() {
    return fs::temp_directory_path() / ("alerts-fsync-" + std::to_string(::getpid()));
}

}  // namespace

TEST_CASE("with fsync the state dir is synced when opened and after the snapshot's rename") {
    recording rec(scratch());
    {
        core_harness h;
        file_store store({scratch().string(), true});
        store.load(h.core);
        // The new directory's parent (which holds neither snapshot file), then the directory:
        // the journal may be new.
        CHECK(rec.calls() == std::vector<std::string>{"dir", "dir"});
        h.run({status("cam1", T0, device_state::offline, "s1")}, T0);
        store.commit(h.core);
        CHECK(rec.calls() == std::vector<std::string>{"dir", "dir", "data"});
        rec.calls().clear();
        store.compact(h.core);
        // The snapshot written aside and synced, renamed, the directory synced (the snapshot
        // in place, no tmp left), and only then the emptied journal synced.
        CHECK(rec.calls() == std::vector<std::string>{"file", "dir+snapshot", "data"});
    }

    core_harness after;
    file_store reopened({scratch().string(), true});
    reopened.load(after.core);
    CHECK(after.core.pending() == 1);
}

TEST_CASE("without fsync the state dir store syncs nothing") {
    recording rec(scratch());
    core_harness h;
    file_store store({scratch().string(), false});
    store.load(h.core);
    h.run({status("cam1", T0, device_state::offline, "s1")}, T0);
    store.commit(h.core);
    store.compact(h.core);
    CHECK(rec.calls().empty());
}
