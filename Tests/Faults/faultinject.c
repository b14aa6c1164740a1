// faultinject.so: makes chosen file-system calls of pagesyncd fail, for the journal's fault tests.
//
// Built by the tests (Tests/EndToEndTests/Support/FaultShim.swift) and scripts/torture:
//   cc -shared -fPIC -O2 -o faultinject.so Tests/Faults/faultinject.c -ldl -lpthread
// and loaded with LD_PRELOAD. Only calls on files under PAGESYNC_FAULT_PATH count (the state
// directory): descriptors are tracked from the open that named the path to their close.
//
// PAGESYNC_FAULT        comma-separated faults, each OP:NTH[:ERRNO[:MODE]]
//   OP     pwrite | fdatasync | fsync | dirsync (fsync of a directory) | rename | ftruncate | open
//   NTH    which call of OP on tracked files fails first (1 = the first)
//   ERRNO  EIO (default), ENOSPC, EDQUOT, EINTR, EROFS
//   MODE   once (default) | always (every call from NTH on) | short (pwrite: the call writes
//          half of its bytes, rounded down to a 4 KiB page when it can be, and returns that;
//          the next pwrite fails with ERRNO) | P% (every call from NTH on fails with
//          probability P percent, e.g. 2%)
// PAGESYNC_FAULT_KILL   SIGKILL the process this many tracked calls after the first injected
//                       fault (0: instead of returning from the faulty call). Unset: never.
// PAGESYNC_FAULT_LOG    a file to which one line per injected fault is appended.
// PAGESYNC_FAULT_SEED   seed of the P% mode (default 1).
// PAGESYNC_FAULT_TRACE  comma-separated operations whose every tracked call is logged as
//                       "call OP PATH" (PAGESYNC_FAULT_LOG), to check that a call is made.
// PAGESYNC_FAULT_FREE   fstatvfs of a tracked file reports at most this many bytes free: a
//                       small disk, so that the journal is compacted often.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

enum op { OP_PWRITE, OP_FDATASYNC, OP_FSYNC, OP_DIRSYNC, OP_RENAME, OP_FTRUNCATE, OP_OPEN, OP_COUNT };
static const char *op_names[OP_COUNT] = {"pwrite", "fdatasync", "fsync", "dirsync", "rename", "ftruncate", "open"};

enum mode { MODE_ONCE, MODE_ALWAYS, MODE_SHORT, MODE_PROB };

struct fault {
    enum op op;
    long nth;
    int err;
    enum mode mode;
    int percent;
    int pending_short;  // a short write was returned: the next pwrite fails
};

#define MAX_FAULTS 16
#define MAX_FDS 65536
static struct fault faults[MAX_FAULTS];
static int fault_count;
static long calls[OP_COUNT];
static char tracked[MAX_FDS];
static char prefix[4096];
static size_t prefix_len;
static long kill_after = -1;   // -1: never
static long since_injection = -1;  // -1: nothing injected yet
static char log_path[4096];
static unsigned int seed = 1;
static long long fake_free = -1;
static char trace_ops[256];
static int ready;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void normalize(const char *path, char *out, size_t size);

static int errno_named(const char *name) {
    if (!strcmp(name, "EIO")) return EIO;
    if (!strcmp(name, "ENOSPC")) return ENOSPC;
    if (!strcmp(name, "EDQUOT")) return EDQUOT;
    if (!strcmp(name, "EINTR")) return EINTR;
    if (!strcmp(name, "EROFS")) return EROFS;
    return atoi(name) > 0 ? atoi(name) : EIO;
}

static void setup(void) {
    if (ready) return;
    ready = 1;
    const char *path = getenv("PAGESYNC_FAULT_PATH");
    if (path) {
        normalize(path, prefix, sizeof prefix);
        prefix_len = strlen(prefix);
        while (prefix_len > 1 && prefix[prefix_len - 1] == '/') prefix[--prefix_len] = 0;
    }
    const char *k = getenv("PAGESYNC_FAULT_KILL");
    if (k && *k) kill_after = atol(k);
    const char *l = getenv("PAGESYNC_FAULT_LOG");
    if (l) snprintf(log_path, sizeof log_path, "%s", l);
    const char *trace = getenv("PAGESYNC_FAULT_TRACE");
    if (trace) snprintf(trace_ops, sizeof trace_ops, ",%s,", trace);
    const char *free_bytes = getenv("PAGESYNC_FAULT_FREE");
    if (free_bytes && *free_bytes) fake_free = atoll(free_bytes);
    const char *s = getenv("PAGESYNC_FAULT_SEED");
    if (s) seed = (unsigned int)atol(s);
    const char *spec = getenv("PAGESYNC_FAULT");
    if (!spec) return;
    char buffer[1024];
    snprintf(buffer, sizeof buffer, "%s", spec);
    char *save = NULL;
    for (char *item = strtok_r(buffer, ",", &save); item && fault_count < MAX_FAULTS; item = strtok_r(NULL, ",", &save)) {
        struct fault f = {.nth = 1, .err = EIO, .mode = MODE_ONCE};
        char *parts[4] = {0};
        int n = 0;
        char *inner = NULL;
        for (char *p = strtok_r(item, ":", &inner); p && n < 4; p = strtok_r(NULL, ":", &inner)) parts[n++] = p;
        int known = 0;
        for (int i = 0; i < OP_COUNT; i++)
            if (parts[0] && !strcmp(parts[0], op_names[i])) { f.op = (enum op)i; known = 1; }
        if (!known) { fprintf(stderr, "faultinject: unknown operation '%s'\n", parts[0] ? parts[0] : ""); continue; }
        if (n > 1) f.nth = atol(parts[1]);
        if (n > 2) f.err = errno_named(parts[2]);
        if (n > 3) {
            if (!strcmp(parts[3], "always")) f.mode = MODE_ALWAYS;
            else if (!strcmp(parts[3], "short")) f.mode = MODE_SHORT;
            else if (strchr(parts[3], '%')) { f.mode = MODE_PROB; f.percent = atoi(parts[3]); }
        }
        faults[fault_count++] = f;
    }
}

// Copies `path` into `out` with repeated slashes collapsed ("/tmp//x" is "/tmp/x").
static void normalize(const char *path, char *out, size_t size) {
    size_t n = 0;
    for (const char *p = path; *p && n + 1 < size; p++) {
        if (*p == '/' && n > 0 && out[n - 1] == '/') continue;
        out[n++] = *p;
    }
    out[n] = 0;
}

static int under_prefix(const char *path) {
    if (!prefix_len || !path) return 0;
    char full[8192], cwd[4096];
    if (path[0] == '/') {
        normalize(path, full, sizeof full);
    } else {
        if (!getcwd(cwd, sizeof cwd)) return 0;
        char joined[8192];
        snprintf(joined, sizeof joined, "%s/%s", cwd, path);
        normalize(joined, full, sizeof full);
    }
    return !strncmp(full, prefix, prefix_len) && (full[prefix_len] == 0 || full[prefix_len] == '/');
}

static void note(const char *what, enum op op, long n, int err) {
    if (!log_path[0]) return;
    FILE *f = fopen(log_path, "a");
    if (!f) return;
    fprintf(f, "%s %s %ld %s\n", what, op_names[op], n, strerror(err));
    fclose(f);
}

// Counts a tracked call of `op`; returns the errno to fail it with (0: let it run), and in
// *short_write whether a pwrite should be cut short instead. Kills the process when asked: at the
// injected call itself (PAGESYNC_FAULT_KILL=0), or before the Kth tracked call after it.
static int decide(enum op op, int *short_write) {
    pthread_mutex_lock(&lock);
    setup();
    long n = ++calls[op];
    int err = 0, die = 0;
    if (since_injection >= 0 && kill_after > 0 && ++since_injection >= kill_after) die = 1;
    for (int i = 0; i < fault_count && !err && !die; i++) {
        struct fault *f = &faults[i];
        if (f->op != op) continue;
        if (f->pending_short) { f->pending_short = 0; err = f->err; break; }
        int hit = 0;
        switch (f->mode) {
        case MODE_ONCE: hit = n == f->nth; break;
        case MODE_ALWAYS: hit = n >= f->nth; break;
        case MODE_SHORT:
            if (n == f->nth && short_write) { *short_write = 1; f->pending_short = 1; }
            break;
        case MODE_PROB: hit = n >= f->nth && (int)(rand_r(&seed) % 100) < f->percent; break;
        }
        if (hit) err = f->err;
    }
    if (err || (short_write && *short_write)) {
        note("inject", op, n, err ? err : EIO);
        if (since_injection < 0) since_injection = 0;
        if (kill_after == 0) die = 1;
    }
    pthread_mutex_unlock(&lock);
    if (die) {
        note("kill", op, n, 0);
        kill(getpid(), SIGKILL);
    }
    return err;
}

static void track(int fd, const char *path) {
    if (fd < 0 || fd >= MAX_FDS) return;
    pthread_mutex_lock(&lock);
    setup();
    tracked[fd] = (char)under_prefix(path);
    pthread_mutex_unlock(&lock);
}

static int is_tracked(int fd) { return fd >= 0 && fd < MAX_FDS && tracked[fd]; }

#define REAL(name) static __typeof__(&name) real_##name; if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

int open(const char *path, int flags, ...) {
    REAL(open);
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); }
    setup();
    if (under_prefix(path)) {
        int d = decide(OP_OPEN, NULL);
        if (d) { errno = d; return -1; }
    }
    int fd = real_open(path, flags, mode);
    track(fd, path);
    return fd;
}

int open64(const char *path, int flags, ...) {
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); }
    return open(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...) {
    REAL(openat);
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); }
    int fd = real_openat(dirfd, path, flags, mode);
    if (path[0] == '/' || dirfd == AT_FDCWD) track(fd, path);
    return fd;
}

int close(int fd) {
    REAL(close);
    if (fd >= 0 && fd < MAX_FDS) tracked[fd] = 0;
    return real_close(fd);
}

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
    REAL(pwrite);
    if (is_tracked(fd) && count > 0) {
        int short_write = 0;
        int d = decide(OP_PWRITE, &short_write);
        if (d) { errno = d; return -1; }
        if (short_write) {
            // What the kernel does when a disk fills or a signal comes: stop at a page.
            size_t half = count / 2;
            off_t end = offset + (off_t)half;
            if (end / 4096 * 4096 > offset) half = (size_t)(end / 4096 * 4096 - offset);
            if (half == 0) half = 1;
            return real_pwrite(fd, buffer, half, offset);
        }
    }
    return real_pwrite(fd, buffer, count, offset);
}

ssize_t pwrite64(int fd, const void *buffer, size_t count, off_t offset) { return pwrite(fd, buffer, count, offset); }

// Logs "call OP PATH" when OP is traced.
static void trace_call(enum op op, int fd) {
    char needle[32];
    snprintf(needle, sizeof needle, ",%s,", op_names[op]);
    if (!log_path[0] || !strstr(trace_ops, needle)) return;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    path[n > 0 ? n : 0] = 0;
    FILE *f = fopen(log_path, "a");
    if (!f) return;
    fprintf(f, "call %s %s\n", op_names[op], path);
    fclose(f);
}

static int sync_call(int fd, enum op op, int (*real)(int)) {
    if (is_tracked(fd)) {
        trace_call(op, fd);
        int d = decide(op, NULL);
        if (d) { errno = d; return -1; }
    }
    return real(fd);
}

int fdatasync(int fd) {
    REAL(fdatasync);
    return sync_call(fd, OP_FDATASYNC, real_fdatasync);
}

int fsync(int fd) {
    REAL(fsync);
    struct stat st;
    int directory = is_tracked(fd) && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
    return sync_call(fd, directory ? OP_DIRSYNC : OP_FSYNC, real_fsync);
}

int ftruncate(int fd, off_t length) {
    REAL(ftruncate);
    if (is_tracked(fd)) {
        int d = decide(OP_FTRUNCATE, NULL);
        if (d) { errno = d; return -1; }
    }
    return real_ftruncate(fd, length);
}

int ftruncate64(int fd, off_t length) { return ftruncate(fd, length); }

int rename(const char *from, const char *to) {
    REAL(rename);
    setup();
    if (under_prefix(to)) {
        int d = decide(OP_RENAME, NULL);
        if (d) { errno = d; return -1; }
    }
    return real_rename(from, to);
}

int fstatvfs(int fd, struct statvfs *buf) {
    REAL(fstatvfs);
    int r = real_fstatvfs(fd, buf);
    if (r == 0 && is_tracked(fd)) {
        pthread_mutex_lock(&lock);
        setup();
        long long limit = fake_free;
        pthread_mutex_unlock(&lock);
        if (limit >= 0 && buf->f_frsize > 0 && (long long)(buf->f_bavail * buf->f_frsize) > limit) buf->f_bavail = (fsblkcnt_t)(limit / (long long)buf->f_frsize);
    }
    return r;
}
