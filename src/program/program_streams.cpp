// The program's stdio streams (issue 26; docs/programs.md, "File
// descriptors"). A FILE that fopen returns is libc's memory on the rank that
// called it, with that rank's buffer and position: another rank cannot use
// it, and the pointer there names whatever that rank has at the address
// (the ranks' heaps start at the same addresses), so a write through it
// would corrupt that rank silently. Forwarding every stdio call to the
// opening rank would be possible but slow per character (fputc, getc); so
// streams stay with the rank that opened them, and:
//
// - the descriptor under a stream the program opens (fopen, fdopen,
//   freopen, tmpfile, popen) is one of the job's (program_descriptors.cpp):
//   fileno(f) passed to a thread on another rank works with read/write;
// - the program's stdio calls on a stream check that it is one of this
//   rank's (in libc's list of the rank's open streams); a stream of another
//   rank stops the job with a message naming the call, never reaches that
//   rank's memory. stdin, stdout and stderr are every rank's own (the same
//   address on every rank, without address randomisation): each rank's
//   output goes to the launcher, as before.
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include <cstring>
#include <mutex>
#include <unordered_set>

#include "common/log.h"
#include "program/program_descriptors.h"
#include "runtime/runtime.h"

namespace agora {
bool shim_runtime_live();  // agora_c.cpp
Runtime *api_runtime();    // agora_c.cpp
}  // namespace agora

// glibc's list of the process's open streams (exported; libio's own lock).
extern "C" {
extern FILE *_IO_list_all;
void _IO_list_lock(void);
void _IO_list_unlock(void);
}

// The real functions (see program_descriptors.cpp).
extern "C" {
FILE *__real_fopen(const char *, const char *);
FILE *__real_tmpfile(void);
FILE *__real_popen(const char *, const char *);
FILE *__real_fdopen(int, const char *);
FILE *__real_freopen(const char *, const char *, FILE *);
int __real_fclose(FILE *);
int __real_pclose(FILE *);
int __real_vfprintf(FILE *, const char *, va_list);
int __real___vfprintf_chk(FILE *, int, const char *, va_list);
int __real___isoc99_vfscanf(FILE *, const char *, va_list);
int __real_fputs(const char *, FILE *);
int __real_fputc(int, FILE *);
int __real_putc(int, FILE *);
size_t __real_fwrite(const void *, size_t, size_t, FILE *);
size_t __real_fread(void *, size_t, size_t, FILE *);
size_t __real___fread_chk(void *, size_t, size_t, size_t, FILE *);
char *__real_fgets(char *, int, FILE *);
char *__real___fgets_chk(char *, size_t, int, FILE *);
int __real_fgetc(FILE *);
int __real_getc(FILE *);
int __real_ungetc(int, FILE *);
ssize_t __real_getline(char **, size_t *, FILE *);
ssize_t __real_getdelim(char **, size_t *, int, FILE *);
int __real_fflush(FILE *);
int __real_fseek(FILE *, long, int);
int __real_fseeko(FILE *, off_t, int);
long __real_ftell(FILE *);
off_t __real_ftello(FILE *);
void __real_rewind(FILE *);
int __real_feof(FILE *);
int __real_ferror(FILE *);
void __real_clearerr(FILE *);
int __real_fileno(FILE *);
int __real_setvbuf(FILE *, char *, int, size_t);
}

namespace {

thread_local FILE *t_checked = nullptr;  // the last stream found to be this rank's

// The streams the program opened on this rank.
std::mutex g_streams_mutex;
std::unordered_set<FILE *> g_streams;

bool opened_here(FILE *f) {
  std::lock_guard<std::mutex> g(g_streams_mutex);
  return g_streams.count(f) != 0;
}

bool in_rank_list(FILE *f) {
  _IO_list_lock();
  bool found = false;
  for (FILE *p = _IO_list_all; p && !found; p = p->_chain) found = p == f;
  _IO_list_unlock();
  return found;
}

// Stops the job if f is not one of this rank's streams. The ranks' libc
// heaps start at the same addresses, so another rank's stream may have the
// address of a stream a library opened here: the job's record of the
// program's streams tells them apart.
void check_stream(FILE *f, const char *call) {
  if (!f || f == t_checked || !agora::shim_runtime_live()) return;
  bool here = f == stdin || f == stdout || f == stderr || opened_here(f);
  if (!here) {
    int owner = agora::program_stream_owner(f);
    here = (owner < 0 || owner == agora::api_runtime()->rank()) && in_rank_list(f);
  }
  if (here) {
    t_checked = f;
    return;
  }
  agora::fatal(
      "%s: the stream %p is not one of rank %d's streams: a FILE * opened (fopen) on another rank, or already "
      "closed. Streams are private to the rank that opened them; open the file in the thread that uses it, or "
      "pass fileno(stream) (descriptors are job-wide)",
      call, (void *)f, agora::api_runtime()->rank());
}

// The stream's descriptor becomes one of the job's (moved if another rank's
// has the number).
FILE *adopt_stream(FILE *f, int (*closer)(FILE *) = __real_fclose) {
  if (!f) return f;
  int fd = __real_fileno(f);
  int now = agora::program_fd_adopt(fd);
  if (now < 0) {
    int e = errno;
    closer(f);  // its descriptor is gone already
    errno = e;
    return nullptr;
  }
  if (now != fd) f->_fileno = now;
  if (agora::shim_runtime_live()) {
    {
      std::lock_guard<std::mutex> g(g_streams_mutex);
      g_streams.insert(f);
    }
    agora::program_stream_record(f, true);
  }
  t_checked = f;
  return f;
}

// Closes a stream with the bookkeeping of its descriptor.
int close_stream(FILE *f, int (*real)(FILE *)) {
  int fd = __real_fileno(f);
  if (t_checked == f) t_checked = nullptr;
  bool ours;
  {
    std::lock_guard<std::mutex> g(g_streams_mutex);
    ours = g_streams.erase(f) != 0;
  }
  if (ours) agora::program_stream_record(f, false);
  if (fd >= 0 && agora::program_fd_here(fd)) return agora::program_fd_close(fd, [f, real] { return real(f); });
  return real(f);  // a stream on a descriptor the program did not open (a library's)
}

}  // namespace

extern "C" {

FILE *__wrap_fopen(const char *path, const char *mode) { return adopt_stream(__real_fopen(path, mode)); }
FILE *__wrap_fopen64(const char *path, const char *mode) { return adopt_stream(__real_fopen(path, mode)); }
FILE *__wrap_tmpfile(void) { return adopt_stream(__real_tmpfile()); }
FILE *__wrap_tmpfile64(void) { return adopt_stream(__real_tmpfile()); }
FILE *__wrap_popen(const char *command, const char *mode) {
  return adopt_stream(__real_popen(command, mode), __real_pclose);
}
FILE *__wrap_fdopen(int fd, const char *mode) {
  if (!agora::program_fd_here(fd)) {
    agora::program_fd_refuse(fd, "fdopen");
    agora::log_error("fdopen(%d): a stream is private to its rank: open it on the rank that owns descriptor %d", fd,
                     fd);
    errno = EBADF;
    return nullptr;
  }
  return adopt_stream(__real_fdopen(fd, mode));
}
FILE *__wrap_freopen(const char *path, const char *mode, FILE *f) {
  check_stream(f, "freopen");
  int old = __real_fileno(f);
  bool ours;
  {
    std::lock_guard<std::mutex> g(g_streams_mutex);
    ours = g_streams.erase(f) != 0;
  }
  if (ours) agora::program_stream_record(f, false);
  FILE *now = __real_freopen(path, mode, f);  // closes old (glibc keeps the number when it can)
  if (old >= 0 && (!now || __real_fileno(now) != old)) agora::program_fd_forget(old);
  return adopt_stream(now);
}
FILE *__wrap_freopen64(const char *path, const char *mode, FILE *f) { return __wrap_freopen(path, mode, f); }
int __wrap_fclose(FILE *f) {
  check_stream(f, "fclose");
  return close_stream(f, __real_fclose);
}
int __wrap_pclose(FILE *f) {
  check_stream(f, "pclose");
  return close_stream(f, __real_pclose);
}

int __wrap_vfprintf(FILE *f, const char *format, va_list ap) {
  check_stream(f, "fprintf");
  return __real_vfprintf(f, format, ap);
}
int __wrap_fprintf(FILE *f, const char *format, ...) {
  check_stream(f, "fprintf");
  va_list ap;
  va_start(ap, format);
  int r = __real_vfprintf(f, format, ap);
  va_end(ap);
  return r;
}
int __wrap___vfprintf_chk(FILE *f, int flag, const char *format, va_list ap) {
  check_stream(f, "fprintf");
  return __real___vfprintf_chk(f, flag, format, ap);
}
int __wrap___fprintf_chk(FILE *f, int flag, const char *format, ...) {
  check_stream(f, "fprintf");
  va_list ap;
  va_start(ap, format);
  int r = __real___vfprintf_chk(f, flag, format, ap);
  va_end(ap);
  return r;
}
int __wrap___isoc99_vfscanf(FILE *f, const char *format, va_list ap) {
  check_stream(f, "fscanf");
  return __real___isoc99_vfscanf(f, format, ap);
}
int __wrap___isoc99_fscanf(FILE *f, const char *format, ...) {
  check_stream(f, "fscanf");
  va_list ap;
  va_start(ap, format);
  int r = __real___isoc99_vfscanf(f, format, ap);
  va_end(ap);
  return r;
}
int __wrap_fputs(const char *s, FILE *f) {
  check_stream(f, "fputs");
  return __real_fputs(s, f);
}
int __wrap_fputc(int c, FILE *f) {
  check_stream(f, "fputc");
  return __real_fputc(c, f);
}
int __wrap_putc(int c, FILE *f) {
  check_stream(f, "putc");
  return __real_putc(c, f);
}
size_t __wrap_fwrite(const void *p, size_t size, size_t n, FILE *f) {
  check_stream(f, "fwrite");
  return __real_fwrite(p, size, n, f);
}
size_t __wrap_fread(void *p, size_t size, size_t n, FILE *f) {
  check_stream(f, "fread");
  return __real_fread(p, size, n, f);
}
size_t __wrap___fread_chk(void *p, size_t buflen, size_t size, size_t n, FILE *f) {
  check_stream(f, "fread");
  return __real___fread_chk(p, buflen, size, n, f);
}
char *__wrap_fgets(char *s, int n, FILE *f) {
  check_stream(f, "fgets");
  return __real_fgets(s, n, f);
}
char *__wrap___fgets_chk(char *s, size_t buflen, int n, FILE *f) {
  check_stream(f, "fgets");
  return __real___fgets_chk(s, buflen, n, f);
}
int __wrap_fgetc(FILE *f) {
  check_stream(f, "fgetc");
  return __real_fgetc(f);
}
int __wrap_getc(FILE *f) {
  check_stream(f, "getc");
  return __real_getc(f);
}
int __wrap_ungetc(int c, FILE *f) {
  check_stream(f, "ungetc");
  return __real_ungetc(c, f);
}
ssize_t __wrap_getline(char **line, size_t *n, FILE *f) {
  check_stream(f, "getline");
  return __real_getline(line, n, f);
}
ssize_t __wrap_getdelim(char **line, size_t *n, int delim, FILE *f) {
  check_stream(f, "getdelim");
  return __real_getdelim(line, n, delim, f);
}
int __wrap_fflush(FILE *f) {
  check_stream(f, "fflush");  // fflush(NULL): every stream of this rank
  return __real_fflush(f);
}
int __wrap_fseek(FILE *f, long offset, int whence) {
  check_stream(f, "fseek");
  return __real_fseek(f, offset, whence);
}
int __wrap_fseeko(FILE *f, off_t offset, int whence) {
  check_stream(f, "fseeko");
  return __real_fseeko(f, offset, whence);
}
int __wrap_fseeko64(FILE *f, off_t offset, int whence) { return __wrap_fseeko(f, offset, whence); }
long __wrap_ftell(FILE *f) {
  check_stream(f, "ftell");
  return __real_ftell(f);
}
off_t __wrap_ftello(FILE *f) {
  check_stream(f, "ftello");
  return __real_ftello(f);
}
off_t __wrap_ftello64(FILE *f) { return __wrap_ftello(f); }
void __wrap_rewind(FILE *f) {
  check_stream(f, "rewind");
  __real_rewind(f);
}
int __wrap_feof(FILE *f) {
  check_stream(f, "feof");
  return __real_feof(f);
}
int __wrap_ferror(FILE *f) {
  check_stream(f, "ferror");
  return __real_ferror(f);
}
void __wrap_clearerr(FILE *f) {
  check_stream(f, "clearerr");
  __real_clearerr(f);
}
int __wrap_fileno(FILE *f) {
  check_stream(f, "fileno");
  return __real_fileno(f);
}
int __wrap_setvbuf(FILE *f, char *buffer, int mode, size_t size) {
  check_stream(f, "setvbuf");
  return __real_setvbuf(f, buffer, mode, size);
}

}  // extern "C"
