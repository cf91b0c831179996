/* pack.h - offline distros: one archive with everything `up` fetches (pack.c writes it, unpack.c reads it) */
#ifndef IDPMAKE_PACK_H
#define IDPMAKE_PACK_H

#include <stddef.h>

/*
 * The archive is a tar (pax) file, gzip-compressed when its name ends in
 * .gz or .tgz.  Its first member is PACK_INDEX, a text file:
 *
 *     idpmake-pack 1
 *     file XXH3 SIZE MEMBER          every other member, with its digest
 *     git COMMIT DIR URL REF PATH    a git: source at its resolved commit
 *     chart FILE REPO NAME VERSION   a Helm chart at its pinned version
 *
 * (XXH3: the 128-bit XXH3 of the member's content, 32 hex digits; fields
 * are separated by one space and hold none.)  The distro is under
 * distro/0/, the distro it extends under distro/1/, and so on (a built-in
 * distro as its files); a git source's folder at git/N/, a chart's .tgz
 * (as `helm pull` fetched it) at charts/N/NAME-VERSION.tgz.
 *
 * Reading, the archive is hostile input: only regular files (no folder:
 * folders are implied by the members' names, and a git source's empty
 * folder is made from its index line; no link or device), no absolute name,
 * no "..", no member missing from the index or different from its digest,
 * bounded sizes and counts (PACK_*_MAX below); anything else refuses the
 * archive (exit 2) naming the member.
 */
/* the bounds, which pack keeps and unpacking enforces (counted as it extracts) */
#define PACK_MEMBER_MAX (64u << 20)		/* bytes of one member */
#define PACK_TOTAL_MAX (1ull << 30)		/* bytes of all of them */
#define PACK_COUNT_MAX 200000			/* members */
#define PACK_INDEX "idpmake-pack.txt"
#define PACK_MAGIC "idpmake-pack 1\n"

struct ctx;

/* pack.c: `idpmake pack [-o FILE]` */
int cmd_pack(struct ctx *c);

/* unpack.c */
/* 1 when FILE is a tar or gzip file (by its first bytes), 0 otherwise */
int pack_is_archive(const char *file);
/*
 * Unpack ARCHIVE into STATEDIR/bundle/ and verify it; from then on the
 * lookups below answer from it.  *distro: the unpacked distro.yaml.
 * 0, or -1 after printing why.
 */
int pack_open(const char *archive, const char *statedir, const char **distro);
/* a bundle is open: nothing is fetched from the network */
int pack_active(void);
/* the folder of distro N in the extends chain (0: the distro), arena; NULL when no bundle */
const char *pack_distro(int depth);
/* a git: source: 1 found (commit and folder set), 0 no bundle, -1 not in the bundle (*err) */
int pack_git(const char *url, const char *ref, const char *path, char commit[41], const char **dir,
	     const char **err);
/* a chart's .tgz in the bundle, or NULL (*err) */
const char *pack_chart(const char *repo, const char *name, const char *version, const char **err);
/* every regular file of a chart .tgz, its first folder stripped: 0, or -1 with *err */
int pack_chart_files(const char *tgz, void (*fn)(void *arg, const char *name, const char *data, size_t len),
		     void *arg, const char **err);
/*
 * tests/fuzz/fuzz-pack.c: parse TEXT (LEN bytes) as an archive's index,
 * as unpacking does; on success the lookups answer from it under the
 * folder "/fuzz".  0, or -1 after printing why.  pack_index_forget: back
 * to no bundle.
 */
int pack_index_parse(const char *text, size_t len);
void pack_index_forget(void);

#endif
