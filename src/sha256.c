/* sha256.c: SHA-256 through libcrypto's EVP interface, the only file that includes openssl's headers. */
#include "sha256.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "util.h"

static int sha256_failed(char hex[65])
{
	const char *why = ERR_reason_error_string(ERR_get_error());

	hex[0] = '\0';
	return error("cannot compute a SHA-256 digest: %s", why ? why : "libcrypto failed");
}

static void sha256_text(const unsigned char *md, char hex[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
}

int sha256_hex(const void *data, size_t n, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;

	hex[0] = '\0';
	/* EVP_Digest fails only when OpenSSL cannot fetch or allocate the digest (a broken openssl.cnf). */
	if (!EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) || len != 32)
		return sha256_failed(hex);
	sha256_text(md, hex);
	return 0;
}

int sha256_file(const char *path, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE], buf[1 << 16];
	unsigned int len = 0;
	EVP_MD_CTX *ctx;
	FILE *f;
	size_t n;
	int ok;

	hex[0] = '\0';
	if (!(f = fopen(path, "rb")))
		return error("cannot read '%s': %s", path, strerror(errno));
	if (!(ctx = EVP_MD_CTX_new())) {
		fclose(f);
		return sha256_failed(hex);
	}
	ok = EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	while (ok && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		ok = EVP_DigestUpdate(ctx, buf, n);
	if (ferror(f)) {
		EVP_MD_CTX_free(ctx);
		fclose(f);
		return error("cannot read '%s'", path);
	}
	ok = ok && EVP_DigestFinal_ex(ctx, md, &len) && len == 32;
	EVP_MD_CTX_free(ctx);
	fclose(f);
	if (!ok)
		return sha256_failed(hex);
	sha256_text(md, hex);
	return 0;
}
