/* fusefarm: the farm manifest as JSON text (docs/manifest.md).
 *
 * Read-only on the farm; any number of threads at once.  The text is
 * malloc'd (the caller frees it), without a trailing newline; NULL with
 * ff_error on allocation failure.
 */
#ifndef FF_MANIFEST_H
#define FF_MANIFEST_H

struct ff_farm;

enum ff_manifest_form {
  FF_MANIFEST_INDENTED, /* 2-space indent, one member a line */
  FF_MANIFEST_COMPACT,  /* one line */
};

char *ff_manifest_text(const struct ff_farm *farm, enum ff_manifest_form form);

#endif
