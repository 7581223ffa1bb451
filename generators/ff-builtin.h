/* fusefarm: built-in farm specs and I/O profiles, named "builtin:NAME"
 * wherever a spec or profile path is taken, so the README's commands and
 * the default scenario work without any file. */
#ifndef FF_BUILTIN_H
#define FF_BUILTIN_H

/* The text of built-in kind ("spec" or "profile") NAME, or NULL.  If path
 * starts with "builtin:", *name is set to what follows. */
const char *ff_builtin_text(const char *kind, const char *name);

/* 1 if path names a built-in ("builtin:NAME"), 0 otherwise. */
int ff_is_builtin(const char *path);

/* Names of the built-ins of kind, comma-separated, for messages. */
const char *ff_builtin_names(const char *kind);

#endif
