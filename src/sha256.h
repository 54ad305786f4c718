/* sha256.h: SHA-256 digests as hex text (libcrypto, in sha256.c). */
#ifndef SWEEP_SHA256_H
#define SWEEP_SHA256_H

#include <stddef.h>

/* SHA-256 of n bytes into hex: 64 lowercase hex digits and a NUL. 0, or -1 after error() when libcrypto
 * cannot compute it (hex is then the empty string). */
int sha256_hex(const void *data, size_t n, char hex[65]);
/* SHA-256 of the file at path, read in pieces. 0, or -1 after error() naming the file (hex is then the
 * empty string). */
int sha256_file(const char *path, char hex[65]);

#endif
