// Tests of core/base/file_io.hpp: read_file and write_file_atomic.
#include "core/base/file_io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_support.hpp"

namespace attnviz::core {
namespace {

namespace fs = std::filesystem;
using namespace attnviz::test;

// lstat's view of a path: its type bits and permission bits; 0 when it does not exist.
mode_t lmode(const fs::path& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0 ? st.st_mode : 0;
}
mode_t perms(const fs::path& p) { return lmode(p) & 07777; }

void write_plain(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary);
    out << text;
}

// The single problem of a write, or a failure when there is not exactly one.
::testing::AssertionResult one_problem(const Problems& problems, const std::string& path, const std::string& part) {
    if (problems.size() != 1)
        return ::testing::AssertionFailure() << problems.size() << " problems:\n" << all_text(problems);
    if (problems[0].path != path)
        return ::testing::AssertionFailure() << "path " << problems[0].path << ", expected " << path;
    if (!contains(problems[0].message, part))
        return ::testing::AssertionFailure() << "message \"" << problems[0].message << "\" lacks \"" << part << "\"";
    return ::testing::AssertionSuccess();
}

// Whether trying a write to the system's device node with this number is safe: a private node with
// the same number, made in `dir`, must still be a character device after write_file_atomic. As root a
// broken write_file_atomic could otherwise replace the system's node for every other program.
::testing::AssertionResult private_node_survives(const fs::path& dir, dev_t number) {
    const fs::path node = dir / "private_node";
    if (::mknod(node.c_str(), S_IFCHR | 0600, number) != 0) {
        if (::geteuid() != 0) return ::testing::AssertionSuccess();  // cannot replace anything in /dev either
        return ::testing::AssertionFailure() << "cannot make a private node as root; not risking the system's";
    }
    (void)write_file_atomic(node.string(), "probe");
    const bool survived = S_ISCHR(lmode(node));
    fs::remove(node);
    if (survived) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "a private device node was replaced; not trying the system's";
}

// Sets the umask for the life of the object.
class UmaskGuard {
public:
    explicit UmaskGuard(mode_t mask) : old_(::umask(mask)) {}
    ~UmaskGuard() { ::umask(old_); }
    UmaskGuard(const UmaskGuard&) = delete;
    UmaskGuard& operator=(const UmaskGuard&) = delete;

private:
    mode_t old_;
};

// A fresh directory, removed with its contents at the end of the test.
class FileIo : public ::testing::Test {
protected:
    void SetUp() override { ASSERT_TRUE(tmp.created()) << "mkdtemp failed"; }

    TempDir tmp{"attnviz_file_io"};
    const fs::path dir = tmp.path();
};

TEST_F(FileIo, WriteThenRead) {
    const fs::path p = dir / "a.json";
    const std::string text = std::string("first line\nsecond \xE2\x81\xBD line\n") + std::string(1, '\0') + "after nul";
    EXPECT_TRUE(write_file_atomic(p.string(), text).empty());
    EXPECT_EQ(slurp(p), text);
    const Result<std::string> r = read_file(p.string());
    ASSERT_TRUE(r);
    EXPECT_EQ(*r.value, text);
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"a.json"}));  // no temporary file left
}

TEST_F(FileIo, Replaces) {
    const fs::path p = dir / "a.json";
    {
        std::ofstream out(p, std::ios::binary);
        out << "an old and much longer content that must disappear entirely";
    }
    EXPECT_TRUE(write_file_atomic(p.string(), "new").empty());
    EXPECT_EQ(slurp(p), "new");
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"a.json"}));
    EXPECT_TRUE(write_file_atomic(p.string(), "").empty());
    EXPECT_EQ(slurp(p), "");
    EXPECT_EQ(fs::file_size(p), 0u);
}

TEST_F(FileIo, LargeFile) {
    const fs::path p = dir / "big.txt";
    std::string text(3 * 1024 * 1024 + 7, 'x');
    for (size_t i = 0; i < text.size(); i += 4097) text[i] = static_cast<char>('a' + i % 26);
    EXPECT_TRUE(write_file_atomic(p.string(), text).empty());
    const Result<std::string> r = read_file(p.string());
    ASSERT_TRUE(r);
    EXPECT_EQ(*r.value, text);
}

// A reader's own limit: a file of exactly the limit is read, one byte more is refused by its size,
// and a sparse 900 MB file is refused before any of it is read (its size from the file system).
TEST_F(FileIo, AFileOverAReadersLimitIsRefusedByItsSizeUnread) {
    const fs::path at = dir / "at.txt";
    write_plain(at, std::string(1000, 'a'));
    const Result<std::string> read_at = read_file(at.string(), 1000, "a test file");
    ASSERT_TRUE(read_at) << all_text(read_at.problems);
    EXPECT_EQ(read_at.value->size(), 1000u);
    EXPECT_FALSE(is_over_limit(read_at.problems));

    const Result<std::string> over = read_file(at.string(), 999, "a test file");
    ASSERT_FALSE(over);
    EXPECT_TRUE(one_problem(over.problems, at.string(), "is 1000 bytes, over the limit of 999 for a test file"));
    EXPECT_TRUE(is_over_limit(over.problems));

    const fs::path huge = dir / "huge.json";
    {
        std::ofstream out(huge, std::ios::binary);
        out << "{";
    }
    fs::resize_file(huge, 900'000'000);  // sparse: no disk, and no memory unless read
    const Result<std::string> refused = read_file(huge.string(), 4u << 20, "a lesson");
    ASSERT_FALSE(refused);
    EXPECT_TRUE(
        one_problem(refused.problems, huge.string(), "is 900000000 bytes, over the limit of 4194304 for a lesson"));
    EXPECT_TRUE(is_over_limit(refused.problems));

    // Other failures are not the limit's.
    const Result<std::string> missing = read_file((dir / "missing").string(), 10, "a test file");
    ASSERT_FALSE(missing);
    EXPECT_FALSE(is_over_limit(missing.problems));
    // A limit above the general one (1 GiB) is held to the general one.
    fs::resize_file(huge, 2'000'000'000);
    const Result<std::string> general = read_file(huge.string(), std::uintmax_t{1} << 40, "a big file");
    EXPECT_TRUE(one_problem(general.problems, huge.string(),
                            "is 2000000000 bytes, over the limit of 1073741824 for a big file"));
}

TEST_F(FileIo, ProducedPiecesAreWrittenInOrder) {
    const fs::path p = dir / "pieces.txt";
    write_plain(p, "old");
    int pieces = 0;
    const Problems problems = write_file_atomic(p.string(), [&](const TextSink& sink) {
        for (int k = 0; k < 1000; ++k) {
            ASSERT_TRUE(sink(std::to_string(k) + ","));
            ++pieces;
        }
    });
    EXPECT_TRUE(problems.empty());
    EXPECT_EQ(pieces, 1000);
    std::string expected;
    for (int k = 0; k < 1000; ++k) expected += std::to_string(k) + ",";
    EXPECT_EQ(slurp(p), expected);
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"pieces.txt"}));
}

TEST_F(FileIo, AFailedPieceStopsTheProducerAndKeepsTheOldFile) {
    const fs::path p = dir / "pieces.txt";
    write_plain(p, "old content");
    rlimit old_limit{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    struct sigaction ignore {
    }, old_action{};
    ignore.sa_handler = SIG_IGN;
    ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &old_action), 0);
    rlimit small = old_limit;
    small.rlim_cur = 1000;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    int accepted = 0, offered = 0;
    const Problems problems = write_file_atomic(p.string(), [&](const TextSink& sink) {
        for (int k = 0; k < 100; ++k) {
            ++offered;
            if (!sink(std::string(300, 'x'))) return;  // the producer stops at the first refusal
            ++accepted;
        }
    });
    ::setrlimit(RLIMIT_FSIZE, &old_limit);
    ::sigaction(SIGXFSZ, &old_action, nullptr);
    EXPECT_TRUE(one_problem(problems, p.string(), "cannot write: File too large"));
    EXPECT_EQ(accepted, 3);  // 900 bytes fit, the fourth piece does not
    EXPECT_EQ(offered, 4);
    EXPECT_EQ(slurp(p), "old content");
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"pieces.txt"}));
}

TEST_F(FileIo, MissingDirectoryFailsCleanly) {
    const fs::path p = dir / "no_such_dir" / "a.json";
    const Problems problems = write_file_atomic(p.string(), "text");
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].path, p.string());
    EXPECT_FALSE(problems[0].message.empty());
    EXPECT_FALSE(fs::exists(p));
    EXPECT_FALSE(fs::exists(dir / "no_such_dir"));
    EXPECT_TRUE(entries(dir).empty());  // no temporary file anywhere
}

TEST_F(FileIo, DirectoryAsTargetFailsAndLeavesNothing) {
    fs::create_directory(dir / "target");
    const Problems problems = write_file_atomic((dir / "target").string(), "text");
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_EQ(problems[0].path, (dir / "target").string());
    EXPECT_TRUE(fs::is_directory(dir / "target"));
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"target"}));
}

TEST_F(FileIo, ReadMissingFile) {
    const fs::path p = dir / "absent.json";
    const Result<std::string> r = read_file(p.string());
    EXPECT_FALSE(r);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_EQ(r.problems[0].path, p.string());
    EXPECT_NE(r.problems[0].message.find("No such file"), std::string::npos) << r.problems[0].message;
}

TEST_F(FileIo, ReadDirectory) {
    const Result<std::string> r = read_file(dir.string());
    EXPECT_FALSE(r);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_EQ(r.problems[0].path, dir.string());
}

TEST_F(FileIo, ReadEmptyFile) {
    const fs::path p = dir / "empty";
    { std::ofstream out(p); }
    const Result<std::string> r = read_file(p.string());
    ASSERT_TRUE(r);
    EXPECT_EQ(*r.value, "");
}

TEST_F(FileIo, RelativePathInCurrentDirectory) {
    const fs::path old = fs::current_path();
    fs::current_path(dir);
    const Problems problems = write_file_atomic("rel.txt", "relative");
    fs::current_path(old);
    EXPECT_TRUE(problems.empty());
    EXPECT_EQ(slurp(dir / "rel.txt"), "relative");
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"rel.txt"}));
}

// ---------------------------------------------------------------------------------------------
// The temporary file: unpredictable name, created exclusively, never through a planted symlink

TEST_F(FileIo, TempNamesAreBesideTheTargetAndUnpredictable) {
    const std::string target = (dir / "a.json").string();
    const std::string a = temp_path_beside(target), b = temp_path_beside(target);
    EXPECT_NE(a, b);
    for (const std::string& t : {a, b}) {
        EXPECT_EQ(fs::path(t).parent_path(), dir) << t;
        const std::string name = fs::path(t).filename().string();
        ASSERT_EQ(name.rfind(".a.json.tmp-", 0), 0u) << name;
        const std::string suffix = name.substr(std::string(".a.json.tmp-").size());
        EXPECT_EQ(suffix.size(), 16u) << name;  // 64 bits
        EXPECT_EQ(suffix.find_first_not_of("0123456789abcdef"), std::string::npos) << name;
    }
    EXPECT_EQ(fs::path(temp_path_beside("rel.txt")).parent_path(), fs::path("."));
    EXPECT_EQ(temp_path_beside("/x").rfind("/.x.tmp-", 0), 0u);
    // A name at NAME_MAX still gives a temporary name that fits.
    const std::string longest(255, 'n');
    EXPECT_LE(fs::path(temp_path_beside((dir / longest).string())).filename().string().size(), 255u);
}

TEST_F(FileIo, PlantedSymlinkAtTheTempNameCannotRedirect) {
    const fs::path victim = dir / "victim";
    write_plain(victim, "precious");
    const fs::path planted = dir / ".a.json.tmp-0123456789abcdef";
    fs::create_symlink(victim, planted);
    errno = 0;
    const int fd = create_exclusive(planted.string());
    EXPECT_EQ(fd, -1);
    EXPECT_EQ(errno, EEXIST);
    if (fd >= 0) ::close(fd);
    EXPECT_EQ(slurp(victim), "precious");
    EXPECT_TRUE(fs::is_symlink(planted));

    // A dangling link does not make the file it names either.
    const fs::path dangling = dir / ".b.json.tmp-fedcba9876543210";
    fs::create_symlink(dir / "would_be_created", dangling);
    errno = 0;
    const int fd2 = create_exclusive(dangling.string());
    EXPECT_EQ(fd2, -1);
    EXPECT_EQ(errno, EEXIST);
    if (fd2 >= 0) ::close(fd2);
    EXPECT_FALSE(fs::exists(dir / "would_be_created"));

    // A plain existing file is not truncated.
    write_plain(dir / "existing", "keep");
    EXPECT_EQ(create_exclusive((dir / "existing").string()), -1);
    EXPECT_EQ(slurp(dir / "existing"), "keep");

    const int fd3 = create_exclusive((dir / "fresh").string());
    ASSERT_GE(fd3, 0);
    ::close(fd3);
    EXPECT_TRUE(fs::is_regular_file(dir / "fresh"));
}

TEST_F(FileIo, NoTemporaryFileLeftAfterSuccess) {
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(write_file_atomic((dir / "a.json").string(), std::to_string(i)).empty());
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"a.json"}));
    EXPECT_EQ(slurp(dir / "a.json"), "19");
}

// ---------------------------------------------------------------------------------------------
// Symbolic links are written through

TEST_F(FileIo, SymlinkIsWrittenThroughAndKeepsTargetMode) {
    fs::create_directory(dir / "real");
    fs::create_directory(dir / "links");
    const fs::path file = dir / "real" / "session.json";
    write_plain(file, "old");
    ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
    // links/b -> links/a -> ../real/session.json: a relative link is relative to its own directory.
    fs::create_symlink("../real/session.json", dir / "links" / "a");
    fs::create_symlink("a", dir / "links" / "b");

    const fs::path link = dir / "links" / "b";
    const Problems problems = write_file_atomic(link.string(), "new text");
    EXPECT_TRUE(problems.empty()) << all_text(problems);
    EXPECT_EQ(slurp(file), "new text");
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_TRUE(fs::is_symlink(dir / "links" / "a"));
    EXPECT_EQ(fs::read_symlink(link), fs::path("a"));
    EXPECT_TRUE(S_ISREG(lmode(file)));
    EXPECT_EQ(perms(file), 0600u);
    // The temporary file went beside the real file and is gone; nothing new beside the links.
    EXPECT_EQ(entries(dir / "real"), (std::vector<std::string>{"session.json"}));
    EXPECT_EQ(entries(dir / "links"), (std::vector<std::string>{"a", "b"}));
}

TEST_F(FileIo, AbsoluteSymlinkIsWrittenThrough) {
    const fs::path file = dir / "target.json";
    write_plain(file, "old");
    fs::create_symlink(file, dir / "link.json");
    EXPECT_TRUE(write_file_atomic((dir / "link.json").string(), "new").empty());
    EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
    EXPECT_EQ(slurp(file), "new");
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"link.json", "target.json"}));
}

TEST_F(FileIo, DanglingSymlinkCreatesTheFileItNames) {
    fs::create_symlink("made.json", dir / "link.json");
    const UmaskGuard mask(022);
    const Problems problems = write_file_atomic((dir / "link.json").string(), "made");
    EXPECT_TRUE(problems.empty()) << all_text(problems);
    EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
    EXPECT_TRUE(S_ISREG(lmode(dir / "made.json")));
    EXPECT_EQ(slurp(dir / "made.json"), "made");
    EXPECT_EQ(perms(dir / "made.json"), 0644u);
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"link.json", "made.json"}));
}

TEST_F(FileIo, SymlinkLoopIsRefused) {
    fs::create_symlink("b", dir / "a");
    fs::create_symlink("a", dir / "b");
    fs::create_symlink("self", dir / "self");
    // A loop that never repeats a name as text: c -> ./d, d -> ./c.
    fs::create_symlink("./d", dir / "c");
    fs::create_symlink("./c", dir / "d");
    for (const char* name : {"a", "self", "c"}) {
        const fs::path p = dir / name;
        EXPECT_TRUE(one_problem(write_file_atomic(p.string(), "x"), p.string(), "loop")) << name;
    }
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"a", "b", "c", "d", "self"}));
    for (const char* name : {"a", "b", "c", "d", "self"}) EXPECT_TRUE(fs::is_symlink(dir / name)) << name;
}

TEST_F(FileIo, LongSymlinkChainIsRefused) {
    // 41 links in a row: one more than the limit.
    write_plain(dir / "end", "old");
    fs::create_symlink("end", dir / "l0");
    for (int i = 1; i <= 40; ++i) fs::create_symlink("l" + std::to_string(i - 1), dir / ("l" + std::to_string(i)));
    const fs::path top = dir / "l40";
    EXPECT_TRUE(one_problem(write_file_atomic(top.string(), "x"), top.string(), "more than 40 symbolic links"));
    EXPECT_EQ(slurp(dir / "end"), "old");
    // 40 are fine.
    EXPECT_TRUE(write_file_atomic((dir / "l39").string(), "new").empty());
    EXPECT_EQ(slurp(dir / "end"), "new");
}

TEST_F(FileIo, SymlinkToReadOnlyFileIsRefusedNamingBoth) {
    write_plain(dir / "ro.json", "old");
    ASSERT_EQ(::chmod((dir / "ro.json").c_str(), 0444), 0);
    fs::create_symlink("ro.json", dir / "link.json");
    const fs::path link = dir / "link.json";
    const Problems problems = write_file_atomic(link.string(), "new");
    EXPECT_TRUE(one_problem(problems, link.string(), "is read-only"));
    EXPECT_TRUE(one_problem(problems, link.string(), (dir / "ro.json").string()));
    EXPECT_EQ(slurp(dir / "ro.json"), "old");
}

// ---------------------------------------------------------------------------------------------
// Targets that are not regular files are never replaced

TEST_F(FileIo, CharacterDeviceIsWrittenAndStaysADevice) {
    // A private node with /dev/null's device number: the same behaviour, at no risk to the system's.
    const fs::path node = dir / "null";
    if (::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) GTEST_SKIP() << "cannot mknod here";
    ASSERT_EQ(::chmod(node.c_str(), 0666), 0);  // mknod applied the umask
    const UmaskGuard mask(022);
    EXPECT_TRUE(write_file_atomic(node.string(), "discarded").empty());
    EXPECT_TRUE(S_ISCHR(lmode(node)));
    EXPECT_EQ(perms(node), 0666u);
    fs::create_symlink("null", dir / "link");
    EXPECT_TRUE(write_file_atomic((dir / "link").string(), "discarded").empty());
    EXPECT_TRUE(fs::is_symlink(dir / "link"));
    EXPECT_TRUE(S_ISCHR(lmode(node)));
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"link", "null"}));
}

TEST_F(FileIo, DevNullIsWrittenAndStaysADevice) {
    // Were /dev/null already a regular file, writing to it would put text in it; say so instead.
    ASSERT_TRUE(S_ISCHR(lmode("/dev/null"))) << "/dev/null is not a character device on this machine";
    ASSERT_TRUE(private_node_survives(dir, makedev(1, 3)));
    EXPECT_TRUE(write_file_atomic("/dev/null", "discarded").empty());
    EXPECT_TRUE(S_ISCHR(lmode("/dev/null")));
    // Through a symlink too; the link stays.
    fs::create_symlink("/dev/null", dir / "null");
    EXPECT_TRUE(write_file_atomic((dir / "null").string(), "discarded").empty());
    EXPECT_TRUE(fs::is_symlink(dir / "null"));
    EXPECT_TRUE(S_ISCHR(lmode("/dev/null")));
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"null"}));
}

TEST_F(FileIo, DevFullGivesNoSpaceAndStaysADevice) {
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
    ASSERT_TRUE(S_ISCHR(lmode("/dev/full"))) << "/dev/full is not a character device on this machine";
    ASSERT_TRUE(private_node_survives(dir, makedev(1, 7)));
    EXPECT_TRUE(
        one_problem(write_file_atomic("/dev/full", "text"), "/dev/full", "cannot write: No space left on device"));
    EXPECT_TRUE(S_ISCHR(lmode("/dev/full")));
}

TEST_F(FileIo, FifoWithoutReaderIsRefusedPromptly) {
    const fs::path fifo = dir / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // Should the write wait for a reader, one comes after 5 s, so the test fails instead of hanging.
    std::atomic<bool> done{false};
    std::thread watchdog([&] {
        for (int i = 0; i < 50 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (done) return;
        const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        if (fd >= 0) ::close(fd);
    });
    const auto start = std::chrono::steady_clock::now();
    const Problems problems = write_file_atomic(fifo.string(), "text");
    const auto took = std::chrono::steady_clock::now() - start;
    done = true;
    watchdog.join();
    EXPECT_TRUE(one_problem(problems, fifo.string(), "is a pipe (FIFO) with no reader; nothing was written"));
    EXPECT_LT(took, std::chrono::seconds(2));
    EXPECT_TRUE(S_ISFIFO(lmode(fifo)));
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"pipe"}));
}

TEST_F(FileIo, FifoWithReaderIsWrittenDirectly) {
    const fs::path fifo = dir / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    ASSERT_GE(reader, 0);
    const Problems problems = write_file_atomic(fifo.string(), "through the pipe");
    EXPECT_TRUE(problems.empty()) << all_text(problems);
    char buf[64] = {};
    const ssize_t n = ::read(reader, buf, sizeof buf);
    ::close(reader);
    EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "through the pipe");
    EXPECT_TRUE(S_ISFIFO(lmode(fifo)));
}

TEST_F(FileIo, FifoWhoseReaderLeavesGivesAnErrorNotASignal) {
    const fs::path fifo = dir / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // The reader is there when the write starts, reads nothing, and leaves while the writer waits
    // on the full pipe: the write gets EPIPE, and the SIGPIPE that comes with it must not end the
    // test program (it would, with the default action).
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    ASSERT_GE(reader, 0);
    std::thread leaver([reader] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        ::close(reader);
    });
    const Problems problems = write_file_atomic(fifo.string(), std::string(4 << 20, 'x'));
    leaver.join();
    EXPECT_TRUE(one_problem(problems, fifo.string(), "cannot write: Broken pipe"));
    EXPECT_TRUE(S_ISFIFO(lmode(fifo)));
}

TEST_F(FileIo, PipeBehindProcFdIsWrittenDirectly) {
    // /dev/stdout leads to /proc/self/fd/1, whose link text for a pipe is "pipe:[N]", not a path:
    // the kernel follows it, and the pipe is written like a FIFO.
    int ends[2];
    ASSERT_EQ(::pipe(ends), 0);
    const std::string path = "/proc/self/fd/" + std::to_string(ends[1]);
    const Problems problems = write_file_atomic(path, "to the pipe");
    ::close(ends[1]);
    EXPECT_TRUE(problems.empty()) << all_text(problems);
    char buf[64] = {};
    const ssize_t n = ::read(ends[0], buf, sizeof buf);
    ::close(ends[0]);
    EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "to the pipe");
}

TEST_F(FileIo, DirectoryIsRefusedByName) {
    fs::create_directory(dir / "target");
    const fs::path target = dir / "target";
    EXPECT_TRUE(one_problem(write_file_atomic(target.string(), "x"), target.string(), "is a directory, not a file"));
    fs::create_symlink("target", dir / "link");
    const fs::path link = dir / "link";
    EXPECT_TRUE(one_problem(write_file_atomic(link.string(), "x"), link.string(), "is a directory"));
    EXPECT_TRUE(one_problem(write_file_atomic(target.string() + "/", "x"), target.string() + "/", "is a directory"));
    EXPECT_TRUE(one_problem(write_file_atomic((dir / "nothing/").string(), "x"), (dir / "nothing/").string(),
                            "names a directory"));
    EXPECT_TRUE(fs::is_directory(target));
    EXPECT_TRUE(entries(target).empty());
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"link", "target"}));
}

TEST_F(FileIo, SocketIsRefusedByName) {
    const fs::path sock = dir / "sock";
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    ASSERT_LT(sock.string().size(), sizeof addr.sun_path);
    std::strcpy(addr.sun_path, sock.c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    const Problems problems = write_file_atomic(sock.string(), "x");
    ::close(fd);
    EXPECT_TRUE(one_problem(problems, sock.string(), "is a socket"));
    EXPECT_TRUE(S_ISSOCK(lmode(sock)));
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"sock"}));
}

TEST_F(FileIo, BlockDeviceIsRefusedByName) {
    // A node with a device number from the range for local use, so that even a wrong open reaches
    // no real disk.
    const fs::path node = dir / "disk";
    if (::mknod(node.c_str(), S_IFBLK | 0600, makedev(240, 77)) != 0) GTEST_SKIP() << "cannot mknod here";
    EXPECT_TRUE(one_problem(write_file_atomic(node.string(), "x"), node.string(), "is a block device"));
    EXPECT_TRUE(S_ISBLK(lmode(node)));
}

// ---------------------------------------------------------------------------------------------
// Read-only targets, modes and owners

TEST_F(FileIo, ReadOnlyTargetIsRefusedAndUnchanged) {
    const fs::path p = dir / "ro.json";
    write_plain(p, "old");
    ASSERT_EQ(::chmod(p.c_str(), 0444), 0);
    // Root may write anywhere, yet a file with no write bit at all is still read-only.
    EXPECT_TRUE(one_problem(write_file_atomic(p.string(), "new"), p.string(), "is read-only; nothing was written"));
    EXPECT_EQ(slurp(p), "old");
    EXPECT_EQ(perms(p), 0444u);
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"ro.json"}));
}

TEST_F(FileIo, ReplaceKeepsTheMode) {
    const fs::path p = dir / "private.json";
    for (const mode_t mode : {mode_t{0600}, mode_t{0640}, mode_t{0755}, mode_t{0200}}) {
        write_plain(p, "old");
        ASSERT_EQ(::chmod(p.c_str(), mode), 0);
        const UmaskGuard mask(022);  // would give 0644 if the mode were not carried over
        const Problems problems = write_file_atomic(p.string(), "new");
        EXPECT_TRUE(problems.empty()) << all_text(problems);
        EXPECT_EQ(perms(p), mode) << std::oct << mode;
        ASSERT_EQ(::chmod(p.c_str(), 0600), 0);
        EXPECT_EQ(slurp(p), "new");
    }
}

TEST_F(FileIo, ReplaceKeepsTheOwnerWhenRoot) {
    if (::geteuid() != 0) GTEST_SKIP() << "only root can give a file away";
    const fs::path p = dir / "owned.json";
    write_plain(p, "old");
    ASSERT_EQ(::chown(p.c_str(), 4321, 4322), 0);
    ASSERT_EQ(::chmod(p.c_str(), 0640), 0);
    EXPECT_TRUE(write_file_atomic(p.string(), "new").empty());
    struct stat st {};
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 4321u);
    EXPECT_EQ(st.st_gid, 4322u);
    EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST_F(FileIo, NewFileGetsTheUmask) {
    for (const mode_t mask : {mode_t{022}, mode_t{077}, mode_t{002}, mode_t{0}}) {
        const fs::path p = dir / ("new" + std::to_string(mask));
        const UmaskGuard guard(mask);
        EXPECT_TRUE(write_file_atomic(p.string(), "x").empty());
        EXPECT_EQ(perms(p), 0666u & ~mask) << std::oct << mask;
    }
}

TEST_F(FileIo, OwnerOnlyFilesAre0600WhateverTheUmaskOrTheOldFile) {
    const UmaskGuard guard(0);
    const fs::path fresh = dir / "fresh", old = dir / "old";
    write_plain(old, "old");
    ASSERT_EQ(::chmod(old.c_str(), 0644), 0);
    EXPECT_TRUE(write_file_atomic(fresh.string(), "x", FileMode::owner_only).empty());
    EXPECT_TRUE(write_file_atomic(old.string(), "new", FileMode::owner_only).empty());
    EXPECT_EQ(perms(fresh), 0600u);
    EXPECT_EQ(perms(old), 0600u);
    EXPECT_EQ(slurp(old), "new");
}

// ---------------------------------------------------------------------------------------------
// fs.protected_symlinks

TEST(ProtectedSymlinks, ALinkInAStickyWorldWritableFolderIsFollowedOnlyForItsOwnerOrTheFolders) {
    const mode_t tmp_mode = S_IFDIR | S_ISVTX | 0777;  // /tmp
    const uid_t root = 0, alice = 1000, mallory = 1001;
    // In /tmp (owned by root): a link of mallory's is refused to alice and to root.
    EXPECT_FALSE(may_follow_link(mallory, root, tmp_mode, alice));
    EXPECT_FALSE(may_follow_link(mallory, root, tmp_mode, root));
    // Alice's own link, or the folder owner's (root's), is followed.
    EXPECT_TRUE(may_follow_link(alice, root, tmp_mode, alice));
    EXPECT_TRUE(may_follow_link(root, root, tmp_mode, alice));
    // A sticky folder of mallory's: her links there are the folder owner's.
    EXPECT_TRUE(may_follow_link(mallory, mallory, tmp_mode, alice));
    // Not sticky, or not writable by all: the rule does not apply.
    EXPECT_TRUE(may_follow_link(mallory, root, S_IFDIR | 0777, alice));
    EXPECT_TRUE(may_follow_link(mallory, root, S_IFDIR | S_ISVTX | 0775, alice));
    EXPECT_TRUE(may_follow_link(mallory, root, S_IFDIR | 0755, root));
}

TEST_F(FileIo, ALinkAnotherUserPlantedInAStickyFolderIsNotFollowed) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a link to another user";
    // A sticky, world-writable folder like /tmp, owned by us, and a link in it owned by another
    // user, leading to a file of ours.
    const fs::path shared = dir / "shared", target = dir / "precious.json", link = shared / "x.json";
    fs::create_directory(shared);
    ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
    write_plain(target, "precious");
    fs::create_symlink(target, link);
    ASSERT_EQ(::lchown(link.c_str(), 4321, 4321), 0);
    EXPECT_TRUE(one_problem(write_file_atomic(link.string(), "overwritten"), link.string(),
                            "is a symbolic link in a sticky, world-writable folder (" + shared.string() +
                                ") owned by neither you nor the folder's owner (uid 4321)"));
    EXPECT_EQ(slurp(target), "precious");
    EXPECT_TRUE(fs::is_symlink(link));
    // The same link owned by the folder's owner, or a link of ours, is written through.
    ASSERT_EQ(::lchown(link.c_str(), 0, 0), 0);
    EXPECT_TRUE(write_file_atomic(link.string(), "ours").empty());
    EXPECT_EQ(slurp(target), "ours");
    // A dangling link of another user's does not create the file it names either; nor does one
    // reached through a link of ours.
    const fs::path dangling = shared / "d.json", via = dir / "via.json";
    fs::create_symlink(dir / "created.json", dangling);
    ASSERT_EQ(::lchown(dangling.c_str(), 4321, 4321), 0);
    EXPECT_FALSE(write_file_atomic(dangling.string(), "x").empty());
    fs::create_symlink(dangling, via);
    EXPECT_TRUE(one_problem(write_file_atomic(via.string(), "x"), via.string(),
                            dangling.string() + " is a symbolic link in a sticky, world-writable folder"));
    EXPECT_FALSE(fs::exists(dir / "created.json"));
}

TEST_F(FileIo, CanonicalPathsAreAbsoluteFromAnyFolder) {
    const fs::path before = fs::current_path();
    fs::create_directory(dir / "a");
    fs::create_directory_symlink(dir / "a", dir / "link");
    fs::current_path(dir / "link");
    const std::string p = canonical_path("notes.json"), q = canonical_path("../a/./notes.json");
    fs::current_path(before);
    const std::string real = (fs::canonical(dir / "a") / "notes.json").string();
    EXPECT_EQ(p, real);
    EXPECT_EQ(q, real);
    EXPECT_EQ(canonical_path(""), "");
    EXPECT_EQ(canonical_path(real), real);
}

// ---------------------------------------------------------------------------------------------
// Failures leave the old file

TEST_F(FileIo, FailedWriteKeepsOldFileAndLeavesNoTemp) {
    const fs::path p = dir / "a.json";
    write_plain(p, "old content");
    ASSERT_EQ(::chmod(p.c_str(), 0600), 0);
    // Files may grow to 1000 bytes only; SIGXFSZ ignored so that write() fails with EFBIG.
    rlimit old_limit{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    struct sigaction ignore {
    }, old_action{};
    ignore.sa_handler = SIG_IGN;
    ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &old_action), 0);
    rlimit small = old_limit;
    small.rlim_cur = 1000;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    const Problems problems = write_file_atomic(p.string(), std::string(5000, 'x'));
    ::setrlimit(RLIMIT_FSIZE, &old_limit);
    ::sigaction(SIGXFSZ, &old_action, nullptr);

    EXPECT_TRUE(one_problem(problems, p.string(), "cannot write: File too large"));
    EXPECT_EQ(slurp(p), "old content");
    EXPECT_EQ(perms(p), 0600u);
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"a.json"}));
}

TEST_F(FileIo, EmptyPathIsRefused) {
    EXPECT_TRUE(one_problem(write_file_atomic("", "x"), "", "no file name given"));
    const Result<std::string> r = read_file("");
    ASSERT_FALSE(r);
    EXPECT_TRUE(one_problem(r.problems, "", "no file name given"));
}

TEST_F(FileIo, ReadRefusesFifoWithoutWaiting) {
    const fs::path fifo = dir / "pipe";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const Result<std::string> r = read_file(fifo.string());
    ASSERT_FALSE(r);
    EXPECT_TRUE(one_problem(r.problems, fifo.string(), "not a regular file"));
}

TEST_F(FileIo, ReadThroughSymlink) {
    write_plain(dir / "real", "content");
    fs::create_symlink("real", dir / "link");
    const Result<std::string> r = read_file((dir / "link").string());
    ASSERT_TRUE(r);
    EXPECT_EQ(*r.value, "content");
}

}  // namespace
}  // namespace attnviz::core

TEST(ReadFile, RefusesDevicesAndDirectories) {
    const auto dev = attnviz::core::read_file("/dev/zero");  // would never end
    ASSERT_FALSE(dev);
    EXPECT_EQ(dev.problems[0].path, "/dev/zero");
    EXPECT_NE(dev.problems[0].message.find("not a regular file"), std::string::npos);
    const auto dir = attnviz::core::read_file("/tmp");
    ASSERT_FALSE(dir);
    EXPECT_NE(dir.problems[0].message.find("directory"), std::string::npos);
}
