/* sha256.c: SHA-256 through libcrypto's EVP interface, the only file that includes openssl's headers. */
#include "sha256.h"

#include <stdio.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "util.h"

int sha256_hex(const void *data, size_t n, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;

	hex[0] = '\0';
	/* EVP_Digest fails only when OpenSSL cannot fetch or allocate the digest (a broken openssl.cnf). */
	if (!EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) || len != 32) {
		const char *why = ERR_reason_error_string(ERR_get_error());

		return error("cannot compute a SHA-256 digest: %s", why ? why : "libcrypto failed");
	}
	for (unsigned int i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return 0;
}
