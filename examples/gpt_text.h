/* The text the GPT examples train and evaluate on (examples/train_gpt.c, examples/generate.c):
 * the KJV as Debian's bible-kjv prints it, each verse's reference stripped, or a plain file;
 * and the split both use (the vocabulary is the sorted set of bytes of the first N
 * characters; the last 10% is held out for validation). */
#ifndef EXAMPLES_GPT_TEXT_H
#define EXAMPLES_GPT_TEXT_H

#include <stdio.h>
#include <stdlib.h>

#define EX_BIBLE_CMD "bible -f Gen1:1-Rev22:21 </dev/null 2>/dev/null"

/* The whole of a stream, malloc'd, *len bytes; NULL when it cannot be read. */
static inline char *ex_slurp(FILE *f, long *len)
{
    size_t cap = 1 << 22, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *more = realloc(buf, cap * 2);
        if (more == NULL) {
            free(buf);
            buf = NULL;
        } else {
            buf = more;
            cap *= 2;
        }
    }
    *len = (long)n;
    return buf;
}

/* The KJV as `bible` prints it, each line's reference ("Ge1:1 ") stripped; or the file. */
static inline char *ex_read_text(const char *prog, const char *file, long *len)
{
    *len = 0;
    if (file != NULL) {
        FILE *f = fopen(file, "rb");
        if (f == NULL) {
            fprintf(stderr, "%s: cannot open %s\n", prog, file);
            return NULL;
        }
        char *t = ex_slurp(f, len);
        fclose(f);
        return t;
    }
    FILE *p = popen(EX_BIBLE_CMD, "r");
    if (p == NULL)
        return NULL;
    long n = 0;
    char *raw = ex_slurp(p, &n);
    int rc = pclose(p);
    if (raw == NULL || rc != 0 || n < 1000) {
        fprintf(stderr, "%s: `bible` printed no text (apt-get install bible-kjv, or --text FILE)\n", prog);
        free(raw);
        return NULL;
    }
    long w = 0;
    for (long i = 0; i < n;) {
        long j = i; /* the reference: up to the first space of the line */
        while (j < n && raw[j] != ' ' && raw[j] != '\n')
            j++;
        if (j < n && raw[j] == ' ')
            i = j + 1;
        while (i < n && raw[i] != '\n')
            raw[w++] = raw[i++];
        if (i < n)
            raw[w++] = raw[i++];
    }
    *len = w;
    return raw;
}

#endif
