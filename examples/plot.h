/* Shared by the training examples: draws a CSV's curves as PNG with gnuplot, when it is on
 * PATH, and says where the picture is (or why there is none). */
#ifndef EXAMPLES_PLOT_H
#define EXAMPLES_PLOT_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether an executable `name` is on PATH. */
static int plot_on_path(const char *name)
{
    const char *path = getenv("PATH");
    if (path == NULL)
        return 0;
    char buf[4096];
    while (*path != '\0') {
        size_t len = strcspn(path, ":");
        if (len > 0 && len + strlen(name) + 2 < sizeof buf) {
            memcpy(buf, path, len);
            buf[len] = '/';
            strcpy(buf + len + 1, name);
            if (access(buf, X_OK) == 0)
                return 1;
        }
        path += len;
        if (*path == ':')
            path++;
    }
    return 0;
}

/* Renders csv as <csv without .csv>.png: gnuplot gets the terminal, output and separator
 * lines, then script_fmt formatted with the arguments that follow (titles, the CSV's path). */
static void plot_csv(const char *csv, const char *script_fmt, ...)
{
    if (!plot_on_path("gnuplot")) {
        printf("no plot: gnuplot is not on PATH (apt-get install gnuplot-nox); the curve is in %s\n", csv);
        return;
    }
    if (strchr(csv, '\'') != NULL || strchr(csv, '\n') != NULL) {
        printf("no plot: the CSV path has a quote or newline in it\n");
        return;
    }
    char png[4096];
    size_t n = strlen(csv);
    if (n + 5 > sizeof png) {
        printf("no plot: the CSV path is too long\n");
        return;
    }
    strcpy(png, csv);
    if (n > 4 && strcmp(png + n - 4, ".csv") == 0)
        png[n - 4] = '\0';
    strcat(png, ".png");
    FILE *gp = popen("gnuplot", "w");
    if (gp == NULL) {
        printf("no plot: cannot run gnuplot\n");
        return;
    }
    fprintf(gp, "set terminal png noenhanced size 800,500\nset output '%s'\nset datafile separator ','\n", png);
    va_list ap;
    va_start(ap, script_fmt);
    vfprintf(gp, script_fmt, ap);
    va_end(ap);
    if (pclose(gp) == 0)
        printf("loss curve plot: %s\n", png);
    else
        printf("no plot: gnuplot failed (its message is above)\n");
}

#endif
