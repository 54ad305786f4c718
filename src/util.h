/* util.h: errors, allocation that dies on failure, growable strings, hashing, time. */
#ifndef SWEEP_UTIL_H
#define SWEEP_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

/* Print "sweep: <msg>" to stderr and return -1. */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "sweep: warning: <msg>" to stderr. */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "sweep: fatal: <msg>" and exit(1). Only for out-of-memory and the like. */
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* A programmer error: print file:line and abort. Never compiled out. */
#define BUG(...) bug_at(__FILE__, __LINE__, __VA_ARGS__)
void bug_at(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

/* Allocators die on failure: callers never test for NULL. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Grow *p (of *alloc elements of size) so that it holds at least n elements. */
#define ALLOC_GROW(p, n, alloc) \
	do { if ((size_t)(n) > (size_t)(alloc)) { \
		(alloc) = (size_t)(n) > 2 * (size_t)(alloc) + 16 ? (size_t)(n) : 2 * (size_t)(alloc) + 16; \
		(p) = xrealloc((p), (alloc) * sizeof(*(p))); } } while (0)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* A growable NUL-terminated byte string. The caller owns buf after sb_detach. */
struct strbuf {
	char *buf;      /* always NUL-terminated once initialised; "" when empty */
	size_t len, alloc;
};
#define STRBUF_INIT { NULL, 0, 0 }
void sb_init(struct strbuf *sb);
void sb_release(struct strbuf *sb);       /* frees buf; sb is empty and reusable */
void sb_reset(struct strbuf *sb);         /* len = 0, keeps the memory */
void sb_grow(struct strbuf *sb, size_t extra);   /* room for extra more bytes and the NUL */
void sb_add(struct strbuf *sb, const void *data, size_t n);
void sb_adds(struct strbuf *sb, const char *s);
void sb_addc(struct strbuf *sb, char c);
/* Up to max bytes of s with control bytes as '?': text from a file or another machine made safe for a
 * terminal. printable() writes it to buf (max + 4 bytes) with "..." when s was longer, for messages. */
void sb_add_printable(struct strbuf *sb, const char *s, size_t max);
/* sb holds what a terminal shows of line[0, len): each '\r' goes back to the line's start and the text
 * after it overwrites what was there (zstd -b prints its progress so). Linear: each part is copied once. */
void sb_set_terminal(struct strbuf *sb, const char *line, size_t len);
const char *printable(char *buf, const char *s, size_t max);
/* The first line of s made printable into buf (max + 4 bytes), cut at a word's end (not inside one) with
 * "..." when over max, and "..." when more lines follow: a reason in a closing line, whole where it fits. */
const char *printable_line(char *buf, const char *s, size_t max);
/* s as one shell word: bare when it is only safe characters, else in single quotes (for the commands a
 * message tells the user to run, and job scripts). */
void sb_add_word(struct strbuf *sb, const char *s);
void sb_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
char *sb_detach(struct strbuf *sb);       /* returns buf (never NULL); sb is empty */
/* Make the folder that holds path (one level: results/ of results/x.db); -1 after error(). */
int mkdir_parent(const char *path);
/* Read a whole file into sb; -1 with error() when it cannot be read. */
int sb_read_file(struct strbuf *sb, const char *path);

/* 64-bit FNV-1a, continued from h (start with HASH64_INIT). Stable across hosts and versions. */
#define HASH64_INIT 0xcbf29ce484222325ULL
uint64_t hash64(uint64_t h, const void *data, size_t n);

/* Monotonic seconds (CLOCK_MONOTONIC) and wall-clock seconds since the epoch. */
double now_mono(void);
double now_wall(void);
/* ISO 8601 UTC for a wall time, into buf of at least 32 bytes. */
void iso_time(double wall, char *buf, size_t n);

/* Parse a whole string as a number; 0 on success, -1 (no message) otherwise. */
int parse_double(const char *s, double *out);
int parse_long(const char *s, long *out);
/* Parse a byte size: "4096", "64K", "8 MiB", "1G", "2GB" (powers of 1024); -1 when malformed. */
int parse_bytes(const char *s, double *out);

/* Levenshtein distance, for "did you mean" suggestions. */
int edit_distance(const char *a, const char *b);
/* The candidate closest to s (NULL-terminated list), or NULL when none is close. */
const char *closest_name(const char *s, const char *const *candidates);

#endif
