// env_export (launcher/src/env_export.hpp): the request's strings as __OW_* variables, each
// set what getenv sees, an action's unsetenv or setenv undone by the next set, and no heap
// growth however many distinct values go through (glibc's setenv, the control, grows).
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "env_export.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// The sanitizer runtime's (its header, sanitizer/allocator_interface.h, is not installed with
// Debian's g++).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#else
#include <malloc.h>
#endif

namespace {

// Bytes of heap in use (the sanitizers' allocator replaces malloc's own bookkeeping).
size_t heap_in_use() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return __sanitizer_get_current_allocated_bytes();
#else
    return mallinfo2().uordblks;
#endif
}

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr ? value : "<unset>";
}

// What the launcher exports per activation: a new id every time.
std::string activation_id(int n) {
    std::string id = std::to_string(n);
    return std::string(32 - id.size(), '0') + id;
}

}  // namespace

TEST_CASE("env_export: each set is what getenv sees, as __OW_ and the key upper-cased") {
    actionloop::env_export exports;
    exports.set("ee_activation_id", "a1");
    exports.set("ee_api_host", "http://h");
    CHECK(env("__OW_EE_ACTIVATION_ID") == "a1");
    CHECK(env("__OW_EE_API_HOST") == "http://h");
    exports.set("ee_activation_id", "a-much-longer-second-value");  // more than the buffer held
    CHECK(env("__OW_EE_ACTIVATION_ID") == "a-much-longer-second-value");
    exports.set("ee_activation_id", "");
    CHECK(env("__OW_EE_ACTIVATION_ID") == "");
    exports.set("ee_activation_id", "a3");
    CHECK(env("__OW_EE_ACTIVATION_ID") == "a3");
    CHECK(env("__OW_EE_API_HOST") == "http://h");
}

TEST_CASE("env_export: an unchanged value stays where it is, a changed one moves (a swap)") {
    actionloop::env_export exports;
    exports.set("ee_namespace", "guest");
    const char* first = std::getenv("__OW_EE_NAMESPACE");
    exports.set("ee_namespace", "guest");
    CHECK(std::getenv("__OW_EE_NAMESPACE") == first);
    exports.set("ee_namespace", "other");
    const char* second = std::getenv("__OW_EE_NAMESPACE");
    CHECK(second != first);
    CHECK(std::string(first) == "guest");  // the old buffer is intact after the swap
    CHECK(env("__OW_EE_NAMESPACE") == "other");
}

TEST_CASE("env_export: after the action unsets or overrides it, the next set puts it back") {
    actionloop::env_export exports;
    exports.set("ee_action_name", "/guest/a");
    ::unsetenv("__OW_EE_ACTION_NAME");
    CHECK(env("__OW_EE_ACTION_NAME") == "<unset>");
    exports.set("ee_action_name", "/guest/a");  // the same value: exported again all the same
    CHECK(env("__OW_EE_ACTION_NAME") == "/guest/a");
    ::setenv("__OW_EE_ACTION_NAME", "mine", 1);
    exports.set("ee_action_name", "/guest/a");
    CHECK(env("__OW_EE_ACTION_NAME") == "/guest/a");
}

TEST_CASE("env_export: 20,000 distinct activation ids leave the heap as it was, setenv grows it") {
    constexpr int ACTIVATIONS = 20000;
    actionloop::env_export exports;
    exports.set("ee_leak_id", activation_id(0));  // the buffers, once
    const size_t before = heap_in_use();
    for (int n = 1; n <= ACTIVATIONS; ++n) exports.set("ee_leak_id", activation_id(n));
    const size_t ours = heap_in_use() - before;
    CHECK(env("__OW_EE_LEAK_ID") == activation_id(ACTIVATIONS));
    CHECK_MESSAGE(ours < 16 * 1024, "grew by " << ours << " bytes");

    // The control: glibc's setenv keeps each distinct string (about 100 bytes per id here),
    // so the measure above is one that would have seen the growth.
    const size_t control_before = heap_in_use();
    for (int n = 1; n <= ACTIVATIONS; ++n) {
        ::setenv("__OW_EE_CONTROL_ID", activation_id(n).c_str(), 1);
    }
    const size_t control = heap_in_use() - control_before;
    ::unsetenv("__OW_EE_CONTROL_ID");
    CHECK_MESSAGE(control > size_t{ACTIVATIONS} * 50, "setenv grew by only " << control);
}

TEST_CASE("env_export: upstream's names always, at most 16 others with plain names, values up "
          "to 4096 bytes") {
    actionloop::env_export exports;
    for (int i = 0; i < 20; ++i) {
        const std::string key = "eb_other_" + std::to_string(i);
        CHECK(exports.set(key, "v") == (i < 16));
    }
    CHECK(env("__OW_EB_OTHER_15") == "v");
    CHECK(env("__OW_EB_OTHER_16") == "<unset>");
    CHECK(exports.set("eb_other_3", "again"));  // an exported name stays exported
    CHECK(env("__OW_EB_OTHER_3") == "again");
    // Upstream's are exported even now that the others are full.
    CHECK(exports.set("activation_id", "a1"));
    CHECK(env("__OW_ACTIVATION_ID") == "a1");
    // Names no variable should have.
    actionloop::env_export fresh;
    for (const char* key : {"", "a=b", "a b", "x\ny", "ünï", "-dash"}) {
        CHECK_FALSE(fresh.set(key, "v"));
    }
    CHECK_FALSE(fresh.set(std::string(65, 'k'), "v"));
    CHECK(fresh.set(std::string(64, 'k'), "v"));
    // A value too long: not exported; for a variable exported before, emptied.
    CHECK_FALSE(fresh.set("eb_long", std::string(4097, 'x')));
    CHECK(env("__OW_EB_LONG") == "<unset>");
    CHECK(fresh.set("eb_long", std::string(4096, 'x')));
    CHECK(env("__OW_EB_LONG").size() == 4096);
    CHECK_FALSE(fresh.set("eb_long", std::string(4097, 'x')));
    CHECK(env("__OW_EB_LONG").empty());
}

TEST_CASE("env_export: a named variable (Lambda's _X_AMZN_TRACE_ID) is set, swapped and unset") {
    actionloop::env_export exports;
    CHECK(exports.set_named("EE_NAMED_TRACE", "Root=1-a"));
    CHECK(env("EE_NAMED_TRACE") == "Root=1-a");
    CHECK(env("__OW_EE_NAMED_TRACE") == "<unset>");  // no prefix
    const char* first = std::getenv("EE_NAMED_TRACE");
    CHECK(exports.set_named("EE_NAMED_TRACE", "Root=1-a"));
    CHECK(std::getenv("EE_NAMED_TRACE") == first);  // unchanged: no write
    CHECK(exports.set_named("EE_NAMED_TRACE", "Root=1-b"));
    CHECK(env("EE_NAMED_TRACE") == "Root=1-b");
    exports.unset_named("EE_NAMED_TRACE");
    CHECK(env("EE_NAMED_TRACE") == "<unset>");
    CHECK(exports.set_named("EE_NAMED_TRACE", "Root=1-b"));  // the same value, exported again
    CHECK(env("EE_NAMED_TRACE") == "Root=1-b");
    // What the action set is replaced, or taken out.
    ::setenv("EE_NAMED_TRACE", "mine", 1);
    CHECK(exports.set_named("EE_NAMED_TRACE", "Root=1-b"));
    CHECK(env("EE_NAMED_TRACE") == "Root=1-b");
    ::setenv("EE_NAMED_TRACE", "mine", 1);
    exports.unset_named("EE_NAMED_TRACE");
    CHECK(env("EE_NAMED_TRACE") == "<unset>");
    ::setenv("EE_NAMED_OTHER", "never set by us", 1);
    exports.unset_named("EE_NAMED_OTHER");
    CHECK(env("EE_NAMED_OTHER") == "<unset>");
    // Too long: unset rather than kept stale.
    CHECK(exports.set_named("EE_NAMED_TRACE", "short"));
    CHECK_FALSE(exports.set_named("EE_NAMED_TRACE", std::string(4097, 'x')));
    CHECK(env("EE_NAMED_TRACE") == "<unset>");
    // A request key of the same spelling is another variable (__OW_ prefixed).
    CHECK(exports.set("EE_NAMED_TRACE", "request"));
    CHECK(env("__OW_EE_NAMED_TRACE") == "request");
    CHECK(env("EE_NAMED_TRACE") == "<unset>");
}

TEST_CASE("env_export: 20,000 distinct trace headers leave the heap as it was") {
    actionloop::env_export exports;
    exports.set_named("EE_NAMED_LEAK", "Root=1-" + activation_id(0));
    const size_t before = heap_in_use();
    for (int n = 1; n <= 20000; ++n) {
        exports.set_named("EE_NAMED_LEAK", "Root=1-" + activation_id(n));
        if (n % 100 == 0) exports.unset_named("EE_NAMED_LEAK");
    }
    const size_t ours = heap_in_use() - before;
    CHECK_MESSAGE(ours < 16 * 1024, "grew by " << ours << " bytes");
    exports.unset_named("EE_NAMED_LEAK");
}
