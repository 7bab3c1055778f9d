// The attnviz binary run as a process by the command-line tests: its exit code, stdout and stderr.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "files.hpp"

namespace attnviz::test {

struct Outcome {
    int code = -1;
    std::string out, err;
};

// attnviz (ATTNVIZ_BIN) with these arguments, stdout and stderr captured in files.
inline Outcome run_attnviz(const std::vector<std::string>& args) {
    namespace fs = std::filesystem;
    char dir_name[] = "/tmp/attnviz-cli-XXXXXX";
    if (!mkdtemp(dir_name)) return {};
    const fs::path dir = dir_name, out = dir / "out", err = dir / "err";
    const pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(127);
        std::vector<char*> argv{const_cast<char*>(ATTNVIZ_BIN)};
        for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(ATTNVIZ_BIN, argv.data());
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    Outcome o{WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), slurp(out), slurp(err)};
    fs::remove_all(dir);
    return o;
}

}  // namespace attnviz::test
