/* test_sha256.c: sha256_hex (libcrypto) on the FIPS 180 examples and across the padding boundaries. */
#include <stdlib.h>

#include "sha256.h"
#include "test.h"
#include "util.h"

/*
 * The first four messages are the SHA-256 examples of FIPS 180-2 (appendix B and its 896-bit one) and the
 * million 'a' of its long-message test; the digests agree with GNU coreutils' sha256sum. The 55/56/64-byte
 * messages cross the padding boundaries: 55 bytes leave room for the length in the last block, 56 do not.
 */
static void test_vectors(void)
{
	static const struct {
		const char *name, *text;
		size_t repeat;
		const char *hex;
	} v[] = {
		{ "the empty message", "", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "\"abc\"", "abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "the 448-bit message", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "the 896-bit message", "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
		  "klmnopqrlmnopqrsmnopqrstnopqrstu", 1,
		  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
		{ "a million 'a'", "a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0" },
		{ "55 bytes", "x", 55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072" },
		{ "56 bytes", "x", 56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e" },
		{ "64 bytes", "x", 64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		size_t len = strlen(v[i].text) * v[i].repeat;
		char *buf = xmalloc(len + 1), hex[65];

		for (size_t k = 0; k < v[i].repeat; k++)
			memcpy(buf + k * strlen(v[i].text), v[i].text, strlen(v[i].text));
		memset(hex, '?', sizeof(hex));
		CHECK_INT(sha256_hex(buf, len, hex), 0, v[i].name);
		CHECK_STR(hex, v[i].hex, v[i].name);
		free(buf);
	}
}

int main(void)
{
	test_vectors();
	return test_done();
}
