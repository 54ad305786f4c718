/* version.h: which sweep this is: its version and the commit it was built from. */
#ifndef SWEEP_VERSION_H
#define SWEEP_VERSION_H

/* The release version ("0.1.0"). Static text. */
const char *version_string(void);
/* The commit the binary was built from (12 hex digits, "-dirty" after them when the work tree had changes),
 * or NULL when it was built outside a git work tree (an archive without COMMIT= given to make). Static. */
const char *version_commit(void);

#endif
