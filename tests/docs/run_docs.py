#!/usr/bin/env python3
"""run_docs.py --source DIR --build DIR DOC.md: runs the commands of a Markdown doc, in order,
as a new user would on a fresh clone, and checks the answers the doc promises.

The clone: the source tree's files (git ls-files: tracked and untracked-not-ignored) copied to
a temp dir, with the build's `cmake --install` in its build/prefix, where scripts/serve would
put it. Then, for each fenced block in the doc, top to bottom:
  ```sh            run: pasted into one bash shell that lives for the whole doc, as a user
                   pastes the doc's blocks one after the other into one terminal (started in
                   the clone's root, with set -eo pipefail): what a block leaves behind
                   (variables, exports, the directory, background processes, traps, which fire
                   only when the terminal closes) is there for the next blocks. A line ending
                   in `# {…}` or `# […]` must print exactly that JSON text.
  ```cpp etc.      whose first line is `// NAME.cpp` (or .hpp, .h, .cc): saved as NAME in the
                   terminal's current directory (the clone's root until a block changes it,
                   e.g. to a scratch folder), as the doc asks the reader to.
  <!-- not run: REASON -->   on the line before a block: not run; the doc's test then ends as
                   skipped (exit 77) with the reason, after every other block has passed.
Two commands are taken over, not run as written: `scripts/serve ARGS` (it serves until Ctrl-C)
starts in the background as `scripts/serve --port P --no-build ARGS` after the previous one is
stopped, as the doc tells the reader to do with Ctrl-C, and counts when it says `serving` (as
if in a second terminal); and `scripts/test` is the suite this runs in. The ports P and P+1 are
free and replace 8080 and 8081 in every command. When the doc's last block has run, the shell
is closed as a terminal is (its EXIT traps run) and whatever it left running is killed.
TMPDIR is a folder of the test's own (removed with it), so a doc's `mktemp -d` scratch folder
is private to the run.
Exit status: 0 all ran as written, 1 a command failed, 77 some blocks were not run.
"""
import argparse
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = re.compile(r"^\s*<!--\s*not run:\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
EXPECT = re.compile(r"^(.*?\S)\s+#\s+([\[{].*[\]}])\s*$")
FILE_LINE = re.compile(r"^//\s*(\S+\.(?:cpp|hpp|h|cc))\s*$")


def blocks(path):
    """(line number, language, text, skip reason or None) for each fenced block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i, reason = [], 0, None
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            s = SKIP.match(lines[i])
            if s:
                reason = s.group(1)
            elif lines[i].strip():
                reason = None
            i += 1
            continue
        indent, lang, start = m.group(1), m.group(2), i + 1
        body = []
        i += 1
        while i < len(lines) and not FENCE.match(lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        out.append((start, lang, "\n".join(body), reason))
        reason = None
        i += 1
    return out


def free_port():
    """A free port P with P+1 free too (`scripts/serve --redis` serves on both)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port >= 65535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 1))
                return port
            except OSError:
                continue


def make_clone(source, build, root):
    repo = os.path.join(root, "repo")
    try:
        names = subprocess.run(["git", "-C", source, "ls-files", "-co", "--exclude-standard", "-z"],
                               check=True, capture_output=True).stdout.decode().split("\0")
    except (subprocess.CalledProcessError, FileNotFoundError):
        names = [os.path.relpath(os.path.join(d, f), source)
                 for d, dirs, files in os.walk(source)
                 if not os.path.relpath(d, source).startswith(("build", ".git"))
                 for f in files]
    for name in filter(None, names):
        src = os.path.join(source, name)
        if not os.path.lexists(src):
            continue  # deleted in the work tree
        dst = os.path.join(repo, name)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)
    subprocess.run(["cmake", "--install", build, "--prefix", os.path.join(repo, "build", "prefix")],
                   check=True, stdout=subprocess.DEVNULL)
    return repo


# The terminal: reads the name of a file of commands at a time from fd CONTROL_FD, runs it in
# this same shell (source), then prints DONE and the file's name.
CONTROL_FD = 62
DONE = "__docs_block_done__"
SHELL = f"""set -eo pipefail
__check() {{  # OUTPUT EXPECTED LINE
  [ "$1" = "$2" ] || {{ printf 'line %s printed:\\n%s\\ninstead of:\\n%s\\n' "$3" "$1" "$2" >&2; exit 1; }}
  printf '%s\\n' "$1"
}}
while IFS= read -r __docs_file <&{CONTROL_FD}; do
  source "$__docs_file"
  printf '\\n{DONE} %s\\n' "$__docs_file"
done
"""


class runner:
    def __init__(self, repo, home, tmp):
        self.repo, self.port, self.serve = repo, free_port(), None
        self.env = dict(os.environ, HOME=home, TMPDIR=tmp)
        self.shell, self.shell_log, self.control, self.chunks = None, None, None, 0

    def start_shell(self):
        read_end, self.control = os.pipe()
        os.dup2(read_end, CONTROL_FD)
        os.close(read_end)
        # The shell writes through an open file of its own (appending), and this reads
        # through another: with one shared, this side's seek moved the offset the shell's next
        # write landed at, so a block's done marker could overwrite the block's output and the
        # wait for it never ended (seen once in CI, docs_actions_alerts_README).
        path = os.path.join(self.repo, "..", "shell.log")
        with open(path, "ab") as out:
            out.truncate(0)
            self.shell = subprocess.Popen(["bash", "-c", SHELL], cwd=self.repo, env=self.env,
                                          stdin=subprocess.DEVNULL, stdout=out,
                                          stderr=subprocess.STDOUT, pass_fds=(CONTROL_FD,),
                                          start_new_session=True)
        self.shell_log = open(path, "r")
        os.close(CONTROL_FD)
        self.shown = 0

    def close_shell(self):
        """Closes the terminal: its EXIT traps run; then what it left running is killed.
        (ok, output)"""
        if not self.shell:
            return True, ""
        try:
            os.close(self.control)
        except OSError:
            pass  # closed already
        try:
            code = self.shell.wait(30)
        except subprocess.TimeoutExpired:
            code = None
        try:
            os.killpg(self.shell.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.shell.wait()
        self.shell_log.seek(self.shown)
        out = self.shell_log.read()
        self.shell_log.close()
        self.shell = None
        return code is not None, out

    def stop_serve(self):
        if self.serve and self.serve.poll() is None:
            os.killpg(self.serve.pid, signal.SIGINT)  # Ctrl-C, as the doc says
            try:
                self.serve.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.serve.pid, signal.SIGKILL)
                self.serve.wait()
        self.serve = None

    def start_serve(self, args):
        """Starts scripts/serve; when its port was taken meanwhile (another test's server), on
        another free port, which the following commands then use."""
        for _ in range(3):
            ok, text = self.try_serve(args)
            if ok or "in use" not in text:
                break
            self.port = free_port()
        return ok, text

    def try_serve(self, args):
        self.stop_serve()
        log = open(os.path.join(self.repo, "..", "serve.log"), "w+")
        argv = ["scripts/serve", "--port", str(self.port), "--no-build"] + args
        self.serve = subprocess.Popen(argv, cwd=self.repo, env=self.env, stdout=log, stderr=log,
                                      start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            log.seek(0)
            text = log.read()
            if "scripts/serve: serving" in text:
                return True, text
            if self.serve.poll() is not None:
                return False, text
            time.sleep(0.05)
        return False, text + "\n(no 'serving' within 120 s)"

    def bash(self, script):
        """Pastes SCRIPT into the terminal and waits for it. (ok, output)"""
        if not self.shell:
            self.start_shell()
        self.chunks += 1
        name = os.path.join(self.repo, "..", f"block-{self.chunks}.sh")
        with open(name, "w") as f:
            f.write(script)
        os.write(self.control, (os.path.abspath(name) + "\n").encode())
        marker = f"\n{DONE} {os.path.abspath(name)}\n"
        deadline = time.monotonic() + 600
        while True:
            self.shell_log.seek(self.shown)
            text = self.shell_log.read()
            at = text.find(marker)
            if at >= 0:
                self.shown += len(text[:at + len(marker)].encode())
                return True, text[:at] + ("\n" if at and not text[:at].endswith("\n") else "")
            if self.shell.poll() is not None:
                code = self.shell.returncode
                _, text = self.close_shell()
                return False, text + f"(the shell exited with status {code})\n"
            if time.monotonic() > deadline:
                return False, text + "(not done within 600 s)\n"
            time.sleep(0.02)

    def cwd(self):
        """The terminal's current directory (the clone's root before the first block)."""
        if not self.shell:
            return self.repo
        ok, out = self.bash('printf "%s\\n" "$PWD"\n')
        return out.rstrip("\n").split("\n")[-1] if ok else self.repo

    def with_port(self, text):
        """8080 (and 8081, the second proxy of `scripts/serve --redis`) become P and P+1."""
        return re.sub(r"\b(127\.0\.0\.1|localhost):808([01])\b",
                      lambda m: f"127.0.0.1:{self.port + int(m.group(2))}", text)

    def run_sh(self, first_line, text):
        """Runs a sh block: serve/test lines here, the rest by bash. (ok, output)"""
        pending, output, state = [], "", ""
        def flush():
            nonlocal pending, output
            if not pending:
                return True
            ok, out = self.bash("\n".join(pending) + "\n")
            output += out
            pending = []
            return ok
        for n, raw in enumerate(text.split("\n"), first_line + 1):
            line = self.with_port(raw)  # per line: a serve below may move to another port
            at_start = state == ""
            code, state = scan(line, state)
            words = code.split()
            if at_start and words[:1] == ["scripts/serve"]:
                if not flush():
                    return False, output
                ok, out = self.start_serve(shlex.split(code)[1:])
                output += out
                if not ok:
                    return False, output
                continue
            if at_start and words[:1] == ["scripts/test"]:
                output += "scripts/test: the suite this test runs in (not run again)\n"
                continue
            m = EXPECT.match(line)
            if at_start and state == "" and m and code.rstrip() == m.group(1):
                pending.append(f"__out=$({m.group(1)})\n"
                               f"__check \"$__out\" {shlex.quote(m.group(2))} {n}")
            else:
                pending.append(line)
        return flush(), output


def scan(line, state):
    """The line without its comment, and whether a command goes on after it: state is "" (done),
    "'" or '"' (inside quotes), or "\\" (continued, or ends in a pipe or &&)."""
    quote = state if state in ("'", '"') else ""
    i, code = 0, line
    while i < len(line):
        c = line[i]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\":
            i += 1
        elif quote == '"':
            quote = "" if c == '"' else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            code = line[:i]
            break
        i += 1
    if quote:
        return code, quote
    tail = code.rstrip()
    return code, "\\" if tail.endswith(("\\", "|", "&&", "||")) else ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("doc")
    a = parser.parse_args()
    root = tempfile.mkdtemp(prefix="docs-test-")
    r = None
    try:
        repo = make_clone(a.source, a.build, root)
        os.makedirs(os.path.join(root, "home"))
        os.makedirs(os.path.join(root, "tmp"))
        r = runner(repo, os.path.join(root, "home"), os.path.join(root, "tmp"))
        skipped, ran = [], 0
        for line, lang, text, reason in blocks(os.path.join(a.source, a.doc)):
            where = f"{a.doc}:{line}"
            first = text.split("\n", 1)[0]
            if reason is not None:
                skipped.append(f"{where}: {reason}")
                continue
            if FILE_LINE.match(first):
                with open(os.path.join(r.cwd(), FILE_LINE.match(first).group(1)), "w") as f:
                    f.write(text + "\n")
                continue
            if lang not in ("sh", "bash"):
                continue
            ok, out = r.run_sh(line, text)
            print(f"--- {where}\n{out}", end="" if out.endswith("\n") else "\n")
            if not ok:
                print(f"FAILED: the block at {where}")
                return 1
            ran += 1
        ok, out = r.close_shell()
        if out:
            print(f"--- the terminal closed\n{out}", end="" if out.endswith("\n") else "\n")
        if not ok:
            print("FAILED: the shell did not end within 30 s of its terminal closing")
            return 1
        print(f"docs: {a.doc}: {ran} blocks ran as written, {len(skipped)} not run")
        for s in skipped:
            print(f"  not run: {s}")
        return 77 if skipped else 0
    finally:
        if r:
            r.close_shell()
            r.stop_serve()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
